//! The list types of a declaration: how a list's items are merged, owned and told apart.

use std::borrow::Cow;

/// How the items of a list are merged and owned (and, in a declaration, which items are
/// duplicates).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum ListType {
    /// The list is one value (`+listType=atomic`, the default).
    #[default]
    Atomic,
    /// Items are scalars, owned one by one (`+listType=set`).
    Set,
    /// Items are maps, told apart by these fields (`+listType=map`, `+listMapKey=...`).
    Map(Cow<'static, [Cow<'static, str>]>),
}
