//! A compiled kind with required fields and an enum, as a new user declares one (no
//! `#[serde(default)]` on `spec` or `sku`): every valid write succeeds (no 500 from the field
//! manager's empty object), and a body the Rust type refuses for its shape is answered as
//! kube-apiserver answers, 422 with one cause per field from the declared schema
//! (`Required value`, `Unsupported value`), whatever the verb; what the schema does not
//! explain stays a 400.

mod support;
use support::{call, memory_storage};

use conneg_apiserver::declarative::JsonSchema;
use conneg_apiserver::registry::Strategy;
use conneg_apiserver::server::openapi::OpenApiInfo;
use conneg_apiserver::server::{ServerBuilder, ServerOptions, router};
use http::{Method, StatusCode};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

#[conneg_apiserver::kind(
    group = "shop.example.com",
    version = "v1",
    kind = "Shelf",
    plural = "shelves",
    namespaced
)]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
struct Shelf {
    spec: ShelfSpec,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
struct ShelfSpec {
    /// Stock keeping unit.
    sku: String,
    /// Where the shelf stands.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    floor: Option<Floor>,
}

/// A floor of the shop.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, JsonSchema)]
enum Floor {
    Ground,
    First,
}

impl Strategy for Shelf {
    type Stored = Shelf;
}

fn app() -> axum::Router {
    let info = OpenApiInfo {
        title: "Shop",
        package: "com.example.shop",
    };
    let options = ServerOptions {
        standalone: false,
        ..Default::default()
    };
    router(
        ServerBuilder::new(info)
            .serve::<Shelf>()
            .build(memory_storage("shop.example.com"), options),
    )
}

const COLLECTION: &str = "/apis/shop.example.com/v1/namespaces/default/shelves";
const JSON: &str = "application/json";

fn shelf(name: &str, spec: Value) -> Value {
    json!({"apiVersion": "shop.example.com/v1", "kind": "Shelf",
           "metadata": {"name": name}, "spec": spec})
}

/// The `(field, reason, message)` of each cause of a Status.
fn causes(status: &Value) -> Vec<(String, String, String)> {
    status["details"]["causes"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|c| {
            let s = |k: &str| c[k].as_str().unwrap_or_default().to_owned();
            (s("field"), s("reason"), s("message"))
        })
        .collect()
}

#[tokio::test]
async fn a_kind_with_required_fields_is_created_patched_and_applied() {
    let app = app();
    let (code, created) = call(
        &app,
        Method::POST,
        COLLECTION,
        JSON,
        shelf("a", json!({"sku": "A-1", "floor": "Ground"})),
    )
    .await;
    assert_eq!(code, StatusCode::CREATED, "{created}");
    assert_eq!(
        created["metadata"]["managedFields"][0]["operation"],
        "Update"
    );

    // Server-side apply that creates compares against the kind's empty object too.
    let (code, applied) = call(
        &app,
        Method::PATCH,
        &format!("{COLLECTION}/b?fieldManager=me"),
        "application/apply-patch+yaml",
        shelf("b", json!({"sku": "B-1"})),
    )
    .await;
    assert_eq!(code, StatusCode::CREATED, "{applied}");
    assert_eq!(applied["spec"]["sku"], "B-1");
}

#[tokio::test]
async fn a_missing_required_field_is_a_422_with_kubernetes_causes() {
    let app = app();
    let (code, status) = call(&app, Method::POST, COLLECTION, JSON, shelf("a", json!({}))).await;
    assert_eq!(code, StatusCode::UNPROCESSABLE_ENTITY, "{status}");
    assert_eq!(status["reason"], "Invalid");
    assert_eq!(status["details"]["kind"], "Shelf");
    assert_eq!(status["details"]["name"], "a");
    assert_eq!(
        causes(&status)[0],
        (
            "spec.sku".to_owned(),
            "FieldValueRequired".to_owned(),
            "Required value".to_owned()
        )
    );
    assert!(
        status["message"]
            .as_str()
            .unwrap()
            .starts_with("Shelf.shop.example.com \"a\" is invalid: spec.sku: Required value"),
        "{status}"
    );

    // No spec at all: the same rule, one level up.
    let mut no_spec = shelf("a", Value::Null);
    no_spec.as_object_mut().unwrap().remove("spec");
    let (code, status) = call(&app, Method::POST, COLLECTION, JSON, no_spec).await;
    assert_eq!(code, StatusCode::UNPROCESSABLE_ENTITY, "{status}");
    assert_eq!(causes(&status)[0].0, "spec");
    assert_eq!(causes(&status)[0].1, "FieldValueRequired");
}

#[tokio::test]
async fn a_value_outside_an_enum_is_a_422_naming_the_supported_values() {
    let app = app();
    let bad = shelf("a", json!({"sku": "A-1", "floor": "Basement"}));
    let (code, status) = call(&app, Method::POST, COLLECTION, JSON, bad.clone()).await;
    assert_eq!(code, StatusCode::UNPROCESSABLE_ENTITY, "{status}");
    assert_eq!(
        causes(&status)[0],
        (
            "spec.floor".to_owned(),
            "FieldValueNotSupported".to_owned(),
            "Unsupported value: \"Basement\": supported values: \"First\", \"Ground\"".to_owned()
        )
    );

    // Every write path answers alike: PUT, merge patch, apply.
    let good = shelf("a", json!({"sku": "A-1", "floor": "Ground"}));
    let (code, created) = call(&app, Method::POST, COLLECTION, JSON, good).await;
    assert_eq!(code, StatusCode::CREATED, "{created}");
    let object = format!("{COLLECTION}/a");
    let mut put = created.clone();
    put["spec"]["floor"] = json!("Basement");
    let (code, status) = call(&app, Method::PUT, &object, JSON, put).await;
    assert_eq!(code, StatusCode::UNPROCESSABLE_ENTITY, "{status}");
    assert_eq!(causes(&status)[0].0, "spec.floor");
    let (code, status) = call(
        &app,
        Method::PATCH,
        &object,
        "application/merge-patch+json",
        json!({"spec": {"floor": "Basement"}}),
    )
    .await;
    assert_eq!(code, StatusCode::UNPROCESSABLE_ENTITY, "{status}");
    assert_eq!(causes(&status)[0].1, "FieldValueNotSupported");
    let (code, status) = call(
        &app,
        Method::PATCH,
        &format!("{object}?fieldManager=me&force=true"),
        "application/apply-patch+yaml",
        bad,
    )
    .await;
    assert_eq!(code, StatusCode::UNPROCESSABLE_ENTITY, "{status}");
    assert_eq!(causes(&status)[0].0, "spec.floor");
}

#[tokio::test]
async fn what_the_schema_does_not_explain_stays_a_400() {
    let app = app();
    // A wrong kind is refused for the kind, before the shape.
    let mut wrong = shelf("a", json!({}));
    wrong["kind"] = json!("Rack");
    let (code, status) = call(&app, Method::POST, COLLECTION, JSON, wrong).await;
    assert_eq!(code, StatusCode::BAD_REQUEST, "{status}");
    assert!(status["message"].as_str().unwrap().contains("Rack"));
    // Strict field validation refuses an unknown field, before validation.
    let mut unknown = shelf("a", json!({"sku": "A-1"}));
    unknown["spec"]["colour"] = json!("red");
    let (code, status) = call(
        &app,
        Method::POST,
        &format!("{COLLECTION}?fieldValidation=Strict"),
        JSON,
        unknown,
    )
    .await;
    assert_eq!(code, StatusCode::BAD_REQUEST, "{status}");
    assert!(
        status["message"]
            .as_str()
            .unwrap()
            .contains("unknown field \"spec.colour\""),
        "{status}"
    );
    // Not a JSON object at all.
    let (code, status) = call(&app, Method::POST, COLLECTION, JSON, json!([1])).await;
    assert_eq!(code, StatusCode::BAD_REQUEST, "{status}");
    // A value of the wrong type is refused by Go's decoder before validation, even beside a
    // missing required field: 400, as kube-apiserver answers for its own kinds.
    let mut typed = shelf("a", json!({}));
    typed["spec"] = json!("a string where an object goes");
    let (code, status) = call(&app, Method::POST, COLLECTION, JSON, typed).await;
    assert_eq!(code, StatusCode::BAD_REQUEST, "{status}");
}
