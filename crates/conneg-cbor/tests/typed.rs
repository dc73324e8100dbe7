//! Typed decoding: paths in errors, unknown fields (strict / ignore / warn), case sensitivity,
//! absent vs null vs empty, int vs float, key order, IntOrString, and the Go interop vector.

use conneg_cbor::{DecodeOptions, EncodeOptions, ErrorKind, UnknownFields};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

mod common;
use common::{hex, unhex};

/// CBOR for a JSON value (how a Go peer would send it: byte strings, sorted).
fn cbor(v: &Value) -> Vec<u8> {
    conneg_cbor::to_vec(v).unwrap()
}

#[derive(Serialize, Deserialize, Debug, PartialEq, Default)]
#[serde(rename_all = "camelCase")]
struct Pod {
    api_version: String,
    kind: String,
    metadata: Meta,
    spec: Spec,
}

#[derive(Serialize, Deserialize, Debug, PartialEq, Default)]
struct Meta {
    name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    labels: Option<std::collections::BTreeMap<String, String>>,
}

#[derive(Serialize, Deserialize, Debug, PartialEq, Default)]
struct Spec {
    containers: Vec<Container>,
}

#[derive(Serialize, Deserialize, Debug, PartialEq, Default)]
struct Container {
    name: String,
    #[serde(default)]
    ports: Vec<u16>,
}

fn pod_json() -> Value {
    json!({
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "p", "labels": {"app": "x"}},
        "spec": {"containers": [{"name": "a"}, {"name": "b", "ports": [80]}, {"name": "c"}]}
    })
}

#[test]
fn typed_round_trip() {
    let pod: Pod = conneg_cbor::from_slice(&cbor(&pod_json())).unwrap();
    assert_eq!(pod.spec.containers[1].ports, [80]);
    let again = conneg_cbor::to_vec(&pod).unwrap();
    let back: Pod = conneg_cbor::from_slice(&again).unwrap();
    assert_eq!(back, pod);
}

#[test]
fn errors_carry_the_path() {
    let mut v = pod_json();
    v["spec"]["containers"][2]["name"] = json!(7);
    let e = conneg_cbor::from_slice::<Pod>(&cbor(&v)).unwrap_err();
    assert_eq!(e.path(), ".spec.containers[2].name");
    assert_eq!(e.kind(), ErrorKind::Message);
    assert!(
        e.to_string().ends_with(" at .spec.containers[2].name"),
        "{e}"
    );
    assert!(e.offset().is_some());

    let mut v = pod_json();
    v["spec"]["containers"][1]["ports"] = json!([80, 70000]);
    let e = conneg_cbor::from_slice::<Pod>(&cbor(&v)).unwrap_err();
    assert_eq!(e.path(), ".spec.containers[1].ports[1]");

    // Missing field: reported at the struct that misses it.
    let mut v = pod_json();
    v["metadata"].as_object_mut().unwrap().remove("name");
    let e = conneg_cbor::from_slice::<Pod>(&cbor(&v)).unwrap_err();
    assert_eq!(e.path(), ".metadata");
    assert_eq!(e.to_string(), "missing field `name` at .metadata");

    // Profile errors deep inside: path too.
    let mut b = cbor(&pod_json());
    let at = b.windows(2).position(|w| w == b"\x41x").unwrap();
    b[at] = 0x61; // text string "x"...
    b[at + 1] = 0xff; // ...that is not UTF-8
    let e = conneg_cbor::from_slice::<Pod>(&b).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidUtf8);
    assert_eq!(e.path(), ".metadata.labels.app");
    assert_eq!(e.offset(), Some(at));

    // Root errors have an empty path.
    let e = conneg_cbor::from_slice::<Pod>(&[0x01]).unwrap_err();
    assert_eq!(e.path(), "");
}

#[test]
fn unknown_fields_strict_ignore_and_warn() {
    let mut v = pod_json();
    v["metadata"]["Name"] = json!("x");
    v["spec"]["containers"][2]["image"] = json!({"nested": [1, 2]});
    let b = cbor(&v);

    let e = conneg_cbor::from_slice::<Pod>(&b).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::UnknownField);
    assert_eq!(
        e.to_string(),
        r#"unknown field "image" at .spec.containers[2]"#
    );
    let mut only_meta = pod_json();
    only_meta["metadata"]["Name"] = json!("x");
    let e = conneg_cbor::from_slice::<Pod>(&cbor(&only_meta)).unwrap_err();
    assert_eq!(e.to_string(), r#"unknown field "Name" at .metadata"#);

    let lax = DecodeOptions::new().unknown_fields(UnknownFields::Ignore);
    let pod: Pod = lax.from_slice(&b).unwrap();
    assert_eq!(pod.metadata.name, "p");

    let (pod2, warnings) = DecodeOptions::new()
        .from_slice_with_warnings::<Pod>(&b)
        .unwrap();
    assert_eq!(pod2, pod);
    let w: Vec<String> = warnings.iter().map(|w| w.to_string()).collect();
    assert_eq!(
        w,
        // In input order: deterministic CBOR puts "spec" before "metadata" (shorter first).
        [
            r#"unknown field "image" at .spec.containers[2]"#,
            r#"unknown field "Name" at .metadata"#,
        ]
    );
    assert!(warnings.iter().all(|w| w.kind() == ErrorKind::UnknownField));

    // No warnings for clean input.
    let (_, w) = DecodeOptions::new()
        .from_slice_with_warnings::<Pod>(&cbor(&pod_json()))
        .unwrap();
    assert!(w.is_empty());
}

#[test]
fn aliases_are_known_fields_and_deny_unknown_fields_still_works() {
    #[derive(Deserialize, Debug)]
    struct A {
        #[serde(alias = "old")]
        new: u8,
    }
    let a: A = conneg_cbor::from_slice(&cbor(&json!({"old": 1}))).unwrap();
    assert_eq!(a.new, 1);
    #[derive(Deserialize, Debug)]
    #[serde(deny_unknown_fields)]
    #[allow(dead_code)]
    struct D {
        a: u8,
    }
    let lax = DecodeOptions::new().unknown_fields(UnknownFields::Ignore);
    // serde's own check is not overridden by Ignore: it sees no keys it did not expect, because
    // we skip them first. That is the documented behaviour of Ignore.
    assert!(lax.from_slice::<D>(&cbor(&json!({"a": 1, "b": 2}))).is_ok());
}

#[test]
fn field_names_match_case_sensitively() {
    #[derive(Deserialize, Debug)]
    #[allow(dead_code)]
    struct S {
        name: Option<String>,
    }
    let b = cbor(&json!({"Name": "x"}));
    assert_eq!(
        conneg_cbor::from_slice::<S>(&b).unwrap_err().kind(),
        ErrorKind::UnknownField
    );
    let lax = DecodeOptions::new().unknown_fields(UnknownFields::Ignore);
    assert_eq!(lax.from_slice::<S>(&b).unwrap().name, None);
}

#[test]
fn absent_null_and_empty_survive() {
    for v in [
        json!({}),
        json!({"a": null}),
        json!({"a": []}),
        json!({"a": {}}),
        json!({"a": ""}),
        json!({"a": [null, {}, []]}),
    ] {
        let back: Value = conneg_cbor::from_slice(&cbor(&v)).unwrap();
        assert_eq!(back, v);
    }
    #[derive(Serialize, Deserialize, Debug, PartialEq)]
    struct T {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        absent: Option<Vec<u8>>,
        null: Option<Vec<u8>>,
        empty: Option<Vec<u8>>,
    }
    let t = T {
        absent: None,
        null: None,
        empty: Some(vec![]),
    };
    let b = EncodeOptions::default()
        .self_described(false)
        .to_vec(&t)
        .unwrap();
    assert_eq!(hex(&b), "a2446e756c6cf645656d70747980");
    assert_eq!(conneg_cbor::from_slice::<T>(&b).unwrap(), t);
}

#[test]
fn int_and_float_stay_apart() {
    let v = json!([
        1,
        1.0,
        -1,
        -1.0,
        0,
        0.0,
        1.5,
        1e300,
        i64::MIN,
        9007199254740993i64
    ]);
    let back: Value = conneg_cbor::from_slice(&cbor(&v)).unwrap();
    assert_eq!(back, v);
    assert!(back[1].is_f64() && back[0].is_u64() && back[2].is_i64());
    assert_eq!(
        serde_json::to_string(&back).unwrap(),
        serde_json::to_string(&v).unwrap()
    );
}

#[test]
fn key_order_does_not_matter() {
    let a = unhex("a2 4161 01 4162 02");
    let b = unhex("a2 4162 02 4161 01");
    #[derive(Deserialize, Debug, PartialEq)]
    struct S {
        a: u8,
        b: u8,
    }
    assert_eq!(
        conneg_cbor::from_slice::<S>(&a).unwrap(),
        conneg_cbor::from_slice::<S>(&b).unwrap()
    );
    let va: Value = conneg_cbor::from_slice(&a).unwrap();
    let vb: Value = conneg_cbor::from_slice(&b).unwrap();
    assert_eq!(va, vb);
    // And deterministic re-encoding is identical.
    assert_eq!(
        conneg_cbor::to_vec(&va).unwrap(),
        conneg_cbor::to_vec(&vb).unwrap()
    );
}

/// Like Kubernetes' intstr.IntOrString, as an untagged enum.
#[derive(Serialize, Deserialize, Debug, PartialEq, Clone)]
#[serde(untagged)]
enum IntOrString {
    Int(i32),
    String(String),
}

/// The same, hand-written.
#[derive(Debug, PartialEq, Clone)]
enum IntOrStr {
    Int(i32),
    Str(String),
}

impl Serialize for IntOrStr {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            IntOrStr::Int(i) => s.serialize_i32(*i),
            IntOrStr::Str(v) => s.serialize_str(v),
        }
    }
}

impl<'de> Deserialize<'de> for IntOrStr {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl serde::de::Visitor<'_> for V {
            type Value = IntOrStr;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("an int or a string")
            }
            fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<IntOrStr, E> {
                i32::try_from(v).map(IntOrStr::Int).map_err(E::custom)
            }
            fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<IntOrStr, E> {
                i32::try_from(v).map(IntOrStr::Int).map_err(E::custom)
            }
            fn visit_str<E>(self, v: &str) -> Result<IntOrStr, E> {
                Ok(IntOrStr::Str(v.to_string()))
            }
        }
        d.deserialize_any(V)
    }
}

#[derive(Serialize, Deserialize, Debug, PartialEq)]
struct Probe {
    port: IntOrString,
    target: IntOrStr,
}

#[test]
fn int_or_string_has_the_json_structure() {
    for p in [
        Probe {
            port: IntOrString::Int(8080),
            target: IntOrStr::Int(7),
        },
        Probe {
            port: IntOrString::String("http".into()),
            target: IntOrStr::Str("foo".into()),
        },
    ] {
        let b = conneg_cbor::to_vec(&p).unwrap();
        let as_value: Value = conneg_cbor::from_slice(&b).unwrap();
        assert_eq!(as_value, serde_json::to_value(&p).unwrap());
        assert_eq!(conneg_cbor::from_slice::<Probe>(&b).unwrap(), p);
    }
    // Go peers send byte strings; text strings work too.
    let go = unhex("a2 44706f7274 4468747470 467461726765 74 43666f6f");
    let p: Probe = conneg_cbor::from_slice(&go).unwrap();
    assert_eq!(p.port, IntOrString::String("http".into()));
    let text = unhex("a2 64706f7274 6468747470 667461726765 74 63666f6f");
    assert_eq!(conneg_cbor::from_slice::<Probe>(&text).unwrap(), p);
    // Indefinite-length byte strings in buffered (untagged) content, too.
    let v: IntOrString = conneg_cbor::from_slice(&unhex("5f 4268 74 4274 70 ff")).unwrap();
    assert_eq!(v, IntOrString::String("http".into()));
}

#[test]
fn internally_tagged_enums_work_with_byte_strings() {
    #[derive(Serialize, Deserialize, Debug, PartialEq)]
    #[serde(tag = "type")]
    enum Ev {
        Added { name: String },
        Deleted { name: String },
    }
    let e = Ev::Deleted { name: "x".into() };
    let b = conneg_cbor::to_vec(&e).unwrap();
    assert_eq!(conneg_cbor::from_slice::<Ev>(&b).unwrap(), e);
}

#[test]
fn externally_tagged_enums_round_trip() {
    #[derive(Serialize, Deserialize, Debug, PartialEq)]
    enum E {
        Unit,
        New(u8),
        Tuple(u8, String),
        Struct { a: u8 },
    }
    for e in [
        E::Unit,
        E::New(3),
        E::Tuple(1, "x".into()),
        E::Struct { a: 2 },
    ] {
        let b = conneg_cbor::to_vec(&e).unwrap();
        assert_eq!(conneg_cbor::from_slice::<E>(&b).unwrap(), e);
    }
    let e = conneg_cbor::from_slice::<E>(&cbor(&json!({"Struct": {"a": 1, "b": 2}}))).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::UnknownField);
    assert_eq!(e.path(), ".Struct");
}

const FLUNDER_JSON: &str = r#"{"apiVersion":"wardle.example.com/v1beta1","kind":"Flunder","metadata":{"name":"my-first-flunder","namespace":"default"},"spec":{"flunderReference":"other","referenceType":"Flunder"},"status":{}}"#;
const FLUNDER_CBOR: &str = "d9d9f7a5446b696e6447466c756e6465724473706563a24d7265666572656e63655479706547466c756e64657250666c756e6465725265666572656e6365456f7468657246737461747573a0486d65746164617461a2446e616d65506d792d66697273742d666c756e646572496e616d6573706163654764656661756c744a61706956657273696f6e581a776172646c652e6578616d706c652e636f6d2f76316265746131";
const FLUNDER_CBOR_TEXT: &str = "d9d9f7a5646b696e6467466c756e6465726473706563a26d7265666572656e63655479706567466c756e64657270666c756e6465725265666572656e6365656f7468657266737461747573a0686d65746164617461a2646e616d65706d792d66697273742d666c756e646572696e616d6573706163656764656661756c746a61706956657273696f6e781a776172646c652e6578616d706c652e636f6d2f76316265746131";

#[test]
fn go_interop_flunder() {
    let json: Value = serde_json::from_str(FLUNDER_JSON).unwrap();
    let from_cbor: Value = conneg_cbor::from_slice(&unhex(FLUNDER_CBOR)).unwrap();
    assert_eq!(from_cbor, json);
    assert_eq!(hex(&conneg_cbor::to_vec(&json).unwrap()), FLUNDER_CBOR);
    let text = EncodeOptions::deterministic().string_encoding(conneg_cbor::StringEncoding::Text);
    assert_eq!(hex(&text.to_vec(&json).unwrap()), FLUNDER_CBOR_TEXT);
    let from_text: Value = conneg_cbor::from_slice(&unhex(FLUNDER_CBOR_TEXT)).unwrap();
    assert_eq!(from_text, json);
    assert!(conneg_cbor::recognizes(&unhex(FLUNDER_CBOR)));
}

#[test]
fn from_reader_and_deserializer_end() {
    let b = cbor(&json!({"a": 1}));
    let v: Value = conneg_cbor::from_reader(&b[..]).unwrap();
    assert_eq!(v, json!({"a": 1}));
    let mut two = b.clone();
    two.extend_from_slice(&b);
    let mut de = conneg_cbor::Deserializer::from_slice(&two);
    let first = Value::deserialize(&mut de).unwrap();
    assert_eq!(first, json!({"a": 1}));
    assert_eq!(de.end().unwrap_err().kind(), ErrorKind::TrailingData);
    let second = Value::deserialize(&mut de).unwrap();
    assert_eq!(second, first);
    de.end().unwrap();
}
