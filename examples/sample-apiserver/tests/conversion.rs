//! The API-changes guide's round-trip rule as property tests: random Flunders go
//! v1alpha1 -> internal -> v1beta1 -> internal -> v1alpha1 (and the other way) and come back
//! unchanged, except where a version cannot express a value, which is stated field by field:
//!
//! * `spec.referenceType` with a value that is not `Flunder` or `Fischer`: v1alpha1's
//!   conversion (upstream's `Convert_v1alpha1_FlunderSpec_To_wardle_FlunderSpec`) keeps a
//!   reference only under a known type, so such a spec converts to an empty one. v1beta1 keeps
//!   the unknown value through internal, where validation refuses it.
//! * v1alpha1 `spec.reference` without a type: defaulting makes it a `Flunder` reference
//!   before conversion (the server always defaults first), so the round trip starts from the
//!   defaulted object.
//! * v1beta1 `flunderReference` and `fischerReference` both set, or a reference that does not
//!   match the type: invalid (validation refuses them), and v1alpha1 has one `reference` field
//!   only, so the round trip is stated for valid v1beta1 objects.
//!
//! Metadata is carried over untouched in every case.

use std::collections::BTreeMap;

use conneg_apiserver::meta::ObjectMeta;
use conneg_apiserver::resource::{Versioned, convert};
use proptest::prelude::*;
use std::sync::LazyLock;

use conneg_apiserver::declarative::Validators;
use conneg_apiserver::server::ServerOptions;
use conneg_apiserver::server::openapi::validators;
use sample_apiserver::api::{FLUNDERS, ReferenceType, V1BETA1, v1alpha1, v1beta1};

fn meta() -> impl Strategy<Value = ObjectMeta> {
    (
        "[a-z0-9]([-a-z0-9]{0,20}[a-z0-9])?",
        "[a-z]{0,8}",
        prop::collection::btree_map("[a-z]{1,6}", "[a-z0-9]{0,6}", 0..4),
        prop::collection::btree_map("[a-z.]{1,10}", ".{0,12}", 0..3),
        0i64..1000,
        "[0-9a-f-]{0,36}",
    )
        .prop_map(
            |(name, namespace, labels, annotations, generation, uid)| ObjectMeta {
                name,
                namespace,
                labels: labels.into_iter().collect::<BTreeMap<_, _>>(),
                annotations: annotations.into_iter().collect::<BTreeMap<_, _>>(),
                generation,
                uid,
                ..Default::default()
            },
        )
}

/// Known, absent, empty and unknown reference types (unknown ones include other cases of the
/// known names, which are unknown too).
fn reference_type() -> impl Strategy<Value = Option<ReferenceType>> {
    prop_oneof![
        Just(None),
        Just(Some(ReferenceType::Flunder)),
        Just(Some(ReferenceType::Fischer)),
        "[A-Za-z]{1,8}".prop_map(|s| Some(ReferenceType::from(s))),
    ]
}

fn alpha() -> impl Strategy<Value = v1alpha1::Flunder> {
    (meta(), "[a-z0-9-]{0,12}", reference_type()).prop_map(|(metadata, reference, ty)| {
        let mut f = v1alpha1::Flunder {
            metadata,
            spec: v1alpha1::FlunderSpec {
                reference,
                reference_type: ty,
            },
            ..Default::default()
        };
        f.set_type_meta();
        f
    })
}

fn beta() -> impl Strategy<Value = v1beta1::Flunder> {
    (
        meta(),
        "[a-z0-9-]{0,12}",
        "[a-z0-9-]{0,12}",
        reference_type(),
    )
        .prop_map(|(metadata, flunder_reference, fischer_reference, ty)| {
            let mut f = v1beta1::Flunder {
                metadata,
                spec: v1beta1::FlunderSpec {
                    flunder_reference,
                    fischer_reference,
                    reference_type: ty,
                },
                ..Default::default()
            };
            f.set_type_meta();
            f
        })
}

/// Whether the server's declared rules accept `b`.
fn valid_v1beta1(b: &v1beta1::Flunder) -> bool {
    static VALIDATORS: LazyLock<Validators> = LazyLock::new(|| {
        let endpoints = sample_apiserver::server().endpoints(ServerOptions::default());
        validators(sample_apiserver::openapi::INFO, &endpoints).unwrap()
    });
    let v = VALIDATORS.get(V1BETA1, &FLUNDERS).unwrap();
    v.validate(&serde_json::to_value(b).unwrap(), None)
        .is_empty()
}

fn known(ty: Option<&ReferenceType>) -> bool {
    ty.is_none_or(ReferenceType::is_known)
}

proptest! {
    #[test]
    fn v1alpha1_round_trips_through_v1beta1(mut a in alpha()) {
        a.apply_defaults();
        let b: v1beta1::Flunder = convert(a.clone());
        prop_assert_eq!(&b.metadata, &a.metadata);
        let back: v1alpha1::Flunder = convert(b);
        prop_assert_eq!(&back.metadata, &a.metadata);
        if known(a.spec.reference_type.as_ref()) {
            prop_assert_eq!(back, a);
        } else {
            // Not expressible under an unknown type: the spec converts to an empty one.
            prop_assert_eq!(back.spec, v1alpha1::FlunderSpec::default());
        }
    }

    #[test]
    fn valid_v1beta1_round_trips_through_v1alpha1(b in beta()) {
        let valid = valid_v1beta1(&b);
        let a: v1alpha1::Flunder = convert(b.clone());
        prop_assert_eq!(&a.metadata, &b.metadata);
        let back: v1beta1::Flunder = convert(a);
        prop_assert_eq!(&back.metadata, &b.metadata);
        if valid {
            prop_assert_eq!(back, b);
        }
    }

    /// v1beta1 is internal's shape: every object, valid or not, survives internal unchanged.
    #[test]
    fn v1beta1_is_lossless_through_internal(b in beta()) {
        prop_assert_eq!(v1beta1::Flunder::from_internal(b.clone().into_internal()), b);
    }
}
