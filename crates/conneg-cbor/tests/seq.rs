//! RFC 8742 CBOR Sequences: encoding, incremental decoding across arbitrary chunk splits, and
//! error handling (skip a bad item, stop at an ill-formed one, report a truncated end).

use conneg_cbor::{EncodeOptions, ErrorKind, SeqDecoder, SeqEncoder};
use serde::Deserialize;
use serde_json::{Value, json};

fn events() -> Vec<Value> {
    vec![
        json!({"type": "ADDED", "object": {"kind": "Flunder", "metadata": {"name": "a"}}}),
        json!({"type": "MODIFIED", "object": {"kind": "Flunder", "spec": {"n": 1.5, "l": [1, 2, 3]}}}),
        json!(null),
        json!("x".repeat(300)),
        json!({"type": "DELETED", "object": {}}),
    ]
}

#[test]
fn encoder_writes_self_described_items_back_to_back() {
    let mut enc = SeqEncoder::new();
    enc.push(&1).unwrap();
    enc.push(&"a").unwrap();
    assert_eq!(enc.as_bytes(), b"\xd9\xd9\xf7\x01\xd9\xd9\xf7\x41a");
    assert_eq!(enc.len(), 9);
    let taken = enc.take();
    assert_eq!(taken.len(), 9);
    assert!(enc.is_empty());
    let mut bare = SeqEncoder::with_options(EncodeOptions::fast().self_described(false));
    bare.push(&[1, 2]).unwrap();
    assert!(bare.push(&f64::NAN).is_err());
    bare.push_raw(&[0x01]).unwrap();
    assert_eq!(
        bare.push_raw(&[0x01, 0x02]).unwrap_err().kind(),
        ErrorKind::TrailingData
    );
    assert_eq!(
        bare.push_raw(&[0x82, 0x01]).unwrap_err().kind(),
        ErrorKind::Eof
    );
    assert_eq!(bare.into_inner(), [0x82, 0x01, 0x02, 0x01]);
}

#[test]
fn items_survive_every_chunking() {
    let evs = events();
    let mut enc = SeqEncoder::new();
    let mut items = Vec::new();
    for e in &evs {
        let before = enc.len();
        enc.push(e).unwrap();
        items.push(enc.as_bytes()[before..].to_vec());
    }
    let stream = enc.into_inner();
    for chunk in [1, 2, 3, 7, 64, stream.len()] {
        // Raw items.
        let mut dec = SeqDecoder::new();
        let mut got = Vec::new();
        for c in stream.chunks(chunk) {
            dec.push(c);
            while let Some(item) = dec.next_item().unwrap() {
                got.push(item.to_vec());
            }
        }
        dec.finish().unwrap();
        assert_eq!(got, items, "chunk {chunk}");
        // Decoded values.
        let mut dec = SeqDecoder::new();
        let mut vals = Vec::new();
        for c in stream.chunks(chunk) {
            dec.push(c);
            while let Some(v) = dec.next::<Value>().unwrap() {
                vals.push(v);
            }
        }
        dec.finish().unwrap();
        assert_eq!(vals, evs, "chunk {chunk}");
        assert_eq!(dec.buffered(), 0);
    }
}

#[test]
fn every_split_point_of_two_items() {
    let mut enc = SeqEncoder::with_options(EncodeOptions::fast().self_described(false));
    enc.push(&json!({"a": [1, {"b": "c"}]})).unwrap();
    enc.push(&json!([true, null])).unwrap();
    let s = enc.into_inner();
    for i in 0..=s.len() {
        let mut dec = SeqDecoder::new();
        dec.push(&s[..i]);
        let mut n = 0;
        while dec.next::<Value>().unwrap().is_some() {
            n += 1;
        }
        dec.push(&s[i..]);
        while dec.next::<Value>().unwrap().is_some() {
            n += 1;
        }
        assert_eq!(n, 2, "split at {i}");
        dec.finish().unwrap();
    }
}

#[test]
fn truncated_end_is_an_error_at_finish() {
    let mut dec = SeqDecoder::new();
    dec.push(b"\x01\x82\x01");
    assert_eq!(dec.next::<Value>().unwrap(), Some(json!(1)));
    assert_eq!(dec.next::<Value>().unwrap(), None);
    assert_eq!(dec.next_item().unwrap(), None);
    let e = dec.finish().unwrap_err();
    assert!(e.is_eof());
    assert_eq!(e.offset(), Some(1));
    SeqDecoder::new().finish().unwrap();
}

#[test]
fn ill_formed_item_is_fatal() {
    let mut dec = SeqDecoder::new();
    dec.push(b"\x01\xff\x02");
    assert_eq!(dec.next_item().unwrap(), Some(&[1u8][..]));
    let e = dec.next_item().unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Syntax);
    assert_eq!(e.offset(), Some(1));
    // Every later call fails the same way, even with more input.
    dec.push(b"\x03");
    assert_eq!(dec.next::<Value>().unwrap_err().kind(), ErrorKind::Syntax);
    assert_eq!(dec.next_item().unwrap_err().kind(), ErrorKind::Syntax);
    assert_eq!(dec.finish().unwrap_err().kind(), ErrorKind::Syntax);
}

#[test]
fn bad_but_well_formed_items_are_skipped() {
    let mut dec = SeqDecoder::new();
    // A duplicate key, then NaN, then a good item.
    dec.push(b"\xa2\x41a\x01\x41a\x02\xf9\x7e\x00\x05");
    let e = dec.next_item().unwrap_err();
    assert_eq!(e.kind(), ErrorKind::DuplicateKey);
    let e = dec.next::<Value>().unwrap_err();
    assert_eq!(e.kind(), ErrorKind::UnsupportedValue);
    assert_eq!(e.offset(), Some(7));
    assert_eq!(dec.next::<Value>().unwrap(), Some(json!(5)));
    dec.finish().unwrap();

    // Items that do not fit the target type.
    #[derive(Deserialize, Debug, PartialEq)]
    struct Ev {
        r#type: String,
    }
    let mut enc = SeqEncoder::new();
    enc.push(&json!({"type": "ADDED"})).unwrap();
    enc.push(&json!({"type": 1})).unwrap();
    enc.push(&json!({"type": "DELETED", "extra": 1})).unwrap();
    enc.push(&json!({"type": "BOOKMARK"})).unwrap();
    let mut dec = SeqDecoder::new();
    dec.push(enc.as_bytes());
    assert_eq!(dec.next::<Ev>().unwrap().unwrap().r#type, "ADDED");
    assert_eq!(dec.next::<Ev>().unwrap_err().path(), ".type");
    assert_eq!(
        dec.next::<Ev>().unwrap_err().kind(),
        ErrorKind::UnknownField
    );
    assert_eq!(dec.next::<Ev>().unwrap().unwrap().r#type, "BOOKMARK");
    assert_eq!(dec.next::<Ev>().unwrap(), None);
    dec.finish().unwrap();
}

#[test]
fn a_bad_item_is_judged_only_once_complete() {
    // The duplicate key is visible before the item ends; the item must not be skipped (or the
    // stream broken) until all of it is there.
    let item = b"\xa3\x41a\x01\x41a\x02\x41b\x82\x01\x02";
    let mut dec = SeqDecoder::new();
    dec.push(&item[..8]);
    assert_eq!(dec.next::<Value>().unwrap(), None);
    dec.push(&item[8..]);
    assert_eq!(
        dec.next::<Value>().unwrap_err().kind(),
        ErrorKind::DuplicateKey
    );
    dec.push(b"\x07");
    assert_eq!(dec.next::<Value>().unwrap(), Some(json!(7)));
}

/// An item that arrives in many small chunks is walked on from where each chunk ended and
/// decoded once it is complete. (Re-examined from its start on every chunk, as this decoder
/// used to do, the ~1 MiB item below in 64-byte chunks would cost ~16,000 partial decodes
/// averaging half a megabyte each: hours in a debug build instead of well under a second.)
#[test]
fn a_big_item_in_small_chunks_is_decoded_once() {
    let big: serde_json::Map<String, Value> = (0..30_000)
        .map(|i| (format!("key-{i:08}"), json!(format!("value number {i}"))))
        .collect();
    let big = Value::Object(big);
    let mut enc = SeqEncoder::new();
    enc.push(&big).unwrap();
    enc.push(&json!({"after": true})).unwrap();
    let stream = enc.into_inner();
    assert!(stream.len() > 900_000, "{}", stream.len());

    let mut dec = SeqDecoder::new();
    let mut got = Vec::new();
    for c in stream.chunks(64) {
        dec.push(c);
        while let Some(v) = dec.next::<Value>().unwrap() {
            got.push(v);
        }
    }
    dec.finish().unwrap();
    assert_eq!(got, [big, json!({"after": true})]);

    // The same with indefinite lengths (array, map and string chunks), raw items, 7-byte chunks.
    let mut item = vec![0x9f];
    for i in 0..40_000u32 {
        item.extend_from_slice(&[
            0xbf, 0x61, b'k', 0x7f, 0x62, b'a', b'b', 0x61, b'c', 0xff, 0xff,
        ]);
        item.extend_from_slice(&[0x1a]);
        item.extend_from_slice(&i.to_be_bytes());
    }
    item.push(0xff);
    let mut dec = SeqDecoder::new();
    let mut items = Vec::new();
    for c in item.chunks(7) {
        dec.push(c);
        while let Some(i) = dec.next_item().unwrap() {
            items.push(i.to_vec());
        }
    }
    dec.finish().unwrap();
    assert_eq!(items, [item]);
}
