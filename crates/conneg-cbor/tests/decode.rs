//! `decode` reads a type through its derived `Decode` and leaves whatever that does not take to
//! serde: it must give exactly what `from_slice` gives, value or error, on every input and with
//! every option. Checked on the benchmark's Kubernetes objects (as encoded, and with every byte
//! changed or cut), on the profile's rules and on each serde attribute the derive reads (deep
//! nesting: `tests/deep.rs`); and the direct path must really be the one taken where it can.

use conneg_cbor::{
    Decode, DecodeOptions, Decoder, EncodeOptions, ErrorKind, UnknownFields, UseSerde,
};
use serde::Deserialize;
use serde::de::DeserializeOwned;
use serde_json::json;
use std::fmt::Debug;

#[path = "../benches/k8s/mod.rs"]
mod k8s;

/// Both decodes of `b` with `opts`: the same value, or the same error (kind, offset, path and
/// message).
fn same_outcome<T>(b: &[u8], opts: DecodeOptions) -> Result<(), String>
where
    T: Decode + DeserializeOwned + PartialEq + Debug,
{
    let via_serde = opts.from_slice::<T>(b);
    let direct = opts.decode::<T>(b);
    match (&via_serde, &direct) {
        (Ok(x), Ok(y)) if x == y => Ok(()),
        (Err(x), Err(y)) if format!("{x:?}") == format!("{y:?}") => Ok(()),
        _ => Err(format!(
            "{b:02x?}: from_slice {via_serde:?}, decode {direct:?}"
        )),
    }
}

fn option_sets() -> [DecodeOptions; 3] {
    [
        DecodeOptions::default(),
        DecodeOptions::default().unknown_fields(UnknownFields::Ignore),
        DecodeOptions::default()
            .max_depth(4)
            .max_map_pairs(6)
            .max_array_len(2),
    ]
}

/// The object in each encoding a peer may send: deterministic, fast (fields in declaration
/// order) and with text strings.
fn encodings<T: serde::Serialize>(x: &T) -> Vec<Vec<u8>> {
    vec![
        conneg_cbor::to_vec(x).unwrap(),
        EncodeOptions::fast().to_vec(x).unwrap(),
        EncodeOptions::deterministic()
            .string_encoding(conneg_cbor::StringEncoding::Text)
            .to_vec(x)
            .unwrap(),
    ]
}

#[test]
fn the_benchmark_objects_decode_to_themselves() {
    let pod: k8s::Pod = serde_json::from_value(k8s::pod_value()).unwrap();
    let cr: k8s::PostgresCluster = serde_json::from_value(k8s::cr_value()).unwrap();
    let list: k8s::PodList = serde_json::from_value(k8s::pod_list_value(64 << 10)).unwrap();
    for b in encodings(&pod) {
        assert_eq!(conneg_cbor::decode::<k8s::Pod>(&b).unwrap(), pod);
    }
    for b in encodings(&cr) {
        assert_eq!(conneg_cbor::decode::<k8s::PostgresCluster>(&b).unwrap(), cr);
    }
    for b in encodings(&list) {
        assert_eq!(conneg_cbor::decode::<k8s::PodList>(&b).unwrap(), list);
    }
}

/// Each of `positions` of `b` replaced by a set of values that change its type, length or
/// meaning, and `b` cut there: both ways agree, with every option set.
fn mutations_agree<T>(b: &[u8], positions: impl Iterator<Item = usize>)
where
    T: Decode + DeserializeOwned + PartialEq + Debug,
{
    let mut failures = Vec::new();
    let mut check = |m: &[u8]| {
        for opts in option_sets() {
            if let Err(e) = same_outcome::<T>(m, opts) {
                failures.push(e);
            }
        }
    };
    for i in positions {
        let orig = b[i];
        let replacements = [
            0x00,
            0x17,
            0x18,
            0x1b,
            0x20,
            0x3b,
            0x40,
            0x41,
            0x5f,
            0x60,
            0x61,
            0x7f,
            0x80,
            0x9f,
            0xa0,
            0xa1,
            0xbf,
            0xc0,
            0xc1,
            0xd9,
            0xf4,
            0xf5,
            0xf6,
            0xf7,
            0xf9,
            0xfa,
            0xfb,
            0xff,
            orig ^ 0x20,
            orig.wrapping_add(1),
            orig.wrapping_sub(1),
        ];
        let mut m = b.to_vec();
        for r in replacements {
            m[i] = r;
            check(&m);
        }
        check(&b[..i]);
    }
    assert!(
        failures.is_empty(),
        "{} differ, first: {}",
        failures.len(),
        failures[0]
    );
}

/// Every byte of the custom resource, and every third of the Pod (whose ports and probes are
/// `IntOrString`s, decoded through serde from inside `Decode`).
#[test]
fn every_changed_or_cut_byte_decodes_the_same_both_ways() {
    let cr: k8s::PostgresCluster = serde_json::from_value(k8s::cr_value()).unwrap();
    let b = conneg_cbor::to_vec(&cr).unwrap();
    mutations_agree::<k8s::PostgresCluster>(&b, 0..b.len());
    let pod: k8s::Pod = serde_json::from_value(k8s::pod_value()).unwrap();
    let b = conneg_cbor::to_vec(&pod).unwrap();
    mutations_agree::<k8s::Pod>(&b, (0..b.len()).step_by(3));
}

#[derive(conneg_cbor::Decode, Deserialize, Debug, PartialEq, Default)]
#[serde(rename_all = "camelCase")]
struct Attrs {
    plain_name: String,
    #[serde(rename = "other")]
    renamed: u32,
    #[serde(rename(serialize = "ser", deserialize = "de"))]
    split: Option<i64>,
    #[serde(default)]
    defaulted: Vec<String>,
    #[serde(default = "seven")]
    seven: u8,
    #[serde(skip_deserializing)]
    skipped: bool,
    #[serde(deserialize_with = "doubled", default)]
    doubled: u64,
    #[serde(alias = "aka")]
    aliased: Option<String>,
    value: Option<serde_json::Value>,
    nested: Option<Box<Attrs>>,
    float: Option<f64>,
    /// Which path decoded the struct (see `Which`).
    which: Option<Which>,
}

fn seven() -> u8 {
    7
}

fn doubled<'de, D: serde::Deserializer<'de>>(d: D) -> Result<u64, D::Error> {
    u64::deserialize(d).map(|n| n * 2)
}

#[test]
fn serde_attributes_mean_the_same_both_ways() {
    let cases = [
        json!({"plainName": "a", "other": 1}),
        json!({"plainName": "a", "other": 1, "de": -3, "defaulted": ["x"], "seven": 8}),
        json!({"plainName": "a", "other": 1, "doubled": 21, "aka": "via alias"}),
        json!({"plainName": "a", "other": 1, "aliased": "b", "value": {"any": [1, "x", null]}}),
        json!({"plainName": "a", "other": 1, "nested": {"plainName": "b", "other": 2}}),
        json!({"plainName": "a", "other": 1, "float": 1.5, "split": null}),
        // Skipped on decode, so unknown; serialize-only name, so unknown.
        json!({"plainName": "a", "other": 1, "skipped": true}),
        json!({"plainName": "a", "other": 1, "ser": 1}),
        // Missing required, wrong types, out of range.
        json!({"plainName": "a"}),
        json!({"plainName": 1, "other": 1}),
        json!({"plainName": "a", "other": -1}),
        json!({"plainName": "a", "other": 4294967296u64}),
        json!({"plainName": "a", "other": 1, "seven": 256}),
        json!({"plainName": "a", "other": 1, "float": 2}),
        json!(["a", 1]),
        json!(null),
    ];
    for case in cases {
        for b in encodings(&case) {
            for opts in option_sets() {
                same_outcome::<Attrs>(&b, opts).unwrap();
            }
        }
    }
    // Valid input with the attributes in play is read by the derived `decode` itself.
    let all = json!({"plainName": "a", "other": 1, "de": 2, "doubled": 3, "which": 0,
        "nested": {"plainName": "b", "other": 2}, "value": [1], "float": 0.5});
    let d: Attrs = conneg_cbor::decode(&conneg_cbor::to_vec(&all).unwrap()).unwrap();
    assert_eq!(d.which, Some(Which("Decode")));
    assert_eq!(
        (d.split, d.doubled, d.seven, d.defaulted.len(), d.skipped),
        (Some(2), 6, 7, 0, false)
    );
}

#[test]
fn profile_rules_hold_both_ways() {
    let hex = |s: &str| -> Vec<u8> {
        (0..s.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
            .collect()
    };
    let cases = [
        // {"plainName": "a", "other": 1, "other": 2}: a repeated field.
        "a3 49 706c61696e4e616d65 41 61 45 6f74686572 01 45 6f74686572 02",
        // The same key once as a byte string, once as a text string.
        "a3 49 706c61696e4e616d65 41 61 45 6f74686572 01 65 6f74686572 02",
        // An indefinite-length map, then one with a tag in front of a value.
        "bf 49 706c61696e4e616d65 41 61 45 6f74686572 01 ff",
        "a2 49 706c61696e4e616d65 c1 41 61 45 6f74686572 01",
        // Invalid UTF-8 in a string value, then in a key.
        "a2 49 706c61696e4e616d65 41 ff 45 6f74686572 01",
        "a3 49 706c61696e4e616d65 41 61 45 6f74686572 01 41 ff 01",
        // A duplicate key in a `Value`, NaN, undefined, an integer past i64.
        "a3 49 706c61696e4e616d65 41 61 45 6f74686572 01 45 76616c7565 a2 41 61 01 41 61 02",
        "a3 49 706c61696e4e616d65 41 61 45 6f74686572 01 45 666c6f6174 f9 7e00",
        "a3 49 706c61696e4e616d65 41 61 45 6f74686572 01 45 666c6f6174 f7",
        "a2 49 706c61696e4e616d65 41 61 45 6f74686572 1b 8000000000000000",
        // Trailing data, and an empty input.
        "a2 49 706c61696e4e616d65 41 61 45 6f74686572 01 00",
        "",
    ];
    for case in cases {
        let b = hex(&case.replace(' ', ""));
        for prefix in [&[][..], &conneg_cbor::SELF_DESCRIBED_PREFIX[..]] {
            let b = [prefix, &b].concat();
            for opts in option_sets() {
                same_outcome::<Attrs>(&b, opts).unwrap();
            }
        }
    }
}

/// A type whose `Decode` and `Deserialize` disagree on purpose, to see which one ran.
#[derive(Debug, PartialEq)]
struct Which(&'static str);

impl Decode for Which {
    fn decode(d: &mut Decoder<'_, '_>) -> Result<Self, UseSerde> {
        u8::decode(d).map(|_| Which("Decode"))
    }
}

impl<'de> Deserialize<'de> for Which {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        u8::deserialize(d).map(|_| Which("serde"))
    }
}

#[derive(conneg_cbor::Decode, Deserialize, Debug, PartialEq)]
struct Holder {
    which: Which,
}

#[test]
fn the_direct_path_runs_where_it_can_and_serde_elsewhere() {
    let plain = conneg_cbor::to_vec(&json!({"which": 1})).unwrap();
    assert_eq!(
        conneg_cbor::decode::<Holder>(&plain).unwrap().which,
        Which("Decode")
    );
    assert_eq!(
        conneg_cbor::from_slice::<Holder>(&plain).unwrap().which,
        Which("serde")
    );
    // An unknown field, ignored by these options: the serde path decodes the input.
    let extra = conneg_cbor::to_vec(&json!({"which": 1, "x": 0})).unwrap();
    let opts = DecodeOptions::default().unknown_fields(UnknownFields::Ignore);
    assert_eq!(opts.decode::<Holder>(&extra).unwrap().which, Which("serde"));
    assert_eq!(
        conneg_cbor::decode::<Holder>(&extra).unwrap_err().kind(),
        ErrorKind::UnknownField
    );
}
