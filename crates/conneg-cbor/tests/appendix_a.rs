//! RFC 8949 Appendix A examples against Kubernetes' outcome for each: accepted items decode into
//! `serde_json::Value` and re-encode to exactly Kubernetes' bytes; rejected ones fail with the
//! expected error kind.

use conneg_cbor::{EncodeOptions, ErrorKind};
use serde_json::Value;

mod common;
use common::{hex, unhex, vectors as load};

fn expected_kind(hex: &str) -> ErrorKind {
    match hex {
        "1bffffffffffffffff" | "3bffffffffffffffff" => ErrorKind::IntegerOverflow,
        "a201020304" => ErrorKind::NonStringKey,
        _ => ErrorKind::UnsupportedValue,
    }
}

#[test]
fn kubernetes_expectations() {
    let vectors = load("appendix-a-kubernetes-expectations.json");
    assert_eq!(vectors.len(), 81);
    let enc = EncodeOptions::deterministic().self_described(false);
    let (mut accepted, mut rejected) = (0, 0);
    for v in &vectors {
        let h = v["hex"].as_str().unwrap();
        let input = unhex(h);
        let got = conneg_cbor::from_slice::<Value>(&input);
        match v["k8s"].as_str().unwrap() {
            "accept" => {
                let value = got.unwrap_or_else(|e| panic!("{h}: {e:?}"));
                let re = enc.to_vec(&value).unwrap();
                assert_eq!(hex(&re), v["reencoded"].as_str().unwrap(), "{h}");
                // With the prefix, too.
                let mut prefixed = conneg_cbor::SELF_DESCRIBED_PREFIX.to_vec();
                prefixed.extend_from_slice(&input);
                assert_eq!(
                    conneg_cbor::from_slice::<Value>(&prefixed).unwrap(),
                    value,
                    "{h}"
                );
                accepted += 1;
            }
            _ => {
                let err = got.expect_err(h);
                assert_eq!(err.kind(), expected_kind(h), "{h}: {err}");
                // The scanner (used to skip values) agrees.
                let err = conneg_cbor::from_slice::<serde::de::IgnoredAny>(&input).expect_err(h);
                assert_eq!(err.kind(), expected_kind(h), "{h}: {err}");
                rejected += 1;
            }
        }
    }
    assert_eq!((accepted, rejected), (64, 17));
}

#[test]
fn rfc_vectors_agree_with_decoded_values() {
    // Every RFC example Kubernetes accepts that has a plain JSON `decoded` value decodes to it.
    let rfc = load("rfc-appendix-a.json");
    let k8s = load("appendix-a-kubernetes-expectations.json");
    let mut checked = 0;
    for v in &rfc {
        let h = v["hex"].as_str().unwrap();
        let Some(exp) = k8s.iter().find(|k| k["hex"] == h) else {
            continue;
        };
        if exp["k8s"] != "accept" {
            continue;
        }
        let Some(decoded) = v.get("decoded") else {
            continue;
        };
        let got: Value = conneg_cbor::from_slice(&unhex(h)).unwrap();
        if h.starts_with("4") || h.starts_with("5f") {
            continue; // byte strings: the JSON file spells them differently
        }
        if decoded.is_number() && got.is_number() {
            assert_eq!(
                got.as_f64().unwrap(),
                decoded.as_f64().unwrap(),
                "{h}: {got} vs {decoded}"
            );
        } else {
            assert_eq!(&got, decoded, "{h}");
        }
        checked += 1;
    }
    assert!(checked > 40, "{checked}");
}
