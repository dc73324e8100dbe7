//! The request `Content-Type` header.
//!
//! Parameters such as `charset=utf-8` are tolerated and ignored, type and subtype compare
//! case-insensitively, and a header that does not parse counts as an unsupported type (415), as
//! in Kubernetes. A missing `Content-Type` on a request with a body means JSON (see
//! [`Negotiator`](crate::Negotiator)).
//!
//! ```
//! use conneg::headers::{ContentType, request_content_type};
//! use http::{HeaderMap, HeaderValue, header::CONTENT_TYPE};
//!
//! let mut headers = HeaderMap::new();
//! assert!(matches!(request_content_type(&headers), ContentType::Missing));
//! headers.insert(CONTENT_TYPE, HeaderValue::from_static("Application/CBOR; charset=binary"));
//! let ContentType::Present(range) = request_content_type(&headers) else { panic!() };
//! assert!(range.essence_eq("application/cbor"));
//! headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/json; charset"));
//! assert!(matches!(request_content_type(&headers), ContentType::Invalid));
//! ```

use http::HeaderMap;
use http::header::CONTENT_TYPE;

use crate::headers::media_type::MediaRange;

/// What a request says about its body's media type.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ContentType<'a> {
    /// No `Content-Type` header (or an empty one).
    Missing,
    /// A header that is not a media type, or more than one header line.
    Invalid,
    /// A well-formed media type.
    Present(MediaRange<'a>),
}

/// Reads the request's `Content-Type`.
pub fn request_content_type(headers: &HeaderMap) -> ContentType<'_> {
    let mut values = headers.get_all(CONTENT_TYPE).iter();
    let Some(value) = values.next() else {
        return ContentType::Missing;
    };
    if values.next().is_some() {
        return ContentType::Invalid;
    }
    let Ok(text) = std::str::from_utf8(value.as_bytes()) else {
        return ContentType::Invalid;
    };
    if text.trim_matches([' ', '\t']).is_empty() {
        return ContentType::Missing;
    }
    match MediaRange::parse(text) {
        Some(range) => ContentType::Present(range),
        None => ContentType::Invalid,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use http::HeaderValue;

    fn ct(value: &str) -> ContentType<'static> {
        let mut headers = HeaderMap::new();
        headers.insert(CONTENT_TYPE, HeaderValue::from_str(value).unwrap());
        let leaked: &'static HeaderMap = Box::leak(Box::new(headers));
        request_content_type(leaked)
    }

    #[test]
    fn charset_uppercase_and_spaces() {
        for v in [
            "application/json; charset=utf-8",
            "APPLICATION/JSON",
            "application/json ; charset=\"UTF-8\"",
            " application/json ",
        ] {
            let ContentType::Present(r) = ct(v) else {
                panic!("{v}")
            };
            assert!(r.essence_eq("application/json"), "{v}");
        }
    }

    #[test]
    fn invalid_and_missing() {
        assert_eq!(ct(""), ContentType::Missing);
        assert_eq!(ct("json"), ContentType::Invalid);
        assert_eq!(ct("*/*"), ContentType::Invalid);
        assert_eq!(ct("application/json;;x"), ContentType::Invalid);
        let mut headers = HeaderMap::new();
        headers.append(CONTENT_TYPE, HeaderValue::from_static("application/json"));
        headers.append(CONTENT_TYPE, HeaderValue::from_static("application/cbor"));
        assert_eq!(request_content_type(&headers), ContentType::Invalid);
    }
}
