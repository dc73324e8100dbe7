//! How objects become stored bytes and back (the storage codec).
//!
//! Objects are stored in the storage version (v1alpha1) as deterministic CBOR with the
//! self-described prefix `d9 d9 f7` ([`StorageMediaType::Cbor`], the default) or as JSON
//! (`--storage-media-type json`, what Kubernetes' sample-apiserver uses). Reading recognises
//! the format by the prefix (KEP-4222's recognizing decoder), so a store holding both reads
//! the same whichever mode the server runs in. Deterministic encoding is what lets an update
//! with unchanged content be skipped by comparing bytes.
//!
//! As in Kubernetes' etcd3 store, `metadata.resourceVersion` (and the deprecated `selfLink`)
//! are not stored: they are cleared before encoding and `resourceVersion` is set from the
//! key's `mod_revision` on decoding.

use std::fmt;
use std::str::FromStr;

use bytes::Bytes;
use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::meta::HasObjectMeta;

use super::{Event, EventKind, KeyValue, Revision, StorageError};

/// The format new writes are stored in.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub enum StorageMediaType {
    /// Deterministic CBOR with the `d9 d9 f7` prefix, strings as byte strings (Kubernetes'
    /// storage encoding when `CBORServingAndStorage` is on).
    #[default]
    Cbor,
    /// Compact JSON (`encoding/json` style).
    Json,
}

impl StorageMediaType {
    /// `application/cbor` / `application/json`.
    pub fn mime(self) -> &'static str {
        match self {
            StorageMediaType::Cbor => "application/cbor",
            StorageMediaType::Json => "application/json",
        }
    }
}

impl fmt::Display for StorageMediaType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            StorageMediaType::Cbor => "cbor",
            StorageMediaType::Json => "json",
        })
    }
}

impl FromStr for StorageMediaType {
    type Err = String;
    /// `cbor`, `json`, `application/cbor`, `application/json`.
    fn from_str(s: &str) -> Result<Self, String> {
        match s.trim().to_ascii_lowercase().as_str() {
            "cbor" | "application/cbor" => Ok(StorageMediaType::Cbor),
            "json" | "application/json" => Ok(StorageMediaType::Json),
            other => Err(format!(
                "unsupported storage media type {other:?} (want cbor or json)"
            )),
        }
    }
}

/// Which format stored bytes are in.
pub fn recognize(bytes: &[u8]) -> StorageMediaType {
    if conneg_cbor::recognizes(bytes) {
        StorageMediaType::Cbor
    } else {
        StorageMediaType::Json
    }
}

/// Encode any value in `media_type` (deterministic for CBOR).
pub fn encode_value<T: Serialize + ?Sized>(
    media_type: StorageMediaType,
    value: &T,
) -> Result<Bytes, StorageError> {
    match media_type {
        StorageMediaType::Cbor => conneg_cbor::to_vec(value)
            .map(Bytes::from)
            .map_err(|e| StorageError::Codec(e.to_string())),
        StorageMediaType::Json => serde_json::to_vec(value)
            .map(Bytes::from)
            .map_err(|e| StorageError::Codec(e.to_string())),
    }
}

/// Decode stored bytes of either format. Unknown fields are ignored (data written by a newer
/// server must stay readable).
pub fn decode_value<T: DeserializeOwned>(bytes: &[u8]) -> Result<T, StorageError> {
    match recognize(bytes) {
        StorageMediaType::Cbor => conneg_cbor::DecodeOptions::default()
            .unknown_fields(conneg_cbor::UnknownFields::Ignore)
            .from_slice(bytes)
            .map_err(|e| StorageError::Codec(format!("stored CBOR: {e}"))),
        StorageMediaType::Json => serde_json::from_slice(bytes)
            .map_err(|e| StorageError::Codec(format!("stored JSON: {e}"))),
    }
}

/// The storage codec of a running server: the write format plus the object rules.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct StorageCodec {
    /// The format of new writes.
    pub media_type: StorageMediaType,
}

impl StorageCodec {
    /// A codec writing `media_type`.
    pub fn new(media_type: StorageMediaType) -> Self {
        Self { media_type }
    }

    /// Encode an object for storage, without `resourceVersion` and `selfLink` (restored on
    /// `obj` afterwards; hence `&mut`, to avoid cloning).
    pub fn encode<T: Serialize + HasObjectMeta>(&self, obj: &mut T) -> Result<Bytes, StorageError> {
        let rv = std::mem::take(&mut obj.meta_mut().resource_version);
        let self_link = std::mem::take(&mut obj.meta_mut().self_link);
        let out = encode_value(self.media_type, &*obj);
        obj.meta_mut().resource_version = rv;
        obj.meta_mut().self_link = self_link;
        out
    }

    /// Decode a stored key-value, setting `resourceVersion` to its `mod_revision`.
    pub fn decode<T: DeserializeOwned + HasObjectMeta>(
        &self,
        kv: &KeyValue,
    ) -> Result<T, StorageError> {
        decode_at(&kv.value, kv.mod_revision)
    }

    /// Decode the object of a watch event: the new object, or for DELETED the last state
    /// with `resourceVersion` set to the deletion's revision (as Kubernetes does).
    pub fn decode_event<T: DeserializeOwned + HasObjectMeta>(
        &self,
        ev: &Event,
    ) -> Result<T, StorageError> {
        match (ev.kind, &ev.prev) {
            (EventKind::Deleted, Some(prev)) => decode_at(&prev.value, ev.revision()),
            (EventKind::Deleted, None) => Err(StorageError::Codec(
                "DELETED event without previous value".into(),
            )),
            _ => decode_at(&ev.kv.value, ev.revision()),
        }
    }
}

fn decode_at<T: DeserializeOwned + HasObjectMeta>(
    bytes: &[u8],
    revision: Revision,
) -> Result<T, StorageError> {
    let mut obj: T = decode_value(bytes)?;
    obj.meta_mut().resource_version = revision.to_string();
    Ok(obj)
}
