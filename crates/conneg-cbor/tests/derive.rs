//! `#[derive(conneg_cbor::Serialize)]` against `#[derive(serde::Serialize)]` on the same
//! structs: JSON must be byte for byte the same (declaration order, same keys, same skipping),
//! deterministic CBOR the same as the same data sorted as `serde_json::Value` maps, fast CBOR the
//! same as serde's (declaration order). And the encoder must not trust the derive blindly: an
//! impl that claims canonical order and breaks it still gets sorted bytes, or a duplicate-key
//! error.

use conneg_cbor::{EncodeOptions, ErrorKind};
use proptest::prelude::*;
use serde::ser::{SerializeStruct, Serializer};
use std::collections::BTreeMap;

fn det(v: &impl serde::Serialize) -> conneg_cbor::Result<Vec<u8>> {
    EncodeOptions::deterministic().to_vec(v)
}

fn fast(v: &impl serde::Serialize) -> Vec<u8> {
    EncodeOptions::fast().to_vec(v).unwrap()
}

/// The reference: the same data as `serde_json::Value` maps.
fn as_map(v: &impl serde::Serialize) -> Vec<u8> {
    det(&serde_json::to_value(v).unwrap()).unwrap()
}

/// Defines the same structs twice: in `ours` with `conneg_cbor::Serialize`, in `theirs` with
/// serde's (both with serde's `Deserialize`, which also reads the attributes the derive passes
/// over, and turns one twin into the other through JSON).
macro_rules! twins {
    ($($(#[$attr:meta])* struct $name:ident $(<$($g:tt),*>)? { $($(#[$fattr:meta])* $field:ident : $ty:ty,)* })*) => {
        mod ours {
            #![allow(dead_code, unreachable_pub)]
            use super::*;
            $(
                #[derive(conneg_cbor::Serialize, serde::Deserialize, Clone, Debug, Default)]
                $(#[$attr])*
                pub struct $name $(<$($g),*>)? { $($(#[$fattr])* pub $field: $ty,)* }
            )*
        }
        mod theirs {
            #![allow(dead_code, unreachable_pub)]
            use super::*;
            $(
                #[derive(serde::Serialize, serde::Deserialize, Clone, Debug, Default)]
                $(#[$attr])*
                pub struct $name $(<$($g),*>)? { $($(#[$fattr])* pub $field: $ty,)* }
            )*
        }
    };
}

twins! {
    #[serde(rename_all = "camelCase")]
    struct Meta {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        name: Option<String>,
        #[serde(skip_serializing_if = "Option::is_none")]
        generate_name: Option<String>,
        #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
        labels: BTreeMap<String, String>,
        #[serde(rename = "uid", alias = "UID")]
        identifier: String,
        #[serde(skip_serializing_if = "Option::is_none")]
        generation: Option<i64>,
        #[serde(skip)]
        cache: u8,
    }

    #[serde(rename_all = "SCREAMING-KEBAB-CASE", deny_unknown_fields)]
    struct Shouting {
        spec_a: u8,
        #[serde(rename(serialize = "B", deserialize = "B"))]
        spec_b: u8,
        #[serde(skip_serializing, default)]
        hidden: u8,
        long_field_name: Vec<u8>,
        #[serde(with = "upper")]
        motto: String,
    }

    #[serde(rename = "Renamed", rename_all = "PascalCase")]
    struct Pascal {
        r#type: String,
        kind: String,
        spec: String,
        api_version: String,
        #[serde(skip_serializing_if = "Option::is_none")]
        status: Option<Box<Pascal>>,
    }

    struct Generic<T> {
        zzz: T,
        a: Vec<T>,
        mm: Option<T>,
    }

    struct Empty {}

    struct OneEmptyKey {
        #[serde(rename = "")]
        empty: u8,
        b: u8,
    }

    #[serde(rename_all = "camelCase")]
    struct Object {
        api_version: String,
        kind: String,
        metadata: Meta,
        #[serde(default)]
        shout: Shouting,
        pascal: Pascal,
        generic: Generic<Meta>,
        empty: Empty,
        empty_key: OneEmptyKey,
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        items: Vec<Object>,
    }
}

/// A `with` module: upper case on the wire, lower case in memory.
mod upper {
    use serde::{Deserialize, Deserializer, Serializer};

    pub(crate) fn serialize<S: Serializer>(v: &str, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&v.to_uppercase())
    }

    pub(crate) fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<String, D::Error> {
        Ok(String::deserialize(d)?.to_lowercase())
    }
}

/// serde's twin of one of our values (the twins share their JSON shape).
fn twin(o: &ours::Object) -> theirs::Object {
    serde_json::from_value(serde_json::to_value(o).unwrap()).unwrap()
}

fn meta() -> impl Strategy<Value = ours::Meta> {
    (
        proptest::option::of("[a-z]{0,3}"),
        proptest::option::of("[a-z]{0,3}"),
        proptest::collection::btree_map("[a-z.]{0,5}", "[a-z]{0,2}", 0..4),
        "[a-z]{0,3}",
        proptest::option::of(any::<i64>()),
    )
        .prop_map(
            |(name, generate_name, labels, identifier, generation)| ours::Meta {
                name,
                generate_name,
                labels,
                identifier,
                generation,
                cache: 7,
            },
        )
}

fn object() -> impl Strategy<Value = ours::Object> {
    let leaf = (
        meta(),
        any::<u8>(),
        "[a-z]{0,3}",
        proptest::collection::vec(meta(), 0..3),
    )
        .prop_map(|(m, n, s, ms)| ours::Object {
            api_version: s.clone(),
            kind: "K".into(),
            metadata: m.clone(),
            shout: ours::Shouting {
                spec_a: n,
                spec_b: n / 2,
                hidden: 1,
                long_field_name: vec![n; (n % 3) as usize],
                motto: s.clone(),
            },
            pascal: ours::Pascal {
                r#type: s.clone(),
                kind: "k".into(),
                spec: "s".into(),
                api_version: "v".into(),
                status: (n % 2 == 0).then(|| {
                    Box::new(ours::Pascal {
                        r#type: "t".into(),
                        kind: s.clone(),
                        spec: String::new(),
                        api_version: String::new(),
                        status: None,
                    })
                }),
            },
            generic: ours::Generic {
                zzz: m.clone(),
                a: ms,
                mm: (n % 3 == 0).then_some(m),
            },
            empty: ours::Empty {},
            empty_key: ours::OneEmptyKey { empty: n, b: 1 },
            items: Vec::new(),
        });
    leaf.prop_recursive(2, 8, 3, |inner| {
        (inner.clone(), proptest::collection::vec(inner, 0..3)).prop_map(|(mut o, items)| {
            o.items = items;
            o
        })
    })
}

proptest! {
    #[test]
    fn the_derive_encodes_like_serdes(o in object()) {
        let json_theirs = twin(&o);
        // JSON: the same bytes, so the same order.
        prop_assert_eq!(serde_json::to_string(&o).unwrap(), serde_json::to_string(&json_theirs).unwrap());
        // Deterministic CBOR: sorted like Value maps, and what serde's derive gives.
        let ours_det = det(&o).unwrap();
        prop_assert_eq!(&ours_det, &as_map(&o));
        prop_assert_eq!(&ours_det, &det(&json_theirs).unwrap());
        // Fast CBOR: declaration order, like serde's derive.
        prop_assert_eq!(fast(&o), fast(&json_theirs));
        // Inside collections and next to serde-derived values in one encode.
        let both = (vec![o.clone(), o.clone()], &json_theirs, BTreeMap::from([("k", &o)]));
        prop_assert_eq!(det(&both).unwrap(), as_map(&both));
    }
}

/// A `Pascal` whose keys are three of four letters and one longer.
fn pascal() -> ours::Pascal {
    ours::Pascal {
        r#type: "t".into(),
        kind: "k".into(),
        spec: "s".into(),
        api_version: "v".into(),
        status: None,
    }
}

#[test]
fn keys_are_written_shortest_first_then_bytewise() {
    let p = pascal();
    let bytes = EncodeOptions::deterministic()
        .self_described(false)
        .string_encoding(conneg_cbor::StringEncoding::Text)
        .to_vec(&p)
        .unwrap();
    // {"Kind", "Spec", "Type", "ApiVersion"}: four-letter keys bytewise, then the longer one.
    assert_eq!(
        bytes,
        b"\xa4\x64Kind\x61k\x64Spec\x61s\x64Type\x61t\x6aApiVersion\x61v"
    );
    assert_eq!(
        serde_json::to_string(&p).unwrap(),
        r#"{"Type":"t","Kind":"k","Spec":"s","ApiVersion":"v"}"#
    );
}

/// Begins a struct on whatever serializer it is given, then encodes a derived struct to JSON
/// with serde_json before its first field: the derived struct must not take the deterministic
/// serializer's offer, which was for this one.
struct JsonInside(ours::Pascal);

impl serde::Serialize for JsonInside {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut st = s.serialize_struct("JsonInside", 2)?;
        let json = serde_json::to_string(&self.0).unwrap();
        st.serialize_field("json", &json)?;
        st.serialize_field("a", &1)?;
        st.end()
    }
}

#[test]
fn other_serializers_inside_an_encode_keep_declaration_order() {
    let p = pascal();
    let v = JsonInside(p.clone());
    let bytes = det(&v).unwrap();
    let back: BTreeMap<String, serde_json::Value> = conneg_cbor::from_slice(&bytes).unwrap();
    assert_eq!(back["json"], serde_json::to_string(&p).unwrap());
    assert!(back["json"].as_str().unwrap().starts_with(r#"{"Type""#));
    assert_eq!(bytes, as_map(&v));
    // And after the encode, on the same thread.
    assert!(serde_json::to_string(&p).unwrap().starts_with(r#"{"Type""#));
}

/// An impl that takes the canonical-order offer, as the derive does, then hands its fields out
/// in whatever order (and with whatever values) it holds.
struct Liar(Vec<(&'static str, Field)>);

/// A field's value: a tree, or the same tree as a raw CBOR item written verbatim.
#[derive(Clone, Debug)]
enum Field {
    Tree(serde_json::Value),
    Raw(conneg_cbor::RawExtension),
}

impl serde::Serialize for Field {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Field::Tree(v) => v.serialize(s),
            Field::Raw(r) => r.serialize(s),
        }
    }
}

static LIAR: &str = "Liar";

impl serde::Serialize for Liar {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut st = s.serialize_struct(LIAR, self.0.len())?;
        conneg_cbor::__private::canonical_order(LIAR);
        for (k, v) in &self.0 {
            st.serialize_field(k, v)?;
        }
        st.end()
    }
}

fn value() -> impl Strategy<Value = serde_json::Value> {
    let leaf = prop_oneof![
        any::<i64>().prop_map(serde_json::Value::from),
        "[a-z]{0,30}".prop_map(serde_json::Value::from),
        Just(serde_json::Value::Null),
    ];
    leaf.prop_recursive(3, 16, 4, |inner| {
        prop_oneof![
            proptest::collection::vec(inner.clone(), 0..4).prop_map(serde_json::Value::from),
            proptest::collection::btree_map("[a-c]{0,2}", inner, 0..4)
                .prop_map(|m| serde_json::Value::Object(m.into_iter().collect())),
        ]
    })
}

const KEYS: [&str; 7] = ["a", "b", "bb", "ab", "kind", "spec", "apiVersion"];

proptest! {
    #[test]
    fn a_broken_promise_still_gives_sorted_bytes(
        fields in proptest::collection::vec(
            (proptest::sample::select(KEYS.to_vec()), value(), any::<bool>()),
            0..7,
        ),
    ) {
        // Some values are raw items, written verbatim, which the encoder must walk back over.
        let liar = Liar(
            fields
                .iter()
                .map(|(k, v, raw)| {
                    let f = if *raw {
                        Field::Raw(conneg_cbor::RawExtension::cbor_of(v).unwrap())
                    } else {
                        Field::Tree(v.clone())
                    };
                    (*k, f)
                })
                .collect(),
        );
        let mut want = BTreeMap::new();
        let dup = liar.0.iter().any(|(k, f)| want.insert(*k, f.clone()).is_some());
        match det(&liar) {
            Err(e) => prop_assert!(dup && e.kind() == ErrorKind::DuplicateKey, "{e}"),
            Ok(bytes) => {
                prop_assert!(!dup);
                prop_assert_eq!(bytes, det(&want).unwrap());
            }
        }
    }
}

/// Borrowed fields, a lifetime and a where clause of the struct's own.
#[derive(conneg_cbor::Serialize)]
struct Borrowed<'a, T>
where
    T: Clone,
{
    metadata: &'a BTreeMap<String, T>,
    kind: &'a str,
    #[serde(skip_serializing_if = "<[T]>::is_empty")]
    items: &'a [T],
}

#[test]
fn lifetimes_and_where_clauses() {
    let labels = BTreeMap::from([("app".to_string(), 1u8), ("tier".to_string(), 2)]);
    for items in [&[][..], &[3u8, 4][..]] {
        let b = Borrowed {
            metadata: &labels,
            kind: "K",
            items,
        };
        let json = serde_json::to_string(&b).unwrap();
        assert!(json.starts_with(r#"{"metadata":"#), "{json}");
        assert_eq!(det(&b).unwrap(), as_map(&b));
    }
}

/// `serialize_with` on a generic struct's field whose type names the parameter.
#[derive(conneg_cbor::Serialize)]
struct Counted<'a, T> {
    #[serde(serialize_with = "count")]
    items: &'a [T],
    kind: &'static str,
}

fn count<T, S: Serializer>(items: &&[T], s: S) -> Result<S::Ok, S::Error> {
    s.serialize_u64(items.len() as u64)
}

#[test]
fn serialize_with_on_a_generic_struct() {
    let c = Counted {
        items: &["a", "b", "c"][..],
        kind: "K",
    };
    assert_eq!(
        serde_json::to_string(&c).unwrap(),
        r#"{"items":3,"kind":"K"}"#
    );
    assert_eq!(det(&c).unwrap(), as_map(&c));
    assert_eq!(
        conneg_cbor::from_slice::<BTreeMap<String, serde_json::Value>>(&det(&c).unwrap()).unwrap(),
        BTreeMap::from([("items".into(), 3.into()), ("kind".into(), "K".into())]),
    );
}
