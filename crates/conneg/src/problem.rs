//! [`Problem`]: an RFC 9457 problem details object, the error body of the standard
//! [`Profile`](crate::Profile).
//!
//! In JSON it is `application/problem+json`. When the client negotiated CBOR it is the same
//! members (`type`, `title`, `status`, `detail`, `instance`) as a CBOR map with text keys,
//! labelled `application/cbor`, and not RFC 9290's concise problem details: RFC 9290 is made
//! for CoAP (integer keys a generic decoder shows as `-1`, `-2`; a CoAP response code where
//! HTTP has `status`) under its own media type, `application/concise-problem-details+cbor`,
//! which a client that sent `Accept: application/cbor` did not ask for. The same members in
//! both formats let one client-side error type read either.
//!
//! ```
//! use conneg::{Codec, Problem};
//! use http::StatusCode;
//!
//! let problem = Problem::new(StatusCode::NOT_FOUND, "note 7 does not exist");
//! assert_eq!(problem.title, "Not Found");
//! let json = problem.encode(&Codec::Json);
//! assert_eq!(
//!     json,
//!     r#"{"type":"about:blank","title":"Not Found","status":404,"detail":"note 7 does not exist"}"#
//! );
//! ```

use bytes::Bytes;
use http::header::CONTENT_TYPE;
use http::{HeaderValue, Response, StatusCode};
use serde::{Deserialize, Serialize};

use crate::codec::Codec;
use crate::profile::Profile;
use crate::status::Status;

/// `application/problem+json` (RFC 9457 §3).
pub const APPLICATION_PROBLEM_JSON: &str = "application/problem+json";

/// An RFC 9457 problem details object.
///
/// Built by conneg from every error it produces under [`Profile::Standard`] (a [`Status`]
/// becomes one with [`Problem::from`]), and usable as a handler's error: with axum it is a
/// response that the layer encodes in the negotiated format.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Problem {
    /// A URI reference naming the problem type; `about:blank` when the status code says it all.
    #[serde(rename = "type", default = "about_blank")]
    pub type_: String,
    /// A short summary of the problem type; for `about:blank`, the status code's reason phrase.
    #[serde(default)]
    pub title: String,
    /// The HTTP status code.
    pub status: u16,
    /// What went wrong with this request.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub detail: String,
    /// A URI reference naming this occurrence.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instance: Option<String>,
}

fn about_blank() -> String {
    "about:blank".to_owned()
}

impl Problem {
    /// An `about:blank` problem: the title is `status`'s reason phrase.
    pub fn new(status: StatusCode, detail: impl Into<String>) -> Self {
        Problem {
            type_: about_blank(),
            title: status.canonical_reason().unwrap_or("Error").to_owned(),
            status: status.as_u16(),
            detail: crate::status::bounded_message(detail.into()),
            instance: None,
        }
    }

    /// Sets the problem type URI and its title.
    ///
    /// ```
    /// let p = conneg::Problem::new(http::StatusCode::CONFLICT, "the title is taken")
    ///     .with_type("https://example.com/problems/duplicate", "Duplicate title");
    /// assert_eq!(p.title, "Duplicate title");
    /// ```
    pub fn with_type(mut self, type_: impl Into<String>, title: impl Into<String>) -> Self {
        self.type_ = type_.into();
        self.title = title.into();
        self
    }

    /// Sets the `instance` URI.
    pub fn with_instance(mut self, instance: impl Into<String>) -> Self {
        self.instance = Some(instance.into());
        self
    }

    /// The HTTP status code (500 if `status` is not one).
    pub fn code(&self) -> StatusCode {
        StatusCode::from_u16(self.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR)
    }

    /// The `Content-Type` of a problem encoded with `codec`: `application/problem+json` for
    /// JSON, the codec's own type otherwise.
    pub fn content_type(codec: &Codec) -> HeaderValue {
        match codec {
            Codec::Json => HeaderValue::from_static(APPLICATION_PROBLEM_JSON),
            other => other.content_type(),
        }
    }

    /// Encodes the problem with `codec` (CBOR as the standard profile writes it). A codec that
    /// cannot encode it (a custom one) gets JSON.
    pub fn encode(&self, codec: &Codec) -> Bytes {
        let mut out = Vec::with_capacity(128);
        match codec.encode_as(Profile::Standard, self, &mut out) {
            Ok(()) => Bytes::from(out),
            Err(_) => Bytes::from(serde_json::to_vec(self).unwrap_or_default()),
        }
    }

    /// The response: status, `Content-Type` ([`content_type`](Self::content_type)) and the
    /// encoded problem.
    pub(crate) fn to_response(&self, codec: &Codec) -> Response<Bytes> {
        let mut response = Response::new(self.encode(codec));
        *response.status_mut() = self.code();
        response
            .headers_mut()
            .insert(CONTENT_TYPE, Problem::content_type(codec));
        response
    }
}

impl From<&Status> for Problem {
    /// The status code, its reason phrase as title, and the `Status` message as detail.
    fn from(status: &Status) -> Self {
        Problem::new(status.code(), status.message.clone())
    }
}

impl std::fmt::Display for Problem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.title, self.detail)
    }
}

impl std::error::Error for Problem {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cbor_problem_has_text_keys_and_no_tag() {
        let p = Problem::new(StatusCode::BAD_REQUEST, "x");
        let cbor = p.encode(&Codec::Cbor);
        // map(4), text(4) "type"
        assert_eq!(&cbor[..6], b"\xa4\x64type");
        let back: Problem = conneg_cbor::from_slice(&cbor).unwrap();
        assert_eq!(back, p);
        assert_eq!(Problem::content_type(&Codec::Cbor), "application/cbor");
    }

    #[test]
    fn from_status_keeps_code_and_message() {
        let p = Problem::from(&Status::request_entity_too_large(10));
        assert_eq!(p.status, 413);
        assert_eq!(p.title, "Payload Too Large");
        assert_eq!(p.detail, "Request entity too large: limit is 10 bytes");
    }
}
