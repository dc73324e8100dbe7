//! The wardle kinds' registry strategies (upstream `pkg/registry/wardle/*/strategy.go`): their
//! versions, what counts as a spec change and their Table columns, as [`Strategy`]
//! implementations on the internal types. Their validation is declared on the versioned types
//! ([`crate::api::v1beta1::FlunderSpec`]).

use serde_json::{Value, json};

use crate::api::{internal, v1alpha1, v1beta1};
use conneg_apiserver::registry::{Column, ServedVersion, Strategy};

impl Strategy for internal::Flunder {
    type Stored = v1alpha1::Flunder;

    fn versions() -> Vec<ServedVersion<Self>> {
        vec![
            ServedVersion::of::<v1alpha1::Flunder>(),
            ServedVersion::of::<v1beta1::Flunder>(),
        ]
    }
    fn same_spec(&self, other: &Self) -> bool {
        self.spec == other.spec
    }
    const COLUMNS: &'static [Column] = &[
        Column::new(
            "Reference Type",
            "string",
            "The reference type: Flunder or Fischer.",
        ),
        Column::new(
            "Reference",
            "string",
            "The name of the referenced flunder or fischer.",
        ),
    ];
    fn cells(&self) -> Vec<Value> {
        let ty = self
            .spec
            .reference_type
            .as_ref()
            .map(|t| t.as_str().to_owned())
            .unwrap_or_default();
        let reference = if self.spec.fischer_reference.is_empty() {
            &self.spec.flunder_reference
        } else {
            &self.spec.fischer_reference
        };
        vec![json!(ty), json!(reference)]
    }
}

impl Strategy for internal::Fischer {
    type Stored = v1alpha1::Fischer;

    fn same_spec(&self, other: &Self) -> bool {
        self.disallowed_flunders == other.disallowed_flunders
    }
    const COLUMNS: &'static [Column] = &[Column::new(
        "Disallowed Flunders",
        "string",
        "Names of flunders that may not be created.",
    )];
    fn cells(&self) -> Vec<Value> {
        vec![json!(self.disallowed_flunders.join(","))]
    }
}
