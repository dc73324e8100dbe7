//! Objects' encoded forms: the bytes a response carries for a stored object, made once per
//! served version and encoding and reused by every GET and LIST that sends the object again.
//!
//! A form is keyed by what the bytes depend on: the stored object (its key and the revision it
//! was last written at: the stored bytes of one key at one revision never change), the Rust
//! type that serves it with its [`Served::forms`] generation (a custom resource version's
//! schema), and the negotiated [`Encoding`] (codec and profile). A write gives the object a
//! new revision, so a form is never stale: the old one is replaced when the new one is made,
//! or evicted.
//!
//! Memory is bounded by bytes ([`DEFAULT_CAPACITY`], `ServerOptions::encoded_cache`): each
//! form weighs its bytes plus its key, and the least used are evicted past the bound
//! (`quick_cache`'s CLOCK-Pro-like policy: an object listed once does not push out objects
//! read often). One form per (object, served version, encoding): a key read at an older
//! revision replaces its current form instead of adding one.

use std::any::TypeId;

use bytes::{Buf, Bytes};
use conneg::{Encoding, Negotiated};
use quick_cache::{Equivalent, Weighter, sync::Cache};

use super::Served;
use crate::storage::{KeyValue, Revision};

/// The default bound of the encoded forms, in bytes (256 MiB).
pub const DEFAULT_CAPACITY: u64 = 256 << 20;

/// What a form costs apart from its bytes and key: the entry and the cache's own bookkeeping.
const OVERHEAD: u64 = 96;

/// The encoded forms of stored objects (module docs); cheap to share behind an `Arc`.
pub(crate) struct EncodedForms {
    cache: Option<Cache<FormKey, Form, ByBytes>>,
}

impl std::fmt::Debug for EncodedForms {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let (len, weight) = self
            .cache
            .as_ref()
            .map_or((0, 0), |c| (c.len(), c.weight()));
        f.debug_struct("EncodedForms")
            .field("forms", &len)
            .field("bytes", &weight)
            .finish()
    }
}

/// A served type and its generation ([`served_by`]).
pub(crate) type ServedBy = (TypeId, u64);

/// What tells the forms `T` makes with `facts` from every other type's or generation's.
pub(crate) fn served_by<T: Served>(facts: &T::Facts) -> ServedBy {
    (TypeId::of::<T>(), T::forms(facts))
}

#[derive(PartialEq, Eq, Hash)]
struct FormKey {
    served: ServedBy,
    encoding: Encoding,
    key: Box<str>,
}

/// [`FormKey`] borrowed, to look a form up without allocating: hashes as `FormKey` does
/// (the same fields in the same order; `str` hashes alike behind `Box` and `&`).
#[derive(Hash)]
struct FormRef<'a> {
    served: ServedBy,
    encoding: Encoding,
    key: &'a str,
}

impl Equivalent<FormKey> for FormRef<'_> {
    fn equivalent(&self, k: &FormKey) -> bool {
        self.served == k.served && self.encoding == k.encoding && self.key == &*k.key
    }
}

/// A kept form: the list separator of its encoding, then the document, so that a list item
/// and its separator are one piece ([`Form::separated_item`]).
#[derive(Clone)]
pub(crate) struct Form {
    revision: Revision,
    bytes: Bytes,
    /// The separator's length.
    separator: usize,
}

impl Form {
    /// The bytes [`Negotiated::encode`] wrote for the object: a GET's body.
    pub(crate) fn document(mut self) -> Bytes {
        self.bytes.advance(self.separator);
        self.bytes
    }

    /// The object as an item of a list ([`Negotiated::encode_item`]) for `n` (the decision
    /// the form was made for), after the list's separator ([`Encoding::item_separator`]):
    /// what a list body sends for every item but the first (which drops the separator), as
    /// one piece of the kept bytes.
    pub(crate) fn separated_item(self, n: &Negotiated) -> Bytes {
        let Form {
            bytes, separator, ..
        } = self;
        let item = n.nested(&bytes[separator..]);
        if separator == 0 {
            // Narrowed in place: no second handle to count up and down (this is per item of
            // every list).
            let start = item.as_ptr() as usize - bytes.as_ptr() as usize;
            let len = item.len();
            let mut bytes = bytes;
            bytes.advance(start);
            bytes.truncate(len);
            bytes
        } else if item.len() == bytes.len() - separator {
            // The item is the whole document (JSON's), right after the separator.
            bytes
        } else {
            let mut joined = bytes[..separator].to_vec();
            joined.extend_from_slice(item);
            Bytes::from(joined)
        }
    }
}

#[derive(Clone)]
struct ByBytes;

impl Weighter<FormKey, Form> for ByBytes {
    fn weight(&self, key: &FormKey, form: &Form) -> u64 {
        (form.bytes.len() + key.key.len()) as u64 + OVERHEAD
    }
}

impl EncodedForms {
    /// Forms up to `capacity` bytes in all; `0` keeps none (every response encoded anew).
    pub(crate) fn new(capacity: u64) -> Self {
        let cache = (capacity > 0).then(|| {
            // An estimate for the table's first size: objects of ~4 KiB.
            let items = usize::try_from(capacity / 4096)
                .unwrap_or(usize::MAX)
                .max(64);
            Cache::with_weighter(items, capacity, ByBytes)
        });
        EncodedForms { cache }
    }

    /// Whether forms are kept for responses negotiated as `n` ([`form`](Self::form)
    /// then answers `Some`).
    pub(crate) fn keeps(&self, n: &Negotiated) -> bool {
        self.cache.is_some() && n.encoding().is_some()
    }

    /// The kept form of the object stored as `kv`, as `served` ([`served_by`]) serves it in
    /// `n`'s encoding: kept when there is one, else `make`'s value encoded and kept. `None`
    /// when the negotiated encoding is not one to keep (pretty JSON, a custom codec): the
    /// caller encodes the object itself.
    pub(crate) fn form<V: serde::Serialize, E>(
        &self,
        n: &Negotiated,
        kv: &KeyValue,
        served: ServedBy,
        make: impl FnOnce() -> Result<V, E>,
    ) -> Option<Result<Form, E>>
    where
        E: From<conneg::EncodeError>,
    {
        let cache = self.cache.as_ref()?;
        let encoding = n.encoding()?;
        let found = FormRef {
            served,
            encoding,
            key: &kv.key,
        };
        if let Some(form) = cache.get(&found)
            && form.revision == kv.mod_revision
        {
            return Some(Ok(form));
        }
        Some((|| {
            let document = n.encode(&make()?)?;
            let separator = encoding.item_separator();
            let bytes = if separator.is_empty() {
                document
            } else {
                let mut bytes = Vec::with_capacity(separator.len() + document.len());
                bytes.extend_from_slice(separator);
                bytes.extend_from_slice(&document);
                Bytes::from(bytes)
            };
            let key = FormKey {
                served,
                encoding,
                key: kv.key.as_str().into(),
            };
            let form = Form {
                revision: kv.mod_revision,
                bytes,
                separator: separator.len(),
            };
            cache.insert(key, form.clone());
            Ok(form)
        })())
    }
}

#[cfg(test)]
mod tests {
    use std::hash::BuildHasher;

    use super::*;
    use crate::endpoints::StatusError;

    #[test]
    fn a_borrowed_key_hashes_as_the_owned_one() {
        let served = (TypeId::of::<u8>(), 7);
        let encoding = negotiated("application/cbor").encoding().unwrap();
        let owned = FormKey {
            served,
            encoding,
            key: "/registry/x/a".into(),
        };
        let borrowed = FormRef {
            served,
            encoding,
            key: "/registry/x/a",
        };
        let s = std::hash::RandomState::new();
        assert_eq!(s.hash_one(&owned), s.hash_one(&borrowed));
        assert!(borrowed.equivalent(&owned));
        let other = FormRef {
            key: "/registry/x/b",
            ..borrowed
        };
        assert!(!other.equivalent(&owned));
    }

    fn kv(key: &str, revision: Revision) -> KeyValue {
        KeyValue {
            key: key.into(),
            value: Bytes::new(),
            create_revision: 1,
            mod_revision: revision,
        }
    }

    const SERVED: ServedBy = (TypeId::of::<serde_json::Value>(), 0);

    /// `forms.document` of `value` for `kv`, and whether it had to be made.
    fn document(
        forms: &EncodedForms,
        n: &Negotiated,
        kv: &KeyValue,
        served: ServedBy,
        value: serde_json::Value,
    ) -> (Bytes, bool) {
        let mut made = false;
        let form = forms
            .form(n, kv, served, || {
                made = true;
                Ok::<_, StatusError>(value)
            })
            .expect("an encoding to keep")
            .unwrap();
        (form.document(), made)
    }

    #[test]
    fn a_form_is_made_once_per_revision_and_encoding() {
        let forms = EncodedForms::new(DEFAULT_CAPACITY);
        let (json, cbor) = (
            negotiated("application/json"),
            negotiated("application/cbor"),
        );
        let v1 = serde_json::json!({"a": 1});
        let at1 = kv("/registry/x/a", 5);
        let (first, made) = document(&forms, &json, &at1, SERVED, v1.clone());
        assert!(made);
        assert_eq!(first, json.encode(&v1).unwrap());
        // Kept: the value `make` would give now is not looked at.
        let (again, made) = document(&forms, &json, &at1, SERVED, serde_json::json!(0));
        assert!(!made);
        assert_eq!(again, first);
        // Another encoding, another form.
        let (c, made) = document(&forms, &cbor, &at1, SERVED, v1.clone());
        assert!(made);
        assert_eq!(c, cbor.encode(&v1).unwrap());
        // A list item is the same kept bytes after the list's separator.
        for n in [&json, &cbor] {
            let item = forms
                .form(n, &at1, SERVED, || Ok::<_, StatusError>(0))
                .unwrap()
                .unwrap()
                .separated_item(n);
            let mut expected = n.encoding().unwrap().item_separator().to_vec();
            n.encode_item(&v1, &mut expected).unwrap();
            assert_eq!(item, expected);
        }
        // A write moves the revision on: the kept form is not served.
        let v2 = serde_json::json!({"a": 2});
        let (second, made) = document(&forms, &json, &kv("/registry/x/a", 6), SERVED, v2.clone());
        assert!(made);
        assert_eq!(second, json.encode(&v2).unwrap());
        // Another generation of the served type (a definition changed), another form.
        let (_, made) = document(&forms, &json, &kv("/registry/x/a", 6), (SERVED.0, 1), v2);
        assert!(made);
    }

    #[test]
    fn pretty_json_and_a_cache_of_no_bytes_keep_nothing() {
        let kept = EncodedForms::new(DEFAULT_CAPACITY);
        let none = EncodedForms::new(0);
        let make = || Ok::<_, StatusError>(0);
        let at = kv("/registry/x/a", 5);
        let pretty = negotiated("application/json;pretty=1");
        assert!(kept.form(&pretty, &at, SERVED, make).is_none());
        let json = negotiated("application/json");
        assert!(none.form(&json, &at, SERVED, make).is_none());
    }

    #[test]
    fn forms_stay_within_their_bound() {
        let capacity = 64 << 10;
        let forms = EncodedForms::new(capacity);
        let json = negotiated("application/json");
        let big = serde_json::Value::String("x".repeat(1000));
        for i in 0..1000 {
            document(
                &forms,
                &json,
                &kv(&format!("/registry/x/{i}"), 1),
                SERVED,
                big.clone(),
            );
        }
        let cache = forms.cache.as_ref().unwrap();
        assert!(
            cache.weight() <= capacity,
            "{} > {capacity}",
            cache.weight()
        );
        assert!(cache.len() > 10, "{} forms kept", cache.len());
    }

    fn negotiated(accept: &'static str) -> Negotiated {
        let mut headers = http::HeaderMap::new();
        headers.insert("accept", http::HeaderValue::from_static(accept));
        conneg::Negotiator::new()
            .profile(conneg::Profile::Kubernetes)
            .negotiate(
                &http::Method::GET,
                &http::Uri::from_static("/x"),
                &headers,
                false,
            )
            .unwrap()
    }
}
