//! The wardle types declared with `#[conneg_apiserver::kind]` are the types that were written by
//! hand before it: the same JSON schema (so the same published OpenAPI and the same declared
//! validation), the same JSON and CBOR, and the same resource, kind and version facts.
//!
//! The hand-written types below are copies of the ones the attribute replaced.

use conneg_apiserver::declarative::published;
use conneg_apiserver::meta::ObjectMeta;
use conneg_apiserver::resource::{Versioned, VersionedObject};
use sample_apiserver::api::{FLUNDERS, GROUP, ReferenceType, V1ALPHA1, V1BETA1, v1alpha1, v1beta1};
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

/// A type as it was written by hand before `#[kind]`: the `kind`, `apiVersion` and `metadata`
/// fields copied onto every object, then its own fields.
macro_rules! handwritten {
    // Flunder, the same in both versions but for its spec (and so its status) types.
    (Flunder, $api_version:literal) => {
        handwritten!(
            /// Flunder is an example type with a spec and a status.
            Flunder, " `Flunder`.", $api_version, {
            /// The desired state.
            #[serde(default, deserialize_with = "null_as_default")]
            pub(crate) spec: FlunderSpec,
            /// The observed state.
            #[serde(default, deserialize_with = "null_as_default")]
            pub(crate) status: FlunderStatus,
        });
    };
    ($(#[$attr:meta])* $name:ident, $kind:literal, $api_version:literal, { $($fields:tt)* }) => {
        $(#[$attr])*
        #[derive(Debug, Clone, Default, PartialEq, conneg_cbor::Serialize, Deserialize, JsonSchema)]
        #[serde(rename_all = "camelCase")]
        pub(crate) struct $name {
            #[doc = $kind]
            #[serde(
                default,
                deserialize_with = "null_as_default",
                skip_serializing_if = "String::is_empty"
            )]
            pub(crate) kind: String,
            #[doc = $api_version]
            #[serde(
                default,
                deserialize_with = "null_as_default",
                skip_serializing_if = "String::is_empty"
            )]
            pub(crate) api_version: String,
            /// Metadata (always written).
            #[serde(default, deserialize_with = "null_as_default")]
            pub(crate) metadata: ObjectMeta,
            $($fields)*
        }
    };
}

mod handwritten {
    pub(crate) mod v1alpha1 {
        use conneg_apiserver::declarative::JsonSchema;
        use conneg_apiserver::meta::{ObjectMeta, null_as_default};
        use sample_apiserver::api::v1alpha1::{FlunderSpec, FlunderStatus};
        use serde::Deserialize;

        handwritten!(Flunder, " `wardle.example.com/v1alpha1`.");

        handwritten!(
            /// Fischer names flunders that the BanFlunder admission plugin refuses to create.
            Fischer, " `Fischer`.", " `wardle.example.com/v1alpha1`.", {
            /// DisallowedFlunders holds a list of Flunder.Names that are disallowed.
            #[schemars(extend("x-kubernetes-list-type" = "atomic"))]
            #[serde(
                default,
                deserialize_with = "null_as_default",
                skip_serializing_if = "Vec::is_empty"
            )]
            pub(crate) disallowed_flunders: Vec<String>,
        });
    }

    pub(crate) mod v1beta1 {
        use conneg_apiserver::declarative::JsonSchema;
        use conneg_apiserver::meta::{ObjectMeta, null_as_default};
        use sample_apiserver::api::v1beta1::{FlunderSpec, FlunderStatus};
        use serde::Deserialize;

        handwritten!(Flunder, " `wardle.example.com/v1beta1`.");
    }
}

/// Both types' schemas, as schemars makes them and as the server publishes them.
fn same_schema<Declared: schemars::JsonSchema, Handwritten: schemars::JsonSchema>() {
    assert_eq!(
        schemars::schema_for!(Declared).to_value(),
        schemars::schema_for!(Handwritten).to_value()
    );
    let name = |n: &str| format!("io.example.{n}");
    assert_eq!(published::<Declared>(name), published::<Handwritten>(name));
}

#[test]
fn the_declared_schemas_are_the_handwritten_ones() {
    same_schema::<v1alpha1::Flunder, handwritten::v1alpha1::Flunder>();
    same_schema::<v1alpha1::Fischer, handwritten::v1alpha1::Fischer>();
    same_schema::<v1beta1::Flunder, handwritten::v1beta1::Flunder>();
    // The descriptions the attribute gives, including those it reads from the shared resource.
    let schema = schemars::schema_for!(v1beta1::Flunder).to_value();
    assert_eq!(
        schema["properties"]["kind"]["description"],
        json!("`Flunder`.")
    );
    assert_eq!(
        schema["properties"]["apiVersion"]["description"],
        json!("`wardle.example.com/v1beta1`.")
    );
}

/// `json` read by both types, then written by both in JSON and CBOR, and read back.
fn same_wire<Declared, Handwritten>(json: Value)
where
    Declared: serde::Serialize + DeserializeOwned + PartialEq + std::fmt::Debug,
    Handwritten: serde::Serialize + DeserializeOwned,
{
    let declared: Declared = serde_json::from_value(json.clone()).unwrap();
    let handwritten: Handwritten = serde_json::from_value(json).unwrap();
    let out = serde_json::to_string(&declared).unwrap();
    assert_eq!(out, serde_json::to_string(&handwritten).unwrap());
    let cbor = conneg_cbor::to_vec(&declared).unwrap();
    assert_eq!(cbor, conneg_cbor::to_vec(&handwritten).unwrap());
    assert_eq!(
        conneg_cbor::from_slice::<Declared>(&cbor).unwrap(),
        declared
    );
    assert_eq!(serde_json::from_str::<Declared>(&out).unwrap(), declared);
}

#[test]
fn the_declared_types_read_and_write_as_the_handwritten_ones() {
    let meta = json!({"name": "a", "namespace": "ns", "labels": {"x": "y"}});
    for typed in [
        json!({"kind": "Flunder", "apiVersion": "wardle.example.com/v1alpha1", "metadata": meta,
               "spec": {"reference": "b", "referenceType": "Flunder"}, "status": {}}),
        json!({"metadata": null, "kind": null, "apiVersion": null, "spec": null}),
        json!({}),
    ] {
        same_wire::<v1alpha1::Flunder, handwritten::v1alpha1::Flunder>(typed);
    }
    for typed in [
        json!({"kind": "Flunder", "apiVersion": "wardle.example.com/v1beta1", "metadata": meta,
               "spec": {"fischerReference": "f", "referenceType": "Fischer"}}),
        json!({"kind": "", "apiVersion": "", "metadata": {}}),
    ] {
        same_wire::<v1beta1::Flunder, handwritten::v1beta1::Flunder>(typed);
    }
    for typed in [
        json!({"kind": "Fischer", "apiVersion": "wardle.example.com/v1alpha1", "metadata": meta,
               "disallowedFlunders": ["a", "b"]}),
        json!({"disallowedFlunders": null}),
    ] {
        same_wire::<v1alpha1::Fischer, handwritten::v1alpha1::Fischer>(typed);
    }
}

#[test]
fn the_declared_facts_are_the_served_ones() {
    assert_eq!(<v1alpha1::Flunder as VersionedObject>::RESOURCE, &FLUNDERS);
    assert_eq!(<v1beta1::Flunder as VersionedObject>::RESOURCE, &FLUNDERS);
    assert_eq!(
        (v1alpha1::Flunder::VERSION, v1beta1::Flunder::VERSION),
        (V1ALPHA1, V1BETA1)
    );
    assert_eq!(
        (v1alpha1::Flunder::KIND, v1beta1::Flunder::KIND),
        ("Flunder", "Flunder")
    );
    let fischers = <v1alpha1::Fischer as VersionedObject>::RESOURCE;
    assert_eq!(
        (fischers.group, fischers.resource, fischers.singular),
        (GROUP, "fischers", "fischer")
    );
    assert_eq!(
        (fischers.kind, fischers.list_kind),
        ("Fischer", "FischerList")
    );
    assert!(!fischers.namespaced && !fischers.status_subresource);
    assert_eq!(v1alpha1::Fischer::VERSION, V1ALPHA1);
}

#[test]
fn conversions_are_the_handwritten_ones() {
    // v1alpha1 defaulting (the reference type follows the reference) and both directions of
    // the conversion through the internal type, with `apiVersion`/`kind` set on the way out.
    let mut old = v1alpha1::Flunder {
        metadata: ObjectMeta {
            name: "a".into(),
            ..ObjectMeta::default()
        },
        ..Default::default()
    };
    old.spec.reference = "b".into();
    old.apply_defaults();
    assert_eq!(old.spec.reference_type, Some(ReferenceType::Flunder));
    let new: v1beta1::Flunder = conneg_apiserver::resource::convert(old.clone());
    assert_eq!(new.type_meta(), ("wardle.example.com/v1beta1", "Flunder"));
    assert_eq!(new.spec.flunder_reference, "b");
    let back = v1alpha1::Flunder::from_internal(new.into_internal());
    assert_eq!(back.type_meta(), ("wardle.example.com/v1alpha1", "Flunder"));
    assert_eq!((back.metadata, back.spec), (old.metadata, old.spec));
    let fischer = v1alpha1::Fischer::from_internal(
        v1alpha1::Fischer {
            disallowed_flunders: vec!["x".into()],
            ..Default::default()
        }
        .into_internal(),
    );
    assert_eq!(
        fischer.type_meta(),
        ("wardle.example.com/v1alpha1", "Fischer")
    );
    assert_eq!(fischer.disallowed_flunders, ["x"]);
}
