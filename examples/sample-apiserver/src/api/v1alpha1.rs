//! `wardle.example.com/v1alpha1`: Flunder, FlunderList, Fischer, FischerList. The storage
//! version. Defaulting (§3) and the hand-written Flunder conversion (§4) live here.

use serde::{Deserialize, Serialize};

use conneg_apiserver::meta::{ObjectMeta, null_as_default};

use super::{FISCHERS, FLUNDERS, ReferenceType, internal};
use conneg_apiserver::resource::{GroupVersion, List, Versioned};

/// `wardle.example.com/v1alpha1`.
pub const API_VERSION: &str = "wardle.example.com/v1alpha1";

/// v1alpha1 `FlunderSpec`: one reference plus its type.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FlunderSpec {
    /// A name of another flunder or fischer, depending on the reference type.
    #[serde(
        default,
        deserialize_with = "null_as_default",
        skip_serializing_if = "String::is_empty"
    )]
    pub reference: String,
    /// The reference type, defaults to "Flunder" if reference is set. A Go pointer: `""` is
    /// kept distinct from absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reference_type: Option<ReferenceType>,
}

/// v1alpha1 `FlunderStatus` (empty, always written as `{}`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct FlunderStatus {}

/// v1alpha1 `Flunder`.
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
    /// `wardle.example.com/v1alpha1`.
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

/// v1alpha1 `Fischer` (cluster-scoped).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Fischer {
    /// `Fischer`.
    #[serde(
        default,
        deserialize_with = "null_as_default",
        skip_serializing_if = "String::is_empty"
    )]
    pub kind: String,
    /// `wardle.example.com/v1alpha1`.
    #[serde(
        default,
        deserialize_with = "null_as_default",
        skip_serializing_if = "String::is_empty"
    )]
    pub api_version: String,
    /// Metadata (always written).
    #[serde(default, deserialize_with = "null_as_default")]
    pub metadata: ObjectMeta,
    /// Names of Flunders that are disallowed (`+listType=atomic`).
    #[serde(
        default,
        deserialize_with = "null_as_default",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub disallowed_flunders: Vec<String>,
}

conneg_apiserver::impl_meta!(Flunder);
conneg_apiserver::impl_meta!(Fischer);

/// v1alpha1 `FlunderList`.
pub type FlunderList = List<Flunder>;
/// v1alpha1 `FischerList`.
pub type FischerList = List<Fischer>;

/// `SetDefaults_FlunderSpec`: a reference without a (non-empty) type refers to a Flunder.
pub fn set_defaults_flunder_spec(spec: &mut FlunderSpec) {
    let unset = spec
        .reference_type
        .as_ref()
        .is_none_or(ReferenceType::is_empty);
    if unset && !spec.reference.is_empty() {
        spec.reference_type = Some(ReferenceType::Flunder);
    }
}

/// `Convert_v1alpha1_FlunderSpec_To_wardle_FlunderSpec`: an unknown (or empty) reference
/// type is dropped together with the reference, silently, as the Go switch does.
pub fn convert_flunder_spec_to_internal(spec: FlunderSpec) -> internal::FlunderSpec {
    let mut out = internal::FlunderSpec::default();
    match spec.reference_type {
        Some(ReferenceType::Flunder) => {
            out.reference_type = Some(ReferenceType::Flunder);
            out.flunder_reference = spec.reference;
        }
        Some(ReferenceType::Fischer) => {
            out.reference_type = Some(ReferenceType::Fischer);
            out.fischer_reference = spec.reference;
        }
        Some(ReferenceType::Other(_)) | None => {}
    }
    out
}

/// `Convert_wardle_FlunderSpec_To_v1alpha1_FlunderSpec`: the reference matching the type is
/// kept; with no or an unknown type, both are unset.
pub fn convert_flunder_spec_from_internal(spec: internal::FlunderSpec) -> FlunderSpec {
    match spec.reference_type {
        Some(ReferenceType::Flunder) => FlunderSpec {
            reference: spec.flunder_reference,
            reference_type: Some(ReferenceType::Flunder),
        },
        Some(ReferenceType::Fischer) => FlunderSpec {
            reference: spec.fischer_reference,
            reference_type: Some(ReferenceType::Fischer),
        },
        Some(ReferenceType::Other(_)) | None => FlunderSpec::default(),
    }
}

impl Versioned for Flunder {
    type Internal = internal::Flunder;
    const VERSION: GroupVersion = super::V1ALPHA1;
    const KIND: &'static str = "Flunder";

    fn set_type_meta(&mut self) {
        API_VERSION.clone_into(&mut self.api_version);
        Self::KIND.clone_into(&mut self.kind);
    }
    fn apply_defaults(&mut self) {
        set_defaults_flunder_spec(&mut self.spec);
    }
    fn into_internal(self) -> internal::Flunder {
        internal::Flunder {
            metadata: self.metadata,
            spec: convert_flunder_spec_to_internal(self.spec),
            status: internal::FlunderStatus {},
        }
    }
    fn from_internal(i: internal::Flunder) -> Self {
        let mut out = Flunder {
            metadata: i.metadata,
            spec: convert_flunder_spec_from_internal(i.spec),
            ..Default::default()
        };
        out.set_type_meta();
        out
    }
}

impl Versioned for Fischer {
    type Internal = internal::Fischer;
    const VERSION: GroupVersion = super::V1ALPHA1;
    const KIND: &'static str = "Fischer";

    fn set_type_meta(&mut self) {
        API_VERSION.clone_into(&mut self.api_version);
        Self::KIND.clone_into(&mut self.kind);
    }
    fn into_internal(self) -> internal::Fischer {
        internal::Fischer {
            metadata: self.metadata,
            disallowed_flunders: self.disallowed_flunders,
        }
    }
    fn from_internal(i: internal::Fischer) -> Self {
        let mut out = Fischer {
            metadata: i.metadata,
            disallowed_flunders: i.disallowed_flunders,
            ..Default::default()
        };
        out.set_type_meta();
        out
    }
}

conneg_apiserver::impl_versioned_object!(Flunder, FLUNDERS);
conneg_apiserver::impl_versioned_object!(Fischer, FISCHERS);
