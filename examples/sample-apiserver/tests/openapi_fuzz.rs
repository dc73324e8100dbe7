//! A schema fuzzer over the published OpenAPI, in-process: for every group-version in
//! `/openapi/v3` and every operation of its document, requests generated from what the
//! document says (path and query parameters by their declared types, bodies from the request
//! schema, often broken: wrong types, values outside enums, missing required fields, bad
//! names, odd booleans), sent to the server. Every answer must be a code the operation lists
//! (its errors included), and never a server error. The generator is seeded, so a failure
//! names the seed and request that reproduce it.
//!
//! What schemathesis does against a live server, made small enough for the suite: no
//! shrinking, a fixed number of cases per operation.

use axum::body::Body;
use conneg_apiserver::server::{ServerOptions, router};
use conneg_apiserver::storage::codec::{StorageCodec, StorageMediaType};
use conneg_apiserver::storage::keys::Keys;
use conneg_apiserver::storage::{MemoryStore, OpenedStorage, Store};
use http::{Method, StatusCode};
use serde_json::{Map, Value, json};
use tower::ServiceExt;

/// Requests per operation.
const CASES: usize = 24;
/// How deep a generated body nests.
const MAX_DEPTH: usize = 6;

/// xorshift64*: small, seeded, good enough to pick cases.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
    /// True one time in `n`.
    fn one_in(&mut self, n: usize) -> bool {
        self.below(n) == 0
    }
    fn pick<'a, T>(&mut self, xs: &'a [T]) -> &'a T {
        &xs[self.below(xs.len())]
    }
}

/// Names a path segment may hold: valid, taken, invalid, too long, escaped.
fn name(rng: &mut Rng) -> String {
    match rng.below(8) {
        0 => "Bad_Name".into(),
        1 => "n".repeat(254),
        2 => "a%20b".into(),
        3 => format!("x{}", rng.below(1000)),
        4 => "default".into(),
        _ => rng.pick(&["a", "b", "c"]).to_string(),
    }
}

/// A query value for a parameter of type `ty`.
fn query_value(rng: &mut Rng, param: &str, ty: &str) -> String {
    let odd = ["", "null", "%00", "x%20y", "-1", "1e400", "fal%C5%BFe"];
    if rng.one_in(5) {
        return rng.pick(&odd).to_string();
    }
    match (param, ty) {
        ("dryRun", _) => rng.pick(&["All", "None"]).to_string(),
        ("fieldValidation", _) => rng.pick(&["Strict", "Warn", "Ignore", "Loose"]).to_string(),
        ("resourceVersionMatch", _) => rng.pick(&["Exact", "NotOlderThan", "Any"]).to_string(),
        ("labelSelector" | "fieldSelector", _) => rng
            .pick(&[
                "a=b",
                "metadata.name=a",
                "a%20in%20(b%2Cc)",
                "!!",
                "spec.x=1",
            ])
            .to_string(),
        (_, "boolean") => rng
            .pick(&["true", "false", "1", "0", "FALSE", "maybe"])
            .to_string(),
        (_, "integer") => rng
            .pick(&["0", "1", "5", "-5", "99999999999999999999", "abc"])
            .to_string(),
        _ => rng.pick(&["0", "1", "a", "abc-1"]).to_string(),
    }
}

/// `s` with its `$ref`s and `allOf`s resolved one level, against `schemas`.
fn resolve(schemas: &Map<String, Value>, s: &Value) -> Map<String, Value> {
    let mut out = Map::new();
    if let Some(r) = s.get("$ref").and_then(Value::as_str) {
        let target = r.rsplit('/').next().unwrap_or(r);
        if let Some(t) = schemas.get(target) {
            out = resolve(schemas, t);
        }
    }
    for part in s
        .get("allOf")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        out.extend(resolve(schemas, part));
    }
    if let Some(m) = s.as_object() {
        for (k, v) in m {
            if k == "properties"
                && let (Some(Value::Object(p)), Value::Object(more)) = (out.get_mut(k), v)
            {
                p.extend(more.clone());
                continue;
            }
            if k != "$ref" && k != "allOf" {
                out.insert(k.clone(), v.clone());
            }
        }
    }
    out
}

/// A value for the schema `s`: mostly what it describes, sometimes not.
fn value(rng: &mut Rng, schemas: &Map<String, Value>, s: &Value, depth: usize) -> Value {
    let s = resolve(schemas, s);
    if rng.one_in(25) {
        return rng
            .pick(&[
                json!(null),
                json!(7),
                json!("x"),
                json!([]),
                json!({}),
                json!(true),
            ])
            .clone();
    }
    if let Some(Value::Array(values)) = s.get("enum")
        && !rng.one_in(4)
    {
        return rng.pick(values).clone();
    }
    match s.get("type").and_then(Value::as_str) {
        Some("string") => {
            json!(rng.pick(&["", "a", "abc-1", "Bad_Value", "\u{0}", &"z".repeat(300)]))
        }
        Some("integer") => json!(rng.pick(&[0i64, 1, -1, 3, i64::MAX])),
        Some("number") => json!(rng.pick(&[0.5, -1.0, 1e300])),
        Some("boolean") => json!(rng.one_in(2)),
        Some("array") if depth < MAX_DEPTH => {
            let items = s.get("items").cloned().unwrap_or(json!({}));
            (0..rng.below(3))
                .map(|_| value(rng, schemas, &items, depth + 1))
                .collect()
        }
        Some("array") => json!([]),
        _ if depth < MAX_DEPTH => {
            let mut out = Map::new();
            let required: Vec<&str> = s
                .get("required")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter_map(Value::as_str)
                .collect();
            for (k, p) in s
                .get("properties")
                .and_then(Value::as_object)
                .into_iter()
                .flatten()
            {
                let wanted = if required.contains(&k.as_str()) {
                    !rng.one_in(8)
                } else {
                    rng.one_in(2)
                };
                if wanted {
                    out.insert(k.clone(), value(rng, schemas, p, depth + 1));
                }
            }
            if let Some(add) = s.get("additionalProperties").filter(|a| a.is_object()) {
                for i in 0..rng.below(3) {
                    out.insert(format!("k{i}"), value(rng, schemas, add, depth + 1));
                }
            }
            Value::Object(out)
        }
        _ => json!({}),
    }
}

/// An object of the kind the operation names, from `schema`: its `apiVersion` and `kind`
/// mostly right, its name mostly the path's.
fn object(
    rng: &mut Rng,
    schemas: &Map<String, Value>,
    schema: &Value,
    op: &Value,
    name: &str,
) -> Value {
    let mut v = value(rng, schemas, schema, 0);
    let gvk = &op["x-kubernetes-group-version-kind"];
    if let Value::Object(m) = &mut v
        && !rng.one_in(10)
    {
        let api_version = match gvk["group"].as_str() {
            Some("") | None => gvk["version"].as_str().unwrap_or_default().to_owned(),
            Some(g) => format!("{g}/{}", gvk["version"].as_str().unwrap_or_default()),
        };
        m.insert("apiVersion".into(), json!(api_version));
        m.insert("kind".into(), gvk["kind"].clone());
        if !rng.one_in(5) {
            m.insert("metadata".into(), json!({"name": name}));
        }
    }
    v
}

/// A patch of the type `media_type`.
fn patch(rng: &mut Rng, media_type: &str, obj: Value) -> Value {
    if media_type == "application/json-patch+json" {
        let op = rng.pick(&["add", "replace", "remove", "test", "move", "bogus"]);
        let path = rng.pick(&["/spec", "/metadata/labels", "/spec/x", "", "/a~2"]);
        return json!([{"op": op, "path": path, "value": obj.get("spec").cloned().unwrap_or(json!(1))}]);
    }
    obj
}

struct Case {
    method: Method,
    uri: String,
    content_type: Option<String>,
    body: Option<Value>,
}

/// One request for `op` (the `method` of the path template `template`).
fn case(
    rng: &mut Rng,
    schemas: &Map<String, Value>,
    (template, method, item, op): (&str, &str, &Value, &Value),
) -> Case {
    let object_name = name(rng);
    let mut path = template.to_owned();
    let mut query = Vec::new();
    let params = item["parameters"]
        .as_array()
        .into_iter()
        .chain(op["parameters"].as_array())
        .flatten();
    for p in params {
        let pname = p["name"].as_str().unwrap_or_default();
        match p["in"].as_str() {
            Some("path") => {
                let v = if pname == "name" {
                    object_name.clone()
                } else if rng.one_in(6) {
                    name(rng)
                } else {
                    "default".into()
                };
                path = path.replace(&format!("{{{pname}}}"), &v);
            }
            // A watch does not end; the generator asks for lists.
            Some("query") if pname != "watch" && rng.one_in(3) => {
                let ty = p["schema"]["type"].as_str().unwrap_or("string");
                query.push(format!("{pname}={}", query_value(rng, pname, ty)));
            }
            _ => {}
        }
    }
    let mut uri = path;
    if !query.is_empty() {
        uri = format!("{uri}?{}", query.join("&"));
    }
    let (mut content_type, mut body) = (None, None);
    if let Some(content) = op["requestBody"]["content"].as_object() {
        let types: Vec<&String> = content.keys().collect();
        let declared = rng.pick(&types).as_str();
        let ct = match declared {
            "*/*" => *rng.pick(&["application/json", "application/yaml", "text/plain"]),
            t => t,
        };
        let schema = content[declared]["schema"].clone();
        // A patch's schema says nothing of its shape; the object's does.
        let object_schema = match op["responses"]["200"]["content"]["application/json"]["schema"] {
            ref s @ Value::Object(_) if method == "patch" => s.clone(),
            _ => schema,
        };
        let obj = object(rng, schemas, &object_schema, op, &object_name);
        body = Some(patch(rng, ct, obj));
        content_type = Some(ct.to_owned());
    }
    Case {
        method: method.to_uppercase().parse().unwrap(),
        uri,
        content_type,
        body,
    }
}

fn app() -> axum::Router {
    let storage = OpenedStorage {
        store: Store::Memory(MemoryStore::new()),
        codec: StorageCodec::new(StorageMediaType::Cbor),
        keys: Keys::for_group(sample_apiserver::api::GROUP),
    };
    router(sample_apiserver::server().build(storage, ServerOptions::default()))
}

/// The status, and the body when it is JSON (an error's `Status`).
async fn send(app: &axum::Router, c: &Case) -> (StatusCode, Value) {
    let mut req = http::Request::builder()
        .method(c.method.clone())
        .uri(&c.uri)
        .header("accept", "application/json");
    if let Some(ct) = &c.content_type {
        req = req.header("content-type", ct);
    }
    let body = c
        .body
        .as_ref()
        .map_or_else(Body::empty, |b| Body::from(b.to_string()));
    let resp = app.clone().oneshot(req.body(body).unwrap()).await.unwrap();
    let code = resp.status();
    let bytes = axum::body::to_bytes(resp.into_body(), 4 << 20)
        .await
        .unwrap_or_default();
    (code, serde_json::from_slice(&bytes).unwrap_or(Value::Null))
}

async fn get(app: &axum::Router, uri: &str) -> Value {
    let c = Case {
        method: Method::GET,
        uri: uri.to_owned(),
        content_type: None,
        body: None,
    };
    let (code, v) = send(app, &c).await;
    assert_eq!(code, StatusCode::OK, "{uri}");
    v
}

#[tokio::test]
async fn every_published_operation_answers_only_what_it_lists() {
    let app = app();
    let index = get(&app, "/openapi/v3").await;
    let docs: Vec<String> = index["paths"]
        .as_object()
        .unwrap()
        .values()
        .map(|p| p["serverRelativeURL"].as_str().unwrap().to_owned())
        .collect();
    assert!(docs.len() >= 3, "{index}");
    let seed = 0x5eed_0000_0000_0001_u64;
    let mut rng = Rng(seed);
    let (mut sent, mut failures) = (0, Vec::new());
    for url in docs {
        let doc = get(&app, &url).await;
        let schemas = doc["components"]["schemas"].as_object().unwrap().clone();
        for (template, item) in doc["paths"].as_object().unwrap() {
            for (method, op) in item.as_object().unwrap() {
                if method == "parameters" {
                    continue;
                }
                for _ in 0..CASES {
                    let c = case(&mut rng, &schemas, (template, method, item, op));
                    let (code, answer) = send(&app, &c).await;
                    sent += 1;
                    let listed = op["responses"].get(code.as_str()).is_some();
                    if code.is_server_error() || !listed {
                        failures.push(format!(
                            "{code} for {} {} ({:?}) {}\n  -> {answer}",
                            c.method,
                            c.uri,
                            c.content_type,
                            c.body.map(|b| b.to_string()).unwrap_or_default()
                        ));
                    }
                }
            }
        }
    }
    assert!(sent > 500, "{sent} requests");
    assert!(
        failures.is_empty(),
        "seed {seed:#x}: {} of {sent} answers not listed or server errors:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
