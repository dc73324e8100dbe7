//! JSON <-> CBOR transcoding without a tree.

use conneg_cbor::transcode::{cbor_to_json, cbor_to_json_writer, json_to_cbor, json_to_cbor_with};
use conneg_cbor::{DecodeOptions, EncodeOptions, ErrorKind};

mod common;
use common::unhex;

#[test]
fn numbers_keep_their_kind_both_ways() {
    let json = br#"[1,1.0,-1,-1.0,0.5,1e300,18446744073709551615,-9223372036854775808,0.1]"#;
    let cbor = json_to_cbor(json).unwrap();
    assert_eq!(
        &cbor[3..15],
        &unhex("89 01 f93c00 20 f9bc00 f93800")[..],
        "{cbor:02x?}"
    );
    // u64::MAX encodes, but the profile will not decode it (integers must fit i64).
    assert_eq!(
        cbor_to_json(&cbor).unwrap_err().kind(),
        ErrorKind::IntegerOverflow
    );
    let json = br#"[1,1.0,-1,-1.0,0.5,1e+300,-9223372036854775808,0.1,{"a":[]}]"#;
    let back = cbor_to_json(&json_to_cbor(json).unwrap()).unwrap();
    assert_eq!(
        std::str::from_utf8(&back).unwrap(),
        std::str::from_utf8(json).unwrap()
    );
}

#[test]
fn same_bytes_as_going_through_a_value() {
    let json = br#"{"kind":"Flunder","metadata":{"name":"x","labels":{"b":"1","a":"2"}},"spec":{"n":[1,2.5,null,true,"s"]}}"#;
    let v: serde_json::Value = serde_json::from_slice(json).unwrap();
    assert_eq!(
        json_to_cbor(json).unwrap(),
        conneg_cbor::to_vec(&v).unwrap()
    );
    let cbor = conneg_cbor::to_vec(&v).unwrap();
    // CBOR's key order (shorter first) carries over to the JSON text.
    let back = cbor_to_json(&cbor).unwrap();
    assert_eq!(
        serde_json::from_slice::<serde_json::Value>(&back).unwrap(),
        v
    );
    assert!(back.starts_with(br#"{"kind":"Flunder","spec":"#));
    // Fast mode keeps the JSON order; buffers are appended to.
    let mut out = vec![0xee];
    json_to_cbor_with(
        br#"{"b":1,"a":2}"#,
        &EncodeOptions::fast().self_described(false),
        &mut out,
    )
    .unwrap();
    assert_eq!(out, unhex("ee a2 4162 01 4161 02"));
}

#[test]
fn json_errors() {
    for (json, kind) in [
        (&br#"{"a":1,"a":2}"#[..], ErrorKind::DuplicateKey),
        (b"{\"a\":", ErrorKind::Eof),
        (b"{\"a\" 1}", ErrorKind::Syntax),
        (b"1 2", ErrorKind::Syntax),
        (b"", ErrorKind::Eof),
    ] {
        let mut out = vec![7];
        let e = json_to_cbor_with(json, &EncodeOptions::default(), &mut out).unwrap_err();
        assert_eq!(e.kind(), kind, "{}: {e}", String::from_utf8_lossy(json));
        assert_eq!(out, [7], "output restored");
    }
}

#[test]
fn json_duplicate_keys_are_refused_in_both_modes() {
    let many: String = (0..40).map(|i| format!("\"k{i}\":{i},")).collect();
    let cases = [
        r#"{"a":1,"a":2}"#.to_string(),
        r#"{"x":[{"b":{"a":1,"\u0061":2}}]}"#.to_string(),
        format!("{{{many}\"k39\":0}}"),
    ];
    for json in &cases {
        for opts in [EncodeOptions::deterministic(), EncodeOptions::fast()] {
            let mut out = vec![7];
            let e = json_to_cbor_with(json.as_bytes(), &opts, &mut out).unwrap_err();
            assert_eq!(e.kind(), ErrorKind::DuplicateKey, "{json}: {e}");
            assert!(e.to_string().contains("duplicate map key"), "{e}");
            assert_eq!(out, [7], "output restored");
        }
    }
    // The same keys in different maps are fine.
    let ok = br#"{"a":{"a":1},"b":[{"a":1},{"a":2}]}"#;
    for opts in [EncodeOptions::deterministic(), EncodeOptions::fast()] {
        let mut out = Vec::new();
        json_to_cbor_with(ok, &opts, &mut out).unwrap();
        assert_eq!(cbor_to_json(&out).unwrap(), ok);
    }
}

#[test]
fn cbor_errors_keep_kind_and_path() {
    let e = cbor_to_json(&unhex("a1 4161 a2 4162 01 4162 02")).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::DuplicateKey);
    assert_eq!(e.path(), ".a");
    let e = cbor_to_json(&unhex("82 01 81 62 c328")).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidUtf8);
    assert_eq!(e.path(), "[1][0]");
    let e = cbor_to_json(&unhex("81 42 c328")).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidUtf8);
    for (h, k) in [
        ("f97e00", ErrorKind::UnsupportedValue),
        ("01 02", ErrorKind::TrailingData),
        ("", ErrorKind::Eof),
        ("82 01", ErrorKind::Eof),
        ("a1 01 02", ErrorKind::NonStringKey),
    ] {
        assert_eq!(cbor_to_json(&unhex(h)).unwrap_err().kind(), k, "{h}");
    }
}

#[test]
fn cbor_specifics_become_json_strings() {
    let j = |h: &str| String::from_utf8(cbor_to_json(&unhex(h)).unwrap()).unwrap();
    assert_eq!(j("d6 4568656c6c6f"), r#""aGVsbG8=""#);
    assert_eq!(j("c1 01"), r#""1970-01-01T00:00:01Z""#);
    assert_eq!(j("d9d9f7 bf 6161 9f 01 ff ff"), r#"{"a":[1]}"#);
    assert_eq!(j("7f 6161 6162 ff"), r#""ab""#);
    assert_eq!(j("f93c00"), "1.0");
    let mut out = Vec::new();
    cbor_to_json_writer(
        &unhex("81 01"),
        &DecodeOptions::new().max_depth(1),
        &mut out,
    )
    .unwrap();
    assert_eq!(out, b"[1]");
    assert_eq!(
        cbor_to_json_writer(
            &unhex("81 81 01"),
            &DecodeOptions::new().max_depth(1),
            &mut out
        )
        .unwrap_err()
        .kind(),
        ErrorKind::DepthLimit
    );
}

#[test]
fn deep_cbor_to_json_on_a_small_stack() {
    std::thread::Builder::new()
        .stack_size(2 << 20)
        .spawn(|| {
            let mut b = vec![0x81; 9_999];
            b.push(0x80);
            let json = cbor_to_json(&b).unwrap();
            assert_eq!(json.len(), 20_000);
        })
        .unwrap()
        .join()
        .unwrap();
}

#[test]
fn json_nests_as_deep_as_cbor_on_a_small_stack() {
    /// `levels` arrays and objects, alternating, around a 1.
    fn nested(levels: usize) -> String {
        let mut json = String::new();
        for i in 0..levels {
            json.push_str(if i % 2 == 0 { "[" } else { r#"{"k":"# });
        }
        json.push('1');
        for i in (0..levels).rev() {
            json.push(if i % 2 == 0 { ']' } else { '}' });
        }
        json
    }
    std::thread::Builder::new()
        .stack_size(2 << 20)
        .spawn(|| {
            // The decoder's limit of 10,000 counts the self-described tag too (as Kubernetes'
            // does), so 9,999 containers go both ways.
            let json = nested(9_999);
            for opts in [EncodeOptions::deterministic(), EncodeOptions::fast()] {
                let mut cbor = Vec::new();
                json_to_cbor_with(json.as_bytes(), &opts, &mut cbor).unwrap();
                assert_eq!(cbor_to_json(&cbor).unwrap(), json.as_bytes());
            }
            // JSON itself may nest 10,000 deep (Kubernetes' JSON limit); one more is refused.
            json_to_cbor(nested(10_000).as_bytes()).unwrap();
            let e = json_to_cbor(nested(10_001).as_bytes()).unwrap_err();
            assert_eq!(e.kind(), ErrorKind::DepthLimit, "{}", e.message());
        })
        .unwrap()
        .join()
        .unwrap();
}
