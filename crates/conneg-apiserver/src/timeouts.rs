//! Per-request deadlines: Kubernetes' request timeout (`--request-timeout`), and a deadline for
//! receiving the request body (`--body-read-timeout`).
//!
//! A request that is not long-running (everything but watches) and has not produced its
//! response within the request timeout gets Kubernetes' 504 `Timeout` Status; its handler is
//! dropped, which also ends a compare-and-swap retry loop. A body that has not fully arrived
//! within the body-read timeout (a chunked body that never ends, a `Content-Length` longer
//! than what is sent) fails the read, so the handler answers 400 and the connection closes.

use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use axum::body::Body;
use axum::extract::Request;
use axum::response::{IntoResponse, Response};
use bytes::Bytes;
use conneg::{Status, StatusReason};
use http::StatusCode;
use http_body::{Body as _, Frame};

use crate::middleware::{Inner, Middleware, Next};

/// The two deadlines.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Timeouts {
    /// From the request head to the response head, for requests that are not watches.
    pub request: Duration,
    /// From the request head to the end of its body.
    pub body_read: Duration,
}

impl Default for Timeouts {
    /// 60 s for a request, 30 s to read its body (the serving flags' defaults).
    fn default() -> Self {
        Self {
            request: Duration::from_secs(60),
            body_read: Duration::from_secs(30),
        }
    }
}

/// Kubernetes' answer when a request outlives `--request-timeout` (apiserver's timeout
/// filter: `apierrors.NewTimeoutError("request did not complete within the allotted
/// timeout", 0)`).
pub(crate) fn timeout_status() -> Status {
    Status::failure(
        StatusCode::GATEWAY_TIMEOUT,
        StatusReason::Timeout,
        "Timeout: request did not complete within the allotted timeout",
    )
    .with_details(conneg::StatusDetails::default())
}

/// Whether Kubernetes treats the request as long-running (exempt from the request timeout):
/// a watch (`?watch` other than `0` or `false`, as [`conneg::option_flag`] reads it).
pub(crate) fn is_long_running(req: &Request) -> bool {
    conneg::option_flag(req.uri().query(), "watch")
}

/// The filter: the body's deadline, then the request's.
impl Middleware for Timeouts {
    async fn run<S: Inner>(self, req: Request, next: Next<S>) -> Response {
        let long_running = is_long_running(&req);
        // A request without a body (most reads) has nothing to wait for: no deadline to keep.
        let req = if req.body().is_end_stream() {
            req
        } else {
            let deadline = tokio::time::Instant::now() + self.body_read;
            req.map(|body| {
                Body::new(DeadlineBody {
                    inner: body,
                    deadline,
                    timer: None,
                    limit: self.body_read,
                })
            })
        };
        if long_running {
            return next.run(req).await;
        }
        match tokio::time::timeout(self.request, next.run(req)).await {
            Ok(resp) => resp,
            Err(_) => timeout_status().into_response(),
        }
    }
}

/// The request body, failing once its deadline passes while more is awaited. The timer is
/// made the first time the body is awaited: a body that arrives with its head needs none.
struct DeadlineBody {
    inner: Body,
    deadline: tokio::time::Instant,
    timer: Option<Pin<Box<tokio::time::Sleep>>>,
    limit: Duration,
}

impl http_body::Body for DeadlineBody {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, axum::Error>>> {
        let this = &mut *self;
        match Pin::new(&mut this.inner).poll_frame(cx) {
            Poll::Pending => {
                let deadline = this.deadline;
                let timer = this
                    .timer
                    .get_or_insert_with(|| Box::pin(tokio::time::sleep_until(deadline)));
                if timer.as_mut().poll(cx).is_ready() {
                    return Poll::Ready(Some(Err(axum::Error::new(format!(
                        "the body was not received within {:?}",
                        this.limit
                    )))));
                }
                Poll::Pending
            }
            other => other,
        }
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> http_body::SizeHint {
        self.inner.size_hint()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::middleware::Layered;
    use axum::Router;
    use axum::routing::{get, put};
    use http_body_util::BodyExt as _;
    use tower::ServiceExt as _;
    use tower::layer::layer_fn;

    fn app() -> Router {
        let t = Timeouts {
            request: Duration::from_secs(60),
            body_read: Duration::from_secs(30),
        };
        Router::new()
            .route("/slow", get(std::future::pending::<&'static str>))
            .route(
                "/body",
                put(|body: Body| async move {
                    match conneg::read_body(body, 1 << 20).await {
                        Ok(b) => (StatusCode::OK, b).into_response(),
                        Err(s) => s.into_response(),
                    }
                }),
            )
            .layer(layer_fn(move |inner| Layered::new(t, inner)))
    }

    async fn call(req: Request) -> (StatusCode, serde_json::Value) {
        let resp = app().oneshot(req).await.unwrap();
        let code = resp.status();
        let body = resp.into_body().collect().await.unwrap().to_bytes();
        (code, serde_json::from_slice(&body).unwrap_or_default())
    }

    #[tokio::test(start_paused = true)]
    async fn a_request_past_its_deadline_is_504() {
        let (code, body) = call(Request::get("/slow").body(Body::empty()).unwrap()).await;
        assert_eq!(code, StatusCode::GATEWAY_TIMEOUT);
        assert_eq!(
            body,
            serde_json::json!({"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure",
                "message":"Timeout: request did not complete within the allotted timeout",
                "reason":"Timeout","details":{},"code":504})
        );
    }

    #[tokio::test(start_paused = true)]
    async fn a_watch_is_not_timed_out() {
        let req = Request::get("/slow?watch=true")
            .body(Body::empty())
            .unwrap();
        let pending = app().oneshot(req);
        // Three request timeouts later, the watch is still running.
        let outcome = tokio::time::timeout(Duration::from_secs(180), pending).await;
        assert!(outcome.is_err(), "the watch was answered: {outcome:?}");
    }

    #[tokio::test(start_paused = true)]
    async fn a_body_that_never_ends_fails_the_read() {
        let (_tx, rx) = tokio::sync::mpsc::channel::<Result<Frame<Bytes>, axum::Error>>(1);
        let body = Body::new(http_body_util::StreamBody::new(frames(rx)));
        let (code, body) = call(Request::put("/body").body(body).unwrap()).await;
        assert_eq!(code, StatusCode::BAD_REQUEST);
        assert!(
            body["message"]
                .as_str()
                .unwrap_or("")
                .contains("not received within 30s"),
            "{body}"
        );
    }

    /// The body's deadline runs from the request head, not from when the handler first
    /// reads: a handler that waits 20 s before reading sees the read fail 10 s later.
    #[tokio::test(start_paused = true)]
    async fn the_body_deadline_runs_from_the_request_head() {
        let t = Timeouts {
            request: Duration::from_secs(60),
            body_read: Duration::from_secs(30),
        };
        let app = Router::new()
            .route(
                "/late",
                put(|body: Body| async move {
                    let head = tokio::time::Instant::now();
                    tokio::time::sleep(Duration::from_secs(20)).await;
                    let read = conneg::read_body(body, 1 << 20).await;
                    assert!(read.is_err(), "the body never ends");
                    format!("{}", (tokio::time::Instant::now() - head).as_secs())
                }),
            )
            .layer(layer_fn(move |inner| Layered::new(t, inner)));
        let (_tx, rx) = tokio::sync::mpsc::channel::<Result<Frame<Bytes>, axum::Error>>(1);
        let body = Body::new(http_body_util::StreamBody::new(frames(rx)));
        let resp = app
            .oneshot(Request::put("/late").body(body).unwrap())
            .await
            .unwrap();
        let waited = resp.into_body().collect().await.unwrap().to_bytes();
        assert_eq!(&waited[..], b"30");
    }

    /// A receiver as a stream of frames.
    fn frames(
        mut rx: tokio::sync::mpsc::Receiver<Result<Frame<Bytes>, axum::Error>>,
    ) -> impl futures_core::Stream<Item = Result<Frame<Bytes>, axum::Error>> {
        futures_util::stream::poll_fn(move |cx| rx.poll_recv(cx))
    }
}
