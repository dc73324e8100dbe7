//! Deterministic encoding of structs: whatever the values, the fields present (serde's
//! `skip_serializing_if`), the nesting, and the order a `Serialize` impl hands the fields out in,
//! the bytes must be those of the same data as `serde_json::Value` maps, whose entries are sorted
//! one by one. Structs are where an encoder is tempted to precompute or cache an order per type
//! (Go's encoder sorts struct fields once per type); these tests pin the output of any such
//! scheme, including types that share a name and types that vary their fields between values.

use conneg_cbor::{EncodeOptions, ErrorKind};
use proptest::prelude::*;
use serde::Serialize;
use serde::ser::{SerializeStruct, Serializer};
use std::collections::BTreeMap;

fn det(v: &impl Serialize) -> conneg_cbor::Result<Vec<u8>> {
    EncodeOptions::deterministic().to_vec(v)
}

/// The reference: the same data as `serde_json::Value` maps.
fn as_map(v: &impl Serialize) -> Vec<u8> {
    det(&serde_json::to_value(v).unwrap()).unwrap()
}

#[derive(Serialize, Debug, Clone)]
#[serde(rename_all = "camelCase")]
struct Meta {
    #[serde(skip_serializing_if = "Option::is_none")]
    name: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    namespace: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    uid: Option<String>,
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    labels: BTreeMap<String, String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    generation: Option<i64>,
}

#[derive(Serialize, Debug, Clone)]
#[serde(rename_all = "camelCase")]
struct Spec {
    #[serde(skip_serializing_if = "Vec::is_empty")]
    zz: Vec<Meta>,
    a: u8,
    #[serde(skip_serializing_if = "Option::is_none")]
    replicas: Option<i32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    b: Option<Box<Spec>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    selector: Option<Meta>,
}

#[derive(Serialize, Debug, Clone)]
#[serde(rename_all = "camelCase")]
struct Object {
    api_version: String,
    kind: String,
    metadata: Meta,
    spec: Spec,
    #[serde(skip_serializing_if = "Option::is_none")]
    status: Option<Meta>,
}

fn meta() -> impl Strategy<Value = Meta> {
    (
        proptest::option::of("[a-z]{0,3}"),
        proptest::option::of("[a-z]{0,3}"),
        proptest::option::of("[a-z]{0,3}"),
        proptest::collection::btree_map("[a-z]{0,3}", "[a-z]{0,2}", 0..3),
        proptest::option::of(any::<i64>()),
    )
        .prop_map(|(name, namespace, uid, labels, generation)| Meta {
            name,
            namespace,
            uid,
            labels,
            generation,
        })
}

fn spec() -> impl Strategy<Value = Spec> {
    let leaf = (
        proptest::collection::vec(meta(), 0..2),
        any::<u8>(),
        proptest::option::of(any::<i32>()),
        proptest::option::of(meta()),
    )
        .prop_map(|(zz, a, replicas, selector)| Spec {
            zz,
            a,
            replicas,
            b: None,
            selector,
        });
    leaf.prop_recursive(3, 8, 2, |inner| {
        (inner, proptest::option::of(meta())).prop_map(|(s, sel)| Spec {
            b: Some(Box::new(s.clone())),
            selector: sel,
            ..s
        })
    })
}

fn object() -> impl Strategy<Value = Object> {
    (
        "[a-z/0-9]{0,8}",
        "[A-Za-z]{0,6}",
        meta(),
        spec(),
        proptest::option::of(meta()),
    )
        .prop_map(|(api_version, kind, metadata, spec, status)| Object {
            api_version,
            kind,
            metadata,
            spec,
            status,
        })
}

proptest! {
    #[test]
    fn derived_structs_encode_like_maps(objs in proptest::collection::vec(object(), 1..4)) {
        // Several values in a row on one thread, so later ones run on what earlier ones taught.
        for o in &objs {
            prop_assert_eq!(det(o).unwrap(), as_map(o));
        }
        prop_assert_eq!(det(&objs).unwrap(), as_map(&objs));
    }
}

/// A hand-written `Serialize` with one struct name whose fields come in an order (and set) that
/// changes from value to value: any order remembered for the type is wrong half the time.
struct Shifty {
    fields: Vec<(&'static str, u32)>,
}

impl Serialize for Shifty {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut st = s.serialize_struct("Shifty", self.fields.len())?;
        for (k, v) in &self.fields {
            st.serialize_field(k, v)?;
        }
        st.end()
    }
}

const NAMES: [&str; 6] = ["a", "bb", "c", "status", "kind", "apiVersion"];

proptest! {
    #[test]
    fn fields_in_any_order_encode_like_maps(
        orders in proptest::collection::vec(Just(NAMES.to_vec()).prop_shuffle(), 1..6),
        keep in proptest::collection::vec(any::<bool>(), 6),
    ) {
        for order in orders {
            let fields: Vec<_> = order
                .iter()
                .zip(&keep)
                .filter(|(_, k)| **k)
                .map(|(n, _)| (*n, n.len() as u32))
                .collect();
            let s = Shifty { fields };
            let want: BTreeMap<_, _> = s.fields.iter().copied().collect();
            prop_assert_eq!(det(&s).unwrap(), det(&want).unwrap());
            // Nested in a derived struct too, between fields that sort around it.
            let outer = Wrap { zzz: 1, s: &s, a: 2 };
            prop_assert_eq!(det(&outer).unwrap(), det(&WrapMap { zzz: 1, s: &want, a: 2 }).unwrap());
        }
    }
}

#[derive(Serialize)]
struct Wrap<'a> {
    zzz: u8,
    s: &'a Shifty,
    a: u8,
}

#[derive(Serialize)]
struct WrapMap<'a> {
    zzz: u8,
    s: &'a BTreeMap<&'static str, u32>,
    a: u8,
}

#[test]
fn a_repeated_field_is_a_duplicate_key_however_it_was_placed() {
    for fields in [
        vec![("kind", 1), ("kind", 2)],
        vec![("apiVersion", 1), ("kind", 2), ("apiVersion", 3)],
        vec![("kind", 1), ("spec", 2), ("kind", 3)],
    ] {
        // Twice: a type's first value and a later one may take different paths.
        for _ in 0..2 {
            let err = det(&Shifty {
                fields: fields.clone(),
            })
            .unwrap_err();
            assert_eq!(err.kind(), ErrorKind::DuplicateKey, "{fields:?}");
        }
    }
}

mod one {
    #[derive(serde::Serialize)]
    pub(crate) struct Status {
        pub(crate) zeta: u8,
        pub(crate) a: u8,
    }
}

mod two {
    #[derive(serde::Serialize)]
    pub(crate) struct Status {
        pub(crate) b: u8,
        pub(crate) yy: u8,
        pub(crate) c: u8,
    }
}

#[test]
fn types_sharing_a_name_do_not_confuse_each_other() {
    for _ in 0..3 {
        let x = one::Status { zeta: 1, a: 2 };
        let y = two::Status { b: 3, yy: 4, c: 5 };
        assert_eq!(det(&x).unwrap(), as_map(&x));
        assert_eq!(det(&y).unwrap(), as_map(&y));
        assert_eq!(det(&(&x, &y)).unwrap(), as_map(&(&x, &y)));
    }
}

#[test]
fn a_failing_field_leaves_the_next_encode_clean() {
    #[derive(Serialize)]
    struct Bad {
        zz: u8,
        kind: f64,
        a: u8,
    }
    #[derive(Serialize)]
    struct Outer {
        zzzz: Bad,
        b: u8,
    }
    let bad = Outer {
        zzzz: Bad {
            zz: 1,
            kind: f64::NAN,
            a: 2,
        },
        b: 3,
    };
    for _ in 0..2 {
        assert!(det(&bad).is_err());
        let ok = Outer {
            zzzz: Bad {
                zz: 1,
                kind: 0.5,
                a: 2,
            },
            b: 3,
        };
        assert_eq!(det(&ok).unwrap(), as_map(&ok));
    }
}

#[test]
fn fast_mode_keeps_declaration_order() {
    let o = Wrap {
        zzz: 1,
        s: &Shifty { fields: vec![] },
        a: 2,
    };
    let fast = EncodeOptions::fast()
        .self_described(false)
        .to_vec(&o)
        .unwrap();
    assert_eq!(
        fast,
        [
            0xa3, 0x43, b'z', b'z', b'z', 0x01, 0x41, b's', 0xa0, 0x41, b'a', 0x02
        ]
    );
}

/// A struct whose name, fields and field order are all chosen at run time.
#[derive(Debug, Clone)]
enum Dyn {
    Leaf(u32),
    Struct(&'static str, Vec<(&'static str, Dyn)>),
}

impl Serialize for Dyn {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Dyn::Leaf(n) => s.serialize_u32(*n),
            Dyn::Struct(name, fields) => {
                let mut st = s.serialize_struct(name, fields.len())?;
                for (k, v) in fields {
                    st.serialize_field(k, v)?;
                }
                st.end()
            }
        }
    }
}

#[test]
fn a_nested_value_of_the_same_type_with_other_fields() {
    let leaf = || Dyn::Leaf(1);
    let t = |fields: Vec<(&'static str, Dyn)>| Dyn::Struct("Recursive", fields);
    // The first value has `b, zz`, in key order. In the second, a value of the same type nested
    // between the outer `b` and `a` brings the new field `a` first.
    let first = t(vec![("b", leaf()), ("zz", leaf())]);
    let second = t(vec![
        ("b", leaf()),
        ("zz", t(vec![("b", leaf()), ("zz", leaf()), ("a", leaf())])),
        ("a", leaf()),
    ]);
    for v in [first, second] {
        assert_eq!(det(&v).unwrap(), as_map(&v));
    }
}

/// A few common type names (so values of one type nest in each other) among many rare ones, and
/// field names of different lengths.
fn dyn_value() -> impl Strategy<Value = Dyn> {
    let names: &'static [&'static str] = Box::leak(
        (0..600)
            .map(|i| &*Box::leak(format!("T{i}").into_boxed_str()))
            .collect::<Vec<&'static str>>()
            .into_boxed_slice(),
    );
    let keys = ["a", "b", "zz", "kind", "spec", "metadata", "apiVersion"];
    let leaf = any::<u32>().prop_map(Dyn::Leaf);
    leaf.prop_recursive(4, 40, 6, move |inner| {
        (
            prop_oneof![
                proptest::sample::select(&names[..2]),
                proptest::sample::select(names)
            ],
            proptest::sample::subsequence(keys.to_vec(), 0..=keys.len()).prop_shuffle(),
            proptest::collection::vec(inner, 7),
        )
            .prop_map(|(name, ks, vs)| Dyn::Struct(name, ks.into_iter().zip(vs).collect()))
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]
    #[test]
    fn run_time_structs_encode_like_maps(v in dyn_value()) {
        prop_assert_eq!(det(&v).unwrap(), as_map(&v));
    }
}

// Per-type plans (src/plan.rs): a type's first value teaches the serializer its fields, later
// values follow the plan. The tests below encode each value several times, so that both the
// learning and the planned path run, and compare with the same data as sorted maps.

/// Field names whose encoded order is not their declaration order: length first ("b" before
/// "aa"), then bytes ("a" before "b"), and heads of one and two bytes (23 and 24 bytes).
#[derive(Serialize, Debug, Clone, Default)]
struct Awkward {
    #[serde(rename = "b", skip_serializing_if = "Option::is_none")]
    b: Option<u8>,
    #[serde(rename = "aa", skip_serializing_if = "Option::is_none")]
    aa: Option<u8>,
    #[serde(rename = "a", skip_serializing_if = "Option::is_none")]
    a: Option<u8>,
    #[serde(
        rename = "twenty-four-bytes-long!!",
        skip_serializing_if = "Option::is_none"
    )]
    long24: Option<u8>,
    #[serde(
        rename = "twenty-three-bytes-long",
        skip_serializing_if = "Option::is_none"
    )]
    long23: Option<u8>,
    #[serde(rename = "ab", skip_serializing_if = "Option::is_none")]
    ab: Option<Box<Awkward>>,
    #[serde(rename = "", skip_serializing_if = "Option::is_none")]
    empty: Option<u8>,
    #[serde(rename = "B", skip_serializing_if = "Option::is_none")]
    upper: Option<u8>,
}

fn awkward() -> impl Strategy<Value = Awkward> {
    let leaf = (
        proptest::option::of(any::<u8>()),
        proptest::option::of(any::<u8>()),
        proptest::option::of(any::<u8>()),
        proptest::option::of(any::<u8>()),
        proptest::option::of(any::<u8>()),
        proptest::option::of(any::<u8>()),
        proptest::option::of(any::<u8>()),
    )
        .prop_map(|(b, aa, a, long24, long23, empty, upper)| Awkward {
            b,
            aa,
            a,
            long24,
            long23,
            ab: None,
            empty,
            upper,
        });
    leaf.prop_recursive(3, 6, 1, |inner| {
        (inner.clone(), proptest::option::of(inner)).prop_map(|(mut outer, nested)| {
            outer.ab = nested.map(Box::new);
            outer
        })
    })
}

proptest! {
    #[test]
    fn any_subset_of_fields_encodes_like_a_map(vs in proptest::collection::vec(awkward(), 1..8)) {
        for v in &vs {
            prop_assert_eq!(det(v).unwrap(), as_map(v));
        }
        prop_assert_eq!(det(&vs).unwrap(), as_map(&vs));
    }
}

#[test]
fn a_type_first_seen_with_one_field_then_with_all() {
    // The first value skips all but one field (through `skip_field`), later ones have them all,
    // then none, then alternate.
    let one = Awkward {
        aa: Some(1),
        ..Awkward::default()
    };
    let all = Awkward {
        b: Some(1),
        aa: Some(2),
        a: Some(3),
        long24: Some(4),
        long23: Some(5),
        ab: Some(Box::new(one.clone())),
        empty: Some(6),
        upper: Some(7),
    };
    for v in [&one, &all, &Awkward::default(), &all, &one] {
        assert_eq!(det(v).unwrap(), as_map(v));
    }
}

/// A `Serialize` that skips fields without telling (no `skip_field` call), so that the plan
/// learned from its first value misses fields that later values have.
struct Quiet(&'static str, Vec<(&'static str, u32)>);

impl Serialize for Quiet {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut st = s.serialize_struct(self.0, self.1.len())?;
        for (k, v) in &self.1 {
            st.serialize_field(k, v)?;
        }
        st.end()
    }
}

#[test]
fn fields_a_plan_does_not_expect() {
    let values = [
        // Learned: zz, kind, a.
        ("Quiet", vec![("zz", 1), ("kind", 2), ("a", 3)]),
        // The plan, with a field skipped silently (found further on).
        ("Quiet", vec![("zz", 1), ("a", 3)]),
        // A field the plan does not know, after two it does: the struct leaves the plan.
        ("Quiet", vec![("zz", 1), ("kind", 2), ("b", 4), ("a", 3)]),
        // Known fields out of the plan's order.
        ("Quiet", vec![("zz", 1), ("a", 3), ("kind", 2)]),
        // An unknown first field: another plan.
        ("Quiet", vec![("b", 1), ("zz", 2)]),
        // A known field twice.
        ("Quiet", vec![("zz", 1), ("zz", 2)]),
        // Learned: zz, kind, spec. Then the two swapped: same lengths, other order.
        ("Quiet2", vec![("zz", 1), ("kind", 2), ("spec", 3)]),
        ("Quiet2", vec![("zz", 1), ("spec", 3), ("kind", 2)]),
        // An unknown field of the length of the one expected.
        ("Quiet2", vec![("zz", 1), ("aaaa", 2), ("kind", 3)]),
    ];
    for _ in 0..2 {
        for (name, fields) in &values {
            let want: BTreeMap<_, _> = fields.iter().copied().collect();
            let got = det(&Quiet(name, fields.clone()));
            if want.len() < fields.len() {
                assert_eq!(got.unwrap_err().kind(), ErrorKind::DuplicateKey);
            } else {
                assert_eq!(got.unwrap(), det(&want).unwrap(), "{fields:?}");
            }
        }
    }
}

#[test]
fn structs_with_more_fields_than_a_plan_covers() {
    let names: Vec<&'static str> = (0..70)
        .map(|i| &*Box::leak(format!("f{}", 69 - i).into_boxed_str()))
        .collect();
    for n in [63, 64, 65, 70] {
        let v = Dyn::Struct(
            "Wide",
            names[..n].iter().map(|&k| (k, Dyn::Leaf(1))).collect(),
        );
        for _ in 0..2 {
            assert_eq!(det(&v).unwrap(), as_map(&v), "{n}");
        }
    }
}

#[test]
fn more_types_than_the_plan_cache_holds() {
    // Distinct leaked type names, more than the cache keeps: the later ones compare keys.
    let mut all = Vec::new();
    for i in 0..1500 {
        let name: &'static str = Box::leak(format!("Many{i}").into_boxed_str());
        let v = Dyn::Struct(
            name,
            vec![
                ("kind", Dyn::Leaf(i)),
                ("a", Dyn::Leaf(2)),
                ("zz", Dyn::Leaf(3)),
            ],
        );
        assert_eq!(det(&v).unwrap(), as_map(&v));
        all.push(v);
    }
    assert_eq!(det(&all).unwrap(), as_map(&all));
}

#[derive(Serialize, Debug, Clone)]
#[serde(rename_all = "camelCase")]
enum Variant {
    Spec {
        replicas: u8,
        #[serde(skip_serializing_if = "Option::is_none")]
        b: Option<u8>,
        api_version: u8,
    },
    Other {
        b: u8,
    },
}

#[derive(Serialize, Debug, Clone)]
struct Flat {
    zz: u8,
    #[serde(flatten)]
    inner: Awkward,
    kind: Variant,
    c: u8,
}

#[test]
fn struct_variants_and_flattened_structs() {
    let inner = Awkward {
        b: Some(1),
        a: Some(2),
        long24: Some(3),
        ..Awkward::default()
    };
    for b in [None, Some(9), None] {
        for kind in [
            Variant::Spec {
                replicas: 1,
                b,
                api_version: 2,
            },
            Variant::Other { b: 5 },
        ] {
            let v = Flat {
                zz: 1,
                inner: inner.clone(),
                kind,
                c: 3,
            };
            assert_eq!(det(&v).unwrap(), as_map(&v));
        }
    }
}
