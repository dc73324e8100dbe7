//! One `x-kubernetes-validations` rule: its CEL program, what it says when it fails, and its
//! evaluation under a cost bound.

use std::collections::HashMap;
use std::sync::{Arc, LazyLock};

use kube_cel::KubeCelExt;
use kube_cel::cel::objects::Key;
use kube_cel::cel::{Context, Program, Value as Cel};
use serde_json::Value;

use super::cost;
use crate::validation::FieldErrorType;

/// The CEL environment rules run in: CEL's standard library and Kubernetes' extensions.
static BASE: LazyLock<Context<'static>> = LazyLock::new(|| Context::default().with_all());

/// The longest message a `messageExpression` may produce (Kubernetes' limit); longer or empty
/// results fall back to the rule's `message`.
const MAX_MESSAGE_EXPRESSION_LEN: usize = 5000;

/// A compiled rule.
pub(crate) struct Rule {
    /// The CEL source.
    pub(crate) source: String,
    program: Program,
    message: Option<String>,
    message_expression: Option<Program>,
    /// Where a failure is reported, below the node the rule is on (`fieldPath`).
    pub(crate) field_path: Vec<String>,
    /// The error type a failure is reported with (`reason`).
    pub(crate) reason: FieldErrorType,
    /// Whether the rule reads `oldSelf`: it runs on updates only, where there is an old value.
    pub(crate) transition: bool,
    /// The cost of one evaluation on the largest value its node allows ([`Rule::bounded`]);
    /// unknown (`u64::MAX`) until then.
    worst: u64,
}

impl std::fmt::Debug for Rule {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Rule").field("rule", &self.source).finish()
    }
}

/// The outcome of one evaluation.
pub(crate) enum Outcome {
    /// The rule holds.
    Pass,
    /// The rule does not hold: the detail of the field error.
    Fail(String),
}

impl Rule {
    /// Compiles one entry of `x-kubernetes-validations`.
    pub(crate) fn compile(entry: &Value) -> Result<Self, String> {
        let text = |k: &str| {
            entry
                .get(k)
                .and_then(Value::as_str)
                .filter(|s| !s.is_empty())
        };
        let source = text("rule").ok_or("a validation rule without `rule`")?;
        let program = Program::compile(source).map_err(|e| format!("rule {source:?}: {e}"))?;
        let message_expression = text("messageExpression")
            .map(|m| Program::compile(m).map_err(|e| format!("messageExpression {m:?}: {e}")))
            .transpose()?;
        let reason = match text("reason") {
            None | Some("FieldValueInvalid") => FieldErrorType::Invalid,
            Some("FieldValueForbidden") => FieldErrorType::Forbidden,
            Some("FieldValueRequired") => FieldErrorType::Required,
            Some("FieldValueDuplicate") => FieldErrorType::Duplicate,
            Some(other) => return Err(format!("rule {source:?}: unknown reason {other:?}")),
        };
        let field_path = text("fieldPath")
            .map(|p| parse_field_path(p).ok_or(format!("rule {source:?}: bad fieldPath {p:?}")))
            .transpose()?
            .unwrap_or_default();
        let transition = program.references().has_variable("oldSelf");
        Ok(Rule {
            source: source.to_owned(),
            message: text("message").map(str::to_owned),
            message_expression,
            field_path,
            reason,
            transition,
            program,
            worst: u64::MAX,
        })
    }

    /// The rule on schema `node`, with its cost on the largest value `node` allows
    /// computed once ([`Rule::worst_cost`]).
    pub(crate) fn bounded<S: cost::Shape>(mut self, node: &S) -> Self {
        self.worst = self.cost(node, cost::MAX_OBJECT_BYTES);
        self
    }

    /// The most one evaluation can cost on a value of at most [`cost::MAX_OBJECT_BYTES`]
    /// (an estimate grows with the value's size); `u64::MAX` before [`Rule::bounded`].
    pub(crate) fn worst_cost(&self) -> u64 {
        self.worst
    }

    /// The cost bound of one evaluation on a value of schema `node` of at most `cap` bytes.
    pub(crate) fn cost<S: cost::Shape>(&self, node: &S, cap: u64) -> u64 {
        let message = self
            .message_expression
            .as_ref()
            .map_or(0, |m| cost::estimate(m.expression(), node, cap));
        cost::estimate(self.program.expression(), node, cap).saturating_add(message)
    }

    /// Evaluates the rule in `ctx` ([`Bindings::context`]).
    pub(crate) fn evaluate(&self, ctx: &Context<'_>) -> Outcome {
        match self.program.execute(ctx) {
            Ok(Cel::Bool(true)) => Outcome::Pass,
            Ok(Cel::Bool(false)) => Outcome::Fail(self.message(ctx)),
            Ok(other) => Outcome::Fail(format!(
                "{}: rule evaluated to {:?}, not a bool",
                self.source,
                other.type_of()
            )),
            Err(e) => Outcome::Fail(format!("{}: {e}", self.source)),
        }
    }

    fn message(&self, ctx: &Context<'_>) -> String {
        let from_expression = self
            .message_expression
            .as_ref()
            .and_then(|m| match m.execute(ctx) {
                Ok(Cel::String(s))
                    if !s.trim().is_empty()
                        && s.len() <= MAX_MESSAGE_EXPRESSION_LEN
                        && !s.contains('\n') =>
                {
                    Some(s.to_string())
                }
                _ => None,
            });
        from_expression
            .or_else(|| self.message.clone())
            .unwrap_or_else(|| format!("failed rule: {}", self.source))
    }
}

/// `self` and `oldSelf` as CEL values, converted once for all the rules of a node.
pub(crate) struct Bindings {
    value: Cel,
    old: Option<Cel>,
}

impl Bindings {
    /// The bindings of a node's value and, on update, its old value.
    pub(crate) fn new(value: &Value, old: Option<&Value>) -> Self {
        Bindings {
            value: to_cel(value),
            old: old.map(to_cel),
        }
    }

    /// A context with `self` (and `oldSelf`) over Kubernetes' CEL environment.
    pub(crate) fn context(&self) -> Context<'static> {
        let mut ctx = BASE.new_inner_scope();
        ctx.add_variable_from_value("self", self.value.clone());
        if let Some(old) = &self.old {
            ctx.add_variable_from_value("oldSelf", old.clone());
        }
        ctx
    }
}

/// `.a.b`, `.a['b.c']` or `['a']` as the names it goes through.
fn parse_field_path(p: &str) -> Option<Vec<String>> {
    let mut out = Vec::new();
    let mut rest = p;
    while !rest.is_empty() {
        if let Some(r) = rest.strip_prefix("['") {
            let end = r.find("']")?;
            out.push(r[..end].to_owned());
            rest = &r[end + 2..];
        } else if let Some(r) = rest.strip_prefix('.') {
            let end = r.find(['.', '[']).unwrap_or(r.len());
            if end == 0 {
                return None;
            }
            out.push(r[..end].to_owned());
            rest = &r[end..];
        } else {
            return None;
        }
    }
    (!out.is_empty()).then_some(out)
}

/// A JSON value as CEL sees it: objects are maps, integers `int` (or `uint` above its range).
fn to_cel(v: &Value) -> Cel {
    match v {
        Value::Null => Cel::Null,
        Value::Bool(b) => Cel::Bool(*b),
        Value::Number(n) => match (n.as_i64(), n.as_u64()) {
            (Some(i), _) => Cel::Int(i),
            (None, Some(u)) => Cel::UInt(u),
            _ => Cel::Float(n.as_f64().unwrap_or(f64::NAN)),
        },
        Value::String(s) => Cel::String(Arc::new(s.clone())),
        Value::Array(a) => Cel::List(Arc::new(a.iter().map(to_cel).collect())),
        Value::Object(m) => {
            let map: HashMap<Key, Cel> = m
                .iter()
                .map(|(k, v)| (Key::String(Arc::new(k.clone())), to_cel(v)))
                .collect();
            Cel::Map(map.into())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn rule(v: Value) -> Rule {
        Rule::compile(&v).unwrap()
    }

    fn eval(r: &Rule, value: Value, old: Option<Value>) -> Outcome {
        r.evaluate(&Bindings::new(&value, old.as_ref()).context())
    }

    #[test]
    fn field_paths_parse() {
        assert_eq!(parse_field_path(".a.b"), Some(vec!["a".into(), "b".into()]));
        assert_eq!(
            parse_field_path(".a['b.c']"),
            Some(vec!["a".into(), "b.c".into()])
        );
        assert_eq!(parse_field_path("a"), None);
        assert_eq!(parse_field_path("."), None);
        assert_eq!(parse_field_path("['x"), None);
    }

    #[test]
    fn messages_come_from_the_expression_the_message_or_the_rule() {
        let r = rule(
            json!({"rule": "self.n > 1", "messageExpression": "'n is ' + string(self.n)", "message": "m"}),
        );
        assert!(matches!(eval(&r, json!({"n": 1}), None), Outcome::Fail(m) if m == "n is 1"));
        assert!(matches!(eval(&r, json!({"n": 2}), None), Outcome::Pass));
        let r = rule(json!({"rule": "self.n > 1", "messageExpression": "''", "message": "m"}));
        assert!(matches!(eval(&r, json!({"n": 1}), None), Outcome::Fail(m) if m == "m"));
        let r = rule(json!({"rule": "self.n > 1"}));
        assert!(
            matches!(eval(&r, json!({"n": 1}), None), Outcome::Fail(m) if m == "failed rule: self.n > 1")
        );
        let r = rule(json!({"rule": "self.n"}));
        assert!(
            matches!(eval(&r, json!({"n": 1}), None), Outcome::Fail(m) if m.contains("not a bool"))
        );
        let r = rule(json!({"rule": "self.missing == 1"}));
        assert!(
            matches!(eval(&r, json!({}), None), Outcome::Fail(m) if m.starts_with("self.missing == 1: "))
        );
    }

    #[test]
    fn transition_rules_read_old_self() {
        let r = rule(json!({"rule": "self.n >= oldSelf.n", "message": "may not decrease"}));
        assert!(r.transition);
        assert!(matches!(
            eval(&r, json!({"n": 1}), Some(json!({"n": 2}))),
            Outcome::Fail(_)
        ));
        assert!(matches!(
            eval(&r, json!({"n": 3}), Some(json!({"n": 2}))),
            Outcome::Pass
        ));
    }

    #[test]
    fn bad_declarations_are_refused() {
        assert!(Rule::compile(&json!({"rule": "self.n >"})).is_err());
        assert!(Rule::compile(&json!({"message": "m"})).is_err());
        assert!(Rule::compile(&json!({"rule": "true", "reason": "Nope"})).is_err());
        assert!(Rule::compile(&json!({"rule": "true", "fieldPath": "x"})).is_err());
    }
}
