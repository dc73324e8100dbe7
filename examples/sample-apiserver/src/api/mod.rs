//! The wardle.example.com API: internal and versioned types, defaulting, conversion, the
//! declared validation rules and the BanFlunder admission plugin (reference write-up §2–§6).
//!
//! The request pipeline the generic server runs, as Kubernetes does:
//!
//! 1. decode the body into the versioned type named by the URL ([`v1alpha1`], [`v1beta1`]);
//! 2. [`Versioned::apply_defaults`] (a no-op except v1alpha1 `Flunder`);
//! 3. [`Versioned::into_internal`];
//! 4. [`admission::BanFlunder`] (create), then validation: the rules declared on the
//!    versioned type of the request ([`v1beta1::FlunderSpec`], [`v1alpha1::FlunderSpec`]),
//!    checked by [`conneg_apiserver::declarative`] on create and, with ratcheting, on update;
//! 5. convert to the storage version v1alpha1 ([`Versioned::from_internal`]) and encode with
//!    [`conneg_apiserver::storage::codec`];
//! 6. on read, decode the stored v1alpha1 object, default it, and convert through internal to
//!    the version the client asked for.
//!
//! [`Versioned::apply_defaults`]: conneg_apiserver::resource::Versioned::apply_defaults
//! [`Versioned::into_internal`]: conneg_apiserver::resource::Versioned::into_internal
//! [`Versioned::from_internal`]: conneg_apiserver::resource::Versioned::from_internal

pub mod admission;
pub mod internal;
pub mod v1alpha1;
pub mod v1beta1;

mod reference_type;

pub use reference_type::ReferenceType;

use conneg_apiserver::resource::{GroupVersion, ResourceInfo, VERBS};

/// The API group.
pub const GROUP: &str = "wardle.example.com";

/// `wardle.example.com/v1alpha1`: Flunder and Fischer; also the storage version.
pub const V1ALPHA1: GroupVersion = GroupVersion::new(v1alpha1::API_VERSION);
/// `wardle.example.com/v1beta1`: Flunder only; the preferred version.
pub const V1BETA1: GroupVersion = GroupVersion::new(v1beta1::API_VERSION);

/// `flunders` (namespaced; v1alpha1 and v1beta1, whose types name it with
/// `#[kind(resource = FLUNDERS)]`). `fischers` is declared on [`v1alpha1::Fischer`], its one
/// version.
pub const FLUNDERS: ResourceInfo = ResourceInfo {
    group: GROUP,
    resource: "flunders",
    singular: "flunder",
    kind: "Flunder",
    list_kind: "FlunderList",
    namespaced: true,
    verbs: VERBS,
    short_names: &[],
    categories: &[],
    status_subresource: false,
    scale_subresource: false,
};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names() {
        assert_eq!(V1BETA1.group(), GROUP);
        assert_eq!(FLUNDERS.group_resource(), "flunders.wardle.example.com");
        assert_eq!(FLUNDERS.group_kind(), "Flunder.wardle.example.com");
    }
}
