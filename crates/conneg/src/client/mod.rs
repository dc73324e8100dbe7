//! The client side: prefer CBOR, fall back on 415 per (method, resource), decode whatever the
//! server chose.
//!
//! [`ContentNegotiationLayer`] wraps any `tower::Service<http::Request<Full<Bytes>>>` — for
//! instance hyper-util's legacy `Client` — into a service of `http::Request<`[`ClientBody`]`>`
//! that:
//!
//! * sets `Accept` from the [`Gates`] (default `application/cbor;q=1, application/json;q=0.9`)
//!   when the request has none;
//! * encodes the body in the preferred media type of its family (CBOR, or
//!   `application/apply-patch+cbor` for server-side apply);
//! * on a **415**, picks the best type of the family that the 415's `Accept` (`Accept-Patch` for
//!   PATCH) offers — JSON (`application/apply-patch+yaml` for apply) when it offers nothing, as
//!   Kubernetes' 415 does — re-encodes the value and retries **once**, then remembers the
//!   choice for that (server, method, resource) in a shared [`FallbackMemory`], so later
//!   requests go straight to it while other (method, resource) pairs keep trying CBOR;
//! * on a **429** with `Retry-After` (the server's overload protection), waits and sends the
//!   request again, within the bounds of [`RetryAfter`] (10 retries, waits of 10 s at most);
//! * records what happened in an [`Exchange`] in the response extensions.
//!
//! client-go, by comparison, does not retry the failing request, ignores the 415's `Accept`,
//! and switches the whole `RESTClient` to JSON (and never its apply requests).
//!
//! [`Client`] is a small typed client on top (get, list, create, update, apply, patch,
//! delete, watch) whose errors carry the server's [`Status`];
//! [`read_response`] decodes any response by its `Content-Type`, and watch responses become
//! a `Stream` of [`WatchEvent`](crate::WatchEvent)s through [`WatchStream`].
//!
//! ```no_run
//! # async fn run() -> Result<(), conneg::client::Error> {
//! use conneg::client::{Client, ContentNegotiationLayer, Gates};
//! use serde_json::{Value, json};
//!
//! let client = Client::builder("http://127.0.0.1:8080")?
//!     .layer(ContentNegotiationLayer::new().gates(Gates::from_env()))
//!     .build();
//! let coll = "/apis/wardle.example.com/v1beta1/namespaces/default/flunders";
//! let created: Value = client.create(coll, &json!({"metadata": {"name": "a"}})).await?;
//! let read: Value = client.get(&format!("{coll}/a")).await?;
//! assert_eq!(created["metadata"]["uid"], read["metadata"]["uid"]);
//! # Ok(()) }
//! ```
//!
//! The layer on its own, over hyper-util (any `tower::Service` of
//! `http::Request<Full<Bytes>>` works the same way):
//!
//! ```no_run
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! use std::time::Duration;
//!
//! use bytes::Bytes;
//! use conneg::client::{ClientBody, ContentNegotiationLayer, Exchange, FallbackMemory, Gates, read_response};
//! use http::Request;
//! use http_body_util::Full;
//! use hyper_util::client::legacy::Client;
//! use hyper_util::rt::TokioExecutor;
//! use tower::{ServiceBuilder, ServiceExt};
//!
//! let http = Client::builder(TokioExecutor::new()).build_http::<Full<Bytes>>();
//! let service = ServiceBuilder::new()
//!     .layer(
//!         ContentNegotiationLayer::new()
//!             .gates(Gates::from_env())
//!             .memory(FallbackMemory::with_ttl(Duration::from_secs(600))),
//!     )
//!     .service(http);
//!
//! let request = Request::post("http://127.0.0.1:8080/apis/wardle.example.com/v1beta1/namespaces/default/flunders")
//!     .body(ClientBody::object(&serde_json::json!({"metadata": {"name": "a"}}))?)?;
//! let response = service.clone().oneshot(request).await?;
//! if let Some(fallback) = Exchange::of(&response).and_then(|x| x.fallback.as_ref()) {
//!     eprintln!("415 for {}, sent {} instead", fallback.from, fallback.to);
//! }
//! let created: serde_json::Value = read_response(response).await?;
//! # let _ = created; Ok(()) }
//! ```
//!
//! See `docs/client.md` for the fallback rules in full.

mod fallback;
mod future;
mod gates;
mod layer;
mod memory;
mod retry;
mod service;
mod typed;
mod watch;

use std::fmt;

use bytes::Bytes;
use http::header::CONTENT_TYPE;
use http::{Response, StatusCode};
use http_body_util::BodyExt;
use serde::de::DeserializeOwned;

use crate::codec::{BoxError, Codec};
use crate::field_validation::FieldValidation;
use crate::headers::media_type::MediaRange;
use crate::status::{Status, StatusReason};

pub use fallback::ClientBody;
pub use future::ResponseFuture;
pub use gates::{ENV_ALLOW_CBOR, ENV_PREFER_CBOR, Gates};
pub use layer::{ACCEPT_ALLOW_CBOR, ACCEPT_JSON, ACCEPT_PREFER_CBOR, ContentNegotiationLayer};
pub use memory::{FallbackMemory, Remembered, ResourceKey};
pub use retry::RetryAfter;
pub use service::ContentNegotiation;
pub use typed::{Client, ClientBuilder, HttpService, Reply};
pub use watch::{StreamFormat, WatchDecoder, WatchError, WatchErrorKind, WatchStream};

/// What the layer did for one request, in the response extensions.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Exchange {
    /// The (server, method, resource) the request belongs to.
    pub key: ResourceKey,
    /// The `Accept` header sent.
    pub accept: Option<String>,
    /// The `Content-Type` of the body of the request that produced this response (after any
    /// fallback); `None` without a body.
    pub content_type: Option<&'static str>,
    /// Whether the first `Content-Type` came from the fallback memory.
    pub remembered: bool,
    /// The 415 fallback made for this request, if any.
    pub fallback: Option<Fallback>,
    /// The final response status.
    pub status: StatusCode,
    /// The final response's `Content-Type`.
    pub response_content_type: Option<String>,
}

impl Exchange {
    /// The exchange the layer recorded on `response`, if it went through the layer.
    pub fn of<B>(response: &Response<B>) -> Option<&Exchange> {
        response.extensions().get::<Exchange>()
    }
}

/// A 415 fallback: what failed, what was sent instead, and what the 415 offered.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Fallback {
    /// The media type the server refused.
    pub from: String,
    /// The media type of the retry.
    pub to: String,
    /// The 415's `Accept-Patch`/`Accept` header; `None` when it had none (Kubernetes).
    pub offered: Option<String>,
}

/// A client error.
#[derive(Debug)]
#[non_exhaustive]
pub enum Error {
    /// The server answered with an error; this is its `Status` (or one built from the HTTP
    /// status when the body was not a `Status`). Boxed: a `Status` is large and errors are rare.
    Status(Box<Status>),
    /// The request could not be sent or the response not received.
    Transport(BoxError),
    /// A request body could not be encoded.
    Encode(String),
    /// A response body could not be decoded.
    Decode(String),
    /// The request could not be built (bad server URL or path).
    Request(String),
    /// A watch stream failed.
    Watch(WatchError),
}

impl Error {
    pub(crate) fn transport(e: impl Into<BoxError>) -> Self {
        Error::Transport(e.into())
    }

    /// The server's `Status`, for [`Error::Status`].
    pub fn status(&self) -> Option<&Status> {
        match self {
            Error::Status(s) => Some(s),
            _ => None,
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Status(s) => f.write_str(&s.message),
            Error::Transport(e) => {
                write!(f, "request failed: {e}")?;
                let mut source = e.source();
                while let Some(s) = source {
                    write!(f, ": {s}")?;
                    source = s.source();
                }
                Ok(())
            }
            Error::Encode(m) => write!(f, "cannot encode the request body: {m}"),
            Error::Decode(m) => write!(f, "cannot decode the response: {m}"),
            Error::Request(m) => write!(f, "invalid request: {m}"),
            Error::Watch(e) => write!(f, "watch failed: {e}"),
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Error::Status(s) => Some(&**s),
            Error::Watch(e) => Some(e),
            _ => None,
        }
    }
}

impl From<WatchError> for Error {
    fn from(e: WatchError) -> Self {
        Error::Watch(e)
    }
}

/// The codec of a response `Content-Type`: CBOR for `application/cbor`, JSON for
/// `application/json` or no `Content-Type`; `None` for anything else.
pub fn response_codec(content_type: Option<&str>) -> Option<Codec> {
    let Some(ct) = content_type else {
        return Some(Codec::Json);
    };
    let range = MediaRange::parse(ct)?;
    if range.essence_eq("application/cbor") {
        Some(Codec::Cbor)
    } else if range.essence_eq("application/json") {
        Some(Codec::Json)
    } else {
        None
    }
}

/// Decodes a response body by its `Content-Type` ([`response_codec`]). Unknown fields are ignored, as
/// client-go does; the rest of the CBOR profile is enforced.
pub fn decode_response_body<T: DeserializeOwned>(
    content_type: Option<&str>,
    body: &[u8],
) -> Result<T, Error> {
    let codec = response_codec(content_type).ok_or_else(|| {
        Error::Decode(format!(
            "unsupported Content-Type {:?}",
            content_type.unwrap_or_default()
        ))
    })?;
    codec
        .decode::<T>(body, FieldValidation::Ignore)
        .map(|d| d.value)
        .map_err(|e| Error::Decode(format!("{codec}: {e}")))
}

/// Reads a whole response and decodes it by its `Content-Type` into `T`; a non-2xx response
/// becomes [`Error::Status`].
pub async fn read_response<T, B>(response: Response<B>) -> Result<T, Error>
where
    T: DeserializeOwned,
    B: http_body::Body,
    B::Error: Into<BoxError>,
{
    let (parts, body) = response.into_parts();
    let bytes = body
        .collect()
        .await
        .map_err(|e| Error::Transport(e.into()))?
        .to_bytes();
    let content_type = parts
        .headers
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok());
    if !parts.status.is_success() {
        let status = error_status(parts.status, content_type, &bytes);
        return Err(Error::Status(Box::new(status)));
    }
    decode_response_body(content_type, &bytes)
}

/// The `Status` of an error response: its body if that is a `Status`, else one made from the
/// HTTP status and the body text.
pub(crate) fn error_status(code: StatusCode, content_type: Option<&str>, body: &Bytes) -> Status {
    if let Ok(status) = decode_response_body::<Status>(content_type, body)
        && status.kind == "Status"
    {
        return status;
    }
    let reason = match code {
        StatusCode::BAD_REQUEST => StatusReason::BadRequest,
        StatusCode::UNAUTHORIZED => StatusReason::Unauthorized,
        StatusCode::FORBIDDEN => StatusReason::Forbidden,
        StatusCode::NOT_FOUND => StatusReason::NotFound,
        StatusCode::METHOD_NOT_ALLOWED => StatusReason::MethodNotAllowed,
        StatusCode::NOT_ACCEPTABLE => StatusReason::NotAcceptable,
        StatusCode::CONFLICT => StatusReason::Conflict,
        StatusCode::GONE => StatusReason::Gone,
        StatusCode::PAYLOAD_TOO_LARGE => StatusReason::RequestEntityTooLarge,
        StatusCode::UNSUPPORTED_MEDIA_TYPE => StatusReason::UnsupportedMediaType,
        StatusCode::UNPROCESSABLE_ENTITY => StatusReason::Invalid,
        StatusCode::TOO_MANY_REQUESTS => StatusReason::TooManyRequests,
        StatusCode::GATEWAY_TIMEOUT => StatusReason::Timeout,
        _ => StatusReason::InternalError,
    };
    let text = String::from_utf8_lossy(body);
    let message = if text.trim().is_empty() {
        format!(
            "the server responded with {code}{}",
            code.canonical_reason()
                .map(|r| format!(" ({r})"))
                .unwrap_or_default()
        )
    } else {
        text.trim().to_owned()
    };
    Status::failure(code, reason, message)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decodes_by_content_type() {
        let v: serde_json::Value =
            decode_response_body(Some("application/json; charset=utf-8"), br#"{"a":1}"#).unwrap();
        assert_eq!(v["a"], 1);
        let cbor = Codec::Cbor.to_bytes(&serde_json::json!({"a": 1})).unwrap();
        let v: serde_json::Value = decode_response_body(Some("application/cbor"), &cbor).unwrap();
        assert_eq!(v["a"], 1);
        let v: serde_json::Value = decode_response_body(None, b"[1]").unwrap();
        assert_eq!(v[0], 1);
        assert!(matches!(
            decode_response_body::<serde_json::Value>(Some("application/yaml"), b"a: 1"),
            Err(Error::Decode(_))
        ));
    }

    #[test]
    fn error_status_from_body_or_code() {
        let body = Status::not_found("g", "things", "x").encode(&Codec::Cbor, false);
        let s = error_status(StatusCode::NOT_FOUND, Some("application/cbor"), &body);
        assert_eq!(s.reason, Some(StatusReason::NotFound));
        assert_eq!(s.message, r#"things.g "x" not found"#);
        let s = error_status(
            StatusCode::BAD_GATEWAY,
            Some("text/plain"),
            &Bytes::from_static(b"upstream down\n"),
        );
        assert_eq!(s.code, 502);
        assert_eq!(s.message, "upstream down");
    }
}
