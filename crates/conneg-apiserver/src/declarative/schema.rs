//! The published form of a declaration: schemars' schema of a type and of every type it uses,
//! shaped as Kubernetes publishes schemas (named models, `allOf` around a `$ref` with
//! siblings, the enum KEP's descriptions, no `nullable` for optional fields).

use schemars::generate::SchemaSettings;
use schemars::transform::{RemoveRefSiblings, ReplaceBoolSchemas};
use serde_json::{Map, Value};

/// The schemas of `T` and of the types it uses, each under `name(<type name>)`, with their
/// `$ref`s pointing at those names in `#/components/schemas/`.
///
/// `T`'s own schema is under `name(T::schema_name())`.
pub fn published<T: schemars::JsonSchema>(name: impl Fn(&str) -> String) -> Map<String, Value> {
    let mut generator = SchemaSettings::openapi3()
        .with(|s| {
            s.meta_schema = None;
            let mut bools = ReplaceBoolSchemas::default();
            bools.skip_additional_properties = true;
            s.transforms = vec![Box::new(bools), Box::new(RemoveRefSiblings::default())];
        })
        .into_generator();
    let root = generator.root_schema_for::<T>();
    let mut out = Map::new();
    let mut defs = generator.take_definitions(true);
    defs.insert(T::schema_name().into_owned(), root.to_value());
    for (k, mut v) in defs {
        shape(&mut v, &name);
        out.insert(name(&k), v);
    }
    out
}

/// Kubernetes' shape, in place, for the schema `v` and every schema in it.
fn shape(v: &mut Value, name: &impl Fn(&str) -> String) {
    let Value::Object(m) = v else {
        return;
    };
    for k in ["title", "$schema", "components", "$defs", "definitions"] {
        m.remove(k);
    }
    if m.get("default").is_some_and(Value::is_null) {
        m.remove("default");
    }
    not_nullable(m);
    if let Some(Value::String(r)) = m.get_mut("$ref")
        && let Some(model) = r.strip_prefix("#/components/schemas/")
    {
        *r = format!("#/components/schemas/{}", name(model));
    }
    describe_enum(m);
    for (k, child) in m.iter_mut() {
        match (k.as_str(), child) {
            ("properties" | "patternProperties", Value::Object(props)) => {
                props.values_mut().for_each(|p| shape(p, name));
            }
            ("items" | "additionalProperties" | "not", c @ Value::Object(_)) => shape(c, name),
            ("allOf" | "anyOf" | "oneOf", Value::Array(all)) => {
                all.iter_mut().for_each(|p| shape(p, name));
            }
            _ => {}
        }
    }
}

/// An `Option` field is optional, not nullable, in Kubernetes' schemas: `type: [T, "null"]`
/// becomes `type: T`, and `anyOf: [S, {type: null}]` becomes `S` (under `allOf` when it is a
/// `$ref` with siblings).
fn not_nullable(m: &mut Map<String, Value>) {
    if let Some(Value::Array(types)) = m.get_mut("type") {
        types.retain(|t| t != "null");
        if types.len() == 1 {
            let t = types.remove(0);
            m.insert("type".into(), t);
        }
    }
    let Some(Value::Array(any)) = m.get_mut("anyOf") else {
        return;
    };
    any.retain(|s| s.get("type").is_none_or(|t| t != "null"));
    if any.len() != 1 {
        return;
    }
    let Some(Value::Object(only)) = any.pop() else {
        return;
    };
    m.remove("anyOf");
    if only.contains_key("$ref") {
        m.insert("allOf".into(), Value::Array(vec![Value::Object(only)]));
    } else {
        for (k, v) in only {
            m.entry(k).or_insert(v);
        }
    }
}

/// The enum KEP: a string enum's description ends with its values.
pub(crate) fn describe_enum(m: &mut Map<String, Value>) {
    let Some(values) = m.get("enum").and_then(Value::as_array) else {
        return;
    };
    let mut values: Vec<&str> = values.iter().filter_map(Value::as_str).collect();
    values.sort_unstable();
    let list: Vec<String> = values.iter().map(|v| format!(" - `\"{v}\"`")).collect();
    let sorted: Vec<Value> = values.iter().map(|v| Value::from(*v)).collect();
    let description = match m.get("description").and_then(Value::as_str) {
        Some(d) if !d.contains("Possible enum values") => {
            format!("{d}\n\nPossible enum values:\n{}", list.join("\n"))
        }
        Some(d) => d.to_owned(),
        None => format!("Possible enum values:\n{}", list.join("\n")),
    };
    m.insert("description".into(), description.into());
    m.insert("enum".into(), sorted.into());
}
