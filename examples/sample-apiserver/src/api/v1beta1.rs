//! `wardle.example.com/v1beta1`: Flunder and FlunderList (the preferred version). Conversion
//! to internal is field for field; there is no defaulting.

use serde::{Deserialize, Serialize};

use conneg_apiserver::meta::{ObjectMeta, null_as_default};

use super::reference_type::optional_nonempty;
use super::{FLUNDERS, ReferenceType, internal};
use conneg_apiserver::resource::{GroupVersion, List, Versioned};

/// `wardle.example.com/v1beta1`.
pub const API_VERSION: &str = "wardle.example.com/v1beta1";

/// v1beta1 `FlunderSpec`: the same shape as internal.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FlunderSpec {
    /// A name of another flunder, mutually exclusive to the FischerReference.
    #[serde(
        default,
        deserialize_with = "null_as_default",
        skip_serializing_if = "String::is_empty"
    )]
    pub flunder_reference: String,
    /// A name of a fischer, mutually exclusive to the FlunderReference.
    #[serde(
        default,
        deserialize_with = "null_as_default",
        skip_serializing_if = "String::is_empty"
    )]
    pub fischer_reference: String,
    /// The reference type (`""` decodes as `None`; unknown strings are kept).
    #[serde(
        default,
        deserialize_with = "optional_nonempty::deserialize",
        skip_serializing_if = "Option::is_none"
    )]
    pub reference_type: Option<ReferenceType>,
}

/// v1beta1 `FlunderStatus` (empty, always written as `{}`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct FlunderStatus {}

/// v1beta1 `Flunder`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Flunder {
    /// `Flunder`.
    #[serde(
        default,
        deserialize_with = "null_as_default",
        skip_serializing_if = "String::is_empty"
    )]
    pub kind: String,
    /// `wardle.example.com/v1beta1`.
    #[serde(
        default,
        deserialize_with = "null_as_default",
        skip_serializing_if = "String::is_empty"
    )]
    pub api_version: String,
    /// Metadata (always written).
    #[serde(default, deserialize_with = "null_as_default")]
    pub metadata: ObjectMeta,
    /// Spec (always written).
    #[serde(default, deserialize_with = "null_as_default")]
    pub spec: FlunderSpec,
    /// Status (always written).
    #[serde(default, deserialize_with = "null_as_default")]
    pub status: FlunderStatus,
}

conneg_apiserver::impl_meta!(Flunder);

/// v1beta1 `FlunderList`.
pub type FlunderList = List<Flunder>;

impl Versioned for Flunder {
    type Internal = internal::Flunder;
    const VERSION: GroupVersion = super::V1BETA1;
    const KIND: &'static str = "Flunder";

    fn set_type_meta(&mut self) {
        API_VERSION.clone_into(&mut self.api_version);
        Self::KIND.clone_into(&mut self.kind);
    }
    fn into_internal(self) -> internal::Flunder {
        internal::Flunder {
            metadata: self.metadata,
            spec: internal::FlunderSpec {
                flunder_reference: self.spec.flunder_reference,
                fischer_reference: self.spec.fischer_reference,
                reference_type: self.spec.reference_type.filter(|t| !t.is_empty()),
            },
            status: internal::FlunderStatus {},
        }
    }
    fn from_internal(i: internal::Flunder) -> Self {
        let mut out = Flunder {
            metadata: i.metadata,
            spec: FlunderSpec {
                flunder_reference: i.spec.flunder_reference,
                fischer_reference: i.spec.fischer_reference,
                reference_type: i.spec.reference_type.filter(|t| !t.is_empty()),
            },
            ..Default::default()
        };
        out.set_type_meta();
        out
    }
}

conneg_apiserver::impl_versioned_object!(Flunder, FLUNDERS);
