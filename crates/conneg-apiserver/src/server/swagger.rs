//! `/openapi/v2`: the OpenAPI v3 documents of every served group-version, written again as
//! one Swagger 2.0 document, as Kubernetes' v2 document carries its operations and its
//! definitions. Made from the v3 documents, so the two never say different things:
//!
//! * a parameter's `schema` becomes the parameter's own `type` (and `uniqueItems`);
//! * a `requestBody` becomes the `body` parameter, its media types the operation's `consumes`;
//! * a response's `content` becomes its `schema`, the media types of all responses the
//!   operation's `produces`;
//! * `#/components/schemas/` references become `#/definitions/`.

use serde_json::{Map, Value, json};

/// The Swagger 2.0 document titled `title` of the v3 documents `docs`.
pub(crate) fn document(title: &str, docs: impl IntoIterator<Item = Value>) -> Value {
    let mut paths = Map::new();
    let mut definitions = Map::new();
    for mut doc in docs {
        if let Some(Value::Object(p)) = doc.get_mut("paths").map(Value::take) {
            for (path, item) in p {
                paths.insert(path, path_item(item));
            }
        }
        if let Some(Value::Object(s)) = doc.pointer_mut("/components/schemas").map(Value::take) {
            definitions.extend(s);
        }
    }
    let mut doc = json!({
        "swagger": "2.0",
        "info": {"title": title, "version": "0.1"},
        "paths": paths,
        "definitions": definitions,
    });
    to_definitions(&mut doc);
    doc
}

/// A path item: its shared parameters and its operations.
fn path_item(item: Value) -> Value {
    let Value::Object(item) = item else {
        return item;
    };
    item.into_iter()
        .map(|(k, v)| {
            let v = if k == "parameters" {
                parameters(v)
            } else {
                operation(v)
            };
            (k, v)
        })
        .collect::<Map<_, _>>()
        .into()
}

/// Query and path parameters, their `schema` inlined.
fn parameters(ps: Value) -> Value {
    let Value::Array(ps) = ps else {
        return ps;
    };
    ps.into_iter().map(parameter).collect()
}

fn parameter(p: Value) -> Value {
    let Value::Object(mut p) = p else {
        return p;
    };
    if let Some(Value::Object(schema)) = p.remove("schema") {
        p.extend(schema);
    }
    Value::Object(p)
}

/// An operation: its body as the `body` parameter, its responses' schemas, `consumes` and
/// `produces`.
fn operation(op: Value) -> Value {
    let Value::Object(mut op) = op else {
        return op;
    };
    let mut params = match op.remove("parameters") {
        Some(Value::Array(ps)) => ps.into_iter().map(parameter).collect(),
        _ => Vec::new(),
    };
    if let Some(body) = op.remove("requestBody") {
        let (consumes, schema) = media(&body["content"]);
        op.insert("consumes".into(), consumes.into());
        params.push(json!({
            "name": "body",
            "in": "body",
            "required": body["required"].as_bool().unwrap_or(false),
            "schema": schema,
        }));
    }
    op.insert("parameters".into(), params.into());
    let mut produces: Vec<Value> = Vec::new();
    if let Some(Value::Object(responses)) = op.remove("responses") {
        let responses: Map<String, Value> = responses
            .into_iter()
            .map(|(code, r)| {
                let (types, schema) = media(&r["content"]);
                for t in types {
                    if !produces.contains(&t) {
                        produces.push(t);
                    }
                }
                let mut out = json!({"description": r["description"]});
                if !schema.is_null() {
                    out["schema"] = schema;
                }
                (code, out)
            })
            .collect();
        op.insert("responses".into(), responses.into());
    }
    if !produces.is_empty() {
        op.insert("produces".into(), produces.into());
    }
    Value::Object(op)
}

/// The media types of a v3 `content` and the schema of the first (v2 has one per operation).
fn media(content: &Value) -> (Vec<Value>, Value) {
    let Some(content) = content.as_object() else {
        return (Vec::new(), Value::Null);
    };
    let types = content.keys().map(|k| Value::from(k.as_str())).collect();
    let schema = content
        .values()
        .find_map(|m| m.get("schema"))
        .cloned()
        .unwrap_or(Value::Null);
    (types, schema)
}

/// Every `$ref` to `#/components/schemas/X` made `#/definitions/X`.
fn to_definitions(v: &mut Value) {
    match v {
        Value::Object(m) => {
            for (k, child) in m.iter_mut() {
                match child {
                    Value::String(r) if k == "$ref" => {
                        if let Some(name) = r.strip_prefix("#/components/schemas/") {
                            *r = format!("#/definitions/{name}");
                        }
                    }
                    _ => to_definitions(child),
                }
            }
        }
        Value::Array(a) => a.iter_mut().for_each(to_definitions),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn v3_operations_become_swagger_operations() {
        let status = json!({"$ref": "#/components/schemas/Status"});
        let v3 = json!({
            "paths": {"/apis/g/v1/things": {
                "parameters": [{"name": "pretty", "in": "query", "schema": {"type": "string", "uniqueItems": true}}],
                "post": {
                    "operationId": "createThing",
                    "parameters": [{"name": "dryRun", "in": "query", "schema": {"type": "string"}}],
                    "requestBody": {"required": true, "content": {"*/*": {"schema": {"$ref": "#/components/schemas/Thing"}}}},
                    "responses": {
                        "201": {"description": "Created", "content": {
                            "application/json": {"schema": {"$ref": "#/components/schemas/Thing"}},
                            "application/cbor": {"schema": {"$ref": "#/components/schemas/Thing"}}}},
                        "422": {"description": "Unprocessable Entity", "content": {"application/json": {"schema": status}}},
                    },
                },
            }},
            "components": {"schemas": {"Thing": {"type": "object", "properties": {
                "meta": {"allOf": [{"$ref": "#/components/schemas/Meta"}]}}}}},
        });
        let v2 = document("T", [v3]);
        assert_eq!(v2["swagger"], "2.0");
        let item = &v2["paths"]["/apis/g/v1/things"];
        assert_eq!(
            item["parameters"][0],
            json!({"name": "pretty", "in": "query", "type": "string", "uniqueItems": true})
        );
        let post = &item["post"];
        assert_eq!(post["consumes"], json!(["*/*"]));
        assert_eq!(
            post["produces"],
            json!(["application/cbor", "application/json"])
        );
        assert_eq!(
            post["parameters"],
            json!([{"name": "dryRun", "in": "query", "type": "string"},
                   {"name": "body", "in": "body", "required": true, "schema": {"$ref": "#/definitions/Thing"}}])
        );
        assert_eq!(
            post["responses"]["201"],
            json!({"description": "Created", "schema": {"$ref": "#/definitions/Thing"}})
        );
        assert_eq!(
            post["responses"]["422"]["schema"],
            json!({"$ref": "#/definitions/Status"})
        );
        assert_eq!(
            v2["definitions"]["Thing"]["properties"]["meta"]["allOf"][0]["$ref"],
            "#/definitions/Meta"
        );
    }
}
