//! API Priority and Fairness through a standalone server: the configuration served as
//! `flowcontrol.apiserver.k8s.io/v1` is created at start and put in force when it changes.
//! The dispatcher's own behaviour (fair queuing, 429s, health paths, the plain in-flight
//! limits) is tested next to it, in `src/flowcontrol/tests.rs`.

mod support;

use std::time::Duration;

use axum::Router;
use axum::body::Body;
use http::{Request, StatusCode};
use tower::ServiceExt;

/// A standalone server: the objects are served, created at start, and their changes put
/// in force.
#[tokio::test]
async fn the_served_configuration_is_followed() {
    use conneg_apiserver::server::openapi::OpenApiInfo;
    use conneg_apiserver::server::{ServerBuilder, ServerOptions, Serving};
    use http::Method;
    use serde_json::json;
    use support::{call, memory_storage};

    let info = OpenApiInfo {
        title: "Example",
        package: "com.example",
    };
    let state =
        ServerBuilder::new(info).build(memory_storage("example.com"), ServerOptions::default());
    state.bootstrap().await.unwrap();
    let app = state.app(&Serving::default());
    let fc = "/apis/flowcontrol.apiserver.k8s.io/v1";
    let (code, list) = call(
        &app,
        Method::GET,
        &format!("{fc}/flowschemas"),
        "",
        json!(null),
    )
    .await;
    assert_eq!(code, StatusCode::OK);
    let names: Vec<&str> = list["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["metadata"]["name"].as_str().unwrap())
        .collect();
    assert!(
        names.contains(&"global-default") && names.contains(&"catch-all"),
        "{names:?}"
    );
    let (code, levels) = call(
        &app,
        Method::GET,
        &format!("{fc}/prioritylevelconfigurations"),
        "",
        json!(null),
    )
    .await;
    assert_eq!(code, StatusCode::OK);
    assert_eq!(levels["items"].as_array().unwrap().len(), 8);
    let (_, global) = call(
        &app,
        Method::GET,
        &format!("{fc}/flowschemas/global-default"),
        "",
        json!(null),
    )
    .await;

    let schema_of = |app: Router| async move {
        let resp = app
            .oneshot(
                Request::get("/api/v1/namespaces")
                    .body(Body::empty())
                    .unwrap(),
            )
            .await
            .unwrap();
        resp.headers()["x-kubernetes-pf-flowschema-uid"]
            .to_str()
            .unwrap()
            .to_owned()
    };
    // An anonymous request is global-default's.
    assert_eq!(
        schema_of(app.clone()).await,
        global["metadata"]["uid"].as_str().unwrap()
    );

    // Bad objects are refused.
    let mut bad = json!({"apiVersion": "flowcontrol.apiserver.k8s.io/v1", "kind": "FlowSchema",
        "metadata": {"name": "anonymous"},
        "spec": {"priorityLevelConfiguration": {"name": "workload-low"}, "matchingPrecedence": 0,
                 "rules": [{"subjects": [{"kind": "Group", "group": {"name": "system:unauthenticated"}}],
                            "nonResourceRules": [{"verbs": ["*"], "nonResourceURLs": ["*"]}],
                            "resourceRules": [{"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"],
                                               "clusterScope": true, "namespaces": ["*"]}]}]}});
    let (code, _) = call(
        &app,
        Method::POST,
        &format!("{fc}/flowschemas"),
        "application/json",
        bad.clone(),
    )
    .await;
    assert_eq!(code, StatusCode::UNPROCESSABLE_ENTITY);
    // A schema ahead of global-default for anonymous requests takes them over.
    bad["spec"]["matchingPrecedence"] = json!(1000);
    let (code, created) = call(
        &app,
        Method::POST,
        &format!("{fc}/flowschemas"),
        "application/json",
        bad,
    )
    .await;
    assert_eq!(code, StatusCode::CREATED, "{created}");
    let uid = created["metadata"]["uid"].as_str().unwrap().to_owned();
    for _ in 0..500 {
        if schema_of(app.clone()).await == uid {
            return;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("the new flow schema was never put in force");
}
