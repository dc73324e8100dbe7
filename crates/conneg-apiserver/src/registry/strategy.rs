//! What differs between the served kinds, as one trait on the internal types, [`Strategy`]
//! (what Kubernetes' generic registry calls a kind's strategy): validation, what counts as a
//! spec change (generation), the Table columns, what create and update prepare
//! (`PrepareForCreate`/`PrepareForUpdate`) and how DELETE proceeds (at once, or marked and
//! then finished by the kind's controller).
//!
//! To serve a resource: implement [`Strategy`] for its internal type and register each of its
//! versioned types with the server's builder (`ServerBuilder::serve`).

use futures_util::future::BoxFuture;
use serde_json::Value;

use super::{Error, Registry};
use crate::apply::schema::ApplySchema;
use crate::meta::HasObjectMeta;
use crate::resource::{ResourceInfo, Versioned, VersionedObject};
use crate::validation::FieldError;

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

/// A Table column (`metav1.TableColumnDefinition`), between Name and Age in `kubectl get`.
///
/// ```
/// use conneg_apiserver::registry::Column;
///
/// const SIZE: Column = Column::new("Size", "integer", "How big the widget is.");
/// assert_eq!((SIZE.name, SIZE.format), ("Size", ""));
/// ```
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

impl Column {
    /// A column named `name` of OpenAPI type `ty` (`string`, `integer`...), with no format.
    pub const fn new(name: &'static str, ty: &'static str, description: &'static str) -> Self {
        Self {
            name,
            ty,
            format: "",
            description,
        }
    }
}

/// A served kind's strategy, implemented on its internal type. Only the storage version is
/// required: every other item has the generic registry's default.
///
/// ```
/// use conneg_apiserver::prelude::*;
///
/// #[kind(group = "example.com", version = "v1", kind = "Gizmo", namespaced)]
/// #[derive(Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize)]
/// struct Gizmo {}
///
/// impl Strategy for Gizmo {
///     type Stored = Gizmo;
/// }
/// assert_eq!(Gizmo::RESOURCE.resource, "gizmos");
/// assert_eq!(Gizmo::versions()[0].api_version, "example.com/v1");
/// ```
pub trait Strategy: HasObjectMeta + Clone + PartialEq + Send + Sync + 'static {
    /// The storage-version type (v1alpha1).
    type Stored: VersionedObject<Internal = Self> + Send + Sync + 'static;
    /// The resource: by default the storage-version type's, [`VersionedObject::RESOURCE`].
    const RESOURCE: &'static ResourceInfo = <Self::Stored as VersionedObject>::RESOURCE;

    /// Validation on create (the strategy's `Validate`).
    fn validate_create(&self) -> Vec<FieldError> {
        Vec::new()
    }
    /// Validation of an update of the object (not its `/status`) replacing `old` (the
    /// strategy's `ValidateUpdate`), after the fields it may not change were put back.
    fn validate_update(&self, _old: &Self) -> Vec<FieldError> {
        Vec::new()
    }
    /// Whether everything but metadata and status is equal: only a change outside them moves
    /// `metadata.generation` on, as Kubernetes' strategies do. By default the two are
    /// compared in their storage version as JSON, as Kubernetes compares custom resources; a
    /// kind may compare its spec directly, which is cheaper.
    fn same_spec(&self, other: &Self) -> bool {
        super::status::same_spec(self, other)
    }
    /// Table columns between Name and Age (none by default).
    const COLUMNS: &'static [Column] = &[];
    /// The cells of [`Strategy::COLUMNS`], in their order.
    fn cells(&self) -> Vec<Value> {
        Vec::new()
    }
    /// Server-set fields on create, after defaulting (the strategy's `PrepareForCreate`).
    fn prepare_for_create(&mut self) {}
    /// Fields an update of the object may not change, carried over from `old`
    /// (`PrepareForUpdate`). The status of a kind with a status subresource is already
    /// carried over (`super::status`); this is for what else the kind keeps.
    fn prepare_for_update(&mut self, _old: &Self) {}
    /// For a kind with a status subresource: what else a write to `/status` may not change,
    /// after everything but the status was carried over from `old` (`super::status`).
    fn prepare_for_status_update(&mut self, _old: &Self) {}
    /// The rules a write to `/status` must follow (`ValidateStatusUpdate`).
    fn validate_status_update(&self) -> Vec<FieldError> {
        Vec::new()
    }
    /// Whether DELETE answers with the deleted object (`true`) or, as the generic registry
    /// does by default, with a `Status` of `Success` naming it (`false`).
    const RETURN_DELETED_OBJECT: bool = false;
    /// Starts a DELETE. `Ok(false)`: the object is removed at once. `Ok(true)`: the object
    /// has been marked as being deleted; it is written back (with `deletionTimestamp`) and
    /// [`Strategy::finalize`] removes it. An error refuses the deletion.
    fn begin_delete(&mut self) -> Result<bool, Error> {
        Ok(false)
    }
    /// Whether the kind's own finalization (not `metadata.finalizers`) still holds an object
    /// marked for deletion: an update that removes its last metadata finalizer then does not
    /// delete it.
    fn finalizing(&self) -> bool {
        false
    }
    /// Finishes a deletion that [`Strategy::begin_delete`] began (the kind's controller): removes
    /// what depends on the object, then the object.
    fn finalize(_registry: Registry, _obj: Self) -> BoxFuture<'static, Result<(), Error>> {
        Box::pin(async { Ok(()) })
    }
    /// The list and map semantics server-side apply uses for a kind without a declaration
    /// (all lists atomic but the metadata ones, unless the kind says otherwise here; a
    /// declaration's `x-kubernetes-list-type` markers come first).
    const APPLY_SCHEMA: ApplySchema = ApplySchema::OBJECT;
    /// The versions the kind is served in, for server-side apply's conversions. By default
    /// the storage version alone: a kind served in several versions lists them all.
    fn versions() -> Vec<ServedVersion<Self>> {
        vec![ServedVersion::of::<Self::Stored>()]
    }
}
