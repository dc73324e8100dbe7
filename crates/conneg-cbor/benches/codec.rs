//! conneg-cbor against serde_json on realistic Kubernetes objects: a Pod (~4.6 KiB of JSON), a
//! custom resource with a nested spec (~3 KiB) and a ~1 MiB PodList, and on the stress corpus
//! (`k8s::stress`, generated: 400 custom resources whose text is mostly non-ASCII, from every
//! Unicode plane, with control characters, integers near the ends of `i64` and 64-bit floats),
//! each as `serde_json::Value` and as typed structs. Encode: JSON, CBOR deterministic, CBOR fast; decode: JSON, CBOR (the
//! Kubernetes-style bytes, byte strings everywhere), and both decoders into `IgnoredAny` (parse
//! and validate only, no tree). Output sizes are printed before the runs.
//!
//! In the same groups, for comparison on the same data: the other Rust CBOR crates with a serde
//! API (minicbor-serde, cbor4ii, ciborium) decoding it into the same `Value` and typed structs,
//! and the floor of any decoder into that representation: cloning the decoded tree (the same
//! allocations and writes, with no parsing at all). The peers read the same CBOR with text
//! strings and no self-described tag (`peer_cbor`), because byte strings cannot become `String`s
//! through them; conneg-cbor decodes the Kubernetes bytes (byte strings everywhere), and also
//! the peers' bytes (`decode/cbor_text`), so that both inputs are compared. The encode floor for
//! `Value` is `naive_write`, a plain tree walk; `decode/cbor_direct` is `value_from_slice`.
//! The typed structs derive `conneg_cbor::Serialize`; `encode/cbor_deterministic_serde_derive`
//! encodes the same structs deriving serde's `Serialize` (declaration order, reordered by the
//! encoder). They also derive `conneg_cbor::Decode`, which `decode/cbor_derive` reads with
//! (`conneg_cbor::decode`, no serde visitors).
//!
//! Beside serde_json, sonic-rs (SIMD JSON, the fastest JSON a Rust user could pick instead)
//! decodes the same JSON into the same types (`decode/sonic_rs`), and into its own DOM
//! (`decode/sonic_rs_dom`, for `Value`), as built by default (no `target-cpu`).
//!
//! `cargo bench -p conneg-cbor --bench codec -- --warm-up-time 1 --measurement-time 2`, then
//! `python3 crates/conneg-cbor/benches/report.py --brief --svg docs/img/codec-speedups.svg` for
//! the tables and the chart of docs/benchmarks.md (without `--brief`: every table, with times).

#![allow(missing_docs)]

mod k8s;

use conneg_cbor::EncodeOptions;
use criterion::{BenchmarkId, Criterion, black_box, criterion_group, criterion_main};
use serde::Serialize;
use serde::de::{DeserializeOwned, IgnoredAny};
use serde_json::Value;
use std::fmt::Debug;

struct Subject {
    name: &'static str,
    value: Value,
}

fn subjects() -> Vec<Subject> {
    vec![
        Subject {
            name: "pod",
            value: k8s::pod_value(),
        },
        Subject {
            name: "custom_resource",
            value: k8s::cr_value(),
        },
        Subject {
            name: "pod_list_1mib",
            value: k8s::pod_list_value(1 << 20),
        },
        Subject {
            name: "stress_corpus",
            value: k8s::stress::value_list(),
        },
    ]
}

/// Checks that `T` mirrors `value` exactly (same JSON back, same CBOR back), so that the typed
/// and the `Value` benchmarks measure the same data.
fn typed<T: Serialize + DeserializeOwned + PartialEq + Debug>(value: &Value) -> T {
    let t: T = serde_json::from_value(value.clone()).expect("typed mirror of the fixture");
    assert_eq!(
        &serde_json::to_value(&t).unwrap(),
        value,
        "typed round trip"
    );
    let cbor = conneg_cbor::to_vec(&t).unwrap();
    assert_eq!(
        cbor,
        conneg_cbor::to_vec(value).unwrap(),
        "typed vs Value CBOR"
    );
    assert_eq!(conneg_cbor::from_slice::<T>(&cbor).unwrap(), t);
    t
}

/// The CBOR the peers decode: what Kubernetes writes, but with text strings and without the
/// self-described tag.
fn peer_cbor<T: Serialize>(x: &T) -> Vec<u8> {
    EncodeOptions::deterministic()
        .self_described(false)
        .string_encoding(conneg_cbor::StringEncoding::Text)
        .to_vec(x)
        .unwrap()
}

/// A peer decoder: its name and `from_slice` into `T`.
type Peer<T> = (&'static str, fn(&[u8]) -> Result<T, String>);

fn peers<T: DeserializeOwned>() -> [Peer<T>; 3] {
    [
        ("minicbor_serde", |b| {
            minicbor_serde::from_slice(b).map_err(|e| e.to_string())
        }),
        ("cbor4ii", |b| {
            cbor4ii::serde::from_slice(b).map_err(|e| e.to_string())
        }),
        ("ciborium", |b| {
            ciborium::from_reader(b).map_err(|e| e.to_string())
        }),
    ]
}

fn bench_repr<T: Serialize + DeserializeOwned + Clone + PartialEq + Debug>(
    c: &mut Criterion,
    subject: &str,
    repr: &str,
    x: &T,
) {
    let json = serde_json::to_vec(x).unwrap();
    let det = EncodeOptions::deterministic();
    let fast = EncodeOptions::fast();
    let cbor = det.to_vec(x).unwrap();
    let text = peer_cbor(x);
    assert_eq!(&conneg_cbor::from_slice::<T>(&text).unwrap(), x);
    let mut g = c.benchmark_group(subject);
    if json.len() > 100_000 {
        g.sample_size(20);
    }
    g.bench_function(BenchmarkId::new("encode/json", repr), |b| {
        b.iter(|| serde_json::to_vec(black_box(x)).unwrap())
    });
    g.bench_function(BenchmarkId::new("encode/cbor_deterministic", repr), |b| {
        b.iter(|| det.to_vec(black_box(x)).unwrap())
    });
    g.bench_function(BenchmarkId::new("encode/cbor_fast", repr), |b| {
        b.iter(|| fast.to_vec(black_box(x)).unwrap())
    });
    g.bench_function(BenchmarkId::new("decode/json", repr), |b| {
        b.iter(|| serde_json::from_slice::<T>(black_box(&json)).unwrap())
    });
    g.bench_function(BenchmarkId::new("decode/cbor", repr), |b| {
        b.iter(|| conneg_cbor::from_slice::<T>(black_box(&cbor)).unwrap())
    });
    g.bench_function(BenchmarkId::new("decode/cbor_text", repr), |b| {
        b.iter(|| conneg_cbor::from_slice::<T>(black_box(&text)).unwrap())
    });
    for (name, decode) in peers::<T>() {
        // A peer that cannot decode this data (or decodes it differently) is left out, loudly.
        match decode(&text) {
            Ok(v) if v == *x => {}
            Ok(_) => {
                eprintln!("{subject}/{repr}: {name} decodes to a different value, not benchmarked");
                continue;
            }
            Err(e) => {
                eprintln!("{subject}/{repr}: {name} fails ({e}), not benchmarked");
                continue;
            }
        }
        g.bench_function(BenchmarkId::new(format!("decode/{name}"), repr), |b| {
            b.iter(|| decode(black_box(&text)).unwrap())
        });
    }
    // The fastest JSON a Rust user could pick instead: sonic-rs (SIMD JSON) on the same JSON,
    // into the same `T` through serde; for `Value` also into its own DOM (`sonic_rs::Value`).
    match sonic_rs::from_slice::<T>(&json) {
        Ok(v) if v == *x => {
            g.bench_function(BenchmarkId::new("decode/sonic_rs", repr), |b| {
                b.iter(|| sonic_rs::from_slice::<T>(black_box(&json)).unwrap())
            });
        }
        Ok(_) => {
            eprintln!("{subject}/{repr}: sonic-rs decodes to a different value, not benchmarked")
        }
        Err(e) => eprintln!("{subject}/{repr}: sonic-rs fails ({e}), not benchmarked"),
    }
    if repr == "value" {
        g.bench_function(BenchmarkId::new("decode/sonic_rs_dom", repr), |b| {
            b.iter(|| sonic_rs::from_slice::<sonic_rs::Value>(black_box(&json)).unwrap())
        });
    }
    // The floor: building the same tree with no parsing.
    g.bench_function(BenchmarkId::new("decode/clone_floor", repr), |b| {
        b.iter(|| black_box(x).clone())
    });
    if repr == "value" {
        // The floor of any encoder: a plain tree walk into a buffer (`naive_write`).
        let v = serde_json::to_value(x).unwrap();
        g.bench_function(BenchmarkId::new("encode/naive_floor", repr), |b| {
            b.iter(|| {
                let mut out = Vec::new();
                naive_write(black_box(&v), &mut out);
                out
            })
        });
        // The same decode without serde's visitor (`value_from_slice`, for `Value` only).
        assert_eq!(
            serde_json::to_value(x).unwrap(),
            conneg_cbor::value_from_slice(&cbor).unwrap()
        );
        g.bench_function(BenchmarkId::new("decode/cbor_direct", repr), |b| {
            b.iter(|| conneg_cbor::value_from_slice(black_box(&cbor)).unwrap())
        });
        // Parsing and validation alone, no tree built: what each codec costs by itself.
        g.bench_function(BenchmarkId::new("decode/json", "ignored"), |b| {
            b.iter(|| serde_json::from_slice::<IgnoredAny>(black_box(&json)).unwrap())
        });
        g.bench_function(BenchmarkId::new("decode/cbor", "ignored"), |b| {
            b.iter(|| conneg_cbor::from_slice::<IgnoredAny>(black_box(&cbor)).unwrap())
        });
    }
    g.finish();
}

/// The encode floor for `Value`: each item's head and bytes written as the tree is walked, with
/// no serde, no checks and no sorting (not Kubernetes' bytes: map entries stay in the tree's
/// order, floats are always eight bytes).
fn naive_write(v: &Value, out: &mut Vec<u8>) {
    fn head(out: &mut Vec<u8>, major: u8, n: u64) {
        let m = major << 5;
        match n {
            0..=23 => out.push(m | n as u8),
            24..=0xff => out.extend_from_slice(&[m | 24, n as u8]),
            0x100..=0xffff => {
                out.push(m | 25);
                out.extend_from_slice(&(n as u16).to_be_bytes());
            }
            0x1_0000..=0xffff_ffff => {
                out.push(m | 26);
                out.extend_from_slice(&(n as u32).to_be_bytes());
            }
            _ => {
                out.push(m | 27);
                out.extend_from_slice(&n.to_be_bytes());
            }
        }
    }
    match v {
        Value::Null => out.push(0xf6),
        Value::Bool(b) => out.push(0xf4 | *b as u8),
        Value::Number(n) => match (n.as_u64(), n.as_i64()) {
            (Some(u), _) => head(out, 0, u),
            (None, Some(i)) => head(out, 1, !i as u64),
            _ => {
                out.push(0xfb);
                out.extend_from_slice(&n.as_f64().unwrap_or(0.0).to_be_bytes());
            }
        },
        Value::String(s) => {
            head(out, 2, s.len() as u64);
            out.extend_from_slice(s.as_bytes());
        }
        Value::Array(items) => {
            head(out, 4, items.len() as u64);
            for item in items {
                naive_write(item, out);
            }
        }
        Value::Object(m) => {
            head(out, 5, m.len() as u64);
            for (k, item) in m {
                head(out, 2, k.len() as u64);
                out.extend_from_slice(k.as_bytes());
                naive_write(item, out);
            }
        }
    }
}

fn print_sizes(subjects: &[Subject]) {
    eprintln!("output sizes (bytes): object, JSON, CBOR bytes-mode, CBOR text-mode, CBOR/JSON");
    for s in subjects {
        let json = serde_json::to_vec(&s.value).unwrap().len();
        let cbor = conneg_cbor::to_vec(&s.value).unwrap().len();
        let text = EncodeOptions::deterministic()
            .string_encoding(conneg_cbor::StringEncoding::Text)
            .to_vec(&s.value)
            .unwrap()
            .len();
        eprintln!(
            "size {}: json={json} cbor={cbor} cbor_text={text} ratio={:.3}",
            s.name,
            cbor as f64 / json as f64
        );
    }
}

/// The typed benchmarks of one object: its types derive `conneg_cbor::Serialize` (`T`), and
/// the same types with serde's derive (`U`, `k8s::serde_derived`) are encoded deterministically
/// beside them (`encode/cbor_deterministic_serde_derive`), to the same bytes. Both derive
/// `conneg_cbor::Decode` too, which `decode/cbor_derive` reads the same bytes with.
fn bench_typed<T, U>(c: &mut Criterion, subject: &str, value: &Value)
where
    T: Serialize + DeserializeOwned + conneg_cbor::Decode + Clone + PartialEq + Debug,
    U: Serialize + DeserializeOwned + PartialEq + Debug,
{
    let x = typed::<T>(value);
    bench_repr(c, subject, "typed", &x);
    let twin = typed::<U>(value);
    let det = EncodeOptions::deterministic();
    let cbor = det.to_vec(&x).unwrap();
    assert_eq!(det.to_vec(&twin).unwrap(), cbor);
    assert_eq!(conneg_cbor::decode::<T>(&cbor).unwrap(), x);
    let mut g = c.benchmark_group(subject);
    if value.to_string().len() > 100_000 {
        g.sample_size(20);
    }
    g.bench_function(BenchmarkId::new("decode/cbor_derive", "typed"), |b| {
        b.iter(|| conneg_cbor::decode::<T>(black_box(&cbor)).unwrap())
    });
    g.bench_function(
        BenchmarkId::new("encode/cbor_deterministic_serde_derive", "typed"),
        |b| b.iter(|| det.to_vec(black_box(&twin)).unwrap()),
    );
}

fn codec(c: &mut Criterion) {
    use k8s::serde_derived;
    let subjects = subjects();
    print_sizes(&subjects);
    for s in &subjects {
        bench_repr(c, s.name, "value", &s.value);
        match s.name {
            "pod" => bench_typed::<k8s::Pod, serde_derived::Pod>(c, s.name, &s.value),
            "custom_resource" => {
                bench_typed::<k8s::PostgresCluster, serde_derived::PostgresCluster>(
                    c, s.name, &s.value,
                )
            }
            "stress_corpus" => bench_typed::<k8s::TranslationList, serde_derived::TranslationList>(
                c, s.name, &s.value,
            ),
            _ => bench_typed::<k8s::PodList, serde_derived::PodList>(c, s.name, &s.value),
        }
    }
}

criterion_group!(benches, codec);
criterion_main!(benches);
