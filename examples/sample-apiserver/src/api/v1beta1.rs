//! `wardle.example.com/v1beta1`: Flunder and FlunderList (the preferred version). Conversion
//! to internal is field for field; there is no defaulting.

use conneg_apiserver::declarative::JsonSchema;
use serde::Deserialize;

use conneg_apiserver::meta::null_as_default;

use super::reference_type::optional_nonempty;
use super::{FLUNDERS, ReferenceType, internal};
use conneg_apiserver::resource::List;

/// `wardle.example.com/v1beta1`.
pub const API_VERSION: &str = "wardle.example.com/v1beta1";

/// FlunderSpec is the specification of a Flunder.
///
/// Its rules are declared here, once: the server enforces them and publishes them in its
/// OpenAPI (`x-kubernetes-validations`, the `referenceType` enum).
#[derive(Debug, Clone, Default, PartialEq, Eq, conneg_cbor::Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
// The rules are exclusive, as the hand-written checks were (the first that applied was the
// only one reported): each holds unless its own case is the one at hand.
#[schemars(extend("x-kubernetes-validations" = [
    {"rule": "!(has(self.flunderReference) && has(self.fischerReference))",
     "message": "cannot be set with flunderReference at the same time",
     "fieldPath": ".fischerReference", "reason": "FieldValueInvalid"},
    {"rule": "!has(self.flunderReference) || has(self.fischerReference) || (has(self.referenceType) && self.referenceType == 'Flunder')",
     "message": "cannot be set if referenceType is not Flunder",
     "fieldPath": ".flunderReference", "reason": "FieldValueInvalid"},
    {"rule": "!has(self.fischerReference) || has(self.flunderReference) || (has(self.referenceType) && self.referenceType == 'Fischer')",
     "message": "cannot be set if referenceType is not Fischer",
     "fieldPath": ".fischerReference", "reason": "FieldValueInvalid"},
    {"rule": "!has(self.referenceType) || self.referenceType != 'Fischer' || has(self.fischerReference) || has(self.flunderReference)",
     "message": "cannot be empty if referenceType is Fischer",
     "fieldPath": ".fischerReference", "reason": "FieldValueInvalid"},
    {"rule": "!has(self.referenceType) || self.referenceType != 'Flunder' || has(self.flunderReference) || has(self.fischerReference)",
     "message": "cannot be empty if referenceType is Flunder",
     "fieldPath": ".flunderReference", "reason": "FieldValueInvalid"},
]))]
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
    /// The reference type.
    // `""` decodes as `None`; unknown strings are kept (and refused by the enum).
    #[serde(
        default,
        deserialize_with = "optional_nonempty::deserialize",
        skip_serializing_if = "Option::is_none"
    )]
    pub reference_type: Option<ReferenceType>,
}

/// FlunderStatus is empty.
// Always written, as `{}`.
#[derive(Debug, Clone, Default, PartialEq, Eq, conneg_cbor::Serialize, Deserialize, JsonSchema)]
pub struct FlunderStatus {}

/// Flunder is an example type with a spec and a status.
// v1beta1 `Flunder`, the preferred version; the resource (`flunders`) is shared with v1alpha1.
#[conneg_apiserver::kind(version = "v1beta1", resource = FLUNDERS, internal = internal::Flunder)]
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

/// v1beta1 `FlunderList`.
pub type FlunderList = List<Flunder>;

/// Field for field.
impl From<Flunder> for internal::Flunder {
    fn from(f: Flunder) -> Self {
        internal::Flunder {
            metadata: f.metadata,
            spec: internal::FlunderSpec {
                flunder_reference: f.spec.flunder_reference,
                fischer_reference: f.spec.fischer_reference,
                reference_type: f.spec.reference_type.filter(|t| !t.is_empty()),
            },
            status: internal::FlunderStatus {},
        }
    }
}

/// Field for field (`apiVersion` and `kind` are set by `Versioned::from_internal`).
impl From<internal::Flunder> for Flunder {
    fn from(i: internal::Flunder) -> Self {
        Flunder {
            metadata: i.metadata,
            spec: FlunderSpec {
                flunder_reference: i.spec.flunder_reference,
                fischer_reference: i.spec.fischer_reference,
                reference_type: i.spec.reference_type.filter(|t| !t.is_empty()),
            },
            ..Default::default()
        }
    }
}
