//! The CEL cost budget of one object's validation: each rule is charged its estimated cost on
//! the value at hand ([`Rule::cost`]) before it runs, and refused when that exceeds the
//! per-call limit or what is left of the object's budget.
//!
//! Estimating a rule's cost walks its syntax tree, a few thousand instructions, while almost
//! every object is far from the limits. So a rule is first charged its worst case, its cost
//! on the largest value its schema allows, computed once when the declaration is compiled
//! ([`Rule::worst_cost`]); the exact estimates are computed only when those worst cases no
//! longer fit what is left. The outcome is the one of charging every exact estimate in turn:
//! the estimate grows with the value's size, so an exact cost is never above the worst case
//! (for values no larger than the largest object), and a budget that fits the worst cases
//! fits the exact ones.

use super::cost::{MAX_OBJECT_BYTES, PER_CALL_LIMIT, RUNTIME_BUDGET, Shape};
use super::rule::Rule;

/// Why a rule may not run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Refused {
    /// One evaluation could cost more than Kubernetes' per-call limit.
    PerCall,
    /// The object's budget is spent: no further rule runs.
    OutOfBudget,
}

/// What is left of an object's budget, with the charges whose exact cost is not computed yet.
pub(crate) struct Budget<'a, S> {
    /// The budget, less the exact costs charged so far.
    left: u64,
    /// Rules charged their worst case: each with its node and the size of its value.
    deferred: Vec<(&'a Rule, &'a S, u64)>,
    /// The sum of the deferred rules' worst cases (at most `left`).
    deferred_worst: u64,
}

impl<'a, S: Shape> Budget<'a, S> {
    /// Kubernetes' budget for the rules of one object.
    pub(crate) fn new() -> Self {
        Self::with(RUNTIME_BUDGET)
    }

    fn with(left: u64) -> Self {
        Budget {
            left,
            deferred: Vec::new(),
            deferred_worst: 0,
        }
    }

    /// Charges one evaluation of `rule` (on schema node `node`) on a value of `size` JSON
    /// bytes: `Ok` when it may run.
    pub(crate) fn charge(&mut self, rule: &'a Rule, node: &'a S, size: u64) -> Result<(), Refused> {
        let worst = rule.worst_cost();
        let fits = self
            .deferred_worst
            .checked_add(worst)
            .is_some_and(|w| w <= self.left);
        if size <= MAX_OBJECT_BYTES && worst <= PER_CALL_LIMIT && fits {
            self.deferred_worst += worst;
            self.deferred.push((rule, node, size));
            return Ok(());
        }
        self.settle();
        let cost = rule.cost(node, size);
        if cost > PER_CALL_LIMIT {
            return Err(Refused::PerCall);
        }
        if cost > self.left {
            return Err(Refused::OutOfBudget);
        }
        self.left -= cost;
        Ok(())
    }

    /// The deferred charges at their exact costs (never more than their worst cases, so
    /// never more than is left).
    fn settle(&mut self) {
        for (rule, node, size) in self.deferred.drain(..) {
            self.left -= rule.cost(node, size);
        }
        self.deferred_worst = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::declarative::cost::Opaque;
    use serde_json::json;

    /// What charging every exact estimate in turn answers, the rule this budget keeps.
    fn exact(left: u64, charges: &[(&Rule, u64)]) -> Vec<Result<(), Refused>> {
        let mut left = left;
        charges
            .iter()
            .map(|(rule, size)| {
                let cost = rule.cost(&Opaque, *size);
                if cost > PER_CALL_LIMIT {
                    return Err(Refused::PerCall);
                }
                if cost > left {
                    return Err(Refused::OutOfBudget);
                }
                left -= cost;
                Ok(())
            })
            .collect()
    }

    fn charged(left: u64, charges: &[(&Rule, u64)]) -> Vec<Result<(), Refused>> {
        let mut b = Budget::with(left);
        charges
            .iter()
            .map(|(r, s)| b.charge(r, &Opaque, *s))
            .collect()
    }

    #[test]
    fn charging_worst_cases_first_answers_as_exact_charges_do() {
        let rule = |src: &str| {
            Rule::compile(&json!({"rule": src}))
                .unwrap()
                .bounded(&Opaque)
        };
        let cheap = rule("self.a == 'x'");
        // Grows with the size: its worst case is far above its cost on a small value.
        let scan = rule("self.l.all(x, x.startsWith('a'))");
        assert!(scan.worst_cost() > 100 * scan.cost(&Opaque, 1_000));
        let nested = rule("self.l.all(x, self.l.all(y, x.startsWith(y)))");
        let sequences: [&[(&Rule, u64)]; 4] = [
            // Small values: worst cases that do not fit the budget, exact costs that do.
            &[(&scan, 1_000), (&scan, 1_000), (&cheap, 50), (&scan, 2_000)],
            // Large ones: the budget runs out part way.
            &[
                (&scan, 900_000),
                (&cheap, 50),
                (&scan, 2_000_000),
                (&scan, 3_000_000),
            ],
            // Over the per-call limit on a large value only, then over the largest object.
            &[
                (&nested, 100),
                (&nested, 100_000),
                (&cheap, 10),
                (&cheap, u64::MAX),
            ],
            &[(&cheap, 10); 8],
        ];
        for charges in sequences {
            for left in [RUNTIME_BUDGET, 100, 20, 0] {
                assert_eq!(
                    charged(left, charges),
                    exact(left, charges),
                    "{left} {charges:?}"
                );
            }
        }
    }

    #[test]
    fn cheap_rules_are_charged_their_worst_case_without_an_estimate() {
        let rule = Rule::compile(&json!({"rule": "self.a == 'x'"}))
            .unwrap()
            .bounded(&Opaque);
        let mut b = Budget::with(RUNTIME_BUDGET);
        for _ in 0..3 {
            b.charge(&rule, &Opaque, 100).unwrap();
        }
        assert_eq!(b.deferred.len(), 3);
        assert_eq!(b.deferred_worst, 3 * rule.worst_cost());
        b.settle();
        assert_eq!(b.left, RUNTIME_BUDGET - 3 * rule.cost(&Opaque, 100));
    }
}
