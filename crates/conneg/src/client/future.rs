//! [`ResponseFuture`]: what [`ContentNegotiation`](super::ContentNegotiation) returns.

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use http::Response;

use super::Error;

type Boxed<B> = Pin<Box<dyn Future<Output = Result<Response<B>, Error>> + Send>>;

/// The response future of [`ContentNegotiation`](super::ContentNegotiation): one request, or
/// two when a 415 led to a retry. Boxed, because the retry awaits the inner service's
/// readiness and a second call in one async block.
pub struct ResponseFuture<B> {
    inner: Boxed<B>,
}

impl<B> ResponseFuture<B> {
    pub(crate) fn new(inner: Boxed<B>) -> Self {
        ResponseFuture { inner }
    }
}

impl<B> fmt::Debug for ResponseFuture<B> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ResponseFuture").finish_non_exhaustive()
    }
}

impl<B> Future for ResponseFuture<B> {
    type Output = Result<Response<B>, Error>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        self.inner.as_mut().poll(cx)
    }
}
