//! RawExtension: verbatim CBOR, transcoded JSON, capture on decode, null handling.

use conneg_cbor::{EncodeOptions, ErrorKind, RawExtension, RawFormat};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

mod common;
use common::hex;

#[derive(Serialize, Deserialize, Debug, PartialEq)]
struct Event {
    #[serde(rename = "type")]
    kind: String,
    object: RawExtension,
}

#[test]
fn cbor_raw_is_written_verbatim_into_cbor() {
    // Deliberately not in deterministic order and with text strings: verbatim means verbatim.
    let raw = b"\xd9\xd9\xf7\xa2\x64kind\x61F\x61a\x01".to_vec();
    let ev = Event {
        kind: "ADDED".into(),
        object: RawExtension::from_cbor(raw.clone()),
    };
    let out = EncodeOptions::default()
        .self_described(false)
        .to_vec(&ev)
        .unwrap();
    assert!(hex(&out).contains(&hex(&raw)), "{}", hex(&out));
    let back: Event = conneg_cbor::from_slice(&out).unwrap();
    assert_eq!(back.object.as_bytes(), raw);
    assert_eq!(back.object.format(), RawFormat::Cbor);
    assert_eq!(back, ev);
}

#[test]
fn prefix_added_when_missing_and_not_doubled_at_top_level() {
    let r = RawExtension::from_cbor(vec![0x01]);
    assert_eq!(r.as_bytes(), [0xd9, 0xd9, 0xf7, 0x01]);
    assert_eq!(r.media_type(), "application/cbor");
    assert_eq!(conneg_cbor::to_vec(&r).unwrap(), [0xd9, 0xd9, 0xf7, 0x01]);
    // Captured items get the prefix too.
    let ev: Event = conneg_cbor::from_slice(b"\xa2\x44type\x41A\x46object\x82\x01\x02").unwrap();
    assert_eq!(ev.object.as_bytes(), b"\xd9\xd9\xf7\x82\x01\x02");
}

#[test]
fn json_raw_is_transcoded_into_cbor() {
    let ev = Event {
        kind: "ADDED".into(),
        object: RawExtension::from_json(r#"{"kind":"Flunder","spec":{"n":1.0,"m":2}}"#),
    };
    let out = conneg_cbor::to_vec(&ev).unwrap();
    let v: Value = conneg_cbor::from_slice(&out).unwrap();
    assert_eq!(
        v,
        json!({"type": "ADDED", "object": {"kind": "Flunder", "spec": {"n": 1.0, "m": 2}}})
    );
    assert!(v["object"]["spec"]["n"].is_f64());
    // Deterministic: same bytes as encoding the equivalent value.
    assert_eq!(out, conneg_cbor::to_vec(&v).unwrap());
}

#[test]
fn raw_into_json_output() {
    let cbor_ev = Event {
        kind: "MODIFIED".into(),
        object: RawExtension::cbor_of(&json!({"a": [1, 1.5]})).unwrap(),
    };
    assert_eq!(
        serde_json::to_string(&cbor_ev).unwrap(),
        r#"{"type":"MODIFIED","object":{"a":[1,1.5]}}"#
    );
    let json_ev = Event {
        kind: "MODIFIED".into(),
        object: RawExtension::from_json(r#"{ "b" : true }"#),
    };
    assert_eq!(
        serde_json::to_string(&json_ev).unwrap(),
        r#"{"type":"MODIFIED","object":{"b":true}}"#
    );
    // From JSON input, the value is captured as compact JSON.
    let back: Event = serde_json::from_str(r#"{"type":"X","object":{ "b" : [true] }}"#).unwrap();
    assert_eq!(back.object.format(), RawFormat::Json);
    assert_eq!(back.object.as_bytes(), br#"{"b":[true]}"#);
    assert_eq!(
        back.object.to_cbor().unwrap(),
        b"\xd9\xd9\xf7\xa1\x41b\x81\xf5"
    );
    let decoded: Value = back.object.decode().unwrap();
    assert_eq!(decoded, json!({"b": [true]}));
}

#[test]
fn null_and_empty() {
    let ev = Event {
        kind: "X".into(),
        object: RawExtension::default(),
    };
    assert!(ev.object.is_empty());
    let out = EncodeOptions::default()
        .self_described(false)
        .to_vec(&ev)
        .unwrap();
    assert_eq!(out, b"\xa2\x44type\x41X\x46object\xf6");
    let back: Event = conneg_cbor::from_slice(&out).unwrap();
    assert!(back.object.is_empty());
    let back: Event = serde_json::from_str(r#"{"type":"X","object":null}"#).unwrap();
    assert!(back.object.is_empty());
}

#[test]
fn invalid_raw_is_an_error_not_corrupt_output() {
    let bad = Event {
        kind: "X".into(),
        object: RawExtension::from_cbor(vec![0x82, 0x01]),
    };
    assert_eq!(
        conneg_cbor::to_vec(&bad).unwrap_err().kind(),
        ErrorKind::Eof
    );
    let two = Event {
        kind: "X".into(),
        object: RawExtension::from_cbor(vec![0x01, 0x02]),
    };
    assert_eq!(
        conneg_cbor::to_vec(&two).unwrap_err().kind(),
        ErrorKind::TrailingData
    );
    let bad_json = Event {
        kind: "X".into(),
        object: RawExtension::from_json("{"),
    };
    assert!(conneg_cbor::to_vec(&bad_json).is_err());
    assert!(serde_json::to_string(&bad_json).is_err());
    // A captured item is validated like everything else.
    let dup = b"\xa2\x44type\x41A\x46object\xa2\x41a\x01\x41a\x02";
    assert_eq!(
        conneg_cbor::from_slice::<Event>(dup).unwrap_err().kind(),
        ErrorKind::DuplicateKey
    );
}
