//! A custom resource as the registry holds it: an unstructured object (KEP-4222's case),
//! its metadata typed and everything else kept as JSON values, stored as deterministic CBOR
//! (or JSON) like any object.

use bytes::Bytes;
use futures_util::future::BoxFuture;
use serde::de::Error as _;
use serde::ser::SerializeMap;
use serde_json::{Map, Value};

use crate::meta::{HasObjectMeta, ObjectMeta};
use crate::registry::{Error, Object, Registry};
use crate::storage::codec::StorageCodec;
use crate::storage::{KeyValue, StorageError};
use crate::validation::FieldError;

/// An object of a custom resource: `metadata` as [`ObjectMeta`], every other top-level field
/// (`apiVersion`, `kind`, `spec`, `status`, ...) as it came.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct CustomResource {
    /// `metadata`.
    pub(crate) metadata: ObjectMeta,
    /// Every other top-level field.
    pub(crate) fields: Map<String, Value>,
}

impl CustomResource {
    /// Whether `self` and `other` are equal but for their metadata, type and (`status`
    /// true: with a status subresource) their status: what moves `metadata.generation` on.
    pub(crate) fn same_spec(&self, other: &Self, status: bool) -> bool {
        fn rest(c: &CustomResource, status: bool) -> impl Iterator<Item = (&String, &Value)> {
            c.fields.iter().filter(move |(k, _)| {
                let ignored = matches!(k.as_str(), "apiVersion" | "kind");
                !(ignored || status && *k == "status")
            })
        }
        rest(self, status).eq(rest(other, status))
    }

    /// `apiVersion` (empty when absent or not a string).
    pub(crate) fn api_version(&self) -> &str {
        self.fields
            .get("apiVersion")
            .and_then(Value::as_str)
            .unwrap_or_default()
    }

    /// `kind` (empty when absent or not a string).
    pub(crate) fn kind(&self) -> &str {
        self.fields
            .get("kind")
            .and_then(Value::as_str)
            .unwrap_or_default()
    }

    /// Sets `apiVersion` and `kind`.
    pub(crate) fn set_type_meta(&mut self, api_version: &str, kind: &str) {
        self.fields
            .insert("apiVersion".into(), Value::String(api_version.to_owned()));
        self.fields
            .insert("kind".into(), Value::String(kind.to_owned()));
    }

    /// The object as one JSON value.
    pub(crate) fn to_json(&self) -> Result<Value, serde_json::Error> {
        serde_json::to_value(self)
    }

    /// The object from one JSON value: `metadata` must be an object metadata.
    pub(crate) fn from_json(v: Value) -> Result<Self, serde_json::Error> {
        serde_json::from_value(v)
    }
}

impl HasObjectMeta for CustomResource {
    fn meta(&self) -> &ObjectMeta {
        &self.metadata
    }
    fn meta_mut(&mut self) -> &mut ObjectMeta {
        &mut self.metadata
    }
}

impl serde::Serialize for CustomResource {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let skip = usize::from(self.fields.contains_key("metadata"));
        let mut m = s.serialize_map(Some(self.fields.len() + 1 - skip))?;
        // The keys in order, `metadata` among them (JSON output is sorted, as Go's
        // unstructured objects are; CBOR sorts its own).
        let mut written = false;
        for (k, v) in &self.fields {
            if k == "metadata" {
                continue;
            }
            if !written && k.as_str() > "metadata" {
                m.serialize_entry("metadata", &self.metadata)?;
                written = true;
            }
            m.serialize_entry(k, v)?;
        }
        if !written {
            m.serialize_entry("metadata", &self.metadata)?;
        }
        m.end()
    }
}

impl<'de> serde::Deserialize<'de> for CustomResource {
    /// One pass over the object's map: `metadata` straight into [`ObjectMeta`] (no JSON tree
    /// in between), every other field as a JSON value.
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Fields;
        impl<'de> serde::de::Visitor<'de> for Fields {
            type Value = CustomResource;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("an object")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut map: A,
            ) -> Result<CustomResource, A::Error> {
                let mut cr = CustomResource::default();
                let mut seen_metadata = false;
                while let Some(key) = map.next_key::<String>()? {
                    if key == "metadata" {
                        if seen_metadata {
                            return Err(A::Error::custom("duplicate field `metadata`"));
                        }
                        seen_metadata = true;
                        let m: Option<ObjectMeta> = map
                            .next_value()
                            .map_err(|e| A::Error::custom(format!("metadata: {e}")))?;
                        cr.metadata = m.unwrap_or_default();
                    } else {
                        let v: Value = map.next_value()?;
                        if cr.fields.insert(key.clone(), v).is_some() {
                            return Err(A::Error::custom(format!("duplicate field `{key}`")));
                        }
                    }
                }
                Ok(cr)
            }
        }
        d.deserialize_map(Fields)
    }
}

impl Object for CustomResource {
    const RETURN_DELETED_OBJECT: bool = false;

    fn decode_stored(codec: &StorageCodec, kv: &KeyValue) -> Result<Self, StorageError> {
        codec.decode(kv)
    }
    fn encode_stored(mut self, codec: &StorageCodec) -> Result<(Bytes, Self), StorageError> {
        let bytes = codec.encode(&mut self)?;
        Ok((bytes, self))
    }
    fn to_stored_json(&self) -> Result<Map<String, Value>, String> {
        match self.to_json() {
            Ok(Value::Object(m)) => Ok(m),
            Ok(_) => Err("an object is not a JSON object".into()),
            Err(e) => Err(format!("encoding the object: {e}")),
        }
    }
    fn from_stored_json(m: Map<String, Value>) -> Result<Self, String> {
        Self::from_json(Value::Object(m)).map_err(|e| format!("decoding the object: {e}"))
    }
    /// The schema's checks run as the declaration of the request's version; the metadata's,
    /// as for every kind.
    fn validate_create(&self) -> Vec<FieldError> {
        Vec::new()
    }
    fn validate_update(&self, _old: &Self) -> Vec<FieldError> {
        Vec::new()
    }
    fn prepare_for_create(&mut self) {}
    fn prepare_for_update(&mut self, _old: &Self) {}
    fn prepare_for_status_update(&mut self, _old: &Self) {}
    fn validate_status_update(&self) -> Vec<FieldError> {
        Vec::new()
    }
    fn begin_delete(&mut self) -> Result<bool, Error> {
        Ok(false)
    }
    fn finalizing(&self) -> bool {
        false
    }
    fn finalize(_registry: Registry, _obj: Self) -> BoxFuture<'static, Result<(), Error>> {
        Box::pin(async { Ok(()) })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn round_trips_and_sorts_metadata_among_the_keys() {
        let v = json!({"apiVersion": "a/v1", "kind": "K", "metadata": {"name": "x"}, "spec": {"b": 1}, "zeta": true});
        let cr: CustomResource = serde_json::from_value(v.clone()).unwrap();
        let s = serde_json::to_string(&cr).unwrap();
        assert_eq!(
            s,
            r#"{"apiVersion":"a/v1","kind":"K","metadata":{"name":"x"},"spec":{"b":1},"zeta":true}"#
        );
        let back: CustomResource = serde_json::from_str(&s).unwrap();
        assert_eq!(back, cr);
        let cbor = conneg_cbor::to_vec(&cr).unwrap();
        let from_cbor: CustomResource = conneg_cbor::from_slice(&cbor).unwrap();
        assert_eq!(from_cbor, cr);
    }

    #[test]
    fn status_counts_as_spec_only_without_a_status_subresource() {
        let a: CustomResource =
            serde_json::from_value(json!({"metadata": {"name": "x"}, "spec": 1, "status": 1}))
                .unwrap();
        let mut b = a.clone();
        b.fields.insert("status".into(), json!(2));
        b.metadata.labels.insert("l".into(), "v".into());
        assert!(a.same_spec(&b, true));
        assert!(!a.same_spec(&b, false));
        b.fields.insert("spec".into(), json!(2));
        assert!(!a.same_spec(&b, true));
    }

    #[test]
    fn null_metadata_is_empty_and_repeated_fields_are_errors() {
        let cr: CustomResource = serde_json::from_str(r#"{"metadata":null,"a":1}"#).unwrap();
        assert_eq!(
            (cr.metadata.name.as_str(), cr.fields["a"].clone()),
            ("", json!(1))
        );
        for doc in [r#"{"a":1,"a":2}"#, r#"{"metadata":{},"metadata":{}}"#] {
            let e = serde_json::from_str::<CustomResource>(doc).unwrap_err();
            assert!(e.to_string().starts_with("duplicate field"), "{e}");
        }
    }

    #[test]
    fn bad_metadata_is_an_error() {
        let e =
            serde_json::from_value::<CustomResource>(json!({"metadata": {"name": 3}})).unwrap_err();
        assert!(e.to_string().starts_with("metadata:"), "{e}");
    }
}

/// The examples of this file's documentation, run as tests: the module is private to the
/// crate, so rustdoc does not run them.
#[cfg(test)]
mod examples {
    #[test]
    fn custom_resource() {
        use crate::customresource::CustomResource;

        let cr: CustomResource = serde_json::from_str(
            r#"{"apiVersion":"stable.example.com/v1","kind":"CronTab","metadata":{"name":"a"},"spec":{"replicas":1}}"#,
        ).unwrap();
        assert_eq!(cr.metadata.name, "a");
        assert_eq!(cr.fields["spec"]["replicas"], 1);
        assert_eq!(serde_json::to_value(&cr).unwrap()["metadata"]["name"], "a");
    }
}
