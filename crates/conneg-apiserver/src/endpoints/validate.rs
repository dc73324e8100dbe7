//! The declarative validation ([`crate::declarative`]) of a request's object, in the
//! request's version (before a lossy conversion can drop a value its schema rejects).

use std::sync::Arc;

use serde_json::Value;

use super::body::to_json;
use super::{Context, Served, StatusError, Target};
use crate::declarative::Validator;
use crate::registry::{self, Object};
use crate::resource::ResourceInfo;
use crate::validation::FieldError;

/// The declarative validation ([`crate::declarative`]) of `versioned`, an object in `T`'s
/// version, against `old` on update (for transition rules and ratcheting).
pub(super) fn declared_errors<T: Served>(
    declared: Option<&Arc<Validator>>,
    versioned: &Value,
    old: Option<&T::K>,
    f: &T::Facts,
) -> Result<Vec<FieldError>, StatusError> {
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
) -> Result<(), StatusError> {
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
    Ok(valid(t.resource, new, errs)?)
}

/// `Ok` when `errs` is empty, otherwise the invalid object `k` of `r` with every error (a
/// 422 at the HTTP edge, as every registry error is answered).
pub(super) fn valid<K: Object>(
    r: &'static ResourceInfo,
    k: &K,
    errs: Vec<FieldError>,
) -> Result<(), registry::Error> {
    if errs.is_empty() {
        return Ok(());
    }
    Err(registry::Error::invalid(r, k.meta().name.clone(), errs))
}
