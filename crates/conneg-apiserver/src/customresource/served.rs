//! What an established definition serves: an endpoint for each served version, with that
//! version's facts ([`CustomVersion`]) built from the definition.

use std::sync::Arc;

use serde_json::{Map, Value};

use super::intern;
use super::version::{CustomVersion, PrinterColumn, next_forms};
use super::{CustomResource, definition};
use crate::apiextensions::jsonpath::JsonPath;
use crate::apiextensions::schema::Structural;
use crate::apiextensions::types::{CustomResourceDefinition, CustomResourceDefinitionVersion};
use crate::apiextensions::version_order;
use crate::definitions::Definitions;
use crate::endpoints::{Endpoint, ScalePaths};
use crate::resource::{GroupVersion, ResourceInfo, VERBS};

fn schema_of(v: &CustomResourceDefinitionVersion) -> Option<&Value> {
    v.schema
        .as_ref()
        .and_then(|s| s.open_api_v3_schema.as_ref())
}

fn columns(v: &CustomResourceDefinitionVersion) -> Vec<PrinterColumn> {
    if v.additional_printer_columns.is_empty() {
        return vec![PrinterColumn::age()];
    }
    v.additional_printer_columns
        .iter()
        .filter_map(|c| {
            let path = JsonPath::parse(&c.json_path).ok()?;
            Some(PrinterColumn::new(
                (&c.name, &c.type_, &c.format),
                &c.description,
                c.priority,
                path,
                &c.json_path,
            ))
        })
        .collect()
}

/// The OpenAPI definitions of `resource` in one version, from its schema: the object (with
/// `apiVersion`, `kind`, `metadata` and its group-version-kind) and its list.
fn publish(d: &mut Definitions<'_>, resource: &ResourceInfo, schema: &Value) {
    let mut props = match schema.get("properties") {
        Some(Value::Object(p)) => p.clone(),
        _ => Map::new(),
    };
    for standard in ["apiVersion", "kind", "metadata"] {
        props.remove(standard);
    }
    let description = schema["description"].as_str().unwrap_or_default();
    d.object(resource.kind, description, props);
    d.extend(
        resource.kind,
        schema,
        &[
            "x-kubernetes-validations",
            "required",
            "x-kubernetes-preserve-unknown-fields",
        ],
    );
    d.list(resource.list_kind, resource.kind);
}

/// The warning of the deprecated version `v`: its own, or `<group>/<v> <Kind> is
/// deprecated`, naming the first served version that is not deprecated, if any.
fn deprecation(
    crd: &CustomResourceDefinition,
    v: &CustomResourceDefinitionVersion,
    served: &[&CustomResourceDefinitionVersion],
) -> String {
    if let Some(w) = &v.deprecation_warning {
        return w.clone();
    }
    let (group, kind) = (&crd.spec.group, &crd.status.accepted_names.kind);
    let mut w = format!("{group}/{} {kind} is deprecated", v.name);
    if let Some(best) = served.iter().find(|s| !s.deprecated) {
        w.push_str(&format!("; use {group}/{} {kind}", best.name));
    }
    w
}

/// The endpoints of `crd`'s served versions under its accepted names, retired when
/// `retired` turns `true`; an error when they cannot be built (a schema that no longer
/// compiles, too many distinct resources).
pub(super) fn endpoints(
    crd: &CustomResourceDefinition,
    retired: &tokio::sync::watch::Receiver<bool>,
) -> Result<Vec<Endpoint>, String> {
    let names = &crd.status.accepted_names;
    let storage = crd
        .storage_version()
        .ok_or("no storage version")?
        .to_owned();
    let group = intern::string(&crd.spec.group);
    let gv = |v: &str| GroupVersion::new(intern::string(&format!("{group}/{v}")));
    let storage_version = crd.version(&storage).ok_or("no storage version")?;
    let storage_schema = schema_of(storage_version).map(Structural::from_json);
    let mut out = Vec::new();
    // Discovery prefers the first: the kube-aware order.
    let mut served: Vec<&CustomResourceDefinitionVersion> =
        crd.spec.versions.iter().filter(|v| v.served).collect();
    served.sort_by(|a, b| version_order::compare(&a.name, &b.name));
    for v in served.iter().copied() {
        let status = v.subresources.as_ref().is_some_and(|s| s.status.is_some());
        let scale = v
            .subresources
            .as_ref()
            .and_then(|s| s.scale.as_ref())
            .map(|s| ScalePaths {
                spec_replicas: s.spec_replicas_path.clone(),
                status_replicas: s.status_replicas_path.clone(),
                label_selector: s.label_selector_path.clone().unwrap_or_default(),
            });
        let resource = intern::resource(ResourceInfo {
            group,
            resource: intern::string(&names.plural),
            singular: intern::string(&names.singular),
            kind: intern::string(&names.kind),
            list_kind: intern::string(&names.list_kind),
            namespaced: crd.namespaced(),
            verbs: VERBS,
            short_names: intern::strings(&names.short_names),
            categories: intern::strings(&names.categories),
            status_subresource: status,
            scale_subresource: scale.is_some(),
        })
        .ok_or("too many distinct custom resources were served by this process")?;
        let validator = schema_of(v)
            .map(definition::compile)
            .transpose()?
            .map(Arc::new);
        let facts = CustomVersion {
            resource,
            version: gv(&v.name),
            storage: gv(&storage),
            schema: schema_of(v).map(Structural::from_json),
            storage_schema: storage_schema.clone(),
            validator,
            columns: columns(v),
            retired: retired.clone(),
            scale,
            warning: v.deprecated.then(|| deprecation(crd, v, &served)),
            terminating: crd.metadata.deletion_timestamp.is_some(),
            forms: next_forms(),
        };
        let published = schema_of(v).cloned().unwrap_or_default();
        let publish = move |d: &mut Definitions<'_>| publish(d, resource, &published);
        out.push(Endpoint::dynamic::<CustomResource>(
            (facts.version, resource),
            Arc::new(facts),
            publish,
        ));
    }
    Ok(out)
}
