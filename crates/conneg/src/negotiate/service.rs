use std::sync::Arc;
use std::task::{Context, Poll};

use bytes::Bytes;
use http::{Request, Response};
use tower_service::Service;

use super::{NegotiateBody, NegotiateLayer, ResponseFuture};
use crate::negotiate::rules::Negotiator;

/// The service produced by [`NegotiateLayer`].
#[derive(Clone, Debug)]
pub struct Negotiate<S> {
    inner: S,
    negotiator: Arc<Negotiator>,
}

impl<S> Negotiate<S> {
    /// Wraps `inner` with the default rules.
    pub fn new(inner: S) -> Self {
        Negotiate {
            inner,
            negotiator: Arc::default(),
        }
    }

    pub(crate) fn from_parts(inner: S, negotiator: Arc<Negotiator>) -> Self {
        Negotiate { inner, negotiator }
    }

    /// A layer with the default rules.
    pub fn layer() -> NegotiateLayer {
        NegotiateLayer::new()
    }

    /// The inner service.
    pub fn get_ref(&self) -> &S {
        &self.inner
    }

    /// The inner service, mutably.
    pub fn get_mut(&mut self) -> &mut S {
        &mut self.inner
    }

    /// Unwraps the inner service.
    pub fn into_inner(self) -> S {
        self.inner
    }
}

impl<S, ReqBody, ResBody> Service<Request<ReqBody>> for Negotiate<S>
where
    S: Service<Request<ReqBody>, Response = Response<ResBody>>,
    ReqBody: http_body::Body,
    ResBody: http_body::Body<Data = Bytes>,
{
    type Response = Response<NegotiateBody<ResBody>>;
    type Error = S::Error;
    type Future = ResponseFuture<S::Future>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, mut req: Request<ReqBody>) -> Self::Future {
        let body = req.body();
        let has_body = !body.is_end_stream() && body.size_hint().exact() != Some(0);
        match self
            .negotiator
            .negotiate(req.method(), req.uri(), req.headers(), has_body)
        {
            Ok(negotiated) => {
                // Costs a callsite check when debug spans are off.
                let span = tracing::debug_span!(
                    "conneg",
                    response = %negotiated.response_codec(),
                    request = tracing::field::Empty,
                    conversion = tracing::field::Empty,
                    stream = negotiated.is_stream(),
                );
                if !span.is_disabled() {
                    if let Some(format) = negotiated.request_format() {
                        span.record("request", tracing::field::display(format));
                    }
                    if let Some(conversion) = negotiated.conversion() {
                        span.record("conversion", tracing::field::display(conversion));
                    }
                }
                req.extensions_mut().insert(negotiated.clone());
                let future = span.in_scope(|| self.inner.call(req));
                ResponseFuture::inner(future, negotiated, span)
            }
            Err(rejection) => ResponseFuture::reject(rejection.into_http_response()),
        }
    }
}
