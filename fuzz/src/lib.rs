//! The fuzz body for conneg-cbor's decoder, a plain function so that stable `cargo test` runs it
//! over a generated seed corpus (root package `conneg-tests`, tests/fuzz_corpus.rs) and
//! `cargo fuzz run decode` runs it under libFuzzer.
//!
//! For every input: no panic, no hang, no unbounded allocation (the decoder's own limits), and
//! whatever is accepted must survive the round trips the KEP asks for:
//! CBOR -> value -> CBOR -> value gives the same value, deterministic encoding is a fixed point,
//! and CBOR -> JSON -> value gives the same value.

#![allow(missing_docs, unreachable_pub)]

use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;
use std::fmt::Debug;

#[path = "../../crates/conneg-cbor/benches/k8s/mod.rs"]
pub mod k8s;

/// Display of every error is one line (the CLI prints it as one).
fn check_error(e: &conneg_cbor::Error) {
    let s = e.to_string();
    assert!(!s.contains('\n'), "multi-line error: {s:?}");
}

fn round_trip<T: Serialize + DeserializeOwned + PartialEq + Debug>(v: &T) {
    let det = conneg_cbor::to_vec(v).expect("an accepted value re-encodes");
    let back: T = conneg_cbor::from_slice(&det).expect("our own encoding decodes");
    assert_eq!(&back, v, "CBOR -> value -> CBOR -> value");
    let again = conneg_cbor::to_vec(&back).unwrap();
    assert_eq!(again, det, "deterministic encoding is a fixed point");
    let fast = conneg_cbor::EncodeOptions::fast().to_vec(v).unwrap();
    let back: T = conneg_cbor::from_slice(&fast).expect("fast encoding decodes");
    assert_eq!(&back, v, "fast mode round trip");
}

fn typed<T: Serialize + DeserializeOwned + PartialEq + Debug>(data: &[u8]) {
    match conneg_cbor::from_slice::<T>(data) {
        Ok(t) => round_trip(&t),
        Err(e) => check_error(&e),
    }
    // Lax decoding (fieldValidation=Ignore/Warn) must not panic either.
    let lax = conneg_cbor::DecodeOptions::new().unknown_fields(conneg_cbor::UnknownFields::Ignore);
    if let Err(e) = lax.from_slice::<T>(data) {
        check_error(&e);
    }
    if let Ok((_, warnings)) = conneg_cbor::DecodeOptions::new().from_slice_with_warnings::<T>(data)
    {
        warnings.iter().for_each(check_error);
    }
}

/// The fuzz body.
pub fn decode(data: &[u8]) {
    match conneg_cbor::from_slice::<Value>(data) {
        Ok(v) => {
            round_trip(&v);
            // CBOR -> JSON -> value.
            let json = serde_json::to_vec(&v).expect("accepted values are JSON");
            let from_json: Value = serde_json::from_slice(&json).unwrap();
            assert_eq!(from_json, v, "CBOR -> JSON -> value");
        }
        Err(e) => check_error(&e),
    }
    typed::<k8s::Pod>(data);
    typed::<k8s::PostgresCluster>(data);
    // A sequence (RFC 8742): items back to back until the input ends or an item fails.
    let mut de = conneg_cbor::Deserializer::from_slice(data);
    let mut last = 0;
    while de.position() < data.len() {
        match <Value as serde::Deserialize>::deserialize(&mut de) {
            Ok(_) => {
                assert!(de.position() > last, "an item consumed no input");
                last = de.position();
            }
            Err(e) => {
                check_error(&e);
                break;
            }
        }
    }
}

/// Seeds: RFC 8949 Appendix A (given as hex strings), the benchmark objects in every encoder
/// configuration, and hand-picked edge cases; then every truncation and deterministic
/// mutations of each.
pub fn seeds(appendix_a_hex: &[String]) -> Vec<Vec<u8>> {
    let mut base: Vec<Vec<u8>> = appendix_a_hex.iter().map(|h| unhex(h)).collect();
    let objects = [
        k8s::pod_value(),
        k8s::cr_value(),
        serde_json::json!({"apiVersion": "wardle.example.com/v1beta1", "kind": "Flunder",
            "metadata": {"name": "my-first-flunder", "namespace": "default"},
            "spec": {"flunderReference": "other", "referenceType": "Flunder"}, "status": {}}),
        serde_json::json!({"a": [1, -1, 1.5, 100000.0, null, true, false, "", {}], "": []}),
    ];
    use conneg_cbor::{EncodeOptions, StringEncoding};
    for v in &objects {
        for opts in [
            EncodeOptions::deterministic(),
            EncodeOptions::fast(),
            EncodeOptions::deterministic().string_encoding(StringEncoding::Text),
            EncodeOptions::fast().self_described(false),
        ] {
            base.push(opts.to_vec(v).unwrap());
        }
    }
    for h in [
        // Kubernetes' own fuzz seed: {"apiVersion": "x", "kind": "y"} as byte strings.
        "a24a61706956657273696f6e4178446b696e644179",
        // Duplicate keys (text, bytes, mixed), indefinite maps and strings, nested tags.
        "a2616101616102",
        "a2416101616102",
        "bf616101616102ff",
        "bf7f6161ff017f6161ff02ff",
        "d9d9f7d9d9f7a1416ad9d9f701",
        // Time tags into strings; later-encoding tags; unknown tags.
        "c074323031332d30332d32315432303a30343a30305a",
        "c1fb41d452d9ec200000",
        "d6420102",
        "d8ff4161",
        // Deep nesting and big declared lengths.
        "818181818181818181818181818181818181818180",
        "9bffffffffffffffff",
        "bbffffffffffffffff",
        "5bffffffffffffffff",
    ] {
        base.push(unhex(h));
    }
    let mut out = Vec::new();
    let mut rng = 0x9e37_79b9_7f4a_7c15u64;
    for b in &base {
        out.push(b.clone());
        // Truncations: every prefix of short items, a spread of prefixes of long ones.
        let step = (b.len() / 64).max(1);
        for n in (0..b.len()).step_by(step) {
            out.push(b[..n].to_vec());
        }
        // Mutations: flip a bit, overwrite with an interesting byte, insert, delete, duplicate.
        for _ in 0..64 {
            let mut m = b.clone();
            let r = next(&mut rng);
            if m.is_empty() {
                m.push(r as u8);
                out.push(m);
                continue;
            }
            let i = (r >> 8) as usize % m.len();
            match r % 5 {
                0 => m[i] ^= 1 << ((r >> 40) % 8),
                1 => {
                    const INTERESTING: [u8; 12] = [
                        0x00, 0x17, 0x18, 0x1b, 0x1f, 0x5f, 0x7f, 0x9f, 0xbf, 0xd9, 0xf7, 0xff,
                    ];
                    m[i] = INTERESTING[(r >> 32) as usize % INTERESTING.len()];
                }
                2 => m.insert(i, (r >> 24) as u8),
                3 => {
                    m.remove(i);
                }
                _ => {
                    let j = i + ((r >> 16) as usize % (m.len() - i)).min(16);
                    let chunk = m[i..j].to_vec();
                    m.splice(j..j, chunk);
                }
            }
            out.push(m);
        }
    }
    out
}

fn next(s: &mut u64) -> u64 {
    // xorshift64*
    *s ^= *s >> 12;
    *s ^= *s << 25;
    *s ^= *s >> 27;
    s.wrapping_mul(0x2545_f491_4f6c_dd1d)
}

pub fn unhex(s: &str) -> Vec<u8> {
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
        .collect()
}
