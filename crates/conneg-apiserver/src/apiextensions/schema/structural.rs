//! The rules a CRD version's `openAPIV3Schema` must follow (reference §1.3 to §1.5), with the
//! texts and order of Kubernetes' `validateCustomResourceDefinitionValidation`:
//!
//! 1. with the status subresource, the root may use only some keywords;
//! 2. `nullable` is forbidden at the root;
//! 3. the structural invariants (`ValidateStructural`: types, junctors, metadata, embedded
//!    resources, completeness of junctors), sorted by their text; only if there are none, the
//!    defaults (`ValidateDefaults`, as far as pruning goes: a default must have no unknown
//!    fields);
//! 4. the OpenAPI subset (`ValidateCustomResourceDefinitionOpenAPISchema`: unsupported
//!    keywords and types, `uniqueItems`, defaults under root metadata, list and map types),
//!    node by node (properties in name order).
//!
//! The rules of a CRD created now are applied (Kubernetes relaxes some on update when the old
//! CRD already broke them). `x-kubernetes-validations` (CEL) and the value validation of
//! defaults are checked elsewhere.

use regex::Regex;
use serde_json::{Map, Value};

use super::{MAX_DEPTH, Structural, child, index, is_meta_field, key, prune::has_unknown_fields};
use crate::validation::{BadValue, FieldError};

/// Checks a CRD version's `openAPIV3Schema` and returns Kubernetes' errors for it. `path` is
/// the schema's field path (`spec.validation.openAPIV3Schema` when all versions share one
/// schema, `spec.versions[i].schema.openAPIV3Schema` otherwise); `status_subresource` tells
/// whether that version enables `/status`. A schema nested deeper than
/// [`MAX_DEPTH`](super::MAX_DEPTH) gets one error and is not walked; a node that is not a
/// JSON object (which a typed decoder would have refused) gets one error per node.
pub(crate) fn check(schema: &Value, path: &str, status_subresource: bool) -> Vec<FieldError> {
    let shape = shape_errors(schema, path);
    if !shape.is_empty() {
        return shape;
    }
    let Some(root) = schema.as_object() else {
        return Vec::new(); // shape_errors has reported it
    };
    let mut errs = Vec::new();
    if status_subresource {
        status_root(root, path, &mut errs);
    }
    if flag(root, "nullable") {
        errs.push(FieldError::forbidden(
            &child(path, "nullable"),
            "nullable cannot be true at the root",
        ));
    }
    let unsupported = unsupported_field(root, path);
    if unsupported.is_none() {
        let mut structural = Vec::new();
        invariants(root, Level::Root, path, &mut structural);
        completeness(root, path, &mut structural);
        if structural.is_empty() {
            defaults(&Structural::from_json(schema), path, true, false, &mut errs);
        } else {
            structural.sort_by_cached_key(|e| e.to_string());
            errs.extend(structural);
        }
    }
    openapi(root, path, Std::default(), true, &mut errs);
    if errs.is_empty()
        && let Some(e) = unsupported
    {
        errs.push(e);
    }
    errs
}

// ---- reading JSON schema nodes tolerantly ----

/// The string value of `k`, or `""`.
fn string<'a>(m: &'a Map<String, Value>, k: &str) -> &'a str {
    m.get(k).and_then(Value::as_str).unwrap_or("")
}

/// Whether `k` is `true`.
fn flag(m: &Map<String, Value>, k: &str) -> bool {
    m.get(k) == Some(&Value::Bool(true))
}

/// `k` when it is an object.
fn object<'a>(m: &'a Map<String, Value>, k: &str) -> Option<&'a Map<String, Value>> {
    m.get(k).and_then(Value::as_object)
}

/// The elements of `k` when it is an array.
fn array<'a>(m: &'a Map<String, Value>, k: &str) -> &'a [Value] {
    m.get(k)
        .and_then(Value::as_array)
        .map_or(&[], Vec::as_slice)
}

/// `properties`, the ones that are schema objects.
fn properties(m: &Map<String, Value>) -> impl Iterator<Item = (&String, &Map<String, Value>)> {
    object(m, "properties")
        .into_iter()
        .flatten()
        .filter_map(|(k, v)| Some((k, v.as_object()?)))
}

/// Whether `k` is present and not null (a Go pointer or interface field that is set).
fn present(m: &Map<String, Value>, k: &str) -> bool {
    m.get(k).is_some_and(|v| !v.is_null())
}

/// Whether `k` is a non-empty array or object (a Go slice or map with elements).
fn non_empty(m: &Map<String, Value>, k: &str) -> bool {
    match m.get(k) {
        Some(Value::Array(a)) => !a.is_empty(),
        Some(Value::Object(o)) => !o.is_empty(),
        _ => false,
    }
}

/// A JSON value as the bad value of a field error.
fn bad(v: &Value) -> BadValue {
    match v {
        Value::Null => BadValue::Null,
        Value::Bool(b) => BadValue::Bool(*b),
        Value::String(s) => BadValue::String(s.clone()),
        Value::Number(n) => n
            .as_i64()
            .map_or_else(|| BadValue::Other(v.clone()), BadValue::Int),
        _ => BadValue::Other(v.clone()),
    }
}

fn string_value(s: &str) -> BadValue {
    BadValue::String(s.to_owned())
}

/// The keywords of a JSON schema (`JSONSchemaProps`), in the order of the Go struct's fields.
const KEYWORDS: [(&str, &str); 44] = [
    ("id", "ID"),
    ("$schema", "Schema"),
    ("$ref", "Ref"),
    ("description", "Description"),
    ("type", "Type"),
    ("nullable", "Nullable"),
    ("format", "Format"),
    ("title", "Title"),
    ("default", "Default"),
    ("maximum", "Maximum"),
    ("exclusiveMaximum", "ExclusiveMaximum"),
    ("minimum", "Minimum"),
    ("exclusiveMinimum", "ExclusiveMinimum"),
    ("maxLength", "MaxLength"),
    ("minLength", "MinLength"),
    ("pattern", "Pattern"),
    ("maxItems", "MaxItems"),
    ("minItems", "MinItems"),
    ("uniqueItems", "UniqueItems"),
    ("multipleOf", "MultipleOf"),
    ("enum", "Enum"),
    ("maxProperties", "MaxProperties"),
    ("minProperties", "MinProperties"),
    ("required", "Required"),
    ("items", "Items"),
    ("allOf", "AllOf"),
    ("oneOf", "OneOf"),
    ("anyOf", "AnyOf"),
    ("not", "Not"),
    ("properties", "Properties"),
    ("additionalProperties", "AdditionalProperties"),
    ("patternProperties", "PatternProperties"),
    ("dependencies", "Dependencies"),
    ("additionalItems", "AdditionalItems"),
    ("definitions", "Definitions"),
    ("externalDocs", "ExternalDocs"),
    ("example", "Example"),
    (
        "x-kubernetes-preserve-unknown-fields",
        "XPreserveUnknownFields",
    ),
    ("x-kubernetes-embedded-resource", "XEmbeddedResource"),
    ("x-kubernetes-int-or-string", "XIntOrString"),
    ("x-kubernetes-list-map-keys", "XListMapKeys"),
    ("x-kubernetes-list-type", "XListType"),
    ("x-kubernetes-map-type", "XMapType"),
    ("x-kubernetes-validations", "XValidations"),
];

fn is_keyword(k: &str) -> bool {
    KEYWORDS.iter().any(|(j, _)| *j == k)
}

/// Whether keyword `k` holds a non-zero value once decoded into the Go struct: `null`,
/// `false` and `""` are zero (except `x-kubernetes-preserve-unknown-fields`, a pointer).
fn set_in_props(k: &str, v: &Value) -> bool {
    match v {
        Value::Null => false,
        Value::Bool(b) => *b || k == "x-kubernetes-preserve-unknown-fields",
        Value::String(s) => !s.is_empty(),
        _ => true,
    }
}

/// Whether keyword `k` holds a non-zero value once converted into Go's structural schema,
/// which also drops empty `enum`, `allOf`, `anyOf` and `oneOf` lists.
fn set_in_structural(k: &str, v: &Value) -> bool {
    match (k, v) {
        ("enum" | "allOf" | "anyOf" | "oneOf", Value::Array(a)) => !a.is_empty(),
        _ => set_in_props(k, v),
    }
}

// ---- shape and depth ----

/// Schema nodes that are not objects, and nesting deeper than `MAX_DEPTH`. Iterative.
fn shape_errors(schema: &Value, path: &str) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let mut stack = vec![(schema, path.to_owned(), 1usize)];
    while let Some((v, path, depth)) = stack.pop() {
        let Some(m) = v.as_object() else {
            errs.push(FieldError::invalid_value(
                &path,
                bad(v),
                "must be a JSON schema object",
            ));
            continue;
        };
        if depth > MAX_DEPTH {
            return vec![FieldError::forbidden(
                &path,
                &format!("must not be nested more than {MAX_DEPTH} levels deep"),
            )];
        }
        let mut children: Vec<(&Value, String)> = Vec::new();
        let mut push = |v, p| children.push((v, p));
        for k in ["properties", "patternProperties", "definitions"] {
            if let Some(props) = object(m, k) {
                for (name, s) in props {
                    push(s, key(&child(&path, k), name));
                }
            }
        }
        if let Some(deps) = object(m, "dependencies") {
            for (name, s) in deps.iter().filter(|(_, s)| s.is_object()) {
                push(s, key(&child(&path, "dependencies"), name));
            }
        }
        match m.get("items") {
            Some(Value::Array(a)) => {
                for (i, s) in a.iter().enumerate() {
                    push(s, index(&child(&path, "items"), i));
                }
            }
            Some(s) if !s.is_null() => push(s, child(&path, "items")),
            _ => {}
        }
        for k in ["additionalProperties", "additionalItems"] {
            if let Some(s) = m.get(k).filter(|s| !s.is_null() && !s.is_boolean()) {
                push(s, child(&path, k));
            }
        }
        for k in ["allOf", "anyOf", "oneOf"] {
            for (i, s) in array(m, k).iter().enumerate() {
                push(s, index(&child(&path, k), i));
            }
        }
        if let Some(s) = m.get("not").filter(|s| !s.is_null()) {
            push(s, child(&path, "not"));
        }
        stack.extend(children.into_iter().map(|(v, p)| (v, p, depth + 1)));
    }
    errs.reverse();
    errs
}

/// What makes Go's `NewStructural` fail (the keywords the OpenAPI checks forbid, except
/// `$schema`, which only this reports): `openAPIV3Schema: Invalid value: "": …`, shown only
/// when nothing else is wrong.
fn unsupported_field(root: &Map<String, Value>, path: &str) -> Option<FieldError> {
    let mut stack = vec![root];
    while let Some(m) = stack.pop() {
        let which = [
            ("id", !string(m, "id").is_empty()),
            ("schema", !string(m, "$schema").is_empty()),
            ("$ref", !string(m, "$ref").is_empty()),
            ("patternProperties", non_empty(m, "patternProperties")),
            ("dependencies", non_empty(m, "dependencies")),
            ("additionalItems", present(m, "additionalItems")),
            ("definitions", non_empty(m, "definitions")),
        ];
        let mut detail = which
            .iter()
            .find(|(_, bad)| *bad)
            .map(|(k, _)| format!("OpenAPIV3Schema '{k}' is not supported"));
        if matches!(m.get("items"), Some(Value::Array(a)) if !a.is_empty()) {
            detail.get_or_insert_with(|| {
                "OpenAPIV3Schema 'items' must be a schema, but is an array".to_owned()
            });
        }
        if m.get("x-kubernetes-preserve-unknown-fields") == Some(&Value::Bool(false)) {
            detail.get_or_insert_with(|| {
                "internal error: 'x-kubernetes-preserve-unknown-fields' must be true or undefined"
                    .to_owned()
            });
        }
        if let Some(d) = detail {
            return Some(FieldError::invalid(path, "", &d));
        }
        stack.extend(properties(m).map(|(_, s)| s));
        stack.extend(object(m, "items"));
        stack.extend(object(m, "additionalProperties"));
        stack.extend(object(m, "not"));
        for k in ["allOf", "anyOf", "oneOf"] {
            stack.extend(array(m, k).iter().filter_map(Value::as_object));
        }
    }
    None
}

// ---- 1. the root with the status subresource ----

const ALLOWED_AT_ROOT: [&str; 22] = [
    "Description",
    "Type",
    "Format",
    "Title",
    "Maximum",
    "ExclusiveMaximum",
    "Minimum",
    "ExclusiveMinimum",
    "MaxLength",
    "MinLength",
    "Pattern",
    "MaxItems",
    "MinItems",
    "UniqueItems",
    "MultipleOf",
    "Required",
    "Items",
    "Properties",
    "ExternalDocs",
    "Example",
    "XPreserveUnknownFields",
    "XValidations",
];

/// The first keyword set at the root, in struct order, decides: a `type` other than
/// `object`, or a keyword the status subresource does not allow there, gives one error.
fn status_root(root: &Map<String, Value>, path: &str, errs: &mut Vec<FieldError>) {
    for (k, go) in KEYWORDS {
        let Some(v) = root.get(k).filter(|v| set_in_props(k, v)) else {
            continue;
        };
        if go == "Type" {
            let ty = string(root, "type");
            if ty != "object" {
                errs.push(FieldError::invalid_value(
                    &child(path, "type"),
                    bad(v),
                    r#"only "object" is allowed as the type at the root of the schema if the status subresource is enabled"#,
                ));
                return;
            }
            continue;
        }
        if !ALLOWED_AT_ROOT.contains(&go) {
            errs.push(FieldError::invalid_value(
                path,
                BadValue::Other(Value::Object(root.clone())),
                &format!(
                    "only [{}] fields are allowed at the root of the schema if the status subresource is enabled",
                    ALLOWED_AT_ROOT.join(" ")
                ),
            ));
            return;
        }
    }
}

// ---- 3. structural invariants (ValidateStructural) ----

#[derive(Clone, Copy, PartialEq, Eq)]
enum Level {
    Root,
    Item,
    Field,
}

/// `anyOf: [{type: integer}, {type: string}]` exactly: the int-or-string pattern.
fn is_int_or_string_any_of(m: &Map<String, Value>) -> bool {
    let only_type = |v: &Value, ty: &str| {
        v.as_object().is_some_and(|o| {
            string(o, "type") == ty
                && o.iter()
                    .all(|(k, v)| k == "type" || !is_keyword(k) || !set_in_structural(k, v))
        })
    };
    matches!(m.get("anyOf"), Some(Value::Array(a))
        if a.len() == 2 && only_type(&a[0], "integer") && only_type(&a[1], "string"))
}

fn invariants(m: &Map<String, Value>, lvl: Level, path: &str, errs: &mut Vec<FieldError>) {
    let ty = string(m, "type");
    let embedded = flag(m, "x-kubernetes-embedded-resource");
    let int_or_string = flag(m, "x-kubernetes-int-or-string");
    let preserve = flag(m, "x-kubernetes-preserve-unknown-fields");

    if ty == "array" && !present(m, "items") {
        errs.push(FieldError::required(
            &child(path, "items"),
            "must be specified",
        ));
    }
    if let Some(items) = object(m, "items") {
        invariants(items, Level::Item, &child(path, "items"), errs);
    }
    for (k, p) in properties(m) {
        invariants(p, Level::Field, &key(&child(path, "properties"), k), errs);
    }
    let additional = present(m, "additionalProperties");
    if additional {
        if lvl == Level::Root {
            errs.push(FieldError::forbidden(
                &child(path, "additionalProperties"),
                "must not be used at the root",
            ));
        }
        if let Some(ap) = object(m, "additionalProperties") {
            invariants(ap, Level::Field, &child(path, "additionalProperties"), errs);
        }
    }

    if int_or_string && preserve {
        errs.push(FieldError::invalid_value(
            &child(path, "x-kubernetes-preserve-unknown-fields"),
            BadValue::Bool(true),
            "must be false if x-kubernetes-int-or-string is true",
        ));
    }
    if int_or_string && embedded {
        errs.push(FieldError::invalid_value(
            &child(path, "x-kubernetes-embedded-resource"),
            BadValue::Bool(true),
            "must be false if x-kubernetes-int-or-string is true",
        ));
    }

    let skip_any_of = is_int_or_string_any_of(m);
    let skip_first_all_of_any_of = array(m, "allOf")
        .first()
        .and_then(Value::as_object)
        .is_some_and(is_int_or_string_any_of);
    junctors(m, skip_any_of, skip_first_all_of_any_of, path, errs);

    let check_metadata = lvl == Level::Root || embedded;
    if embedded && ty != "object" {
        let detail = "must be object if x-kubernetes-embedded-resource is true";
        errs.push(if ty.is_empty() {
            FieldError::required(&child(path, "type"), detail)
        } else {
            FieldError::invalid(&child(path, "type"), ty, detail)
        });
    } else if ty.is_empty() && !int_or_string && !preserve {
        let detail = match lvl {
            Level::Root => "must not be empty at the root",
            Level::Item => "must not be empty for specified array items",
            Level::Field => "must not be empty for specified object fields",
        };
        errs.push(FieldError::required(&child(path, "type"), detail));
    }
    if embedded && additional {
        errs.push(FieldError::forbidden(
            &child(path, "additionalProperties"),
            "must not be used if x-kubernetes-embedded-resource is set",
        ));
    }
    if lvl == Level::Root && !ty.is_empty() && ty != "object" {
        errs.push(FieldError::invalid(
            &child(path, "type"),
            ty,
            "must be object at the root",
        ));
    }

    let props = object(m, "properties");
    let prop = |k: &str| props.and_then(|p| p.get(k)).and_then(Value::as_object);
    for k in ["kind", "apiVersion"] {
        if let Some(p) = prop(k)
            && check_metadata
            && string(p, "type") != "string"
        {
            errs.push(FieldError::invalid(
                &child(&key(&child(path, "properties"), k), "type"),
                string(p, "type"),
                "must be string",
            ));
        }
    }
    if let Some(meta) = prop("metadata") {
        let mpath = key(&child(path, "properties"), "metadata");
        if check_metadata && string(meta, "type") != "object" {
            errs.push(FieldError::invalid(
                &child(&mpath, "type"),
                string(meta, "type"),
                "must be object",
            ));
        }
        if lvl == Level::Root && !metadata_only_names(meta) {
            errs.push(FieldError::forbidden(
                &mpath,
                "must not specify anything other than name and generateName, but metadata is implicitly specified",
            ));
        }
    }
    if embedded && !preserve && !non_empty(m, "properties") {
        errs.push(FieldError::required(
            &child(path, "properties"),
            "must not be empty if x-kubernetes-embedded-resource is true without x-kubernetes-preserve-unknown-fields",
        ));
    }
}

/// Root `metadata` may give a `type` and a `default` (checked elsewhere) and constrain only
/// `name` and `generateName`.
fn metadata_only_names(meta: &Map<String, Value>) -> bool {
    meta.iter().all(|(k, v)| match k.as_str() {
        "type" | "default" => true,
        "properties" => v.as_object().is_none_or(|p| {
            p.is_empty() || (p.len() <= 2 && p.keys().all(|k| k == "name" || k == "generateName"))
        }),
        k if !is_keyword(k) => true,
        k => !set_in_structural(k, v),
    })
}

/// `validateValueValidation`: the junctors of a node, and its `pattern`.
fn junctors(
    m: &Map<String, Value>,
    skip_any_of: bool,
    skip_first_all_of_any_of: bool,
    path: &str,
    errs: &mut Vec<FieldError>,
) {
    if !skip_any_of {
        for (i, v) in array(m, "anyOf").iter().enumerate() {
            if let Some(v) = v.as_object() {
                nested(v, false, &index(&child(path, "anyOf"), i), errs);
            }
        }
    }
    for (i, v) in array(m, "allOf").iter().enumerate() {
        if let Some(v) = v.as_object() {
            let skip = skip_first_all_of_any_of && i == 0;
            nested(v, skip, &index(&child(path, "allOf"), i), errs);
        }
    }
    for (i, v) in array(m, "oneOf").iter().enumerate() {
        if let Some(v) = v.as_object() {
            nested(v, false, &index(&child(path, "oneOf"), i), errs);
        }
    }
    if let Some(v) = object(m, "not") {
        nested(v, false, &child(path, "not"), errs);
    }
    let pattern = string(m, "pattern");
    if !pattern.is_empty()
        && let Err(e) = Regex::new(pattern)
    {
        errs.push(FieldError::invalid(
            &child(path, "pattern"),
            pattern,
            &format!(
                "must be a valid regular expression, but isn't: {}",
                regex_error(pattern, &e)
            ),
        ));
    }
}

/// A regex error in one line, shaped like Go's (`error parsing regexp: <what>: `<pattern>``).
/// The wording comes from the `regex` crate, which accepts the RE2 syntax Go does.
fn regex_error(pattern: &str, e: &regex::Error) -> String {
    let what = match e {
        regex::Error::Syntax(s) => s
            .lines()
            .rev()
            .find_map(|l| l.strip_prefix("error: "))
            .unwrap_or(s)
            .to_owned(),
        other => other.to_string().replace('\n', " "),
    };
    format!("error parsing regexp: {what}: `{pattern}`")
}

/// `validateNestedValueValidation`: a schema under `allOf`/`anyOf`/`oneOf`/`not` may only
/// validate values.
fn nested(v: &Map<String, Value>, skip_any_of: bool, path: &str, errs: &mut Vec<FieldError>) {
    junctors(v, skip_any_of, false, path, errs);
    if let Some(items) = object(v, "items") {
        nested(items, false, &child(path, "items"), errs);
    }
    for (k, p) in properties(v) {
        nested(p, false, &key(&child(path, "properties"), k), errs);
    }
    let forbid = |errs: &mut Vec<FieldError>, k: &str, detail: &str| {
        errs.push(FieldError::forbidden(&child(path, k), detail));
    };
    const EMPTY: &str = "must be empty to be structural";
    const UNDEFINED: &str = "must be undefined to be structural";
    const FALSE: &str = "must be false to be structural";
    if !string(v, "type").is_empty() {
        forbid(errs, "type", EMPTY);
    }
    if matches!(
        v.get("additionalProperties"),
        Some(Value::Object(_) | Value::Bool(true))
    ) {
        forbid(errs, "additionalProperties", UNDEFINED);
    }
    if present(v, "default") {
        forbid(errs, "default", UNDEFINED);
    }
    if !string(v, "title").is_empty() {
        forbid(errs, "title", EMPTY);
    }
    if !string(v, "description").is_empty() {
        forbid(errs, "description", EMPTY);
    }
    if flag(v, "nullable") {
        forbid(errs, "nullable", FALSE);
    }
    for k in [
        "x-kubernetes-preserve-unknown-fields",
        "x-kubernetes-embedded-resource",
        "x-kubernetes-int-or-string",
    ] {
        if flag(v, k) {
            forbid(errs, k, FALSE);
        }
    }
    if non_empty(v, "x-kubernetes-list-map-keys") {
        forbid(errs, "x-kubernetes-list-map-keys", EMPTY);
    }
    for k in ["x-kubernetes-list-type", "x-kubernetes-map-type"] {
        if present(v, k) {
            forbid(errs, k, UNDEFINED);
        }
    }
    if non_empty(v, "x-kubernetes-validations") {
        forbid(errs, "x-kubernetes-validations", EMPTY);
    }
    if properties(v).any(|(k, _)| k == "metadata") {
        errs.push(FieldError::forbidden(
            &key(&child(path, "properties"), "metadata"),
            "must not be specified in a nested context",
        ));
    }
}

/// `validateStructuralCompleteness`: every property and `items` the root's junctors constrain
/// must be specified outside them. As in Kubernetes, only the root's junctors are checked
/// (a junctor further down is not).
fn completeness(root: &Map<String, Value>, path: &str, errs: &mut Vec<FieldError>) {
    junctor_completeness(root, root, path, path, errs);
}

fn junctor_completeness(
    v: &Map<String, Value>,
    s: &Map<String, Value>,
    s_path: &str,
    v_path: &str,
    errs: &mut Vec<FieldError>,
) {
    if let Some(not) = object(v, "not") {
        nested_completeness(not, Some(s), s_path, &child(v_path, "not"), errs);
    }
    for k in ["allOf", "anyOf", "oneOf"] {
        for (i, j) in array(v, k).iter().enumerate() {
            if let Some(j) = j.as_object() {
                nested_completeness(j, Some(s), s_path, &index(&child(v_path, k), i), errs);
            }
        }
    }
}

fn nested_completeness(
    v: &Map<String, Value>,
    s: Option<&Map<String, Value>>,
    s_path: &str,
    v_path: &str,
    errs: &mut Vec<FieldError>,
) {
    let Some(s) = s else {
        errs.push(FieldError::required(
            s_path,
            &format!("because it is defined in {v_path}"),
        ));
        return;
    };
    junctor_completeness(v, s, s_path, v_path, errs);
    if let Some(items) = object(v, "items") {
        let s_items = object(s, "items");
        nested_completeness(
            items,
            s_items,
            &child(s_path, "items"),
            &child(v_path, "items"),
            errs,
        );
    }
    let s_props = object(s, "properties");
    for (k, p) in properties(v) {
        let sp = s_props.and_then(|sp| sp.get(k)).and_then(Value::as_object);
        let s_key = key(&child(s_path, "properties"), k);
        let v_key = key(&child(v_path, "properties"), k);
        match sp {
            Some(sp) => nested_completeness(p, Some(sp), &s_key, &v_key, errs),
            None => errs.push(FieldError::required(
                &s_key,
                &format!("because it is defined in {v_key}"),
            )),
        }
    }
}

// ---- 3b. defaults (ValidateDefaults, the pruning part) ----

/// A default must already be pruned. Walks `properties` and `items` (defaults under
/// `additionalProperties` are not checked, as in Kubernetes), skipping the type and object
/// metadata of a resource (the root or an embedded resource), whose defaults are checked as
/// metadata elsewhere.
fn defaults(s: &Structural, path: &str, root: bool, inside_meta: bool, errs: &mut Vec<FieldError>) {
    let embedded = root || s.embedded_resource;
    let inside_meta = inside_meta && !embedded;
    if let Some(d) = &s.default
        && !inside_meta
        && has_unknown_fields(d, s, embedded)
    {
        errs.push(FieldError::invalid_value(
            &child(path, "default"),
            bad(d),
            "must not have unknown fields",
        ));
    }
    if let Some(items) = &s.items {
        defaults(items, &child(path, "items"), false, inside_meta, errs);
    }
    for (k, p) in &s.properties {
        let meta = inside_meta || (embedded && is_meta_field(k));
        defaults(p, &key(&child(path, "properties"), k), false, meta, errs);
    }
}

// ---- 4. the OpenAPI subset (ValidateCustomResourceDefinitionOpenAPISchema) ----

/// `specStandardValidatorV3`'s state.
#[derive(Clone, Default)]
struct Std {
    /// Why defaults are forbidden here, if they are.
    no_defaults: Option<&'static str>,
    /// Inside the type or object metadata of a resource.
    inside_meta: bool,
}

const TYPES: [&str; 6] = ["array", "boolean", "integer", "number", "object", "string"];

fn openapi(
    m: &Map<String, Value>,
    path: &str,
    std: Std,
    is_root: bool,
    errs: &mut Vec<FieldError>,
) {
    let ty = string(m, "type");
    let embedded = flag(m, "x-kubernetes-embedded-resource");
    // specStandardValidatorV3.validate
    if !ty.is_empty() && !TYPES.contains(&ty) {
        errs.push(FieldError::not_supported(
            &child(path, "type"),
            string_value(ty),
            &TYPES,
        ));
    }
    if present(m, "default")
        && let Some(reason) = std.no_defaults
    {
        errs.push(FieldError::forbidden(
            &child(path, "default"),
            &format!("must not be set {reason}"),
        ));
    }
    let forbidden_keywords = [
        ("id", !string(m, "id").is_empty()),
        ("additionalItems", present(m, "additionalItems")),
        ("patternProperties", non_empty(m, "patternProperties")),
        ("definitions", non_empty(m, "definitions")),
        ("dependencies", present(m, "dependencies")),
        ("$ref", present(m, "$ref")),
    ];
    for (k, set) in forbidden_keywords {
        if set {
            errs.push(FieldError::forbidden(
                &child(path, k),
                &format!("{k} is not supported"),
            ));
        }
    }
    if ty == "null" {
        errs.push(FieldError::forbidden(
            &child(path, "type"),
            "type cannot be set to null, use nullable as an alternative",
        ));
    }
    if non_empty(m, "items") && m.get("items").is_some_and(Value::is_array) {
        errs.push(FieldError::forbidden(
            &child(path, "items"),
            "items must be a schema object and not an array",
        ));
    }
    if std.inside_meta && embedded {
        errs.push(FieldError::forbidden(
            &child(path, "x-kubernetes-embedded-resource"),
            "must not be used inside of resource meta",
        ));
    }

    if flag(m, "uniqueItems") {
        errs.push(FieldError::forbidden(
            &child(path, "uniqueItems"),
            "uniqueItems cannot be set to true since the runtime complexity becomes quadratic",
        ));
    }
    if let Some(ap) = m.get("additionalProperties").filter(|v| !v.is_null()) {
        if non_empty(m, "properties") && (ap == &Value::Bool(false) || ap.is_object()) {
            errs.push(FieldError::forbidden(
                &child(path, "additionalProperties"),
                "additionalProperties and properties are mutual exclusive",
            ));
        }
        if let Some(ap) = ap.as_object() {
            let mut sub = std.clone();
            if std.inside_meta {
                sub.no_defaults = Some("inside additionalProperties applying to object metadata");
            }
            openapi(ap, &child(path, "additionalProperties"), sub, false, errs);
        }
    }
    for (k, p) in properties(m) {
        let mut sub = std.clone();
        if (is_root || embedded) && is_meta_field(k) {
            sub.inside_meta = true;
            if is_root {
                sub.no_defaults = Some(match k.as_str() {
                    "metadata" => "in top-level metadata",
                    "kind" => "in top-level kind",
                    _ => "in top-level apiVersion",
                });
            }
        }
        openapi(p, &key(&child(path, "properties"), k), sub, false, errs);
    }
    if let Some(not) = object(m, "not") {
        openapi(not, &child(path, "not"), std.clone(), false, errs);
    }
    for k in ["allOf", "oneOf", "anyOf"] {
        for (i, j) in array(m, k).iter().enumerate() {
            if let Some(j) = j.as_object() {
                openapi(j, &index(&child(path, k), i), std.clone(), false, errs);
            }
        }
    }
    for (k, d) in object(m, "definitions").into_iter().flatten() {
        if let Some(d) = d.as_object() {
            openapi(
                d,
                &key(&child(path, "definitions"), k),
                std.clone(),
                false,
                errs,
            );
        }
    }
    match m.get("items") {
        Some(Value::Object(items)) => {
            openapi(items, &child(path, "items"), std.clone(), false, errs);
        }
        Some(Value::Array(a)) => {
            for (i, s) in a.iter().enumerate() {
                if let Some(s) = s.as_object() {
                    openapi(
                        s,
                        &index(&child(path, "items"), i),
                        std.clone(),
                        false,
                        errs,
                    );
                }
            }
        }
        _ => {}
    }
    for (k, d) in object(m, "dependencies").into_iter().flatten() {
        if let Some(d) = d.as_object() {
            openapi(
                d,
                &key(&child(path, "dependencies"), k),
                std.clone(),
                false,
                errs,
            );
        }
    }
    if m.get("x-kubernetes-preserve-unknown-fields") == Some(&Value::Bool(false)) {
        errs.push(FieldError::invalid_value(
            &child(path, "x-kubernetes-preserve-unknown-fields"),
            BadValue::Bool(false),
            "must be true or undefined",
        ));
    }
    list_and_map_types(m, path, errs);
}

/// Reference §1.5: `x-kubernetes-map-type`, `x-kubernetes-list-type` and
/// `x-kubernetes-list-map-keys`.
fn list_and_map_types(m: &Map<String, Value>, path: &str, errs: &mut Vec<FieldError>) {
    let ty = string(m, "type");
    let type_must_be = |errs: &mut Vec<FieldError>, want: &str, detail: &str| {
        if ty != want {
            errs.push(if ty.is_empty() {
                FieldError::required(&child(path, "type"), detail)
            } else {
                FieldError::invalid(&child(path, "type"), ty, detail)
            });
        }
    };
    let map_type = m.get("x-kubernetes-map-type").filter(|v| !v.is_null());
    if map_type.is_some() {
        type_must_be(
            errs,
            "object",
            "must be object if x-kubernetes-map-type is specified",
        );
    }
    if let Some(mt) = map_type
        && !matches!(mt.as_str(), Some("atomic" | "granular"))
    {
        errs.push(FieldError::not_supported(
            &child(path, "x-kubernetes-map-type"),
            bad(mt),
            &["atomic", "granular"],
        ));
    }

    let list_type_value = m.get("x-kubernetes-list-type").filter(|v| !v.is_null());
    let list_type = list_type_value.map(|v| v.as_str().unwrap_or(""));
    let items = object(m, "items");
    if list_type.is_some() && ty != "array" {
        type_must_be(
            errs,
            "array",
            "must be array if x-kubernetes-list-type is specified",
        );
    } else if list_type == Some("set")
        && let Some(items) = items
    {
        const ATOMIC: &str = "must be atomic as item of a list with x-kubernetes-list-type=set";
        let item_list_type = items.get("x-kubernetes-list-type").filter(|v| !v.is_null());
        match string(items, "type") {
            "array" => {
                if let Some(lt) = item_list_type
                    && lt.as_str() != Some("atomic")
                {
                    errs.push(FieldError::invalid_value(
                        &child(&child(path, "items"), "x-kubernetes-list-type"),
                        bad(lt),
                        ATOMIC,
                    ));
                }
            }
            // Kubernetes prints the items' list type here, usually absent.
            "object" if string(items, "x-kubernetes-map-type") != "atomic" => {
                errs.push(FieldError::invalid_value(
                    &child(&child(path, "items"), "x-kubernetes-map-type"),
                    item_list_type.map_or(BadValue::Null, bad),
                    ATOMIC,
                ));
            }
            _ => {}
        }
    }
    if let Some(lt) = list_type_value
        && !matches!(lt.as_str(), Some("atomic" | "set" | "map"))
    {
        errs.push(FieldError::not_supported(
            &child(path, "x-kubernetes-list-type"),
            bad(lt),
            &["atomic", "set", "map"],
        ));
    }

    let keys: Vec<&str> = array(m, "x-kubernetes-list-map-keys")
        .iter()
        .filter_map(Value::as_str)
        .collect();
    let keys_value = || {
        BadValue::Other(
            m.get("x-kubernetes-list-map-keys")
                .cloned()
                .unwrap_or_default(),
        )
    };
    let keys_detail = "must be map if x-kubernetes-list-map-keys is non-empty";
    if non_empty(m, "x-kubernetes-list-map-keys") {
        match list_type_value {
            None => errs.push(FieldError::required(
                &child(path, "x-kubernetes-list-type"),
                keys_detail,
            )),
            Some(lt) if list_type != Some("map") => errs.push(FieldError::invalid_value(
                &child(path, "x-kubernetes-list-type"),
                bad(lt),
                keys_detail,
            )),
            _ => {}
        }
    }

    if list_type == Some("map") {
        if !non_empty(m, "x-kubernetes-list-map-keys") {
            errs.push(FieldError::required(
                &child(path, "x-kubernetes-list-map-keys"),
                "must not be empty if x-kubernetes-list-type is map",
            ));
        }
        match m.get("items") {
            None | Some(Value::Null) => errs.push(FieldError::required(
                &child(path, "items"),
                "must have a schema if x-kubernetes-list-type is map",
            )),
            Some(v @ Value::Array(_)) => errs.push(FieldError::invalid_value(
                &child(path, "items"),
                bad(v),
                "must only have a single schema if x-kubernetes-list-type is map",
            )),
            _ => {}
        }
        if let Some(items) = items {
            let item_type = string(items, "type");
            let ipath = child(path, "items");
            if item_type != "object" {
                errs.push(FieldError::invalid(
                    &child(&ipath, "type"),
                    item_type,
                    "must be object if parent array's x-kubernetes-list-type is map",
                ));
            } else {
                let item_props = object(items, "properties");
                let mut seen = Vec::new();
                for k in &keys {
                    match item_props
                        .and_then(|p| p.get(*k))
                        .and_then(Value::as_object)
                    {
                        Some(p) if matches!(string(p, "type"), "array" | "object") => {
                            // Kubernetes prints the items' type here, not the key's.
                            errs.push(FieldError::invalid(
                                &child(&key(&child(&ipath, "properties"), k), "type"),
                                item_type,
                                "must be a scalar type if parent array's x-kubernetes-list-type is map",
                            ));
                        }
                        Some(_) => {}
                        None => errs.push(FieldError::invalid_value(
                            &child(path, "x-kubernetes-list-map-keys"),
                            keys_value(),
                            "entries must all be names of item properties",
                        )),
                    }
                    if seen.contains(k) {
                        errs.push(FieldError::invalid_value(
                            &child(path, "x-kubernetes-list-map-keys"),
                            keys_value(),
                            "must not contain duplicate entries",
                        ));
                    }
                    seen.push(*k);
                }
            }
        }
    }

    // validateMapListKeysMapSet
    if let Some(items) = items
        && let Some(lt @ ("set" | "map")) = list_type
    {
        let ipath = child(path, "items");
        if flag(items, "nullable") {
            errs.push(FieldError::forbidden(
                &child(&ipath, "nullable"),
                &format!("cannot be nullable when x-kubernetes-list-type is {lt}"),
            ));
        }
        if lt == "map" {
            let required: Vec<&str> = array(items, "required")
                .iter()
                .filter_map(Value::as_str)
                .collect();
            let item_props = object(items, "properties");
            for k in &keys {
                let Some(p) = item_props
                    .and_then(|p| p.get(*k))
                    .and_then(Value::as_object)
                else {
                    continue;
                };
                let kpath = key(&child(&ipath, "properties"), k);
                if !required.contains(k) && !present(p, "default") {
                    errs.push(FieldError::required(
                        &child(&kpath, "default"),
                        "this property is in x-kubernetes-list-map-keys, so it must have a default or be a required property",
                    ));
                }
                if flag(p, "nullable") {
                    errs.push(FieldError::forbidden(
                        &child(&kpath, "nullable"),
                        "this property is in x-kubernetes-list-map-keys, so it cannot be nullable",
                    ));
                }
            }
        }
    }
}

/// The examples of this file's documentation, run as tests: the module is private to the
/// crate, so rustdoc does not run them.
#[cfg(test)]
mod examples {
    #[test]
    fn check() {
        use crate::apiextensions::schema::check;
        use serde_json::json;

        let errs = check(
            &json!({"type": "object", "properties": {"spec": {"properties": {}}}}),
            "spec.validation.openAPIV3Schema",
            false,
        );
        assert_eq!(
            errs[0].to_string(),
            "spec.validation.openAPIV3Schema.properties[spec].type: \
            Required value: must not be empty for specified object fields"
        );
    }
}
