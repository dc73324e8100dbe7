//! Diagnostic notation against RFC 8949 Appendix A.

use conneg_cbor::ErrorKind;
use conneg_cbor::diag::{DiagOptions, diagnose, diagnose_seq};

mod common;
use common::{unhex, vectors};

fn d(h: &str) -> String {
    diagnose(&unhex(h)).unwrap_or_else(|e| panic!("{h}: {e:?}"))
}

#[test]
fn rfc_vectors_with_diagnostic_notation() {
    let vectors = vectors("rfc-appendix-a.json");
    let mut n = 0;
    for v in &vectors {
        let h = v["hex"].as_str().unwrap();
        if h == "f818" {
            // RFC 7049's example; RFC 8949 §3.3 made f8 00..f8 1f not well-formed (and
            // Kubernetes rejects them as syntax errors), so it is an error here too.
            let e = diagnose(&unhex(h)).unwrap_err();
            assert_eq!(e.kind(), ErrorKind::Syntax, "{e}");
            continue;
        }
        // Every other vector renders.
        let got = d(h);
        if let Some(want) = v.get("diagnostic") {
            assert_eq!(got, want.as_str().unwrap(), "{h}");
            n += 1;
        }
    }
    assert!(n >= 20, "{n}");
}

#[test]
fn rfc_appendix_a_by_hand() {
    for (h, want) in [
        ("00", "0"),
        ("1bffffffffffffffff", "18446744073709551615"),
        ("3bffffffffffffffff", "-18446744073709551616"),
        ("c249010000000000000000", "2(h'010000000000000000')"),
        ("3903e7", "-1000"),
        ("f90000", "0.0"),
        ("f98000", "-0.0"),
        ("f93c00", "1.0"),
        ("fb3ff199999999999a", "1.1"),
        ("f93e00", "1.5"),
        ("f97bff", "65504.0"),
        ("fa47c35000", "100000.0"),
        ("fa7f7fffff", "3.4028234663852886e+38"),
        ("fb7e37e43c8800759c", "1.0e+300"),
        ("f90001", "5.960464477539063e-8"),
        ("f90400", "0.00006103515625"),
        ("f9c400", "-4.0"),
        ("fbc010666666666666", "-4.1"),
        ("f4", "false"),
        ("f5", "true"),
        ("f6", "null"),
        ("60", r#""""#),
        ("6161", r#""a""#),
        ("62225c", r#""\"\\""#),
        ("62c3bc", r#""ü""#),
        ("80", "[]"),
        ("8301820203820405", "[1, [2, 3], [4, 5]]"),
        ("a0", "{}"),
        ("a201020304", "{1: 2, 3: 4}"),
        ("a26161016162820203", r#"{"a": 1, "b": [2, 3]}"#),
        ("826161a161626163", r#"["a", {"b": "c"}]"#),
        ("7f657374726561646d696e67ff", r#"(_ "strea", "ming")"#),
        ("9fff", "[_ ]"),
        ("9f018202039f0405ffff", "[_ 1, [2, 3], [_ 4, 5]]"),
        ("83018202039f0405ff", "[1, [2, 3], [_ 4, 5]]"),
        ("83019f0203ff820405", "[1, [_ 2, 3], [4, 5]]"),
        ("bf61610161629f0203ffff", r#"{_ "a": 1, "b": [_ 2, 3]}"#),
        ("826161bf61626163ff", r#"["a", {_ "b": "c"}]"#),
        ("bf6346756ef563416d7421ff", r#"{_ "Fun": true, "Amt": -2}"#),
        ("5fff", "''_"),
        ("7fff", r#"""_"#),
        ("bfff", "{_ }"),
        ("d9d9f7a1416101", "55799({h'61': 1})"),
    ] {
        assert_eq!(d(h), want, "{h}");
    }
}

#[test]
fn byte_strings_as_text_option() {
    let o = DiagOptions::new().byte_string_text(true);
    assert_eq!(
        o.diagnose(&unhex("a1 4161 42c328")).unwrap(),
        r#"{"a": h'c328'}"#
    );
}

#[test]
fn sequences_and_errors() {
    assert_eq!(
        diagnose_seq(&unhex("01 d9d9f7 02 80")).unwrap(),
        "1, 55799(2), []"
    );
    assert_eq!(
        diagnose(&unhex("01 02")).unwrap_err().kind(),
        ErrorKind::TrailingData
    );
    for h in ["ff", "81", "5f 01 ff", "bf 01 ff", "1c", "9f 01"] {
        assert!(diagnose(&unhex(h)).is_err(), "{h}");
    }
}

#[test]
fn deep_input_does_not_recurse() {
    std::thread::Builder::new()
        .stack_size(256 << 10)
        .spawn(|| {
            let mut b = vec![0x81; 200_000];
            b.push(0x80);
            let s = diagnose(&b).unwrap();
            assert_eq!(s.len(), 400_002);
        })
        .unwrap()
        .join()
        .unwrap();
}
