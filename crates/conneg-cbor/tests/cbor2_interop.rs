//! Interoperability with Python's `cbor2`, an independent CBOR implementation (the KEP's "run
//! against implementations in non-Go client languages" bullet).
//!
//! * conneg-cbor encodes, cbor2 decodes: same JSON in all four encoder configurations, and the
//!   deterministic output is byte-for-byte what `cbor2.dumps(..., canonical=True)` writes.
//! * cbor2 encodes (default, canonical, tag 55799, indefinite lengths, Go-style byte strings),
//!   conneg-cbor decodes to the expected `serde_json::Value` and typed structs.
//! * Input cbor2 can produce but the profile forbids (duplicate keys, NaN/Infinity, undefined,
//!   other simple values, bignums) is rejected with the right error.
//!
//! Needs `python3` with `cbor2` (install with `scripts/install-test-deps`); the tests fail, not
//! skip, when it is missing.

use conneg_cbor::{EncodeOptions, ErrorKind, StringEncoding};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use std::io::Write;
use std::process::{Command, Stdio};

mod common;
use common::{hex, unhex};

/// The Python side. Reads one JSON request on stdin, writes one JSON response on stdout.
const HELPER: &str = r#"
import sys, json, math
from collections.abc import Mapping
try:
    import cbor2
except ImportError as e:
    sys.stderr.write("cannot import cbor2: %s\n" % e)
    sys.exit(3)

def to_json(o, counts):
    # bytes -> str after UTF-8 decoding (Kubernetes writes every string as a byte string)
    if isinstance(o, bytes):
        counts["bytes"] += 1
        return o.decode("utf-8")
    if isinstance(o, str):
        counts["text"] += 1
        return o
    # cbor2 6 gives a frozendict (and may give tuples) for containers under a tag
    if isinstance(o, Mapping):
        return {to_json(k, counts): to_json(v, counts) for k, v in o.items()}
    if isinstance(o, (list, tuple)):
        return [to_json(v, counts) for v in o]
    if isinstance(o, cbor2.CBORTag):
        raise ValueError("unexpected tag %d" % o.tag)
    return o

def to_bytes(o):
    # Go style: every string and every map key a byte string
    if isinstance(o, str):
        return o.encode("utf-8")
    if isinstance(o, dict):
        return {to_bytes(k): to_bytes(v) for k, v in o.items()}
    if isinstance(o, list):
        return [to_bytes(v) for v in o]
    return o

def head(major, n):
    if n < 24:
        return bytes([major << 5 | n])
    for ai, width in ((24, 1), (25, 2), (26, 4), (27, 8)):
        if n < 1 << (8 * width):
            return bytes([major << 5 | ai]) + n.to_bytes(width, "big")

def indefinite(o):
    # every container and every string of two or more characters in indefinite-length form;
    # leaves (numbers, null, booleans, chunks) are encoded by cbor2
    if isinstance(o, dict):
        return b"\xbf" + b"".join(indefinite(k) + indefinite(v) for k, v in o.items()) + b"\xff"
    if isinstance(o, list):
        return b"\x9f" + b"".join(indefinite(v) for v in o) + b"\xff"
    if isinstance(o, (str, bytes)) and len(o) >= 2:
        mid = len(o) // 2
        if isinstance(o, str):
            # split on a character boundary: chunks of a text string must be valid UTF-8
            first, second = o[:mid].encode("utf-8"), o[mid:].encode("utf-8")
            return b"\x7f" + head(3, len(first)) + first + head(3, len(second)) + second + b"\xff"
        return b"\x5f" + cbor2.dumps(o[:mid]) + cbor2.dumps(o[mid:]) + b"\xff"
    return cbor2.dumps(o)

def encode(obj, style):
    if style == "default":
        return cbor2.dumps(obj)
    if style == "canonical":
        return cbor2.dumps(obj, canonical=True)
    if style == "tagged":
        return cbor2.dumps(cbor2.CBORTag(55799, obj))
    if style == "nested_tags":
        # 55799 around the top level and again around every map value
        def wrap(o):
            if isinstance(o, dict):
                return {k: cbor2.CBORTag(55799, wrap(v)) for k, v in o.items()}
            if isinstance(o, list):
                return [wrap(v) for v in o]
            return o
        return cbor2.dumps(cbor2.CBORTag(55799, wrap(obj)))
    if style == "gostyle":
        return cbor2.dumps(cbor2.CBORTag(55799, to_bytes(obj)), canonical=True)
    if style == "indefinite":
        return indefinite(obj)
    if style == "indefinite_bytes":
        return indefinite(to_bytes(obj))
    raise ValueError("unknown style " + style)

def forbidden(name):
    d = cbor2.dumps
    if name == "nan": return d(float("nan"))
    if name == "nan_canonical": return d(float("nan"), canonical=True)
    if name == "inf": return d(float("inf"))
    if name == "neg_inf_canonical": return d(float("-inf"), canonical=True)
    if name == "nan_in_pod": return d({"spec": {"ratio": float("nan")}})
    if name == "undefined": return d({"a": cbor2.undefined})
    if name == "simple_0": return d([cbor2.CBORSimpleValue(0)])
    if name == "simple_255": return d(cbor2.CBORSimpleValue(255))
    if name == "bignum_2_64": return d(2**64)
    if name == "bignum_neg": return d(-2**64 - 1)
    if name == "bignum_tag2_small": return d(cbor2.CBORTag(2, b"\x01"))
    if name == "bignum_in_map": return d({"replicas": 2**70})
    if name == "u64_max": return d(2**64 - 1)
    if name == "i64_min_minus_1": return d(-2**63 - 1)
    if name == "dup_text_keys":
        return b"\xa1" + d("metadata") + b"\xa2" + d("name") + d("a") + d("name") + d("b")
    if name == "dup_byte_keys":
        return b"\xd9\xd9\xf7\xa1" + d(b"metadata") + b"\xa2" + d(b"name") + d(b"a") + d(b"name") + d(b"b")
    if name == "dup_byte_and_text_key":
        return b"\xa1" + d("metadata") + b"\xa2" + d(b"name") + d("a") + d("name") + d("b")
    if name == "dup_top_level":
        return b"\xa3" + d("kind") + d("Pod") + d("apiVersion") + d("v1") + d("kind") + d("Pod")
    if name == "dup_indefinite":
        return b"\xbf" + d("a") + d(1) + d("a") + d(2) + b"\xff"
    if name == "int_key": return d({1: "a"})
    raise ValueError("unknown case " + name)

req = json.load(sys.stdin)
out = []
if req["op"] == "decode":
    for h in req["items"]:
        obj = cbor2.loads(bytes.fromhex(h))
        counts = {"bytes": 0, "text": 0}
        j = to_json(obj, counts)
        canon = "d9d9f7" + cbor2.dumps(obj, canonical=True).hex()
        out.append({"json": j, "bytes": counts["bytes"], "text": counts["text"], "canonical": canon})
elif req["op"] == "encode":
    for item in req["items"]:
        out.append(encode(item["value"], item["style"]).hex())
elif req["op"] == "decode_seq":
    # RFC 8742: items back to back; read until the stream is exhausted
    import io
    data = bytes.fromhex(req["items"])
    dec = cbor2.CBORDecoder(io.BytesIO(data))
    while dec.fp.tell() < len(data):
        out.append(to_json(dec.decode(), {"bytes": 0, "text": 0}))
elif req["op"] == "encode_seq":
    out = "".join(encode(item["value"], item["style"]).hex() for item in req["items"])
elif req["op"] == "forbidden":
    for name in req["items"]:
        out.append({"hex": forbidden(name).hex()})
json.dump(out, sys.stdout, ensure_ascii=False)
"#;

const INSTALL_HINT: &str = "the cbor2 interop tests need python3 with the cbor2 package: \
                            run the suite with scripts/test, which installs cbor2 into target/test-deps";

/// Runs the helper with `request`, returns its response.
fn python(request: &Value) -> Value {
    let mut child = Command::new("python3")
        .arg("-c")
        .arg(HELPER)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot run python3 ({e}); {INSTALL_HINT}"));
    let input = serde_json::to_vec(request).unwrap();
    child.stdin.take().unwrap().write_all(&input).unwrap();
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    match out.status.code() {
        Some(0) => {}
        Some(3) => panic!("{}; {INSTALL_HINT}", stderr.trim()),
        _ => panic!("python3 helper failed ({}):\n{stderr}", out.status),
    }
    serde_json::from_slice(&out.stdout).expect("helper output is JSON")
}

fn fixture(name: &str) -> Value {
    let p = format!("{}/benches/fixtures/{name}", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{p}: {e}"));
    serde_json::from_str(&text).unwrap()
}

/// Kubernetes-like objects plus the awkward leaves (unicode, extreme integers, floats of every
/// width, null, empty containers, empty strings and keys).
fn objects() -> Vec<Value> {
    vec![
        fixture("pod.json"),
        fixture("cr.json"),
        json!({
            "apiVersion": "wardle.example.com/v1beta1",
            "kind": "Flunder",
            "metadata": {"name": "my-first-flunder", "namespace": "default"},
            "spec": {"flunderReference": "other", "referenceType": "Flunder"},
            "status": {}
        }),
        json!({
            "apiVersion": "v1",
            "kind": "List",
            "metadata": {"resourceVersion": ""},
            "items": [fixture("pod.json"), fixture("pod.json")]
        }),
        json!({
            "ints": [0, 1, 23, 24, 255, 256, 65535, 65536, 4294967295u64, 4294967296u64,
                     i64::MAX, -1, -24, -25, -256, -257, i64::MIN],
            "floats": [0.0, -0.0, 0.5, 1.0, -2.5, 1.5, 65504.0, 65505.0, 100000.0, 0.1,
                       5.960464477539063e-8, 3.4028234663852886e38, 1e300, -1e-300, 2.5e-320],
            "strings": ["", "a", "ü", "€", "𝄞 clef", "\u{0}nul", "tab\tnew\nline", "\"quoted\"\\"],
            "": "empty key",
            "nested": {"null": null, "t": true, "f": false, "emptyMap": {}, "emptyList": [],
                       "deep": [[[[{"x": [{}]}]]]]},
            "longString": "x".repeat(300),
            "longList": (0..300).collect::<Vec<u32>>(),
        }),
        json!("scalar string"),
        json!(42),
        json!(-1.5),
        json!(null),
        json!([]),
        json!({}),
    ]
}

#[derive(Serialize, Deserialize, Debug, PartialEq)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct Flunder {
    api_version: String,
    kind: String,
    metadata: ObjectMeta,
    spec: FlunderSpec,
    #[serde(default)]
    status: Option<Value>,
}

#[derive(Serialize, Deserialize, Debug, PartialEq)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct ObjectMeta {
    name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    namespace: Option<String>,
}

#[derive(Serialize, Deserialize, Debug, PartialEq)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct FlunderSpec {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    flunder_reference: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    fischer_reference: Option<String>,
    reference_type: String,
}

fn configs() -> Vec<(&'static str, EncodeOptions)> {
    vec![
        ("deterministic/bytes", EncodeOptions::deterministic()),
        (
            "deterministic/text",
            EncodeOptions::deterministic().string_encoding(StringEncoding::Text),
        ),
        ("fast/bytes", EncodeOptions::fast()),
        (
            "fast/text",
            EncodeOptions::fast().string_encoding(StringEncoding::Text),
        ),
    ]
}

/// cbor2's canonical output, corrected for its one deviation from RFC 8949 §4.2.1 seen here:
/// it writes 65504.0 (the largest half-precision value) as the single-precision `fa477fe000`,
/// where the RFC (Appendix A) and Kubernetes' ShortestFloat16 write the exact half `f97bff`.
fn cbor2_canonical(h: &Value) -> String {
    h.as_str().unwrap().replace("fa477fe000", "f97bff")
}

#[test]
fn cbor2_decodes_what_we_encode() {
    let objects = objects();
    let mut cases = Vec::new();
    for (name, opts) in configs() {
        for (i, v) in objects.iter().enumerate() {
            cases.push((name, i, opts.to_vec(v).unwrap()));
        }
    }
    let resp = python(&json!({
        "op": "decode",
        "items": cases.iter().map(|c| hex(&c.2)).collect::<Vec<_>>(),
    }));
    let resp = resp.as_array().unwrap();
    assert_eq!(resp.len(), cases.len());
    for ((name, i, bytes), got) in cases.iter().zip(resp) {
        let want = &objects[*i];
        assert_eq!(
            &got["json"], want,
            "{name}, object {i}: cbor2 decoded differently"
        );
        let (nbytes, ntext) = (
            got["bytes"].as_u64().unwrap(),
            got["text"].as_u64().unwrap(),
        );
        if name.ends_with("/bytes") {
            assert_eq!(
                ntext, 0,
                "{name}, object {i}: Bytes mode wrote a text string"
            );
        } else {
            assert_eq!(
                nbytes, 0,
                "{name}, object {i}: Text mode wrote a byte string"
            );
        }
        if name.starts_with("deterministic") {
            // Same keys sorted the same way, same shortest heads and floats as cbor2's canonical
            // encoder (RFC 8949 §4.2.1 core deterministic encoding).
            assert_eq!(
                cbor2_canonical(&got["canonical"]),
                hex(bytes),
                "{name}, object {i}: not what cbor2 canonical=True writes"
            );
        }
        // And it decodes back to itself here, too.
        let back: Value = conneg_cbor::from_slice(bytes).unwrap();
        assert_eq!(&back, want, "{name}, object {i}");
    }
}

#[test]
fn cbor2_decodes_typed_structs() {
    let flunder = Flunder {
        api_version: "wardle.example.com/v1beta1".into(),
        kind: "Flunder".into(),
        metadata: ObjectMeta {
            name: "my-first-flunder".into(),
            namespace: Some("default".into()),
        },
        spec: FlunderSpec {
            flunder_reference: Some("other".into()),
            fischer_reference: None,
            reference_type: "Flunder".into(),
        },
        status: Some(json!({})),
    };
    let want = serde_json::to_value(&flunder).unwrap();
    let encoded: Vec<Vec<u8>> = configs()
        .iter()
        .map(|(_, o)| o.to_vec(&flunder).unwrap())
        .collect();
    let resp = python(
        &json!({"op": "decode", "items": encoded.iter().map(|b| hex(b)).collect::<Vec<_>>()}),
    );
    for (((name, _), bytes), got) in configs().iter().zip(&encoded).zip(resp.as_array().unwrap()) {
        assert_eq!(got["json"], want, "{name}");
        if name.starts_with("deterministic") {
            assert_eq!(cbor2_canonical(&got["canonical"]), hex(bytes), "{name}");
        }
    }
}

#[test]
fn we_decode_what_cbor2_encodes() {
    let objects = objects();
    let styles = [
        "default",
        "canonical",
        "tagged",
        "nested_tags",
        "gostyle",
        "indefinite",
        "indefinite_bytes",
    ];
    let mut cases = Vec::new();
    for style in styles {
        for i in 0..objects.len() {
            cases.push((style, i));
        }
    }
    let items: Vec<Value> = cases
        .iter()
        .map(|(style, i)| json!({"style": style, "value": objects[*i]}))
        .collect();
    let resp = python(&json!({"op": "encode", "items": items}));
    let resp = resp.as_array().unwrap();
    assert_eq!(resp.len(), cases.len());
    for ((style, i), h) in cases.iter().zip(resp) {
        let bytes = unhex(h.as_str().unwrap());
        let got: Value = conneg_cbor::from_slice(&bytes)
            .unwrap_or_else(|e| panic!("{style}, object {i}: {e} ({e:?})"));
        assert_eq!(got, objects[*i], "{style}, object {i}");
        if *style == "gostyle" {
            assert!(conneg_cbor::recognizes(&bytes));
            // Go-style canonical output from cbor2 is exactly what we write.
            assert_eq!(
                hex(&conneg_cbor::to_vec(&objects[*i]).unwrap()),
                cbor2_canonical(h),
                "object {i}"
            );
        }
    }
}

#[test]
fn we_decode_cbor2_output_into_typed_structs() {
    let value = json!({
        "apiVersion": "wardle.example.com/v1beta1",
        "kind": "Flunder",
        "metadata": {"name": "my-first-flunder", "namespace": "default"},
        "spec": {"flunderReference": "other", "referenceType": "Flunder"},
        "status": {}
    });
    let want: Flunder = serde_json::from_value(value.clone()).unwrap();
    let styles = [
        "default",
        "canonical",
        "tagged",
        "gostyle",
        "indefinite",
        "indefinite_bytes",
    ];
    let items: Vec<Value> = styles
        .iter()
        .map(|s| json!({"style": s, "value": value}))
        .collect();
    let resp = python(&json!({"op": "encode", "items": items}));
    for (style, h) in styles.iter().zip(resp.as_array().unwrap()) {
        let bytes = unhex(h.as_str().unwrap());
        let got: Flunder =
            conneg_cbor::from_slice(&bytes).unwrap_or_else(|e| panic!("{style}: {e} ({e:?})"));
        assert_eq!(got, want, "{style}");
    }
    // The Go-style sample next to the sample apiserver is the same object.
    let sample = std::fs::read(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../examples/samples/flunder.cbor"
    ))
    .unwrap();
    assert_eq!(conneg_cbor::from_slice::<Flunder>(&sample).unwrap(), want);
}

#[test]
fn what_cbor2_can_write_but_the_profile_forbids_is_rejected() {
    use ErrorKind::*;
    let cases: &[(&str, ErrorKind, Option<&str>)] = &[
        ("nan", UnsupportedValue, None),
        ("nan_canonical", UnsupportedValue, None),
        ("inf", UnsupportedValue, None),
        ("neg_inf_canonical", UnsupportedValue, None),
        ("nan_in_pod", UnsupportedValue, Some(".spec.ratio")),
        ("undefined", UnsupportedValue, Some(".a")),
        ("simple_0", UnsupportedValue, Some("[0]")),
        ("simple_255", UnsupportedValue, None),
        ("bignum_2_64", UnsupportedValue, None),
        ("bignum_neg", UnsupportedValue, None),
        ("bignum_tag2_small", UnsupportedValue, None),
        ("bignum_in_map", UnsupportedValue, Some(".replicas")),
        ("u64_max", IntegerOverflow, None),
        ("i64_min_minus_1", IntegerOverflow, None),
        ("dup_text_keys", DuplicateKey, Some(".metadata")),
        ("dup_byte_keys", DuplicateKey, Some(".metadata")),
        ("dup_byte_and_text_key", DuplicateKey, Some(".metadata")),
        ("dup_top_level", DuplicateKey, None),
        ("dup_indefinite", DuplicateKey, None),
        ("int_key", NonStringKey, None),
    ];
    let resp =
        python(&json!({"op": "forbidden", "items": cases.iter().map(|c| c.0).collect::<Vec<_>>()}));
    for ((name, kind, path), got) in cases.iter().zip(resp.as_array().unwrap()) {
        let bytes = unhex(got["hex"].as_str().unwrap());
        let err = conneg_cbor::from_slice::<Value>(&bytes)
            .expect_err(&format!("{name} ({}) was accepted", hex(&bytes)));
        assert_eq!(err.kind(), *kind, "{name}: {err}");
        if let Some(p) = path {
            assert_eq!(err.path(), *p, "{name}: {err}");
        }
    }
    // The error message a user sees for the classic case.
    let dup = &resp[16];
    let err = conneg_cbor::from_slice::<Value>(&unhex(dup["hex"].as_str().unwrap())).unwrap_err();
    assert_eq!(err.to_string(), r#"duplicate map key "name" at .metadata"#);
    // Into a typed struct too (a struct target must not let the last value win either).
    #[derive(Deserialize, Debug)]
    #[allow(dead_code)]
    struct M {
        name: String,
    }
    #[derive(Deserialize, Debug)]
    #[allow(dead_code)]
    struct Obj {
        metadata: M,
    }
    for i in [14, 15, 16] {
        let err =
            conneg_cbor::from_slice::<Obj>(&unhex(resp[i]["hex"].as_str().unwrap())).unwrap_err();
        assert_eq!(err.kind(), DuplicateKey, "{}: {err}", cases[i].0);
    }
}

#[test]
fn sequences_both_ways() {
    let events: Vec<Value> = vec![
        json!({"type": "ADDED", "object": fixture("pod.json")}),
        json!({"type": "MODIFIED", "object": fixture("cr.json")}),
        json!({"type": "BOOKMARK", "object": {"metadata": {"resourceVersion": "12345"}}}),
        json!({"type": "DELETED", "object": {"kind": "Flunder", "n": [1, 1.5, null]}}),
    ];
    // Our SeqEncoder's watch stream, read item by item by cbor2.
    let mut enc = conneg_cbor::SeqEncoder::with_options(EncodeOptions::fast());
    for e in &events {
        enc.push(e).unwrap();
    }
    let stream = enc.into_inner();
    let got = python(&json!({"op": "decode_seq", "items": hex(&stream)}));
    assert_eq!(got.as_array().unwrap(), &events);
    // cbor2's items back to back (Go-style, plain and indefinite), read by SeqDecoder in chunks.
    let styles = ["gostyle", "default", "indefinite_bytes", "tagged"];
    let items: Vec<Value> = events
        .iter()
        .zip(styles.iter().cycle())
        .map(|(e, s)| json!({"style": s, "value": e}))
        .collect();
    let h = python(&json!({"op": "encode_seq", "items": items}));
    let bytes = unhex(h.as_str().unwrap());
    let mut dec = conneg_cbor::SeqDecoder::new();
    let mut seen = Vec::new();
    for chunk in bytes.chunks(100) {
        dec.push(chunk);
        while let Some(v) = dec.next::<Value>().unwrap() {
            seen.push(v);
        }
    }
    dec.finish().unwrap();
    assert_eq!(seen, events);
}
