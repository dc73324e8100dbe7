//! Custom resources end to end in process: a definition created over HTTP is established
//! and served without a restart; its objects are pruned, defaulted, validated by its
//! schema, listed with its printer columns, kept in their status subresource, stored as
//! CBOR; deleting the definition removes its objects and stops serving it.

mod support;

use std::time::Duration;

use conneg_apiserver::server::openapi::OpenApiInfo;
use conneg_apiserver::server::{AppState, ServerBuilder, ServerOptions, router};
use conneg_apiserver::storage::codec::{StorageCodec, StorageMediaType};
use conneg_apiserver::storage::{OpenedStorage, Storage};
use http::{Method, StatusCode};
use serde_json::{Value, json};
use support::{call, call_accepting, memory_storage};

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
            "names": {"plural": "crontabs", "singular": "crontab", "kind": "CronTab", "shortNames": ["ct"], "categories": ["all"]},
            "versions": [{
                "name": "v1", "served": true, "storage": true,
                "subresources": {"status": {}, "scale": {"specReplicasPath": ".spec.replicas", "statusReplicasPath": ".status.ready"}},
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
    server_over(memory_storage("example.com")).await
}

async fn server_over(storage: OpenedStorage) -> (AppState, axum::Router) {
    let state = ServerBuilder::new(OpenApiInfo {
        title: "test",
        package: "io.example.test",
    })
    .build(storage, ServerOptions::default());
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

/// Creates the CronTab definition and waits until its objects are served.
async fn install(app: &axum::Router) {
    let (code, created) = call(app, Method::POST, CRDS, JSON, crontab_crd()).await;
    assert_eq!(code, StatusCode::CREATED, "{created}");
    until(app, CRONTABS, StatusCode::OK).await;
}

fn crontab(name: &str, spec: Value) -> Value {
    json!({"apiVersion": "stable.example.com/v1", "kind": "CronTab", "metadata": {"name": name}, "spec": spec})
}

#[tokio::test]
async fn discovery_and_openapi_publish_the_definition() {
    let (_state, app) = server().await;
    install(&app).await;
    let (_, list) = call(
        &app,
        Method::GET,
        "/apis/stable.example.com/v1",
        JSON,
        Value::Null,
    )
    .await;
    let names: Vec<&Value> = list["resources"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| &r["name"])
        .collect();
    assert_eq!(
        names,
        [
            &json!("crontabs"),
            &json!("crontabs/status"),
            &json!("crontabs/scale")
        ]
    );
    assert_eq!(list["resources"][2]["kind"], "Scale");
    assert_eq!(list["resources"][0]["shortNames"], json!(["ct"]));
    assert_eq!(list["resources"][0]["categories"], json!(["all"]));
    assert_eq!(list["resources"][0]["kind"], "CronTab");

    let (_, index) = call(&app, Method::GET, "/openapi/v3", JSON, Value::Null).await;
    let url = index["paths"]["apis/stable.example.com/v1"]["serverRelativeURL"]
        .as_str()
        .expect("the custom resource's version is in the OpenAPI index")
        .to_owned();
    let (code, doc) = call(&app, Method::GET, &url, JSON, Value::Null).await;
    assert_eq!(code, StatusCode::OK);
    let schema = doc["components"]["schemas"]
        .as_object()
        .unwrap()
        .values()
        .find(|s| s["x-kubernetes-group-version-kind"][0]["kind"] == "CronTab")
        .expect("a schema of CronTab");
    assert_eq!(
        schema["properties"]["spec"]["properties"]["replicas"]["default"],
        1
    );
    assert!(schema["properties"].get("metadata").is_some());
}

#[tokio::test]
async fn watches_see_the_objects_deleted_then_end_with_the_definition() {
    use tower::ServiceExt;
    let (_state, app) = server().await;
    install(&app).await;
    let (code, _) = call(&app, Method::POST, CRONTABS, JSON, crontab("w", json!({}))).await;
    assert_eq!(code, StatusCode::CREATED);
    let req = http::Request::get(format!("{CRONTABS}?watch=true"))
        .header("accept", "application/json")
        .body(axum::body::Body::empty())
        .unwrap();
    let resp = app.clone().oneshot(req).await.unwrap();
    assert_eq!(resp.status(), StatusCode::OK);
    // Read as a client does, while the definition goes.
    let reading = tokio::spawn(tokio::time::timeout(
        Duration::from_secs(20),
        axum::body::to_bytes(resp.into_body(), 1 << 20),
    ));
    let (code, _) = call(
        &app,
        Method::DELETE,
        &format!("{CRDS}/crontabs.stable.example.com"),
        JSON,
        Value::Null,
    )
    .await;
    assert_eq!(code, StatusCode::OK);
    // The stream ends (rather than running to its timeout) once the definition is gone.
    let bytes = reading
        .await
        .unwrap()
        .expect("the watch ends with its definition")
        .unwrap();
    let events: Vec<Value> = bytes
        .split(|b| *b == b'\n')
        .filter(|l| !l.is_empty())
        .map(|l| serde_json::from_slice(l).unwrap())
        .collect();
    let types: Vec<&str> = events.iter().map(|e| e["type"].as_str().unwrap()).collect();
    assert_eq!(
        types,
        ["ADDED", "DELETED"],
        "{events:?} {:?}",
        String::from_utf8_lossy(&bytes)
    );
    assert_eq!(events[1]["object"]["metadata"]["name"], "w");
}

#[tokio::test]
async fn a_stricter_schema_keeps_serving_stored_objects_and_ratchets_updates() {
    let (_state, app) = server().await;
    install(&app).await;
    let (code, _) = call(
        &app,
        Method::POST,
        CRONTABS,
        JSON,
        crontab("old", json!({"image": "a-long-image"})),
    )
    .await;
    assert_eq!(code, StatusCode::CREATED);
    // A new rule the stored object breaks: image at most 3 characters.
    let (_, mut crd) = call(
        &app,
        Method::GET,
        &format!("{CRDS}/crontabs.stable.example.com"),
        JSON,
        Value::Null,
    )
    .await;
    crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"]["image"]
        ["maxLength"] = json!(3);
    let (code, e) = call(
        &app,
        Method::PUT,
        &format!("{CRDS}/crontabs.stable.example.com"),
        JSON,
        crd,
    )
    .await;
    assert_eq!(code, StatusCode::OK, "{e}");
    // Served as stored; an update of another field passes (the unchanged image ratchets);
    // a new object must follow the rule.
    for _ in 0..100 {
        let (code, e) = call(
            &app,
            Method::POST,
            CRONTABS,
            JSON,
            crontab("new", json!({"image": "a-long-image"})),
        )
        .await;
        if code == StatusCode::UNPROCESSABLE_ENTITY {
            assert!(e["message"].as_str().unwrap().contains("spec.image"), "{e}");
            break;
        }
        assert_eq!(code, StatusCode::CREATED, "{e}");
        call(
            &app,
            Method::DELETE,
            &format!("{CRONTABS}/new"),
            JSON,
            Value::Null,
        )
        .await;
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let (code, old) = call(
        &app,
        Method::GET,
        &format!("{CRONTABS}/old"),
        JSON,
        Value::Null,
    )
    .await;
    assert_eq!(
        (code, old["spec"]["image"].clone()),
        (StatusCode::OK, json!("a-long-image"))
    );
    let (code, e) = call(
        &app,
        Method::PATCH,
        &format!("{CRONTABS}/old"),
        "application/merge-patch+json",
        json!({"spec": {"replicas": 2}}),
    )
    .await;
    assert_eq!(code, StatusCode::OK, "{e}");
    let (code, _) = call(
        &app,
        Method::PATCH,
        &format!("{CRONTABS}/old"),
        "application/merge-patch+json",
        json!({"spec": {"image": "still-too-long"}}),
    )
    .await;
    assert_eq!(code, StatusCode::UNPROCESSABLE_ENTITY);
}

/// An update of a definition is validated against the definition it replaces
/// (`ValidateCustomResourceDefinitionUpdate`): its group and plural never change, its kind
/// not once established; a change that keeps them passes.
#[tokio::test]
async fn a_definitions_group_plural_and_kind_are_fixed_by_updates() {
    let (_state, app) = server().await;
    install(&app).await;
    let uri = format!("{CRDS}/crontabs.stable.example.com");
    let (_, crd) = call(&app, Method::GET, &uri, JSON, Value::Null).await;
    let changed = |at: &str, to: &str| {
        let mut c = crd.clone();
        *c.pointer_mut(at).unwrap() = json!(to);
        c
    };
    for (at, to, field) in [
        ("/spec/group", "other.example.com", "spec.group"),
        ("/spec/names/plural", "crontabz", "spec.names.plural"),
        ("/spec/names/kind", "CronTabZ", "spec.names.kind"),
    ] {
        let (code, e) = call(&app, Method::PUT, &uri, JSON, changed(at, to)).await;
        assert_eq!(code, StatusCode::UNPROCESSABLE_ENTITY, "{at}: {e}");
        assert!(e["message"].as_str().unwrap().contains(field), "{e}");
    }
    let (code, e) = call(
        &app,
        Method::PUT,
        &uri,
        JSON,
        changed("/spec/names/singular", "tab"),
    )
    .await;
    assert_eq!(code, StatusCode::OK, "{e}");
}

/// Responses are kept encoded per object and served version: a changed definition (a new
/// default, applied on read) must change what unchanged stored objects are served as, in a
/// GET and in a LIST, in JSON and in CBOR.
#[tokio::test]
async fn a_changed_schema_changes_how_unchanged_objects_are_served() {
    let (_state, app) = server().await;
    install(&app).await;
    let obj = crontab("a", json!({"image": "x", "replicas": 2}));
    let (code, e) = call(&app, Method::POST, CRONTABS, JSON, obj).await;
    assert_eq!(code, StatusCode::CREATED, "{e}");
    let one = format!("{CRONTABS}/a");
    let tiers = async |app: &axum::Router| {
        let mut seen = Vec::new();
        for accept in [JSON, "application/cbor"] {
            for (uri, at) in [
                (one.as_str(), "/spec/tier"),
                (CRONTABS, "/items/0/spec/tier"),
            ] {
                let (_, got) =
                    call_accepting(app, Method::GET, uri, JSON, accept, Value::Null).await;
                seen.push(got.pointer(at).cloned().unwrap_or(Value::Null));
            }
            let added = first_watch_event(app, CRONTABS, accept).await;
            seen.push(
                added
                    .pointer("/object/spec/tier")
                    .cloned()
                    .unwrap_or(Value::Null),
            );
        }
        seen
    };
    // Read (and kept) in both formats before the change.
    assert_eq!(tiers(&app).await, vec![Value::Null; 6]);
    let uri = format!("{CRDS}/crontabs.stable.example.com");
    let (_, mut crd) = call(&app, Method::GET, &uri, JSON, Value::Null).await;
    crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"]["tier"] =
        json!({"type": "string", "default": "gold"});
    let (code, e) = call(&app, Method::PUT, &uri, JSON, crd).await;
    assert_eq!(code, StatusCode::OK, "{e}");
    for _ in 0..100 {
        if tiers(&app).await == vec![json!("gold"); 6] {
            let (_, got) = call(&app, Method::GET, &one, JSON, Value::Null).await;
            assert_eq!(got["spec"]["replicas"], 2, "{got}");
            return;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("the new default never showed: {:?}", tiers(&app).await);
}

/// The first event of a watch of `uri` (the first object of its initial state) in `accept`'s
/// format, decoded.
async fn first_watch_event(app: &axum::Router, uri: &str, accept: &str) -> Value {
    use http_body_util::BodyExt as _;
    use tower::ServiceExt as _;
    let req = http::Request::get(format!("{uri}?watch=true"))
        .header("accept", accept)
        .body(axum::body::Body::empty())
        .unwrap();
    let mut body = app.clone().oneshot(req).await.unwrap().into_body();
    let frame = tokio::time::timeout(Duration::from_secs(10), body.frame())
        .await
        .expect("an initial event")
        .expect("a frame")
        .unwrap();
    let event = frame.into_data().unwrap();
    match accept {
        JSON => serde_json::from_slice(&event).unwrap(),
        _ => conneg_cbor::value_from_slice(&event).unwrap(),
    }
}

/// KEP-4222's mixed storage: objects written as CBOR and as JSON into one store are all
/// read, whichever format the server writes.
#[tokio::test]
async fn custom_resources_stored_as_cbor_and_as_json_are_all_read() {
    let storage = memory_storage("example.com");
    let store = storage.store.clone();
    let keys = storage.keys.clone();
    let json_storage = OpenedStorage {
        codec: StorageCodec::new(StorageMediaType::Json),
        ..memory_storage("example.com")
    };
    let json_storage = OpenedStorage {
        store: store.clone(),
        keys: keys.clone(),
        ..json_storage
    };
    let (cbor_state, cbor_app) = server_over(storage).await;
    install(&cbor_app).await;
    let (code, _) = call(
        &cbor_app,
        Method::POST,
        CRONTABS,
        JSON,
        crontab("c", json!({"image": "x"})),
    )
    .await;
    assert_eq!(code, StatusCode::CREATED);
    drop(cbor_state);
    // A server writing JSON over the same store (as after a restart with
    // --storage-media-type json) serves the definition and the CBOR object.
    let (_json_state, json_app) = server_over(json_storage).await;
    until(&json_app, &format!("{CRONTABS}/c"), StatusCode::OK).await;
    let (code, _) = call(
        &json_app,
        Method::POST,
        CRONTABS,
        JSON,
        crontab("j", json!({"image": "y"})),
    )
    .await;
    assert_eq!(code, StatusCode::CREATED);
    let stored = |name: &str| {
        let (store, key) = (
            store.clone(),
            format!("{}/crontabs/default/{name}", keys.prefix()),
        );
        async move { store.get(&key).await.unwrap().unwrap().value }
    };
    assert_eq!(&stored("c").await[..3], [0xd9, 0xd9, 0xf7]);
    assert_eq!(stored("j").await[0], b'{');
    let (_, list) = call(&cbor_app, Method::GET, CRONTABS, JSON, Value::Null).await;
    let names: Vec<&Value> = list["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| &i["metadata"]["name"])
        .collect();
    assert_eq!(names, [&json!("c"), &json!("j")]);
    // Defaults apply on read, whatever the format.
    assert_eq!(list["items"][1]["spec"]["replicas"], 1);
}

#[tokio::test]
async fn scale_reads_and_writes_the_replicas_through_the_whole_update() {
    let (_state, app) = server().await;
    install(&app).await;
    let (code, _) = call(
        &app,
        Method::POST,
        CRONTABS,
        JSON,
        crontab("s", json!({"replicas": 2})),
    )
    .await;
    assert_eq!(code, StatusCode::CREATED);
    let scale = format!("{CRONTABS}/s/scale");
    let (code, sc) = call(&app, Method::GET, &scale, JSON, Value::Null).await;
    assert_eq!(code, StatusCode::OK, "{sc}");
    assert_eq!(
        (sc["kind"].clone(), sc["apiVersion"].clone()),
        (json!("Scale"), json!("autoscaling/v1"))
    );
    assert_eq!(sc["spec"]["replicas"], 2);
    assert_eq!(sc["status"]["replicas"], 0);

    let merge = "application/merge-patch+json";
    let (code, sc) = call(
        &app,
        Method::PATCH,
        &scale,
        merge,
        json!({"spec": {"replicas": 5}}),
    )
    .await;
    assert_eq!(code, StatusCode::OK, "{sc}");
    assert_eq!(sc["spec"]["replicas"], 5);
    let (_, obj) = call(
        &app,
        Method::GET,
        &format!("{CRONTABS}/s"),
        JSON,
        Value::Null,
    )
    .await;
    assert_eq!(
        (
            obj["spec"]["replicas"].clone(),
            obj["metadata"]["generation"].clone()
        ),
        (json!(5), json!(2))
    );

    // The scaled object is validated: the scale's own rule, then the schema's CEL rule.
    let (code, e) = call(
        &app,
        Method::PATCH,
        &scale,
        merge,
        json!({"spec": {"replicas": -1}}),
    )
    .await;
    assert_eq!(code, StatusCode::UNPROCESSABLE_ENTITY);
    assert!(
        e["message"]
            .as_str()
            .unwrap()
            .ends_with(".spec.replicas: Invalid value: -1: should be a non-negative integer"),
        "{e}"
    );
    let (code, e) = call(
        &app,
        Method::PATCH,
        &scale,
        merge,
        json!({"spec": {"replicas": 11}}),
    )
    .await;
    assert_eq!(code, StatusCode::UNPROCESSABLE_ENTITY, "{e}");
    assert!(
        e["message"]
            .as_str()
            .unwrap()
            .contains("at most 10 replicas"),
        "{e}"
    );
    // A stale resourceVersion in the Scale is a conflict.
    let (code, _) = call(&app, Method::PUT, &scale, JSON, json!({"apiVersion": "autoscaling/v1", "kind": "Scale",
        "metadata": {"name": "s", "namespace": "default", "resourceVersion": "1"}, "spec": {"replicas": 4}})).await;
    assert_eq!(code, StatusCode::CONFLICT);
}

fn widget_crd() -> Value {
    let schema = json!({"openAPIV3Schema": {"type": "object", "properties": {
        "spec": {"type": "object", "properties": {"size": {"type": "integer"}}},
        "status": {"type": "object", "properties": {"seen": {"type": "integer"}}}}}});
    json!({
        "metadata": {"name": "widgets.example.com"},
        "spec": {
            "group": "example.com", "scope": "Namespaced",
            "names": {"plural": "widgets", "kind": "Widget"},
            "versions": [
                {"name": "v1beta1", "served": true, "storage": false, "deprecated": true, "schema": schema},
                {"name": "v1", "served": true, "storage": true, "schema": schema}
            ]
        }
    })
}

#[tokio::test]
async fn versions_convert_by_api_version_and_deprecated_ones_warn() {
    use tower::ServiceExt;
    let (state, app) = server().await;
    let (code, e) = call(&app, Method::POST, CRDS, JSON, widget_crd()).await;
    assert_eq!(code, StatusCode::CREATED, "{e}");
    let beta = "/apis/example.com/v1beta1/namespaces/default/widgets";
    until(&app, beta, StatusCode::OK).await;
    let req = http::Request::post(beta)
        .header("content-type", JSON)
        .body(axum::body::Body::from(
            json!({"apiVersion": "example.com/v1beta1", "kind": "Widget", "metadata": {"name": "w"}, "spec": {"size": 1}}).to_string(),
        ))
        .unwrap();
    let resp = app.clone().oneshot(req).await.unwrap();
    assert_eq!(resp.status(), StatusCode::CREATED);
    let warning = resp.headers()["warning"].to_str().unwrap().to_owned();
    assert_eq!(
        warning,
        r#"299 - "example.com/v1beta1 Widget is deprecated; use example.com/v1 Widget""#
    );
    let bytes = axum::body::to_bytes(resp.into_body(), 1 << 20)
        .await
        .unwrap();
    let created: Value = serde_json::from_slice(&bytes).unwrap();
    assert_eq!(created["apiVersion"], "example.com/v1beta1");
    // Read in the other version; stored in the storage version.
    let (_, got) = call(
        &app,
        Method::GET,
        "/apis/example.com/v1/namespaces/default/widgets/w",
        JSON,
        Value::Null,
    )
    .await;
    assert_eq!(got["apiVersion"], "example.com/v1");
    let key = format!("{}/widgets/default/w", state.registry().keys.prefix());
    let stored = state
        .registry()
        .store
        .get(&key)
        .await
        .unwrap()
        .unwrap()
        .value;
    let stored: Value = conneg_cbor::from_slice(&stored).unwrap();
    assert_eq!(stored["apiVersion"], "example.com/v1");
    // Discovery prefers v1; without a status subresource, the status is data: a change of
    // it moves the generation on.
    let (_, group) = call(&app, Method::GET, "/apis/example.com", JSON, Value::Null).await;
    assert_eq!(group["preferredVersion"]["version"], "v1");
    let (code, p) = call(
        &app,
        Method::PATCH,
        "/apis/example.com/v1/namespaces/default/widgets/w",
        "application/merge-patch+json",
        json!({"status": {"seen": 1}}),
    )
    .await;
    assert_eq!(code, StatusCode::OK, "{p}");
    assert_eq!(
        (
            p["status"]["seen"].clone(),
            p["metadata"]["generation"].clone()
        ),
        (json!(1), json!(2))
    );
}

#[tokio::test]
async fn a_terminating_definition_refuses_creates_until_its_objects_are_gone() {
    let (_state, app) = server().await;
    install(&app).await;
    let mut kept = crontab("kept", json!({}));
    kept["metadata"]["finalizers"] = json!(["example.com/keep"]);
    let (code, _) = call(&app, Method::POST, CRONTABS, JSON, kept).await;
    assert_eq!(code, StatusCode::CREATED);
    let crd = format!("{CRDS}/crontabs.stable.example.com");
    let (code, _) = call(&app, Method::DELETE, &crd, JSON, Value::Null).await;
    assert_eq!(code, StatusCode::OK);
    // Held by the object's finalizer: terminating, and creates are refused.
    let mut refused = Value::Null;
    for _ in 0..100 {
        let (code, e) = call(
            &app,
            Method::POST,
            CRONTABS,
            JSON,
            crontab("late", json!({})),
        )
        .await;
        if code == StatusCode::FORBIDDEN {
            refused = e;
            break;
        }
        call(
            &app,
            Method::DELETE,
            &format!("{CRONTABS}/late"),
            JSON,
            Value::Null,
        )
        .await;
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(
        refused["message"],
        r#"crontabs.stable.example.com "late" is forbidden: create not allowed while custom resource definition is terminating"#
    );
    let (code, d) = call(&app, Method::GET, &crd, JSON, Value::Null).await;
    assert_eq!(code, StatusCode::OK);
    assert!(d["metadata"]["deletionTimestamp"].is_string());
    let (code, _) = call(
        &app,
        Method::PATCH,
        &format!("{CRONTABS}/kept"),
        "application/merge-patch+json",
        json!({"metadata": {"finalizers": null}}),
    )
    .await;
    assert_eq!(code, StatusCode::OK);
    until(&app, &crd, StatusCode::NOT_FOUND).await;
}
