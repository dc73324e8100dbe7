//! Paths of errors and of unknown-field warnings through every kind of nesting: arrays of
//! arrays, maps, enum variants (unit, newtype, tuple, struct), options, unknown fields being
//! skipped, indefinite-length keys, keys with control characters or invalid UTF-8, and a
//! `Deserializer` driven directly rather than through `from_slice`.

use conneg_cbor::{DecodeOptions, ErrorKind, UnknownFields};
use serde::Deserialize;
use serde_json::{Value, json};
use std::collections::BTreeMap;

fn cbor(v: &Value) -> Vec<u8> {
    conneg_cbor::to_vec(v).unwrap()
}

#[derive(Deserialize, Debug, PartialEq)]
struct Inner {
    a: u8,
}

#[derive(Deserialize, Debug, PartialEq)]
enum E {
    Unit,
    New(Inner),
    Tuple(u8, Vec<Inner>),
    Struct { a: u8, inner: Option<Inner> },
}

#[derive(Deserialize, Debug, PartialEq)]
struct Top {
    grid: Vec<Vec<u8>>,
    items: Vec<E>,
    by_name: BTreeMap<String, Inner>,
    opt: Option<Box<Top>>,
}

fn top() -> Value {
    json!({
        "grid": [[1, 2], [3, 4, 5]],
        "items": ["Unit", {"New": {"a": 1}}, {"Tuple": [1, [{"a": 2}, {"a": 3}]]},
                  {"Struct": {"a": 4, "inner": {"a": 5}}}],
        "by_name": {"x": {"a": 6}, "y\nz": {"a": 7}},
        "opt": null
    })
}

fn err_path(v: &Value) -> (String, String) {
    let e = conneg_cbor::from_slice::<Top>(&cbor(v)).unwrap_err();
    (e.path().to_string(), e.to_string())
}

#[test]
fn valid_input_decodes() {
    let t: Top = conneg_cbor::from_slice(&cbor(&top())).unwrap();
    assert_eq!(t.items[0], E::Unit);
    assert_eq!(t.by_name["y\nz"], Inner { a: 7 });
}

#[test]
fn error_paths_through_every_nesting() {
    let cases: Vec<(Value, Value, &str)> = vec![
        (json!(["grid", 1, 2]), json!(300), ".grid[1][2]"),
        (
            json!(["items", 1, "New", "a"]),
            json!(-1),
            ".items[1].New.a",
        ),
        (json!(["items", 1, "New"]), json!({"b": 1}), ".items[1].New"),
        (
            json!(["items", 2, "Tuple", 0]),
            json!("x"),
            ".items[2].Tuple[0]",
        ),
        (
            json!(["items", 2, "Tuple", 1, 1, "a"]),
            json!(256),
            ".items[2].Tuple[1][1].a",
        ),
        (
            json!(["items", 3, "Struct", "a"]),
            json!(true),
            ".items[3].Struct.a",
        ),
        (
            json!(["items", 3, "Struct", "inner", "a"]),
            json!("q"),
            ".items[3].Struct.inner.a",
        ),
        (
            json!(["items", 3, "Struct", "zz"]),
            json!(1),
            ".items[3].Struct",
        ),
        (json!(["by_name", "x", "a"]), json!(1.5), ".by_name.x.a"),
        (
            json!(["by_name", "y\nz", "a"]),
            json!([1]),
            ".by_name.y\\nz.a",
        ),
        (json!(["items", 0]), json!("Nope"), ".items[0]"),
        (
            json!(["items", 4]),
            json!({"Unit": 1, "New": 2}),
            ".items[4]",
        ),
    ];
    for (where_, to, want) in cases {
        let mut v = top();
        let mut slot = &mut v;
        for step in where_.as_array().unwrap() {
            slot = match step {
                Value::String(k) => slot
                    .as_object_mut()
                    .unwrap()
                    .entry(k.clone())
                    .or_insert(Value::Null),
                Value::Number(i) => {
                    let a = slot.as_array_mut().unwrap();
                    let i = i.as_u64().unwrap() as usize;
                    if a.len() <= i {
                        a.resize(i + 1, Value::Null);
                    }
                    &mut a[i]
                }
                _ => unreachable!(),
            };
        }
        *slot = to;
        let (path, shown) = err_path(&v);
        assert_eq!(path, want, "{shown}");
        assert!(shown.ends_with(&format!(" at {want}")), "{shown}");
    }

    // Nested through an option and a box: the same paths, one level down.
    let mut v = top();
    let mut inner = top();
    inner["grid"][0][1] = json!(-5);
    v["opt"] = inner;
    assert_eq!(err_path(&v).0, ".opt.grid[0][1]");
}

#[test]
fn error_paths_for_profile_errors_and_lengths() {
    // Invalid UTF-8 in a text string nested in arrays.
    let b = [
        0xa1, 0x61, b'g', 0x82, 0x80, 0x81, 0x62, 0xff, 0xfe, //
    ];
    let e = conneg_cbor::from_slice::<BTreeMap<String, Vec<Vec<String>>>>(&b).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidUtf8);
    assert_eq!(e.path(), ".g[1][0]");
    assert_eq!(e.offset(), Some(6));

    // A tuple with more elements than expected: reported at the array.
    let b = cbor(&json!({"t": [[1, 2, 3]]}));
    let e = conneg_cbor::from_slice::<BTreeMap<String, Vec<(u8, u8)>>>(&b).unwrap_err();
    assert_eq!(e.path(), ".t[0]");

    // A duplicate key deep down: reported at its map.
    let b = [
        0xa1, 0x41, b'm', 0x81, 0xa2, 0x41, b'k', 0x01, 0x61, b'k', 0x02,
    ];
    let e = conneg_cbor::from_slice::<Value>(&b).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::DuplicateKey);
    assert_eq!(e.path(), ".m[0]");

    // An indefinite-length key (joined in the key arena) names its level.
    let b = [
        0xa1, 0x7f, 0x61, b'a', 0x61, b'b', 0xff, 0xa1, 0x41, b'c', 0x63, b'x', 0xff, b'y',
    ];
    let e = conneg_cbor::from_slice::<Value>(&b).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidUtf8);
    assert_eq!(e.path(), ".ab.c");
}

#[test]
fn unknown_fields_being_skipped_name_their_key() {
    // An ignored unknown field whose value is malformed: the path names the unknown key, shown
    // lossily when the key is not UTF-8.
    let lax = DecodeOptions::new().unknown_fields(UnknownFields::Ignore);
    let b = [0xa2, 0x41, b'a', 0x01, 0x42, 0xff, b'q', 0x81, 0x61, 0xc3];
    let e = lax.from_slice::<Inner>(&b).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidUtf8);
    assert_eq!(e.path(), ".\u{fffd}q");
    let b = [0xa2, 0x41, b'a', 0x01, 0x42, b'\t', b'q', 0x81, 0x61, 0xc3];
    let e = lax.from_slice::<Inner>(&b).unwrap_err();
    assert_eq!(e.path(), ".\\tq");
}

#[test]
fn warnings_name_where_they_occurred() {
    let mut v = top();
    v["zTop"] = json!(1);
    v["items"][1]["New"]["b"] = json!(1);
    v["items"][2]["Tuple"][1][1]["c"] = json!([1]);
    v["items"][3]["Struct"]["d"] = json!({});
    v["items"][3]["Struct"]["inner"]["e"] = json!(null);
    v["by_name"]["y\nz"]["f"] = json!("g");
    let mut inner = top();
    inner["items"][1]["New"]["h"] = json!(2);
    v["opt"] = inner;
    let (t, w) = DecodeOptions::new()
        .from_slice_with_warnings::<Top>(&cbor(&v))
        .unwrap();
    assert_eq!(t.items[1], E::New(Inner { a: 1 }));
    let w: Vec<String> = w.iter().map(|w| w.to_string()).collect();
    assert_eq!(
        w,
        [
            // Input order: deterministic CBOR sorts keys (shorter first).
            r#"unknown field "h" at .opt.items[1].New"#,
            r#"unknown field "zTop""#,
            r#"unknown field "b" at .items[1].New"#,
            r#"unknown field "c" at .items[2].Tuple[1][1]"#,
            r#"unknown field "d" at .items[3].Struct"#,
            r#"unknown field "e" at .items[3].Struct.inner"#,
            r#"unknown field "f" at .by_name.y\nz"#,
        ]
    );
}

#[test]
fn a_deserializer_driven_directly_gives_full_paths() {
    let mut v = top();
    v["items"][2]["Tuple"][1][0]["a"] = json!("no");
    let b = cbor(&v);
    let mut de = conneg_cbor::Deserializer::from_slice(&b);
    let e = Top::deserialize(&mut de).unwrap_err();
    assert_eq!(e.path(), ".items[2].Tuple[1][0].a");
    assert_eq!(e.path(), ".items[2].Tuple[1][0].a");
    assert!(
        e.to_string().ends_with(" at .items[2].Tuple[1][0].a"),
        "{e}"
    );
    assert!(format!("{e:?}").contains(r#"path: ".items[2].Tuple[1][0].a""#));
}
