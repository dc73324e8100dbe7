//! What server-side apply needs to know of a kind's schema: which lists are sets or maps
//! (everything else is atomic, Kubernetes' default for a list without a marker), which maps
//! are atomic, which hold data rather than fields, and which fields are never tracked.
//!
//! The list types come from the kind's declaration (`x-kubernetes-list-type` and
//! `x-kubernetes-list-map-keys`, [`crate::declarative`]) when it has one, and from a small
//! table ([`ApplySchema`]) otherwise; the metadata rules every object shares are built in.

use std::borrow::Cow;
use std::sync::{Arc, LazyLock};

use super::fieldpath::{Path, PathElement, Set};
use crate::declarative::{ListType, Validator};

/// A field path in a schema table: field names joined by `.`, list items left out
/// (`metadata.ownerReferences`, `spec.containers.ports`).
pub type FieldPath = &'static str;

/// What a kind tells server-side apply of its schema when it has no declaration
/// ([`Strategy::APPLY_SCHEMA`](crate::registry::Strategy::APPLY_SCHEMA)): its lists that are
/// sets or maps (any other list is atomic, Kubernetes' default) and its atomic maps. The
/// metadata every object has is built in; a kind with a declaration takes its list types from
/// it (`x-kubernetes-list-type`, `x-kubernetes-list-map-keys`) before this table.
///
/// ```
/// use std::borrow::Cow;
/// use conneg_apiserver::declarative::ListType;
/// use conneg_apiserver::registry::ApplySchema;
///
/// // `+listType=map` keyed by `name`, `+listType=set`, and `+mapType=atomic`.
/// const WIDGET: ApplySchema = ApplySchema {
///     lists: &[
///         ("spec.ports", ListType::Map(Cow::Borrowed(&[Cow::Borrowed("name")]))),
///         ("spec.tags", ListType::Set),
///     ],
///     atomic_maps: &["spec.selector"],
/// };
/// assert_eq!(WIDGET.lists.len(), 2);
/// ```
#[derive(Debug, Clone, Copy)]
pub struct ApplySchema {
    /// The kind's non-atomic lists, by field path (field names joined by `.`, list items left
    /// out: `spec.containers.ports`).
    pub lists: &'static [(FieldPath, ListType)],
    /// The kind's atomic maps (`x-kubernetes-map-type: atomic`, `+structType=atomic`), owned,
    /// compared and applied as one value; a list's path names its items.
    pub atomic_maps: &'static [FieldPath],
}

impl ApplySchema {
    /// A kind whose only non-atomic lists and atomic maps are the metadata ones.
    pub const OBJECT: ApplySchema = ApplySchema {
        lists: &[],
        atomic_maps: &[],
    };
}

/// A kind's apply schema as a write sees it: the kind's table, its declaration, and the
/// subresource written.
#[derive(Debug, Clone)]
pub struct Schema {
    /// The kind's table, for a kind without a declaration.
    kind: ApplySchema,
    /// The kind's declaration, whose list types come first.
    declared: Option<Arc<Validator>>,
    /// Whether writes go through the `status` subresource, where everything but `status` is
    /// reset (and so never owned) instead of `status`.
    status_only: bool,
}

/// Lists of `metav1.ObjectMeta`.
const META_LISTS: &[(FieldPath, ListType)] = &[
    ("metadata.finalizers", ListType::Set),
    (
        "metadata.ownerReferences",
        ListType::Map(Cow::Borrowed(&[Cow::Borrowed("uid")])),
    ),
];

/// Atomic maps of `metav1.ObjectMeta`: an `OwnerReference` is `+structType=atomic`.
const META_ATOMIC_MAPS: &[FieldPath] = &["metadata.ownerReferences"];

/// Maps whose keys are data (`map[string]string`), each key owned on its own.
const ELEMENT_MAPS: &[FieldPath] = &["metadata.labels", "metadata.annotations"];

/// Fields the server writes: never owned, though what lies below them may be (Kubernetes'
/// `stripMetaManager`, plus `deletionTimestamp`).
const STRIPPED: &[FieldPath] = &[
    "apiVersion",
    "kind",
    "metadata",
    "metadata.name",
    "metadata.namespace",
    "metadata.creationTimestamp",
    "metadata.deletionTimestamp",
    "metadata.selfLink",
    "metadata.uid",
    "metadata.generation",
    "metadata.resourceVersion",
];

/// Subtrees never owned on the main resource: the bookkeeping itself, and `status`, which
/// the main resource resets (Kubernetes' reset fields).
const RESET: &[FieldPath] = &["metadata.managedFields", "status"];

impl Schema {
    /// A kind whose only non-atomic lists and atomic maps are the metadata ones.
    pub const OBJECT: Schema = Schema::of(ApplySchema::OBJECT);

    /// The schema of a kind with `kind`'s table, no declaration, written as itself.
    pub const fn of(kind: ApplySchema) -> Schema {
        Schema {
            kind,
            declared: None,
            status_only: false,
        }
    }

    /// The same schema with the kind's declaration (`None`: without one), whose list types
    /// come before the table's.
    pub fn declared_by(self, declared: Option<Arc<Validator>>) -> Schema {
        Schema { declared, ..self }
    }

    /// The same schema for writes through the `status` subresource.
    pub(crate) fn for_status(self) -> Schema {
        Schema {
            status_only: true,
            ..self
        }
    }

    /// The list type at `path`: the declaration's, else the table's, else atomic.
    pub(crate) fn list_type(&self, path: &[PathElement]) -> ListType {
        if let Some(t) = self.declared_list_type(path) {
            return t;
        }
        self.kind
            .lists
            .iter()
            .chain(META_LISTS)
            .find(|(p, _)| names_match(path, p))
            .map_or(ListType::Atomic, |(_, t)| t.clone())
    }

    /// The declaration's list type at `path`, outside metadata (whose rules are built in).
    fn declared_list_type(&self, path: &[PathElement]) -> Option<ListType> {
        let declared = self.declared.as_ref()?;
        let names: Vec<&str> = path
            .iter()
            .filter_map(|e| match e {
                PathElement::Field(n) => Some(n.as_str()),
                _ => None,
            })
            .collect();
        if names.first() == Some(&"metadata") {
            return None;
        }
        Some(declared.list_type(&names)).filter(|t| *t != ListType::Atomic)
    }

    /// Whether the map at `path` is one value rather than a map of fields.
    pub(crate) fn is_atomic_map(&self, path: &[PathElement]) -> bool {
        self.kind
            .atomic_maps
            .iter()
            .chain(META_ATOMIC_MAPS)
            .any(|p| names_match(path, p))
    }

    /// Whether the map at `path` holds data keys rather than fields.
    pub(crate) fn is_element_map(&self, path: &[PathElement]) -> bool {
        ELEMENT_MAPS.iter().any(|p| names_match(path, p))
    }

    /// Takes away what is never tracked: the server's fields (only the path itself) and
    /// the reset subtrees (everything below them too).
    pub(crate) fn untracked_removed(&self, mut set: Set) -> Set {
        static STRIPPED_SET: LazyLock<Set> = LazyLock::new(|| paths(STRIPPED));
        set.subtract(&STRIPPED_SET, false);
        self.without_reset(set)
    }

    /// Takes away the reset subtrees only: what an applier may not own. Through the
    /// object, `status` and the bookkeeping; through `/status`, everything but `status`.
    pub(crate) fn without_reset(&self, mut set: Set) -> Set {
        static RESET_SET: LazyLock<Set> = LazyLock::new(|| paths(RESET));
        if !self.status_only {
            set.subtract(&RESET_SET, true);
            return set;
        }
        let mut others = Set::new();
        for path in set.paths() {
            if !matches!(path.first(), Some(PathElement::Field(n)) if n == "status") {
                others.insert(&path[..1]);
            }
        }
        set.subtract(&others, true);
        set
    }
}

/// Whether the field names of `path` (list items left out) are `dotted`. Compared name by
/// name against the front of what is left of `dotted`, without splitting it: this runs for
/// every map and list every walk of an object meets. A name with a `.` is never one of
/// `dotted`'s.
fn names_match(path: &[PathElement], dotted: &str) -> bool {
    let mut rest = Some(dotted);
    for pe in path {
        let PathElement::Field(name) = pe else {
            continue;
        };
        let Some(after) = rest.and_then(|r| r.strip_prefix(name.as_str())) else {
            return false;
        };
        rest = match after.as_bytes().first() {
            None => None,
            Some(b'.') => Some(&after[1..]),
            Some(_) => return false,
        };
        if name.contains('.') {
            return false;
        }
    }
    rest.is_none()
}

fn paths(table: &[FieldPath]) -> Set {
    let mut set = Set::new();
    for p in table {
        let path: Path = p
            .split('.')
            .map(|n| PathElement::Field(n.to_owned()))
            .collect();
        set.insert(&path);
    }
    set
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fields(names: &[&str]) -> Path {
        names
            .iter()
            .map(|n| PathElement::Field((*n).to_owned()))
            .collect()
    }

    #[test]
    fn names_match_whole_names_with_list_items_left_out() {
        let mut path = fields(&["spec", "ports"]);
        assert!(names_match(&path, "spec.ports"));
        path.push(PathElement::Index(0));
        path.extend(fields(&["name"]));
        assert!(names_match(&path, "spec.ports.name"));
        assert!(!names_match(&path, "spec.ports"));
        assert!(!names_match(&fields(&["spec"]), "spec.ports"));
        assert!(!names_match(&fields(&["spec", "port"]), "spec.ports"));
        assert!(!names_match(&fields(&["spe", "c"]), "spec"));
        assert!(!names_match(&[], "spec"));
        // A name holding a dot is one name, never two of the table's.
        assert!(!names_match(&fields(&["metadata.labels"]), "metadata.labels"));
        assert!(!names_match(&fields(&["metadata", "labels.x"]), "metadata.labels.x"));
    }
}
