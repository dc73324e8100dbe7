//! What differs between the served kinds, as one trait on the internal types: validation,
//! admission, what counts as a spec change (generation), and the Table columns.
//!
//! To add a resource: add its types to `api`, implement [`Kind`] for its internal type here,
//! and add a line to the `dispatch!` macro in `server/handlers.rs`.

use std::collections::BTreeMap;

use serde_json::{Value, json};

use crate::api::validation::{FieldError, validate_flunder};
use crate::api::{
    FISCHERS, FLUNDERS, ResourceInfo, Versioned, VersionedObject, internal, v1alpha1, v1beta1,
};
use crate::apply::schema::Schema;
use crate::meta::HasObjectMeta;

/// One version a kind is served in, as JSON: what server-side apply converts objects with
/// to compare them in the version a manager recorded its fields in.
#[derive(Debug, Clone, Copy)]
pub struct ServedVersion<K> {
    /// `group/version`.
    pub api_version: &'static str,
    /// An object of this version, from JSON.
    pub decode: fn(&Value) -> Option<K>,
    /// An object as this version's JSON.
    pub encode: fn(K) -> Option<Value>,
}

impl<K> ServedVersion<K> {
    /// The entry for the versioned type `T`.
    pub fn of<T: Versioned<Internal = K>>() -> Self {
        Self {
            api_version: T::VERSION.api_version(),
            decode: |v| {
                serde::Deserialize::deserialize(v)
                    .ok()
                    .map(T::into_internal)
            },
            encode: |k| serde_json::to_value(T::from_internal(k)).ok(),
        }
    }
}

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
    /// Whether everything but metadata is equal (no generation bump).
    fn same_spec(&self, other: &Self) -> bool;
    /// Table columns between Name and Age.
    fn columns() -> &'static [Column];
    /// The cells of those columns.
    fn cells(&self) -> Vec<Value>;
    /// Extra selectable fields beyond metadata.name/namespace (none here).
    fn fields(&self) -> BTreeMap<&str, &str> {
        BTreeMap::new()
    }
    /// The list and map semantics server-side apply uses (all lists atomic but the
    /// metadata ones, unless a kind says otherwise).
    const APPLY_SCHEMA: Schema = Schema::OBJECT;
    /// The versions the kind is served in.
    fn versions() -> Vec<ServedVersion<Self>>;
}

impl Kind for internal::Flunder {
    type Stored = v1alpha1::Flunder;
    const RESOURCE: &'static ResourceInfo = &FLUNDERS;
    const ADMITTED: bool = true;

    fn validate_create(&self) -> Vec<FieldError> {
        validate_flunder(self)
    }
    fn versions() -> Vec<ServedVersion<Self>> {
        vec![
            ServedVersion::of::<v1alpha1::Flunder>(),
            ServedVersion::of::<v1beta1::Flunder>(),
        ]
    }
    fn same_spec(&self, other: &Self) -> bool {
        self.spec == other.spec && self.status == other.status
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

    fn versions() -> Vec<ServedVersion<Self>> {
        vec![ServedVersion::of::<v1alpha1::Fischer>()]
    }

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
