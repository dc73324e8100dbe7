//! The simple limits, when priority and fairness is off (`--enable-priority-and-fairness=false`):
//! Kubernetes' `WithMaxInFlightLimit`. At most `--max-requests-inflight` reads and
//! `--max-mutating-requests-inflight` writes run at once (0: no limit); one more is answered
//! 429 with `Retry-After` at once, without queuing. Watches and the health paths are not
//! counted.

use std::future::Future;
use std::sync::Arc;

use axum::extract::Request;
use axum::response::Response;
use http::Method;
use tokio::sync::Semaphore;

use super::filter::{hold, is_probe, too_many_requests};
use crate::middleware::{Inner, Middleware, Next};

/// The two limits.
#[derive(Debug)]
pub(crate) struct MaxInFlight {
    reads: Option<Arc<Semaphore>>,
    mutating: Option<Arc<Semaphore>>,
}

impl MaxInFlight {
    /// `reads` and `mutating` requests at once (0: unlimited).
    pub(crate) fn new(reads: usize, mutating: usize) -> Self {
        let limit = |n: usize| (n > 0).then(|| Arc::new(Semaphore::new(n)));
        Self {
            reads: limit(reads),
            mutating: limit(mutating),
        }
    }
}

/// The filter: a request over its limit is refused at once.
impl Middleware for Arc<MaxInFlight> {
    fn run<S: Inner>(self, req: Request, next: Next<S>) -> impl Future<Output = Response> + Send {
        layer(self, req, next)
    }
}

async fn layer<S: Inner>(m: Arc<MaxInFlight>, req: Request, next: Next<S>) -> Response {
    if is_probe(req.uri().path()) || crate::timeouts::is_long_running(&req) {
        return next.run(req).await;
    }
    let read_only = matches!(*req.method(), Method::GET | Method::HEAD | Method::OPTIONS);
    let limit = if read_only { &m.reads } else { &m.mutating };
    let Some(limit) = limit else {
        return next.run(req).await;
    };
    match limit.clone().try_acquire_owned() {
        Ok(permit) => hold(next.run(req).await, permit),
        Err(_) => too_many_requests(),
    }
}
