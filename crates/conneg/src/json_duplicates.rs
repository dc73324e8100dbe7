//! Duplicate keys in a JSON body, for `fieldValidation` (see codec.rs).
//!
//! serde's derived decoders fail on a struct field given twice (codec.rs then decodes the body
//! again through a `serde_json::Value`, where the last value wins), but maps (labels,
//! annotations, `Value`s) keep the last value silently, while Kubernetes' strict JSON decoding
//! reports every duplicate: `duplicate field "metadata.labels.app"`. This is that check: one more
//! walk over the body with serde_json, keys borrowed from it, a path spelled out only for a
//! duplicate. (A byte-level walk was measured at about the same cost, 6.0 us against 6.6 us for
//! the 4.7 KiB Pod fixture, and was not worth its code.)

use std::borrow::Cow;
use std::collections::HashSet;
use std::fmt;

/// Every duplicate object key in a (valid) JSON document, as `duplicate field "path"`.
pub(crate) fn json_duplicate_keys(body: &[u8]) -> Vec<String> {
    let mut scan = DupScan::default();
    let mut de = serde_json::Deserializer::from_slice(body);
    // The document already parsed once, so this cannot fail; ignore errors to be safe.
    let _ = serde::de::DeserializeSeed::deserialize(&mut scan, &mut de);
    scan.found
}

/// Walks any JSON value and records duplicate keys. Keys are borrowed from the body where they
/// have no escapes, and a path is only spelled out for a duplicate.
#[derive(Default)]
struct DupScan<'de> {
    path: Vec<PathSeg<'de>>,
    /// The first keys of every open map, innermost last.
    keys: Vec<Cow<'de, str>>,
    found: Vec<String>,
}

enum PathSeg<'de> {
    Key(Cow<'de, str>),
    Index(usize),
}

impl DupScan<'_> {
    fn report(&mut self, key: &str) {
        let mut path = String::new();
        for seg in &self.path {
            match seg {
                PathSeg::Key(k) => {
                    if !path.is_empty() {
                        path.push('.');
                    }
                    path.push_str(k);
                }
                PathSeg::Index(i) => {
                    path.push('[');
                    path.push_str(&i.to_string());
                    path.push(']');
                }
            }
        }
        if !path.is_empty() {
            path.push('.');
        }
        path.push_str(key);
        self.found.push(format!("duplicate field {path:?}"));
    }
}

impl<'de> serde::de::DeserializeSeed<'de> for &mut DupScan<'de> {
    type Value = ();

    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> serde::de::Visitor<'de> for &mut DupScan<'de> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_bool<E>(self, _: bool) -> Result<(), E> {
        Ok(())
    }

    fn visit_i64<E>(self, _: i64) -> Result<(), E> {
        Ok(())
    }

    fn visit_u64<E>(self, _: u64) -> Result<(), E> {
        Ok(())
    }

    fn visit_f64<E>(self, _: f64) -> Result<(), E> {
        Ok(())
    }

    fn visit_str<E>(self, _: &str) -> Result<(), E> {
        Ok(())
    }

    fn visit_unit<E>(self) -> Result<(), E> {
        Ok(())
    }

    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        let mut index = 0usize;
        loop {
            self.path.push(PathSeg::Index(index));
            let more = seq.next_element_seed(&mut *self)?.is_some();
            self.path.pop();
            if !more {
                return Ok(());
            }
            index += 1;
        }
    }

    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        // A map's first keys are compared one by one (most objects are small, and this runs on
        // every Warn body) in `self.keys`, one stack for all open maps, so no allocation per
        // map; the rest go to a hash set: n keys must not cost n² (a 3 MiB body can hold
        // 100,000 of them).
        const FEW: usize = 16;
        let base = self.keys.len();
        let mut many: HashSet<Cow<'de, str>> = HashSet::new();
        while let Some(key) = map.next_key_seed(BorrowedKey)? {
            let few = &self.keys[base..];
            let fresh = if few.contains(&key) {
                false
            } else if few.len() < FEW {
                self.keys.push(key.clone());
                true
            } else {
                many.insert(key.clone())
            };
            if !fresh {
                self.report(&key);
            }
            self.path.push(PathSeg::Key(key));
            map.next_value_seed(&mut *self)?;
            self.path.pop();
        }
        self.keys.truncate(base);
        Ok(())
    }
}

/// A JSON object key, borrowed from the body unless it has escapes (serde's own `Cow`
/// implementation always copies).
struct BorrowedKey;

impl<'de> serde::de::DeserializeSeed<'de> for BorrowedKey {
    type Value = Cow<'de, str>;

    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_str(self)
    }
}

impl<'de> serde::de::Visitor<'de> for BorrowedKey {
    type Value = Cow<'de, str>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an object key")
    }

    fn visit_borrowed_str<E>(self, v: &'de str) -> Result<Self::Value, E> {
        Ok(Cow::Borrowed(v))
    }

    fn visit_str<E>(self, v: &str) -> Result<Self::Value, E> {
        Ok(Cow::Owned(v.to_owned()))
    }
}
