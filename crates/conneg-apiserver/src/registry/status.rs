//! The status subresource, for any kind that declares one
//! ([`ResourceInfo::status_subresource`](crate::resource::ResourceInfo::status_subresource)),
//! as Kubernetes' generic registry keeps it: a create starts from the default status, a
//! write to the object leaves the status as stored, and a write to `/status` changes the status alone (with the client's
//! `resourceVersion` precondition and the `managedFields` it sent). Kinds write no code for it;
//! the strategy's [`Strategy::prepare_for_update`](super::Strategy::prepare_for_update) and [`Strategy::prepare_for_status_update`](super::Strategy::prepare_for_status_update) run
//! after, for what else a kind keeps.
//!
//! It works on the object's storage version as JSON (the top-level `status` field), so it
//! holds for any kind the registry serves, compiled or not; so does [`same_spec`], the
//! default of [`Strategy::same_spec`](super::Strategy::same_spec).

use serde_json::Value;

use super::{Error, Object};

/// `k` in its storage version, as a JSON object.
fn to_json<K: Object>(k: &K) -> Result<serde_json::Map<String, Value>, Error> {
    k.to_stored_json().map_err(Error::Internal)
}

fn from_json<K: Object>(m: serde_json::Map<String, Value>) -> Result<K, Error> {
    K::from_stored_json(m).map_err(Error::Internal)
}

/// A create: the status is the kind's default (Kubernetes' strategies clear it; the
/// controller that owns the status writes it through `/status`).
pub(crate) fn clear_status<K: Object>(new: &mut K) -> Result<(), Error> {
    let mut n = to_json(new)?;
    if n.remove("status").is_some() {
        *new = from_json(n)?;
    }
    Ok(())
}

/// A write to the object: its status is `old`'s.
pub(crate) fn keep_status<K: Object>(new: &mut K, old: &K) -> Result<(), Error> {
    let mut n = to_json(new)?;
    match to_json(old)?.remove("status") {
        Some(status) => n.insert("status".into(), status),
        None => n.remove("status"),
    };
    *new = from_json(n)?;
    Ok(())
}

/// A write to `/status`: everything but the status is `old`'s, except the `resourceVersion`
/// (the client's precondition) and the `managedFields` it sent.
pub(crate) fn status_only<K: Object>(new: &mut K, old: &K) -> Result<(), Error> {
    let mut o = to_json(old)?;
    match to_json(new)?.remove("status") {
        Some(status) => o.insert("status".into(), status),
        None => o.remove("status"),
    };
    let mut kept: K = from_json(o)?;
    let (meta, sent) = (kept.meta_mut(), new.meta_mut());
    meta.resource_version = std::mem::take(&mut sent.resource_version);
    meta.managed_fields = sent.managed_fields.take();
    *new = kept;
    Ok(())
}

/// Whether `a` and `b` are equal but for their metadata and status (and type meta), compared
/// in their storage version as JSON: what moves `metadata.generation` on. Objects that do not
/// encode are taken as different.
pub(crate) fn same_spec<K: Object>(a: &K, b: &K) -> bool {
    let spec = |k: &K| {
        to_json(k).ok().map(|mut m| {
            for meta in ["metadata", "status", "apiVersion", "kind"] {
                m.remove(meta);
            }
            m
        })
    };
    match (spec(a), spec(b)) {
        (Some(a), Some(b)) => a == b,
        _ => false,
    }
}
