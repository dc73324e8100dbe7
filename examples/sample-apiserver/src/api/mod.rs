//! The wardle.example.com API: internal and versioned types, defaulting, conversion,
//! validation and the BanFlunder admission plugin (reference write-up §2–§6).
//!
//! The request pipeline the HTTP layer is expected to run, as Kubernetes does:
//!
//! 1. decode the body into the versioned type named by the URL ([`v1alpha1`], [`v1beta1`]);
//! 2. [`Versioned::apply_defaults`] (a no-op except v1alpha1 `Flunder`);
//! 3. [`Versioned::into_internal`];
//! 4. on create only: [`admission::BanFlunder`] then [`validation::validate_flunder`];
//! 5. convert to the storage version v1alpha1 ([`Versioned::from_internal`]) and encode with
//!    [`conneg_apiserver::storage::codec`];
//! 6. on read, decode the stored v1alpha1 object, default it, and convert through internal to
//!    the version the client asked for.

pub mod admission;
pub mod core_v1;
pub mod internal;
pub mod v1alpha1;
pub mod v1beta1;
pub mod validation;

mod reference_type;

pub use reference_type::ReferenceType;

use conneg_apiserver::meta::HasObjectMeta;

/// The API group.
pub const GROUP: &str = "wardle.example.com";

/// The core (legacy) API group, served under `/api`: its name is empty.
pub const CORE_GROUP: &str = "";

/// A served group version: the versions of wardle.example.com, and core `v1` (namespaces,
/// when the server runs standalone).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Version {
    /// `v1alpha1`: Flunder and Fischer; also the storage version.
    V1alpha1,
    /// `v1beta1`: Flunder only; the preferred version.
    V1beta1,
    /// Core `v1` (`/api/v1`): Namespace.
    CoreV1,
}

impl Version {
    /// Served versions of wardle.example.com in priority order (preferred first), as
    /// discovery lists them.
    pub const PRIORITY: [Version; 2] = [Version::V1beta1, Version::V1alpha1];
    /// Every version this program knows (which are served depends on `--standalone`).
    pub const ALL: [Version; 3] = [Version::V1beta1, Version::V1alpha1, Version::CoreV1];
    /// The version objects are stored in.
    pub const STORAGE: Version = Version::V1alpha1;

    /// `v1alpha1` / `v1beta1` / `v1`.
    pub fn as_str(self) -> &'static str {
        match self {
            Version::V1alpha1 => "v1alpha1",
            Version::V1beta1 => "v1beta1",
            Version::CoreV1 => "v1",
        }
    }

    /// The group: wardle.example.com, or [`CORE_GROUP`].
    pub fn group(self) -> &'static str {
        match self {
            Version::V1alpha1 | Version::V1beta1 => GROUP,
            Version::CoreV1 => CORE_GROUP,
        }
    }

    /// `wardle.example.com/v1alpha1` / `wardle.example.com/v1beta1` / `v1`.
    pub fn api_version(self) -> &'static str {
        match self {
            Version::V1alpha1 => v1alpha1::API_VERSION,
            Version::V1beta1 => v1beta1::API_VERSION,
            Version::CoreV1 => core_v1::API_VERSION,
        }
    }

    /// The root of its paths: `/apis/wardle.example.com/v1beta1`, `/api/v1`.
    pub fn path(self) -> String {
        match self.group() {
            CORE_GROUP => format!("/api/{}", self.as_str()),
            group => format!("/apis/{group}/{}", self.as_str()),
        }
    }

    /// Parse a bare version of wardle.example.com (`v1beta1`).
    pub fn parse(version: &str) -> Option<Self> {
        Self::parse_in(GROUP, version)
    }

    /// Parse a bare version of `group` (`""` for core).
    pub fn parse_in(group: &str, version: &str) -> Option<Self> {
        match (group, version) {
            (GROUP, "v1alpha1") => Some(Version::V1alpha1),
            (GROUP, "v1beta1") => Some(Version::V1beta1),
            (CORE_GROUP, "v1") => Some(Version::CoreV1),
            _ => None,
        }
    }

    /// Parse a full `apiVersion` (`wardle.example.com/v1beta1`).
    pub fn parse_api_version(api_version: &str) -> Option<Self> {
        let (group, version) = api_version.split_once('/')?;
        if group != GROUP {
            return None;
        }
        Self::parse(version)
    }

    /// The resources this version serves, in discovery order.
    pub fn resources(self) -> &'static [&'static ResourceInfo] {
        match self {
            Version::V1alpha1 => &[&FISCHERS, &FLUNDERS],
            Version::V1beta1 => &[&FLUNDERS],
            Version::CoreV1 => &[&NAMESPACES],
        }
    }
}

/// Static facts about a resource, for routing, discovery, keys and error messages.
#[derive(Debug, Clone, PartialEq, Eq)]
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
    /// Whether the kind has a `status` subresource (`.../{name}/status`: get, update, patch
    /// of the status alone; writes to the object itself leave the status as it was).
    pub status_subresource: bool,
}

/// The verbs of a `status` subresource.
pub const STATUS_VERBS: &[&str] = &["get", "patch", "update"];

const VERBS: &[&str] = &[
    "create",
    "delete",
    "deletecollection",
    "get",
    "list",
    "patch",
    "update",
    "watch",
];

/// `flunders` (namespaced; v1alpha1 and v1beta1).
pub const FLUNDERS: ResourceInfo = ResourceInfo {
    group: GROUP,
    resource: "flunders",
    singular: "flunder",
    kind: "Flunder",
    list_kind: "FlunderList",
    namespaced: true,
    verbs: VERBS,
    short_names: &[],
    status_subresource: false,
};

/// `fischers` (cluster-scoped; v1alpha1 only).
pub const FISCHERS: ResourceInfo = ResourceInfo {
    group: GROUP,
    resource: "fischers",
    singular: "fischer",
    kind: "Fischer",
    list_kind: "FischerList",
    namespaced: false,
    verbs: VERBS,
    short_names: &[],
    status_subresource: false,
};

/// `namespaces` (core v1, cluster-scoped; served when the server runs standalone).
pub const NAMESPACES: ResourceInfo = ResourceInfo {
    group: CORE_GROUP,
    resource: "namespaces",
    singular: "namespace",
    kind: "Namespace",
    list_kind: "NamespaceList",
    namespaced: false,
    verbs: &[
        "create", "delete", "get", "list", "patch", "update", "watch",
    ],
    short_names: &["ns"],
    status_subresource: true,
};

/// `name.group`, or `name` alone in the core group (as Kubernetes prints group resources).
fn qualified(name: &str, group: &str) -> String {
    if group.is_empty() {
        name.to_owned()
    } else {
        format!("{name}.{group}")
    }
}

impl ResourceInfo {
    /// `flunders.wardle.example.com` (`namespaces` in core), the form used in error messages.
    pub fn group_resource(&self) -> String {
        qualified(self.resource, self.group)
    }

    /// `Flunder.wardle.example.com` (`Namespace` in core), the form used in `Invalid` errors.
    pub fn group_kind(&self) -> String {
        qualified(self.kind, self.group)
    }

    /// Look a resource up by its plural name.
    pub fn by_resource(resource: &str) -> Option<&'static ResourceInfo> {
        [&FLUNDERS, &FISCHERS, &NAMESPACES]
            .into_iter()
            .find(|r| r.resource == resource)
    }
}

/// A versioned (external) type: how it is named on the wire and how it maps to the internal
/// type. Implemented for every object and list kind of every served version.
pub trait Versioned: serde::Serialize + serde::de::DeserializeOwned + Clone {
    /// The internal type this converts to and from.
    type Internal;
    /// The version.
    const VERSION: Version;
    /// The kind written in `kind`.
    const KIND: &'static str;

    /// Set `apiVersion` and `kind` to this type's.
    fn set_type_meta(&mut self);
    /// Apply the version's defaulting functions (reference §3).
    fn apply_defaults(&mut self) {}
    /// Convert to the internal type (reference §4).
    fn into_internal(self) -> Self::Internal;
    /// Convert from the internal type and set `apiVersion`/`kind`.
    fn from_internal(internal: Self::Internal) -> Self;
}

/// A versioned single object (not a list), with metadata.
pub trait VersionedObject: Versioned + HasObjectMeta {
    /// The list type of this kind in the same version.
    type List: VersionedList<Item = Self>;
    /// The resource this object belongs to.
    const RESOURCE: &'static ResourceInfo;
}

/// A versioned list.
pub trait VersionedList: Versioned + conneg_apiserver::meta::HasListMeta {
    /// The item type.
    type Item: VersionedObject;
    /// Build a list (with `apiVersion`/`kind` set) from items.
    fn from_items(meta: conneg_apiserver::meta::ListMeta, items: Vec<Self::Item>) -> Self;
    /// The items.
    fn items(&self) -> &[Self::Item];
    /// Take the items out.
    fn into_items(self) -> Vec<Self::Item>;
}

/// Convert a versioned object to another version through the internal type
/// (`v1alpha1::Flunder` <-> `v1beta1::Flunder`).
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
    fn versions_and_resources() {
        assert_eq!(
            Version::parse_api_version("wardle.example.com/v1beta1"),
            Some(Version::V1beta1)
        );
        assert_eq!(Version::parse_api_version("other.io/v1beta1"), None);
        assert_eq!(Version::PRIORITY[0], Version::V1beta1);
        assert_eq!(FLUNDERS.group_resource(), "flunders.wardle.example.com");
        assert_eq!(FLUNDERS.group_kind(), "Flunder.wardle.example.com");
        let names: Vec<_> = Version::V1alpha1
            .resources()
            .iter()
            .map(|r| r.resource)
            .collect();
        assert_eq!(names, ["fischers", "flunders"]);
    }
}
