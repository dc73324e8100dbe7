//! `metadata.managedFields` on every write, for any served kind: server-side apply with
//! ownership and conflicts, and the `Update` entries of creates, updates and other patches
//! (Kubernetes' field manager, around the kind-agnostic [`crate::apply`]).

mod error;

use std::any::TypeId;
use std::collections::HashMap;
use std::marker::PhantomData;
use std::sync::{Arc, LazyLock, PoisonError, RwLock};

use conneg::Negotiated;
use serde_json::Value;

pub(super) use self::error::FieldManagerError;
use super::body::{Expected, Unencodable, decode_written, to_json, written};
use super::{Served, StatusError, Target};
use crate::apply::managed::{Converter, ManagedFields, ManagerId, Operation, Updater, is_reset};
use crate::apply::schema::Schema;
use crate::declarative::Validator;
use crate::meta::{HasObjectMeta, ManagedFieldsEntry, Time};
use crate::resource::GroupVersion;
use crate::validation::{FIELD_MANAGER_MAX_LENGTH, validate_field_manager};

/// The manager of a write: `fieldManager`, validated as the `options` kind's
/// (`CreateOptions`, `UpdateOptions`, `PatchOptions`: 422 for one longer than 128 bytes or
/// with control characters), or else the product of the User-Agent (what comes before the
/// first `/`, printable characters only, cut at 128 bytes), as Kubernetes names it.
pub(super) fn manager(
    options: &'static str,
    field_manager: Option<&str>,
    user_agent: Option<&str>,
) -> Result<String, FieldManagerError> {
    if let Some(m) = field_manager {
        let errors = validate_field_manager(m, "fieldManager");
        if !errors.is_empty() {
            return Err(FieldManagerError::InvalidManager { options, errors });
        }
        return Ok(m.to_owned());
    }
    let product = user_agent
        .and_then(|ua| ua.split('/').next())
        .unwrap_or_default();
    let mut out = String::new();
    for c in product.chars().filter(|c| !c.is_control()) {
        if out.len() + c.len_utf8() > FIELD_MANAGER_MAX_LENGTH {
            break;
        }
        out.push(c);
    }
    Ok(out)
}

/// Conversion through the type's served versions ([`Served::convert`]).
struct KindConverter<T>(PhantomData<fn() -> T>);

impl<T: Served> Converter for KindConverter<T> {
    fn convert(&self, obj: &Value, from: &str, to: &str) -> Option<Value> {
        T::convert(obj, from, to)
    }
}

/// What a write goes through, as `managedFields` record it: the version of its URL and its
/// subresource (`""`: the object itself); and how the kind's fields merge there, its apply
/// schema with the list types of its declaration.
pub(super) struct Via {
    version: GroupVersion,
    subresource: &'static str,
    schema: Schema,
}

impl Via {
    /// The write `t` names, of an object of `T` with `f` and `declared`.
    pub(super) fn of<T: Served>(
        t: &Target,
        f: &T::Facts,
        declared: Option<&Arc<Validator>>,
    ) -> Self {
        let mut schema = T::apply_schema(f).declared_by(declared.cloned());
        if t.status {
            schema = schema.for_status();
        }
        Self {
            version: t.version,
            subresource: t.subresource(),
            schema,
        }
    }

    fn manager(&self, manager: &str, op: Operation) -> ManagerId {
        let mut me = ManagerId::new(manager, op, self.version.api_version());
        self.subresource.clone_into(&mut me.subresource);
        me
    }

    fn run<T: Served, R>(&self, f: impl FnOnce(&Updater<'_>) -> R) -> R {
        f(&Updater {
            schema: &self.schema,
            converter: &KindConverter::<T>(PhantomData),
            version: self.version.api_version(),
            now: Time::now(),
        })
    }
}

/// A stored object as JSON in `T`'s version, `managedFields` and all: what an update is
/// compared against ([`record_update`]; the comparison never looks at `managedFields`) and
/// what declarative validation ratchets against, converted once for both.
pub(super) fn live_json<T: Served>(live: &T::K, f: &T::Facts) -> Result<Value, Unencodable> {
    to_json(&T::from_kind(live.clone(), f))
}

/// `k` as JSON in `T`'s version, without its `managedFields` (which are not part of what
/// is compared): they are dropped from a copy, not encoded and then removed.
fn compared_json<T: Served>(k: &T::K, f: &T::Facts) -> Result<Value, Unencodable> {
    let mut k = k.clone();
    k.meta_mut().managed_fields = None;
    to_json(&T::from_kind(k, f))
}

/// What an object is compared against: itself ([`compared_json`]), or for a create an
/// empty object ([`empty_object`]).
fn compared<T: Served>(obj: Option<Value>) -> Result<Arc<Value>, FieldManagerError> {
    match obj {
        Some(v) => Ok(Arc::new(v)),
        None => empty_object::<T>(),
    }
}

fn without_managed_fields(mut v: Value) -> Value {
    if let Some(Value::Object(meta)) = v.get_mut("metadata") {
        meta.remove("managedFields");
    }
    v
}

/// What a create is compared against, as Kubernetes' `New()`: the type's empty value, or
/// `{}` for a type with a required field (which has none). The same for every object of a
/// type, so built once per type (the types a server serves are a fixed few).
fn empty_object<T: Served>() -> Result<Arc<Value>, FieldManagerError> {
    static EMPTY: LazyLock<RwLock<HashMap<TypeId, Arc<Value>>>> = LazyLock::new(Default::default);
    let id = TypeId::of::<T>();
    if let Some(v) = EMPTY
        .read()
        .unwrap_or_else(PoisonError::into_inner)
        .get(&id)
    {
        return Ok(Arc::clone(v));
    }
    let v = match serde_json::from_str::<T>("{}") {
        Ok(empty) => to_json(&empty)?,
        Err(_) => Value::Object(serde_json::Map::new()),
    };
    let mut all = EMPTY.write().unwrap_or_else(PoisonError::into_inner);
    Ok(Arc::clone(
        all.entry(id)
            .or_insert_with(|| Arc::new(without_managed_fields(v))),
    ))
}

/// An object's managers (none without entries).
fn managers_of(entries: Option<&[ManagedFieldsEntry]>) -> Result<ManagedFields, String> {
    entries.map_or_else(|| Ok(ManagedFields::default()), ManagedFields::decode)
}

fn encoded(managers: &ManagedFields) -> Option<Vec<ManagedFieldsEntry>> {
    Some(managers.encode()).filter(|e| !e.is_empty())
}

/// Records in `new` that `manager` wrote it (`via` the request's version and subresource)
/// over `live` (`None` for a create), both compared in the request's version: it now owns
/// every field it changed. `live` comes with its JSON in that version, as [`live_json`]
/// gives it (its own `managedFields` in it are never compared). The `managedFields` a
/// client sends are kept when they can be read (an empty list, or one empty entry, clears
/// them); otherwise the stored ones are.
pub(super) fn record_update<T: Served>(
    live: Option<(&T::K, &Value)>,
    new: &mut T::K,
    manager: &str,
    via: &Via,
    f: &T::Facts,
) -> Result<(), FieldManagerError> {
    let requested = new.meta_mut().managed_fields.take();
    let mut managers = if is_reset(requested.as_deref()) {
        ManagedFields::default()
    } else {
        match requested.as_deref().map(ManagedFields::decode) {
            Some(Ok(m)) if !m.0.is_empty() => m,
            // As Kubernetes: what cannot be read is replaced, not refused.
            _ => managers_of(live.and_then(|(l, _)| l.meta().managed_fields.as_deref()))
                .unwrap_or_default(),
        }
    };
    let empty;
    let live_json = match live {
        Some((_, json)) => json,
        None => {
            empty = empty_object::<T>()?;
            &*empty
        }
    };
    let new_json = compared_json::<T>(new, f)?;
    let me = via.manager(manager, Operation::Update);
    via.run::<T, _>(|u| u.update(live_json, &new_json, &mut managers, &me));
    new.meta_mut().managed_fields = encoded(&managers);
    Ok(())
}

/// The stored object an apply is made over: its `managedFields`, and the rest of it as JSON
/// in the request's version.
pub(super) struct Live {
    managed_fields: Option<Vec<ManagedFieldsEntry>>,
    json: Value,
}

impl Live {
    /// `live` as an apply over it takes it.
    pub(super) fn of<T: Served>(live: &T::K, f: &T::Facts) -> Result<Self, Unencodable> {
        Ok(Self {
            managed_fields: live.meta().managed_fields.clone(),
            json: compared_json::<T>(live, f)?,
        })
    }
}

/// Server-side apply of `config` by `manager` (`via` the request's version and subresource)
/// over `live` (`None` when the apply creates): the object to write, decoded as `T` under
/// the request's field validation (`n`, `expected`, as [`decode_json`](super::body::decode_json)),
/// with its `managedFields`, and the warnings of its decoding.
///
/// The `managedFields` are set on the decoded object rather than written into the applied
/// JSON and decoded back; the size limit still counts them, as they would be written.
pub(super) fn apply<T: Served>(
    live: Option<Live>,
    config: &Value,
    (manager, force): (&str, bool),
    via: &Via,
    (n, expected): (&Negotiated, &Expected),
) -> Result<(T, Vec<String>), StatusError> {
    if config
        .pointer("/metadata/managedFields")
        .is_some_and(|v| !v.is_null())
    {
        return Err(FieldManagerError::ManagedFieldsSet.into());
    }
    let (entries, live_json) = live.map(|l| (l.managed_fields, l.json)).unzip();
    let mut managers = managers_of(entries.flatten().as_deref()).map_err(|e| {
        FieldManagerError::Internal(format!("failed to decode managed fields: {e}"))
    })?;
    let live_json = compared::<T>(live_json)?;
    let me = via.manager(manager, Operation::Apply);
    let mut new = via
        .run::<T, _>(|u| u.apply(&live_json, config, &mut managers, &me, force))
        .map_err(FieldManagerError::Conflict)?;
    // Recorded only in an object with metadata; an applied `managedFields: null` goes.
    let (entries, listed) = match new.get_mut("metadata") {
        Some(Value::Object(meta)) => {
            meta.remove("managedFields");
            let entries = encoded(&managers);
            let listed = match &entries {
                // `"managedFields":[…]`, and the comma before it when it is not alone.
                Some(e) => managed_fields_len(e)? + usize::from(!meta.is_empty()),
                None => 0,
            };
            (entries, listed)
        }
        _ => (None, 0),
    };
    let bytes = written(&new)?;
    crate::patch::check_len(bytes.len() + listed).map_err(FieldManagerError::from)?;
    let (mut obj, warnings) = decode_written::<T>(&bytes, n, expected)?;
    obj.meta_mut().managed_fields = entries;
    Ok((obj, warnings))
}

/// The length of `"managedFields":[…]` with `entries`, as compact JSON.
fn managed_fields_len(entries: &[ManagedFieldsEntry]) -> Result<usize, FieldManagerError> {
    let list = serde_json::to_vec(entries).map_err(|e| {
        FieldManagerError::Internal(format!("failed to encode managed fields: {e}"))
    })?;
    Ok(r#""managedFields":"#.len() + list.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn named(field_manager: Option<&str>, user_agent: Option<&str>) -> String {
        manager("PatchOptions", field_manager, user_agent).unwrap()
    }

    #[test]
    fn manager_falls_back_to_the_user_agent_product() {
        assert_eq!(named(Some("mgr"), Some("kubectl/v1.32")), "mgr");
        assert_eq!(
            named(None, Some("kubectl/v1.32.0 (linux/amd64)")),
            "kubectl"
        );
        assert_eq!(named(None, Some("curl")), "curl");
        assert_eq!(named(None, None), "");
        // A long product is cut, control characters dropped.
        let long = "é".repeat(100);
        assert_eq!(named(None, Some(&long)).len(), 128);
        assert_eq!(named(None, Some("a\tb/1")), "ab");
    }

    #[test]
    fn a_bad_field_manager_is_refused_as_kubernetes_does() {
        let e = conneg::Status::from(
            manager("CreateOptions", Some(&"m".repeat(129)), None).unwrap_err(),
        );
        assert_eq!(e.code, 422);
        assert_eq!(
            e.message,
            "CreateOptions.meta.k8s.io \"\" is invalid: fieldManager: Too long: may not be more than 128 bytes"
        );
        assert!(manager("UpdateOptions", Some("a\nb"), None).is_err());
    }
}
