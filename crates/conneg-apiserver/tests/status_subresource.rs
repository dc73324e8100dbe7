//! A kind that declares a status subresource and writes no strategy code for it: the library
//! keeps the status out of writes to the object and everything else out of writes to
//! `/status`, whatever the verb (update, merge patch, apply), as Kubernetes' generic registry
//! does.

mod support;
use support::{call, memory_storage};

use conneg_apiserver::declarative::JsonSchema;
use conneg_apiserver::registry::Strategy;
use conneg_apiserver::server::openapi::OpenApiInfo;
use conneg_apiserver::server::{ServerBuilder, ServerOptions, router};
use http::{Method, StatusCode};
use serde::{Deserialize, Serialize};
use serde_json::json;

#[conneg_apiserver::kind(
    group = "gadgets.example.com",
    version = "v1",
    kind = "Gadget",
    namespaced,
    status
)]
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
struct Gadget {
    #[serde(default)]
    spec: GadgetSpec,
    #[serde(default)]
    status: GadgetStatus,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
struct GadgetSpec {
    #[serde(default)]
    size: i64,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
struct GadgetStatus {
    #[serde(default)]
    ready: bool,
}

/// No prepare_for_update, no prepare_for_status_update.
impl Strategy for Gadget {
    type Stored = Gadget;
}

fn app() -> axum::Router {
    let storage = memory_storage("gadgets.example.com");
    let info = OpenApiInfo {
        title: "Gadgets",
        package: "com.example.gadgets",
    };
    // Not standalone: no namespaces to create first.
    let options = ServerOptions {
        standalone: false,
        ..Default::default()
    };
    router(
        ServerBuilder::new(info)
            .serve::<Gadget>()
            .build(storage, options),
    )
}

const COLLECTION: &str = "/apis/gadgets.example.com/v1/namespaces/default/gadgets";
const OBJECT: &str = "/apis/gadgets.example.com/v1/namespaces/default/gadgets/g";
const STATUS: &str = "/apis/gadgets.example.com/v1/namespaces/default/gadgets/g/status";
const JSON: &str = "application/json";
const MERGE: &str = "application/merge-patch+json";
const APPLY: &str = "application/apply-patch+yaml";

#[tokio::test]
async fn status_changes_only_through_status_and_only_the_status_does() {
    let app = app();
    let (code, created) = call(
        &app,
        Method::POST,
        COLLECTION,
        JSON,
        json!({"apiVersion": "gadgets.example.com/v1", "kind": "Gadget",
               "metadata": {"name": "g"}, "spec": {"size": 1}, "status": {"ready": true}}),
    )
    .await;
    assert_eq!(code, StatusCode::CREATED, "{created}");
    // A create starts from the default status.
    assert_eq!(created["status"]["ready"], false, "{created}");

    // A merge patch of the object: the spec changes, the status does not.
    let (code, patched) = call(
        &app,
        Method::PATCH,
        OBJECT,
        MERGE,
        json!({"spec": {"size": 2}, "status": {"ready": true}}),
    )
    .await;
    assert_eq!(code, StatusCode::OK, "{patched}");
    assert_eq!(patched["spec"]["size"], 2);
    assert_eq!(patched["status"]["ready"], false, "{patched}");
    assert_eq!(patched["metadata"]["generation"], 2);

    // A PUT of the object: the same.
    let mut put = patched.clone();
    put["spec"]["size"] = json!(3);
    put["status"]["ready"] = json!(true);
    let (code, updated) = call(&app, Method::PUT, OBJECT, JSON, put).await;
    assert_eq!(code, StatusCode::OK, "{updated}");
    assert_eq!(updated["spec"]["size"], 3);
    assert_eq!(updated["status"]["ready"], false);

    // An apply of the object: the same.
    let (code, applied) = call(
        &app,
        Method::PATCH,
        &format!("{OBJECT}?fieldManager=a&force=true"),
        APPLY,
        json!({"apiVersion": "gadgets.example.com/v1", "kind": "Gadget",
               "metadata": {"name": "g"}, "spec": {"size": 4}, "status": {"ready": true}}),
    )
    .await;
    assert_eq!(code, StatusCode::OK, "{applied}");
    assert_eq!(applied["spec"]["size"], 4);
    assert_eq!(applied["status"]["ready"], false);

    // Through /status: the status changes, the spec and labels do not, the generation stays.
    let (code, status) = call(
        &app,
        Method::PATCH,
        STATUS,
        MERGE,
        json!({"metadata": {"labels": {"x": "y"}}, "spec": {"size": 9}, "status": {"ready": true}}),
    )
    .await;
    assert_eq!(code, StatusCode::OK, "{status}");
    assert_eq!(status["status"]["ready"], true);
    assert_eq!(status["spec"]["size"], 4);
    assert!(status["metadata"].get("labels").is_none(), "{status}");
    assert_eq!(
        status["metadata"]["generation"],
        applied["metadata"]["generation"]
    );

    // A PUT to /status with a stale resourceVersion is the client's precondition: 409.
    let mut stale = status.clone();
    stale["metadata"]["resourceVersion"] = applied["metadata"]["resourceVersion"].clone();
    stale["status"]["ready"] = json!(false);
    let (code, _) = call(&app, Method::PUT, STATUS, JSON, stale).await;
    assert_eq!(code, StatusCode::CONFLICT);
}
