//! Property tests: JSON -> CBOR -> JSON and CBOR -> JSON -> CBOR round trips over generated
//! `serde_json::Value` trees (finite floats; integers within i64, since the profile rejects larger
//! integers on decode).

use proptest::prelude::*;
use serde_json::{Map, Number, Value};

fn leaf() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(|i| Value::Number(i.into())),
        (0..=i64::MAX as u64).prop_map(|u| Value::Number(u.into())),
        any::<f64>()
            .prop_filter("finite", |f| f.is_finite())
            .prop_map(|f| Value::Number(Number::from_f64(f).unwrap())),
        prop_oneof![
            Just(0.0),
            Just(-0.0),
            Just(1.0),
            Just(0.5),
            Just(65504.0),
            Just(1e-7)
        ]
        .prop_map(|f| Value::Number(Number::from_f64(f).unwrap())),
        ".{0,12}".prop_map(Value::String),
    ]
}

fn value() -> impl Strategy<Value = Value> {
    leaf().prop_recursive(5, 64, 8, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..8).prop_map(Value::Array),
            prop::collection::btree_map(".{0,6}", inner, 0..8)
                .prop_map(|m| Value::Object(m.into_iter().collect::<Map<_, _>>())),
        ]
    })
}

fn same(a: &Value, b: &Value) -> bool {
    // -0.0 == 0.0 numerically; compare floats by bits so the sign survives too.
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => {
            x == y
                && x.is_f64() == y.is_f64()
                && x.as_f64().map(f64::to_bits) == y.as_f64().map(f64::to_bits)
        }
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(a, b)| same(a, b))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len() && x.iter().all(|(k, v)| y.get(k).is_some_and(|w| same(v, w)))
        }
        _ => a == b,
    }
}

/// A deliberately simple recursive reference for deterministic encoding (no prefix): each
/// map's entries encoded separately and sorted by their encoded key.
fn reference(v: &Value, out: &mut Vec<u8>) {
    fn head(out: &mut Vec<u8>, major: u8, n: u64) {
        let m = major << 5;
        match n {
            0..=23 => out.push(m | n as u8),
            24..=0xff => out.extend([m | 24, n as u8]),
            0x100..=0xffff => {
                out.push(m | 25);
                out.extend((n as u16).to_be_bytes());
            }
            0x1_0000..=0xffff_ffff => {
                out.push(m | 26);
                out.extend((n as u32).to_be_bytes());
            }
            _ => {
                out.push(m | 27);
                out.extend(n.to_be_bytes());
            }
        }
    }
    fn string(out: &mut Vec<u8>, s: &str) {
        head(out, 2, s.len() as u64);
        out.extend_from_slice(s.as_bytes());
    }
    match v {
        Value::Null => out.push(0xf6),
        Value::Bool(b) => out.push(if *b { 0xf5 } else { 0xf4 }),
        Value::Number(n) => {
            if let Some(u) = n.as_u64() {
                head(out, 0, u);
            } else if let Some(i) = n.as_i64() {
                head(out, 1, !(i as u64));
            } else {
                let f = n.as_f64().unwrap();
                // Shortest exact width; this reference leans on the codec's own float rule,
                // which has its own unit tests.
                out.extend(
                    conneg_cbor::EncodeOptions::deterministic()
                        .self_described(false)
                        .to_vec(&f)
                        .unwrap(),
                );
            }
        }
        Value::String(s) => string(out, s),
        Value::Array(a) => {
            head(out, 4, a.len() as u64);
            for x in a {
                reference(x, out);
            }
        }
        Value::Object(m) => {
            head(out, 5, m.len() as u64);
            let mut entries: Vec<(Vec<u8>, Vec<u8>)> = m
                .iter()
                .map(|(k, v)| {
                    let mut kb = Vec::new();
                    string(&mut kb, k);
                    let mut vb = Vec::new();
                    reference(v, &mut vb);
                    (kb, vb)
                })
                .collect();
            entries.sort();
            for (k, v) in entries {
                out.extend(k);
                out.extend(v);
            }
        }
    }
}

proptest! {
    #[test]
    fn deterministic_matches_a_reference_encoder(v in value()) {
        let mut want = Vec::new();
        reference(&v, &mut want);
        let got = conneg_cbor::EncodeOptions::deterministic().self_described(false).to_vec(&v).unwrap();
        prop_assert_eq!(got, want);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn json_cbor_json(v in value()) {
        let json = serde_json::to_string(&v).unwrap();
        let parsed: Value = serde_json::from_str(&json).unwrap();
        let cbor = conneg_cbor::to_vec(&parsed).unwrap();
        let back: Value = conneg_cbor::from_slice(&cbor).unwrap();
        prop_assert!(same(&back, &parsed), "{back} != {parsed}");
        prop_assert_eq!(serde_json::to_string(&back).unwrap(), json);
    }

    #[test]
    fn cbor_json_cbor(v in value()) {
        for opts in [conneg_cbor::EncodeOptions::deterministic(), conneg_cbor::EncodeOptions::fast()] {
            let cbor = opts.to_vec(&v).unwrap();
            let decoded: Value = conneg_cbor::from_slice(&cbor).unwrap();
            let json = serde_json::to_vec(&decoded).unwrap();
            let reparsed: Value = serde_json::from_slice(&json).unwrap();
            let again = opts.to_vec(&reparsed).unwrap();
            prop_assert_eq!(&again, &cbor);
        }
    }

    #[test]
    fn transcoding_matches_value_round_trips(v in value()) {
        let json = serde_json::to_vec(&v).unwrap();
        let parsed: Value = serde_json::from_slice(&json).unwrap();
        let cbor = conneg_cbor::transcode::json_to_cbor(&json).unwrap();
        prop_assert_eq!(&cbor, &conneg_cbor::to_vec(&parsed).unwrap());
        // Keys come out in CBOR's order (shorter first), so compare as values.
        let back = conneg_cbor::transcode::cbor_to_json(&cbor).unwrap();
        let back: Value = serde_json::from_slice(&back).unwrap();
        prop_assert!(same(&back, &parsed));
    }

    #[test]
    fn arbitrary_bytes_never_panic(b in prop::collection::vec(any::<u8>(), 0..64)) {
        let v = conneg_cbor::from_slice::<Value>(&b);
        let s = conneg_cbor::from_slice::<serde::de::IgnoredAny>(&b);
        match (&v, &s) {
            (Err(a), Err(b)) => prop_assert!(
                a.kind() == b.kind() || a.kind() == conneg_cbor::ErrorKind::InvalidUtf8,
                "{a:?} vs {b:?}"
            ),
            (Ok(_), Err(e)) => prop_assert!(false, "scanner rejects what decodes: {e:?}"),
            // A Value cannot hold a byte string that is not UTF-8; the scanner does not care.
            (Err(e), Ok(_)) => prop_assert_eq!(e.kind(), conneg_cbor::ErrorKind::InvalidUtf8),
            (Ok(_), Ok(_)) => {}
        }
    }
}
