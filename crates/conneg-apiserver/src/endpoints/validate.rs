//! The declarative validation ([`crate::declarative`]) of a request's object, in the
//! request's version (before a lossy conversion can drop a value its schema rejects).

use std::sync::Arc;

use conneg::Status;
use serde_json::Value;

use super::body::to_json;
use super::{Context, Served, Target};
use crate::declarative::Validator;
use crate::registry::Strategy;
use crate::validation::{FieldError, invalid};

/// The compiled declaration of `T`'s version and resource.
pub(super) fn declaration<T: Served>(st: &Context) -> Option<&Arc<Validator>> {
    st.validators.get(T::VERSION, T::RESOURCE)
}

/// The declarative validation ([`crate::declarative`]) of `versioned`, an object in `T`'s
/// version, against `old` on update (for transition rules and ratcheting).
pub(super) fn declared_errors<T: Served>(
    st: &Context,
    versioned: &Value,
    old: Option<&T::K>,
) -> Result<Vec<FieldError>, Status> {
    let Some(validator) = declaration::<T>(st) else {
        return Ok(Vec::new());
    };
    let old = old.map(|o| to_json(&T::from_kind(o.clone()))).transpose()?;
    Ok(validator.validate(versioned, old.as_ref()))
}

/// [`declared_errors`] for an update of `old` to `new`, as a 422. A write to `/status` is
/// checked as it will be stored (its spec is `old`'s), any other write as it was sent.
pub(super) fn check_declared_update<T: Served>(
    st: &Context,
    t: &Target,
    versioned: Value,
    new: &T::K,
    old: &T::K,
) -> Result<(), Status> {
    let versioned = if t.status {
        to_json(&T::from_kind(new.clone()))?
    } else {
        versioned
    };
    let errs = declared_errors::<T>(st, &versioned, Some(old))?;
    valid(new, &errs)
}

/// `Ok` when `errs` is empty, otherwise the 422 that names `k` and every error.
pub(super) fn valid<K: Strategy>(k: &K, errs: &[FieldError]) -> Result<(), Status> {
    if errs.is_empty() {
        return Ok(());
    }
    let r = K::RESOURCE;
    Err(invalid(r.group, r.kind, &k.meta().name, errs))
}
