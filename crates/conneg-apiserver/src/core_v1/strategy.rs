//! The namespace strategy: what the generic registry needs to know of namespaces.

use futures_util::future::BoxFuture;
use serde_json::{Value, json};

use super::{Namespace, lifecycle};
use crate::registry::{Column, Error, Registry, ServedVersion, Strategy};
use crate::validation::{FieldError, validate_namespace_name};

impl Strategy for Namespace {
    type Stored = Namespace;
    const RETURN_DELETED_OBJECT: bool = true;

    fn validate_create(&self) -> Vec<FieldError> {
        validate_namespace_name(&self.metadata.name)
    }
    fn versions() -> Vec<ServedVersion<Self>> {
        vec![ServedVersion::of::<Namespace>()]
    }
    fn same_spec(&self, other: &Self) -> bool {
        self.spec == other.spec
    }
    const COLUMNS: &'static [Column] = &[Column::new(
        "Status",
        "string",
        "The status of the namespace",
    )];
    fn cells(&self) -> Vec<Value> {
        vec![json!(self.status.phase)]
    }
    /// Every namespace starts `Active` with the `kubernetes` finalizer.
    fn prepare_for_create(&mut self) {
        self.spec.finalizers = vec![super::FINALIZER_KUBERNETES.to_owned()];
        super::PHASE_ACTIVE.clone_into(&mut self.status.phase);
    }
    /// Finalizers change only through deletion (Kubernetes: the `finalize` subresource, not
    /// served here); the status, only through `/status`, is kept by the registry.
    fn prepare_for_update(&mut self, old: &Self) {
        self.spec.finalizers.clone_from(&old.spec.finalizers);
    }
    fn validate_status_update(&self) -> Vec<FieldError> {
        super::validate_status(self)
    }
    fn begin_delete(&mut self) -> Result<bool, Error> {
        lifecycle::admit_delete(&self.metadata.name)?;
        super::PHASE_TERMINATING.clone_into(&mut self.status.phase);
        Ok(true)
    }
    fn finalizing(&self) -> bool {
        !self.spec.finalizers.is_empty()
    }
    fn finalize(registry: Registry, obj: Self) -> BoxFuture<'static, Result<(), Error>> {
        Box::pin(lifecycle::finalize(registry, obj.metadata.name))
    }
}
