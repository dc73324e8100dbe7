//! The internal (hub) version, `pkg/apis/wardle` (reference §2). Never serialized.

use conneg_apiserver::meta::ObjectMeta;

use super::ReferenceType;

/// Internal `FlunderSpec`: both references, of which at most one should be set.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FlunderSpec {
    /// Name of another Flunder; exclusive with `fischer_reference`.
    pub flunder_reference: String,
    /// Name of a Fischer; exclusive with `flunder_reference`.
    pub fischer_reference: String,
    /// The reference type; `None` is Go's `""`.
    pub reference_type: Option<ReferenceType>,
}

/// Internal `FlunderStatus` (empty).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FlunderStatus {}

/// Internal `Flunder`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Flunder {
    /// Metadata.
    pub metadata: ObjectMeta,
    /// Spec.
    pub spec: FlunderSpec,
    /// Status.
    pub status: FlunderStatus,
}

/// Internal `Fischer`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Fischer {
    /// Metadata.
    pub metadata: ObjectMeta,
    /// Names of Flunders that may not be created.
    pub disallowed_flunders: Vec<String>,
}

conneg_apiserver::impl_meta!(Flunder);
conneg_apiserver::impl_meta!(Fischer);
