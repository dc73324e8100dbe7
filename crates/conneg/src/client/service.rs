//! [`ContentNegotiation`]: the client middleware.

use std::sync::Arc;
use std::task::{Context, Poll};

use bytes::Bytes;
use http::header::{ACCEPT, CONTENT_TYPE};
use http::{HeaderValue, Request, Response, StatusCode};
use http_body_util::{BodyExt, Full, Limited};
use tower_service::Service;

use super::fallback::{self, ClientBody};
use super::future::ResponseFuture;
use super::layer::Config;
use super::memory::ResourceKey;
use super::{Error, Exchange, Fallback};
use crate::codec::BoxError;

/// How much of a 415's body is read (and dropped) before the retry, so that an HTTP/1
/// connection goes back to the pool rather than being closed. A `Status` is a few hundred bytes.
const DRAIN_LIMIT: usize = 64 * 1024;

/// The client middleware built by [`ContentNegotiationLayer`](super::ContentNegotiationLayer).
///
/// It takes `http::Request<ClientBody>` and calls the inner service with
/// `http::Request<Full<Bytes>>`; the response body is passed through untouched (read it with
/// [`read_response`](super::read_response), or as a watch stream), and the response extensions
/// carry an [`Exchange`] saying what was sent and whether a fallback happened.
#[derive(Clone, Debug)]
pub struct ContentNegotiation<S> {
    inner: S,
    config: Arc<Config>,
}

impl<S> ContentNegotiation<S> {
    pub(crate) fn from_parts(inner: S, config: Arc<Config>) -> Self {
        ContentNegotiation { inner, config }
    }

    /// The inner service.
    pub fn get_ref(&self) -> &S {
        &self.inner
    }

    /// The fallback memory.
    pub fn memory(&self) -> &super::FallbackMemory {
        &self.config.memory
    }

    /// The gates.
    pub fn gates(&self) -> super::Gates {
        self.config.gates
    }
}

impl<S, B> Service<Request<ClientBody>> for ContentNegotiation<S>
where
    S: Service<Request<Full<Bytes>>, Response = Response<B>> + Clone + Send + 'static,
    S::Future: Send,
    S::Error: Into<BoxError>,
    B: http_body::Body + Send + 'static,
    B::Data: Send,
    B::Error: Into<BoxError>,
{
    type Response = Response<B>;
    type Error = Error;
    type Future = ResponseFuture<B>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Error>> {
        self.inner.poll_ready(cx).map_err(Error::transport)
    }

    fn call(&mut self, req: Request<ClientBody>) -> Self::Future {
        // The ready service goes into the future; a clone stays for the next call.
        let clone = self.inner.clone();
        let inner = std::mem::replace(&mut self.inner, clone);
        ResponseFuture::new(Box::pin(exchange(inner, self.config.clone(), req)))
    }
}

async fn exchange<S, B>(
    mut inner: S,
    config: Arc<Config>,
    req: Request<ClientBody>,
) -> Result<Response<B>, Error>
where
    S: Service<Request<Full<Bytes>>, Response = Response<B>>,
    S::Error: Into<BoxError>,
    B: http_body::Body,
    B::Error: Into<BoxError>,
{
    let (mut parts, body) = req.into_parts();
    if !parts.headers.contains_key(ACCEPT) {
        parts.headers.insert(ACCEPT, config.accept());
    }
    let key = ResourceKey::new(&parts.method, &parts.uri);
    let family = body.family();
    let value = body.value();

    let (Some(value), Some((first, remembered))) = (
        value,
        fallback::first_choice(family, config.gates, config.memory.get(&key).as_deref()),
    ) else {
        // No body: nothing to negotiate on the way in.
        parts.headers.remove(CONTENT_TYPE);
        let accept = parts.headers.get(ACCEPT).cloned();
        let res = send(
            &mut inner,
            &config,
            Request::from_parts(parts, Full::default()),
        )
        .await?;
        return Ok(record(res, key, accept, None, false, None));
    };

    let build = |media_type: &'static str| -> Result<Request<Full<Bytes>>, Error> {
        let mut p = parts.clone();
        p.headers
            .insert(CONTENT_TYPE, HeaderValue::from_static(media_type));
        Ok(Request::from_parts(
            p,
            Full::new(fallback::encode(media_type, value)?),
        ))
    };
    let accept = parts.headers.get(ACCEPT).cloned();

    let res = send(&mut inner, &config, build(first)?).await?;
    if res.status() != StatusCode::UNSUPPORTED_MEDIA_TYPE {
        return Ok(record(res, key, accept, Some(first), remembered, None));
    }

    let offered = fallback::offered(&parts.method, res.headers());
    let Some(next) = fallback::after_415(family, config.gates, first, offered.as_deref()) else {
        tracing::debug!(%key, sent = first, ?offered, "conneg client: 415 with nothing else to try");
        return Ok(record(res, key, accept, Some(first), remembered, None));
    };
    tracing::debug!(%key, from = first, to = next, ?offered, "conneg client: 415, retrying once");
    // Read (a bounded amount of) the 415's body so that the connection can be reused.
    let _ = Limited::new(res.into_body(), DRAIN_LIMIT).collect().await;
    std::future::poll_fn(|cx| inner.poll_ready(cx))
        .await
        .map_err(Error::transport)?;
    let res = send(&mut inner, &config, build(next)?).await?;
    if res.status() != StatusCode::UNSUPPORTED_MEDIA_TYPE {
        config.memory.remember(key.clone(), next);
    }
    let fallback = Fallback {
        from: first.to_owned(),
        to: next.to_owned(),
        offered,
    };
    Ok(record(
        res,
        key,
        accept,
        Some(next),
        remembered,
        Some(fallback),
    ))
}

/// Sends `req`, and again after the wait a 429 names, within [`Config::retry`]'s bounds.
async fn send<S, B>(
    inner: &mut S,
    config: &Config,
    req: Request<Full<Bytes>>,
) -> Result<Response<B>, Error>
where
    S: Service<Request<Full<Bytes>>, Response = Response<B>>,
    S::Error: Into<BoxError>,
    B: http_body::Body,
    B::Error: Into<BoxError>,
{
    let again = |req: &Request<Full<Bytes>>| {
        let mut r = Request::new(req.body().clone());
        *r.method_mut() = req.method().clone();
        *r.uri_mut() = req.uri().clone();
        *r.version_mut() = req.version();
        *r.headers_mut() = req.headers().clone();
        r
    };
    let copy = again(&req);
    let mut res = inner.call(req).await.map_err(Error::transport)?;
    let mut retries = 0;
    while let Some(wait) = config.retry.wait(&res, retries) {
        retries += 1;
        tracing::debug!(uri = %copy.uri(), ?wait, retries, "conneg client: 429, retrying after Retry-After");
        let _ = Limited::new(res.into_body(), DRAIN_LIMIT).collect().await;
        tokio::time::sleep(wait).await;
        std::future::poll_fn(|cx| inner.poll_ready(cx))
            .await
            .map_err(Error::transport)?;
        res = inner.call(again(&copy)).await.map_err(Error::transport)?;
    }
    Ok(res)
}

fn record<B>(
    mut res: Response<B>,
    key: ResourceKey,
    accept: Option<HeaderValue>,
    content_type: Option<&'static str>,
    remembered: bool,
    fallback: Option<Fallback>,
) -> Response<B> {
    let response_content_type = res
        .headers()
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    let exchange = Exchange {
        key,
        accept: accept.and_then(|v| v.to_str().ok().map(str::to_owned)),
        content_type,
        remembered,
        fallback,
        status: res.status(),
        response_content_type,
    };
    res.extensions_mut().insert(exchange);
    res
}
