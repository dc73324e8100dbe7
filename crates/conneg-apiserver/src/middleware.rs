//! The filters around the router (in-flight tracking, deadlines, authentication, overload
//! limits, metrics) as plain tower services: a [`Middleware`] is the filter's state and its
//! async function; [`Layered`] runs it in front of the service it wraps.
//!
//! axum's `from_fn` layers, which these replace, cost a request an allocation and a copy of
//! the boxed rest of the chain per layer (each layer clones its boxed inner service, then
//! boxes it again as `Next`), and `Router::layer` puts each of them around every route. A
//! [`Layered`] holds its inner service by type: a request clones it (reference counts, no
//! allocation) and boxes one future per filter.

use std::convert::Infallible;
use std::future::Future;
use std::task::{Context, Poll};

use axum::extract::Request;
use axum::response::Response;
use futures_util::FutureExt as _;
use futures_util::future::BoxFuture;
use tower::{Service, ServiceExt as _};

/// What a filter wraps: a service that answers every request.
pub(crate) trait Inner:
    Service<Request, Response = Response, Error = Infallible, Future: Send> + Send + 'static
{
}

impl<S> Inner for S where
    S: Service<Request, Response = Response, Error = Infallible, Future: Send> + Send + 'static
{
}

/// A filter: its state (cloned per request, so an `Arc` or something as small) and what it
/// does with a request, calling [`Next::run`] to pass it on.
pub(crate) trait Middleware: Clone + Send + Sync + 'static {
    /// Answers `req`, passing it to `next` or not.
    fn run<S: Inner>(self, req: Request, next: Next<S>) -> impl Future<Output = Response> + Send;
}

/// A filter without anything to do passes requests on.
impl<M: Middleware> Middleware for Option<M> {
    async fn run<S: Inner>(self, req: Request, next: Next<S>) -> Response {
        match self {
            Some(m) => m.run(req, next).await,
            None => next.run(req).await,
        }
    }
}

/// The rest of the chain, for one request.
#[derive(Debug)]
pub(crate) struct Next<S> {
    inner: S,
}

impl<S: Inner> Next<S> {
    /// The response of the rest of the chain.
    pub(crate) async fn run(self, req: Request) -> Response {
        match self.inner.oneshot(req).await {
            Ok(resp) => resp,
            Err(never) => match never {},
        }
    }
}

/// `middleware` in front of `inner`.
#[derive(Debug, Clone)]
pub(crate) struct Layered<M, S> {
    middleware: M,
    inner: S,
}

impl<M, S> Layered<M, S> {
    pub(crate) fn new(middleware: M, inner: S) -> Self {
        Self { middleware, inner }
    }
}

impl<M, S> Service<Request> for Layered<M, S>
where
    M: Middleware,
    S: Inner + Clone,
{
    type Response = Response;
    type Error = Infallible;
    type Future = BoxFuture<'static, Result<Response, Infallible>>;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        // The inner service is made ready by `Next::run` (oneshot), when it is called.
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, req: Request) -> Self::Future {
        let next = Next {
            inner: self.inner.clone(),
        };
        self.middleware.clone().run(req, next).map(Ok).boxed()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::Router;
    use axum::body::Body;
    use axum::routing::get;
    use http::{HeaderValue, StatusCode};

    /// Marks the request on the way in and the response on the way out, or answers alone.
    #[derive(Clone)]
    struct Mark(&'static str);

    impl Middleware for Mark {
        async fn run<S: Inner>(self, mut req: Request, next: Next<S>) -> Response {
            if req.uri().path() == "/stop" {
                return StatusCode::IM_A_TEAPOT.into_response();
            }
            let seen = req
                .headers()
                .get("x-seen")
                .map_or(String::new(), |v| format!("{},", v.to_str().unwrap()));
            let seen = HeaderValue::try_from(format!("{seen}{}", self.0)).unwrap();
            req.headers_mut().insert("x-seen", seen);
            let mut resp = next.run(req).await;
            resp.headers_mut()
                .append("x-out", HeaderValue::from_static(self.0));
            resp
        }
    }

    use axum::response::IntoResponse as _;

    async fn echo(req: Request) -> String {
        req.headers()["x-seen"].to_str().unwrap().to_owned()
    }

    #[tokio::test]
    async fn filters_run_outermost_first_and_may_answer_alone() {
        let app = Layered::new(
            Mark("outer"),
            Layered::new(
                None::<Mark>,
                Layered::new(
                    Mark("inner"),
                    Router::new()
                        .route("/", get(echo))
                        .route("/stop", get(echo)),
                ),
            ),
        );
        let resp = app
            .clone()
            .oneshot(Request::new(Body::empty()))
            .await
            .unwrap();
        let out: Vec<_> = resp.headers().get_all("x-out").iter().cloned().collect();
        assert_eq!(out, ["inner", "outer"]);
        let body = axum::body::to_bytes(resp.into_body(), 1024).await.unwrap();
        assert_eq!(&body[..], b"outer,inner");

        let stop = Request::get("/stop").body(Body::empty()).unwrap();
        let resp = app.oneshot(stop).await.unwrap();
        assert_eq!(resp.status(), StatusCode::IM_A_TEAPOT);
        assert!(resp.headers().get("x-out").is_none());
    }
}
