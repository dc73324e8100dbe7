//! The declarative validation ([`crate::declarative`]) of a request's object, in the
//! request's version (before a lossy conversion can drop a value its schema rejects).

use std::sync::Arc;

use conneg::Status;
use serde_json::Value;

use super::body::to_json;
use super::{Context, Served, Target};
use crate::declarative::Validator;
use crate::registry::Object;
use crate::resource::ResourceInfo;
use crate::validation::{FieldError, invalid};

/// The declarative validation ([`crate::declarative`]) of `versioned`, an object in `T`'s
/// version, against `old` on update (for transition rules and ratcheting).
pub(super) fn declared_errors<T: Served>(
    declared: Option<&Arc<Validator>>,
    versioned: &Value,
    old: Option<&T::K>,
    f: &T::Facts,
) -> Result<Vec<FieldError>, Status> {
    let Some(validator) = declared else {
        return Ok(Vec::new());
    };
    let old = old
        .map(|o| to_json(&T::from_kind(o.clone(), f)))
        .transpose()?;
    Ok(validator.validate(versioned, old.as_ref()))
}

/// [`declared_errors`] for an update of `old` to `new`, as a 422. A write to `/status` is
/// checked as it will be stored (its spec is `old`'s), any other write as it was sent.
pub(super) fn check_declared_update<T: Served>(
    st: &Context,
    t: &Target,
    versioned: Value,
    (new, old): (&T::K, &T::K),
    f: &T::Facts,
) -> Result<(), Status> {
    let versioned = if t.status {
        to_json(&T::from_kind(new.clone(), f))?
    } else {
        versioned
    };
    let errs = declared_errors::<T>(
        T::declaration(st, t.version, t.resource, f),
        &versioned,
        Some(old),
        f,
    )?;
    valid(t.resource, new, &errs)
}

/// `Ok` when `errs` is empty, otherwise the 422 that names `k` and every error.
pub(super) fn valid<K: Object>(r: &ResourceInfo, k: &K, errs: &[FieldError]) -> Result<(), Status> {
    if errs.is_empty() {
        return Ok(());
    }
    Err(invalid(r.group, r.kind, &k.meta().name, errs))
}
