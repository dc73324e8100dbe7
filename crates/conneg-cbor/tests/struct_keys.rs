//! Struct field lookup: short keys and keys of 24 bytes or more (one-byte length heads), byte
//! and text string keys, keys in and out of deterministic order, unknown keys, keys that are not
//! UTF-8, and truncated keys.

use conneg_cbor::{DecodeOptions, ErrorKind, UnknownFields};
use serde::Deserialize;

#[derive(Deserialize, Debug, PartialEq, Default)]
#[serde(default)]
struct S {
    a: u8,
    abcd: u8,
    abcdefgh: u8,
    abcdefghijklmnop: u8,
    abcdefghijklmnopqrstuvw: u8,
    abcdefghijklmnopqrstuvwx: u8,
    abcdefghijklmnopqrstuvwxyz_0123456789: u8,
}

/// A map from (key, value) pairs, every key as a byte (`text: false`) or text string.
fn map(pairs: &[(&[u8], u8)], text: bool) -> Vec<u8> {
    let mut b = vec![0xa0 | pairs.len() as u8];
    for (k, v) in pairs {
        let major = if text { 0x60 } else { 0x40 };
        if k.len() < 24 {
            b.push(major | k.len() as u8);
        } else {
            b.extend_from_slice(&[major | 24, k.len() as u8]);
        }
        b.extend_from_slice(k);
        b.push(*v);
    }
    b
}

const ALL: [&[u8]; 7] = [
    b"a",
    b"abcd",
    b"abcdefgh",
    b"abcdefghijklmnop",
    b"abcdefghijklmnopqrstuvw",
    b"abcdefghijklmnopqrstuvwx",
    b"abcdefghijklmnopqrstuvwxyz_0123456789",
];

fn full() -> S {
    S {
        a: 1,
        abcd: 2,
        abcdefgh: 3,
        abcdefghijklmnop: 4,
        abcdefghijklmnopqrstuvw: 5,
        abcdefghijklmnopqrstuvwx: 6,
        abcdefghijklmnopqrstuvwxyz_0123456789: 7,
    }
}

#[test]
fn every_key_length_in_any_order() {
    for text in [false, true] {
        let mut pairs: Vec<(&[u8], u8)> = ALL.iter().zip(1..).map(|(k, v)| (*k, v)).collect();
        assert_eq!(
            conneg_cbor::from_slice::<S>(&map(&pairs, text)).unwrap(),
            full()
        );
        pairs.reverse();
        assert_eq!(
            conneg_cbor::from_slice::<S>(&map(&pairs, text)).unwrap(),
            full()
        );
        pairs.rotate_left(3);
        assert_eq!(
            conneg_cbor::from_slice::<S>(&map(&pairs, text)).unwrap(),
            full()
        );
        // Some fields absent.
        let some: Vec<(&[u8], u8)> = pairs.iter().copied().step_by(2).collect();
        let s = conneg_cbor::from_slice::<S>(&map(&some, text)).unwrap();
        assert_eq!(s.abcdefghijklmnopqrstuvwxyz_0123456789, 7);
        assert_eq!(s.abcdefghijklmnopqrstuvwx, 0);
    }
    // The deterministic encoder's own output.
    #[derive(serde::Serialize)]
    struct W {
        abcdefghijklmnopqrstuvwxyz_0123456789: u8,
        abcdefghijklmnopqrstuvwx: u8,
        a: u8,
    }
    let b = conneg_cbor::to_vec(&W {
        abcdefghijklmnopqrstuvwxyz_0123456789: 9,
        abcdefghijklmnopqrstuvwx: 8,
        a: 7,
    })
    .unwrap();
    let s = conneg_cbor::from_slice::<S>(&b).unwrap();
    assert_eq!(
        (
            s.a,
            s.abcdefghijklmnopqrstuvwx,
            s.abcdefghijklmnopqrstuvwxyz_0123456789
        ),
        (7, 8, 9)
    );
}

#[test]
fn near_misses_are_unknown_fields() {
    for k in [
        &b"abcdefghijklmnopqrstuvwX"[..],
        b"abcdefghijklmnopqrstuvwxyz_012345678_",
        b"Abcdefghijklmnopqrstuvwxyz_0123456789",
        b"abcdefghijklmnopqrstuvwxyz_0123456789_",
        b"abcdefghijklmnoP",
        b"abcdefgH",
        b"abcD",
        b"b",
        b"",
    ] {
        for text in [false, true] {
            let e = conneg_cbor::from_slice::<S>(&map(&[(b"a", 1), (k, 2)], text)).unwrap_err();
            assert_eq!(e.kind(), ErrorKind::UnknownField, "{k:?}");
            assert_eq!(
                e.to_string(),
                format!("unknown field {:?}", std::str::from_utf8(k).unwrap())
            );
        }
    }
}

#[test]
fn duplicates_of_long_and_short_keys() {
    for k in ALL {
        for text in [false, true] {
            let e = conneg_cbor::from_slice::<S>(&map(&[(k, 1), (b"abcd", 2), (k, 3)], text))
                .unwrap_err();
            if k == b"abcd" {
                assert_eq!(e.kind(), ErrorKind::DuplicateKey);
                continue;
            }
            assert_eq!(e.kind(), ErrorKind::DuplicateKey, "{k:?}");
            // Byte and text keys with the same bytes are the same key.
            let mut b = map(&[(k, 1), (k, 3)], false);
            let second = b.len() - k.len() - 1 - if k.len() < 24 { 1 } else { 2 };
            b[second] |= 0x20;
            let e = conneg_cbor::from_slice::<S>(&b).unwrap_err();
            assert_eq!(e.kind(), ErrorKind::DuplicateKey, "{k:?}");
        }
    }
}

#[test]
fn long_keys_that_are_not_utf8() {
    let bad: &[u8] = b"abcdefghijklmnopqrstuvwxyz_012345678\xff";
    // A byte string key may be anything: an unknown field (ignored, or an error naming it).
    let e = conneg_cbor::from_slice::<S>(&map(&[(bad, 1)], false)).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::UnknownField);
    assert!(e.to_string().starts_with("unknown field h'6162"), "{e}");
    let lax = DecodeOptions::new().unknown_fields(UnknownFields::Ignore);
    assert_eq!(
        lax.from_slice::<S>(&map(&[(bad, 1)], false)).unwrap(),
        S::default()
    );
    // A text string key must be UTF-8.
    let e = conneg_cbor::from_slice::<S>(&map(&[(bad, 1)], true)).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidUtf8);
    assert_eq!(e.offset(), Some(1));
}

#[test]
fn truncated_keys_are_eof() {
    let b = map(&[(ALL[6], 1)], false);
    for cut in 1..b.len() - 1 {
        let e = conneg_cbor::from_slice::<S>(&b[..cut]).unwrap_err();
        assert!(e.is_eof(), "{cut}: {e}");
    }
    for cut in [1usize, 2] {
        let e = conneg_cbor::from_slice::<S>(&[0xa1, 0x78, 0x05][..=cut]).unwrap_err();
        assert!(e.is_eof(), "{cut}: {e}");
    }
}
