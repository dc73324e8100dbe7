//! What an established definition serves: an endpoint for each served version, with that
//! version's facts ([`CustomVersion`]) built from the definition.

use std::sync::Arc;

use super::intern;
use super::version::{CustomVersion, PrinterColumn};
use super::{CustomResource, definition};
use crate::apiextensions::jsonpath::JsonPath;
use crate::apiextensions::schema::Structural;
use crate::apiextensions::types::{CustomResourceDefinition, CustomResourceDefinitionVersion};
use crate::endpoints::Endpoint;
use crate::resource::{GroupVersion, ResourceInfo, VERBS};

fn schema_of(v: &CustomResourceDefinitionVersion) -> Option<&serde_json::Value> {
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

/// The endpoints of `crd`'s served versions under its accepted names; an error when they
/// cannot be built (a schema that no longer compiles, too many distinct resources).
pub(super) fn endpoints(crd: &CustomResourceDefinition) -> Result<Vec<Endpoint>, String> {
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
    for v in crd.spec.versions.iter().filter(|v| v.served) {
        let status = v.subresources.as_ref().is_some_and(|s| s.status.is_some());
        let resource = intern::resource(ResourceInfo {
            group,
            resource: intern::string(&names.plural),
            singular: intern::string(&names.singular),
            kind: intern::string(&names.kind),
            list_kind: intern::string(&names.list_kind),
            namespaced: crd.namespaced(),
            verbs: VERBS,
            short_names: intern::strings(&names.short_names),
            status_subresource: status,
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
        };
        out.push(Endpoint::dynamic::<CustomResource>(
            facts.version,
            resource,
            Arc::new(facts),
        ));
    }
    Ok(out)
}
