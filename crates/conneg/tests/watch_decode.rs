//! The client-side decoder: events split across chunks at any byte, strict about a truncated
//! last event, fatal on ill-formed input.

use conneg::Codec;
use conneg::WatchEvent;
use conneg::client::{StreamFormat, WatchDecoder, WatchErrorKind};
use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
struct Obj {
    name: String,
    n: i64,
    tags: Vec<String>,
}

fn events() -> Vec<WatchEvent<Obj>> {
    let obj = |i: i64| Obj {
        name: format!("o{i}"),
        n: i * 1000,
        tags: vec!["a".into(); i as usize],
    };
    vec![
        WatchEvent::Added(obj(1)),
        WatchEvent::Modified(obj(2)),
        WatchEvent::Bookmark(obj(0)),
        WatchEvent::Deleted(obj(3)),
        WatchEvent::Error(conneg::Status::internal_error("x")),
    ]
}

fn wire(codec: &Codec) -> Vec<u8> {
    let mut out = Vec::new();
    for e in events() {
        e.encode(codec, &mut out).unwrap();
    }
    out
}

fn cases() -> [(Codec, StreamFormat); 2] {
    [
        (Codec::Cbor, StreamFormat::CborSeq),
        (Codec::Json, StreamFormat::Json),
    ]
}

fn drain(d: &mut WatchDecoder<Obj>, out: &mut Vec<WatchEvent<Obj>>) {
    while let Some(e) = d.next_event().unwrap() {
        out.push(e);
    }
}

#[test]
fn split_at_every_byte() {
    for (codec, format) in cases() {
        let wire = wire(&codec);
        for cut in 0..=wire.len() {
            let mut d = WatchDecoder::new(format);
            let mut got = Vec::new();
            d.push(&wire[..cut]);
            drain(&mut d, &mut got);
            d.push(&wire[cut..]);
            drain(&mut d, &mut got);
            d.finish().unwrap();
            assert_eq!(got, events(), "{codec} cut at {cut}");
        }
    }
}

#[test]
fn one_byte_at_a_time() {
    for (codec, format) in cases() {
        let mut d = WatchDecoder::new(format);
        let mut got = Vec::new();
        for b in wire(&codec) {
            d.push(&[b]);
            drain(&mut d, &mut got);
        }
        d.finish().unwrap();
        assert_eq!(got, events(), "{codec}");
        // At most JSON's trailing newline is left over.
        let left = if format == StreamFormat::Json { 1 } else { 0 };
        assert_eq!(d.buffered(), left, "{codec}");
    }
}

#[test]
fn a_truncated_last_event_fails_at_the_end() {
    for (codec, format) in cases() {
        let wire = wire(&codec);
        let last_start = {
            let mut all = Vec::new();
            for e in &events()[..4] {
                e.encode(&codec, &mut all).unwrap();
            }
            all.len()
        };
        // JSON: the trailing newline is whitespace; cutting it off still leaves a whole event.
        let end = if format == StreamFormat::Json {
            wire.len() - 1
        } else {
            wire.len()
        };
        for cut in last_start + 1..end {
            let mut d = WatchDecoder::<Obj>::new(format);
            d.push(&wire[..cut]);
            let mut got = Vec::new();
            drain(&mut d, &mut got);
            assert_eq!(got.len(), 4, "{codec} cut at {cut}");
            let err = d.finish().unwrap_err();
            assert_eq!(
                err.kind(),
                WatchErrorKind::Truncated,
                "{codec} cut at {cut}"
            );
        }
    }
}

#[test]
fn ill_formed_input_is_fatal() {
    // CBOR: a break byte where an item should start (RFC 8742 §2.8).
    let mut d = WatchDecoder::<Obj>::new(StreamFormat::CborSeq);
    let mut good = Vec::new();
    events()[0].encode(&Codec::Cbor, &mut good).unwrap();
    d.push(&good);
    d.push(&[0xff]);
    d.push(&good);
    assert!(d.next_event().unwrap().is_some());
    assert_eq!(d.next_event().unwrap_err().kind(), WatchErrorKind::Decode);
    assert!(d.next_event().is_err(), "stays failed");

    // CBOR: a duplicate key in the event map is a profile violation.
    let dup = [
        0xa2, 0x44, b't', b'y', b'p', b'e', 0x45, b'A', b'D', b'D', b'E', b'D', 0x44, b't', b'y',
        b'p', b'e', 0x45, b'A', b'D', b'D', b'E', b'D',
    ];
    let mut d = WatchDecoder::<Obj>::new(StreamFormat::CborSeq);
    d.push(&dup);
    assert!(d.next_event().is_err());

    // JSON: not JSON, an unknown type, a wrong object shape.
    for bad in [
        &b"{\"type\":\"ADDED\",\"object\":{]\n"[..],
        b"{\"type\":\"CREATED\",\"object\":{\"name\":\"a\",\"n\":1,\"tags\":[]}}\n",
        b"{\"type\":\"ADDED\",\"object\":{\"name\":1}}\n",
    ] {
        let mut d = WatchDecoder::<Obj>::new(StreamFormat::Json);
        d.push(bad);
        assert_eq!(
            d.next_event().unwrap_err().kind(),
            WatchErrorKind::Decode,
            "{}",
            String::from_utf8_lossy(bad)
        );
    }
}

#[test]
fn json_without_newlines_and_cbor_without_prefixes() {
    let mut d = WatchDecoder::<Obj>::new(StreamFormat::Json);
    d.push(br#"  {"object":{"name":"a","n":1,"tags":[],"extra":true},"type":"ADDED"}{"type":"DELETED","object":{"name":"a","n":1,"tags":[]}}  "#);
    let a = d.next_event().unwrap().unwrap();
    let b = d.next_event().unwrap().unwrap();
    assert!(matches!(a, WatchEvent::Added(_)) && matches!(b, WatchEvent::Deleted(_)));
    assert!(d.next_event().unwrap().is_none());
    d.finish().unwrap();

    // Text-string keys, no 55799 tags, object before type: all accepted.
    let item = [
        0xa2, 0x66, b'o', b'b', b'j', b'e', b'c', b't', 0xa3, 0x64, b'n', b'a', b'm', b'e', 0x61,
        b'a', 0x61, b'n', 0x01, 0x64, b't', b'a', b'g', b's', 0x80, 0x64, b't', b'y', b'p', b'e',
        0x68, b'M', b'O', b'D', b'I', b'F', b'I', b'E', b'D',
    ];
    let mut d = WatchDecoder::<Obj>::new(StreamFormat::CborSeq);
    d.push(&item);
    assert_eq!(
        d.next_event().unwrap(),
        Some(WatchEvent::Modified(Obj {
            name: "a".into(),
            n: 1,
            tags: vec![]
        }))
    );
}

#[test]
fn content_types_choose_the_format() {
    use http::HeaderValue;
    for (ct, want) in [
        ("application/cbor-seq", Some(StreamFormat::CborSeq)),
        ("application/cbor", Some(StreamFormat::CborSeq)),
        ("application/json", Some(StreamFormat::Json)),
        ("application/json;stream=watch", Some(StreamFormat::Json)),
        ("Application/JSON; charset=utf-8", Some(StreamFormat::Json)),
        ("application/yaml", None),
    ] {
        assert_eq!(
            StreamFormat::from_content_type(&HeaderValue::from_static(ct)),
            want,
            "{ct}"
        );
    }
}

#[tokio::test]
async fn a_typed_event_stream_round_trips_and_an_encode_error_ends_it() {
    use conneg::{WatchResponse, WatchStream};
    use futures_util::StreamExt;

    /// Fails to serialize when `v` is negative.
    struct Num {
        v: f64,
    }
    impl Serialize for Num {
        fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
            use serde::ser::{Error, SerializeStruct};
            if self.v < 0.0 {
                return Err(S::Error::custom("cannot encode a negative number"));
            }
            let mut st = s.serialize_struct("Num", 1)?;
            st.serialize_field("v", &self.v)?;
            st.end()
        }
    }
    #[derive(Debug, PartialEq, Deserialize)]
    struct NumBack {
        v: f64,
    }
    for codec in [Codec::Cbor, Codec::Json] {
        // The third event cannot be encoded: the client sees an ERROR and the end.
        let events = futures_util::stream::iter([
            WatchEvent::Added(Num { v: 1.5 }),
            WatchEvent::Modified(Num { v: 2.0 }),
            WatchEvent::Modified(Num { v: -1.0 }),
            WatchEvent::Deleted(Num { v: 3.0 }),
        ]);
        let response = WatchResponse::with_codec(codec.clone()).events(events);
        let got: Vec<_> = WatchStream::<NumBack, _>::from_response(response)
            .unwrap()
            .collect()
            .await;
        assert_eq!(got.len(), 3, "{codec}: {got:?}");
        assert_eq!(
            *got[0].as_ref().unwrap(),
            WatchEvent::Added(NumBack { v: 1.5 })
        );
        match &got[2] {
            Ok(WatchEvent::Error(status)) => assert_eq!(status.code, 500),
            other => panic!("{codec}: {other:?}"),
        }
    }
}

#[tokio::test]
async fn a_codec_without_a_stream_form_is_406() {
    use conneg::watch::WatchResponse;
    use conneg::{BoxError, CustomCodec};

    struct Yaml;
    impl CustomCodec for Yaml {
        fn media_type(&self) -> &str {
            "application/yaml"
        }
        fn encode(&self, v: &serde_json::Value, out: &mut Vec<u8>) -> Result<(), BoxError> {
            out.extend_from_slice(v.to_string().as_bytes());
            Ok(())
        }
        fn decode(&self, _: &[u8]) -> Result<serde_json::Value, BoxError> {
            Err("no".into())
        }
    }
    let response = WatchResponse::with_codec(Codec::custom(Yaml))
        .events(futures_util::stream::iter([WatchEvent::Added(1)]));
    assert_eq!(response.status(), http::StatusCode::NOT_ACCEPTABLE);
}

#[tokio::test]
async fn initial_state_then_live_events_in_order() {
    use conneg::{WatchHub, WatchResponse, WatchStream};
    use futures_util::StreamExt;

    for codec in [Codec::Cbor, Codec::Json] {
        let hub = WatchHub::<u32>::new();
        let response = WatchResponse::with_codec(codec.clone())
            .subscribe_with_initial(&hub, (1..=3).map(WatchEvent::Added));
        // Published after subscribing, before anything was read: queued behind the snapshot.
        hub.publish(WatchEvent::Modified(2));
        hub.publish(WatchEvent::Deleted(3));
        hub.close();
        let got: Vec<_> = WatchStream::<u32, _>::from_response(response)
            .unwrap()
            .map(Result::unwrap)
            .collect()
            .await;
        assert_eq!(
            got,
            [
                WatchEvent::Added(1),
                WatchEvent::Added(2),
                WatchEvent::Added(3),
                WatchEvent::Modified(2),
                WatchEvent::Deleted(3)
            ],
            "{codec}"
        );
    }
}
