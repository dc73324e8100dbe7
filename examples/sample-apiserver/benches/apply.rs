//! Server-side apply against a plain merge patch, per object (criterion).
//!
//! ```text
//! cargo bench -p sample-apiserver --bench apply
//! ```
//!
//! The object is a realistic v1beta1 `Flunder` (server-set metadata, six labels, two
//! annotations, a finalizer, an owner reference, a spec) with two managers: the `Apply` of
//! `kubectl`, which created it, and the `Update` of a controller. Each write changes one label and
//! `spec.flunderReference`, three ways, side by side in one run:
//!
//! * `merge-patch`: the RFC 7386 merge of the patch into the object, and nothing else;
//! * `merge-patch+managed-fields`: the same, then the `Update` entry the server records for
//!   any write that is not an apply (a comparison of the two objects);
//! * `server-side-apply`: kubectl's whole configuration applied with field ownership: merge,
//!   field sets, pruning of what it stopped applying, conflict checks against the creator.
//!
//! Every iteration clones the object or its managers, as a request does; the clones are part
//! of all three figures.

// criterion_main! writes an undocumented `main`.
#![allow(missing_docs)]

use std::hint::black_box;

use conneg::PatchType;
use conneg_apiserver::apply::managed::{Converter, ManagedFields, ManagerId, Operation, Updater};
use conneg_apiserver::apply::schema::Schema;
use conneg_apiserver::meta::Time;
use conneg_apiserver::patch;
use criterion::{Criterion, criterion_group, criterion_main};
use serde_json::{Value, json};

const VERSION: &str = "wardle.example.com/v1beta1";

/// The managers here all write in one version.
struct OneVersion;

impl Converter for OneVersion {
    fn convert(&self, _: &Value, _: &str, _: &str) -> Option<Value> {
        None
    }
}

/// What kubectl applies; `tier` and `reference` are what the benchmarked writes change.
fn config(tier: &str, reference: &str) -> Value {
    json!({
        "apiVersion": VERSION,
        "kind": "Flunder",
        "metadata": {
            "name": "flunder-0042",
            "namespace": "default",
            "labels": {
                "app.kubernetes.io/name": "flunder",
                "app.kubernetes.io/instance": "flunder-0042",
                "app.kubernetes.io/version": "1.32.0",
                "app.kubernetes.io/component": "backend",
                "app.kubernetes.io/part-of": "wardle",
                "tier": tier,
            },
            "annotations": {"example.com/owner-team": "wardle-maintainers"},
            "finalizers": ["example.com/cleanup"],
        },
        "spec": {"flunderReference": reference, "referenceType": "Flunder"},
    })
}

/// The stored object, and its managers: created by kubectl's apply, then given server-set
/// metadata, an owner reference and an annotation by a controller's update.
fn live(updater: &Updater<'_>) -> (Value, ManagedFields) {
    let mut managers = ManagedFields::default();
    let empty = json!({"apiVersion": VERSION, "kind": "Flunder", "metadata": {}});
    let kubectl = ManagerId::new("kubectl", Operation::Apply, VERSION);
    let applied = updater
        .apply(
            &empty,
            &config("gold", "flunder-0041"),
            &mut managers,
            &kubectl,
            false,
        )
        .expect("a create has no conflict");
    let mut live = applied.clone();
    let meta = live["metadata"].as_object_mut().expect("metadata");
    meta.insert("uid".into(), json!("6f1e2d3c-4b5a-6978-8a9b-0c1d2e3f4a5b"));
    meta.insert("resourceVersion".into(), json!("1042"));
    meta.insert("generation".into(), json!(1));
    meta.insert("creationTimestamp".into(), json!("2023-11-14T22:13:20Z"));
    meta["annotations"]["example.com/revision"] = json!("7");
    meta.insert(
        "ownerReferences".into(),
        json!([{"apiVersion": "wardle.example.com/v1beta1", "kind": "Fischer",
                "name": "fischer-7", "uid": "0a1b2c3d-4e5f-6071-8293-a4b5c6d7e8f9",
                "controller": true, "blockOwnerDeletion": true}]),
    );
    let controller = ManagerId::new("flunder-controller", Operation::Update, VERSION);
    updater.update(&applied, &live, &mut managers, &controller);
    (live, managers)
}

fn apply_vs_merge_patch(c: &mut Criterion) {
    let schema = Schema::OBJECT;
    let updater = Updater {
        schema: &schema,
        converter: &OneVersion,
        version: VERSION,
        now: Time::now(),
    };
    let (live, managers) = live(&updater);
    let merge = json!({"metadata": {"labels": {"tier": "silver"}},
                       "spec": {"flunderReference": "flunder-0043"}});
    let applied = config("silver", "flunder-0043");
    let kubectl = ManagerId::new("kubectl", Operation::Apply, VERSION);
    let patcher = ManagerId::new("kubectl-patch", Operation::Update, VERSION);

    let merge_patch =
        || patch::apply(PatchType::MergePatch, live.clone(), black_box(&merge)).expect("merges");
    let with_managed_fields = || {
        let new = merge_patch();
        let mut m = managers.clone();
        updater.update(&live, &new, &mut m, &patcher);
        (new, m)
    };
    let server_side_apply = || {
        let mut m = managers.clone();
        let new = updater
            .apply(&live, black_box(&applied), &mut m, &kubectl, false)
            .expect("no conflict: kubectl owns what it changes");
        (new, m)
    };
    // The three writes make the same object.
    assert_eq!(merge_patch(), server_side_apply().0);
    assert_eq!(with_managed_fields().0, server_side_apply().0);

    let mut group = c.benchmark_group("flunder-write");
    group.bench_function("merge-patch", |b| b.iter(merge_patch));
    group.bench_function("merge-patch+managed-fields", |b| {
        b.iter(with_managed_fields)
    });
    group.bench_function("server-side-apply", |b| b.iter(server_side_apply));
    group.finish();
}

criterion_group!(benches, apply_vs_merge_patch);
criterion_main!(benches);
