//! `apiextensions.k8s.io/v1` `CustomResourceDefinition` as a kind of the generic registry:
//! its resource, its strategy (validation with the structural-schema and CEL checks,
//! `storedVersions`, deletion through the cleanup finalizer) and its OpenAPI.

use serde_json::json;

pub(crate) use crate::apiextensions::types::CUSTOM_RESOURCE_DEFINITIONS;
use crate::apiextensions::types::{
    CLEANUP_FINALIZER, CONDITION_TRUE, CustomResourceDefinition, CustomResourceDefinitionCondition,
    TERMINATING,
};
use crate::apiextensions::{schema, validation};
use crate::declarative::Validator;
use crate::definitions::{Definitions, OpenApiSchema};
use crate::meta::Time;
use crate::names;
use crate::registry::{Column, Error, Registry, Strategy};
use crate::resource::Versioned;
use crate::validation::{FieldError, validate_object_meta};
use conneg::Status;

/// The compiled declaration of `schema` (value validations and CEL rules, cost-checked),
/// worded as kube-apiserver words a custom resource's errors.
pub(crate) fn compile(schema: &serde_json::Value) -> Result<Validator, String> {
    let mut schemas = serde_json::Map::new();
    schemas.insert("root".into(), schema.clone());
    Validator::compile(&schemas, "root")
        .map(Validator::worded_in_body)
        .map_err(|e| e.to_string())
}

/// The structural-schema checks and the CEL compilation of every version's schema, under
/// the paths Kubernetes reports them at.
fn schema_errors(crd: &CustomResourceDefinition) -> Vec<FieldError> {
    let mut errs = Vec::new();
    for c in validation::schema_checks(crd) {
        let Some(s) = crd.spec.versions[c.version_index]
            .schema
            .as_ref()
            .and_then(|s| s.open_api_v3_schema.as_ref())
        else {
            continue;
        };
        let structural = schema::check(s, &c.path, c.status_subresource);
        if structural.is_empty()
            && let Err(e) = compile(s)
        {
            errs.push(FieldError::invalid(&c.path, "", &e));
        }
        errs.extend(structural);
    }
    errs
}

impl Strategy for CustomResourceDefinition {
    type Stored = CustomResourceDefinition;
    const RETURN_DELETED_OBJECT: bool = true;
    const COLUMNS: &'static [Column] = &[Column {
        name: "Created At",
        ty: "date",
        format: "",
        description: "CreationTimestamp of the definition.",
    }];

    fn cells(&self) -> Vec<serde_json::Value> {
        vec![json!(self.metadata.creation_timestamp)]
    }
    fn validate_create(&self) -> Vec<FieldError> {
        let mut errs = validation::validate_create(self);
        errs.extend(schema_errors(self));
        errs
    }
    /// `spec.group` and `spec.names.plural` fixed, `scope` and `kind` once established, the
    /// rest as on create (loosened for what the old definition already had).
    fn validate_update(&self, old: &Self) -> Vec<FieldError> {
        let mut errs = validation::validate_update(self, old);
        errs.extend(schema_errors(self));
        errs
    }
    /// The status starts empty but for the storage version in `storedVersions`.
    fn prepare_for_create(&mut self) {
        self.status = Default::default();
        if let Some(v) = self.storage_version().map(str::to_owned) {
            self.status.stored_versions = vec![v];
        }
    }
    /// `storedVersions` keeps every version ever stored and gains the current one.
    fn prepare_for_update(&mut self, old: &Self) {
        self.status.stored_versions = old.status.stored_versions.clone();
        if let Some(v) = self.storage_version().map(str::to_owned)
            && !self.status.stored_versions.contains(&v)
        {
            self.status.stored_versions.push(v);
        }
    }
    fn validate_status_update(&self) -> Vec<FieldError> {
        Vec::new()
    }
    /// Deletion goes through the cleanup finalizer: the definition is kept, `Terminating`,
    /// until the controller has removed its objects.
    fn begin_delete(&mut self) -> Result<bool, Error> {
        if self.metadata.deletion_timestamp.is_some() {
            return Ok(false);
        }
        if !self
            .metadata
            .finalizers
            .iter()
            .any(|f| f == CLEANUP_FINALIZER)
        {
            self.metadata.finalizers.push(CLEANUP_FINALIZER.to_owned());
        }
        self.set_condition(
            CustomResourceDefinitionCondition::new(
                TERMINATING,
                CONDITION_TRUE,
                "InstanceDeletionPending",
                "CustomResourceDefinition marked for deletion; CustomResource deletion will begin soon",
            ),
            Time::now(),
        );
        Ok(true)
    }
}

/// Creates `crd` in `registry` as a create over HTTP would (defaults, validation, the
/// server-set fields), unless a definition of its name is stored already.
///
/// # Errors
///
/// The 422 of an invalid definition, or a storage error.
pub(crate) async fn install(
    registry: &Registry,
    mut crd: CustomResourceDefinition,
) -> Result<(), Status> {
    let name = crd.metadata.name.clone();
    let key = registry.key(&CUSTOM_RESOURCE_DEFINITIONS, "", &name);
    let stored = registry
        .get::<CustomResourceDefinition>(&CUSTOM_RESOURCE_DEFINITIONS, &key, &name)
        .await?;
    if stored.is_some() {
        return Ok(());
    }
    crd.apply_defaults();
    let mut errs = Strategy::validate_create(&crd);
    errs.extend(validate_object_meta(&crd.metadata, false));
    if !errs.is_empty() {
        return Err(Error::invalid(&CUSTOM_RESOURCE_DEFINITIONS, name, errs).into());
    }
    Strategy::prepare_for_create(&mut crd);
    let m = &mut crd.metadata;
    m.uid = names::new_uid();
    m.creation_timestamp = Some(Time::now());
    m.generation = 1;
    registry
        .create(&CUSTOM_RESOURCE_DEFINITIONS, crd, false, false)
        .await?;
    Ok(())
}

impl OpenApiSchema for CustomResourceDefinition {
    fn definitions(d: &mut Definitions<'_>) {
        let mut props = serde_json::Map::new();
        for (field, what) in [
            (
                "spec",
                "Spec describes how the user wants the resources to appear.",
            ),
            (
                "status",
                "Status indicates the actual state of the CustomResourceDefinition.",
            ),
        ] {
            props.insert(
                field.into(),
                json!({"type": "object", "description": what, "x-kubernetes-preserve-unknown-fields": true}),
            );
        }
        d.object(
            "CustomResourceDefinition",
            "CustomResourceDefinition represents a resource that should be exposed on the API server.  Its name MUST be in the format <.spec.name>.<.spec.group>.",
            props,
        );
        d.list("CustomResourceDefinitionList", "CustomResourceDefinition");
    }
}
