//! One test per encoding rule of the profile.

use conneg_cbor::{EncodeOptions, ErrorKind, StringEncoding};
use serde::{Serialize, Serializer};
use serde_json::json;
use std::collections::{BTreeMap, HashMap};

mod common;
use common::hex;

fn bare<T: Serialize + ?Sized>(v: &T) -> String {
    hex(&EncodeOptions::deterministic()
        .self_described(false)
        .to_vec(v)
        .unwrap())
}

fn bare_err<T: Serialize + ?Sized>(v: &T) -> ErrorKind {
    EncodeOptions::deterministic()
        .self_described(false)
        .to_vec(v)
        .unwrap_err()
        .kind()
}

#[test]
fn self_described_prefix_on_top_level_only() {
    assert_eq!(hex(&conneg_cbor::to_vec(&vec![1]).unwrap()), "d9d9f78101");
    assert_eq!(bare(&vec![1]), "8101");
    let mut w = Vec::new();
    conneg_cbor::to_writer(&mut w, &true).unwrap();
    assert_eq!(hex(&w), "d9d9f7f5");
    assert!(conneg_cbor::recognizes(&w));
    for no in [&b""[..], b"\xd9", b"\xd9\xd9", b"\xff\xff\xff", b"{}"] {
        assert!(!conneg_cbor::recognizes(no));
    }
}

#[test]
fn encode_into_appends_and_restores_on_error() {
    let mut buf = vec![0xaa];
    EncodeOptions::fast().encode_into(&mut buf, &1u8).unwrap();
    assert_eq!(hex(&buf), "aad9d9f701");
    let e = EncodeOptions::fast().encode_into(&mut buf, &vec![1.0, f64::NAN]);
    assert!(e.is_err());
    assert_eq!(hex(&buf), "aad9d9f701");
}

#[test]
fn shortest_integer_heads() {
    for (v, want) in [
        (0i64, "00"),
        (23, "17"),
        (24, "1818"),
        (255, "18ff"),
        (256, "190100"),
        (65535, "19ffff"),
        (65536, "1a00010000"),
        (4294967295, "1affffffff"),
        (4294967296, "1b0000000100000000"),
        (-1, "20"),
        (-24, "37"),
        (-25, "3818"),
        (-256, "38ff"),
        (-257, "390100"),
        (i64::MIN, "3b7fffffffffffffff"),
    ] {
        assert_eq!(bare(&v), want, "{v}");
    }
    assert_eq!(bare(&u64::MAX), "1bffffffffffffffff");
    assert_eq!(bare(&7u8), "07");
}

#[test]
fn i128_and_u128_must_fit_64_bits() {
    assert_eq!(bare(&(u64::MAX as u128)), "1bffffffffffffffff");
    assert_eq!(bare(&(i64::MIN as i128)), "3b7fffffffffffffff");
    assert_eq!(
        bare_err(&(u64::MAX as u128 + 1)),
        ErrorKind::IntegerOverflow
    );
    assert_eq!(
        bare_err(&(i64::MIN as i128 - 1)),
        ErrorKind::IntegerOverflow
    );
}

#[test]
fn shortest_exact_floats() {
    for (v, want) in [
        (0.0f64, "f90000"),
        (-0.0, "f98000"),
        (1.0, "f93c00"),
        (1.1, "fb3ff199999999999a"),
        (1.5, "f93e00"),
        (100000.0, "fa47c35000"),
        (5.960464477539063e-8, "f90001"),
        (0.00006103515625, "f90400"),
        (-4.0, "f9c400"),
        (65504.0, "f97bff"),
        (65505.0, "fa477fe100"),
        (1.0e300, "fb7e37e43c8800759c"),
    ] {
        assert_eq!(bare(&v), want, "{v}");
    }
    assert_eq!(bare(&1.5f32), "f93e00");
    assert_eq!(bare(&0.1f32), "fa3dcccccd");
}

#[test]
fn nan_and_infinity_are_errors() {
    for v in [f64::NAN, f64::INFINITY, f64::NEG_INFINITY] {
        assert_eq!(bare_err(&v), ErrorKind::UnsupportedValue);
        assert_eq!(bare_err(&(v as f32)), ErrorKind::UnsupportedValue);
    }
}

#[test]
fn unit_none_and_null_are_null() {
    assert_eq!(bare(&()), "f6");
    assert_eq!(bare(&None::<u8>), "f6");
    assert_eq!(bare(&serde_json::Value::Null), "f6");
    #[derive(Serialize)]
    struct U;
    assert_eq!(bare(&U), "f6");
    assert_eq!(bare(&Some(1)), "01");
}

struct Bytes<'a>(&'a [u8]);
impl Serialize for Bytes<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_bytes(self.0)
    }
}

#[test]
fn serialize_bytes_is_tag_22_byte_string() {
    assert_eq!(bare(&Bytes(b"hello")), "d64568656c6c6f");
    // And it reads back as base64 text (like Kubernetes' []byte in JSON)...
    let enc = conneg_cbor::to_vec(&Bytes(b"hello")).unwrap();
    let s: String = conneg_cbor::from_slice(&enc).unwrap();
    assert_eq!(s, "aGVsbG8=");
}

#[test]
fn strings_are_byte_strings_by_default_text_on_request() {
    assert_eq!(bare(&"hello"), "4568656c6c6f");
    assert_eq!(bare(&'ü'), "42c3bc");
    let text = EncodeOptions::deterministic()
        .self_described(false)
        .string_encoding(StringEncoding::Text);
    assert_eq!(hex(&text.to_vec(&"hello").unwrap()), "6568656c6c6f");
    assert_eq!(
        hex(&text.to_vec(&json!({"a": "b"})).unwrap()),
        "a1616161 62".replace(' ', "")
    );
}

#[derive(Serialize)]
enum E {
    Unit,
    New(u8),
    Tuple(u8, u8),
    Struct { b: u8, a: u8 },
}

#[test]
fn enums_look_like_serde_json() {
    assert_eq!(bare(&E::Unit), "44556e6974");
    assert_eq!(bare(&E::New(1)), "a1434e657701");
    assert_eq!(bare(&E::Tuple(1, 2)), "a1455475706c65820102");
    assert_eq!(
        bare(&E::Struct { b: 1, a: 2 }),
        "a146537472756374a241610241620 1".replace(' ', "")
    );
    // Same structure as JSON.
    for e in [E::Unit, E::New(1), E::Tuple(1, 2), E::Struct { b: 1, a: 2 }] {
        let cbor = conneg_cbor::to_vec(&e).unwrap();
        let v: serde_json::Value = conneg_cbor::from_slice(&cbor).unwrap();
        assert_eq!(v, serde_json::to_value(&e).unwrap());
    }
}

#[test]
fn map_keys_must_be_strings() {
    let mut m = BTreeMap::new();
    m.insert(1, 2);
    assert_eq!(bare_err(&m), ErrorKind::NonStringKey);
    let mut m = BTreeMap::new();
    m.insert('k', 2);
    assert_eq!(bare(&m), "a1416b02");
    let mut m = BTreeMap::new();
    m.insert(false, 2);
    assert_eq!(bare_err(&m), ErrorKind::NonStringKey);
}

#[test]
fn deterministic_sorts_by_encoded_key_shorter_first() {
    let mut m = HashMap::new();
    for k in ["aa", "b", "a", "ab", "c", "ba"] {
        m.insert(k, 0);
    }
    assert_eq!(bare(&m), "a6416100416200416300426161004261620042626100");
    #[derive(Serialize)]
    struct S {
        zz: u8,
        b: u8,
        aaa: u8,
    }
    assert_eq!(
        bare(&S {
            zz: 1,
            b: 2,
            aaa: 3
        }),
        "a3416202427a7a0143616161 03".replace(' ', "")
    );
}

#[test]
fn fast_mode_keeps_order() {
    #[derive(Serialize)]
    struct S {
        zz: u8,
        b: u8,
    }
    let fast = EncodeOptions::fast().self_described(false);
    assert_eq!(
        hex(&fast.to_vec(&S { zz: 1, b: 2 }).unwrap()),
        "a2427a7a01416202"
    );
}

#[test]
fn duplicate_field_names_never_make_duplicate_keys() {
    #[derive(Serialize)]
    struct S {
        a: u8,
        #[serde(rename = "a")]
        b: u8,
    }
    let e = conneg_cbor::to_vec(&S { a: 1, b: 2 }).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::DuplicateKey);
    assert!(e.to_string().contains("\"a\""), "{e}");
    // Out of order and duplicated.
    #[derive(Serialize)]
    struct T {
        b: u8,
        a: u8,
        #[serde(rename = "b")]
        c: u8,
    }
    assert_eq!(
        conneg_cbor::to_vec(&T { a: 1, b: 2, c: 3 })
            .unwrap_err()
            .kind(),
        ErrorKind::DuplicateKey
    );
}

#[test]
fn unknown_length_maps_get_definite_shortest_heads() {
    #[derive(Serialize)]
    struct Inner {
        x: u8,
    }
    #[derive(Serialize)]
    struct Outer {
        a: u8,
        #[serde(flatten)]
        inner: Inner,
        #[serde(flatten)]
        extra: BTreeMap<String, u8>,
    }
    let extra: BTreeMap<String, u8> = (0..30).map(|i| (format!("k{i:02}"), i)).collect();
    let v = Outer {
        a: 1,
        inner: Inner { x: 2 },
        extra,
    };
    let out = EncodeOptions::deterministic()
        .self_described(false)
        .to_vec(&v)
        .unwrap();
    assert_eq!(&out[..2], &[0xb8, 32]); // 32 pairs, definite, shortest head
    let back: serde_json::Value = conneg_cbor::from_slice(&out).unwrap();
    assert_eq!(back, serde_json::to_value(&v).unwrap());
    // Small unknown-length map: one-byte head.
    let small = Outer {
        a: 1,
        inner: Inner { x: 2 },
        extra: BTreeMap::new(),
    };
    let out = EncodeOptions::fast()
        .self_described(false)
        .to_vec(&small)
        .unwrap();
    assert_eq!(hex(&out), "a24161014178 02".replace(' ', ""));
    // Unknown-length sequences too.
    struct Seq(usize);
    impl Serialize for Seq {
        fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
            s.collect_seq((0..self.0).filter(|_| true))
        }
    }
    assert_eq!(bare(&Seq(2)), "820000".replacen("0000", "0001", 1));
    let out = bare(&Seq(30));
    assert!(out.starts_with("981e00"), "{out}");
}

#[test]
fn value_keeps_int_versus_float() {
    assert_eq!(bare(&json!(1)), "01");
    assert_eq!(bare(&json!(1.0)), "f93c00");
    assert_eq!(bare(&json!(-1)), "20");
    assert_eq!(bare(&json!(u64::MAX)), "1bffffffffffffffff");
    assert_eq!(
        bare(&json!([1, 1.5, "x", null, true])),
        "850 1f93e004178f6f5".replace(' ', "")
    );
}

#[test]
fn nested_maps_sort_independently() {
    let v = json!({"b": {"d": 1, "c": 2}, "a": [{"z": 1, "y": 2}]});
    assert_eq!(
        bare(&v),
        "a241618 1a241790241 7a01 4162a2416302416401".replace(' ', "")
    );
}

#[test]
fn unknown_length_maps_inside_and_around_maps_that_need_sorting() {
    // Flattened maps have no declared length: their heads are fixed up after the entries are
    // written and sorted (a memmove when they hold 24 or more), which moves everything inside
    // them. Compare with the same data encoded through serde_json::Value (known lengths).
    #[derive(Serialize)]
    struct Leaf {
        zzz: u8,
        a: u8,
    }
    #[derive(Serialize)]
    struct Mid {
        yy: Leaf,
        #[serde(flatten)]
        extra: BTreeMap<String, Leaf>,
        b: Leaf,
    }
    #[derive(Serialize)]
    struct Top {
        zzzz: Mid,
        #[serde(flatten)]
        more: BTreeMap<String, Mid>,
        c: u8,
    }
    let mid = |n: usize| Mid {
        yy: Leaf { zzz: 1, a: 2 },
        extra: (0..n)
            .map(|i| {
                (
                    format!("{}k{i}", "x".repeat(i % 5)),
                    Leaf { zzz: i as u8, a: 0 },
                )
            })
            .collect(),
        b: Leaf { zzz: 3, a: 4 },
    };
    for (n_mid, n_top) in [(0, 0), (1, 2), (30, 3), (3, 30), (40, 40)] {
        let top = Top {
            zzzz: mid(n_mid),
            more: (0..n_top)
                .map(|i| (format!("m{i:03}"), mid(i % 7)))
                .collect(),
            c: 9,
        };
        let value = serde_json::to_value(&top).unwrap();
        assert_eq!(bare(&top), bare(&value), "{n_mid} {n_top}");
    }
}

#[test]
fn nested_out_of_order_maps_deeply() {
    let mut v = json!(1);
    for i in 0..300 {
        v = json!({"long-key-first": v, "k": i});
    }
    let out = bare(&v);
    let back: serde_json::Value = conneg_cbor::from_slice(&hex_decode(&out)).unwrap();
    assert_eq!(back, v);
    assert!(out.starts_with("a2416b"), "{}", &out[..20]);
}

fn hex_decode(s: &str) -> Vec<u8> {
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
        .collect()
}

/// Unsorted maps nested in a map and in arrays of unknown length whose heads grow when they end
/// (24 or more elements): the deferred reorder must follow the bytes the head fix moved.
#[test]
fn unsorted_maps_under_growing_heads() {
    struct Unknown(Vec<serde_json::Value>);
    impl Serialize for Unknown {
        fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
            s.collect_seq(self.0.iter())
        }
    }
    struct UnknownMap(Vec<(String, serde_json::Value)>);
    impl Serialize for UnknownMap {
        fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
            use serde::ser::SerializeMap;
            let mut m = s.serialize_map(None)?;
            for (k, v) in &self.0 {
                m.serialize_entry(k, v)?;
            }
            m.end()
        }
    }
    let item =
        |i: usize| json!({"zzzz": i, "a": {"bbb": [1, {"cc": 1, "b": 2}], "c": i}, "yy": "x"});
    let items: Vec<_> = (0..30).map(item).collect();
    let want = conneg_cbor::to_vec(&serde_json::Value::Array(items.clone())).unwrap();
    assert_eq!(conneg_cbor::to_vec(&Unknown(items.clone())).unwrap(), want);
    // A map of unknown length with 30 entries, keys out of order, values unsorted maps.
    let entries: Vec<_> = (0..30)
        .rev()
        .map(|i| {
            (
                format!("k{i:02}"),
                json!({"long": Unknown(vec![item(i); 25]).0, "s": i}),
            )
        })
        .collect();
    let want_map: serde_json::Map<_, _> = entries.iter().cloned().collect();
    assert_eq!(
        conneg_cbor::to_vec(&UnknownMap(entries)).unwrap(),
        conneg_cbor::to_vec(&serde_json::Value::Object(want_map)).unwrap()
    );
}
