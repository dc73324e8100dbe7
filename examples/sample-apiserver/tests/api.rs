//! Domain model: serialization shape, defaulting, conversion, validation, admission.

use conneg_apiserver::meta::ObjectMeta;
use conneg_apiserver::resource::{Versioned, VersionedList, convert};
use conneg_apiserver::validation::{
    resource_version_required, validate_object_meta, validate_object_meta_update,
};
use sample_apiserver::api::admission::{BanFlunder, Operation};
use sample_apiserver::api::{FLUNDERS, ReferenceType, internal, v1alpha1, v1beta1};
use serde_json::json;

fn meta(name: &str) -> ObjectMeta {
    ObjectMeta {
        name: name.into(),
        namespace: "default".into(),
        ..Default::default()
    }
}

fn beta(flunder: &str, fischer: &str, ty: Option<&str>) -> v1beta1::Flunder {
    let mut f = v1beta1::Flunder {
        metadata: meta("f"),
        spec: v1beta1::FlunderSpec {
            flunder_reference: flunder.into(),
            fischer_reference: fischer.into(),
            reference_type: ty.map(ReferenceType::from),
        },
        ..Default::default()
    };
    f.set_type_meta();
    f
}

fn alpha(reference: &str, ty: Option<&str>) -> v1alpha1::Flunder {
    let mut f = v1alpha1::Flunder {
        metadata: meta("f"),
        spec: v1alpha1::FlunderSpec {
            reference: reference.into(),
            reference_type: ty.map(ReferenceType::from),
        },
        ..Default::default()
    };
    f.set_type_meta();
    f
}

#[test]
fn json_shape_matches_go() {
    let f = beta("other", "", Some("Flunder"));
    let mut f = f;
    f.metadata.name = "my-first-flunder".into();
    assert_eq!(
        serde_json::to_value(&f).unwrap(),
        json!({"apiVersion":"wardle.example.com/v1beta1","kind":"Flunder",
               "metadata":{"name":"my-first-flunder","namespace":"default"},
               "spec":{"flunderReference":"other","referenceType":"Flunder"},"status":{}})
    );
    // Struct-valued fields are always written; lists always have items.
    let empty = v1alpha1::Flunder::default();
    assert_eq!(
        serde_json::to_string(&empty).unwrap(),
        r#"{"metadata":{},"spec":{},"status":{}}"#
    );
    let list = v1alpha1::FischerList::from_items(Default::default(), vec![]);
    assert_eq!(
        serde_json::to_value(&list).unwrap(),
        json!({"apiVersion":"wardle.example.com/v1alpha1","kind":"FischerList","metadata":{},"items":[]})
    );
}

#[test]
fn decodes_what_clients_send() {
    // The e2e create body, plus what kubectl adds.
    let body = r#"{"apiVersion":"wardle.example.com/v1alpha1","kind":"Flunder",
        "metadata":{"labels":{"sample-label":"true"},"name":"x","namespace":"default",
        "creationTimestamp":null,"annotations":{"kubectl.kubernetes.io/last-applied-configuration":"{\"a\":1}\n"}},
        "spec":null,"status":{},"extra":{"ignored":true}}"#;
    let f: v1alpha1::Flunder = serde_json::from_str(body).unwrap();
    assert_eq!(f.metadata.labels["sample-label"], "true");
    assert_eq!(f.spec, v1alpha1::FlunderSpec::default());
    let fischer: v1alpha1::Fischer =
        serde_json::from_str(r#"{"metadata":{"name":"f"},"disallowedFlunders":null}"#).unwrap();
    assert!(fischer.disallowed_flunders.is_empty());
    // v1beta1 "" reference type is unset.
    let b: v1beta1::Flunder = serde_json::from_str(r#"{"spec":{"referenceType":""}}"#).unwrap();
    assert_eq!(b.spec.reference_type, None);
}

#[test]
fn defaulting_v1alpha1_only() {
    let mut f = alpha("x", None);
    f.apply_defaults();
    assert_eq!(f.spec.reference_type, Some(ReferenceType::Flunder));
    let mut f = alpha("x", Some(""));
    f.apply_defaults();
    assert_eq!(f.spec.reference_type, Some(ReferenceType::Flunder));
    let mut f = alpha("x", Some("Fischer"));
    f.apply_defaults();
    assert_eq!(f.spec.reference_type, Some(ReferenceType::Fischer));
    let mut f = alpha("", None);
    f.apply_defaults();
    assert_eq!(f.spec.reference_type, None);
    // An empty type is no type: cleared, so the enum does not refuse what conversion ignores.
    let mut f = alpha("", Some(""));
    f.apply_defaults();
    assert_eq!(f.spec.reference_type, None);
    // Lists default every item.
    let mut list = v1alpha1::FlunderList::from_items(Default::default(), vec![alpha("y", None)]);
    list.apply_defaults();
    assert_eq!(
        list.items[0].spec.reference_type,
        Some(ReferenceType::Flunder)
    );
    // v1beta1 has no defaulting.
    let mut b = beta("x", "", None);
    b.apply_defaults();
    assert_eq!(b.spec.reference_type, None);
}

#[test]
fn conversion_round_trips() {
    for (flunder, fischer, ty) in [
        ("a", "", Some("Flunder")),
        ("", "b", Some("Fischer")),
        ("", "", None),
    ] {
        let b = beta(flunder, fischer, ty);
        let a: v1alpha1::Flunder = convert(b.clone());
        assert_eq!(a.api_version, "wardle.example.com/v1alpha1");
        let back: v1beta1::Flunder = convert(a.clone());
        assert_eq!(back, b, "v1beta1 -> v1alpha1 -> v1beta1");
        let again: v1alpha1::Flunder = convert(back);
        assert_eq!(again, a, "v1alpha1 -> v1beta1 -> v1alpha1");
    }
    let a: v1alpha1::Flunder = convert(beta("a", "", Some("Flunder")));
    assert_eq!(a.spec.reference, "a");
    let a: v1alpha1::Flunder = convert(beta("", "b", Some("Fischer")));
    assert_eq!(
        (a.spec.reference.as_str(), a.spec.reference_type),
        ("b", Some(ReferenceType::Fischer))
    );
}

#[test]
fn unknown_reference_type_edge_cases() {
    // v1alpha1 with an unknown type: conversion drops it (the declared enum refuses it first).
    let a = alpha("x", Some("Bogus"));
    let i = a.clone().into_internal();
    assert_eq!(i.spec, internal::FlunderSpec::default());
    let b: v1beta1::Flunder = convert(a);
    assert_eq!(b.spec, v1beta1::FlunderSpec::default());
    // Case matters: "flunder" is unknown.
    assert_eq!(
        alpha("x", Some("flunder")).into_internal().spec,
        internal::FlunderSpec::default()
    );
    // v1alpha1 with a reference but no type and no defaulting applied: dropped too.
    assert_eq!(
        alpha("x", None).into_internal().spec,
        internal::FlunderSpec::default()
    );
    // v1beta1 keeps an unknown value through internal (validation then rejects it) ...
    let b = beta("", "", Some("Bogus"));
    let i = b.clone().into_internal();
    assert_eq!(
        i.spec.reference_type,
        Some(ReferenceType::Other("Bogus".into()))
    );
    assert_eq!(v1beta1::Flunder::from_internal(i.clone()), b);
    // ... but it cannot be expressed in v1alpha1 (both unset).
    assert_eq!(
        v1alpha1::Flunder::from_internal(i).spec,
        v1alpha1::FlunderSpec::default()
    );
    // And it round-trips through JSON verbatim.
    let j = serde_json::to_string(&b).unwrap();
    assert!(j.contains(r#""referenceType":"Bogus""#));
    assert_eq!(serde_json::from_str::<v1beta1::Flunder>(&j).unwrap(), b);
}

#[test]
fn fischer_conversion_is_field_for_field() {
    let mut f = v1alpha1::Fischer {
        metadata: ObjectMeta {
            name: "fish".into(),
            ..Default::default()
        },
        disallowed_flunders: vec!["a".into(), "b".into()],
        ..Default::default()
    };
    f.set_type_meta();
    assert_eq!(
        v1alpha1::Fischer::from_internal(f.clone().into_internal()),
        f
    );
}

fn internal_flunder(flunder: &str, fischer: &str, ty: Option<&str>) -> internal::Flunder {
    beta(flunder, fischer, ty).into_internal()
}

#[test]
fn ban_flunder_admission() {
    let fischers = vec![
        internal::Fischer {
            metadata: ObjectMeta {
                name: "f1".into(),
                ..Default::default()
            },
            disallowed_flunders: vec!["x".into()],
        },
        internal::Fischer {
            metadata: ObjectMeta {
                name: "f2".into(),
                ..Default::default()
            },
            disallowed_flunders: vec!["y".into(), "banned".into()],
        },
    ];
    let plugin = BanFlunder;
    let mut f = internal_flunder("", "", None);
    f.metadata.name = "banned".into();
    let e = conneg::Status::from(plugin.admit_create(&f, &fischers).unwrap_err());
    assert_eq!(
        (e.code, e.reason),
        (403, Some(conneg::StatusReason::Forbidden))
    );
    assert_eq!(
        e.message,
        r#"flunders.wardle.example.com "banned" is forbidden: this name may not be used, please change the resource name"#
    );
    let d = e.details.unwrap();
    assert_eq!(
        (d.name.as_str(), d.group.as_str(), d.kind.as_str()),
        ("banned", "wardle.example.com", "flunders")
    );
    // Create only.
    assert!(plugin.admit(Operation::Update, "banned", &fischers).is_ok());
    assert!(plugin.admit(Operation::Delete, "banned", &fischers).is_ok());
    // Other names, no fischers.
    assert!(plugin.admit(Operation::Create, "fine", &fischers).is_ok());
    assert!(plugin.admit(Operation::Create, "banned", &[]).is_ok());
}

#[test]
fn json_field_order_matches_go() {
    // encoding/json writes struct fields in declaration order: kind before apiVersion.
    let f = beta("other", "", Some("Flunder"));
    assert_eq!(
        serde_json::to_string(&f).unwrap(),
        r#"{"kind":"Flunder","apiVersion":"wardle.example.com/v1beta1","metadata":{"name":"f","namespace":"default"},"spec":{"flunderReference":"other","referenceType":"Flunder"},"status":{}}"#
    );
}

#[test]
fn object_meta_validation() {
    let ok = meta("good-name");
    assert!(validate_object_meta(&ok, true).is_empty());
    let msgs = |m: &ObjectMeta, namespaced| -> Vec<String> {
        validate_object_meta(m, namespaced)
            .iter()
            .map(ToString::to_string)
            .collect()
    };
    let mut m = meta("a/b");
    m.namespace = "Bad_NS".into();
    m.labels.insert("ok".into(), "-bad".into());
    assert_eq!(
        msgs(&m, true),
        [
            r#"metadata.name: Invalid value: "a/b": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"#.to_owned(),
            r#"metadata.namespace: Invalid value: "Bad_NS": a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"#.to_owned(),
            r#"metadata.labels: Invalid value: "-bad": a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"#.to_owned(),
        ]
    );
    assert_eq!(
        msgs(&ObjectMeta::default(), true),
        [
            "metadata.name: Required value: name or generateName is required",
            "metadata.namespace: Required value",
        ]
    );
    assert_eq!(
        msgs(&meta("f"), false),
        ["metadata.namespace: Forbidden: not allowed on this type"]
    );
    let mut big = meta("x");
    big.annotations.insert("a".into(), "v".repeat(256 * 1024));
    assert_eq!(
        msgs(&big, true),
        ["metadata.annotations: Too long: may not be more than 262144 bytes"]
    );
}

#[test]
fn object_meta_update_validation() {
    let mut old = meta("a");
    old.uid = "u1".into();
    old.generation = 2;
    let mut new = old.clone();
    new.resource_version = "5".into();
    assert!(validate_object_meta_update(&new, &old).is_empty());
    new.uid = "u2".into();
    new.generation = 1;
    new.resource_version.clear();
    let got: Vec<String> = validate_object_meta_update(&new, &old)
        .iter()
        .map(ToString::to_string)
        .collect();
    assert_eq!(
        got,
        [
            r#"metadata.resourceVersion: Invalid value: "": must be specified for an update"#,
            "metadata.generation: Invalid value: 1: must not be decremented",
            r#"metadata.uid: Invalid value: "u2": field is immutable"#,
        ]
    );
    let e = resource_version_required(FLUNDERS.group, FLUNDERS.resource, "a");
    assert_eq!(
        e.message,
        r#"flunders.wardle.example.com "a" is invalid: metadata.resourceVersion: Invalid value: 0x0: must be specified for an update"#
    );
}
