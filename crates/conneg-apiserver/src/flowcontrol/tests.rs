//! API Priority and Fairness in front of handlers that run until the test lets them finish:
//! which request starts next is then a matter of order, not of timing. One user's flood
//! does not starve another's requests; past a full queue (or the wait limit) the answer is
//! 429 with `Retry-After`; the health paths are never refused; with priority and fairness
//! off, the plain in-flight limits refuse at once. (Moved from `tests/flowcontrol.rs`: the
//! dispatcher is this crate's internal; the served configuration is tested there.)

use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::body::Body;
use axum::extract::State;
use axum::routing::get;
use http::{Request, StatusCode};
use tokio::sync::{Semaphore, mpsc};
use tower::ServiceExt;
use tower::layer::layer_fn;

use super::filter::{FLOW_SCHEMA_UID, PRIORITY_LEVEL_UID};
use super::max_in_flight::MaxInFlight;
use super::objects::{
    FlowSchema, LIMITED, LimitResponse, LimitedPriorityLevel, Named, PriorityLevelConfiguration,
    PriorityLevelSpec, QUEUE, QueuingConfiguration, Subject,
};
use super::{Dispatcher, bootstrap};
use crate::auth::UserInfo;
use crate::middleware::Layered;
use crate::registry::ObjectCounts;

const THINGS: &str = "/apis/example.com/v1/namespaces/default/things";

/// Handlers that report who started, then wait for a permit of `release`.
#[derive(Clone)]
struct Gate {
    started: mpsc::UnboundedSender<String>,
    release: Arc<Semaphore>,
}

async fn held(State(g): State<Gate>, req: Request<Body>) -> StatusCode {
    let user = req.extensions().get::<UserInfo>().map(|u| u.name.clone());
    let _ = g.started.send(user.unwrap_or_default());
    g.release.acquire().await.unwrap().forget();
    StatusCode::OK
}

async fn ok() -> StatusCode {
    StatusCode::OK
}

/// The filter over `dispatcher`, in front of held handlers for [`THINGS`] (immediate ones for
/// the health paths); who started comes out of the receiver, `release` lets one finish per permit.
fn app(dispatcher: Arc<Dispatcher>) -> (Router, mpsc::UnboundedReceiver<String>, Arc<Semaphore>) {
    let (started, rx) = mpsc::unbounded_channel();
    let release = Arc::new(Semaphore::new(0));
    let gate = Gate {
        started,
        release: release.clone(),
    };
    let app = Router::new()
        .route(THINGS, get(held))
        .route("/healthz", get(ok))
        .route("/readyz", get(ok))
        .route("/livez", get(ok))
        .route("/readyz/ping", get(ok))
        .with_state(gate)
        .layer(layer_fn(move |inner| {
            Layered::new(dispatcher.clone(), inner)
        }));
    (app, rx, release)
}

fn user(name: &str) -> UserInfo {
    UserInfo {
        name: name.into(),
        uid: String::new(),
        groups: vec!["system:authenticated".into()],
    }
}

/// `GET path` as `who`, in a task: the status and the response headers (the body, and the
/// seats it holds, are dropped).
fn send(
    app: &Router,
    who: &str,
    path: &str,
) -> tokio::task::JoinHandle<(StatusCode, http::HeaderMap)> {
    let mut req = Request::get(path).body(Body::empty()).unwrap();
    req.extensions_mut().insert(user(who));
    let app = app.clone();
    tokio::spawn(async move {
        let resp = app.oneshot(req).await.unwrap();
        (resp.status(), resp.headers().clone())
    })
}

/// The value of the gauge or counter `name{labels...}` in the dispatcher's metrics (0 when absent).
fn metric(d: &Dispatcher, name: &str, labels: &str) -> u64 {
    let text = d.render_metrics();
    text.lines()
        .find(|l| l.starts_with(&format!("{name}{{")) && l.contains(labels))
        .and_then(|l| l.rsplit(' ').next())
        .and_then(|v| v.parse().ok())
        .unwrap_or(0)
}

/// Waits (yielding, bounded) until `n` requests of `schema` are queued.
async fn queued(d: &Dispatcher, schema: &str, n: u64) {
    let labels = format!("flow_schema=\"{schema}\"");
    for _ in 0..10_000 {
        if metric(d, "apiserver_flowcontrol_current_inqueue_requests", &labels) == n {
            return;
        }
        tokio::time::sleep(Duration::from_millis(1)).await;
    }
    panic!(
        "{n} requests of {schema} never queued:\n{}",
        d.render_metrics()
    );
}

/// 13 server seats: `global-default` (20 of 245 shares) gets 2.
fn small_dispatcher() -> Arc<Dispatcher> {
    Arc::new(Dispatcher::new(
        13,
        Duration::from_secs(60),
        ObjectCounts::default(),
    ))
}

/// Each request holds its seat for a second (tokio's clock, paused and advanced by the
/// test): fairness is in seat-seconds, and requests of no duration would all be equal.
#[tokio::test(start_paused = true)]
async fn a_flood_by_one_user_does_not_starve_another() {
    let d = small_dispatcher();
    let (app, mut started, release) = app(d.clone());
    let mut tasks = Vec::new();
    // alice takes both seats, then queues ten more requests.
    for _ in 0..2 {
        tasks.push(send(&app, "alice", THINGS));
    }
    for _ in 0..2 {
        assert_eq!(started.recv().await.unwrap(), "alice");
    }
    for _ in 0..10 {
        tasks.push(send(&app, "alice", THINGS));
    }
    queued(&d, "global-default", 10).await;
    // bob arrives last.
    tasks.push(send(&app, "bob", THINGS));
    queued(&d, "global-default", 11).await;
    // First come, first served would start bob twelfth; fair queuing starts him within
    // alice's hand of queues (6) at most.
    let mut order = Vec::new();
    while order.len() < 11 {
        tokio::time::advance(Duration::from_secs(1)).await;
        release.add_permits(1);
        order.push(started.recv().await.unwrap());
    }
    let bob = order.iter().position(|u| u == "bob").unwrap();
    assert!(
        bob < 6,
        "bob started after {bob} of alice's queued requests: {order:?}"
    );
    release.add_permits(2);
    for t in tasks {
        assert_eq!(t.await.unwrap().0, StatusCode::OK);
    }
    let labels = "flow_schema=\"global-default\",priority_level=\"global-default\"";
    assert_eq!(
        metric(
            &d,
            "apiserver_flowcontrol_dispatched_requests_total",
            labels
        ),
        13
    );
    assert_eq!(
        metric(
            &d,
            "apiserver_flowcontrol_current_executing_requests",
            labels
        ),
        0
    );
}

/// A level of one seat and one queue of two for `alice`, under a schema of its own.
fn tight_configuration(d: &Dispatcher) -> (FlowSchema, PriorityLevelConfiguration) {
    let mut level = PriorityLevelConfiguration::default();
    level.metadata.name = "tight".into();
    level.metadata.uid = "uid-of-tight".into();
    level.spec = PriorityLevelSpec {
        type_: LIMITED.into(),
        limited: Some(LimitedPriorityLevel {
            nominal_concurrency_shares: Some(1),
            limit_response: LimitResponse {
                type_: QUEUE.into(),
                queuing: Some(QueuingConfiguration {
                    queues: 1,
                    hand_size: 1,
                    queue_length_limit: 2,
                }),
            },
            lendable_percent: None,
            borrowing_limit_percent: None,
        }),
        exempt: None,
    };
    // catch-all's rules, for alice alone, at a precedence below global-default's.
    let mut schema = bootstrap::mandatory_flow_schemas().remove(1);
    schema.metadata.name = "alice".into();
    schema.metadata.uid = "uid-of-alice".into();
    schema.spec.priority_level_configuration.name = "tight".into();
    schema.spec.matching_precedence = 500;
    schema.spec.rules[0].subjects = vec![Subject {
        kind: "User".into(),
        user: Some(Named {
            name: "alice".into(),
        }),
        ..Subject::default()
    }];
    let mut schemas = bootstrap::suggested_flow_schemas();
    schemas.push(schema.clone());
    let mut levels = bootstrap::suggested_priority_levels();
    levels.push(level.clone());
    d.apply(schemas, levels);
    (schema, level)
}

#[tokio::test]
async fn past_the_queue_limit_the_answer_is_429_with_retry_after() {
    let d = small_dispatcher();
    tight_configuration(&d);
    let (app, mut started, release) = app(d.clone());
    let running = send(&app, "alice", THINGS);
    assert_eq!(started.recv().await.unwrap(), "alice");
    let waiting = [send(&app, "alice", THINGS), send(&app, "alice", THINGS)];
    queued(&d, "alice", 2).await;
    // The queue is full: refused at once, with the headers that say why.
    let (code, headers) = send(&app, "alice", THINGS).await.unwrap();
    assert_eq!(code, StatusCode::TOO_MANY_REQUESTS);
    assert_eq!(headers["retry-after"], "1");
    assert_eq!(headers[FLOW_SCHEMA_UID], "uid-of-alice");
    assert_eq!(headers[PRIORITY_LEVEL_UID], "uid-of-tight");
    // Another user is in another level, unaffected.
    let bob = send(&app, "bob", THINGS);
    assert_eq!(started.recv().await.unwrap(), "bob");
    release.add_permits(4);
    let (code, headers) = bob.await.unwrap();
    assert_eq!(code, StatusCode::OK);
    assert_ne!(headers[FLOW_SCHEMA_UID], "uid-of-alice");
    assert_eq!(running.await.unwrap().0, StatusCode::OK);
    for w in waiting {
        assert_eq!(w.await.unwrap().0, StatusCode::OK);
    }
    let reason = |r: &str| {
        metric(
            &d,
            "apiserver_flowcontrol_rejected_requests_total",
            &format!("flow_schema=\"alice\",priority_level=\"tight\",reason=\"{r}\""),
        )
    };
    assert_eq!(reason("queue-full"), 1);
}

#[tokio::test(start_paused = true)]
async fn a_request_waiting_past_the_limit_is_429() {
    let d = small_dispatcher();
    tight_configuration(&d);
    d.set_limits(13, Duration::from_secs(5));
    let (app, mut started, release) = app(d.clone());
    let running = send(&app, "alice", THINGS);
    assert_eq!(started.recv().await.unwrap(), "alice");
    // Waits 5 s (paused clock: at once), then gives up.
    let (code, headers) = send(&app, "alice", THINGS).await.unwrap();
    assert_eq!(code, StatusCode::TOO_MANY_REQUESTS);
    assert_eq!(headers["retry-after"], "1");
    release.add_permits(1);
    assert_eq!(running.await.unwrap().0, StatusCode::OK);
    assert_eq!(
        metric(
            &d,
            "apiserver_flowcontrol_rejected_requests_total",
            "reason=\"time-out\""
        ),
        1
    );
    assert_eq!(
        metric(
            &d,
            "apiserver_flowcontrol_current_inqueue_requests",
            "flow_schema=\"alice\""
        ),
        0
    );
}

#[tokio::test]
async fn health_paths_are_never_refused() {
    let d = small_dispatcher();
    tight_configuration(&d);
    let (app, mut started, release) = app(d.clone());
    let mut tasks = vec![send(&app, "alice", THINGS)];
    started.recv().await.unwrap();
    tasks.extend([send(&app, "alice", THINGS), send(&app, "alice", THINGS)]);
    queued(&d, "alice", 2).await;
    assert_eq!(
        send(&app, "alice", THINGS).await.unwrap().0,
        StatusCode::TOO_MANY_REQUESTS
    );
    // alice's level is full, and so is her queue: her probes still run, at once.
    for path in ["/healthz", "/readyz", "/livez", "/readyz/ping"] {
        let (code, headers) = send(&app, "alice", path).await.unwrap();
        assert_eq!(code, StatusCode::OK, "{path}");
        assert!(!headers.contains_key(FLOW_SCHEMA_UID));
    }
    release.add_permits(3);
    for t in tasks {
        assert_eq!(t.await.unwrap().0, StatusCode::OK);
    }
}

/// `method path` as carol, in a task, like [`send`].
fn send_method(
    app: &Router,
    method: http::Method,
    path: &str,
) -> tokio::task::JoinHandle<(StatusCode, http::HeaderMap)> {
    let mut req = Request::builder()
        .method(method)
        .uri(path)
        .body(Body::empty())
        .unwrap();
    req.extensions_mut().insert(user("carol"));
    let app = app.clone();
    tokio::spawn(async move {
        let resp = app.oneshot(req).await.unwrap();
        (resp.status(), resp.headers().clone())
    })
}

#[tokio::test]
async fn with_priority_and_fairness_off_the_plain_limits_refuse_at_once() {
    use http::Method;
    let (started, mut started_rx) = mpsc::unbounded_channel();
    let release = Arc::new(Semaphore::new(0));
    let gate = Gate {
        started,
        release: release.clone(),
    };
    // Two reads and one write at once (`--max-requests-inflight=2`,
    // `--max-mutating-requests-inflight=1`).
    let limits = Arc::new(MaxInFlight::new(2, 1));
    let app = Router::new()
        .route(THINGS, get(held).post(held))
        .route("/healthz", get(ok))
        .with_state(gate)
        .layer(layer_fn(move |inner| Layered::new(limits.clone(), inner)));
    let reads = [
        send_method(&app, Method::GET, THINGS),
        send_method(&app, Method::GET, THINGS),
    ];
    let write = send_method(&app, Method::POST, THINGS);
    for _ in 0..3 {
        started_rx.recv().await.unwrap();
    }
    // A third read and a second write are refused at once, not queued.
    for method in [Method::GET, Method::POST] {
        let refused = tokio::time::timeout(
            Duration::from_secs(10),
            send_method(&app, method.clone(), THINGS),
        );
        let (code, headers) = refused.await.expect("answered at once, not held").unwrap();
        assert_eq!(code, StatusCode::TOO_MANY_REQUESTS, "{method}");
        assert_eq!(headers["retry-after"], "1", "{method}");
    }
    // The health paths are not counted.
    let (code, _) = send_method(&app, Method::GET, "/healthz").await.unwrap();
    assert_eq!(code, StatusCode::OK);
    // Once they finish, their places are free again.
    release.add_permits(3);
    for r in reads {
        assert_eq!(r.await.unwrap().0, StatusCode::OK);
    }
    assert_eq!(write.await.unwrap().0, StatusCode::OK);
    let next = [
        send_method(&app, Method::GET, THINGS),
        send_method(&app, Method::GET, THINGS),
        send_method(&app, Method::POST, THINGS),
    ];
    for _ in 0..3 {
        started_rx.recv().await.unwrap();
    }
    release.add_permits(3);
    for r in next {
        assert_eq!(r.await.unwrap().0, StatusCode::OK);
    }
}
