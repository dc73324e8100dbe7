//! Custom resources end to end in process: a definition created over HTTP is established
//! and served without a restart; its objects are pruned, defaulted, validated by its
//! schema, listed with its printer columns, kept in their status subresource, stored as
//! CBOR; deleting the definition removes its objects and stops serving it.

mod support;

use std::time::Duration;

use conneg_apiserver::server::openapi::OpenApiInfo;
use conneg_apiserver::server::{AppState, ServerBuilder, ServerOptions, router};
use http::{Method, StatusCode};
use serde_json::{Value, json};
use support::{call, memory_storage};

const CRDS: &str = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions";
const CRONTABS: &str = "/apis/stable.example.com/v1/namespaces/default/crontabs";
const JSON: &str = "application/json";

fn crontab_crd() -> Value {
    json!({
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "crontabs.stable.example.com"},
        "spec": {
            "group": "stable.example.com",
            "scope": "Namespaced",
            "names": {"plural": "crontabs", "singular": "crontab", "kind": "CronTab", "shortNames": ["ct"]},
            "versions": [{
                "name": "v1", "served": true, "storage": true,
                "subresources": {"status": {}},
                "additionalPrinterColumns": [
                    {"name": "Spec", "type": "string", "jsonPath": ".spec.cronSpec"},
                    {"name": "Replicas", "type": "integer", "jsonPath": ".spec.replicas"}
                ],
                "schema": {"openAPIV3Schema": {
                    "type": "object",
                    "properties": {
                        "spec": {
                            "type": "object",
                            "x-kubernetes-validations": [{"rule": "self.replicas <= 10", "message": "at most 10 replicas"}],
                            "properties": {
                                "cronSpec": {"type": "string", "pattern": "^(\\d+|\\*)(/\\d+)?(\\s+(\\d+|\\*)(/\\d+)?){4}$"},
                                "image": {"type": "string"},
                                "replicas": {"type": "integer", "default": 1, "minimum": 0}
                            }
                        },
                        "status": {"type": "object", "properties": {"ready": {"type": "integer"}}}
                    }
                }}
            }]
        }
    })
}

async fn server() -> (AppState, axum::Router) {
    let state = ServerBuilder::new(OpenApiInfo {
        title: "test",
        package: "io.example.test",
    })
    .build(memory_storage("example.com"), ServerOptions::default());
    state.bootstrap().await.unwrap();
    let app = router(state.clone());
    (state, app)
}

/// Polls `uri` until it answers `want`.
async fn until(app: &axum::Router, uri: &str, want: StatusCode) -> Value {
    for _ in 0..100 {
        let (code, body) = call(app, Method::GET, uri, JSON, Value::Null).await;
        if code == want {
            return body;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("{uri} never answered {want}");
}

#[tokio::test]
async fn a_definition_is_served_validated_and_removed_at_run_time() {
    let (_state, app) = server().await;
    let (code, _) = call(&app, Method::GET, CRONTABS, JSON, Value::Null).await;
    assert_eq!(code, StatusCode::NOT_FOUND);

    let (code, created) = call(&app, Method::POST, CRDS, JSON, crontab_crd()).await;
    assert_eq!(code, StatusCode::CREATED, "{created}");
    assert_eq!(created["status"]["storedVersions"], json!(["v1"]));
    let crd = until(
        &app,
        &format!("{CRDS}/crontabs.stable.example.com"),
        StatusCode::OK,
    )
    .await;
    assert_eq!(crd["metadata"]["name"], "crontabs.stable.example.com");
    until(&app, CRONTABS, StatusCode::OK).await;
    let established = until(
        &app,
        &format!("{CRDS}/crontabs.stable.example.com"),
        StatusCode::OK,
    )
    .await;
    let conditions = established["status"]["conditions"].as_array().unwrap();
    assert!(
        conditions
            .iter()
            .any(|c| c["type"] == "Established" && c["status"] == "True"),
        "{established}"
    );
    assert_eq!(established["status"]["acceptedNames"]["kind"], "CronTab");

    // Create: unknown fields pruned (a warning under the default Warn), defaults applied,
    // status dropped (status subresource).
    let cr = json!({"apiVersion": "stable.example.com/v1", "kind": "CronTab",
        "metadata": {"name": "a"}, "spec": {"cronSpec": "* * * * */5", "image": "x", "bogus": 1},
        "status": {"ready": 3}});
    let (code, a) = call(&app, Method::POST, CRONTABS, JSON, cr.clone()).await;
    assert_eq!(code, StatusCode::CREATED, "{a}");
    assert_eq!(
        a["spec"],
        json!({"cronSpec": "* * * * */5", "image": "x", "replicas": 1})
    );
    assert!(a.get("status").is_none(), "{a}");
    assert_eq!(a["metadata"]["generation"], 1);

    // Strict field validation refuses the unknown field.
    let (code, e) = call(
        &app,
        Method::POST,
        &format!("{CRONTABS}?fieldValidation=Strict"),
        JSON,
        json!({"apiVersion": "stable.example.com/v1", "kind": "CronTab", "metadata": {"name": "s"}, "spec": {"bogus": 1}}),
    )
    .await;
    assert_eq!(code, StatusCode::BAD_REQUEST, "{e}");
    assert_eq!(
        e["message"],
        r#"CronTab in version "v1" cannot be handled as a CronTab: strict decoding error: unknown field "spec.bogus""#
    );

    // The schema's value validations and CEL rules.
    let (code, e) = call(
        &app,
        Method::POST,
        CRONTABS,
        JSON,
        json!({"apiVersion": "stable.example.com/v1", "kind": "CronTab", "metadata": {"name": "b"},
               "spec": {"cronSpec": "nope", "replicas": 11}}),
    )
    .await;
    assert_eq!(code, StatusCode::UNPROCESSABLE_ENTITY, "{e}");
    let msg = e["message"].as_str().unwrap();
    assert!(
        msg.starts_with(r#"CronTab.stable.example.com "b" is invalid"#),
        "{msg}"
    );
    assert!(msg.contains("spec.cronSpec"), "{msg}");
    assert!(msg.contains("at most 10 replicas"), "{msg}");

    // The status subresource writes the status alone.
    let (code, s) = call(
        &app,
        Method::PATCH,
        &format!("{CRONTABS}/a/status"),
        "application/merge-patch+json",
        json!({"status": {"ready": 2}, "spec": {"image": "changed"}}),
    )
    .await;
    assert_eq!(code, StatusCode::OK, "{s}");
    assert_eq!(
        (s["status"]["ready"].clone(), s["spec"]["image"].clone()),
        (json!(2), json!("x"))
    );

    // A spec change moves the generation on.
    let (code, p) = call(
        &app,
        Method::PATCH,
        &format!("{CRONTABS}/a"),
        "application/merge-patch+json",
        json!({"spec": {"replicas": 3}}),
    )
    .await;
    assert_eq!(code, StatusCode::OK, "{p}");
    assert_eq!(
        (
            p["metadata"]["generation"].clone(),
            p["spec"]["replicas"].clone()
        ),
        (json!(2), json!(3))
    );

    // The list kind, and a Table with the printer columns.
    let (code, list) = call(&app, Method::GET, CRONTABS, JSON, Value::Null).await;
    assert_eq!(code, StatusCode::OK);
    assert_eq!(list["kind"], "CronTabList");
    assert_eq!(list["items"].as_array().unwrap().len(), 1);
    let table = {
        use tower::ServiceExt;
        let req = http::Request::get(CRONTABS)
            .header("accept", "application/json;as=Table;v=v1;g=meta.k8s.io")
            .body(axum::body::Body::empty())
            .unwrap();
        let resp = app.clone().oneshot(req).await.unwrap();
        let bytes = axum::body::to_bytes(resp.into_body(), 1 << 20)
            .await
            .unwrap();
        serde_json::from_slice::<Value>(&bytes).unwrap()
    };
    let names: Vec<&str> = table["columnDefinitions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["Name", "Spec", "Replicas"]);
    assert_eq!(table["rows"][0]["cells"], json!(["a", "* * * * */5", 3]));

    // Deleting the definition removes its objects and stops serving it.
    let (code, _) = call(
        &app,
        Method::DELETE,
        &format!("{CRDS}/crontabs.stable.example.com"),
        JSON,
        Value::Null,
    )
    .await;
    assert_eq!(code, StatusCode::OK);
    until(
        &app,
        &format!("{CRDS}/crontabs.stable.example.com"),
        StatusCode::NOT_FOUND,
    )
    .await;
    until(&app, CRONTABS, StatusCode::NOT_FOUND).await;
}

#[tokio::test]
async fn a_definition_with_a_non_structural_schema_is_refused() {
    let (_state, app) = server().await;
    let mut crd = crontab_crd();
    crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]
        .as_object_mut()
        .unwrap()
        .remove("type");
    let (code, e) = call(&app, Method::POST, CRDS, JSON, crd).await;
    assert_eq!(code, StatusCode::UNPROCESSABLE_ENTITY, "{e}");
    let msg = e["message"].as_str().unwrap();
    assert!(
        msg.contains("spec.validation.openAPIV3Schema.properties[spec].type: Required value: must not be empty for specified object fields"),
        "{msg}"
    );
}
