//! What a server serves, as data: group versions ([`GroupVersion`]), resources
//! ([`ResourceInfo`]), and the traits a versioned Rust type implements to be served
//! ([`Versioned`], [`VersionedObject`], [`VersionedList`]). (The catalog of both that routing
//! and discovery read is the server's own.)
//!
//! ```
//! use conneg_apiserver::resource::{GroupVersion, ResourceInfo};
//!
//! const V1: GroupVersion = GroupVersion::new("example.com/v1");
//! static WIDGETS: ResourceInfo = ResourceInfo::new("example.com", "widgets", "widget", "Widget", "WidgetList", true);
//!
//! assert_eq!(V1.group(), "example.com");
//! assert_eq!(V1.path(), "/apis/example.com/v1");
//! assert_eq!(WIDGETS.group_resource(), "widgets.example.com");
//! ```

use crate::meta::{HasListMeta, HasObjectMeta, ListMeta};

/// The core (legacy) API group, served under `/api`: its name is empty.
pub const CORE_GROUP: &str = "";

/// A group version, written as its `apiVersion`: `wardle.example.com/v1beta1`, or `v1` for
/// the core group.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct GroupVersion(&'static str);

impl GroupVersion {
    /// The group version whose `apiVersion` is `api_version`.
    pub const fn new(api_version: &'static str) -> Self {
        Self(api_version)
    }

    /// `wardle.example.com/v1beta1` / `v1`.
    pub fn api_version(self) -> &'static str {
        self.0
    }

    /// `wardle.example.com`, or [`CORE_GROUP`].
    pub fn group(self) -> &'static str {
        self.0.rsplit_once('/').map_or(CORE_GROUP, |(g, _)| g)
    }

    /// `v1beta1` / `v1`.
    pub fn version(self) -> &'static str {
        self.0.rsplit_once('/').map_or(self.0, |(_, v)| v)
    }

    /// The root of its paths: `/apis/wardle.example.com/v1beta1`, `/api/v1`.
    pub fn path(self) -> String {
        match self.group() {
            CORE_GROUP => format!("/api/{}", self.version()),
            group => format!("/apis/{group}/{}", self.version()),
        }
    }
}

/// Static facts about a resource, for routing, discovery, keys and error messages.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ResourceInfo {
    /// API group (empty for core).
    pub group: &'static str,
    /// Plural resource name (`flunders`).
    pub resource: &'static str,
    /// Singular name (`flunder`).
    pub singular: &'static str,
    /// Kind (`Flunder`).
    pub kind: &'static str,
    /// List kind (`FlunderList`).
    pub list_kind: &'static str,
    /// Whether objects live in a namespace.
    pub namespaced: bool,
    /// Verbs served on the resource itself.
    pub verbs: &'static [&'static str],
    /// Short names for discovery (`ns`).
    pub short_names: &'static [&'static str],
    /// The categories discovery lists it in (`all`: `kubectl get all` includes it).
    pub categories: &'static [&'static str],
    /// Whether the kind has a `status` subresource (`.../{name}/status`: get, update, patch
    /// of the status alone; writes to the object itself leave the status as it was).
    pub status_subresource: bool,
    /// Whether the kind has a `scale` subresource (`.../{name}/scale`: an `autoscaling/v1`
    /// `Scale` of its replicas; a custom resource's definition declares it).
    pub scale_subresource: bool,
}

/// The verbs of a `status` subresource.
pub const STATUS_VERBS: &[&str] = &["get", "patch", "update"];

/// Every verb of the generic registry.
pub const VERBS: &[&str] = &[
    "create",
    "delete",
    "deletecollection",
    "get",
    "list",
    "patch",
    "update",
    "watch",
];

/// `name.group`, or `name` alone in the core group (as Kubernetes prints group resources).
fn qualified(name: &str, group: &str) -> String {
    if group.is_empty() {
        name.to_owned()
    } else {
        format!("{name}.{group}")
    }
}

impl ResourceInfo {
    /// A resource with every verb of [`VERBS`], no short names and no status subresource.
    pub const fn new(
        group: &'static str,
        resource: &'static str,
        singular: &'static str,
        kind: &'static str,
        list_kind: &'static str,
        namespaced: bool,
    ) -> Self {
        Self {
            group,
            resource,
            singular,
            kind,
            list_kind,
            namespaced,
            verbs: VERBS,
            short_names: &[],
            categories: &[],
            status_subresource: false,
            scale_subresource: false,
        }
    }

    /// `flunders.wardle.example.com` (`namespaces` in core), the form used in error messages.
    pub fn group_resource(&self) -> String {
        qualified(self.resource, self.group)
    }

    /// `Flunder.wardle.example.com` (`Namespace` in core), the form used in `Invalid` errors.
    pub fn group_kind(&self) -> String {
        qualified(self.kind, self.group)
    }
}

/// What a server serves: group versions, preferred first within their group, each with its
/// resources in discovery order. Routing, discovery and OpenAPI read it.
#[derive(Debug, Clone, Default)]
pub(crate) struct Catalog {
    versions: Vec<(GroupVersion, Vec<&'static ResourceInfo>)>,
}

impl Catalog {
    /// Serves nothing.
    pub(crate) fn new() -> Self {
        Self::default()
    }

    /// Also serves `resource` in `version`. Within a group, versions added first are
    /// preferred; within a version, resources keep the order they were added in.
    #[must_use]
    pub(crate) fn with(mut self, version: GroupVersion, resource: &'static ResourceInfo) -> Self {
        match self.versions.iter_mut().find(|(v, _)| *v == version) {
            Some((_, resources)) => resources.push(resource),
            None => self.versions.push((version, vec![resource])),
        }
        self
    }

    /// Every served group version.
    pub(crate) fn versions(&self) -> impl Iterator<Item = GroupVersion> + '_ {
        self.versions.iter().map(|(v, _)| *v)
    }

    /// The served versions of `group`, preferred first.
    pub(crate) fn versions_of(&self, group: &str) -> Vec<GroupVersion> {
        self.versions().filter(|v| v.group() == group).collect()
    }

    /// The named groups (not core), in the order their first version was added.
    pub(crate) fn groups(&self) -> Vec<&'static str> {
        let mut groups: Vec<&'static str> = Vec::new();
        for v in self.versions() {
            if v.group() != CORE_GROUP && !groups.contains(&v.group()) {
                groups.push(v.group());
            }
        }
        groups
    }

    /// Whether `version` is served.
    pub(crate) fn serves(&self, version: GroupVersion) -> bool {
        self.versions().any(|v| v == version)
    }

    /// The served group version `group`/`version`.
    pub(crate) fn find(&self, group: &str, version: &str) -> Option<GroupVersion> {
        self.versions()
            .find(|v| v.group() == group && v.version() == version)
    }

    /// The resources `version` serves, in discovery order (none if it is not served).
    pub(crate) fn resources(&self, version: GroupVersion) -> &[&'static ResourceInfo] {
        self.versions
            .iter()
            .find(|(v, _)| *v == version)
            .map_or(&[], |(_, r)| r.as_slice())
    }

    /// The resource named `resource` in `version`.
    pub(crate) fn resource(
        &self,
        version: GroupVersion,
        resource: &str,
    ) -> Option<&'static ResourceInfo> {
        self.resources(version)
            .iter()
            .find(|r| r.resource == resource)
            .copied()
    }
}

/// A versioned (external) type: how it is named on the wire and how it maps to the internal
/// type. Implemented for every object and list kind of every served version.
pub trait Versioned: serde::Serialize + serde::de::DeserializeOwned + Clone {
    /// The internal type this converts to and from.
    type Internal;
    /// The version.
    const VERSION: GroupVersion;
    /// The kind written in `kind`.
    const KIND: &'static str;

    /// Set `apiVersion` and `kind` to this type's.
    fn set_type_meta(&mut self);
    /// Apply the version's defaulting functions.
    fn apply_defaults(&mut self) {}
    /// Convert to the internal type.
    fn into_internal(self) -> Self::Internal;
    /// Convert from the internal type and set `apiVersion`/`kind`.
    fn from_internal(internal: Self::Internal) -> Self;
}

/// A versioned single object (not a list), with metadata. [`kind`](crate::kind) implements it
/// (with [`Versioned`] and [`HasObjectMeta`]) from a kind's declaration.
pub trait VersionedObject: Versioned + HasObjectMeta {
    /// The list type of this kind in the same version.
    type List: VersionedList<Item = Self>;
    /// The resource this object belongs to.
    const RESOURCE: &'static ResourceInfo;
    /// `apiVersion` and `kind` as they were sent (empty when absent).
    fn type_meta(&self) -> (&str, &str);
}

/// A versioned list.
pub trait VersionedList: Versioned + HasListMeta {
    /// The item type.
    type Item: VersionedObject;
    /// Build a list (with `apiVersion`/`kind` set) from items.
    fn from_items(meta: ListMeta, items: Vec<Self::Item>) -> Self;
    /// The items.
    fn items(&self) -> &[Self::Item];
    /// Take the items out.
    fn into_items(self) -> Vec<Self::Item>;
}

/// The list kind of every object kind (`FlunderList`, `NamespaceList`): `apiVersion`, `kind`,
/// list metadata and the items, in one version.
///
/// ```
/// use conneg_apiserver::meta::ListMeta;
/// use conneg_apiserver::resource::{List, VersionedList};
///
/// #[conneg_apiserver::kind(group = "example.com", version = "v1", kind = "Widget", namespaced)]
/// #[derive(Clone, Default, serde::Serialize, serde::Deserialize)]
/// struct Widget {}
///
/// let list = List::from_items(ListMeta::default(), vec![Widget::default()]);
/// assert_eq!((list.kind.as_str(), list.api_version.as_str()), ("WidgetList", "example.com/v1"));
/// assert_eq!(list.items().len(), 1);
/// ```
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(
    rename_all = "camelCase",
    bound(
        serialize = "T: serde::Serialize",
        deserialize = "T: serde::Deserialize<'de>"
    )
)]
pub struct List<T> {
    /// The list kind (`FlunderList`).
    #[serde(
        default,
        deserialize_with = "crate::meta::null_as_default",
        skip_serializing_if = "String::is_empty"
    )]
    pub kind: String,
    /// The version of the list and its items.
    #[serde(
        default,
        deserialize_with = "crate::meta::null_as_default",
        skip_serializing_if = "String::is_empty"
    )]
    pub api_version: String,
    /// List metadata (always written).
    #[serde(default, deserialize_with = "crate::meta::null_as_default")]
    pub metadata: ListMeta,
    /// The items (always written, `[]` when empty).
    #[serde(
        default = "Vec::new",
        deserialize_with = "crate::meta::null_as_default"
    )]
    pub items: Vec<T>,
}

impl<T> Default for List<T> {
    fn default() -> Self {
        Self {
            kind: String::new(),
            api_version: String::new(),
            metadata: ListMeta::default(),
            items: Vec::new(),
        }
    }
}

impl<T> HasListMeta for List<T> {
    fn list_meta(&self) -> &ListMeta {
        &self.metadata
    }
    fn list_meta_mut(&mut self) -> &mut ListMeta {
        &mut self.metadata
    }
}

impl<T: VersionedObject<List = List<T>>> Versioned for List<T> {
    type Internal = List<T::Internal>;
    const VERSION: GroupVersion = T::VERSION;
    const KIND: &'static str = T::RESOURCE.list_kind;

    fn set_type_meta(&mut self) {
        T::VERSION.api_version().clone_into(&mut self.api_version);
        Self::KIND.clone_into(&mut self.kind);
    }
    fn apply_defaults(&mut self) {
        self.items.iter_mut().for_each(Versioned::apply_defaults);
    }
    fn into_internal(self) -> List<T::Internal> {
        List {
            kind: self.kind,
            api_version: self.api_version,
            metadata: self.metadata,
            items: self.items.into_iter().map(T::into_internal).collect(),
        }
    }
    fn from_internal(internal: List<T::Internal>) -> Self {
        Self::from_items(
            internal.metadata,
            internal.items.into_iter().map(T::from_internal).collect(),
        )
    }
}

impl<T: VersionedObject<List = List<T>>> VersionedList for List<T> {
    type Item = T;
    fn from_items(metadata: ListMeta, items: Vec<T>) -> Self {
        let mut list = Self {
            metadata,
            items,
            ..Self::default()
        };
        list.set_type_meta();
        list
    }
    fn items(&self) -> &[T] {
        &self.items
    }
    fn into_items(self) -> Vec<T> {
        self.items
    }
}

/// Convert a versioned object to another version through the internal type.
pub fn convert<A, B>(from: A) -> B
where
    A: Versioned,
    B: Versioned<Internal = A::Internal>,
{
    B::from_internal(from.into_internal())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn group_versions() {
        let core = GroupVersion::new("v1");
        assert_eq!((core.group(), core.version()), ("", "v1"));
        assert_eq!(core.path(), "/api/v1");
        let g = GroupVersion::new("wardle.example.com/v1beta1");
        assert_eq!((g.group(), g.version()), ("wardle.example.com", "v1beta1"));
    }

    #[test]
    fn catalog_keeps_preference_and_groups() {
        static A: ResourceInfo = ResourceInfo::new("g.io", "as", "a", "A", "AList", true);
        static NS: ResourceInfo = ResourceInfo::new(
            "",
            "namespaces",
            "namespace",
            "Namespace",
            "NamespaceList",
            false,
        );
        let (v2, v1, core) = (
            GroupVersion::new("g.io/v2"),
            GroupVersion::new("g.io/v1"),
            GroupVersion::new("v1"),
        );
        let c = Catalog::new().with(v2, &A).with(v1, &A).with(core, &NS);
        assert_eq!(c.versions_of("g.io"), [v2, v1]);
        assert_eq!(c.groups(), ["g.io"]);
        assert_eq!(c.find("", "v1"), Some(core));
        assert_eq!(c.find("g.io", "v3"), None);
        assert!(c.resource(v1, "namespaces").is_none());
        assert_eq!(c.resource(core, "namespaces"), Some(&NS));
        assert!(c.resources(GroupVersion::new("x/v1")).is_empty());
    }
}
