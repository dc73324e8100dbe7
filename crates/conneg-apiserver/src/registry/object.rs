//! What the generic registry needs of an object of any kind, compiled or not: how it is
//! stored, and the hooks of its strategy, as [`Object`].
//!
//! A compiled kind implements [`Strategy`] and is an [`Object`] through it; a kind known only
//! at run time (a custom resource) implements [`Object`] itself, its facts coming from its
//! definition rather than from constants.

use bytes::Bytes;
use futures_util::future::BoxFuture;
use serde_json::{Map, Value};

use super::{Error, Registry, Strategy};
use crate::meta::HasObjectMeta;
use crate::resource::Versioned;
use crate::storage::codec::StorageCodec;
use crate::storage::{KeyValue, StorageError};
use crate::validation::FieldError;

/// An object the generic registry stores and serves. Every [`Strategy`] is one; the items
/// mean what the strategy's items of the same names mean.
pub trait Object: HasObjectMeta + Clone + PartialEq + Send + Sync + 'static {
    /// Whether DELETE answers with the deleted object ([`Strategy::RETURN_DELETED_OBJECT`]).
    const RETURN_DELETED_OBJECT: bool;
    /// Stored bytes to the object, with its storage version's defaults applied and its
    /// resourceVersion set from the revision.
    fn decode_stored(codec: &StorageCodec, kv: &KeyValue) -> Result<Self, StorageError>;
    /// The object to stored bytes, and the object as stored.
    fn encode_stored(self, codec: &StorageCodec) -> Result<(Bytes, Self), StorageError>;
    /// The object in its storage version, as a JSON object.
    fn to_stored_json(&self) -> Result<Map<String, Value>, String>;
    /// The object from its storage version as a JSON object.
    fn from_stored_json(m: Map<String, Value>) -> Result<Self, String>;
    /// [`Strategy::validate_create`].
    fn validate_create(&self) -> Vec<FieldError>;
    /// [`Strategy::validate_update`].
    fn validate_update(&self, old: &Self) -> Vec<FieldError>;
    /// [`Strategy::prepare_for_create`].
    fn prepare_for_create(&mut self);
    /// [`Strategy::prepare_for_update`].
    fn prepare_for_update(&mut self, old: &Self);
    /// [`Strategy::prepare_for_status_update`].
    fn prepare_for_status_update(&mut self, old: &Self);
    /// [`Strategy::validate_status_update`].
    fn validate_status_update(&self) -> Vec<FieldError>;
    /// [`Strategy::begin_delete`].
    fn begin_delete(&mut self) -> Result<bool, Error>;
    /// [`Strategy::finalizing`].
    fn finalizing(&self) -> bool;
    /// [`Strategy::finalize`].
    fn finalize(registry: Registry, obj: Self) -> BoxFuture<'static, Result<(), Error>>;
}

impl<K: Strategy> Object for K {
    const RETURN_DELETED_OBJECT: bool = <K as Strategy>::RETURN_DELETED_OBJECT;

    fn decode_stored(codec: &StorageCodec, kv: &KeyValue) -> Result<Self, StorageError> {
        let mut stored: K::Stored = codec.decode(kv)?;
        stored.apply_defaults();
        Ok(stored.into_internal())
    }
    fn encode_stored(self, codec: &StorageCodec) -> Result<(Bytes, Self), StorageError> {
        let mut stored = K::Stored::from_internal(self);
        let bytes = codec.encode(&mut stored)?;
        Ok((bytes, stored.into_internal()))
    }
    fn to_stored_json(&self) -> Result<Map<String, Value>, String> {
        match serde_json::to_value(K::Stored::from_internal(self.clone())) {
            Ok(Value::Object(m)) => Ok(m),
            Ok(_) => Err("an object is not a JSON object".into()),
            Err(e) => Err(format!("encoding the object: {e}")),
        }
    }
    fn from_stored_json(m: Map<String, Value>) -> Result<Self, String> {
        serde_json::from_value::<K::Stored>(Value::Object(m))
            .map(Versioned::into_internal)
            .map_err(|e| format!("decoding the object: {e}"))
    }
    fn validate_create(&self) -> Vec<FieldError> {
        Strategy::validate_create(self)
    }
    fn validate_update(&self, old: &Self) -> Vec<FieldError> {
        Strategy::validate_update(self, old)
    }
    fn prepare_for_create(&mut self) {
        Strategy::prepare_for_create(self);
    }
    fn prepare_for_update(&mut self, old: &Self) {
        Strategy::prepare_for_update(self, old);
    }
    fn prepare_for_status_update(&mut self, old: &Self) {
        Strategy::prepare_for_status_update(self, old);
    }
    fn validate_status_update(&self) -> Vec<FieldError> {
        Strategy::validate_status_update(self)
    }
    fn begin_delete(&mut self) -> Result<bool, Error> {
        Strategy::begin_delete(self)
    }
    fn finalizing(&self) -> bool {
        Strategy::finalizing(self)
    }
    fn finalize(registry: Registry, obj: Self) -> BoxFuture<'static, Result<(), Error>> {
        <K as Strategy>::finalize(registry, obj)
    }
}
