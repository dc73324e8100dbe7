//! The bridge to `conneg-cbor`, kept in one place so the rest of the crate does not depend on
//! its exact API.
//!
//! Placeholder until `conneg-cbor`'s serde API lands: every call reports that CBOR is not
//! available yet.

use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::codec::{DecodeError, Decoded};
use crate::field_validation::FieldValidation;

const UNAVAILABLE: &str = "the CBOR codec is not available yet";

/// Encodes in fast (unsorted) mode with the self-described prefix.
pub(crate) fn encode_fast<T: Serialize + ?Sized>(
    _out: &mut Vec<u8>,
    _value: &T,
) -> Result<(), String> {
    Err(UNAVAILABLE.to_owned())
}

/// Decodes strictly (duplicate keys, bad UTF-8, NaN... are errors) with `validation` deciding
/// what unknown fields do.
pub(crate) fn decode<T: DeserializeOwned>(
    _body: &[u8],
    _validation: FieldValidation,
) -> Result<Decoded<T>, DecodeError> {
    Err(DecodeError::syntax(UNAVAILABLE.to_owned()))
}

/// Decodes any CBOR item into a JSON value (for apply patches).
#[allow(dead_code)] // Used by the PATCH extractor.
pub(crate) fn to_json_value(_body: &[u8]) -> Result<serde_json::Value, String> {
    Err(UNAVAILABLE.to_owned())
}
