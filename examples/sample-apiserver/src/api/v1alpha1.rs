//! `wardle.example.com/v1alpha1`: Flunder, FlunderList, Fischer, FischerList. The storage
//! version. Defaulting (§3) and the hand-written Flunder conversion (§4) live here.

use conneg_apiserver::declarative::JsonSchema;
use serde::Deserialize;

use conneg_apiserver::meta::null_as_default;

use super::{FLUNDERS, ReferenceType, internal};
use conneg_apiserver::resource::List;

/// `wardle.example.com/v1alpha1`.
pub const API_VERSION: &str = "wardle.example.com/v1alpha1";

/// FlunderSpec is the specification of a Flunder.
///
/// One reference plus its type. Its rules are declared here, once: the server enforces them
/// and publishes them in its OpenAPI.
#[derive(Debug, Clone, Default, PartialEq, Eq, conneg_cbor::Serialize, Deserialize, JsonSchema)]
#[schemars(extend("x-kubernetes-validations" = [
    {"rule": "!has(self.referenceType) || self.referenceType != 'Flunder' || has(self.reference)",
     "message": "cannot be empty if referenceType is Flunder",
     "fieldPath": ".reference", "reason": "FieldValueInvalid"},
    {"rule": "!has(self.referenceType) || self.referenceType != 'Fischer' || has(self.reference)",
     "message": "cannot be empty if referenceType is Fischer",
     "fieldPath": ".reference", "reason": "FieldValueInvalid"},
]))]
#[serde(rename_all = "camelCase")]
pub struct FlunderSpec {
    /// A name of another flunder or fischer, depending on the reference type.
    #[serde(
        default,
        deserialize_with = "null_as_default",
        skip_serializing_if = "String::is_empty"
    )]
    pub reference: String,
    /// The reference type, defaults to "Flunder" if reference is set.
    // A Go pointer: `""` decodes distinct from absent (defaulting clears it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reference_type: Option<ReferenceType>,
}

/// FlunderStatus is empty.
// Always written, as `{}`.
#[derive(Debug, Clone, Default, PartialEq, Eq, conneg_cbor::Serialize, Deserialize, JsonSchema)]
pub struct FlunderStatus {}

/// Flunder is an example type with a spec and a status.
// v1alpha1 `Flunder`, the storage version; the resource (`flunders`) is shared with v1beta1.
#[conneg_apiserver::kind(
    version = "v1alpha1",
    resource = FLUNDERS,
    internal = internal::Flunder,
    defaults = set_defaults_flunder
)]
#[derive(Debug, Clone, Default, PartialEq, conneg_cbor::Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Flunder {
    /// The desired state.
    #[serde(default, deserialize_with = "null_as_default")]
    pub spec: FlunderSpec,
    /// The observed state.
    #[serde(default, deserialize_with = "null_as_default")]
    pub status: FlunderStatus,
}

/// Fischer names flunders that the BanFlunder admission plugin refuses to create.
// v1alpha1 `Fischer` (cluster-scoped, served in this version only: `fischers`, `FischerList`).
#[conneg_apiserver::kind(
    group = "wardle.example.com",
    version = "v1alpha1",
    kind = "Fischer",
    internal = internal::Fischer
)]
#[derive(Debug, Clone, Default, PartialEq, conneg_cbor::Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Fischer {
    /// DisallowedFlunders holds a list of Flunder.Names that are disallowed.
    #[schemars(extend("x-kubernetes-list-type" = "atomic"))]
    #[serde(
        default,
        deserialize_with = "null_as_default",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub disallowed_flunders: Vec<String>,
}

/// v1alpha1 `FlunderList`.
pub type FlunderList = List<Flunder>;
/// v1alpha1 `FischerList`.
pub type FischerList = List<Fischer>;

/// `SetDefaults_Flunder`: the spec's ([`set_defaults_flunder_spec`]).
pub fn set_defaults_flunder(flunder: &mut Flunder) {
    set_defaults_flunder_spec(&mut flunder.spec);
}

/// `SetDefaults_FlunderSpec`: a reference without a (non-empty) type refers to a Flunder. An
/// empty type is no type (conversion drops it anyway), so it is not refused by the enum.
pub fn set_defaults_flunder_spec(spec: &mut FlunderSpec) {
    let unset = spec
        .reference_type
        .as_ref()
        .is_none_or(ReferenceType::is_empty);
    if unset {
        spec.reference_type = (!spec.reference.is_empty()).then_some(ReferenceType::Flunder);
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

/// Through [`convert_flunder_spec_to_internal`].
impl From<Flunder> for internal::Flunder {
    fn from(f: Flunder) -> Self {
        internal::Flunder {
            metadata: f.metadata,
            spec: convert_flunder_spec_to_internal(f.spec),
            status: internal::FlunderStatus {},
        }
    }
}

/// Through [`convert_flunder_spec_from_internal`] (`apiVersion` and `kind` are set by
/// `Versioned::from_internal`).
impl From<internal::Flunder> for Flunder {
    fn from(i: internal::Flunder) -> Self {
        Flunder {
            metadata: i.metadata,
            spec: convert_flunder_spec_from_internal(i.spec),
            ..Default::default()
        }
    }
}

/// Field for field.
impl From<Fischer> for internal::Fischer {
    fn from(f: Fischer) -> Self {
        internal::Fischer {
            metadata: f.metadata,
            disallowed_flunders: f.disallowed_flunders,
        }
    }
}

/// Field for field (`apiVersion` and `kind` are set by `Versioned::from_internal`).
impl From<internal::Fischer> for Fischer {
    fn from(i: internal::Fischer) -> Self {
        Fischer {
            metadata: i.metadata,
            disallowed_flunders: i.disallowed_flunders,
            ..Default::default()
        }
    }
}
