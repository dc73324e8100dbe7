//! The bridge to `conneg-cbor`, kept in one place so the rest of the crate does not depend on
//! its exact API.

use conneg_cbor::{DecodeOptions, EncodeOptions, StringEncoding, UnknownFields};
use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::codec::{DecodeError, Decoded};
use crate::field_validation::FieldValidation;
use crate::profile::Profile;

/// Encodes in fast (unsorted) mode with the self-described prefix, as Kubernetes serves
/// responses.
pub(crate) fn encode_fast<T: Serialize + ?Sized>(
    out: &mut Vec<u8>,
    value: &T,
) -> Result<(), String> {
    encode_as(Profile::Kubernetes, out, value)
}

/// Encodes a response the way `profile` writes CBOR: Kubernetes' byte strings after the
/// self-described tag, or (standard) text strings and no tag, the plain RFC 8949 preferred
/// serialization any generic CBOR decoder reads as it would JSON. Both keep the value's map
/// order (responses are not hashed or compared).
pub(crate) fn encode_as<T: Serialize + ?Sized>(
    profile: Profile,
    out: &mut Vec<u8>,
    value: &T,
) -> Result<(), String> {
    encode_with(
        strings(profile).self_described(profile == Profile::Kubernetes),
        out,
        value,
    )
}

/// Encodes an item nested in one written piece by piece (a streamed list's envelope and
/// items, a watch event's keys): as [`encode_as`], but never with the self-described tag.
pub(crate) fn encode_nested<T: Serialize + ?Sized>(
    profile: Profile,
    out: &mut Vec<u8>,
    value: &T,
) -> Result<(), String> {
    encode_with(strings(profile).self_described(false), out, value)
}

/// Fast mode with `profile`'s string encoding: byte strings (Kubernetes) or text strings.
fn strings(profile: Profile) -> EncodeOptions {
    match profile {
        Profile::Kubernetes => EncodeOptions::fast(),
        Profile::Standard => EncodeOptions::fast().string_encoding(StringEncoding::Text),
    }
}

fn encode_with<T: Serialize + ?Sized>(
    options: EncodeOptions,
    out: &mut Vec<u8>,
    value: &T,
) -> Result<(), String> {
    options.encode_into(out, value).map_err(|e| e.to_string())
}

/// Decodes strictly (duplicate keys, bad UTF-8, NaN... are always errors) with `validation`
/// deciding what unknown fields do.
pub(crate) fn decode<T: DeserializeOwned>(
    body: &[u8],
    validation: FieldValidation,
) -> Result<Decoded<T>, DecodeError> {
    let invalid = |e: conneg_cbor::Error| DecodeError::syntax(e.to_string());
    match validation {
        FieldValidation::Ignore => {
            let value = DecodeOptions::default()
                .unknown_fields(UnknownFields::Ignore)
                .from_slice(body)
                .map_err(invalid)?;
            Ok(Decoded {
                value,
                warnings: Vec::new(),
            })
        }
        FieldValidation::Warn | FieldValidation::Strict => {
            let (value, unknown) = DecodeOptions::default()
                .from_slice_with_warnings(body)
                .map_err(invalid)?;
            let warnings: Vec<String> = unknown.iter().map(unknown_field_text).collect();
            if validation == FieldValidation::Strict && !warnings.is_empty() {
                return Err(DecodeError::strict(&warnings));
            }
            Ok(Decoded { value, warnings })
        }
    }
}

/// Rewrites conneg-cbor's `unknown field "x"` at `.spec` into Kubernetes' wording,
/// `unknown field "spec.x"`, the same text the JSON codec produces.
fn unknown_field_text(err: &conneg_cbor::Error) -> String {
    let key = err
        .message()
        .strip_prefix("unknown field ")
        .and_then(|quoted| serde_json::from_str::<String>(quoted).ok())
        .unwrap_or_else(|| err.message().to_owned());
    let parent = err.path().trim_start_matches('.');
    if parent.is_empty() {
        format!("unknown field {key:?}")
    } else {
        format!("unknown field \"{parent}.{key}\"")
    }
}

/// Decodes any CBOR item into a JSON value (for apply patches).
pub(crate) fn to_json_value(body: &[u8]) -> Result<serde_json::Value, String> {
    conneg_cbor::value_from_slice(body).map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codec::{Codec, DecodeErrorKind};
    use serde::Deserialize;

    #[derive(Serialize, Deserialize, Debug, PartialEq)]
    struct Spec {
        size: u32,
    }

    #[derive(Serialize, Deserialize, Debug, PartialEq)]
    struct Obj {
        name: String,
        spec: Spec,
    }

    #[derive(Serialize)]
    struct Extra {
        name: &'static str,
        spec: ExtraSpec,
        top: bool,
    }

    #[derive(Serialize)]
    struct ExtraSpec {
        size: u32,
        colour: &'static str,
    }

    #[test]
    fn round_trip_and_prefix() {
        let obj = Obj {
            name: "a".into(),
            spec: Spec { size: 1 },
        };
        let bytes = Codec::Cbor.to_bytes(&obj).unwrap();
        assert_eq!(&bytes[..3], &[0xd9, 0xd9, 0xf7]);
        let back = Codec::Cbor
            .decode::<Obj>(&bytes, FieldValidation::Strict)
            .unwrap();
        assert_eq!(back.value, obj);
        assert!(back.warnings.is_empty());
    }

    #[test]
    fn field_validation_modes_match_json_wording() {
        let extra = Extra {
            name: "a",
            spec: ExtraSpec {
                size: 1,
                colour: "red",
            },
            top: true,
        };
        let bytes = EncodeOptions::fast().to_vec(&extra).unwrap();
        let json = serde_json::to_vec(&extra).unwrap();

        let d = Codec::Cbor
            .decode::<Obj>(&bytes, FieldValidation::Ignore)
            .unwrap();
        assert!(d.warnings.is_empty());

        let d = Codec::Cbor
            .decode::<Obj>(&bytes, FieldValidation::Warn)
            .unwrap();
        let j = Codec::Json
            .decode::<Obj>(&json, FieldValidation::Warn)
            .unwrap();
        assert_eq!(
            d.warnings,
            [r#"unknown field "spec.colour""#, r#"unknown field "top""#]
        );
        assert_eq!(d.warnings, j.warnings);

        let e = Codec::Cbor
            .decode::<Obj>(&bytes, FieldValidation::Strict)
            .unwrap_err();
        assert_eq!(e.kind(), DecodeErrorKind::Strict);
    }

    #[test]
    fn rejects_malformed_duplicate_and_nan() {
        // {"name": "a", "name": "b"}
        let dup = [
            0xa2, 0x64, b'n', b'a', b'm', b'e', 0x61, b'a', 0x64, b'n', b'a', b'm', b'e', 0x61,
            b'b',
        ];
        // {"size": NaN}
        let nan = [0xa1, 0x64, b's', b'i', b'z', b'e', 0xf9, 0x7e, 0x00];
        for bad in [&dup[..], &nan[..], &[0xff, 0xff][..], &[][..]] {
            assert!(
                Codec::Cbor
                    .decode::<serde_json::Value>(bad, FieldValidation::Ignore)
                    .is_err(),
                "{bad:02x?}"
            );
        }
    }

    #[test]
    fn apply_patch_to_json() {
        // {"a": 1} without the self-described prefix, as client-go sends apply patches.
        let v = to_json_value(&[0xa1, 0x61, b'a', 0x01]).unwrap();
        assert_eq!(v, serde_json::json!({"a": 1}));
    }
}
