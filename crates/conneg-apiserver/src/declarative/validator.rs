//! A published schema compiled for validation, and the validation of objects against it, as
//! kube-apiserver validates a custom resource: the value validations first, then, unless one
//! of those already rejects the object's shape, the CEL rules under a cost budget; on update,
//! ratcheting: a value unchanged from the old object is not checked again.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::fmt;

use regex::Regex;
use serde_json::{Map, Value};

use super::ListType;
use super::budget::{Budget, Refused};
use super::cost::{MAX_OBJECT_BYTES, STATIC_RULE_LIMIT, Shape};
use super::formats::Format;
use super::rule::{Bindings, Outcome, Rule};
use crate::validation::{BadValue, FieldError, FieldErrorType};

/// How deep `$ref`s may nest while a schema is compiled (a cycle stops here).
const MAX_SCHEMA_DEPTH: usize = 64;

/// A declaration that cannot be compiled: a rule that does not parse or could cost more than
/// Kubernetes allows, a pattern that is no regular expression, a `$ref` to nothing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeclarationError {
    /// Where in the schema (`Flunder.spec`).
    pub path: String,
    /// What is wrong.
    pub message: String,
}

impl fmt::Display for DeclarationError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.path, self.message)
    }
}

impl std::error::Error for DeclarationError {}

/// One compiled schema node.
#[derive(Debug, Default)]
struct Node {
    ty: Option<String>,
    format: Option<Format>,
    enum_values: Vec<Value>,
    min_length: Option<u64>,
    max_length: Option<u64>,
    min_items: Option<u64>,
    max_items: Option<u64>,
    min_properties: Option<u64>,
    max_properties: Option<u64>,
    minimum: Option<(f64, bool)>,
    maximum: Option<(f64, bool)>,
    pattern: Option<(String, Regex)>,
    required: Vec<String>,
    properties: BTreeMap<String, Node>,
    items: Option<Box<Node>>,
    additional: Option<Box<Node>>,
    list_type: ListType,
    rules: Vec<Rule>,
    /// The largest this node's value can be, in JSON bytes, for cost estimates.
    max_size: u64,
    /// The most characters, items or properties of this node's value, for cost estimates.
    max_count: u64,
}

/// What the cost estimate reads of the schema. Sizes hold at run time too: CEL runs only on
/// objects within their lengths, items and properties (a value beyond them is a blocking error).
impl super::cost::Shape for Node {
    fn property(&self, name: &str) -> Option<&Self> {
        self.properties.get(name).or(self.additional.as_deref())
    }
    fn element(&self) -> Option<&Self> {
        self.items.as_deref().or(self.additional.as_deref())
    }
    fn max_size(&self) -> u64 {
        self.max_size
    }
    fn max_count(&self) -> u64 {
        self.max_count
    }
}

/// The validation of one versioned kind, compiled from its published schema.
#[derive(Debug)]
pub struct Validator {
    root: Node,
    /// kube-openapi's wording (custom resources): `<path> in body should ...`.
    in_body: bool,
    /// Whether the root's `metadata` is checked too (a client's check; a server checks
    /// metadata apart).
    metadata: bool,
    /// Whether any node has `x-kubernetes-validations`.
    has_rules: bool,
}

/// The errors a walk finds, worded as its validator words them.
struct Found<'a> {
    errs: &'a mut Vec<FieldError>,
    in_body: bool,
    metadata: bool,
}

impl Found<'_> {
    /// A value validation's `Invalid value` at `field`: `detail`, after `<field> in body`
    /// in kube-openapi's wording.
    fn invalid(&mut self, field: &str, value: BadValue, detail: String) {
        let detail = if self.in_body {
            format!("{field} in body {detail}")
        } else {
            detail
        };
        self.errs
            .push(FieldError::invalid_value(field, value, &detail));
    }

    /// `v` at `field` is not of type `ty`; kube-openapi names the type it is.
    fn type_invalid(&mut self, field: &str, v: &Value, ty: &str) {
        let err = if self.in_body {
            let seen = type_of(v);
            FieldError::type_invalid(
                field,
                BadValue::String(seen.to_owned()),
                &format!("{field} in body must be of type {ty}: \"{seen}\""),
            )
        } else {
            FieldError::type_invalid(field, bad_value(v), &format!("must be of type {ty}"))
        };
        self.errs.push(err);
    }
}

impl Validator {
    /// Compiles the schema named `root` in `schemas` (an OpenAPI v3 document's
    /// `components/schemas`), following its `$ref`s.
    ///
    /// ```
    /// use conneg_apiserver::declarative::Validator;
    /// use serde_json::json;
    ///
    /// let schemas = json!({"Widget": {"type": "object", "properties": {
    ///     "size": {"type": "integer", "maximum": 10}}}});
    /// let v = Validator::compile(schemas.as_object().unwrap(), "Widget").unwrap();
    /// let errs = v.validate(&json!({"size": 11}), None);
    /// assert_eq!(errs[0].to_string(), "size: Invalid value: 11: should be less than or equal to 10");
    /// ```
    pub fn compile(schemas: &Map<String, Value>, root: &str) -> Result<Self, DeclarationError> {
        let schema = schemas.get(root).ok_or_else(|| DeclarationError {
            path: root.to_owned(),
            message: "no such schema".into(),
        })?;
        let c = Compiler { schemas };
        let root = c.node(schema, root, 0, 1)?;
        Ok(Validator {
            has_rules: has_rules(&root),
            root,
            in_body: false,
            metadata: false,
        })
    }

    /// The same validation, its value errors worded as kube-apiserver words a custom
    /// resource's (kube-openapi: `spec.x in body should be less than or equal to 10`, a type
    /// error naming the type seen).
    ///
    /// ```
    /// use conneg_apiserver::declarative::Validator;
    /// use serde_json::json;
    ///
    /// let schemas = json!({"W": {"type": "object", "properties": {
    ///     "size": {"type": "integer", "maximum": 10}}}});
    /// let v = Validator::compile(schemas.as_object().unwrap(), "W").unwrap().worded_in_body();
    /// assert_eq!(v.validate(&json!({"size": 11}), None)[0].to_string(),
    ///            "size: Invalid value: 11: size in body should be less than or equal to 10");
    /// ```
    #[must_use]
    pub fn worded_in_body(mut self) -> Self {
        self.in_body = true;
        self
    }

    /// The same validation, with the root's `metadata` checked against its schema too (the
    /// name rule every kind publishes: `metadata.name` is a `k8s-long-name`): what a client
    /// checks before sending, as `conneg validate` does. A server checks metadata apart
    /// ([`crate::validation::validate_object_meta`]), with the same messages.
    ///
    /// ```
    /// use conneg_apiserver::declarative::Validator;
    /// use serde_json::json;
    ///
    /// let schemas = json!({"W": {"type": "object", "properties": {"metadata": {"type": "object",
    ///     "properties": {"name": {"type": "string", "format": "k8s-long-name"}}}}}});
    /// let v = Validator::compile(schemas.as_object().unwrap(), "W").unwrap();
    /// let bad = json!({"metadata": {"name": "Bad_Name"}});
    /// assert!(v.validate(&bad, None).is_empty());
    /// let errs = v.with_metadata().validate(&bad, None);
    /// assert!(errs[0].to_string().starts_with(
    ///     r#"metadata.name: Invalid value: "Bad_Name": a lowercase RFC 1123 subdomain"#));
    /// ```
    #[must_use]
    pub fn with_metadata(mut self) -> Self {
        self.metadata = true;
        self
    }

    /// The field errors of `new` (with `old`, the object it replaces, on update), in
    /// Kubernetes' order and wording. Metadata is not checked here unless asked
    /// ([`Validator::with_metadata`]; a server checks it with
    /// [`crate::validation::validate_object_meta`]).
    pub fn validate(&self, new: &Value, old: Option<&Value>) -> Vec<FieldError> {
        let mut errs = Vec::new();
        let mut path = Vec::new();
        let mut out = Found {
            errs: &mut errs,
            in_body: self.in_body,
            metadata: self.metadata,
        };
        values(&self.root, new, old, &mut path, &mut out, true);
        if !self.has_rules {
            // Nothing for CEL to run: kube-apiserver has no CEL validator then, nor its note.
            return errs;
        }
        let blocking = errs.iter().any(|e| {
            matches!(
                e.error_type,
                FieldErrorType::NotSupported
                    | FieldErrorType::Required
                    | FieldErrorType::TooLong
                    | FieldErrorType::TooMany
                    | FieldErrorType::TypeInvalid
            )
        });
        if blocking {
            // kube-apiserver's words when the shape is wrong: CEL would read what is not there.
            errs.push(FieldError::invalid(
                "<nil>",
                "null",
                "some validation rules were not checked because the object was invalid; correct the existing errors to complete validation",
            ));
        } else {
            let mut budget = Budget::new();
            // A budget that runs out stops the walk; its error is the last one.
            let _ = rules(
                &self.root,
                new,
                old,
                &mut path,
                &mut errs,
                &mut budget,
                true,
            );
        }
        errs
    }

    /// The `x-kubernetes-list-type` of the list at `path` (property names from the root;
    /// list items are not named), for server-side apply's merge rules.
    pub fn list_type(&self, path: &[&str]) -> ListType {
        let mut node = &self.root;
        for p in path {
            let next = node
                .property(p)
                .or_else(|| node.element().and_then(|e| e.property(p)));
            match next {
                Some(n) => node = n,
                None => return ListType::Atomic,
            }
        }
        node.list_type.clone()
    }
}

struct Compiler<'a> {
    schemas: &'a Map<String, Value>,
}

impl Compiler<'_> {
    /// The schema `s` with its `$ref`s and `allOf`s merged into one object.
    fn resolve(
        &self,
        s: &Value,
        at: &str,
        depth: usize,
    ) -> Result<Map<String, Value>, DeclarationError> {
        let err = |message: String| DeclarationError {
            path: at.to_owned(),
            message,
        };
        if depth > MAX_SCHEMA_DEPTH {
            return Err(err("schema nests too deep (a $ref cycle?)".into()));
        }
        let Value::Object(m) = s else {
            return Err(err("a schema that is not an object".into()));
        };
        let mut out = Map::new();
        if let Some(r) = m.get("$ref").and_then(Value::as_str) {
            let name = r.rsplit('/').next().unwrap_or(r);
            let target = self
                .schemas
                .get(name)
                .ok_or_else(|| err(format!("$ref to unknown schema {r:?}")))?;
            out = self.resolve(target, at, depth + 1)?;
        }
        for part in m
            .get("allOf")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            merge(&mut out, self.resolve(part, at, depth + 1)?);
        }
        merge(
            &mut out,
            m.iter()
                .filter(|(k, _)| *k != "$ref" && *k != "allOf")
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect(),
        );
        Ok(out)
    }

    /// Compiles `s` at `at`; `cardinality` is how many times a rule here may run per object.
    fn node(
        &self,
        s: &Value,
        at: &str,
        depth: usize,
        cardinality: u64,
    ) -> Result<Node, DeclarationError> {
        let m = self.resolve(s, at, depth)?;
        let err = |message: String| DeclarationError {
            path: at.to_owned(),
            message,
        };
        let uint = |k: &str| m.get(k).and_then(Value::as_u64);
        let bound = |k: &str, ex: &str| {
            m.get(k)
                .and_then(Value::as_f64)
                .map(|v| (v, m.get(ex).and_then(Value::as_bool).unwrap_or(false)))
        };
        let mut n = Node {
            ty: m.get("type").and_then(Value::as_str).map(str::to_owned),
            format: m
                .get("format")
                .and_then(Value::as_str)
                .and_then(Format::parse),
            enum_values: m
                .get("enum")
                .and_then(Value::as_array)
                .cloned()
                .unwrap_or_default(),
            min_length: uint("minLength"),
            max_length: uint("maxLength"),
            min_items: uint("minItems"),
            max_items: uint("maxItems"),
            min_properties: uint("minProperties"),
            max_properties: uint("maxProperties"),
            minimum: bound("minimum", "exclusiveMinimum"),
            maximum: bound("maximum", "exclusiveMaximum"),
            required: m
                .get("required")
                .and_then(Value::as_array)
                .map(|r| {
                    r.iter()
                        .filter_map(Value::as_str)
                        .map(str::to_owned)
                        .collect()
                })
                .unwrap_or_default(),
            ..Node::default()
        };
        if let Some(p) = m.get("pattern").and_then(Value::as_str) {
            let re = Regex::new(p).map_err(|e| err(format!("pattern {p:?}: {e}")))?;
            n.pattern = Some((p.to_owned(), re));
        }
        n.list_type = match m.get("x-kubernetes-list-type").and_then(Value::as_str) {
            None | Some("atomic") => ListType::Atomic,
            Some("set") => ListType::Set,
            Some("map") => ListType::Map(
                m.get("x-kubernetes-list-map-keys")
                    .and_then(Value::as_array)
                    .map(|k| {
                        k.iter()
                            .filter_map(Value::as_str)
                            .map(|k| Cow::Owned(k.to_owned()))
                            .collect::<Vec<_>>()
                    })
                    .filter(|k| !k.is_empty())
                    .map(Cow::Owned)
                    .ok_or_else(|| err("listType map without x-kubernetes-list-map-keys".into()))?,
            ),
            Some(other) => return Err(err(format!("unknown x-kubernetes-list-type {other:?}"))),
        };
        for (name, p) in m
            .get("properties")
            .and_then(Value::as_object)
            .into_iter()
            .flatten()
        {
            let child = self.node(p, &format!("{at}.{name}"), depth + 1, cardinality)?;
            n.properties.insert(name.clone(), child);
        }
        let items_cardinality =
            cardinality.saturating_mul(n.max_items.unwrap_or(MAX_OBJECT_BYTES / 2));
        if let Some(items) = m.get("items") {
            n.items = Some(Box::new(self.node(
                items,
                &format!("{at}[*]"),
                depth + 1,
                items_cardinality,
            )?));
        }
        if let Some(add) = m.get("additionalProperties").filter(|a| a.is_object()) {
            let c = cardinality.saturating_mul(n.max_properties.unwrap_or(MAX_OBJECT_BYTES / 4));
            n.additional = Some(Box::new(self.node(
                add,
                &format!("{at}[*]"),
                depth + 1,
                c,
            )?));
        }
        n.max_size = max_size(&n);
        n.max_count = max_count(&n);
        for entry in m
            .get("x-kubernetes-validations")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            let rule = Rule::compile(entry).map_err(err)?.bounded(&n);
            let cost = rule.worst_cost().saturating_mul(cardinality);
            if cost > STATIC_RULE_LIMIT {
                return Err(err(format!(
                    "rule {:?}: estimated rule cost exceeds budget by factor of {:.1}x (try simplifying the rule, or adding maxItems, maxProperties, and maxLength where arrays, maps, and strings are declared)",
                    rule.source,
                    cost as f64 / STATIC_RULE_LIMIT as f64
                )));
            }
            n.rules.push(rule);
        }
        Ok(n)
    }
}

/// Whether `n` or a node under it has CEL rules.
fn has_rules(n: &Node) -> bool {
    !n.rules.is_empty()
        || n.properties.values().any(has_rules)
        || n.items.as_deref().is_some_and(has_rules)
        || n.additional.as_deref().is_some_and(has_rules)
}

/// `more` merged into `into`, a later schema of an `allOf` (or the siblings of a `$ref`) over
/// an earlier one: both `properties` apply (a property in both is the later one's); any other
/// keyword is the later one's.
fn merge(into: &mut Map<String, Value>, more: Map<String, Value>) {
    for (k, v) in more {
        match (into.get_mut(&k), v) {
            (Some(Value::Object(props)), Value::Object(more_props)) if k == "properties" => {
                props.extend(more_props);
            }
            (_, v) => {
                into.insert(k, v);
            }
        }
    }
}

/// The largest JSON a node's value can be, [`MAX_OBJECT_BYTES`] where the schema sets no bound.
fn max_size(n: &Node) -> u64 {
    let size = match n.ty.as_deref() {
        Some("string") => n
            .max_length
            .map_or(MAX_OBJECT_BYTES, |l| l.saturating_mul(4).saturating_add(2)),
        Some("integer" | "number" | "boolean") => 32,
        Some("array") => match (&n.items, n.max_items) {
            (Some(i), Some(k)) => k
                .saturating_mul(i.max_size.saturating_add(1))
                .saturating_add(2),
            _ => MAX_OBJECT_BYTES,
        },
        _ => {
            let props = n.properties.iter().fold(2u64, |s, (k, p)| {
                s.saturating_add(k.len() as u64 + 4)
                    .saturating_add(p.max_size)
            });
            match (&n.additional, n.max_properties) {
                (None, _) => props,
                (Some(a), Some(k)) => {
                    props.saturating_add(k.saturating_mul(a.max_size.saturating_add(256)))
                }
                (Some(_), None) => MAX_OBJECT_BYTES,
            }
        }
    };
    size.min(MAX_OBJECT_BYTES)
}

/// The most characters, items or properties of a node's value.
fn max_count(n: &Node) -> u64 {
    let bound = match n.ty.as_deref() {
        Some("string") => n.max_length,
        Some("array") => n.max_items,
        Some("integer" | "number" | "boolean") => Some(1),
        _ if n.additional.is_none() => Some(n.properties.len() as u64),
        _ => n.max_properties,
    };
    bound.unwrap_or(MAX_OBJECT_BYTES).min(MAX_OBJECT_BYTES)
}

/// A path as Kubernetes prints it: `spec.items[2].name`.
fn render<P: AsRef<str>>(path: &[P]) -> String {
    let mut s = String::new();
    for p in path {
        let p = p.as_ref();
        if p.starts_with('[') {
            s.push_str(p);
        } else {
            if !s.is_empty() {
                s.push('.');
            }
            s.push_str(p);
        }
    }
    s
}

fn bad_value(v: &Value) -> BadValue {
    match v {
        Value::Null => BadValue::Null,
        Value::String(s) => BadValue::String(s.clone()),
        Value::Bool(b) => BadValue::Bool(*b),
        Value::Number(n) => n.as_i64().map_or(BadValue::Other(v.clone()), BadValue::Int),
        other => BadValue::Other(other.clone()),
    }
}

fn type_of(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(n) if n.is_i64() || n.is_u64() => "integer",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// Items of a list paired with the old item that is the same item: by key in a map list, by
/// value in a set; atomic lists have none (the list is one value).
fn correlate<'a>(n: &Node, item: &Value, old: Option<&'a Value>) -> Option<&'a Value> {
    let old_items = old?.as_array()?;
    match &n.list_type {
        ListType::Atomic => None,
        ListType::Set => old_items.iter().find(|o| *o == item),
        ListType::Map(keys) => old_items.iter().find(|o| same_keys(keys, o, item)),
    }
}

/// Whether two items of a map list are the same item: equal in every key field.
fn same_keys(keys: &[Cow<'static, str>], a: &Value, b: &Value) -> bool {
    keys.iter().all(|k| a.get(k.as_ref()) == b.get(k.as_ref()))
}

/// The value validations of `v` at `n`, depth first.
fn values<'v>(
    n: &Node,
    v: &'v Value,
    old: Option<&Value>,
    path: &mut Vec<Cow<'v, str>>,
    out: &mut Found<'_>,
    root: bool,
) {
    if old == Some(v) || v.is_null() {
        // Ratcheting: what did not change is not checked again. Null is "unset".
        return;
    }
    let at = |path: &[Cow<'_, str>]| render(path);
    if let Some(ty) = n.ty.as_deref() {
        let actual = type_of(v);
        if actual != ty && !(ty == "number" && actual == "integer") {
            out.type_invalid(&at(path), v, ty);
            return;
        }
    }
    if !n.enum_values.is_empty() && !n.enum_values.contains(v) {
        let supported: Vec<String> = n
            .enum_values
            .iter()
            .map(|e| e.as_str().map_or_else(|| e.to_string(), str::to_owned))
            .collect();
        let supported: Vec<&str> = supported.iter().map(String::as_str).collect();
        out.errs.push(FieldError::not_supported(
            &at(path),
            bad_value(v),
            &supported,
        ));
    }
    match v {
        Value::String(s) => {
            let chars = s.chars().count() as u64;
            if let Some(max) = n.max_length.filter(|m| chars > *m) {
                out.errs
                    .push(FieldError::too_long(&at(path), bad_value(v), max));
            }
            if let Some(min) = n.min_length.filter(|m| chars < *m) {
                out.invalid(
                    &at(path),
                    bad_value(v),
                    format!("should be at least {min} chars long"),
                );
            }
            if let Some((p, re)) = &n.pattern
                && !re.is_match(s)
            {
                out.invalid(&at(path), bad_value(v), format!("should match '{p}'"));
            }
            if let Some(f) = n.format {
                for msg in f.errors(s) {
                    out.errs
                        .push(FieldError::invalid_value(&at(path), bad_value(v), &msg));
                }
            }
        }
        Value::Number(num) => {
            let x = num.as_f64().unwrap_or(f64::NAN);
            let show = |b: f64| {
                if b.fract() == 0.0 && b.abs() < 1e15 {
                    format!("{}", b as i64)
                } else {
                    b.to_string()
                }
            };
            if let Some((min, ex)) = n.minimum
                && (x < min || (ex && x == min))
            {
                let rel = if ex {
                    "greater than"
                } else {
                    "greater than or equal to"
                };
                out.invalid(
                    &at(path),
                    bad_value(v),
                    format!("should be {rel} {}", show(min)),
                );
            }
            if let Some((max, ex)) = n.maximum
                && (x > max || (ex && x == max))
            {
                let rel = if ex {
                    "less than"
                } else {
                    "less than or equal to"
                };
                out.invalid(
                    &at(path),
                    bad_value(v),
                    format!("should be {rel} {}", show(max)),
                );
            }
        }
        Value::Array(items) => {
            let len = items.len() as u64;
            if let Some(max) = n.max_items.filter(|m| len > *m) {
                out.errs.push(FieldError::too_many(&at(path), len, max));
            }
            if let Some(min) = n.min_items.filter(|m| len < *m) {
                out.invalid(
                    &at(path),
                    BadValue::Int(len as i64),
                    format!("should have at least {min} items"),
                );
            }
            for (i, item) in items.iter().enumerate() {
                path.push(Cow::Owned(format!("[{i}]")));
                let duplicate = match &n.list_type {
                    ListType::Atomic => None,
                    ListType::Set => items[..i].contains(item).then(|| bad_value(item)),
                    ListType::Map(keys) => items[..i]
                        .iter()
                        .any(|o| same_keys(keys, o, item))
                        .then(|| {
                            BadValue::Other(Value::Object(
                                keys.iter()
                                    .map(|k| {
                                        (
                                            k.to_string(),
                                            item.get(k.as_ref()).cloned().unwrap_or(Value::Null),
                                        )
                                    })
                                    .collect(),
                            ))
                        }),
                };
                if let Some(value) = duplicate {
                    out.errs.push(FieldError::duplicate(&at(path), value));
                }
                if let Some(child) = &n.items {
                    values(child, item, correlate(n, item, old), path, out, false);
                }
                path.pop();
            }
        }
        Value::Object(m) => {
            let len = m.len() as u64;
            if let Some(max) = n.max_properties.filter(|k| len > *k) {
                out.errs.push(FieldError::too_many(&at(path), len, max));
            }
            if let Some(min) = n.min_properties.filter(|k| len < *k) {
                out.invalid(
                    &at(path),
                    BadValue::Int(len as i64),
                    format!("should have at least {min} properties"),
                );
            }
            for r in n
                .required
                .iter()
                .filter(|r| m.get(*r).is_none_or(Value::is_null))
            {
                path.push(Cow::Owned(r.clone()));
                out.errs.push(FieldError::required(&at(path), ""));
                path.pop();
            }
            for (k, child_v) in m {
                if root && k == "metadata" && !out.metadata {
                    continue;
                }
                if let Some(child) = n.property(k) {
                    path.push(Cow::Borrowed(k));
                    values(child, child_v, old.and_then(|o| o.get(k)), path, out, false);
                    path.pop();
                }
            }
        }
        Value::Bool(_) | Value::Null => {}
    }
}

/// JSON bytes of `v`, the size its rules' costs are bounded with.
fn json_size(v: &Value) -> u64 {
    match v {
        Value::Null | Value::Bool(_) | Value::Number(_) => 24,
        Value::String(s) => s.len() as u64 + 2,
        Value::Array(a) => a.iter().map(|i| json_size(i) + 1).sum::<u64>() + 2,
        Value::Object(m) => {
            m.iter()
                .map(|(k, i)| k.len() as u64 + 4 + json_size(i))
                .sum::<u64>()
                + 2
        }
    }
}

/// The CEL rules at `n` and below; `Err` when the object's budget ran out (its error pushed).
fn rules<'n, 'v>(
    n: &'n Node,
    v: &'v Value,
    old: Option<&Value>,
    path: &mut Vec<Cow<'v, str>>,
    errs: &mut Vec<FieldError>,
    budget: &mut Budget<'n, Node>,
    root: bool,
) -> Result<(), ()> {
    if old == Some(v) || v.is_null() {
        return Ok(());
    }
    if !n.rules.is_empty() {
        let size = json_size(v).max(old.map_or(0, json_size));
        let ty = n.ty.as_deref().unwrap_or("object");
        // Converted once for all the node's rules (linear in the value, like reading it).
        let bindings = Bindings::new(v, old);
        let ctx = bindings.context();
        for rule in &n.rules {
            if rule.transition && old.is_none() {
                continue;
            }
            // The field an error names, rendered only for an error.
            let at = || {
                let at: Vec<&str> = path
                    .iter()
                    .map(AsRef::as_ref)
                    .chain(rule.field_path.iter().map(String::as_str))
                    .collect();
                render(&at)
            };
            match budget.charge(rule, n, size) {
                Ok(()) => {}
                Err(Refused::PerCall) => {
                    errs.push(FieldError::invalid(
                        &at(),
                        ty,
                        &format!(
                            "rule {}: call cost exceeds limit for rule: {}",
                            rule.source, rule.source
                        ),
                    ));
                    continue;
                }
                Err(Refused::OutOfBudget) => {
                    errs.push(FieldError::invalid(&at(), ty, "validation failed due to running out of cost budget, no further validation rules will be run"));
                    return Err(());
                }
            }
            if let Outcome::Fail(detail) = rule.evaluate(&ctx) {
                errs.push(match rule.reason {
                    FieldErrorType::Forbidden => FieldError::forbidden(&at(), &detail),
                    FieldErrorType::Required => FieldError::required(&at(), &detail),
                    FieldErrorType::Duplicate => {
                        FieldError::duplicate(&at(), BadValue::String(ty.to_owned()))
                    }
                    _ => FieldError::invalid(&at(), ty, &detail),
                });
            }
        }
    }
    match v {
        Value::Object(m) => {
            for (k, child_v) in m {
                if root && k == "metadata" {
                    continue;
                }
                if let Some(child) = n.property(k) {
                    path.push(Cow::Borrowed(k));
                    let r = rules(
                        child,
                        child_v,
                        old.and_then(|o| o.get(k)),
                        path,
                        errs,
                        budget,
                        false,
                    );
                    path.pop();
                    r?;
                }
            }
        }
        Value::Array(items) => {
            if let Some(child) = &n.items {
                for (i, item) in items.iter().enumerate() {
                    path.push(Cow::Owned(format!("[{i}]")));
                    let r = rules(
                        child,
                        item,
                        correlate(n, item, old),
                        path,
                        errs,
                        budget,
                        false,
                    );
                    path.pop();
                    r?;
                }
            }
        }
        _ => {}
    }
    Ok(())
}
