//! What differs between the served kinds, as one trait on the internal types: validation,
//! admission, what counts as a spec change (generation), and the Table columns.
//!
//! To add a resource: add its types to `api`, implement [`Kind`] for its internal type here,
//! and add a line to the `dispatch!` macro in `server/handlers.rs`.

use std::collections::BTreeMap;

use serde_json::{Value, json};

use crate::api::validation::{FieldError, validate_flunder};
use crate::api::{FISCHERS, FLUNDERS, ResourceInfo, VersionedObject, internal, v1alpha1};
use crate::meta::HasObjectMeta;

/// A Table column (`metav1.TableColumnDefinition`).
#[derive(Debug, Clone, Copy)]
pub struct Column {
    /// Header.
    pub name: &'static str,
    /// OpenAPI type (`string`, `integer`...).
    pub ty: &'static str,
    /// OpenAPI format (`name`, `date`...).
    pub format: &'static str,
    /// Description.
    pub description: &'static str,
}

/// A served kind, implemented on its internal type.
pub trait Kind: HasObjectMeta + Clone + PartialEq + Send + Sync + 'static {
    /// The storage-version type (v1alpha1).
    type Stored: VersionedObject<Internal = Self> + Send + Sync + 'static;
    /// The resource.
    const RESOURCE: &'static ResourceInfo;

    /// Validation on create (the strategy's `Validate`).
    fn validate_create(&self) -> Vec<FieldError> {
        Vec::new()
    }
    /// Whether BanFlunder admission applies on create.
    const ADMITTED: bool = false;
    /// Whether everything but metadata and status is equal: only a change outside them moves
    /// `metadata.generation` on, as Kubernetes' strategies do.
    fn same_spec(&self, other: &Self) -> bool;
    /// Table columns between Name and Age.
    fn columns() -> &'static [Column];
    /// The cells of those columns.
    fn cells(&self) -> Vec<Value>;
    /// Extra selectable fields beyond metadata.name/namespace (none here).
    fn fields(&self) -> BTreeMap<&str, &str> {
        BTreeMap::new()
    }
}

impl Kind for internal::Flunder {
    type Stored = v1alpha1::Flunder;
    const RESOURCE: &'static ResourceInfo = &FLUNDERS;
    const ADMITTED: bool = true;

    fn validate_create(&self) -> Vec<FieldError> {
        validate_flunder(self)
    }
    fn same_spec(&self, other: &Self) -> bool {
        self.spec == other.spec
    }
    fn columns() -> &'static [Column] {
        &[
            Column {
                name: "Reference Type",
                ty: "string",
                format: "",
                description: "The reference type: Flunder or Fischer.",
            },
            Column {
                name: "Reference",
                ty: "string",
                format: "",
                description: "The name of the referenced flunder or fischer.",
            },
        ]
    }
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

impl Kind for internal::Fischer {
    type Stored = v1alpha1::Fischer;
    const RESOURCE: &'static ResourceInfo = &FISCHERS;

    fn same_spec(&self, other: &Self) -> bool {
        self.disallowed_flunders == other.disallowed_flunders
    }
    fn columns() -> &'static [Column] {
        &[Column {
            name: "Disallowed Flunders",
            ty: "string",
            format: "",
            description: "Names of flunders that may not be created.",
        }]
    }
    fn cells(&self) -> Vec<Value> {
        vec![json!(self.disallowed_flunders.join(","))]
    }
}
