//! The fuzz body for conneg-cbor's decoder, a plain function so that stable `cargo test` runs it
//! over a generated seed corpus (root package `conneg-tests`, tests/fuzz_corpus.rs) and
//! `cargo fuzz run decode` runs it under libFuzzer.
//!
//! For every input: no panic, no hang, no unbounded allocation (the decoder's own limits), and
//! whatever is accepted must survive the round trips the KEP asks for:
//! CBOR -> value -> CBOR -> value gives the same value, deterministic encoding is a fixed point,
//! and CBOR -> JSON -> value gives the same value. Read as a CBOR sequence, the bytes must give
//! the same items and errors whether they arrive at once or in chunks.

#![allow(missing_docs, unreachable_pub)]

use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;
use std::fmt::Debug;

#[path = "../../crates/conneg-cbor/benches/k8s/mod.rs"]
pub mod k8s;

/// Every error displays as one line (paths escape control characters in map keys).
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
    let value = conneg_cbor::from_slice::<Value>(data);
    // Straight to JSON without a tree: accepted exactly when the value decode is.
    let json = conneg_cbor::transcode::cbor_to_json(data);
    match (&value, &json) {
        (Ok(v), Ok(j)) => {
            round_trip(v);
            // CBOR -> JSON -> CBOR through the transcoder, at any depth the decoder took.
            let re = conneg_cbor::transcode::json_to_cbor(j).expect("JSON -> CBOR");
            assert_eq!(
                re,
                conneg_cbor::to_vec(v).unwrap(),
                "JSON -> CBOR (transcode)"
            );
            // CBOR -> JSON -> value. serde_json's own parser stops at 128 levels of nesting
            // (the transcoder lifts that limit; the CBOR decoder allows 10000, as Kubernetes).
            match serde_json::from_slice::<Value>(j) {
                Ok(from_json) => assert_eq!(&from_json, v, "CBOR -> JSON (transcode) -> value"),
                Err(e) => assert!(e.to_string().contains("recursion limit"), "{e}"),
            }
        }
        (Err(e), Err(f)) => {
            check_error(e);
            check_error(f);
        }
        (v, j) => panic!(
            "Value decode and transcode disagree: {:?} vs {:?}",
            v.as_ref().err(),
            j.as_ref().err()
        ),
    }
    typed::<k8s::Pod>(data);
    typed::<k8s::PostgresCluster>(data);
    // The same bytes as an RFC 8742 sequence, fed whole and in chunks: the decoder must give
    // the same items and errors however the bytes arrive.
    let whole = sequence(data, data.len());
    // A partial item is re-examined from its start on every push, so bound the pushes.
    if data.len() <= 256 {
        assert_eq!(sequence(data, 1), whole, "byte-by-byte sequence differs");
    }
    let chunk = (data.len() / 16).max(7);
    assert_eq!(
        sequence(data, chunk),
        whole,
        "{chunk}-byte-chunk sequence differs"
    );
}

/// One outcome of a sequence decoder call.
#[derive(Debug, PartialEq)]
pub enum SeqOut {
    Item(Value),
    Error(conneg_cbor::ErrorKind),
}

/// Runs `SeqDecoder` over `data` pushed in `chunk`-byte pieces: the items and errors, then what
/// `finish` says.
pub fn sequence(data: &[u8], chunk: usize) -> (Vec<SeqOut>, Option<conneg_cbor::ErrorKind>) {
    let mut dec = conneg_cbor::SeqDecoder::new();
    let mut out = Vec::new();
    'chunks: for c in data.chunks(chunk.max(1)) {
        dec.push(c);
        loop {
            let before = dec.buffered();
            match dec.next::<Value>() {
                Ok(Some(v)) => {
                    assert!(dec.buffered() < before, "an item consumed no input");
                    round_trip(&v);
                    out.push(SeqOut::Item(v));
                }
                Ok(None) => break,
                Err(e) => {
                    check_error(&e);
                    out.push(SeqOut::Error(e.kind()));
                    if dec.buffered() == before {
                        // Fatal (ill-formed item): every later call repeats it.
                        let again = dec.next::<Value>().expect_err("a fatal error sticks");
                        assert_eq!(again.kind(), e.kind());
                        break 'chunks;
                    }
                }
            }
        }
    }
    let fin = dec.finish().err().map(|e| {
        check_error(&e);
        e.kind()
    });
    (out, fin)
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
