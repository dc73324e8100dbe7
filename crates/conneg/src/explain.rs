//! Better decode errors for the standard profile, computed only once decoding has failed (the
//! hot path is untouched):
//!
//! * a body in the other built-in format than its `Content-Type` says (JSON sent as
//!   `application/cbor`, CBOR sent as `application/json`) is named as such, where the decoder
//!   alone would say "unexpected end of input" or "expected value";
//! * a JSON body that does not fit the target type names the field path, `at .notes[2].title`,
//!   as CBOR errors already do: the body is decoded a second time through
//!   `serde_path_to_error`, which tracks the path (bounded by the body limit, like the first
//!   decode).

use serde::de::{DeserializeOwned, IgnoredAny};

use crate::codec::{Codec, DecodeError, DecodeErrorKind};

/// `err` (from decoding `body` as `codec` into `T`) with the format or the field path named.
#[cold]
pub(crate) fn explain<T: DeserializeOwned>(
    codec: &Codec,
    body: &[u8],
    err: DecodeError,
) -> DecodeError {
    if err.kind() != DecodeErrorKind::Invalid {
        return err;
    }
    match codec {
        Codec::Cbor if looks_like_json(body) => DecodeError::syntax(
            "the body is not CBOR; it looks like JSON (send it as Content-Type: application/json)"
                .to_owned(),
        ),
        Codec::Json if looks_like_cbor(body) => DecodeError::syntax(
            "the body is not JSON; it looks like CBOR (send it as Content-Type: application/cbor)"
                .to_owned(),
        ),
        Codec::Json => json_path::<T>(body).unwrap_or(err),
        _ => err,
    }
}

/// The JSON error again, with its field path: `invalid type: string "x", expected u32 at
/// .spec.size (line 1, column 20)`. `None` when the tracked decode has no path to add.
fn json_path<T: DeserializeOwned>(body: &[u8]) -> Option<DecodeError> {
    let mut de = serde_json::Deserializer::from_slice(body);
    let err = serde_path_to_error::deserialize::<_, T>(&mut de).err()?;
    let path = err.path().to_string();
    let inner = err.into_inner();
    if path == "." || path.is_empty() {
        return None;
    }
    let text = inner.to_string();
    let position = format!(" at line {} column {}", inner.line(), inner.column());
    let message = text.strip_suffix(&position).unwrap_or(&text);
    Some(DecodeError::syntax(format!(
        "{message} at .{path} (line {}, column {})",
        inner.line(),
        inner.column()
    )))
}

/// A JSON object or array (the shapes an API body has), well-formed.
fn looks_like_json(body: &[u8]) -> bool {
    let first = body.iter().find(|b| !b.is_ascii_whitespace());
    matches!(first, Some(b'{' | b'[')) && serde_json::from_slice::<IgnoredAny>(body).is_ok()
}

/// The self-described tag, or a CBOR map or array head followed by a well-formed item.
fn looks_like_cbor(body: &[u8]) -> bool {
    body.starts_with(&[0xd9, 0xd9, 0xf7])
        || (matches!(body.first(), Some(0x80..=0xbf)) && crate::cbor::to_json_value(body).is_ok())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::FieldValidation;
    use serde::Deserialize;

    #[derive(Deserialize, Debug)]
    #[allow(dead_code)]
    struct Note {
        title: String,
        tags: Vec<Tag>,
    }

    #[derive(Deserialize, Debug)]
    #[allow(dead_code)]
    struct Tag {
        name: String,
    }

    fn decode(codec: &Codec, body: &[u8]) -> String {
        let err = codec
            .decode::<Note>(body, FieldValidation::Ignore)
            .unwrap_err();
        explain::<Note>(codec, body, err).message().to_owned()
    }

    #[test]
    fn json_errors_name_the_field_path() {
        let msg = decode(&Codec::Json, br#"{"title":"a","tags":[{"name":1}]}"#);
        assert_eq!(
            msg,
            "invalid type: integer `1`, expected a string at .tags[0].name (line 1, column 30)"
        );
        // No path to add: the decoder's message stands.
        assert!(decode(&Codec::Json, b"{").starts_with("EOF while parsing"));
    }

    #[test]
    fn a_body_in_the_other_format_is_named() {
        let json = br#"{"title":"a","tags":[]}"#;
        assert_eq!(
            decode(&Codec::Cbor, json),
            "the body is not CBOR; it looks like JSON (send it as Content-Type: application/json)"
        );
        let cbor = Codec::Cbor
            .to_bytes(&serde_json::json!({"title": "a", "tags": []}))
            .unwrap();
        assert!(
            decode(&Codec::Json, &cbor).starts_with("the body is not JSON; it looks like CBOR")
        );
        // Garbage is neither: the decoder's own message.
        assert!(!decode(&Codec::Cbor, b"{nope").contains("looks like"));
    }
}
