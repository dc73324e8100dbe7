//! RFC 8949 Appendix F: every example of a not-well-formed item is rejected, both by a full decode
//! and by the skipping scanner.

use conneg_cbor::ErrorKind;
use serde::de::IgnoredAny;
use serde_json::Value;

mod common;
use common::unhex;

/// (group, examples) from RFC 8949 Appendix F.1, transcribed by hand.
const MALFORMED: &[(&str, &[&str])] = &[
    (
        "end of input in a head",
        &[
            "18",
            "19",
            "1a",
            "1b",
            "19 01",
            "1a 01 02",
            "1b 01 02 03 04 05 06 07",
            "38",
            "58",
            "78",
            "98",
            "9a 01 ff 00",
            "b8",
            "d8",
            "f8",
            "f9 00",
            "fa 00 00",
            "fb 00 00 00",
        ],
    ),
    (
        "definite-length strings with short data",
        &[
            "41",
            "61",
            "5a ffffffff 00",
            "5b ffffffffffffffff 01 02 03",
            "7a ffffffff 00",
            "7b 7fffffffffffffff 01 02 03",
        ],
    ),
    (
        "definite-length maps and arrays not closed with enough items",
        &[
            "81",
            "81 81 81 81 81 81 81 81 81",
            "82 00",
            "a1",
            "a2 01 02",
            "a1 00",
            "a2 00 00 00",
        ],
    ),
    ("tag number not followed by tag content", &["c0"]),
    (
        "indefinite-length strings not closed by a break",
        &["5f 41 00", "7f 61 00"],
    ),
    (
        "indefinite-length maps and arrays not closed by a break",
        &[
            "9f",
            "9f 01 02",
            "bf",
            "bf 01 02 01 02",
            "81 9f",
            "9f 80 00",
            "9f 9f 9f 9f 9f ff ff ff ff",
            "9f 81 9f 81 9f 9f ff ff ff",
        ],
    ),
    (
        "reserved additional information values",
        &[
            "1c", "1d", "1e", "3c", "3d", "3e", "5c", "5d", "5e", "7c", "7d", "7e", "9c", "9d",
            "9e", "bc", "bd", "be", "dc", "dd", "de", "fc", "fd", "fe",
        ],
    ),
    (
        "reserved two-byte encodings of simple values",
        &["f8 00", "f8 01", "f8 18", "f8 1f"],
    ),
    (
        "indefinite-length string chunks not of the correct type",
        &[
            "5f 00 ff",
            "5f 21 ff",
            "5f 61 00 ff",
            "5f 80 ff",
            "5f a0 ff",
            "5f c0 00 ff",
            "5f e0 ff",
            "7f 41 00 ff",
        ],
    ),
    (
        "indefinite-length string chunks not definite length",
        &["5f 5f 41 00 ff ff", "7f 7f 61 00 ff ff"],
    ),
    ("break on its own", &["ff"]),
    (
        "break in a definite-length array or map or a tag",
        &[
            "81 ff",
            "82 00 ff",
            "a1 ff",
            "a1 ff 00",
            "a1 00 ff",
            "a2 00 00 ff",
            "9f 81 ff",
            "9f 82 9f 81 9f 9f ff ff ff ff",
        ],
    ),
    (
        "break in an indefinite-length map in a value position",
        &["bf 00 ff", "bf 00 00 00 ff"],
    ),
    (
        "major type 0, 1, 6 with additional information 31",
        &["1f", "3f", "df"],
    ),
];

#[test]
fn appendix_f_malformed_items_are_rejected() {
    let mut n = 0;
    for (group, examples) in MALFORMED {
        for h in *examples {
            let b = unhex(h);
            let full = conneg_cbor::from_slice::<Value>(&b).expect_err(h);
            let skip = conneg_cbor::from_slice::<IgnoredAny>(&b).expect_err(h);
            // Not well-formed: truncated (Eof) or ill-formed (Syntax); where a map key that is not
            // a string comes first, the profile rejects that first.
            for e in [&full, &skip] {
                assert!(
                    matches!(
                        e.kind(),
                        ErrorKind::Eof | ErrorKind::Syntax | ErrorKind::NonStringKey
                    ),
                    "{group}: {h}: {e:?}"
                );
            }
            assert_eq!(full.kind(), skip.kind(), "{group}: {h}");
            if group.starts_with("end of input") || group.contains("short data") {
                assert!(full.is_eof(), "{h}");
            }
            n += 1;
        }
    }
    assert_eq!(n, 94);
}

#[test]
fn every_prefix_of_a_valid_item_is_eof() {
    let b = conneg_cbor::to_vec(&serde_json::json!({
        "a": [1, 2.5, "x", {"b": null}], "c": true, "long": "0123456789012345678901234567890"
    }))
    .unwrap();
    for i in 0..b.len() {
        let e = conneg_cbor::from_slice::<Value>(&b[..i]).unwrap_err();
        assert!(e.is_eof(), "{i}: {e:?}");
        let e = conneg_cbor::from_slice::<IgnoredAny>(&b[..i]).unwrap_err();
        assert!(e.is_eof(), "{i}: {e:?}");
    }
}
