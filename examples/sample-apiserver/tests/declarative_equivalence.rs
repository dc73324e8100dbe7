//! The migration of Flunder validation to declared rules, proved as KEP-4153 asks: "ensure
//! invalid objects still invalid" and "ensure valid old objects still valid". Every spec built
//! from the values that matter (each reference empty or set, every reference type, known,
//! unknown, empty or absent) goes through the hand-written validation the server used to run
//! ([`legacy`]) and through the declared rules as the server now runs them, and the causes
//! must be the same: field, reason and detail. The offending value differs by design: CEL
//! failures report the type of the node the rule is on (`"object"`), as kube-apiserver does.
//!
//! The differences that are meant are stated case by case:
//! * an unknown `referenceType` is refused by the enum (enum KEP), `Unsupported value: "X":
//!   supported values: "Fischer", "Flunder"`, and, as kube-apiserver does when the shape is
//!   wrong, the CEL rules are not run (one `<nil>` cause says so);
//! * v1alpha1 is validated as sent, not after its lossy conversion: an unknown type is refused
//!   instead of silently dropped (with its reference), and a type without a reference is
//!   reported at v1alpha1's own `spec.reference`, not at internal's field names.

mod legacy;

use conneg_apiserver::declarative::Validators;
use conneg_apiserver::resource::Versioned;
use conneg_apiserver::server::ServerOptions;
use conneg_apiserver::server::openapi;
use conneg_apiserver::validation::{FieldError, FieldErrorType};
use sample_apiserver::api::{FLUNDERS, ReferenceType, V1ALPHA1, V1BETA1, v1alpha1, v1beta1};

const NOT_CHECKED: &str = "some validation rules were not checked because the object was invalid; correct the existing errors to complete validation";

fn validators() -> Validators {
    let endpoints = sample_apiserver::server().endpoints(ServerOptions::default());
    openapi::validators(sample_apiserver::openapi::INFO, &endpoints).unwrap()
}

/// (field, reason, detail) of each error.
fn causes(errs: &[FieldError]) -> Vec<(String, &'static str, String)> {
    errs.iter()
        .map(|e| (e.field.clone(), e.error_type.as_reason(), e.detail.clone()))
        .collect()
}

fn enum_refused() -> Vec<(String, &'static str, String)> {
    vec![
        (
            "spec.referenceType".into(),
            "FieldValueNotSupported",
            r#"supported values: "Fischer", "Flunder""#.into(),
        ),
        ("<nil>".into(), "FieldValueInvalid", NOT_CHECKED.into()),
    ]
}

const TYPES: [Option<&str>; 5] = [
    None,
    Some(""),
    Some("Flunder"),
    Some("Fischer"),
    Some("Bogus"),
];

#[test]
fn v1beta1_declared_rules_match_the_hand_written_ones() {
    let validators = validators();
    let declared = validators.get(V1BETA1, &FLUNDERS).unwrap();
    let mut compared = 0;
    for flunder in ["", "a"] {
        for fischer in ["", "b"] {
            for ty in TYPES {
                let mut obj = v1beta1::Flunder {
                    spec: v1beta1::FlunderSpec {
                        flunder_reference: flunder.into(),
                        fischer_reference: fischer.into(),
                        reference_type: ty.filter(|t| !t.is_empty()).map(ReferenceType::from),
                    },
                    ..Default::default()
                };
                obj.metadata.name = "f".into();
                obj.apply_defaults();
                let old = causes(&legacy::validate_flunder(&obj.clone().into_internal()));
                let json = serde_json::to_value(&obj).unwrap();
                let new = causes(&declared.validate(&json, None));
                let case = format!("{flunder:?} {fischer:?} {ty:?}");
                if ty == Some("Bogus") {
                    assert!(!old.is_empty(), "{case}: the legacy rules refused it too");
                    assert_eq!(new, enum_refused(), "{case}");
                } else {
                    assert_eq!(new, old, "{case}");
                    compared += 1;
                }
            }
        }
    }
    // Valid and invalid objects both among the identical ones.
    assert_eq!(compared, 16);
}

#[test]
fn v1alpha1_declared_rules_match_up_to_its_own_field_names() {
    let validators = validators();
    let declared = validators.get(V1ALPHA1, &FLUNDERS).unwrap();
    for reference in ["", "a"] {
        for ty in TYPES {
            let mut obj = v1alpha1::Flunder {
                spec: v1alpha1::FlunderSpec {
                    reference: reference.into(),
                    reference_type: ty.map(ReferenceType::from),
                },
                ..Default::default()
            };
            obj.metadata.name = "f".into();
            obj.apply_defaults();
            let old = causes(&legacy::validate_flunder(&obj.clone().into_internal()));
            let json = serde_json::to_value(&obj).unwrap();
            let new = causes(&declared.validate(&json, None));
            let case = format!("{reference:?} {ty:?}");
            if ty == Some("Bogus") {
                assert!(old.is_empty(), "{case}: conversion used to drop it");
                assert_eq!(new, enum_refused(), "{case}");
                continue;
            }
            // Internal's two reference fields are v1alpha1's one.
            let renamed: Vec<_> = old
                .into_iter()
                .map(|(f, r, d)| {
                    let f = match f.as_str() {
                        "spec.flunderReference" | "spec.fischerReference" => {
                            "spec.reference".into()
                        }
                        _ => f,
                    };
                    (f, r, d)
                })
                .collect();
            assert_eq!(new, renamed, "{case}");
        }
    }
}

#[test]
fn the_422_reads_as_kube_apiservers() {
    let validators = validators();
    let declared = validators.get(V1BETA1, &FLUNDERS).unwrap();
    let obj = serde_json::json!({"metadata": {"name": "name"}, "spec": {"flunderReference": "a", "fischerReference": "x", "referenceType": "Flunder"}});
    let errs = declared.validate(&obj, None);
    let e = conneg_apiserver::validation::invalid("wardle.example.com", "Flunder", "name", &errs);
    assert_eq!(
        e.message,
        r#"Flunder.wardle.example.com "name" is invalid: spec.fischerReference: Invalid value: "object": cannot be set with flunderReference at the same time"#
    );
    assert_eq!(errs[0].error_type, FieldErrorType::Invalid);
}
