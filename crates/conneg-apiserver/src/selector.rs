//! Label and field selectors (`labelSelector=` / `fieldSelector=` query parameters), parsed
//! and matched as `k8s.io/apimachinery/pkg/labels` and `.../fields` do.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

use crate::meta::ObjectMeta;
use crate::names;

/// A selector that failed to parse; the HTTP layer answers 400 BadRequest with its message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct SelectorError(pub(crate) String);

impl fmt::Display for SelectorError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for SelectorError {}

fn err<T>(msg: impl Into<String>) -> Result<T, SelectorError> {
    Err(SelectorError(msg.into()))
}

/// A label-requirement operator.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum LabelOp {
    /// `key` (label present).
    Exists,
    /// `!key` (label absent).
    DoesNotExist,
    /// `key=v` / `key==v`.
    Equals,
    /// `key!=v` (also true when the label is absent).
    NotEquals,
    /// `key in (a,b)`.
    In,
    /// `key notin (a,b)` (also true when the label is absent).
    NotIn,
    /// `key>n` (integer comparison; absent or non-integer labels do not match).
    GreaterThan,
    /// `key<n`.
    LessThan,
}

/// One requirement of a label selector.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Requirement {
    /// Label key.
    pub(crate) key: String,
    /// Operator.
    pub(crate) op: LabelOp,
    /// Values (one for `=`/`!=`/`>`/`<`, one or more for `in`/`notin`, none for existence).
    pub(crate) values: BTreeSet<String>,
}

impl Requirement {
    /// Whether `labels` satisfy this requirement.
    pub(crate) fn matches(&self, labels: &BTreeMap<String, String>) -> bool {
        let v = labels.get(&self.key);
        match self.op {
            LabelOp::Exists => v.is_some(),
            LabelOp::DoesNotExist => v.is_none(),
            LabelOp::Equals | LabelOp::In => v.is_some_and(|v| self.values.contains(v)),
            LabelOp::NotEquals | LabelOp::NotIn => v.is_none_or(|v| !self.values.contains(v)),
            LabelOp::GreaterThan | LabelOp::LessThan => {
                let Some(have) = v.and_then(|v| v.parse::<i64>().ok()) else {
                    return false;
                };
                let Some(want) = self.values.first().and_then(|w| w.parse::<i64>().ok()) else {
                    return false;
                };
                if self.op == LabelOp::GreaterThan {
                    have > want
                } else {
                    have < want
                }
            }
        }
    }
}

/// A parsed label selector: all requirements must hold. Empty selects everything.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct LabelSelector {
    /// The requirements, in the order given.
    pub(crate) requirements: Vec<Requirement>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Tok {
    Ident(String),
    Comma,
    Open,
    Close,
    Not,
    Eq,
    DoubleEq,
    NotEq,
    Gt,
    Lt,
    In,
    NotIn,
}

fn is_special(c: char) -> bool {
    c.is_whitespace() || matches!(c, ',' | '(' | ')' | '=' | '!' | '<' | '>')
}

fn lex(s: &str) -> Result<Vec<Tok>, SelectorError> {
    let mut out = Vec::new();
    let mut it = s.char_indices().peekable();
    while let Some(&(i, c)) = it.peek() {
        if c.is_whitespace() {
            it.next();
            continue;
        }
        it.next();
        let next_is_eq = it.peek().map(|&(_, c)| c) == Some('=');
        let tok = match c {
            ',' => Tok::Comma,
            '(' => Tok::Open,
            ')' => Tok::Close,
            '<' => Tok::Lt,
            '>' => Tok::Gt,
            '!' if next_is_eq => {
                it.next();
                Tok::NotEq
            }
            '!' => Tok::Not,
            '=' if next_is_eq => {
                it.next();
                Tok::DoubleEq
            }
            '=' => Tok::Eq,
            _ => {
                let mut end = s.len();
                while let Some(&(j, c)) = it.peek() {
                    if is_special(c) {
                        end = j;
                        break;
                    }
                    it.next();
                }
                match &s[i..end] {
                    "in" => Tok::In,
                    "notin" => Tok::NotIn,
                    w => Tok::Ident(w.to_owned()),
                }
            }
        };
        out.push(tok);
    }
    Ok(out)
}

fn invalid_requirement(value: &str, msgs: &[String]) -> SelectorError {
    SelectorError(format!(
        "unable to parse requirement: <nil>: Invalid value: {}: {}",
        conneg::Status::quote(value),
        msgs.join("; ")
    ))
}

/// Validate a label key (`[prefix/]name`, a qualified name).
pub(crate) fn validate_label_key(key: &str) -> Result<(), SelectorError> {
    let msgs = names::qualified_name_errors(key);
    if msgs.is_empty() {
        Ok(())
    } else {
        Err(invalid_requirement(key, &msgs))
    }
}

/// Validate a label value (empty, or up to 63 name characters).
pub(crate) fn validate_label_value(value: &str) -> Result<(), SelectorError> {
    let msgs = names::label_value_errors(value);
    if msgs.is_empty() {
        Ok(())
    } else {
        Err(invalid_requirement(value, &msgs))
    }
}

impl LabelSelector {
    /// Whether this selects everything.
    pub(crate) fn is_empty(&self) -> bool {
        self.requirements.is_empty()
    }

    /// Parse `a=b,c!=d,e in (x,y),!f,g,h>3`.
    pub(crate) fn parse(s: &str) -> Result<Self, SelectorError> {
        let toks = lex(s)?;
        let mut reqs = Vec::new();
        let mut i = 0;
        while i < toks.len() {
            let (req, next) = Self::parse_requirement(&toks, i)?;
            reqs.push(req);
            i = next;
            match toks.get(i) {
                None => break,
                Some(Tok::Comma) => {
                    i += 1;
                    if i == toks.len() {
                        return err("found '', expected: identifier after ','");
                    }
                }
                Some(t) => return err(format!("found {t:?}, expected: ',' or end of string")),
            }
        }
        Ok(Self { requirements: reqs })
    }

    fn parse_requirement(
        toks: &[Tok],
        mut i: usize,
    ) -> Result<(Requirement, usize), SelectorError> {
        let negated = toks.get(i) == Some(&Tok::Not);
        if negated {
            i += 1;
        }
        let key = match toks.get(i) {
            Some(Tok::Ident(k)) => k.clone(),
            other => return err(format!("found {other:?}, expected: identifier")),
        };
        validate_label_key(&key)?;
        i += 1;
        if negated {
            return Ok((
                Requirement {
                    key,
                    op: LabelOp::DoesNotExist,
                    values: BTreeSet::new(),
                },
                i,
            ));
        }
        let op = match toks.get(i) {
            None | Some(Tok::Comma) => {
                return Ok((
                    Requirement {
                        key,
                        op: LabelOp::Exists,
                        values: BTreeSet::new(),
                    },
                    i,
                ));
            }
            Some(Tok::Eq | Tok::DoubleEq) => LabelOp::Equals,
            Some(Tok::NotEq) => LabelOp::NotEquals,
            Some(Tok::In) => LabelOp::In,
            Some(Tok::NotIn) => LabelOp::NotIn,
            Some(Tok::Gt) => LabelOp::GreaterThan,
            Some(Tok::Lt) => LabelOp::LessThan,
            Some(t) => {
                return err(format!(
                    "found {t:?}, expected: in, notin, =, ==, !=, gt, lt"
                ));
            }
        };
        i += 1;
        let mut values = BTreeSet::new();
        if matches!(op, LabelOp::In | LabelOp::NotIn) {
            if toks.get(i) != Some(&Tok::Open) {
                return err("expected '(' after in/notin");
            }
            i += 1;
            if toks.get(i) == Some(&Tok::Close) {
                return err("for 'in', 'notin' operators, values set can't be empty");
            }
            loop {
                match toks.get(i) {
                    Some(Tok::Ident(v)) => {
                        validate_label_value(v)?;
                        values.insert(v.clone());
                        i += 1;
                    }
                    // An empty element (`(a,,b)` or `(a,)`) is the empty value.
                    Some(Tok::Comma | Tok::Close) => {
                        values.insert(String::new());
                    }
                    other => {
                        return err(format!("found {other:?}, expected: ',', ')' or identifier"));
                    }
                }
                match toks.get(i) {
                    Some(Tok::Comma) => i += 1,
                    Some(Tok::Close) => {
                        i += 1;
                        break;
                    }
                    other => return err(format!("found {other:?}, expected: ',' or ')'")),
                }
            }
        } else {
            match toks.get(i) {
                Some(Tok::Ident(v)) => {
                    if matches!(op, LabelOp::GreaterThan | LabelOp::LessThan) {
                        if v.parse::<i64>().is_err() {
                            return err(format!(
                                "for 'Gt', 'Lt' operators, the value must be an integer: {v:?}"
                            ));
                        }
                    } else {
                        validate_label_value(v)?;
                    }
                    values.insert(v.clone());
                    i += 1;
                }
                // `a=` selects the empty value.
                None | Some(Tok::Comma) if matches!(op, LabelOp::Equals | LabelOp::NotEquals) => {
                    values.insert(String::new());
                }
                other => return err(format!("found {other:?}, expected: identifier")),
            }
        }
        Ok((Requirement { key, op, values }, i))
    }

    /// Whether `labels` satisfy every requirement.
    pub(crate) fn matches(&self, labels: &BTreeMap<String, String>) -> bool {
        self.requirements.iter().all(|r| r.matches(labels))
    }
}

/// A field-requirement operator.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum FieldOp {
    /// `=` or `==`.
    Equals,
    /// `!=`.
    NotEquals,
}

/// One term of a field selector.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct FieldRequirement {
    /// Field path, e.g. `metadata.name`.
    pub(crate) field: String,
    /// Operator.
    pub(crate) op: FieldOp,
    /// Value (unescaped).
    pub(crate) value: String,
}

/// A parsed field selector. Only `metadata.name` and `metadata.namespace` are supported
/// (`ObjectMetaFieldsSet`), as for every wardle resource.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct FieldSelector {
    /// The terms, all of which must hold.
    pub(crate) requirements: Vec<FieldRequirement>,
}

/// The field labels wardle resources support.
pub(crate) const SUPPORTED_FIELDS: [&str; 2] = ["metadata.name", "metadata.namespace"];

fn unescape_field_value(s: &str) -> Result<String, SelectorError> {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        if c == '\\' {
            match chars.next() {
                Some(e @ ('\\' | ',' | '=')) => out.push(e),
                Some(e) => {
                    return err(format!(
                        "invalid field selector: invalid escape sequence: \\{e}"
                    ));
                }
                None => return err("invalid field selector: unterminated escape sequence"),
            }
        } else if c == ',' || c == '=' {
            return err(format!("invalid field selector: unescaped character {c:?}"));
        } else {
            out.push(c);
        }
    }
    Ok(out)
}

fn split_unescaped_commas(s: &str) -> Vec<&str> {
    let mut parts = Vec::new();
    let mut start = 0;
    let mut escaped = false;
    for (i, c) in s.char_indices() {
        if escaped {
            escaped = false;
        } else if c == '\\' {
            escaped = true;
        } else if c == ',' {
            parts.push(&s[start..i]);
            start = i + 1;
        }
    }
    parts.push(&s[start..]);
    parts
}

impl FieldSelector {
    /// Whether this selects everything.
    pub(crate) fn is_empty(&self) -> bool {
        self.requirements.is_empty()
    }

    /// Parse `metadata.name=x,metadata.namespace!=y` (values may escape `\,` `\=` `\\`);
    /// a field other than [`SUPPORTED_FIELDS`] is an error
    /// (`field label not supported: spec.x`).
    pub(crate) fn parse(s: &str) -> Result<Self, SelectorError> {
        let mut requirements = Vec::new();
        for term in split_unescaped_commas(s) {
            if term.is_empty() {
                continue;
            }
            let (field, op, value) = split_field_term(term).ok_or_else(|| {
                SelectorError(format!(
                    "invalid selector: '{s}'; can't understand '{term}'"
                ))
            })?;
            if !SUPPORTED_FIELDS.contains(&field) {
                return err(format!("field label not supported: {field}"));
            }
            requirements.push(FieldRequirement {
                field: field.to_owned(),
                op,
                value: unescape_field_value(value)?,
            });
        }
        Ok(Self { requirements })
    }

    /// Match against a field set (e.g. [`object_meta_fields`]).
    pub(crate) fn matches_fields(&self, fields: &BTreeMap<&str, &str>) -> bool {
        self.requirements.iter().all(|r| {
            let have = fields.get(r.field.as_str()).copied().unwrap_or("");
            match r.op {
                FieldOp::Equals => have == r.value,
                FieldOp::NotEquals => have != r.value,
            }
        })
    }

    /// Match an object's metadata (`metadata.name`, `metadata.namespace`).
    pub(crate) fn matches_meta(&self, meta: &ObjectMeta) -> bool {
        self.matches_fields(&object_meta_fields(meta))
    }
}

fn split_field_term(term: &str) -> Option<(&str, FieldOp, &str)> {
    let bytes = term.as_bytes();
    let mut escaped = false;
    for i in 0..bytes.len() {
        if escaped {
            escaped = false;
            continue;
        }
        match bytes[i] {
            b'\\' => escaped = true,
            b'!' if bytes.get(i + 1) == Some(&b'=') => {
                return Some((&term[..i], FieldOp::NotEquals, &term[i + 2..]));
            }
            b'=' if bytes.get(i + 1) == Some(&b'=') => {
                return Some((&term[..i], FieldOp::Equals, &term[i + 2..]));
            }
            b'=' => return Some((&term[..i], FieldOp::Equals, &term[i + 1..])),
            _ => {}
        }
    }
    None
}

/// `generic.ObjectMetaFieldsSet(meta, true)`: `metadata.name` and `metadata.namespace`.
pub(crate) fn object_meta_fields(meta: &ObjectMeta) -> BTreeMap<&str, &str> {
    BTreeMap::from([
        ("metadata.name", meta.name.as_str()),
        ("metadata.namespace", meta.namespace.as_str()),
    ])
}

/// Both selectors of a list or watch request.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Selectors {
    /// `labelSelector`.
    pub(crate) labels: LabelSelector,
    /// `fieldSelector`.
    pub(crate) fields: FieldSelector,
}

impl Selectors {
    /// Parse both query parameters (absent means everything).
    pub(crate) fn parse(label: Option<&str>, field: Option<&str>) -> Result<Self, SelectorError> {
        Ok(Self {
            labels: LabelSelector::parse(label.unwrap_or(""))?,
            fields: FieldSelector::parse(field.unwrap_or(""))?,
        })
    }

    /// Whether an object with this metadata is selected.
    pub(crate) fn matches(&self, meta: &ObjectMeta) -> bool {
        self.labels.matches(&meta.labels) && self.fields.matches_meta(meta)
    }

    /// Whether both select everything.
    pub(crate) fn is_empty(&self) -> bool {
        self.labels.is_empty() && self.fields.is_empty()
    }
}

/// Moved from `examples/sample-apiserver/tests/selector.rs`: the selectors are this crate's
/// internals, not public API.
#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;
    use crate::meta::ObjectMeta;

    fn labels(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn label_selector_grammar_and_matching() {
        let s = LabelSelector::parse("a=b,c!=d,e in (x,y),!f,g").unwrap();
        assert_eq!(s.requirements.len(), 5);
        assert!(s.matches(&labels(&[("a", "b"), ("e", "x"), ("g", "")])));
        assert!(s.matches(&labels(&[("a", "b"), ("c", "z"), ("e", "y"), ("g", "1")])));
        assert!(
            !s.matches(&labels(&[("a", "b"), ("c", "d"), ("e", "x"), ("g", "")])),
            "c!=d"
        );
        assert!(
            !s.matches(&labels(&[("a", "b"), ("e", "x"), ("f", "1"), ("g", "")])),
            "!f"
        );
        assert!(
            !s.matches(&labels(&[("a", "b"), ("e", "z"), ("g", "")])),
            "e in"
        );
        assert!(!s.matches(&labels(&[("a", "b"), ("e", "x")])), "g exists");
        assert!(!s.matches(&labels(&[])), "a=b");

        let s = LabelSelector::parse(" env notin ( prod , staging ) , tier==web ").unwrap();
        assert!(s.matches(&labels(&[("tier", "web")])));
        assert!(!s.matches(&labels(&[("tier", "web"), ("env", "prod")])));

        let s = LabelSelector::parse("example.com/team=a-b_c.d,n>3,m<10").unwrap();
        assert!(s.matches(&labels(&[
            ("example.com/team", "a-b_c.d"),
            ("n", "4"),
            ("m", "9")
        ])));
        assert!(!s.matches(&labels(&[
            ("example.com/team", "a-b_c.d"),
            ("n", "3"),
            ("m", "9")
        ])));
        assert!(!s.matches(&labels(&[
            ("example.com/team", "a-b_c.d"),
            ("n", "x"),
            ("m", "9")
        ])));

        assert!(LabelSelector::parse("").unwrap().matches(&labels(&[])));
        assert!(
            LabelSelector::parse("a=")
                .unwrap()
                .matches(&labels(&[("a", "")]))
        );
        for bad in [
            "a=b,", "a in ()", "a in (b", "=b", "a=b c", "-a=b", "a=-b", "n>x", "a b", "!a=b",
            "a in b",
        ] {
            assert!(LabelSelector::parse(bad).is_err(), "{bad:?} should fail");
        }
    }

    #[test]
    fn field_selector() {
        let m = ObjectMeta {
            name: "n1".into(),
            namespace: "ns".into(),
            ..Default::default()
        };
        assert!(
            FieldSelector::parse("metadata.name=n1")
                .unwrap()
                .matches_meta(&m)
        );
        assert!(
            FieldSelector::parse("metadata.name==n1,metadata.namespace=ns")
                .unwrap()
                .matches_meta(&m)
        );
        assert!(
            !FieldSelector::parse("metadata.namespace!=ns")
                .unwrap()
                .matches_meta(&m)
        );
        assert!(FieldSelector::parse("").unwrap().matches_meta(&m));
        let esc = FieldSelector::parse(r"metadata.name=a\,b\=c\\").unwrap();
        assert_eq!(esc.requirements[0].value, r"a,b=c\");
        assert_eq!(
            FieldSelector::parse("spec.x=1").unwrap_err().to_string(),
            "field label not supported: spec.x"
        );
        assert!(FieldSelector::parse("metadata.name").is_err());
        assert!(FieldSelector::parse(r"metadata.name=a\x").is_err());

        let both = Selectors::parse(Some("a=b"), Some("metadata.name=n1")).unwrap();
        let mut m2 = m.clone();
        m2.labels.insert("a".into(), "b".into());
        assert!(both.matches(&m2));
        assert!(!both.matches(&m));
    }

    #[test]
    fn label_selector_errors_name_the_value() {
        let e = LabelSelector::parse("-a=b").unwrap_err().to_string();
        assert!(
            e.starts_with(
                r#"unable to parse requirement: <nil>: Invalid value: "-a": name part must consist of"#
            ),
            "{e}"
        );
    }
}
