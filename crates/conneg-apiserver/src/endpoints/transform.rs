//! The representation asked for with `as`/`g`/`v` (Kubernetes' `doTransformObject`): a
//! `Table` ([`table`]) or metadata only ([`metadata_only`]), for this server's types.

use conneg::{Conversion, Status};
use serde_json::Value;

use super::table;
use super::{Params, Served};
use crate::meta::{HasObjectMeta, ListMeta};
use crate::metadata_only;

/// One object (a get) as `conv`.
pub(super) fn object<T: Served>(conv: &Conversion, q: &Params, k: T::K) -> Result<Value, Status> {
    if metadata_only::is_metadata(conv) {
        return metadata_only::object(conv, &go_type::<T>(""), k.meta());
    }
    let meta = ListMeta {
        resource_version: k.meta().resource_version.clone(),
        ..Default::default()
    };
    table::table::<T>(conv, q, vec![k], meta)
}

/// A page of a list as `conv`.
pub(super) fn list<T: Served>(
    conv: &Conversion,
    q: &Params,
    items: Vec<T::K>,
    meta: ListMeta,
) -> Result<Value, Status> {
    if metadata_only::is_metadata(conv) {
        return metadata_only::list(
            conv,
            &go_type::<T>("List"),
            items.iter().map(HasObjectMeta::meta),
            &meta,
        );
    }
    table::table::<T>(conv, q, items, meta)
}

/// 406 before a watch starts if its events cannot be served as `conv`.
pub(super) fn check_watch<T: Served>(conv: &Conversion) -> Result<(), Status> {
    if metadata_only::is_metadata(conv) {
        return metadata_only::check_object(conv, &go_type::<T>(""));
    }
    Ok(())
}

/// The object of one watch event as `conv` (`first`: the stream's first Table, which carries
/// the column definitions).
pub(super) fn event<T: Served>(
    conv: &Conversion,
    q: &Params,
    k: T::K,
    first: bool,
) -> Result<Value, Status> {
    if metadata_only::is_metadata(conv) {
        return metadata_only::object(conv, &go_type::<T>(""), k.meta());
    }
    table::event_table::<T>(conv, q, k, first)
}

/// A bookmark's object as `conv`: metadata only when that was asked for (Kubernetes transforms
/// bookmarks like any event object); otherwise as it is.
pub(super) fn bookmark(conv: Option<&Conversion>, bookmark: Value) -> Result<Value, Status> {
    match conv {
        Some(c) if metadata_only::is_metadata(c) => {
            metadata_only::partial(c, &bookmark["metadata"])
        }
        _ => Ok(bookmark),
    }
}

/// What Kubernetes' messages call the internal type (`*wardle.Flunder`, `*wardle.FlunderList`,
/// `*core.Namespace`): Go's `%T`, the package being the group's first label (`core` for the
/// core group).
fn go_type<T: Served>(suffix: &str) -> String {
    let group = T::RESOURCE.group;
    let package = match group.split('.').next() {
        Some("") | None => "core",
        Some(first) => first,
    };
    format!("*{package}.{}{suffix}", T::KIND)
}
