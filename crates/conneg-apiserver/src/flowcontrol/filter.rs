//! The filter (Kubernetes' `WithPriorityAndFairness`): after authentication, every request
//! is classified into a flow schema and a flow, costed in seats, and admitted into its
//! priority level; a request that cannot be admitted is answered 429 with `Retry-After`.
//! The response carries `X-Kubernetes-PF-FlowSchema-UID` and
//! `X-Kubernetes-PF-PriorityLevel-UID`. `/healthz`, `/livez` and `/readyz` pass untouched.
//!
//! A request holds its seats until its response body has been sent (a LIST is paid for
//! while it is encoded and written); a watch holds them until its response starts, then
//! runs without a seat, as Kubernetes does once a watch is initialized.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use axum::body::Body;
use axum::extract::Request;
use axum::response::{IntoResponse, Response};
use bytes::Bytes;
use conneg::Status;
use http::HeaderName;
use http_body::Frame;

use super::dispatcher::Dispatcher;
use super::work_estimate;
use crate::auth::{Attributes, UserInfo};
use crate::middleware::{Inner, Middleware, Next};

/// `X-Kubernetes-PF-FlowSchema-UID`.
pub(crate) const FLOW_SCHEMA_UID: HeaderName =
    HeaderName::from_static("x-kubernetes-pf-flowschema-uid");
/// `X-Kubernetes-PF-PriorityLevel-UID`.
pub(crate) const PRIORITY_LEVEL_UID: HeaderName =
    HeaderName::from_static("x-kubernetes-pf-prioritylevel-uid");

/// What a client is told to wait before it retries a rejected request, in seconds.
pub(crate) const RETRY_AFTER_SECONDS: i32 = 1;

/// The health paths, never queued nor rejected (a probe must see the server as it is).
pub(crate) fn is_probe(path: &str) -> bool {
    ["/healthz", "/livez", "/readyz"].iter().any(|p| {
        path.strip_prefix(p)
            .is_some_and(|rest| rest.is_empty() || rest.starts_with('/'))
    })
}

/// Kubernetes' answer to a request refused for overload.
pub(crate) fn too_many_requests() -> Response {
    Status::too_many_requests(
        "Too many requests, please try again later.",
        RETRY_AFTER_SECONDS,
    )
    .into_response()
}

/// The filter: classified, costed, admitted (or refused) by `dispatcher`.
impl Middleware for Arc<Dispatcher> {
    fn run<S: Inner>(self, req: Request, next: Next<S>) -> impl Future<Output = Response> + Send {
        layer(self, req, next)
    }
}

async fn layer<S: Inner>(d: Arc<Dispatcher>, req: Request, next: Next<S>) -> Response {
    if is_probe(req.uri().path()) {
        return next.run(req).await;
    }
    // Read by authentication already, when it runs first.
    let read;
    let attrs = match req.extensions().get::<Attributes>() {
        Some(a) => a,
        None => {
            read = Attributes::from_request(req.method(), req.uri().path(), req.uri().query());
            &read
        }
    };
    let anonymous;
    let user = match req.extensions().get::<UserInfo>() {
        Some(u) => u,
        None => {
            anonymous = UserInfo::anonymous();
            &anonymous
        }
    };
    let Some(classified) = d.classify(user, attrs) else {
        return next.run(req).await;
    };
    let c = classified.classifier();
    let estimate =
        work_estimate::estimate(attrs, req.uri().query(), &d.counts, c.level.max_seats());
    let headers = [
        (FLOW_SCHEMA_UID, c.uid.clone()),
        (PRIORITY_LEVEL_UID, c.level.uid.clone()),
    ];
    let admitted = c
        .level
        .admit(
            classified.flow,
            estimate.seats,
            &c.stats,
            classified.queue_wait(),
        )
        .await;
    let mut resp = match admitted {
        Err(why) => {
            tracing::debug!(
                flow_schema = %c.schema.metadata.name,
                priority_level = %c.level.name,
                ?why,
                "rejected by priority and fairness"
            );
            too_many_requests()
        }
        Ok(permit) => {
            let resp = next.run(req).await;
            if estimate.long_running {
                drop(permit);
                resp
            } else {
                hold(resp, permit)
            }
        }
    };
    resp.headers_mut().extend(headers);
    resp
}

/// A response body holding its request's seats until it is dropped (sent, or abandoned).
pub(crate) struct Held<P> {
    body: Body,
    _permit: P,
}

/// `resp` with `permit` released once its body is sent or dropped.
pub(crate) fn hold<P: Unpin + Send + 'static>(resp: Response, permit: P) -> Response {
    resp.map(|body| {
        Body::new(Held {
            body,
            _permit: permit,
        })
    })
}

impl<P: Unpin + Send + 'static> http_body::Body for Held<P> {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, axum::Error>>> {
        Pin::new(&mut self.body).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> http_body::SizeHint {
        self.body.size_hint()
    }
}
