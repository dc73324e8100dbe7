//! What a CEL rule may cost, before it runs: an upper bound on the work of one evaluation,
//! from the rule's syntax tree and the size of what it reads.
//!
//! The `cel` interpreter has no cost meter, so the bound is computed instead of counted. The
//! size of a value is the bytes of its JSON; every value a rule reaches through `self` or
//! `oldSelf` is no bigger than they are. Each node of the tree costs 1, each call also a tenth
//! of the bytes of its operands (a comparison, `matches` or `size` reads each byte at most a
//! few times), and a comprehension (`all`, `exists`, `map`, `filter`) its body once per element
//! of its range, whose element count is at most the range's size. Results are bounded the same
//! way (a concatenation by the sum of its operands, `map` by its range times its body), so a
//! nested comprehension over what an outer one built is bounded too.
//!
//! The server calls this twice: when the declaration is compiled, with the largest sizes the
//! schema allows (a rule that could exceed Kubernetes' limits is refused there, as
//! kube-apiserver refuses such a CRD), and before each evaluation, with the sizes of the object
//! at hand (a rule that would exceed the per-call limit, or the object's budget, is an error
//! instead of a stall).

use kube_cel::cel::common::ast::{Expr, IdedExpr, LiteralValue};

/// Kubernetes' `PerCallLimit`: the most one evaluation of one rule may cost.
pub const PER_CALL_LIMIT: u64 = 1_000_000;
/// Kubernetes' `RuntimeCELCostBudget`: the most the rules of one object may cost together.
pub const RUNTIME_BUDGET: u64 = 10_000_000;
/// Kubernetes' `StaticEstimatedCostLimit`: the most one rule may cost in the worst case the
/// schema allows, times the number of places it applies.
pub const STATIC_RULE_LIMIT: u64 = 10_000_000;
/// The largest object a request may carry (Kubernetes' 3 MiB), the size of anything the schema
/// leaves unbounded.
pub const MAX_OBJECT_BYTES: u64 = 3 * 1024 * 1024;

/// What the estimate knows of the values a rule reads: the schema node of `self`, and of what
/// `self.field`, `self[key]` and the elements of a list or map reach.
pub trait Shape {
    /// The node of property `name`.
    fn property(&self, name: &str) -> Option<&Self>;
    /// The node of every element (list items, map values).
    fn element(&self) -> Option<&Self>;
    /// The most JSON bytes a value here can be.
    fn max_size(&self) -> u64;
    /// The most elements (characters, items, properties) a value here can have.
    fn max_count(&self) -> u64;
}

/// The cost, size, element count and, when known, schema node of an expression's value.
struct Bound<'s, S> {
    cost: u64,
    size: u64,
    count: u64,
    node: Option<&'s S>,
}

impl<S> Clone for Bound<'_, S> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<S> Copy for Bound<'_, S> {}

impl<'s, S: Shape> Bound<'s, S> {
    fn of(node: Option<&'s S>, cap: u64, fallback: u64) -> Self {
        let (size, count) = node.map_or((fallback, fallback), |n| (n.max_size(), n.max_count()));
        Bound {
            cost: 1,
            size: size.min(cap),
            count: count.min(cap),
            node,
        }
    }
    fn scalar(cost: u64, size: u64) -> Self {
        Bound {
            cost,
            size,
            count: size,
            node: None,
        }
    }
}

/// The bound on one evaluation of `expr` on a value of schema `root` that is at most `cap`
/// bytes (the actual size at run time, [`MAX_OBJECT_BYTES`] when compiling).
pub fn estimate<S: Shape>(expr: &IdedExpr, root: &S, cap: u64) -> u64 {
    let mut scope = Vec::new();
    let mut e = Estimator { root, cap };
    e.bound(expr, &mut scope).cost
}

struct Estimator<'s, S> {
    root: &'s S,
    cap: u64,
}

impl<'s, S: Shape> Estimator<'s, S> {
    fn bound<'a>(
        &mut self,
        e: &'a IdedExpr,
        scope: &mut Vec<(&'a str, Bound<'s, S>)>,
    ) -> Bound<'s, S> {
        let cap = self.cap;
        match &e.expr {
            Expr::Ident(name) => match name.as_str() {
                "self" | "oldSelf" => Bound::of(Some(self.root), cap, cap),
                n => scope
                    .iter()
                    .rev()
                    .find(|(v, _)| *v == n)
                    .map_or(Bound::scalar(1, 64), |(_, b)| Bound { cost: 1, ..*b }),
            },
            Expr::Literal(l) => Bound::scalar(
                1,
                match l {
                    LiteralValue::String(v) => v.len() as u64,
                    LiteralValue::Bytes(v) => v.len() as u64,
                    _ => 8,
                },
            ),
            Expr::Select(sel) => {
                let b = self.bound(&sel.operand, scope);
                let child = b
                    .node
                    .and_then(|n| n.property(&sel.field).or_else(|| n.element()));
                let mut out = Bound::of(child, b.size, b.size);
                out.cost = b.cost.saturating_add(1);
                out
            }
            Expr::List(list) => self.sum(list.elements.iter(), scope),
            Expr::Map(map) => self.sum(entries(&map.entries), scope),
            Expr::Struct(st) => self.sum(entries(&st.entries), scope),
            Expr::Call(call) => {
                let operands: Vec<Bound<'s, S>> = call
                    .target
                    .iter()
                    .map(|t| &**t)
                    .chain(call.args.iter())
                    .map(|a| self.bound(a, scope))
                    .collect();
                let cost = operands.iter().fold(1u64, |c, b| c.saturating_add(b.cost));
                let bytes = operands.iter().fold(0u64, |c, b| c.saturating_add(b.size));
                let traversal = match call.func_name.as_str() {
                    // Logic and indexing read no bytes of their operands.
                    "_&&_"
                    | "_||_"
                    | "_?_:_"
                    | "!_"
                    | "@not_strictly_false"
                    | "_[_]"
                    | "has"
                    | "size" => 0,
                    // Comparisons stop at the shorter operand.
                    "_==_" | "_!=_" | "_<_" | "_<=_" | "_>_" | "_>=_" => {
                        operands.iter().map(|b| b.size).min().unwrap_or(0)
                    }
                    _ => bytes,
                };
                let cost = cost.saturating_add(traversal.div_ceil(10));
                match call.func_name.as_str() {
                    "_&&_" | "_||_" | "_?_:_" | "!_" | "@not_strictly_false" => {
                        let size = operands.iter().map(|b| b.size).max().unwrap_or(8);
                        Bound::scalar(cost, size)
                    }
                    "_[_]" if operands.len() == 2 => {
                        let child = operands[0].node.and_then(Shape::element);
                        let mut out = Bound::of(child, operands[0].size, operands[0].size);
                        out.cost = cost;
                        out
                    }
                    // The only call whose result can outgrow its operands' sum: every match
                    // of the pattern (at most one per byte, plus one) replaced.
                    "replace" if operands.len() >= 3 => Bound::scalar(
                        cost,
                        operands[0]
                            .size
                            .saturating_add(1)
                            .saturating_mul(operands[2].size.saturating_add(1)),
                    ),
                    _ => Bound::scalar(cost, bytes.saturating_add(16)),
                }
            }
            Expr::Comprehension(c) => {
                let range = self.bound(&c.iter_range, scope);
                let init = self.bound(&c.accu_init, scope);
                let n = range.count;
                let element =
                    Bound::of(range.node.and_then(Shape::element), range.size, range.size);
                let vars = 2 + usize::from(c.iter_var2.is_some());
                scope.push((c.iter_var.as_str(), element));
                if let Some(v2) = &c.iter_var2 {
                    scope.push((v2.as_str(), element));
                }
                // How much one step can add to the accumulator, then the cost of a step with
                // the accumulator at its largest.
                scope.push((c.accu_var.as_str(), Bound::scalar(1, 0)));
                let growth = self.bound(&c.loop_step, scope).size;
                let accu = init.size.saturating_add(n.saturating_mul(growth));
                scope.pop();
                scope.push((c.accu_var.as_str(), Bound::scalar(1, accu)));
                let cond = self.bound(&c.loop_cond, scope);
                let step = self.bound(&c.loop_step, scope);
                let result = self.bound(&c.result, scope);
                scope.truncate(scope.len() - vars);
                let per_element = cond.cost.saturating_add(step.cost);
                Bound::scalar(
                    range
                        .cost
                        .saturating_add(init.cost)
                        .saturating_add(n.saturating_mul(per_element))
                        .saturating_add(result.cost),
                    result.size,
                )
            }
            Expr::Unspecified => Bound::scalar(1, 8),
        }
    }

    fn sum<'a>(
        &mut self,
        items: impl Iterator<Item = &'a IdedExpr>,
        scope: &mut Vec<(&'a str, Bound<'s, S>)>,
    ) -> Bound<'s, S> {
        items.fold(Bound::scalar(1, 2), |acc, e| {
            let b = self.bound(e, scope);
            Bound::scalar(
                acc.cost.saturating_add(b.cost),
                acc.size.saturating_add(b.size).saturating_add(1),
            )
        })
    }
}

fn entries(
    entries: &[kube_cel::cel::common::ast::IdedEntryExpr],
) -> impl Iterator<Item = &IdedExpr> {
    use kube_cel::cel::common::ast::EntryExpr;
    entries.iter().flat_map(|e| match &e.expr {
        EntryExpr::StructField(f) => vec![&f.value],
        EntryExpr::MapEntry(m) => vec![&m.key, &m.value],
    })
}

/// Nothing known of the schema: every value is bounded by the cap alone (for tests).
#[cfg(test)]
pub(super) struct Opaque;

#[cfg(test)]
impl Shape for Opaque {
    fn property(&self, _: &str) -> Option<&Self> {
        None
    }
    fn element(&self) -> Option<&Self> {
        None
    }
    fn max_size(&self) -> u64 {
        MAX_OBJECT_BYTES
    }
    fn max_count(&self) -> u64 {
        MAX_OBJECT_BYTES
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use kube_cel::cel::Program;

    fn cost(rule: &str, size: u64) -> u64 {
        estimate(Program::compile(rule).unwrap().expression(), &Opaque, size)
    }

    #[test]
    fn simple_rules_are_cheap_and_grow_with_the_data() {
        assert!(cost("has(self.a)", MAX_OBJECT_BYTES) < 10);
        assert!(cost("self.a == 'x'", MAX_OBJECT_BYTES) < 10);
        assert!(cost("self.a.startsWith('x')", 100) < cost("self.a.startsWith('x')", 10_000));
        assert!(cost("self.a.matches('^x+$')", MAX_OBJECT_BYTES) < PER_CALL_LIMIT);
    }

    #[test]
    fn comprehensions_multiply_and_nest() {
        let one = cost("self.l.all(x, x.startsWith('a'))", 1_000);
        let nested = cost("self.l.all(x, self.l.all(y, x.startsWith(y)))", 1_000);
        assert!(one >= 1_000, "{one}");
        assert!(nested >= 1_000 * one / 2, "{nested} vs {one}");
        assert!(nested > PER_CALL_LIMIT);
        // What a map builds bounds what iterates over it.
        let built = cost("self.l.map(x, x + x).all(y, y.startsWith('a'))", 1_000);
        assert!(built > one, "{built} vs {one}");
    }

    #[test]
    fn growth_by_replace_and_concatenation_is_bounded_above() {
        let grow = cost(
            "self.s.replace('a', self.s).replace('a', self.s).replace('a', self.s).size() > 0",
            1_000,
        );
        assert!(grow > PER_CALL_LIMIT, "{grow}");
        assert_eq!(
            cost("self.l.map(x, self.l.map(y, self.l.map(z, z)))", u64::MAX),
            u64::MAX
        );
    }
}
