//! The admission chain over HTTP: a registered plugin sees every create, update, patch and
//! delete with the objects involved, in registration order, and its refusal is the answer.
//! Driven through the router on core v1 namespaces (the one kind the library serves itself).

mod support;
use support::{call, memory_storage};

use std::sync::{Arc, Mutex};

use conneg::Status;
use conneg_apiserver::admission::{Operation, Plugin, Request};
use conneg_apiserver::core_v1::Namespace;
use conneg_apiserver::registry::Registry;
use conneg_apiserver::server::openapi::OpenApiInfo;
use conneg_apiserver::server::{AppState, ServerBuilder, ServerOptions, router};
use futures_util::future::BoxFuture;
use http::{Method, StatusCode};
use serde_json::{Value, json};

/// What one plugin saw: operation, name, and the `phase` of the new and the old namespace.
type Seen = Arc<Mutex<Vec<(Operation, String, Option<String>, Option<String>)>>>;

/// Records every request; refuses anything on a namespace labelled `locked=true` (new or old).
#[derive(Debug)]
struct Locks {
    seen: Seen,
}

fn phase(o: Option<&(dyn std::any::Any + Send + Sync)>) -> Option<String> {
    o.and_then(|o| o.downcast_ref::<Namespace>())
        .map(|ns| ns.status.phase.clone())
}

fn record(seen: &Seen, req: &Request<'_>) {
    seen.lock().unwrap().push((
        req.operation,
        req.name.to_owned(),
        phase(req.object),
        phase(req.old_object),
    ));
}

fn locked(o: Option<&(dyn std::any::Any + Send + Sync)>) -> bool {
    o.and_then(|o| o.downcast_ref::<Namespace>())
        .is_some_and(|ns| {
            ns.metadata
                .labels
                .get("locked")
                .is_some_and(|v| v == "true")
        })
}

impl Plugin for Locks {
    fn name(&self) -> &'static str {
        "Locks"
    }
    fn admit<'a>(&'a self, _: &'a Registry, req: Request<'a>) -> BoxFuture<'a, Result<(), Status>> {
        Box::pin(async move {
            record(&self.seen, &req);
            if locked(req.object) || locked(req.old_object) {
                let r = req.resource;
                return Err(Status::forbidden(r.group, r.resource, req.name, "locked"));
            }
            Ok(())
        })
    }
}

/// Lets everything through; registered after `Locks`, so it sees exactly what `Locks` let through.
#[derive(Debug)]
struct Last {
    seen: Seen,
}

impl Plugin for Last {
    fn name(&self) -> &'static str {
        "Last"
    }
    fn admit<'a>(&'a self, _: &'a Registry, req: Request<'a>) -> BoxFuture<'a, Result<(), Status>> {
        Box::pin(async move {
            record(&self.seen, &req);
            Ok(())
        })
    }
}

fn state(first: Seen, last: Seen) -> AppState {
    let storage = memory_storage("test.example.com");
    let info = OpenApiInfo {
        title: "Test",
        package: "com.example.test",
    };
    ServerBuilder::new(info)
        .admission(Locks { seen: first })
        .admission(Last { seen: last })
        .build(storage, ServerOptions::default())
}

#[tokio::test]
async fn every_write_goes_through_the_chain_in_order() {
    let (first, last) = (Seen::default(), Seen::default());
    let app = router(state(first.clone(), last.clone()));
    let json = "application/json";
    let merge = "application/merge-patch+json";
    let ns = |name: &str, locked: bool| {
        json!({"apiVersion": "v1", "kind": "Namespace",
               "metadata": {"name": name, "labels": {"locked": locked.to_string()}}})
    };

    // Create: admitted with the defaulted object (phase Active), no old object.
    let (code, _) = call(
        &app,
        Method::POST,
        "/api/v1/namespaces",
        json,
        ns("open", false),
    )
    .await;
    assert_eq!(code, StatusCode::CREATED);
    let (code, body) = call(
        &app,
        Method::POST,
        "/api/v1/namespaces",
        json,
        ns("shut", true),
    )
    .await;
    assert_eq!(code, StatusCode::FORBIDDEN, "{body}");
    assert_eq!(body["message"], "namespaces \"shut\" is forbidden: locked");

    // Patch and update: both objects, named by the stored one.
    let lock = json!({"metadata": {"labels": {"locked": "true"}}});
    let (code, body) = call(&app, Method::PATCH, "/api/v1/namespaces/open", merge, lock).await;
    assert_eq!(code, StatusCode::FORBIDDEN, "{body}");
    let (code, current) = call(
        &app,
        Method::GET,
        "/api/v1/namespaces/open",
        json,
        Value::Null,
    )
    .await;
    assert_eq!(code, StatusCode::OK);
    assert_eq!(
        current["metadata"]["labels"]["locked"], "false",
        "the refused patch wrote"
    );
    let mut put = current.clone();
    put["metadata"]["labels"]["team"] = json!("a");
    let (code, body) = call(&app, Method::PUT, "/api/v1/namespaces/open", json, put).await;
    assert_eq!(code, StatusCode::OK, "{body}");

    // Delete: the stored object only.
    let (code, _) = call(
        &app,
        Method::DELETE,
        "/api/v1/namespaces/open",
        json,
        Value::Null,
    )
    .await;
    assert_eq!(code, StatusCode::OK);

    let active = Some("Active".to_owned());
    let seen = first.lock().unwrap().clone();
    assert_eq!(
        seen,
        vec![
            (Operation::Create, "open".into(), active.clone(), None),
            (Operation::Create, "shut".into(), active.clone(), None),
            (
                Operation::Update,
                "open".into(),
                active.clone(),
                active.clone()
            ),
            (
                Operation::Update,
                "open".into(),
                active.clone(),
                active.clone()
            ),
            (Operation::Delete, "open".into(), None, active.clone()),
        ]
    );
    // The second plugin saw exactly what the first let through.
    let passed: Vec<_> = seen
        .into_iter()
        .enumerate()
        .filter(|(i, _)| ![1, 2].contains(i))
        .map(|(_, s)| s)
        .collect();
    assert_eq!(*last.lock().unwrap(), passed);
}
