//! A kind's own apply schema (`Strategy::APPLY_SCHEMA`, an `ApplySchema`): the lists it names
//! merge item by item under server-side apply, where any other list is atomic, so two
//! managers own one item each instead of fighting over the whole list.

mod support;
use support::{call, memory_storage};

use std::borrow::Cow;

use conneg_apiserver::declarative::{JsonSchema, ListType};
use conneg_apiserver::registry::{ApplySchema, Strategy};
use conneg_apiserver::server::openapi::OpenApiInfo;
use conneg_apiserver::server::{ServerBuilder, ServerOptions, router};
use http::{Method, StatusCode};
use serde::{Deserialize, Serialize};
use serde_json::json;

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
struct RackSpec {
    #[serde(default)]
    tags: Vec<String>,
    #[serde(default)]
    slots: Vec<Slot>,
    #[serde(default)]
    labels: Vec<String>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
struct Slot {
    name: String,
    #[serde(default)]
    size: i64,
}

#[conneg_apiserver::kind(group = "racks.example.com", version = "v1", kind = "Rack", namespaced)]
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
struct Rack {
    #[serde(default)]
    spec: RackSpec,
}

impl Strategy for Rack {
    type Stored = Rack;
    // `spec.labels` is left atomic, the default.
    const APPLY_SCHEMA: ApplySchema = ApplySchema {
        lists: &[
            ("spec.tags", ListType::Set),
            (
                "spec.slots",
                ListType::Map(Cow::Borrowed(&[Cow::Borrowed("name")])),
            ),
        ],
        atomic_maps: &[],
    };
}

const RACKS: &str = "/apis/racks.example.com/v1/namespaces/default/racks";

fn app() -> axum::Router {
    let info = OpenApiInfo {
        title: "Racks",
        package: "com.example.racks",
    };
    let options = ServerOptions {
        standalone: false,
        ..Default::default()
    };
    router(
        ServerBuilder::new(info)
            .serve::<Rack>()
            .build(memory_storage("racks.example.com"), options),
    )
}

async fn apply(
    app: &axum::Router,
    manager: &str,
    spec: serde_json::Value,
) -> (StatusCode, serde_json::Value) {
    let body = json!({
        "apiVersion": "racks.example.com/v1",
        "kind": "Rack",
        "metadata": {"name": "r"},
        "spec": spec,
    });
    let uri = format!("{RACKS}/r?fieldManager={manager}");
    call(
        app,
        Method::PATCH,
        &uri,
        "application/apply-patch+yaml",
        body,
    )
    .await
}

#[tokio::test]
async fn the_lists_a_kind_names_merge_item_by_item_and_the_others_stay_atomic() {
    let app = app();
    let (code, _) = apply(
        &app,
        "a",
        json!({"tags": ["x"], "slots": [{"name": "s1", "size": 1}], "labels": ["l1"]}),
    )
    .await;
    assert_eq!(code, StatusCode::CREATED);
    // Another manager's items join the set and the map-list, each owned by its writer.
    let (code, rack) = apply(
        &app,
        "b",
        json!({"tags": ["y"], "slots": [{"name": "s2", "size": 2}]}),
    )
    .await;
    assert_eq!(code, StatusCode::OK, "{rack}");
    assert_eq!(rack["spec"]["tags"], json!(["x", "y"]));
    assert_eq!(
        rack["spec"]["slots"],
        json!([{"name": "s1", "size": 1}, {"name": "s2", "size": 2}])
    );
    let owned = |manager: &str| {
        rack["metadata"]["managedFields"]
            .as_array()
            .unwrap()
            .iter()
            .find(|e| e["manager"] == manager)
            .unwrap()["fieldsV1"]["f:spec"]
            .clone()
    };
    assert!(
        owned("b")["f:tags"].get("v:\"y\"").is_some(),
        "{}",
        owned("b")
    );
    assert!(
        owned("b")["f:slots"].get("k:{\"name\":\"s2\"}").is_some(),
        "{}",
        owned("b")
    );
    // `spec.labels` is one value, owned whole by `a`: `b` changing it is a conflict.
    let (code, conflict) = apply(&app, "b", json!({"labels": ["l2"]})).await;
    assert_eq!(code, StatusCode::CONFLICT, "{conflict}");
    assert!(owned("a")["f:labels"].is_object(), "{}", owned("a"));
}
