//! `Codec::decode` of a request body under each `fieldValidation` mode (criterion).
//!
//! ```text
//! cargo bench -p conneg --bench body
//! ```
//!
//! The body is the 4.7 KiB Pod of conneg-cbor's codec benchmark, in JSON and in CBOR, decoded
//! into a `serde_json::Value` (what a generic handler or a patch takes). `Ignore` is the
//! baseline: `Warn` (Kubernetes' default) and `Strict` add the unknown-field tracking and, for
//! JSON, the duplicate-key scan (a second parse of the body, as Kubernetes' strict pass). CBOR
//! needs no scan: duplicate keys are always an error there.

// criterion_main! writes an undocumented `main`.
#![allow(missing_docs)]

use std::hint::black_box;

use conneg::{Codec, FieldValidation};
use criterion::{Criterion, criterion_group, criterion_main};

const POD: &[u8] = include_bytes!("../../conneg-cbor/benches/fixtures/pod.json");

fn body(c: &mut Criterion) {
    let pod: serde_json::Value = serde_json::from_slice(POD).expect("fixture");
    let cbor = conneg_cbor::to_vec(&pod).expect("CBOR fixture");
    let mut group = c.benchmark_group("decode-body");
    for (codec, bytes) in [(Codec::Json, POD), (Codec::Cbor, &cbor[..])] {
        for mode in [
            FieldValidation::Ignore,
            FieldValidation::Warn,
            FieldValidation::Strict,
        ] {
            let run = || {
                codec
                    .decode::<serde_json::Value>(black_box(bytes), mode)
                    .expect("the fixture decodes")
            };
            assert_eq!(run().value, pod);
            let name = format!("{}/{}", codec.media_type(), mode.as_str());
            group.bench_function(name, |b| b.iter(run));
        }
    }
    group.finish();
}

criterion_group!(benches, body);
criterion_main!(benches);
