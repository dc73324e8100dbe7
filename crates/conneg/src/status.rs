//! Kubernetes `Status` objects: the body of every error conneg (and your handlers) return.
//!
//! The field order and omission rules follow `metav1.Status`, so a Kubernetes client decodes
//! them as API errors (`apierrors.IsNotFound(err)` and friends work). A `Status` is encoded in the
//! negotiated format: CBOR if the client accepted it, JSON otherwise.
//!
//! ```
//! use conneg::{Codec, Status, StatusCause, StatusReason};
//!
//! let status = Status::not_found("wardle.example.com", "flunders", "alpha");
//! assert_eq!(status.code(), http::StatusCode::NOT_FOUND);
//! assert_eq!(status.reason, Some(StatusReason::NotFound));
//! assert_eq!(status.message, r#"flunders.wardle.example.com "alpha" not found"#);
//!
//! let json = status.encode(&Codec::Json, false);
//! assert!(json.starts_with(br#"{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure""#));
//!
//! let invalid = Status::invalid("wardle.example.com", "Flunder", "alpha", vec![
//!     StatusCause::new("FieldValueRequired", "Required value", "spec.reference"),
//! ]);
//! assert_eq!(invalid.code().as_u16(), 422);
//! assert_eq!(invalid.message, r#"Flunder.wardle.example.com "alpha" is invalid: spec.reference: Required value"#);
//! ```

use std::borrow::Cow;
use std::fmt;

use bytes::Bytes;
use http::header::{CONTENT_TYPE, RETRY_AFTER};
use http::{HeaderValue, Response, StatusCode};
use http_body_util::Full;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::codec::{Codec, DecodeError, EncodeError};

/// A Kubernetes `Status` (`kind: Status`, `apiVersion: v1`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Status {
    /// Always `Status`.
    pub kind: Cow<'static, str>,
    /// Always `v1`.
    pub api_version: Cow<'static, str>,
    /// List metadata; always present (`{}`), as in Kubernetes, and empty on errors. Its
    /// type is not exported: a server's lists carry their own `metav1.ListMeta`.
    #[serde(default)]
    pub metadata: ListMeta,
    /// `Success` or `Failure`.
    #[serde(default, skip_serializing_if = "str::is_empty")]
    pub status: Cow<'static, str>,
    /// A human-readable description.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub message: String,
    /// A machine-readable reason; `None` is Kubernetes' empty reason.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<StatusReason>,
    /// Extra data about the failure.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub details: Option<StatusDetails>,
    /// The HTTP status code.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub code: i32,
}

fn is_zero(v: &i32) -> bool {
    *v == 0
}

/// `metav1.ListMeta`; empty on error statuses.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ListMeta {
    /// `resourceVersion`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resource_version: Option<String>,
    /// `continue`.
    #[serde(default, rename = "continue", skip_serializing_if = "Option::is_none")]
    pub continue_: Option<String>,
    /// `remainingItemCount`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub remaining_item_count: Option<i64>,
}

/// `metav1.StatusDetails`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StatusDetails {
    /// The name of the resource involved.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub name: String,
    /// The API group of the resource.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub group: String,
    /// The kind (or resource) involved.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub kind: String,
    /// The UID of the resource.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub uid: String,
    /// Field-level causes.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub causes: Vec<StatusCause>,
    /// Seconds the client should wait before retrying; sent as `Retry-After` too.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub retry_after_seconds: i32,
}

/// `metav1.StatusCause`: one field-level problem.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct StatusCause {
    /// The cause type, e.g. `FieldValueInvalid`, `FieldValueRequired`.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub reason: String,
    /// A human-readable description, e.g. `Invalid value: -1: must be positive`.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub message: String,
    /// The field path, e.g. `spec.replicas`.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub field: String,
}

impl StatusCause {
    /// A cause from its reason, message and field (the message bounded as a [`Status`]
    /// message is).
    pub fn new(
        reason: impl Into<String>,
        message: impl Into<String>,
        field: impl Into<String>,
    ) -> Self {
        StatusCause {
            reason: reason.into(),
            message: bounded_message(message.into()),
            field: field.into(),
        }
    }
}

macro_rules! reasons {
    ($($(#[$doc:meta])* $name:ident),* $(,)?) => {
        /// `metav1.StatusReason`.
        #[derive(Clone, Debug, PartialEq, Eq, Hash)]
        #[non_exhaustive]
        pub enum StatusReason {
            $($(#[$doc])* $name,)*
            /// Any other reason.
            Other(String),
        }

        impl StatusReason {
            /// The wire spelling.
            pub fn as_str(&self) -> &str {
                match self {
                    $(StatusReason::$name => stringify!($name),)*
                    StatusReason::Other(s) => s,
                }
            }

            /// The reason for a wire spelling.
            pub fn parse(s: &str) -> StatusReason {
                match s {
                    $(stringify!($name) => StatusReason::$name,)*
                    other => StatusReason::Other(other.to_owned()),
                }
            }
        }
    };
}

reasons! {
    /// 401.
    Unauthorized,
    /// 403.
    Forbidden,
    /// 404.
    NotFound,
    /// 409 on create.
    AlreadyExists,
    /// 409 on update (resource version mismatch).
    Conflict,
    /// 410.
    Gone,
    /// 422.
    Invalid,
    /// 500, the server timed out.
    ServerTimeout,
    /// 500, stored data could not be read.
    StoreReadError,
    /// 504.
    Timeout,
    /// 429.
    TooManyRequests,
    /// 400.
    BadRequest,
    /// 405.
    MethodNotAllowed,
    /// 406.
    NotAcceptable,
    /// 413.
    RequestEntityTooLarge,
    /// 415.
    UnsupportedMediaType,
    /// 500.
    InternalError,
    /// 410, the resource version expired.
    Expired,
    /// 503.
    ServiceUnavailable,
}

impl fmt::Display for StatusReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Serialize for StatusReason {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for StatusReason {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = Cow::<'de, str>::deserialize(d)?;
        Ok(StatusReason::parse(&s))
    }
}

impl Status {
    /// The most bytes of a caller-supplied value (an object name, say) that a [`Status`]
    /// constructor echoes; see [`echo`](Self::echo).
    pub const MAX_ECHOED_BYTES: usize = 1024;

    /// The most bytes of a [`Status`] message: [`Status::failure`], which every constructor
    /// goes through, elides the middle of a longer one (a decoder's message quoting a huge
    /// input).
    pub const MAX_MESSAGE_BYTES: usize = 4096;

    /// `value` as an error message may quote it: unchanged up to
    /// [`MAX_ECHOED_BYTES`](Self::MAX_ECHOED_BYTES), otherwise its start and end around
    /// `...(N bytes omitted)...`, so that one long input cannot make a long error. Kubernetes
    /// quotes values whole; its request limits keep them small.
    ///
    /// ```
    /// use conneg::Status;
    /// let long = "a".repeat(60_000);
    /// let shown = Status::echo(&long);
    /// assert!(shown.len() < 1100);
    /// assert!(shown.contains("...(58976 bytes omitted)..."));
    /// assert_eq!(Status::echo("short"), "short");
    /// ```
    pub fn echo(value: &str) -> Cow<'_, str> {
        elide(value, Self::MAX_ECHOED_BYTES)
    }

    /// `value` quoted as Go's `%q` (`strconv.Quote`) quotes it, which is how Kubernetes quotes
    /// names and values in its messages: printable characters kept (non-ASCII too), `"` and
    /// `\` escaped, control characters as `\n`, `\x1b`, `\u0085`... A long value is cut first,
    /// as [`echo`](Self::echo) cuts it. (Rust's `{:?}` differs: it escapes other characters,
    /// e.g. `\u{1b}`.)
    ///
    /// ```
    /// use conneg::Status;
    /// assert_eq!(Status::quote("a\"b"), r#""a\"b""#);
    /// assert_eq!(Status::quote("é\u{1b}\n"), r#""é\x1b\n""#);
    /// assert_eq!(Status::quote("\u{85}"), r#""\u0085""#);
    /// ```
    pub fn quote(value: &str) -> String {
        let value = Self::echo(value);
        let mut out = String::with_capacity(value.len() + 2);
        out.push('"');
        for c in value.chars() {
            match c {
                '"' => out.push_str("\\\""),
                '\\' => out.push_str("\\\\"),
                '\u{07}' => out.push_str("\\a"),
                '\u{08}' => out.push_str("\\b"),
                '\u{0c}' => out.push_str("\\f"),
                '\n' => out.push_str("\\n"),
                '\r' => out.push_str("\\r"),
                '\t' => out.push_str("\\t"),
                '\u{0b}' => out.push_str("\\v"),
                c if (c as u32) < 0x20 || c as u32 == 0x7f => {
                    out.push_str(&format!("\\x{:02x}", c as u32));
                }
                c if c.is_control() => {
                    if (c as u32) <= 0xffff {
                        out.push_str(&format!("\\u{:04x}", c as u32));
                    } else {
                        out.push_str(&format!("\\U{:08x}", c as u32));
                    }
                }
                c => out.push(c),
            }
        }
        out.push('"');
        out
    }
}

/// `s` cut to about `max` bytes: its first and last `max / 2` bytes (at character
/// boundaries) around a marker saying how many were left out.
fn elide(s: &str, max: usize) -> Cow<'_, str> {
    if s.len() <= max {
        return Cow::Borrowed(s);
    }
    let mut head = max / 2;
    while !s.is_char_boundary(head) {
        head -= 1;
    }
    let mut tail = s.len() - max / 2;
    while !s.is_char_boundary(tail) {
        tail += 1;
    }
    Cow::Owned(format!(
        "{}...({} bytes omitted)...{}",
        &s[..head],
        tail - head,
        &s[tail..]
    ))
}

/// `message` elided past [`Status::MAX_MESSAGE_BYTES`], without copying one that fits.
pub(crate) fn bounded_message(message: String) -> String {
    match elide(&message, Status::MAX_MESSAGE_BYTES) {
        Cow::Borrowed(_) => message,
        Cow::Owned(short) => short,
    }
}

fn qualified(first: &str, group: &str) -> String {
    if group.is_empty() {
        first.to_owned()
    } else {
        format!("{first}.{group}")
    }
}

impl Status {
    /// A `Failure` status with `code`, `reason` and `message` (its middle elided past
    /// [`Status::MAX_MESSAGE_BYTES`]).
    pub fn failure(code: StatusCode, reason: StatusReason, message: impl Into<String>) -> Self {
        Status {
            kind: Cow::Borrowed("Status"),
            api_version: Cow::Borrowed("v1"),
            metadata: ListMeta::default(),
            status: Cow::Borrowed("Failure"),
            message: bounded_message(message.into()),
            reason: Some(reason),
            details: None,
            code: i32::from(code.as_u16()),
        }
    }

    /// A `Success` status (for example the body of a DELETE).
    pub fn success() -> Self {
        Status {
            kind: Cow::Borrowed("Status"),
            api_version: Cow::Borrowed("v1"),
            metadata: ListMeta::default(),
            status: Cow::Borrowed("Success"),
            message: String::new(),
            reason: None,
            details: None,
            code: 200,
        }
    }

    /// Sets the details.
    pub fn with_details(mut self, details: StatusDetails) -> Self {
        self.details = Some(details);
        self
    }

    fn resource_details(group: &str, kind: &str, name: &str) -> StatusDetails {
        StatusDetails {
            name: name.to_owned(),
            group: group.to_owned(),
            kind: kind.to_owned(),
            ..StatusDetails::default()
        }
    }

    /// 404 `NotFound`: `<resource>.<group> "<name>" not found`. This constructor and the
    /// others that name an object quote the name as Kubernetes does ([`quote`](Self::quote),
    /// Go's `%q`), cut by [`echo`](Self::echo).
    pub fn not_found(group: &str, resource: &str, name: &str) -> Self {
        let name = &*Status::echo(name);
        Status::failure(
            StatusCode::NOT_FOUND,
            StatusReason::NotFound,
            format!(
                "{} {} not found",
                qualified(resource, group),
                Status::quote(name)
            ),
        )
        .with_details(Status::resource_details(group, resource, name))
    }

    /// 409 `AlreadyExists`: `<resource>.<group> "<name>" already exists`.
    pub fn already_exists(group: &str, resource: &str, name: &str) -> Self {
        let name = &*Status::echo(name);
        Status::failure(
            StatusCode::CONFLICT,
            StatusReason::AlreadyExists,
            format!(
                "{} {} already exists",
                qualified(resource, group),
                Status::quote(name)
            ),
        )
        .with_details(Status::resource_details(group, resource, name))
    }

    /// 409 `Conflict`: `Operation cannot be fulfilled on <resource>.<group> "<name>": <why>`.
    pub fn conflict(group: &str, resource: &str, name: &str, why: &str) -> Self {
        let name = &*Status::echo(name);
        Status::failure(
            StatusCode::CONFLICT,
            StatusReason::Conflict,
            format!(
                "Operation cannot be fulfilled on {} {}: {why}",
                qualified(resource, group),
                Status::quote(name)
            ),
        )
        .with_details(Status::resource_details(group, resource, name))
    }

    /// 422 `Invalid`: `<Kind>.<group> "<name>" is invalid: <causes>`. Each cause's message is
    /// its `field: message`; a repeated one is printed once, several are bracketed and
    /// comma-separated, and none leaves `is invalid` alone, as Kubernetes' aggregate errors.
    ///
    /// ```
    /// use conneg::{Status, StatusCause};
    /// let cause = StatusCause::new("FieldValueRequired", "Required value", "spec.x");
    /// let s = Status::invalid("wardle.example.com", "Flunder", "a", vec![cause.clone(), cause]);
    /// assert_eq!(
    ///     s.message,
    ///     r#"Flunder.wardle.example.com "a" is invalid: spec.x: Required value"#
    /// );
    /// assert_eq!(s.details.unwrap().causes.len(), 2);
    /// ```
    pub fn invalid(group: &str, kind: &str, name: &str, causes: Vec<StatusCause>) -> Self {
        let name = &*Status::echo(name);
        let mut each: Vec<String> = Vec::with_capacity(causes.len());
        for c in &causes {
            let m = if c.field.is_empty() {
                c.message.clone()
            } else {
                format!("{}: {}", c.field, c.message)
            };
            if !each.contains(&m) {
                each.push(m);
            }
        }
        let aggregate = match each.len() {
            0 => String::new(),
            1 => format!(": {}", each[0]),
            _ => format!(": [{}]", each.join(", ")),
        };
        let mut details = Status::resource_details(group, kind, name);
        details.causes = causes;
        Status::failure(
            StatusCode::UNPROCESSABLE_ENTITY,
            StatusReason::Invalid,
            format!(
                "{} {} is invalid{aggregate}",
                qualified(kind, group),
                Status::quote(name)
            ),
        )
        .with_details(details)
    }

    /// 403 `Forbidden`: `<resource>.<group> "<name>" is forbidden: <why>`, without the name
    /// for a collection (`<resource>.<group> is forbidden: <why>`) and as `forbidden: <why>`
    /// without a resource, as Kubernetes words them.
    pub fn forbidden(group: &str, resource: &str, name: &str, why: &str) -> Self {
        let name = &*Status::echo(name);
        let message = if resource.is_empty() {
            format!("forbidden: {why}")
        } else if name.is_empty() {
            format!("{} is forbidden: {why}", qualified(resource, group))
        } else {
            format!(
                "{} {} is forbidden: {why}",
                qualified(resource, group),
                Status::quote(name)
            )
        };
        Status::failure(StatusCode::FORBIDDEN, StatusReason::Forbidden, message)
            .with_details(Status::resource_details(group, resource, name))
    }

    /// 401 `Unauthorized`.
    pub fn unauthorized(message: impl Into<String>) -> Self {
        Status::failure(
            StatusCode::UNAUTHORIZED,
            StatusReason::Unauthorized,
            message,
        )
    }

    /// 400 `BadRequest`.
    pub fn bad_request(message: impl Into<String>) -> Self {
        Status::failure(StatusCode::BAD_REQUEST, StatusReason::BadRequest, message)
    }

    /// 405 `MethodNotAllowed`: `<verb> is not supported on resources of kind "<resource>.<group>"`.
    pub fn method_not_allowed(verb: &str, group: &str, resource: &str) -> Self {
        Status::failure(
            StatusCode::METHOD_NOT_ALLOWED,
            StatusReason::MethodNotAllowed,
            format!(
                "{verb} is not supported on resources of kind {:?}",
                qualified(resource, group)
            ),
        )
        .with_details(Status::resource_details(group, resource, ""))
    }

    /// 406 `NotAcceptable`: `only the following media types are accepted: <list>`.
    pub fn not_acceptable(available: &str) -> Self {
        Status::failure(
            StatusCode::NOT_ACCEPTABLE,
            StatusReason::NotAcceptable,
            format!("only the following media types are accepted: {available}"),
        )
    }

    /// 415 `UnsupportedMediaType`: `the body of the request was in an unknown format -
    /// accepted media types include: <list>`.
    pub fn unsupported_media_type(accepted: &str) -> Self {
        Status::failure(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            StatusReason::UnsupportedMediaType,
            format!(
                "the body of the request was in an unknown format - accepted media types include: {accepted}"
            ),
        )
    }

    /// 413 `RequestEntityTooLarge`: `Request entity too large: limit is <n> bytes`.
    pub fn request_entity_too_large(limit: usize) -> Self {
        Status::failure(
            StatusCode::PAYLOAD_TOO_LARGE,
            StatusReason::RequestEntityTooLarge,
            format!("Request entity too large: limit is {limit} bytes"),
        )
    }

    /// 429 `TooManyRequests`, with `Retry-After`.
    pub fn too_many_requests(message: impl Into<String>, retry_after_seconds: i32) -> Self {
        Status::failure(
            StatusCode::TOO_MANY_REQUESTS,
            StatusReason::TooManyRequests,
            message,
        )
        .with_details(StatusDetails {
            retry_after_seconds,
            ..StatusDetails::default()
        })
    }

    /// 410 `Expired`: a resource version or continue token too old to serve (apimachinery's
    /// `NewResourceExpired`), e.g. `too old resource version: 5 (10)`.
    pub fn expired(message: impl Into<String>) -> Self {
        Status::failure(StatusCode::GONE, StatusReason::Expired, message)
    }

    /// 504 `Timeout`, with `Retry-After` (`Too large resource version: 20, current: 10`).
    pub fn timeout(message: impl Into<String>, retry_after_seconds: i32) -> Self {
        Status::failure(StatusCode::GATEWAY_TIMEOUT, StatusReason::Timeout, message).with_details(
            StatusDetails {
                retry_after_seconds,
                ..StatusDetails::default()
            },
        )
    }

    /// 503 `ServiceUnavailable`.
    pub fn service_unavailable(message: impl Into<String>) -> Self {
        Status::failure(
            StatusCode::SERVICE_UNAVAILABLE,
            StatusReason::ServiceUnavailable,
            message,
        )
    }

    /// 500 `InternalError`: `Internal error occurred: <err>`, with the error as a cause.
    pub fn internal_error(err: impl fmt::Display) -> Self {
        let err = bounded_message(err.to_string());
        Status::failure(
            StatusCode::INTERNAL_SERVER_ERROR,
            StatusReason::InternalError,
            format!("Internal error occurred: {err}"),
        )
        .with_details(StatusDetails {
            causes: vec![StatusCause {
                message: err,
                ..StatusCause::default()
            }],
            ..StatusDetails::default()
        })
    }

    /// The HTTP status code (500 if `code` is not a valid one).
    pub fn code(&self) -> StatusCode {
        u16::try_from(self.code)
            .ok()
            .and_then(|c| StatusCode::from_u16(c).ok())
            .unwrap_or(StatusCode::INTERNAL_SERVER_ERROR)
    }

    /// Encodes with `codec`. JSON is compact with a trailing newline (as Kubernetes' serializer
    /// writes it) or, with `pretty`, indented by two spaces without one (as its raw-JSON
    /// fallback). If encoding fails (a custom codec's bug), the body is Kubernetes' text
    /// fallback `<Reason>: <message>`.
    pub fn encode(&self, codec: &Codec, pretty: bool) -> Bytes {
        let mut out = Vec::with_capacity(256);
        let ok = if pretty {
            codec.encode_pretty(self, &mut out)
        } else {
            codec.encode(self, &mut out)
        };
        match ok {
            Ok(()) => {
                if matches!(codec, Codec::Json) && !pretty {
                    out.push(b'\n');
                }
                Bytes::from(out)
            }
            Err(_) => Bytes::from(self.text_fallback()),
        }
    }

    fn text_fallback(&self) -> String {
        format!(
            "{}: {}",
            self.reason.as_ref().map(StatusReason::as_str).unwrap_or(""),
            self.message
        )
    }

    /// An HTTP response carrying this status encoded with `codec`, with `Content-Type` and, when
    /// `details.retryAfterSeconds` is set, `Retry-After`.
    pub fn to_response(&self, codec: &Codec, pretty: bool) -> Response<Full<Bytes>> {
        self.to_bytes_response(codec, pretty).map(Full::new)
    }

    /// [`to_response`](Self::to_response) with the bytes as the body.
    pub(crate) fn to_bytes_response(&self, codec: &Codec, pretty: bool) -> Response<Bytes> {
        let mut response = Response::new(self.encode(codec, pretty));
        *response.status_mut() = self.code();
        response
            .headers_mut()
            .insert(CONTENT_TYPE, codec.content_type());
        if let Some(retry_after) = self.retry_after() {
            response.headers_mut().insert(RETRY_AFTER, retry_after);
        }
        response
    }

    /// `Retry-After` from `details.retryAfterSeconds`, when set.
    pub(crate) fn retry_after(&self) -> Option<HeaderValue> {
        self.details
            .as_ref()
            .map(|d| d.retry_after_seconds)
            .filter(|s| *s > 0)
            .map(HeaderValue::from)
    }

    /// A failure with `code`, the reason Kubernetes gives that code, and `message`: for errors
    /// that come from elsewhere (axum's rejections, the router's 404 and 405).
    pub(crate) fn for_code(code: StatusCode, message: impl Into<String>) -> Self {
        let reason = match code {
            StatusCode::NOT_FOUND => StatusReason::NotFound,
            StatusCode::METHOD_NOT_ALLOWED => StatusReason::MethodNotAllowed,
            StatusCode::UNSUPPORTED_MEDIA_TYPE => StatusReason::UnsupportedMediaType,
            StatusCode::PAYLOAD_TOO_LARGE => StatusReason::RequestEntityTooLarge,
            c if c.is_server_error() => StatusReason::InternalError,
            _ => StatusReason::BadRequest,
        };
        Status::failure(code, reason, message)
    }
}

impl fmt::Display for Status {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for Status {}

impl From<DecodeError> for Status {
    fn from(err: DecodeError) -> Self {
        Status::bad_request(err.message().to_owned())
    }
}

impl From<EncodeError> for Status {
    fn from(err: EncodeError) -> Self {
        Status::internal_error(err)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn not_acceptable_pretty_json_matches_kubernetes() {
        let status = Status::not_acceptable("application/json, application/cbor");
        let body = status.encode(&Codec::Json, true);
        assert_eq!(
            std::str::from_utf8(&body).unwrap(),
            r#"{
  "kind": "Status",
  "apiVersion": "v1",
  "metadata": {},
  "status": "Failure",
  "message": "only the following media types are accepted: application/json, application/cbor",
  "reason": "NotAcceptable",
  "code": 406
}"#
        );
    }

    #[test]
    fn compact_json_has_newline_and_round_trips() {
        let status = Status::conflict("", "configmaps", "x", "the object has been modified");
        let body = status.encode(&Codec::Json, false);
        assert!(body.ends_with(b"}\n"));
        let back: Status = serde_json::from_slice(&body).unwrap();
        assert_eq!(back, status);
        assert_eq!(
            back.message,
            r#"Operation cannot be fulfilled on configmaps "x": the object has been modified"#
        );
        assert_eq!(back.code(), StatusCode::CONFLICT);
    }

    #[test]
    fn invalid_aggregates_causes() {
        let s = Status::invalid(
            "",
            "Pod",
            "p",
            vec![
                StatusCause::new("FieldValueRequired", "Required value", "spec.a"),
                StatusCause::new("FieldValueInvalid", "Invalid value: -1", "spec.b"),
            ],
        );
        assert_eq!(
            s.message,
            r#"Pod "p" is invalid: [spec.a: Required value, spec.b: Invalid value: -1]"#
        );
        assert_eq!(s.details.as_ref().unwrap().causes.len(), 2);
    }

    /// Every constructor that quotes caller input stays small, however long the input.
    #[test]
    fn names_are_quoted_as_go_quotes_them() {
        // Rust's {:?} would write "a\u{1b}é\u{85}"; Kubernetes (Go's %q) writes this.
        let s = Status::not_found("wardle.example.com", "flunders", "a\u{1b}é\u{85}\"");
        assert_eq!(
            s.message,
            r#"flunders.wardle.example.com "a\x1bé\u0085\"" not found"#
        );
        let s = Status::invalid("wardle.example.com", "Flunder", "tab\there", vec![]);
        assert!(
            s.message
                .starts_with(r#"Flunder.wardle.example.com "tab\there" is invalid"#)
        );
    }

    #[test]
    fn constructors_bound_what_they_echo() {
        let huge = "n".repeat(60_000);
        let cause = || {
            vec![StatusCause::new(
                "FieldValueInvalid",
                huge.clone(),
                "spec.a",
            )]
        };
        let statuses = [
            ("not_found", Status::not_found("g", "things", &huge)),
            (
                "already_exists",
                Status::already_exists("g", "things", &huge),
            ),
            ("conflict", Status::conflict("g", "things", &huge, "why")),
            ("forbidden", Status::forbidden("g", "things", &huge, "why")),
            ("invalid", Status::invalid("g", "Thing", &huge, cause())),
            ("bad_request", Status::bad_request(huge.clone())),
            ("internal_error", Status::internal_error(&huge)),
            (
                "failure",
                Status::failure(StatusCode::GONE, StatusReason::Gone, huge.clone()),
            ),
        ];
        for (what, status) in statuses {
            let body = status.encode(&Codec::Json, false);
            assert!(
                body.len() < 3 * Status::MAX_MESSAGE_BYTES,
                "{what}: {} bytes",
                body.len()
            );
            assert!(status.message.contains(" bytes omitted)..."), "{what}");
        }
        let short = Status::not_found("g", "things", "a");
        assert_eq!(short.message, r#"things.g "a" not found"#);
        assert_eq!(short.details.unwrap().name, "a");
    }

    #[test]
    fn echo_cuts_at_character_boundaries() {
        let s = "é".repeat(Status::MAX_ECHOED_BYTES);
        let cut = Status::echo(&s);
        assert!(cut.len() <= Status::MAX_ECHOED_BYTES + 40);
        assert!(cut.starts_with('é') && cut.ends_with('é'));
        assert!(cut.contains(&format!(
            "...({} bytes omitted)...",
            s.len() - Status::MAX_ECHOED_BYTES
        )));
        let exact = "x".repeat(Status::MAX_ECHOED_BYTES);
        assert_eq!(Status::echo(&exact), exact.as_str());
    }

    #[test]
    fn retry_after_header() {
        let r = Status::too_many_requests("slow down", 3).to_response(&Codec::Json, false);
        assert_eq!(r.status(), StatusCode::TOO_MANY_REQUESTS);
        assert_eq!(r.headers()[RETRY_AFTER], "3");
        assert_eq!(r.headers()[CONTENT_TYPE], "application/json");
    }

    #[test]
    fn unknown_reasons_survive() {
        let r: StatusReason = serde_json::from_str(r#""Teapot""#).unwrap();
        assert_eq!(r, StatusReason::Other("Teapot".into()));
        assert_eq!(
            serde_json::to_string(&StatusReason::NotFound).unwrap(),
            r#""NotFound""#
        );
    }
}
