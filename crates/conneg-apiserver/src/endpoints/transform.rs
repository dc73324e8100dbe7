//! The representation asked for with `as`/`g`/`v` (Kubernetes' `doTransformObject`): a
//! `Table` ([`table`]) or metadata only ([`metadata_only`]), for this server's types.

use conneg::Conversion;
use serde_json::Value;

use super::table;
use super::{Params, Served, StatusError, Target};
use crate::meta::{HasObjectMeta, ListMeta};
use crate::metadata_only;

/// One object (a get) as `conv`.
pub(super) fn object<T: Served>(
    conv: &Conversion,
    q: &Params,
    t: &Target,
    k: T::K,
    f: &T::Facts,
) -> Result<Value, StatusError> {
    if metadata_only::is_metadata(conv) {
        return Ok(metadata_only::object(conv, &go_type(t, ""), k.meta())?);
    }
    let meta = ListMeta {
        resource_version: k.meta().resource_version.clone(),
        ..Default::default()
    };
    table::table::<T>(conv, q, vec![k], meta, f)
}

/// A page of a list as `conv`.
pub(super) fn list<T: Served>(
    conv: &Conversion,
    q: &Params,
    t: &Target,
    page: (Vec<T::K>, ListMeta),
    f: &T::Facts,
) -> Result<Value, StatusError> {
    let (items, meta) = page;
    if metadata_only::is_metadata(conv) {
        return Ok(metadata_only::list(
            conv,
            &go_type(t, "List"),
            items.iter().map(HasObjectMeta::meta),
            &meta,
        )?);
    }
    table::table::<T>(conv, q, items, meta, f)
}

/// 406 before a watch starts if its events cannot be served as `conv`.
pub(super) fn check_watch(conv: &Conversion, t: &Target) -> Result<(), StatusError> {
    if metadata_only::is_metadata(conv) {
        return Ok(metadata_only::check_object(conv, &go_type(t, ""))?);
    }
    Ok(())
}

/// The object of one watch event as `conv` (`first`: the stream's first Table, which carries
/// the column definitions).
pub(super) fn event<T: Served>(
    conv: &Conversion,
    (q, t): (&Params, &Target),
    k: T::K,
    first: bool,
    f: &T::Facts,
) -> Result<Value, StatusError> {
    if metadata_only::is_metadata(conv) {
        return Ok(metadata_only::object(conv, &go_type(t, ""), k.meta())?);
    }
    table::event_table::<T>(conv, q, k, first, f)
}

/// A bookmark's object as `conv`: metadata only when that was asked for (Kubernetes transforms
/// bookmarks like any event object); otherwise as it is.
pub(super) fn bookmark(conv: Option<&Conversion>, bookmark: Value) -> Result<Value, StatusError> {
    match conv {
        Some(c) if metadata_only::is_metadata(c) => {
            Ok(metadata_only::partial(c, &bookmark["metadata"])?)
        }
        _ => Ok(bookmark),
    }
}

/// What Kubernetes' messages call the internal type (`*wardle.Flunder`, `*wardle.FlunderList`,
/// `*core.Namespace`): Go's `%T`, the package being the group's first label (`core` for the
/// core group).
fn go_type(t: &Target, suffix: &str) -> String {
    let group = t.resource.group;
    let package = match group.split('.').next() {
        Some("") | None => "core",
        Some(first) => first,
    };
    format!("*{package}.{}{suffix}", t.resource.kind)
}
