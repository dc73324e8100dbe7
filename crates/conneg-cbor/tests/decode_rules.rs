//! One test per decoding rule of the profile.

use conneg_cbor::{DecodeOptions, ErrorKind, UnknownFields};
use serde::Deserialize;
use serde::de::IgnoredAny;
use serde_json::{Value, json};
use std::collections::{BTreeMap, HashMap};

mod common;
use common::unhex;

fn value(h: &str) -> Value {
    conneg_cbor::from_slice(&unhex(h)).unwrap_or_else(|e| panic!("{h}: {e:?}"))
}

fn kind<'a, T: Deserialize<'a>>(b: &'a [u8]) -> ErrorKind {
    match conneg_cbor::from_slice::<T>(b) {
        Ok(_) => panic!("accepted {b:02x?}"),
        Err(e) => e.kind(),
    }
}

/// The error kind for a Value decode and for a skip (IgnoredAny), which must agree.
fn both(h: &str) -> ErrorKind {
    let b = unhex(h);
    let k = kind::<Value>(&b);
    assert_eq!(kind::<IgnoredAny>(&b), k, "scan disagrees on {h}");
    k
}

#[test]
fn prefix_is_optional_and_55799_is_stripped_anywhere() {
    assert_eq!(value("d9d9f7 01"), json!(1));
    assert_eq!(value("01"), json!(1));
    assert_eq!(
        value("d9d9f7 d9d9f7 82 d9d9f7 01 a1 d9d9f7 4161 d9d9f7 02"),
        json!([1, {"a": 2}])
    );
}

#[test]
fn duplicate_keys_into_value_map_and_struct() {
    let dup = unhex("a2 4161 01 4161 02");
    assert_eq!(kind::<Value>(&dup), ErrorKind::DuplicateKey);
    assert_eq!(kind::<HashMap<String, u8>>(&dup), ErrorKind::DuplicateKey);
    assert_eq!(kind::<BTreeMap<String, u8>>(&dup), ErrorKind::DuplicateKey);
    assert_eq!(kind::<IgnoredAny>(&dup), ErrorKind::DuplicateKey);
    #[derive(Deserialize, Debug)]
    #[allow(dead_code)]
    struct S {
        a: u8,
    }
    assert_eq!(kind::<S>(&dup), ErrorKind::DuplicateKey);
    let e = conneg_cbor::from_slice::<S>(&dup).unwrap_err();
    assert_eq!(e.to_string(), r#"duplicate map key "a""#);
    // Keys that would be ignored are still checked.
    let dup_unknown = unhex("a3 4161 01 4162 01 4162 02");
    let lax = DecodeOptions::new().unknown_fields(UnknownFields::Ignore);
    assert_eq!(
        lax.from_slice::<S>(&dup_unknown).unwrap_err().kind(),
        ErrorKind::DuplicateKey
    );
    assert_eq!(
        lax.from_slice_with_warnings::<S>(&dup_unknown)
            .unwrap_err()
            .kind(),
        ErrorKind::DuplicateKey
    );
}

#[test]
fn byte_and_text_keys_with_same_bytes_are_duplicates() {
    assert_eq!(both("a2 4161 01 6161 02"), ErrorKind::DuplicateKey);
    // Indefinite-length keys are compared after joining their chunks.
    assert_eq!(
        both("a2 426162 01 7f 6161 6162 ff 02"),
        ErrorKind::DuplicateKey
    );
    assert_eq!(
        value("a2 426162 01 7f 6161 6163 ff 02"),
        json!({"ab": 1, "ac": 2})
    );
    // Tagged keys too.
    assert_eq!(both("a2 4161 01 d818 6161 02"), ErrorKind::DuplicateKey);
}

#[test]
fn duplicate_keys_in_large_maps() {
    let mut b = vec![0xb8, 40];
    for i in 0..40u8 {
        b.extend_from_slice(&[0x42, b'k', b'0' + (i % 39), 0x01]);
    }
    // Key 39 repeats key 0 ("ka").
    let k = kind::<Value>(&b);
    assert_eq!(k, ErrorKind::DuplicateKey);
    assert_eq!(kind::<IgnoredAny>(&b), ErrorKind::DuplicateKey);
    let mut ok = vec![0xb8, 40];
    for i in 0..40u8 {
        ok.extend_from_slice(&[0x42, b'k', b'0' + i, 0x01]);
    }
    let v: Value = conneg_cbor::from_slice(&ok).unwrap();
    assert_eq!(v.as_object().unwrap().len(), 40);
}

/// A map of `keys` (each a byte string key with a one-byte value), in a definite or an
/// indefinite-length map, the keys themselves definite or split into chunks.
fn map_of(keys: &[Vec<u8>], indefinite_map: bool, chunked_keys: bool) -> Vec<u8> {
    let mut b = if indefinite_map {
        vec![0xbf]
    } else {
        vec![0xb9, (keys.len() >> 8) as u8, keys.len() as u8]
    };
    for k in keys {
        if chunked_keys {
            b.push(0x5f);
            for c in k.chunks(3) {
                b.push(0x40 | c.len() as u8);
                b.extend_from_slice(c);
            }
            b.push(0xff);
        } else {
            b.push(0x58);
            b.push(k.len() as u8);
            b.extend_from_slice(k);
        }
        b.push(0x01);
    }
    if indefinite_map {
        b.push(0xff);
    }
    b
}

#[test]
fn duplicate_keys_found_at_every_position_in_small_and_large_maps() {
    // Keys from 0 to 11 bytes with long shared prefixes (equal fingerprints for different keys of
    // 8 bytes or more), maps on both sides of the switch from the linear check to the hashed one
    // (32 keys), each key repeated at a later position; the last key ends the input, so the
    // fingerprint of a short key cannot read eight bytes there.
    let key = |i: usize| {
        let mut k = b"prefix00".to_vec();
        k.truncate(i % 9);
        k.extend_from_slice(format!("{i}").as_bytes());
        k
    };
    for n in [1usize, 2, 7, 31, 32, 33, 64, 70] {
        let keys: Vec<Vec<u8>> = (0..n).map(key).collect();
        for (indefinite, chunked) in [(false, false), (true, false), (false, true)] {
            let ok = map_of(&keys, indefinite, chunked);
            let v: Value = conneg_cbor::from_slice(&ok).unwrap();
            assert_eq!(v.as_object().unwrap().len(), n);
            conneg_cbor::from_slice::<IgnoredAny>(&ok).unwrap();
            for i in 0..n {
                for j in [i + 1, n] {
                    let mut dup = keys.clone();
                    dup.insert(j, keys[i].clone());
                    let b = map_of(&dup, indefinite, chunked);
                    let what = format!("n={n} key {i} again at {j}, {indefinite} {chunked}");
                    assert_eq!(kind::<Value>(&b), ErrorKind::DuplicateKey, "{what}");
                    assert_eq!(kind::<IgnoredAny>(&b), ErrorKind::DuplicateKey, "{what}");
                    assert_eq!(
                        kind::<HashMap<String, u8>>(&b),
                        ErrorKind::DuplicateKey,
                        "{what}"
                    );
                }
            }
        }
    }
}

#[test]
fn text_in_and_around_ascii_stretches() {
    // ASCII keys and values (validated as one stretch), non-ASCII text, a 27-byte string, a
    // nested map (which breaks the stretch), byte strings after it: every string comes out as
    // written.
    let long = "a".repeat(27);
    let v = value(&format!(
        "a6 4161 4162  4263 64 62c3a9  4178 781b {}  4164 a1 4165 43e6b0b4  4166 627a7a \
         4167 4568656c6c6f",
        "61".repeat(27)
    ));
    assert_eq!(
        v,
        json!({"a": "b", "cd": "é", "x": long, "d": {"e": "水"}, "f": "zz", "g": "hello"})
    );
    // Invalid UTF-8 right after ASCII strings of the same stretch is still refused, as a key, as
    // a text value and as a byte string read as text.
    assert_eq!(both("a2 4161 4162 62c328 01"), ErrorKind::InvalidUtf8);
    assert_eq!(both("a2 4161 4162 4163 62c328"), ErrorKind::InvalidUtf8);
    let b = unhex("a2 4161 4162 4163 42c328");
    assert_eq!(kind::<HashMap<String, String>>(&b), ErrorKind::InvalidUtf8);
    // A string that starts in a stretch and ends past its end (the stretch stops at a non-ASCII
    // byte inside the string).
    assert_eq!(value("a1 4161 66 616263c3a964"), json!({"a": "abcéd"}));
}

#[test]
fn invalid_utf8_text_is_an_error() {
    assert_eq!(both("62 c328"), ErrorKind::InvalidUtf8);
    assert_eq!(both("7f 61c3 6128 ff"), ErrorKind::InvalidUtf8); // each chunk checked alone
    assert_eq!(both("a1 62c328 01"), ErrorKind::InvalidUtf8);
    assert_eq!(kind::<String>(&unhex("62 c328")), ErrorKind::InvalidUtf8);
    // A byte-string key that is not UTF-8 cannot be a Value or String key.
    let e = conneg_cbor::from_slice::<Value>(&unhex("a1 42c328 01")).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidUtf8, "{e}");
    assert_eq!(
        kind::<HashMap<String, u8>>(&unhex("a1 42c328 01")),
        ErrorKind::InvalidUtf8
    );
}

#[test]
fn byte_strings_are_accepted_as_text() {
    assert_eq!(value("4161"), json!("a"));
    let s: String = conneg_cbor::from_slice(&unhex("43 e6b0b4")).unwrap();
    assert_eq!(s, "水");
    let s: &str = conneg_cbor::from_slice(b"\x43abc").unwrap(); // borrowed
    assert_eq!(s, "abc");
    // A byte string that is not UTF-8 where text is needed: a clear error.
    let e = conneg_cbor::from_slice::<String>(&unhex("42 c328")).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidUtf8);
    assert!(e.to_string().contains("byte string"), "{e}");
    let e = conneg_cbor::from_slice::<Value>(&unhex("42 c328")).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidUtf8);
}

#[derive(PartialEq, Eq, Hash, Debug)]
struct RawBytes(Vec<u8>);
impl<'de> Deserialize<'de> for RawBytes {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl serde::de::Visitor<'_> for V {
            type Value = RawBytes;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("bytes")
            }
            fn visit_bytes<E>(self, v: &[u8]) -> Result<RawBytes, E> {
                Ok(RawBytes(v.to_vec()))
            }
        }
        d.deserialize_bytes(V)
    }
}

#[test]
fn tags_21_22_23_give_text_forms_but_raw_bytes() {
    assert_eq!(value("d5 42 fbff"), json!("-_8"));
    assert_eq!(value("d6 4568656c6c6f"), json!("aGVsbG8="));
    assert_eq!(value("d7 4401020304"), json!("01020304"));
    // The tag applies to byte strings nested inside it, not to text strings.
    assert_eq!(value("d7 82 4101 6161"), json!(["01", "a"]));
    let b: RawBytes = conneg_cbor::from_slice(&unhex("d6 4568656c6c6f")).unwrap();
    assert_eq!(b.0, b"hello");
    let b: RawBytes = conneg_cbor::from_slice(&unhex("5f 4168 4169 ff")).unwrap();
    assert_eq!(b.0, b"hi");
}

#[test]
fn integers_must_fit_i64() {
    assert_eq!(value("1b7fffffffffffffff"), json!(i64::MAX));
    assert_eq!(value("3b7fffffffffffffff"), json!(i64::MIN));
    assert_eq!(both("1b8000000000000000"), ErrorKind::IntegerOverflow);
    assert_eq!(both("3b8000000000000000"), ErrorKind::IntegerOverflow);
    assert_eq!(
        kind::<u64>(&unhex("1bffffffffffffffff")),
        ErrorKind::IntegerOverflow
    );
    assert_eq!(
        kind::<f64>(&unhex("1bffffffffffffffff")),
        ErrorKind::IntegerOverflow
    );
    let small: u8 = conneg_cbor::from_slice(&[0x18, 200]).unwrap();
    assert_eq!(small, 200);
    assert_eq!(kind::<u8>(&[0x19, 1, 0]), ErrorKind::Message);
}

#[test]
fn floats_any_width_but_not_nan_or_infinity() {
    assert_eq!(value("f93e00"), json!(1.5));
    assert!(value("f94000").is_f64()); // 2.0 stays a float
    assert_eq!(value("fa47c35000"), json!(100000.0));
    assert_eq!(value("fb3ff199999999999a"), json!(1.1));
    for h in [
        "f97c00",
        "f97e00",
        "fa7fc00000",
        "fbfff0000000000000",
        "82 01 f9fc00",
    ] {
        assert_eq!(both(h), ErrorKind::UnsupportedValue, "{h}");
    }
}

#[test]
fn bignums_are_errors_anywhere() {
    assert_eq!(both("c2 4101"), ErrorKind::UnsupportedValue);
    assert_eq!(both("81 c3 4101"), ErrorKind::UnsupportedValue);
    #[derive(Deserialize, Debug)]
    #[allow(dead_code)]
    struct S {
        a: u8,
    }
    let b = unhex("a2 4161 01 4178 81 c2 4101");
    let lax = DecodeOptions::new().unknown_fields(UnknownFields::Ignore);
    assert_eq!(
        lax.from_slice::<S>(&b).unwrap_err().kind(),
        ErrorKind::UnsupportedValue
    );
}

#[test]
fn only_false_true_null_simple_values() {
    assert_eq!(value("83 f4 f5 f6"), json!([false, true, null]));
    for h in ["f7", "f0", "e0", "f3", "f820", "f8ff"] {
        assert_eq!(both(h), ErrorKind::UnsupportedValue, "{h}");
    }
    for h in ["f818", "f81f", "f800"] {
        assert_eq!(both(h), ErrorKind::Syntax, "{h}");
    }
    assert_eq!(kind::<Option<u8>>(&[0xf7]), ErrorKind::UnsupportedValue);
}

#[test]
fn time_tags() {
    assert_eq!(value("c1 01"), json!("1970-01-01T00:00:01Z"));
    assert_eq!(
        value("c1 fb41d452d9ec200000"),
        json!("2013-03-21T20:04:00.5Z")
    );
    assert_eq!(
        value("c0 74323031332d30332d32315432303a30343a30305a"),
        json!("2013-03-21T20:04:00Z")
    );
    // Kubernetes: "cbor: tag number 0 must be followed by text string, got byte string", although
    // a byte string is accepted as text everywhere else (also when indefinite-length).
    assert_eq!(both("c0 4161"), ErrorKind::UnsupportedValue);
    assert_eq!(both("c0 5f4161ff"), ErrorKind::UnsupportedValue);
    assert_eq!(both("a1 4161 c0 4161"), ErrorKind::UnsupportedValue);
    assert!(
        conneg_cbor::from_slice::<String>(&unhex("c0 4161"))
            .unwrap_err()
            .to_string()
            .contains("tag number 0 must be followed by text string, got byte string")
    );
    assert_eq!(value("c0 7f6161ff"), json!("a"));
    let s: String = conneg_cbor::from_slice(&unhex("c1 01")).unwrap();
    assert_eq!(s, "1970-01-01T00:00:01Z");
    assert_eq!(both("c0 01"), ErrorKind::UnsupportedValue);
    assert_eq!(both("c1 4161"), ErrorKind::UnsupportedValue);
    assert_eq!(both("c1 f97c00"), ErrorKind::UnsupportedValue);
    assert_eq!(both("c1 1b0000003afff44180"), ErrorKind::UnsupportedValue); // year 10000
    // The content must follow the tag directly (found by proptest: decoder and scanner agreed
    // only after this was made consistent).
    assert_eq!(both("c1 c4 00"), ErrorKind::UnsupportedValue);
    assert_eq!(both("c0 d9d9f7 4161"), ErrorKind::UnsupportedValue);
}

#[test]
fn unknown_tags_are_skipped() {
    assert_eq!(value("c4 82 21 196ab3"), json!([-2, 27315]));
    assert_eq!(value("d820 4161"), json!("a"));
    assert_eq!(value("da00010000 d9ffff 01"), json!(1));
    let n: u8 = conneg_cbor::from_slice(&unhex("c6 05")).unwrap();
    assert_eq!(n, 5);
}

#[test]
fn map_keys_must_be_strings() {
    assert_eq!(both("a1 01 02"), ErrorKind::NonStringKey);
    assert_eq!(both("a1 80 02"), ErrorKind::NonStringKey);
    assert_eq!(both("a1 f6 02"), ErrorKind::NonStringKey);
    assert_eq!(
        kind::<HashMap<String, u8>>(&unhex("a1 01 02")),
        ErrorKind::NonStringKey
    );
}

#[test]
fn indefinite_lengths_are_accepted() {
    assert_eq!(
        value("9f 01 9f ff bf 4161 02 ff ff"),
        json!([1, [], {"a": 2}])
    );
    assert_eq!(value("7f 6161 6162 ff"), json!("ab"));
    assert_eq!(value("5f ff"), json!(""));
    let v: Vec<u8> = conneg_cbor::from_slice(&unhex("9f 01 02 ff")).unwrap();
    assert_eq!(v, [1, 2]);
}

#[test]
fn trailing_data_empty_and_truncated_input() {
    assert_eq!(both("01 02"), ErrorKind::TrailingData);
    let e = conneg_cbor::from_slice::<Value>(&[1, 2]).unwrap_err();
    assert_eq!(e.offset(), Some(1));
    assert_eq!(kind::<Value>(&[]), ErrorKind::Eof);
    let e = conneg_cbor::from_slice::<Value>(&unhex("83 01 02")).unwrap_err();
    assert!(e.is_eof());
    assert_eq!(both("a1 4161"), ErrorKind::Eof);
}

#[test]
fn depth_limit_counts_arrays_maps_and_tags() {
    let opts = DecodeOptions::new().max_depth(3);
    assert!(opts.from_slice::<Value>(&unhex("81 81 81 01")).is_ok());
    assert!(opts.from_slice::<Value>(&unhex("81 a1 4161 81 01")).is_ok());
    for h in [
        "81 81 81 81 01",
        "81 81 c6 81 01",
        "81 a1 4161 a1 4161 81 01",
    ] {
        let b = unhex(h);
        assert_eq!(
            opts.from_slice::<Value>(&b).unwrap_err().kind(),
            ErrorKind::DepthLimit,
            "{h}"
        );
        assert_eq!(
            opts.from_slice::<IgnoredAny>(&b).unwrap_err().kind(),
            ErrorKind::DepthLimit,
            "{h}"
        );
    }
}

#[test]
fn length_limits() {
    let opts = DecodeOptions::new().max_array_len(2).max_map_pairs(1);
    assert!(opts.from_slice::<Value>(&unhex("82 01 02")).is_ok());
    for h in [
        "83 01 02 03",
        "9f 01 02 03 ff",
        "a2 4161 01 4162 02",
        "bf 4161 01 4162 02 ff",
    ] {
        let b = unhex(h);
        assert_eq!(
            opts.from_slice::<Value>(&b).unwrap_err().kind(),
            ErrorKind::LengthLimit,
            "{h}"
        );
        assert_eq!(
            opts.from_slice::<IgnoredAny>(&b).unwrap_err().kind(),
            ErrorKind::LengthLimit,
            "{h}"
        );
    }
    // Kubernetes' defaults.
    assert_eq!(both("9b ffffffffffffffff"), ErrorKind::LengthLimit);
    assert_eq!(both("ba 00200001"), ErrorKind::LengthLimit);
}

#[test]
fn declared_lengths_cannot_force_allocation() {
    // Would need more bytes than the input has: Eof, not an allocation.
    for h in [
        "9a 7fffffff 01",
        "5a ffffffff 00",
        "7b 7fffffffffffffff 00",
        "ba 001fffff 4161 01",
    ] {
        assert_eq!(both(h), ErrorKind::Eof, "{h}");
        let b = unhex(h);
        assert!(conneg_cbor::from_slice::<Vec<u8>>(&b).is_err());
        assert!(conneg_cbor::from_slice::<String>(&b).is_err());
        assert!(conneg_cbor::from_slice::<HashMap<String, u8>>(&b).is_err());
    }
}

#[test]
fn borrowed_strings_from_definite_items() {
    #[derive(Deserialize)]
    struct B<'a> {
        #[serde(borrow)]
        name: &'a str,
    }
    let b = unhex("a1 446e616d65 43616263");
    let v: B<'_> = conneg_cbor::from_slice(&b).unwrap();
    assert_eq!(v.name, "abc");
}

/// A struct-like target whose fields are given at run time: it collects the keys it is handed.
struct Fields(&'static [&'static str]);

impl<'de> serde::de::DeserializeSeed<'de> for Fields {
    type Value = Vec<String>;
    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<Vec<String>, D::Error> {
        struct V;
        impl<'de> serde::de::Visitor<'de> for V {
            type Value = Vec<String>;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a map")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut m: A,
            ) -> Result<Vec<String>, A::Error> {
                let mut keys = Vec::new();
                while let Some(k) = m.next_key::<String>()? {
                    m.next_value::<IgnoredAny>()?;
                    keys.push(k);
                }
                Ok(keys)
            }
        }
        d.deserialize_struct("Fields", self.0, V)
    }
}

/// Decodes `b` into a struct with the fields `fields`.
fn struct_keys(
    b: &[u8],
    fields: &'static [&'static str],
    opts: DecodeOptions,
) -> Result<Vec<String>, conneg_cbor::Error> {
    use serde::de::DeserializeSeed;
    let mut de = conneg_cbor::Deserializer::with_options(b, opts);
    let keys = Fields(fields).deserialize(&mut de)?;
    de.end()?;
    Ok(keys)
}

/// `key` as a map key: a byte or text string, definite (shortest head) or in chunks of 7 bytes.
fn key_bytes(key: &[u8], text: bool, chunked: bool) -> Vec<u8> {
    let major = if text { 0x60 } else { 0x40 };
    let head = |b: &mut Vec<u8>, n: usize| match n {
        0..=23 => b.push(major | n as u8),
        24..=255 => b.extend_from_slice(&[major | 24, n as u8]),
        _ => b.extend_from_slice(&[major | 25, (n >> 8) as u8, n as u8]),
    };
    let mut b = Vec::new();
    if chunked {
        b.push(major | 31);
        for c in key.chunks(7) {
            head(&mut b, c.len());
            b.extend_from_slice(c);
        }
        b.push(0xff);
    } else {
        head(&mut b, key.len());
        b.extend_from_slice(key);
    }
    b
}

#[test]
fn keys_of_every_head_size_in_maps_and_structs() {
    // The decoder takes a fast path for keys of definite-length maps that are definite strings
    // with a one- or two-byte head (shorter than 256 bytes), known fields of a struct among its
    // first 64 fields or new keys of a map, and the general path for everything else: every
    // combination must give the same keys and find every duplicate.
    let lens = [0usize, 1, 3, 7, 8, 9, 16, 23, 24, 25, 100, 255, 256, 300];
    let names: Vec<String> = lens.iter().map(|&n| "k".repeat(n)).collect();
    let names: &'static [&'static str] = Box::leak(
        names
            .iter()
            .map(|s| &*Box::leak(s.clone().into_boxed_str()))
            .collect(),
    );
    // The same fields after 64 others: past the per-struct bit set.
    let late: Vec<&'static str> = (0..64)
        .map(|i| &*Box::leak(format!("pad{i}").into_boxed_str()))
        .chain(names.iter().copied())
        .collect();
    let late: &'static [&'static str] = Box::leak(late.into_boxed_slice());
    let lax = DecodeOptions::default().unknown_fields(UnknownFields::Ignore);
    let encode = |keys: &[&str], text: &dyn Fn(usize) -> bool, indefinite: bool, chunked: bool| {
        let mut b = if indefinite {
            vec![0xbf]
        } else {
            vec![0xa0 | keys.len() as u8]
        };
        for (i, k) in keys.iter().enumerate() {
            b.extend(key_bytes(k.as_bytes(), text(i), chunked));
            b.push(0x01);
        }
        if indefinite {
            b.push(0xff);
        }
        b
    };
    let texts: [&dyn Fn(usize) -> bool; 3] = [&|_| false, &|_| true, &|i| i % 2 == 1];
    for (t, text) in texts.iter().enumerate() {
        for indefinite in [false, true] {
            for chunked in [false, true] {
                let what = format!("text {t}, indefinite {indefinite}, chunked {chunked}");
                let want: Vec<String> = names.iter().map(|s| s.to_string()).collect();
                let b = encode(names, text, indefinite, chunked);
                let v: Value = conneg_cbor::from_slice(&b).unwrap();
                let got: Vec<String> = v.as_object().unwrap().keys().cloned().collect();
                let mut sorted = want.clone();
                sorted.sort();
                assert_eq!(got, sorted, "{what}");
                for fields in [names, late] {
                    let keys = struct_keys(&b, fields, DecodeOptions::default());
                    assert_eq!(keys.unwrap(), want, "{what}");
                }
                // An unknown key at every position: an error, or skipped when ignored.
                for i in 0..=names.len() {
                    let mut keys = names.to_vec();
                    keys.insert(i, "kkkkx");
                    let b = encode(&keys, text, indefinite, chunked);
                    for fields in [names, late] {
                        let e = struct_keys(&b, fields, DecodeOptions::default()).unwrap_err();
                        assert_eq!(e.kind(), ErrorKind::UnknownField, "{what} {i}");
                        assert_eq!(struct_keys(&b, fields, lax).unwrap(), want, "{what} {i}");
                    }
                }
                // Each key again later (as the other string type when `text` alternates).
                for i in 0..names.len() {
                    for j in [i + 1, names.len()] {
                        let mut keys = names.to_vec();
                        keys.insert(j, names[i]);
                        let b = encode(&keys, text, indefinite, chunked);
                        let what = format!("{what}: key {i} again at {j}");
                        assert_eq!(kind::<Value>(&b), ErrorKind::DuplicateKey, "{what}");
                        assert_eq!(kind::<IgnoredAny>(&b), ErrorKind::DuplicateKey, "{what}");
                        for fields in [names, late] {
                            for opts in [DecodeOptions::default(), lax] {
                                let e = struct_keys(&b, fields, opts).unwrap_err();
                                assert_eq!(e.kind(), ErrorKind::DuplicateKey, "{what}");
                            }
                        }
                    }
                }
            }
        }
    }
    // A byte-string key that is not UTF-8: an error in a struct and in a `Value`, bytes for a
    // target that takes bytes; as text, an error everywhere.
    let b = unhex("a2 4161 01 42ff61 01");
    assert_eq!(kind::<Value>(&b), ErrorKind::InvalidUtf8);
    let fields: &'static [&'static str] = &["a"];
    let e = struct_keys(&b, fields, DecodeOptions::default()).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::UnknownField);
    assert_eq!(struct_keys(&b, fields, lax).unwrap(), ["a"]);
    let m: HashMap<RawBytes, u8> = conneg_cbor::from_slice(&unhex("a1 42ff61 01")).unwrap();
    assert!(m.contains_key(&RawBytes(vec![0xff, b'a'])));
    assert_eq!(both("a2 4161 01 62ff61 01"), ErrorKind::InvalidUtf8);
}
