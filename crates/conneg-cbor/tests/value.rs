//! `value_from_slice` builds `serde_json::Value` trees without serde's visitor: it must give
//! exactly what `from_slice::<Value>` gives, value or error, on every input and with every
//! option. Generated items cover what the profile checks (tags, indefinite lengths, duplicate
//! and non-string keys, invalid UTF-8, integer widths, floats, simple values, truncation), and
//! the RFC 8949 Appendix A vectors are checked too (deep nesting: `tests/deep.rs`).

use conneg_cbor::DecodeOptions;
use proptest::prelude::*;
use serde_json::Value;

mod common;
use common::{unhex, vectors};

/// Both decodes of `b` with `opts`: the same value (floats by their bits, integers as integers)
/// or the same error (kind, offset, path and message).
fn same_outcome(b: &[u8], opts: DecodeOptions) -> Result<(), String> {
    let via_serde = opts.from_slice::<Value>(b);
    let direct = opts.value_from_slice(b);
    match (&via_serde, &direct) {
        (Ok(x), Ok(y))
            if serde_json::to_string(x).unwrap() == serde_json::to_string(y).unwrap() =>
        {
            Ok(())
        }
        (Err(x), Err(y)) if format!("{x:?}") == format!("{y:?}") => Ok(()),
        _ => Err(format!(
            "{b:02x?}: from_slice {via_serde:?}, value_from_slice {direct:?}"
        )),
    }
}

fn option_sets() -> [DecodeOptions; 3] {
    [
        DecodeOptions::default(),
        DecodeOptions::default()
            .max_depth(3)
            .max_array_len(2)
            .max_map_pairs(2),
        DecodeOptions::default().max_depth(1),
    ]
}

/// A head of major type `major` with argument `v`: shortest form (`width` 0) or forced to a
/// 1-, 2-, 4- or 8-byte argument (not the shortest form when `v` is small).
fn head(major: u8, v: u64, width: u8) -> Vec<u8> {
    let m = major << 5;
    match width {
        0 if v < 24 => vec![m | v as u8],
        0 | 1 if v <= 0xff => vec![m | 24, v as u8],
        0 | 2 if v <= 0xffff => [&[m | 25][..], &(v as u16).to_be_bytes()].concat(),
        0 | 3 if v <= 0xffff_ffff => [&[m | 26][..], &(v as u32).to_be_bytes()].concat(),
        _ => [&[m | 27][..], &v.to_be_bytes()].concat(),
    }
}

/// String content: mostly ASCII, sometimes multi-byte UTF-8 or bytes that are not UTF-8.
fn content() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        4 => "[a-z]{0,6}".prop_map(String::into_bytes),
        1 => "[a-zé€😀]{0,4}".prop_map(String::into_bytes),
        1 => prop::collection::vec(any::<u8>(), 0..6),
        1 => "[a-z]{20,40}".prop_map(String::into_bytes),
    ]
}

/// A byte (2) or text (3) string, definite or in chunks.
fn string() -> impl Strategy<Value = Vec<u8>> {
    (2u8..4, content(), 0u8..3, 0u8..4).prop_map(|(major, c, shape, width)| match shape {
        0 | 1 => [head(major, c.len() as u64, width), c].concat(),
        _ => {
            let mid = c.len() / 2;
            let mut b = vec![(major << 5) | 31];
            for part in [&c[..mid], &c[mid..]] {
                b.extend(head(major, part.len() as u64, 0));
                b.extend_from_slice(part);
            }
            b.push(0xff);
            b
        }
    })
}

fn scalar() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        6 => string(),
        3 => (0u8..2, any::<u64>(), 0u8..5).prop_map(|(m, v, w)| head(m, v, w)),
        2 => (0u8..2, 0u64..30).prop_map(|(m, v)| head(m, v, 0)),
        1 => any::<u16>().prop_map(|f| [&[0xf9][..], &f.to_be_bytes()].concat()),
        1 => any::<f32>().prop_map(|f| [&[0xfa][..], &f.to_be_bytes()].concat()),
        1 => any::<f64>().prop_map(|f| [&[0xfb][..], &f.to_be_bytes()].concat()),
        2 => prop::sample::select(vec![0xf4u8, 0xf5, 0xf6, 0xf7, 0xe0, 0xf3, 0xff, 0x1c, 0x5f])
            .prop_map(|b| vec![b]),
        1 => any::<u8>().prop_map(|s| vec![0xf8, s]),
    ]
}

/// A tag number: the ones the profile treats specially and some it skips.
fn tag() -> impl Strategy<Value = Vec<u8>> {
    prop::sample::select(vec![0u64, 1, 2, 3, 21, 22, 23, 24, 55799, 1000])
        .prop_map(|t| head(6, t, 0))
}

/// An array (major 4) or map (5) of `n` elements encoded in `body`, whose head declares the
/// right length, one more, one less, or an indefinite length (`shape` 0-4).
fn container(major: u8, n: usize, shape: u8, body: Vec<u8>) -> Vec<u8> {
    let n = n as u64;
    let (mut b, end) = match shape {
        0 => (head(major, n + 1, 0), None),
        1 => (head(major, n.saturating_sub(1), 0), None),
        2 => (vec![(major << 5) | 31], Some(0xff)),
        _ => (head(major, n, 0), None),
    };
    b.extend(body);
    b.extend(end);
    b
}

fn item() -> impl Strategy<Value = Vec<u8>> {
    scalar().prop_recursive(5, 64, 6, |inner| {
        let key = prop_oneof![
            6 => prop::sample::select(vec!["a", "b", "ab", "kind", "metadata"])
                .prop_flat_map(|k| (2u8..4, Just(k)))
                .prop_map(|(major, k)| [head(major, k.len() as u64, 0), k.as_bytes().to_vec()].concat()),
            2 => string(),
            1 => (tag(), string()).prop_map(|(t, s)| [t, s].concat()),
            1 => scalar(),
        ];
        prop_oneof![
            (prop::collection::vec(inner.clone(), 0..6), 0u8..5)
                .prop_map(|(items, shape)| container(4, items.len(), shape, items.concat())),
            (prop::collection::vec((key, inner.clone()), 0..6), 0u8..5).prop_map(
                |(pairs, shape)| {
                    let n = pairs.len();
                    let body = pairs.into_iter().flat_map(|(k, v)| [k, v]).collect::<Vec<_>>();
                    container(5, n, shape, body.concat())
                }
            ),
            (tag(), inner).prop_map(|(t, i)| [t, i].concat()),
        ]
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn generated_items_decode_as_from_slice_does(b in item(), cut in any::<prop::sample::Index>()) {
        for opts in option_sets() {
            same_outcome(&b, opts).map_err(TestCaseError::fail)?;
        }
        // The same item truncated, and with the self-described prefix and trailing bytes.
        let n = cut.index(b.len() + 1);
        same_outcome(&b[..n], DecodeOptions::default()).map_err(TestCaseError::fail)?;
        let prefixed = [&conneg_cbor::SELF_DESCRIBED_PREFIX[..], &b[..]].concat();
        same_outcome(&prefixed, DecodeOptions::default()).map_err(TestCaseError::fail)?;
        same_outcome(&[&b[..], &[0x01][..]].concat(), DecodeOptions::default())
            .map_err(TestCaseError::fail)?;
    }

    #[test]
    fn arbitrary_bytes_decode_as_from_slice_does(b in prop::collection::vec(any::<u8>(), 0..64)) {
        same_outcome(&b, DecodeOptions::default()).map_err(TestCaseError::fail)?;
    }

    /// Encoded trees (the shape of real objects) come back equal to what was encoded.
    #[test]
    fn encoded_objects_come_back(v in object()) {
        let b = conneg_cbor::to_vec(&v).unwrap();
        prop_assert_eq!(conneg_cbor::value_from_slice(&b).unwrap(), v);
    }
}

fn object() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        "[a-zA-Z0-9.-]{0,30}".prop_map(Value::String),
    ];
    leaf.prop_recursive(5, 96, 12, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..30).prop_map(Value::Array),
            prop::collection::btree_map("[a-zA-Z]{1,12}", inner, 0..14)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

#[test]
fn appendix_a_vectors_decode_as_from_slice_does() {
    let mut checked = 0;
    for file in [
        "rfc-appendix-a.json",
        "appendix-a-kubernetes-expectations.json",
    ] {
        for v in vectors(file) {
            let b = unhex(v["hex"].as_str().unwrap());
            for opts in option_sets() {
                same_outcome(&b, opts).unwrap();
            }
            checked += 1;
        }
    }
    assert_eq!(checked, 82 + 81);
}

#[test]
fn errors_keep_their_path() {
    // {"items": [{"a": 1, "a": 2}]}: the duplicate key is reported where it is, as from_slice does.
    let b = unhex("a1 65 6974656d73 81 a2 61 61 01 61 61 02");
    let e = conneg_cbor::value_from_slice(&b).unwrap_err();
    assert_eq!(e.kind(), conneg_cbor::ErrorKind::DuplicateKey);
    assert_eq!(e.path(), ".items[0]");
    same_outcome(&b, DecodeOptions::default()).unwrap();
}

#[test]
fn duplicate_keys_of_every_form_are_refused() {
    // The map being built finds duplicates (no key tracker on this path): keys with the same
    // bytes are the same key whether text, bytes or chunked, and a later duplicate is refused
    // even when its value is a container.
    for hex in [
        "a2 41 61 01 61 61 02",                   // {h'61': 1, "a": 2}
        "a2 61 61 01 7f 61 61 ff 02",             // {"a": 1, (_ "a"): 2}
        "a2 62 6161 01 5f 41 61 41 61 ff 02",     // {"aa": 1, (_ h'61', h'61'): 2}
        "a3 61 61 01 61 62 02 61 61 a1 61 63 80", // {"a": 1, "b": 2, "a": {"c": []}}
    ] {
        let b = unhex(hex);
        let e = conneg_cbor::value_from_slice(&b).unwrap_err();
        assert_eq!(e.kind(), conneg_cbor::ErrorKind::DuplicateKey, "{hex}");
        same_outcome(&b, DecodeOptions::default()).unwrap();
    }
}

#[test]
fn scalars_at_every_edge_decode_as_from_slice_does() {
    // value_from_slice makes untagged integers, floats, booleans and null itself: the same
    // `Value`s (and errors) as serde_json's visitor, in maps and arrays as at the root.
    for hex in [
        "00",
        "17",
        "18 18",
        "1b 7fffffffffffffff",
        "1b 8000000000000000", // i64::MAX, overflow
        "20",
        "37",
        "38 18",
        "3b 7fffffffffffffff",
        "3b 8000000000000000", // i64::MIN, overflow
        "18 05",
        "19 0001", // not the shortest form
        "f4",
        "f5",
        "f6",
        "f7",
        "f0",
        "f8 20",
        "f8 10", // undefined and simple values
        "f9 0000",
        "f9 8000",
        "f9 0001",
        "f9 7bff",
        "f9 7c00",
        "f9 7e00", // halves: ±0, ∞, NaN
        "fa 00000001",
        "fa 7f800000",
        "fb 3ff199999999999a",
        "fb 7ff8000000000000",
        "fb 8000000000000000",
        "1b",
        "fb 3ff1", // truncated
    ] {
        let s = unhex(hex);
        for b in [
            s.clone(),
            [&[0xa1, 0x61, b'k'][..], &s].concat(),
            [&[0x83, 0x01][..], &s, &[0xf6]].concat(),
            [&[0xd9, 0xd9, 0xf7, 0x81][..], &s].concat(),
        ] {
            same_outcome(&b, DecodeOptions::default()).unwrap();
        }
    }
}
