//! The messages against etcd's own bytes: answers captured from etcd 3.4.23 with `etcdctl
//! --write-out=protobuf` (etcd's generated Go code encoding them), and requests spelled out
//! byte by byte from the field numbers of etcd's `rpc.proto`. A wrong field number or type in
//! `wire.rs` fails here.
//!
//! Captured on a fresh single-member etcd, in this order:
//!
//! ```text
//! etcdctl put /a/k1 v1                                                          # revision 2
//! printf 'mod("/a/k1") = "7"\n\nput /a/k1 x\n\nget /a/k1\n\n' | etcdctl txn -w protobuf
//! printf 'mod("/a/k1") = "2"\n\nput /a/k1 x\n\nget /a/k1\n\n' | etcdctl txn -w protobuf  # 3
//! etcdctl get /a/k1 -w protobuf
//! etcdctl del --prev-kv /a/k1 -w protobuf                                       # revision 4
//! etcdctl watch --rev 1 --prefix --prev-kv /a -w protobuf
//! ```

use bytes::Bytes;
use prost::Message;

use super::*;

/// The response header etcd sent with every answer, up to the revision byte: cluster id,
/// member id, then the tag of `revision` (field 3, varint).
const HEADER: &str = "0a1a08aaf4e5f599f3ebe7d101108df2f48ec1f7a6d7bd0118";

fn hex(s: &str) -> Vec<u8> {
    let s: String = s.split_whitespace().collect();
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
        .collect()
}

/// A captured answer: the header with `revision` and raft term 2, then `rest`.
fn answer(revision: u8, rest: &str) -> Vec<u8> {
    hex(&format!("{HEADER}{revision:02x}2002{rest}"))
}

fn kv(key: &str, create_revision: i64, mod_revision: i64, value: &'static [u8]) -> KeyValue {
    KeyValue {
        key: key.into(),
        create_revision,
        mod_revision,
        value: Bytes::from_static(value),
    }
}

fn header(revision: i64) -> Option<ResponseHeader> {
    Some(ResponseHeader { revision })
}

#[test]
fn a_range_answer() {
    let bytes = answer(3, "1210 0a052f612f6b31 1002 1803 2002 2a0178 2001");
    let resp = RangeResponse::decode(bytes.as_slice()).unwrap();
    assert_eq!(
        resp,
        RangeResponse {
            header: header(3),
            kvs: vec![kv("/a/k1", 2, 3, b"x")],
            count: 1,
        }
    );
}

#[test]
fn transaction_answers() {
    // The compare failed; the `else` branch's get answered with the key.
    let bytes = answer(
        2,
        "1a1b 0a19 0a02 1802 1211 0a052f612f6b31 1002 1802 2001 2a027631 2001",
    );
    let resp = TxnResponse::decode(bytes.as_slice()).unwrap();
    assert_eq!(
        resp,
        TxnResponse {
            header: header(2),
            succeeded: false,
            responses: vec![ResponseOp {
                response: Some(Response::Range(RangeResponse {
                    header: header(2),
                    kvs: vec![kv("/a/k1", 2, 2, b"v1")],
                    count: 1,
                })),
            }],
        }
    );
    // It held; the put's answer is not declared, so skipped.
    let bytes = answer(3, "1001 1a06 1204 0a02 1803");
    let resp = TxnResponse::decode(bytes.as_slice()).unwrap();
    assert_eq!(
        resp,
        TxnResponse {
            header: header(3),
            succeeded: true,
            responses: vec![ResponseOp { response: None }],
        }
    );
}

#[test]
fn a_delete_answer_with_the_previous_value() {
    let bytes = answer(4, "1001 1a10 0a052f612f6b31 1002 1803 2002 2a0178");
    let resp = DeleteRangeResponse::decode(bytes.as_slice()).unwrap();
    assert_eq!(resp.prev_kvs, vec![kv("/a/k1", 2, 3, b"x")]);
}

#[test]
fn a_watch_answer_with_puts_and_a_delete() {
    let bytes = answer(
        4,
        "5a13 1211 0a052f612f6b31 1002 1802 2001 2a027631
         5a25 1210 0a052f612f6b31 1002 1803 2002 2a0178
              1a11 0a052f612f6b31 1002 1802 2001 2a027631
         5a1f 0801 1209 0a052f612f6b31 1804
                   1a10 0a052f612f6b31 1002 1803 2002 2a0178",
    );
    let resp = WatchResponse::decode(bytes.as_slice()).unwrap();
    assert!(!resp.canceled);
    assert_eq!(resp.compact_revision, 0);
    assert_eq!(
        resp.events,
        vec![
            Event {
                r#type: EventType::Put.into(),
                kv: Some(kv("/a/k1", 2, 2, b"v1")),
                prev_kv: None,
            },
            Event {
                r#type: EventType::Put.into(),
                kv: Some(kv("/a/k1", 2, 3, b"x")),
                prev_kv: Some(kv("/a/k1", 2, 2, b"v1")),
            },
            Event {
                r#type: EventType::Delete.into(),
                kv: Some(kv("/a/k1", 0, 4, b"")),
                prev_kv: Some(kv("/a/k1", 2, 3, b"x")),
            },
        ]
    );
}

/// A request's bytes, spelled out from etcd's field numbers, and decoding them back.
fn encodes_as<M: Message + Default + PartialEq + std::fmt::Debug>(m: &M, expected: &str) {
    let expected = hex(expected);
    assert_eq!(m.encode_to_vec(), expected, "{m:?}");
    assert_eq!(&M::decode(expected.as_slice()).unwrap(), m);
}

#[test]
fn requests_on_the_wire() {
    // key=1 "/a", range_end=2 "/b", limit=3 10, revision=4 7, count_only=9 true.
    encodes_as(
        &RangeRequest {
            key: b"/a".to_vec(),
            range_end: b"/b".to_vec(),
            limit: 10,
            revision: 7,
            count_only: true,
        },
        "0a022f61 12022f62 180a 2007 4801",
    );
    // The update transaction: compare (1) mod_revision(k) == 5 (result=1 EQUAL is the
    // default, target=2 MOD, key=3, mod_revision=6); success (2) put (2: key=1, value=2);
    // failure (3) get (1: key=1).
    encodes_as(
        &TxnRequest {
            compare: vec![Compare::mod_revision("k", CompareResult::Equal, 5)],
            success: vec![RequestOp::put("k", Bytes::from_static(b"v"))],
            failure: vec![RequestOp::get("k")],
        },
        "0a07 1002 1a016b 3005  1208 1206 0a016b 120176  1a05 0a03 0a016b",
    );
    // create_revision(k) > 0 (result=1 GREATER, target=2 CREATE, create_revision=5), then
    // a delete (3: key=1, prev_kv=3).
    encodes_as(
        &TxnRequest {
            compare: vec![Compare::create_revision("k", CompareResult::Greater, 0)],
            success: vec![RequestOp::delete("k")],
            failure: vec![],
        },
        "0a09 0801 1001 1a016b 2800  1207 1a05 0a016b 1801",
    );
    // revision=1, physical=2.
    encodes_as(
        &CompactionRequest {
            revision: 300,
            physical: true,
        },
        "08ac02 1001",
    );
    // create_request=1 {key=1, range_end=2, start_revision=3, prev_kv=6}.
    encodes_as(
        &WatchRequest {
            request_union: Some(WatchRequestUnion::CreateRequest(WatchCreateRequest {
                key: b"/a".to_vec(),
                range_end: b"/b".to_vec(),
                start_revision: 9,
                prev_kv: true,
            })),
        },
        "0a0c 0a022f61 12022f62 1809 3001",
    );
}
