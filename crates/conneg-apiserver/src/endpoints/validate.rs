//! The declarative validation ([`crate::declarative`]) of a request's object, in the
//! request's version (before a lossy conversion can drop a value its schema rejects).

use std::sync::Arc;

use serde_json::Value;

use super::body::to_json;
use super::{Served, StatusError, Target};
use crate::declarative::Validator;
use crate::registry::{self, Object};
use crate::resource::ResourceInfo;
use crate::validation::FieldError;

/// The declarative validation ([`crate::declarative`]) of a created object, `versioned` in
/// its request's version.
pub(super) fn declared_errors(
    declared: Option<&Arc<Validator>>,
    versioned: &Value,
) -> Vec<FieldError> {
    declared.map_or_else(Vec::new, |v| v.validate(versioned, None))
}

/// The `declared` validation of an update of `old` (`old_json` in the request's version, as
/// [`field_manager::live_json`](super::field_manager::live_json) gives it) to `new`, as a
/// 422. A write to `/status` is checked as it will be stored (its spec is `old`'s), any
/// other write as it was sent.
pub(super) fn check_declared_update<T: Served>(
    declared: &Validator,
    t: &Target,
    versioned: Value,
    (new, old_json): (&T::K, &Value),
    f: &T::Facts,
) -> Result<(), StatusError> {
    let versioned = if t.status {
        to_json(&T::from_kind(new.clone(), f))?
    } else {
        versioned
    };
    let errs = declared.validate(&versioned, Some(old_json));
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
