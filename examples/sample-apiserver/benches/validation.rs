//! The cost of validating one Flunder per request: the declared rules as the server runs them
//! (the object to JSON, then value validations and the CEL rules under their cost bounds)
//! against the hand-written checks they replaced (conversion to internal, then Rust code),
//! side by side on the same objects in one run (criterion).
//!
//! ```text
//! cargo bench -p sample-apiserver --bench validation
//! ```
//!
//! Objects: a valid v1beta1 Flunder with a realistic metadata block (labels, annotations),
//! one that breaks a CEL rule, one with an unknown `referenceType` (refused by the enum
//! before CEL runs), and a valid update of the first (ratcheting compares it with the old
//! object).

// criterion_main! writes an undocumented `main`.
#![allow(missing_docs)]

#[path = "../tests/legacy/mod.rs"]
mod legacy;

use std::hint::black_box;

use conneg_apiserver::resource::Versioned;
use conneg_apiserver::server::ServerOptions;
use conneg_apiserver::server::openapi::validators;
use criterion::{Criterion, criterion_group, criterion_main};
use sample_apiserver::api::{FLUNDERS, V1BETA1, v1beta1};
use serde_json::json;

fn flunder(spec: serde_json::Value) -> v1beta1::Flunder {
    serde_json::from_value(json!({
        "apiVersion": "wardle.example.com/v1beta1", "kind": "Flunder",
        "metadata": {"name": "flunder-0042", "namespace": "default",
            "labels": {"app": "wardle", "tier": "backend", "team": "a", "env": "prod"},
            "annotations": {"example.com/owner": "someone", "example.com/note": "x".repeat(200)}},
        "spec": spec,
    }))
    .unwrap()
}

fn bench(c: &mut Criterion) {
    let endpoints = sample_apiserver::server().endpoints(ServerOptions::default());
    let validators = validators(sample_apiserver::openapi::INFO, &endpoints).unwrap();
    let declared = validators.get(V1BETA1, &FLUNDERS).unwrap();
    let cases = [
        (
            "valid",
            flunder(json!({"flunderReference": "other", "referenceType": "Flunder"})),
        ),
        (
            "cel-failure",
            flunder(
                json!({"flunderReference": "a", "fischerReference": "b", "referenceType": "Flunder"}),
            ),
        ),
        ("enum-failure", flunder(json!({"referenceType": "Bogus"}))),
    ];
    let mut g = c.benchmark_group("validate-flunder");
    for (name, obj) in &cases {
        // Both sides start from the decoded versioned object, as the server does.
        g.bench_function(format!("{name}/hand-written"), |b| {
            b.iter(|| legacy::validate_flunder(&black_box(obj).clone().into_internal()))
        });
        g.bench_function(format!("{name}/declared"), |b| {
            b.iter(|| {
                let json = serde_json::to_value(black_box(obj)).unwrap();
                declared.validate(&json, None)
            })
        });
    }
    let old = serde_json::to_value(&cases[0].1).unwrap();
    let mut changed = cases[0].1.clone();
    changed
        .metadata
        .labels
        .insert("env".into(), "staging".into());
    g.bench_function("update-unchanged-spec/declared", |b| {
        b.iter(|| {
            let json = serde_json::to_value(black_box(&changed)).unwrap();
            declared.validate(&json, Some(&old))
        })
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
