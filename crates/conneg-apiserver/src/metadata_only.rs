//! Metadata-only responses (`Accept: application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1`,
//! `as=PartialObjectMetadataList` for lists, `v=v1beta1` too, in JSON or CBOR): what client-go's
//! metadata client and informers and kube-rs' `list_metadata` / `metadata_watcher` ask for.
//!
//! Kind-agnostic: the caller hands over the object's metadata (anything that serializes as
//! `metav1.ObjectMeta`) and the name Kubernetes' messages give its type. As Kubernetes'
//! `asPartialObjectMetadata` / `asPartialObjectMetadataList`:
//!
//! * an object is `{"kind":"PartialObjectMetadata","apiVersion":"meta.k8s.io/v1","metadata":{…}}`;
//! * a list is a `PartialObjectMetadataList` with the list's `metadata` (`resourceVersion`,
//!   `continue`, `remainingItemCount`) and one `PartialObjectMetadata` per item;
//! * `PartialObjectMetadata` of a list, or `PartialObjectMetadataList` of a single object, is 406
//!   `NotAcceptable` (`you requested PartialObjectMetadata, but the requested object is a list
//!   (*wardle.FlunderList)`), answered after the object or list was read, so a missing object is
//!   still 404.

use conneg::{Conversion, Status, StatusReason};
use http::StatusCode;
use serde::Serialize;
use serde_json::{Value, json};

const META_GROUP: &str = "meta.k8s.io";
const OBJECT: &str = "PartialObjectMetadata";
const LIST: &str = "PartialObjectMetadataList";

/// Every metadata-only conversion Kubernetes serves, in every codec (CBOR included): the
/// object and list forms in `meta.k8s.io/v1` and `meta.k8s.io/v1beta1`.
pub(crate) const CONVERSIONS: [Conversion; 4] = [
    Conversion::partial_object_metadata(),
    Conversion::partial_object_metadata_list(),
    Conversion::new(OBJECT, META_GROUP, "v1beta1"),
    Conversion::new(LIST, META_GROUP, "v1beta1"),
];

/// Whether `conv` asks for metadata only (one of [`CONVERSIONS`]).
pub(crate) fn is_metadata(conv: &Conversion) -> bool {
    CONVERSIONS.contains(conv)
}

/// One object as `PartialObjectMetadata`; 406 if `conv` asked for a list. `go_type` names the
/// object's type as Kubernetes' message does (`*wardle.Flunder`).
pub(crate) fn object<M: Serialize + ?Sized>(
    conv: &Conversion,
    go_type: &str,
    metadata: &M,
) -> Result<Value, MetadataOnlyError> {
    check_object(conv, go_type)?;
    partial(conv, metadata)
}

/// A list as `PartialObjectMetadataList`; 406 if `conv` asked for a single object. `go_type`
/// names the list's type as Kubernetes' message does (`*wardle.FlunderList`).
pub(crate) fn list<'a, M: Serialize + 'a, L: Serialize + ?Sized>(
    conv: &Conversion,
    go_type: &str,
    items: impl IntoIterator<Item = &'a M>,
    list_meta: &L,
) -> Result<Value, MetadataOnlyError> {
    if conv.kind == OBJECT {
        return Err(MetadataOnlyError::NotAcceptable(format!(
            "you requested {OBJECT}, but the requested object is a list ({go_type})"
        )));
    }
    let items = items
        .into_iter()
        .map(|m| partial(conv, m))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(json!({
        "kind": LIST,
        "apiVersion": api_version(conv),
        "metadata": to_value(list_meta)?,
        "items": items,
    }))
}

/// 406 if `conv` asks for a list: what a get, and each event of a watch, carry is one object
/// (`go_type` as for [`object`]). A watch checks this before it starts.
pub(crate) fn check_object(conv: &Conversion, go_type: &str) -> Result<(), MetadataOnlyError> {
    if conv.kind == LIST {
        return Err(MetadataOnlyError::NotAcceptable(format!(
            "you requested {LIST}, but the requested object is not a list ({go_type})"
        )));
    }
    Ok(())
}

/// `metadata` as a `PartialObjectMetadata` in `conv`'s group and version, whichever kind `conv`
/// names (for objects that are neither a list nor a stored object, such as a bookmark's).
pub(crate) fn partial<M: Serialize + ?Sized>(
    conv: &Conversion,
    metadata: &M,
) -> Result<Value, MetadataOnlyError> {
    Ok(json!({
        "kind": OBJECT,
        "apiVersion": api_version(conv),
        "metadata": to_value(metadata)?,
    }))
}

fn api_version(conv: &Conversion) -> String {
    format!("{}/{}", conv.group, conv.version)
}

fn to_value<M: Serialize + ?Sized>(m: &M) -> Result<Value, MetadataOnlyError> {
    serde_json::to_value(m).map_err(MetadataOnlyError::Unencodable)
}

/// Why an object or list could not be answered as metadata only.
#[derive(Debug)]
pub(crate) enum MetadataOnlyError {
    /// An object asked for as a list, or a list as an object (406): Kubernetes' message.
    NotAcceptable(String),
    /// Metadata that does not encode as JSON (500).
    Unencodable(serde_json::Error),
}

impl From<MetadataOnlyError> for Status {
    fn from(e: MetadataOnlyError) -> Status {
        match e {
            MetadataOnlyError::NotAcceptable(message) => Status::failure(
                StatusCode::NOT_ACCEPTABLE,
                StatusReason::NotAcceptable,
                message,
            ),
            MetadataOnlyError::Unencodable(e) => {
                Status::internal_error(format!("encoding metadata: {e}"))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn objects_and_lists_have_kubernetes_shape() {
        let meta = json!({"name": "a", "resourceVersion": "3"});
        let v1beta1 = &CONVERSIONS[2];
        assert_eq!(
            object(v1beta1, "*g.K", &meta).unwrap(),
            json!({"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1beta1", "metadata": meta})
        );
        let l = list(
            &Conversion::partial_object_metadata_list(),
            "*g.KList",
            [&meta],
            &json!({"resourceVersion": "4", "continue": "c"}),
        )
        .unwrap();
        assert_eq!(l["kind"], "PartialObjectMetadataList");
        assert_eq!(l["metadata"]["continue"], "c");
        assert_eq!(l["items"][0]["kind"], "PartialObjectMetadata");
        assert_eq!(l["items"][0]["metadata"]["name"], "a");
    }

    #[test]
    fn wrong_cardinality_is_not_acceptable() {
        let e = object(
            &Conversion::partial_object_metadata_list(),
            "*g.K",
            &json!({}),
        )
        .unwrap_err();
        let e = Status::from(e);
        assert_eq!(e.code, 406);
        assert_eq!(e.reason, Some(StatusReason::NotAcceptable));
        assert_eq!(
            e.message,
            "you requested PartialObjectMetadataList, but the requested object is not a list (*g.K)"
        );
        let e = list(
            &Conversion::partial_object_metadata(),
            "*g.KList",
            std::iter::empty::<&Value>(),
            &json!({}),
        )
        .unwrap_err();
        assert_eq!(
            Status::from(e).message,
            "you requested PartialObjectMetadata, but the requested object is a list (*g.KList)"
        );
        assert!(check_object(&Conversion::partial_object_metadata(), "*g.K").is_ok());
        assert!(!is_metadata(&Conversion::table()));
    }
}
