//! [`Negotiated`]: the decision for one request, stored in its extensions by the layer, and the
//! helpers that act on it (decode the body, encode the response).
//!
//! Without axum, a handler reads it from `request.extensions()` and calls
//! [`decode_body`](Negotiated::decode_body) and [`response`](Negotiated::response):
//!
//! ```
//! use conneg::{Codec, Negotiated, Negotiator};
//! use http::{HeaderMap, Method, StatusCode, Uri};
//! use http_body_util::{BodyExt, Full};
//!
//! # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
//! let negotiated = Negotiator::new()
//!     .negotiate(&Method::POST, &Uri::from_static("/items"), &HeaderMap::new(), true)
//!     .unwrap();
//! let body = Full::new(bytes::Bytes::from_static(br#"{"name":"a"}"#));
//! let item: serde_json::Value = negotiated.decode_body(body).await.unwrap().value;
//! let response = negotiated.response(StatusCode::CREATED, &item);
//! assert_eq!(response.headers()["content-type"], "application/json");
//! let bytes = response.into_body().collect().await.unwrap().to_bytes();
//! assert_eq!(bytes, r#"{"name":"a"}"#);
//! # });
//! ```

use std::sync::{Arc, Mutex};

use bytes::Bytes;
use http::header::CONTENT_TYPE;
use http::{HeaderMap, HeaderValue, Response, StatusCode};
use http_body_util::{BodyExt, Full, LengthLimitError, Limited};
use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::codec::{BoxError, Codec, Decoded, EncodeError};
use crate::field_validation::{FieldValidation, warning_header_value};
use crate::headers::params::{Conversion, MediaTypeParams};
use crate::negotiate::rejection::{ErrorStyle, Rejection};
use crate::patch::PatchType;
use crate::profile::Profile;
use crate::status::Status;

/// The format of a request body.
#[derive(Clone, Debug, PartialEq)]
pub enum RequestFormat {
    /// An ordinary body in this codec.
    Codec(Codec),
    /// A PATCH document.
    Patch(PatchType),
}

impl std::fmt::Display for RequestFormat {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RequestFormat::Codec(c) => f.write_str(c.media_type()),
            RequestFormat::Patch(p) => f.write_str(p.media_type()),
        }
    }
}

/// Collects `fieldValidation=Warn` warnings from the decode helpers so the layer can turn them
/// into `Warning` headers. Only allocated for requests that have a body and use `Warn`.
#[derive(Clone, Debug, Default)]
struct WarningSink(Arc<Mutex<Vec<String>>>);

/// What a response's bytes depend on apart from the value encoded: the codec and the
/// profile ([`Negotiated::encoding`]). Equal encodings write equal bytes for equal values.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Encoding {
    codec: EncodingCodec,
    profile: Profile,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum EncodingCodec {
    Json,
    Cbor,
}

impl Encoding {
    /// The bytes between two items of a list in this encoding, as
    /// [`ListEnvelope::separator`](crate::ListEnvelope::separator) has them: `,` in JSON,
    /// none in CBOR (an array's length is in its head).
    ///
    /// ```
    /// use conneg::{Negotiator, Profile};
    /// use http::{HeaderMap, Method, Uri};
    ///
    /// let encoding = |accept: &'static str| {
    ///     let mut headers = HeaderMap::new();
    ///     headers.insert("accept", accept.parse().unwrap());
    ///     Negotiator::new()
    ///         .profile(Profile::Kubernetes)
    ///         .negotiate(&Method::GET, &Uri::from_static("/x"), &headers, false)
    ///         .unwrap()
    ///         .encoding()
    ///         .unwrap()
    /// };
    /// assert_eq!(encoding("application/json").item_separator(), b",");
    /// assert_eq!(encoding("application/cbor").item_separator(), b"");
    /// ```
    pub fn item_separator(self) -> &'static [u8] {
        match self.codec {
            EncodingCodec::Json => b",",
            EncodingCodec::Cbor => b"",
        }
    }
}

/// The negotiated formats of one request.
#[derive(Clone, Debug)]
pub struct Negotiated {
    response: Codec,
    params: MediaTypeParams,
    pretty: bool,
    request: Option<RequestFormat>,
    body_limit: usize,
    field_validation: FieldValidation,
    warnings: Option<WarningSink>,
    errors: ErrorStyle,
}

impl Negotiated {
    pub(crate) fn new(
        response: Codec,
        params: MediaTypeParams,
        pretty: bool,
        request: Option<RequestFormat>,
        body_limit: usize,
        field_validation: FieldValidation,
        errors: ErrorStyle,
    ) -> Self {
        let warnings = (request.is_some() && field_validation == FieldValidation::Warn)
            .then(WarningSink::default);
        Negotiated {
            response,
            params,
            pretty,
            request,
            body_limit,
            field_validation,
            warnings,
            errors,
        }
    }

    /// The route's [`Profile`].
    pub fn profile(&self) -> Profile {
        self.errors.profile
    }

    /// How the route writes errors (used by the layer).
    pub(crate) fn error_style(&self) -> &ErrorStyle {
        &self.errors
    }

    /// The decision the layer stored in a request's extensions.
    pub fn from_extensions(extensions: &http::Extensions) -> Option<&Negotiated> {
        extensions.get()
    }

    /// The codec the response must be encoded with.
    pub fn response_codec(&self) -> &Codec {
        &self.response
    }

    /// The Kubernetes media-type parameters of the winning `Accept` clause.
    pub fn params(&self) -> &MediaTypeParams {
        &self.params
    }

    /// The conversion asked for (`as=Table;...`), already checked against the route's.
    pub fn conversion(&self) -> Option<&Conversion> {
        self.params.conversion.as_ref()
    }

    /// Whether the client asked for the stream form (`stream=watch` or `application/cbor-seq`).
    /// Watch handlers stream regardless; this tells list handlers what was asked.
    pub fn is_stream(&self) -> bool {
        self.params.stream
    }

    /// Whether JSON output should be indented (`pretty=1` in `Accept`, or `?pretty=true`).
    pub fn is_pretty(&self) -> bool {
        self.pretty && matches!(self.response, Codec::Json)
    }

    /// The response `Content-Type` for one object (bare media type, as Kubernetes sends it).
    pub fn content_type(&self) -> HeaderValue {
        self.response.content_type()
    }

    /// The response `Content-Type` for a stream (`application/cbor-seq`,
    /// `application/json;stream=watch`), if the codec has a stream form.
    pub fn stream_content_type(&self) -> Option<HeaderValue> {
        self.response.stream_content_type()
    }

    /// The request body format; `None` when the request has no body.
    pub fn request_format(&self) -> Option<&RequestFormat> {
        self.request.as_ref()
    }

    /// The request body codec, for a non-PATCH body.
    pub fn request_codec(&self) -> Option<&Codec> {
        match &self.request {
            Some(RequestFormat::Codec(c)) => Some(c),
            _ => None,
        }
    }

    /// The patch type of a PATCH body.
    pub fn patch_type(&self) -> Option<PatchType> {
        match &self.request {
            Some(RequestFormat::Patch(p)) => Some(*p),
            _ => None,
        }
    }

    /// The request body limit in bytes.
    pub fn body_limit(&self) -> usize {
        self.body_limit
    }

    /// The effective field validation (query parameter or the route's default).
    pub fn field_validation(&self) -> FieldValidation {
        self.field_validation
    }

    /// Encodes `value` with the response codec, as the profile writes it (CBOR text strings
    /// in the standard profile). (`?` turns the error into a 500 `Status`.)
    pub fn encode<T: Serialize + ?Sized>(&self, value: &T) -> Result<Bytes, EncodeError> {
        let mut out = Vec::with_capacity(256);
        if self.is_pretty() {
            self.response.encode_pretty(value, &mut out)?;
        } else {
            self.response
                .encode_as(self.errors.profile, value, &mut out)?;
        }
        Ok(Bytes::from(out))
    }

    /// Appends `value` to `out` as one item nested in a response the caller frames itself (the
    /// items of a list streamed one by one): the bytes it has inside [`encode`](Self::encode)'s
    /// output of the whole response, so compact JSON, and CBOR as the profile writes it without
    /// the self-described tag. A custom codec encodes the item as a whole document.
    ///
    /// ```
    /// use conneg::Negotiator;
    /// use http::{HeaderMap, Method, Uri};
    ///
    /// let mut headers = HeaderMap::new();
    /// headers.insert("accept", "application/cbor".parse().unwrap());
    /// let n = Negotiator::new()
    ///     .negotiate(&Method::GET, &Uri::from_static("/x"), &headers, false)
    ///     .unwrap();
    /// let mut out = Vec::new();
    /// n.encode_item(&[1u8], &mut out).unwrap();
    /// assert_eq!(out, [0x81, 0x01]);
    /// ```
    pub fn encode_item<T: Serialize + ?Sized>(
        &self,
        value: &T,
        out: &mut Vec<u8>,
    ) -> Result<(), EncodeError> {
        self.response
            .encode_nested_as(self.errors.profile, value, out)
    }

    /// A response with `status`, `Content-Type` and `value` encoded with the response codec.
    /// An encoding failure (a server bug) becomes a 500 `Status`.
    pub fn response<T: Serialize + ?Sized>(
        &self,
        status: StatusCode,
        value: &T,
    ) -> Response<Full<Bytes>> {
        match self.encode(value) {
            Ok(body) => self.encoded_response(status, body),
            Err(err) => self.error_response(&Status::from(err)),
        }
    }

    /// What [`encode`](Self::encode) writes, apart from the value: two decisions with equal
    /// encodings write the same bytes for the same value, so a server may keep a value's
    /// encoded bytes under its encoding and answer later requests with them
    /// ([`encoded_response`](Self::encoded_response), [`nested`](Self::nested)). `None` when
    /// the bytes cannot be reused that way: pretty JSON, or a custom codec (which conneg
    /// cannot compare with another).
    ///
    /// ```
    /// use conneg::{Negotiator, Profile};
    /// use http::{HeaderMap, Method, Uri};
    ///
    /// let decide = |accept: &'static str| {
    ///     let mut headers = HeaderMap::new();
    ///     headers.insert("accept", accept.parse().unwrap());
    ///     Negotiator::new()
    ///         .profile(Profile::Kubernetes)
    ///         .negotiate(&Method::GET, &Uri::from_static("/x"), &headers, false)
    ///         .unwrap()
    /// };
    /// let (json, cbor) = (decide("application/json"), decide("application/cbor"));
    /// assert_eq!(json.encoding(), decide("application/json").encoding());
    /// assert_ne!(json.encoding(), cbor.encoding());
    /// assert_eq!(decide("application/json;pretty=1").encoding(), None);
    /// ```
    pub fn encoding(&self) -> Option<Encoding> {
        let codec = match self.response {
            _ if self.is_pretty() => return None,
            Codec::Json => EncodingCodec::Json,
            Codec::Cbor => EncodingCodec::Cbor,
            Codec::Custom(_) => return None,
        };
        Some(Encoding {
            codec,
            profile: self.errors.profile,
        })
    }

    /// The bytes [`encode_item`](Self::encode_item) writes for a value, within `document`,
    /// the bytes [`encode`](Self::encode) wrote for it: the document without CBOR's
    /// self-described tag. (For a custom codec, the document itself.)
    ///
    /// ```
    /// use conneg::{Negotiator, Profile};
    /// use http::{HeaderMap, Method, Uri};
    ///
    /// let mut headers = HeaderMap::new();
    /// headers.insert("accept", "application/cbor".parse().unwrap());
    /// let n = Negotiator::new()
    ///     .profile(Profile::Kubernetes)
    ///     .negotiate(&Method::GET, &Uri::from_static("/x"), &headers, false)
    ///     .unwrap();
    /// let document = n.encode(&[1u8]).unwrap();
    /// let mut item = Vec::new();
    /// n.encode_item(&[1u8], &mut item).unwrap();
    /// assert_eq!(n.nested(&document), &item[..]);
    /// ```
    pub fn nested<'a>(&self, document: &'a [u8]) -> &'a [u8] {
        match self.response {
            Codec::Cbor => document
                .strip_prefix(&conneg_cbor::SELF_DESCRIBED_PREFIX[..])
                .unwrap_or(document),
            _ => document,
        }
    }

    /// A response with `status`, `Content-Type` and `body`, bytes [`encode`](Self::encode)
    /// wrote for this decision's [`encoding`](Self::encoding) (kept from an earlier request,
    /// say): what [`response`](Self::response) answers for the same value, without encoding
    /// it again.
    pub fn encoded_response(&self, status: StatusCode, body: Bytes) -> Response<Full<Bytes>> {
        let mut response = Response::new(Full::new(body));
        *response.status_mut() = status;
        response
            .headers_mut()
            .insert(CONTENT_TYPE, self.content_type());
        response
    }

    /// Refuses the request with `status`, in the route's error format (a problem, a `Status`,
    /// or the service's mapping) encoded with the response codec.
    pub fn reject(&self, status: Status) -> Rejection {
        Rejection::new(
            status,
            self.response.clone(),
            self.is_pretty(),
            self.errors.clone(),
        )
    }

    /// A response carrying `status` in the route's error format, encoded with the response
    /// codec.
    pub fn error_response(&self, status: &Status) -> Response<Full<Bytes>> {
        self.reject(status.clone()).into_http_response()
    }

    /// Decodes a whole request body with the request codec (JSON if the request had none),
    /// applying the field validation. `Warn` warnings are returned and also recorded for the
    /// layer, which adds them as `Warning` headers. In the standard profile a failure names
    /// the JSON field path, or the format the body seems to be in.
    pub fn decode<T: DeserializeOwned>(&self, body: &[u8]) -> Result<Decoded<T>, Status> {
        let codec = match &self.request {
            Some(RequestFormat::Codec(c)) => c,
            Some(RequestFormat::Patch(p)) if p.is_cbor() => &Codec::Cbor,
            _ => &Codec::Json,
        };
        let decoded = match codec.decode::<T>(body, self.field_validation) {
            Ok(decoded) => decoded,
            Err(err) if self.errors.profile == Profile::Standard => {
                return Err(crate::explain::explain::<T>(codec, body, err).into());
            }
            Err(err) => return Err(err.into()),
        };
        self.warn(decoded.warnings.iter().cloned());
        Ok(decoded)
    }

    /// Records `fieldValidation=Warn` warnings found after decoding (unknown fields a schema
    /// pruned, say) for the layer, which adds them as `Warning` headers; nothing under the
    /// other field validations.
    ///
    /// ```
    /// use conneg::{Negotiator, Profile};
    /// use http::{HeaderMap, Method, Uri};
    ///
    /// let n = Negotiator::new()
    ///     .profile(Profile::Kubernetes)
    ///     .negotiate(&Method::POST, &Uri::from_static("/x?fieldValidation=Warn"), &HeaderMap::new(), true)
    ///     .unwrap();
    /// n.warn([r#"unknown field "spec.foo""#.to_owned()]);
    /// ```
    pub fn warn(&self, warnings: impl IntoIterator<Item = String>) {
        if let Some(sink) = &self.warnings
            && let Ok(mut w) = sink.0.lock()
        {
            w.extend(warnings);
        }
    }

    /// Reads `body` (at most [`body_limit`](Self::body_limit) bytes: 413 beyond) and decodes it.
    pub async fn decode_body<T, B>(&self, body: B) -> Result<Decoded<T>, Status>
    where
        T: DeserializeOwned,
        B: http_body::Body,
        B::Error: Into<BoxError>,
    {
        let bytes = read_body(body, self.body_limit).await?;
        self.decode(&bytes)
    }

    /// Takes the warnings recorded by [`decode`](Self::decode) (used by the layer).
    pub(crate) fn take_warnings(&self) -> Vec<String> {
        match &self.warnings {
            Some(sink) => sink
                .0
                .lock()
                .map(|mut w| std::mem::take(&mut *w))
                .unwrap_or_default(),
            None => Vec::new(),
        }
    }
}

/// Reads and decodes a request body with the negotiated request codec, without axum: the
/// same as [`Negotiated::decode_body`].
pub async fn decode_body<T, B>(negotiated: &Negotiated, body: B) -> Result<Decoded<T>, Status>
where
    T: DeserializeOwned,
    B: http_body::Body,
    B::Error: Into<BoxError>,
{
    negotiated.decode_body(body).await
}

/// Encodes a response with the negotiated response codec, without axum: the same as
/// [`Negotiated::response`].
pub fn encode_response<T: Serialize + ?Sized>(
    negotiated: &Negotiated,
    status: StatusCode,
    value: &T,
) -> Response<Full<Bytes>> {
    negotiated.response(status, value)
}

/// Appends one `Warning: 299 - "..."` header per warning.
pub fn append_warnings(headers: &mut HeaderMap, warnings: &[String]) {
    for w in warnings {
        headers.append(http::header::WARNING, warning_header_value(w));
    }
}

/// Reads a whole body, failing with 413 `RequestEntityTooLarge` as soon as it exceeds `limit`
/// (nothing beyond the limit is buffered) and with 400 if the body errors.
pub async fn read_body<B>(body: B, limit: usize) -> Result<Bytes, Status>
where
    B: http_body::Body,
    B::Error: Into<BoxError>,
{
    match Limited::new(body, limit).collect().await {
        Ok(collected) => Ok(collected.to_bytes()),
        Err(err) if err.is::<LengthLimitError>() => Err(Status::request_entity_too_large(limit)),
        Err(err) => Err(Status::bad_request(format!(
            "unable to read the request body: {err}"
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Negotiator;
    use http::{Method, Uri};

    #[tokio::test]
    async fn read_body_enforces_limit() {
        let body = Full::new(Bytes::from(vec![b' '; 11]));
        let err = read_body(body, 10).await.unwrap_err();
        assert_eq!(err.code(), StatusCode::PAYLOAD_TOO_LARGE);
        let ok = read_body(Full::new(Bytes::from_static(b"0123456789")), 10)
            .await
            .unwrap();
        assert_eq!(ok.len(), 10);
    }

    #[test]
    fn decode_records_warnings_for_the_layer() {
        let n = Negotiator::new()
            .profile(Profile::Kubernetes)
            .negotiate(
                &Method::POST,
                &Uri::from_static("/x"),
                &HeaderMap::new(),
                true,
            )
            .unwrap();
        #[derive(serde::Deserialize)]
        struct A {
            #[allow(dead_code)]
            a: u8,
        }
        let d = n.decode::<A>(br#"{"a":1,"b":2}"#).unwrap();
        assert_eq!(d.warnings, [r#"unknown field "b""#]);
        assert_eq!(n.take_warnings(), d.warnings);
        assert!(n.take_warnings().is_empty());
    }

    #[test]
    fn decode_errors_are_400() {
        let n = Negotiator::new()
            .negotiate(
                &Method::POST,
                &Uri::from_static("/x"),
                &HeaderMap::new(),
                true,
            )
            .unwrap();
        let err = n.decode::<serde_json::Value>(b"{").unwrap_err();
        assert_eq!(err.code(), StatusCode::BAD_REQUEST);
    }

    #[test]
    fn pretty_only_for_json() {
        let uri = Uri::from_static("/x?pretty=1");
        let mut h = HeaderMap::new();
        h.insert(
            http::header::ACCEPT,
            HeaderValue::from_static("application/cbor"),
        );
        let n = Negotiator::new()
            .profile(Profile::Kubernetes)
            .negotiate(&Method::GET, &uri, &h, false)
            .unwrap();
        assert!(!n.is_pretty());
        let n = Negotiator::new()
            .profile(Profile::Kubernetes)
            .negotiate(&Method::GET, &uri, &HeaderMap::new(), false)
            .unwrap();
        assert!(n.is_pretty());
        assert_eq!(
            n.encode(&serde_json::json!({"a": 1})).unwrap(),
            "{\n  \"a\": 1\n}"
        );
    }
}
