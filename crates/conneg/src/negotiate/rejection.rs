//! [`Rejection`]: an error conneg produced for a request, and how it becomes a response — a
//! Kubernetes `Status`, an RFC 9457 [`Problem`], or whatever the service's own
//! [error mapping](crate::NegotiateLayer::map_errors) makes of it.

use std::fmt;
use std::sync::Arc;

use bytes::Bytes;
use http::header::{ACCEPT, CONTENT_TYPE};
use http::{HeaderMap, HeaderValue, Response};
use http_body_util::Full;
use serde::Serialize;

use crate::codec::Codec;
use crate::negotiate::rules::ACCEPT_PATCH;
use crate::problem::Problem;
use crate::profile::Profile;
use crate::status::Status;

type MapFn = dyn Fn(&Rejection) -> Response<Bytes> + Send + Sync;

/// How a route writes its errors: its profile's format, or the service's own mapping. Cloned
/// into every [`Negotiated`](crate::Negotiated) and [`Rejection`] (a pointer copy).
#[derive(Clone, Default)]
pub(crate) struct ErrorStyle {
    pub(crate) profile: Profile,
    map: Option<Arc<MapFn>>,
}

impl ErrorStyle {
    pub(crate) fn with_map(
        mut self,
        map: impl Fn(&Rejection) -> Response<Bytes> + Send + Sync + 'static,
    ) -> Self {
        self.map = Some(Arc::new(map));
        self
    }

    /// Whether a `Status` body (compact JSON) goes out as it is: the Kubernetes format, no
    /// mapping.
    pub(crate) fn is_status(&self) -> bool {
        self.profile == Profile::Kubernetes && self.map.is_none()
    }
}

impl fmt::Debug for ErrorStyle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ErrorStyle")
            .field("profile", &self.profile)
            .field("mapped", &self.map.is_some())
            .finish()
    }
}

/// A request refused before the handler could use it: by negotiation (406, 415, 413, 400), or
/// by an extractor that could not read or decode the body (`conneg::axum::Conneg<T>` and
/// `Patch`: 400, 413, 415) or its path and query (`conneg::axum::Path`, `conneg::axum::Query`).
/// It holds what went wrong (as a `Status`: code, reason, message), the negotiated codec, and
/// the extra headers (`Accept`, `Accept-Patch`) that go with it. As a response it is a
/// [`Problem`] (standard profile), a `Status` (Kubernetes profile), or what the route's
/// [`map_errors`](crate::NegotiateLayer::map_errors) makes of it, in the negotiated format,
/// always with those headers. Like axum's `JsonRejection`, a handler taking
/// `Result<Conneg<T>, Rejection>` can look at it before answering:
///
/// ```
/// use conneg::{Negotiator, StatusReason};
/// use http::{Method, Uri, HeaderMap, StatusCode};
///
/// let mut headers = HeaderMap::new();
/// headers.insert("content-type", "text/plain".parse().unwrap());
/// let rejection = Negotiator::new()
///     .negotiate(&Method::POST, &Uri::from_static("/items"), &headers, true)
///     .unwrap_err();
/// assert_eq!(rejection.code(), StatusCode::UNSUPPORTED_MEDIA_TYPE);
/// assert_eq!(rejection.status().reason, Some(StatusReason::UnsupportedMediaType));
/// assert_eq!(rejection.headers()["accept"], "application/json, application/cbor");
/// assert!(rejection.message().contains("application/json"));
/// let response = rejection.into_http_response();
/// assert_eq!(response.headers()["content-type"], "application/problem+json");
/// ```
#[derive(Clone, Debug)]
pub struct Rejection(Box<RejectionInner>);

#[derive(Clone, Debug)]
struct RejectionInner {
    status: Status,
    codec: Codec,
    pretty: bool,
    headers: HeaderMap,
    style: ErrorStyle,
}

impl Rejection {
    pub(crate) fn new(status: Status, codec: Codec, pretty: bool, style: ErrorStyle) -> Self {
        Rejection(Box::new(RejectionInner {
            status,
            codec,
            pretty,
            headers: HeaderMap::new(),
            style,
        }))
    }

    /// What went wrong, as a `Status` (the Kubernetes profile's body).
    pub fn status(&self) -> &Status {
        &self.0.status
    }

    /// What went wrong, as a [`Problem`] (the standard profile's body).
    pub fn problem(&self) -> Problem {
        Problem::from(&self.0.status)
    }

    /// The HTTP status code.
    pub fn code(&self) -> http::StatusCode {
        self.0.status.code()
    }

    /// The message, as the client will read it (`detail` of a problem).
    pub fn message(&self) -> &str {
        &self.0.status.message
    }

    /// Adds what a 415 lists: `Accept` (RFC 9110 §15.5.16) and, for a patch, `Accept-Patch`
    /// (RFC 5789 §3.1).
    pub(crate) fn with_accepted(mut self, accepted: &str, patch: bool) -> Self {
        if let Ok(value) = HeaderValue::from_str(accepted) {
            if patch {
                self.0.headers.insert(ACCEPT_PATCH, value.clone());
            }
            self.0.headers.insert(ACCEPT, value);
        }
        self
    }

    /// The negotiated codec the body is encoded with.
    pub fn codec(&self) -> &Codec {
        &self.0.codec
    }

    /// The profile of the route that refused the request.
    pub fn profile(&self) -> Profile {
        self.0.style.profile
    }

    /// The extra response headers (`Accept`, `Accept-Patch` on 415).
    pub fn headers(&self) -> &HeaderMap {
        &self.0.headers
    }

    /// A response with this rejection's status code and `body` in the negotiated codec (as the
    /// route's profile writes it): what an [error mapping](crate::NegotiateLayer::map_errors)
    /// returns for its own error type. conneg adds [`headers`](Self::headers) afterwards.
    ///
    /// ```
    /// use conneg::NegotiateLayer;
    /// use http::{HeaderMap, Method, Uri};
    ///
    /// #[derive(serde::Serialize)]
    /// struct MyError<'a> { error: &'a str, code: u16 }
    ///
    /// let layer = NegotiateLayer::new().map_errors(|rejection| {
    ///     rejection.respond(&MyError { error: rejection.message(), code: rejection.code().as_u16() })
    /// });
    /// let mut headers = HeaderMap::new();
    /// headers.insert("accept", "text/html".parse().unwrap());
    /// let response = layer.negotiator()
    ///     .negotiate(&Method::GET, &Uri::from_static("/"), &headers, false)
    ///     .unwrap_err()
    ///     .into_http_response();
    /// assert_eq!(response.status(), 406);
    /// assert_eq!(response.headers()["content-type"], "application/json");
    /// ```
    pub fn respond<T: Serialize + ?Sized>(&self, body: &T) -> Response<Bytes> {
        let inner = &*self.0;
        let mut out = Vec::with_capacity(128);
        let body = match inner.codec.encode_as(inner.style.profile, body, &mut out) {
            Ok(()) => Bytes::from(out),
            // The service's own type failed to serialize: say so rather than send nothing.
            Err(err) => Bytes::from(format!("{}: {err}", inner.status.message)),
        };
        let mut response = Response::new(body);
        *response.status_mut() = inner.status.code();
        response
            .headers_mut()
            .insert(CONTENT_TYPE, inner.codec.content_type());
        response
    }

    /// The response: the route's error format (or mapping) with the extra headers, with an
    /// `http_body_util::Full` body.
    pub fn into_http_response(self) -> Response<Full<Bytes>> {
        self.render().map(Full::new)
    }

    /// The response: the route's mapping, or its profile's format; then the extra headers
    /// and `Retry-After`.
    pub(crate) fn render(&self) -> Response<Bytes> {
        let inner = &*self.0;
        let mut response = match &inner.style.map {
            Some(map) => map(self),
            None => match inner.style.profile {
                Profile::Kubernetes => inner.status.to_bytes_response(&inner.codec, inner.pretty),
                Profile::Standard => self.problem().to_response(&inner.codec),
            },
        };
        let headers = response.headers_mut();
        if let Some(retry_after) = inner.status.retry_after() {
            headers.insert(http::header::RETRY_AFTER, retry_after);
        }
        for (name, value) in &inner.headers {
            headers.insert(name, value.clone());
        }
        response
    }
}
