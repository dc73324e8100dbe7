//! The storage codec: deterministic CBOR or JSON in, either out; resourceVersion from the
//! store.

use std::collections::BTreeMap;

use conneg_apiserver::meta::{ManagedFieldsEntry, ObjectMeta, Time};
use conneg_apiserver::resource::Versioned;
use conneg_apiserver::storage::codec::{StorageCodec, StorageMediaType, decode_value, recognize};
use conneg_apiserver::storage::keys::Keys;
use conneg_apiserver::storage::{
    EmbeddedOptions, EmbeddedStore, EventKind, ListOptions, MemoryStore, Storage, Store,
};
use sample_apiserver::api::{FLUNDERS, GROUP};
use sample_apiserver::api::{ReferenceType, v1alpha1};

fn flunder(name: &str) -> v1alpha1::Flunder {
    let mut f = v1alpha1::Flunder {
        metadata: ObjectMeta {
            name: name.into(),
            namespace: "default".into(),
            uid: "0b6f4c9e-0000-4000-8000-000000000001".into(),
            resource_version: "999".into(),
            creation_timestamp: Some(Time::from_unix(1_700_000_000)),
            labels: BTreeMap::from([("sample-label".into(), "true".into())]),
            managed_fields: Some(vec![ManagedFieldsEntry {
                manager: "kubectl".into(),
                operation: "Apply".into(),
                api_version: "wardle.example.com/v1alpha1".into(),
                time: Some(Time::from_unix(1_700_000_000)),
                fields_type: "FieldsV1".into(),
                fields_v1: Some(serde_json::json!({"f:spec": {"f:reference": {}}, "f:n": 1.5})),
                subresource: String::new(),
            }]),
            ..Default::default()
        },
        spec: v1alpha1::FlunderSpec {
            reference: "other".into(),
            reference_type: Some(ReferenceType::Flunder),
        },
        ..Default::default()
    };
    f.set_type_meta();
    f
}

#[test]
fn cbor_is_prefixed_deterministic_and_without_resource_version() {
    let codec = StorageCodec::new(StorageMediaType::Cbor);
    let mut f = flunder("a");
    let bytes = codec.encode(&mut f).unwrap();
    assert_eq!(&bytes[..3], &[0xd9, 0xd9, 0xf7]);
    assert_eq!(recognize(&bytes), StorageMediaType::Cbor);
    assert_eq!(
        f.metadata.resource_version, "999",
        "restored on the caller's object"
    );
    // Same object, other resourceVersion: same bytes.
    let mut g = flunder("a");
    g.metadata.resource_version = "5".into();
    assert_eq!(codec.encode(&mut g).unwrap(), bytes);
    let raw: v1alpha1::Flunder = decode_value(&bytes).unwrap();
    assert_eq!(raw.metadata.resource_version, "");
    let mut want = flunder("a");
    want.metadata.resource_version.clear();
    assert_eq!(
        raw, want,
        "CBOR round trip keeps times, managedFields, numbers"
    );
}

#[test]
fn json_storage_is_recognised_and_has_no_resource_version() {
    let codec = StorageCodec::new(StorageMediaType::Json);
    let bytes = codec.encode(&mut flunder("a")).unwrap();
    assert_eq!(bytes[0], b'{');
    assert_eq!(recognize(&bytes), StorageMediaType::Json);
    let text = std::str::from_utf8(&bytes).unwrap();
    assert!(!text.contains("resourceVersion"), "{text}");
    assert!(
        text.contains(r#""creationTimestamp":"2023-11-14T22:13:20Z""#),
        "{text}"
    );
}

#[test]
fn stored_data_from_kubernetes_and_newer_servers_reads() {
    // JSON as Kubernetes' sample-apiserver stores it in etcd.
    let k8s = br#"{"kind":"Flunder","apiVersion":"wardle.example.com/v1alpha1","metadata":{"name":"my-first-flunder","namespace":"default","uid":"u","generation":1,"creationTimestamp":"2024-05-01T10:00:00Z","labels":{"sample-label":"true"},"managedFields":[{"manager":"kubectl-client-side-apply","operation":"Update","apiVersion":"wardle.example.com/v1alpha1","time":"2024-05-01T10:00:00Z","fieldsType":"FieldsV1","fieldsV1":{"f:metadata":{"f:labels":{".":{},"f:sample-label":{}}}}}]},"spec":{},"status":{}}"#;
    let f: v1alpha1::Flunder = decode_value(k8s).unwrap();
    assert_eq!(f.metadata.generation, 1);
    // CBOR with a field this version does not know.
    let mut v = serde_json::to_value(flunder("x")).unwrap();
    v["spec"]["newField"] = serde_json::json!("from the future");
    let cbor = conneg_cbor_encode(&v);
    let f: v1alpha1::Flunder = decode_value(&cbor).unwrap();
    assert_eq!(f.metadata.name, "x");
}

fn conneg_cbor_encode(v: &serde_json::Value) -> Vec<u8> {
    // Through the codec's own encoder, so the bytes are what the server would write.
    conneg_apiserver::storage::codec::encode_value(StorageMediaType::Cbor, v)
        .unwrap()
        .to_vec()
}

async fn mixed_storage(store: Store) {
    let keys = Keys::for_group(GROUP);
    let json = StorageCodec::new(StorageMediaType::Json);
    let cbor = StorageCodec::new(StorageMediaType::Cbor);
    let ka = keys.object(&FLUNDERS, "default", "a");
    let kb = keys.object(&FLUNDERS, "default", "b");
    let a = store
        .create(&ka, json.encode(&mut flunder("a")).unwrap())
        .await
        .unwrap();
    let b = store
        .create(&kb, cbor.encode(&mut flunder("b")).unwrap())
        .await
        .unwrap();
    for codec in [json, cbor] {
        let list = store
            .list(
                &keys.collection(&FLUNDERS, Some("default")),
                ListOptions::default(),
            )
            .await
            .unwrap();
        let objs: Vec<v1alpha1::Flunder> = list
            .items
            .iter()
            .map(|kv| codec.decode(kv).unwrap())
            .collect();
        assert_eq!(objs[0].metadata.name, "a");
        assert_eq!(
            objs[0].metadata.resource_version,
            a.mod_revision.to_string()
        );
        assert_eq!(objs[1].metadata.name, "b");
        assert_eq!(
            objs[1].metadata.resource_version,
            b.mod_revision.to_string()
        );
    }
    // Read-modify-write with nothing changed: identical bytes, no new revision.
    let mut obj: v1alpha1::Flunder = cbor.decode(&b).unwrap();
    let up = store
        .update(&kb, cbor.encode(&mut obj).unwrap(), b.mod_revision)
        .await
        .unwrap();
    assert!(!up.changed);
    // Rewriting the JSON-stored object in CBOR mode is a real change (migration on write).
    let mut obj: v1alpha1::Flunder = cbor.decode(&a).unwrap();
    let up = store
        .update(&ka, cbor.encode(&mut obj).unwrap(), a.mod_revision)
        .await
        .unwrap();
    assert!(up.changed);
    assert_eq!(recognize(&up.kv.value), StorageMediaType::Cbor);
    // Deleted objects decode from the event's previous value at the deletion revision.
    let mut w = store
        .watch(&keys.collection(&FLUNDERS, None), up.kv.mod_revision)
        .await
        .unwrap();
    let del = store.delete(&kb, None).await.unwrap();
    let ev = w.next().await.unwrap().unwrap();
    assert_eq!(ev.kind, EventKind::Deleted);
    let gone: v1alpha1::Flunder = json.decode_event(&ev).unwrap();
    assert_eq!(gone.metadata.name, "b");
    assert_eq!(gone.metadata.resource_version, del.revision.to_string());
}

#[tokio::test]
async fn mixed_json_and_cbor_on_memory() {
    mixed_storage(Store::Memory(MemoryStore::new())).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mixed_json_and_cbor_on_embedded() {
    let dir = tempfile::tempdir().unwrap();
    let s = EmbeddedStore::open_dir(
        dir.path(),
        sample_apiserver::api::GROUP,
        EmbeddedOptions::default(),
    )
    .unwrap();
    mixed_storage(Store::Embedded(s)).await;
}

#[test]
fn media_type_names() {
    assert_eq!(
        "json".parse::<StorageMediaType>().unwrap(),
        StorageMediaType::Json
    );
    assert_eq!(
        "application/cbor".parse::<StorageMediaType>().unwrap(),
        StorageMediaType::Cbor
    );
    assert!("yaml".parse::<StorageMediaType>().is_err());
    assert_eq!(StorageMediaType::default(), StorageMediaType::Cbor);
}

/// The reference write-up's CBOR for a v1beta1 Flunder (Kubernetes encode options: prefix,
/// bytewise-lexical keys, strings as byte strings).
const REFERENCE_CBOR_HEX: &str = "d9d9f7a5446b696e6447466c756e6465724473706563a24d7265666572656e63655479706547466c756e64657250666c756e6465725265666572656e6365456f7468657246737461747573a0486d65746164617461a2446e616d65506d792d66697273742d666c756e646572496e616d6573706163654764656661756c744a61706956657273696f6e581a776172646c652e6578616d706c652e636f6d2f76316265746131";

fn unhex(s: &str) -> Vec<u8> {
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
        .collect()
}

#[test]
fn v1beta1_flunder_encodes_exactly_as_kubernetes() {
    use sample_apiserver::api::v1beta1;
    let mut f = v1beta1::Flunder {
        metadata: ObjectMeta {
            name: "my-first-flunder".into(),
            namespace: "default".into(),
            ..Default::default()
        },
        spec: v1beta1::FlunderSpec {
            flunder_reference: "other".into(),
            reference_type: Some(ReferenceType::Flunder),
            ..Default::default()
        },
        ..Default::default()
    };
    f.set_type_meta();
    let want = unhex(REFERENCE_CBOR_HEX);
    let got = conneg_apiserver::storage::codec::encode_value(StorageMediaType::Cbor, &f).unwrap();
    assert_eq!(got.to_vec(), want);
    let back: v1beta1::Flunder = decode_value(&want).unwrap();
    assert_eq!(back, f);
}

#[test]
fn strict_cbor_decoding_sees_unknown_fields_in_our_types() {
    // What the HTTP layer does for fieldValidation=Strict/Warn on a CBOR body: our types do
    // not deny unknown fields themselves, the decoder reports them.
    let good = conneg_cbor_encode(&serde_json::to_value(flunder("x")).unwrap());
    let f: v1alpha1::Flunder = conneg_cbor::from_slice(&good).unwrap();
    assert_eq!(
        f.metadata.managed_fields.as_ref().map_or(0, Vec::len),
        1,
        "fieldsV1 is free-form, not unknown"
    );
    let mut v = serde_json::to_value(flunder("x")).unwrap();
    v["spec"]["bogus"] = serde_json::json!(1);
    let bad = conneg_cbor_encode(&v);
    let err = conneg_cbor::from_slice::<v1alpha1::Flunder>(&bad).unwrap_err();
    assert!(err.to_string().contains("bogus"), "{err}");
    let (_, warnings) = conneg_cbor::DecodeOptions::default()
        .from_slice_with_warnings::<v1alpha1::Flunder>(&bad)
        .unwrap();
    assert_eq!(warnings.len(), 1);
}
