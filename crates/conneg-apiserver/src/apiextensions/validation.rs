//! Validation of a `CustomResourceDefinition` on create and update, with Kubernetes' field
//! paths and messages, and the naming controller's acceptance of names.
//!
//! **Field paths are those of Kubernetes' internal type.** Kubernetes validates a v1 CRD after
//! converting it to its internal form, which moves a version field to the top of `spec` when
//! every version has an equal value: a single-version CRD reports its schema under
//! `spec.validation.openAPIV3Schema`, its printer columns under
//! `spec.additionalPrinterColumns[i]` and its scale paths under `spec.subresources.scale`;
//! versions that differ report `spec.versions[i]...`. The conversion's webhook fields are
//! `spec.conversion.webhookClientConfig` and `spec.conversion.conversionReviewVersions`
//! there, and `spec.version` is the first version's name.
//!
//! The structural-schema checks are not here: [`schema_checks`] says which schemas to check,
//! under which path and whether the status subresource is on.
//!
//! Values of lists in messages are printed as JSON, as Kubernetes 1.34 and later print them.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;

use super::jsonpath::JsonPath;
use super::types::{
    API_APPROVED_ANNOTATION, CLUSTER_SCOPED, CONDITION_FALSE, CONDITION_TRUE, CONDITION_UNKNOWN,
    CustomResourceColumnDefinition, CustomResourceConversion, CustomResourceDefinition,
    CustomResourceDefinitionCondition, CustomResourceDefinitionNames, CustomResourceDefinitionSpec,
    CustomResourceSubresources, ESTABLISHED, NAMES_ACCEPTED, NAMESPACE_SCOPED, NONE_CONVERTER,
    SelectableField, WEBHOOK_CONVERTER, WebhookClientConfig,
};
use crate::names;
use crate::validation::{BadValue, FieldError, validate_object_meta, validate_object_meta_update};

/// The most selectable fields a version may declare.
pub(crate) const MAX_SELECTABLE_FIELDS: usize = 8;
/// The longest `deprecationWarning`, in bytes.
pub(crate) const MAX_DEPRECATION_WARNING_LEN: usize = 256;

const PRINTER_COLUMN_TYPES: &[&str] = &["boolean", "date", "integer", "number", "string"];
const PRINTER_COLUMN_FORMATS: &[&str] = &[
    "byte",
    "date",
    "date-time",
    "double",
    "float",
    "int32",
    "int64",
    "password",
];
const CONVERSION_REVIEW_VERSIONS: &[&str] = &["v1", "v1beta1"];

/// Which version fields Kubernetes moves to the top of `spec`, because every version has an
/// equal value (`Convert_v1_CustomResourceDefinitionSpec_To_apiextensions_...`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) struct Hoisted {
    /// `schema` → `spec.validation`.
    pub(crate) schema: bool,
    /// `subresources` → `spec.subresources`.
    pub(crate) subresources: bool,
    /// `additionalPrinterColumns` → `spec.additionalPrinterColumns`.
    pub(crate) columns: bool,
    /// `selectableFields` → `spec.selectableFields`.
    pub(crate) selectable_fields: bool,
}

impl Hoisted {
    /// What is hoisted in `spec` (nothing without versions).
    pub(crate) fn of(spec: &CustomResourceDefinitionSpec) -> Self {
        let Some(first) = spec.versions.first() else {
            return Self::default();
        };
        let all = |same: &dyn Fn(&super::types::CustomResourceDefinitionVersion) -> bool| {
            spec.versions.iter().all(same)
        };
        Self {
            schema: all(&|v| v.schema == first.schema),
            subresources: all(&|v| v.subresources == first.subresources),
            columns: all(&|v| v.additional_printer_columns == first.additional_printer_columns),
            selectable_fields: all(&|v| v.selectable_fields == first.selectable_fields),
        }
    }
}

/// The path under which the schema of version `version_index` reports its errors, ending in
/// `openAPIV3Schema`: `spec.validation.openAPIV3Schema` when every version has the same
/// schema, `spec.versions[i].schema.openAPIV3Schema` otherwise.
pub(crate) fn schema_path(crd: &CustomResourceDefinition, version_index: usize) -> String {
    if Hoisted::of(&crd.spec).schema {
        "spec.validation.openAPIV3Schema".to_owned()
    } else {
        format!("spec.versions[{version_index}].schema.openAPIV3Schema")
    }
}

/// One schema the structural-schema checker must look at.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct SchemaCheck {
    /// The version whose `schema.openAPIV3Schema` it is.
    pub(crate) version_index: usize,
    /// The path of its errors ([`schema_path`]).
    pub(crate) path: String,
    /// Whether the status subresource is on for it (for a hoisted schema: on any version).
    pub(crate) status_subresource: bool,
}

/// The schemas to check, once each: one for a hoisted schema, else one per version that has
/// a schema. Versions without one are reported by [`validate_create`] already.
pub(crate) fn schema_checks(crd: &CustomResourceDefinition) -> Vec<SchemaCheck> {
    let spec = &crd.spec;
    let hoisted = Hoisted::of(spec);
    let has_status =
        |s: &Option<CustomResourceSubresources>| s.as_ref().is_some_and(|s| s.status.is_some());
    let has_schema = |i: usize| {
        spec.versions[i]
            .schema
            .as_ref()
            .is_some_and(|s| s.open_api_v3_schema.is_some())
    };
    if hoisted.schema {
        if spec.versions.is_empty() || !has_schema(0) {
            return Vec::new();
        }
        return vec![SchemaCheck {
            version_index: 0,
            path: schema_path(crd, 0),
            status_subresource: spec.versions.iter().any(|v| has_status(&v.subresources)),
        }];
    }
    (0..spec.versions.len())
        .filter(|&i| has_schema(i))
        .map(|i| SchemaCheck {
            version_index: i,
            path: schema_path(crd, i),
            status_subresource: has_status(&spec.versions[i].subresources),
        })
        .collect()
}

/// What the update rules loosen, from the old object.
#[derive(Default)]
struct Options {
    require_schema: bool,
    require_recognized_review_version: bool,
    /// Versions (`""` for hoisted fields) allowed to keep more than 8 selectable fields.
    too_many_selectable_allowed: BTreeSet<String>,
}

/// `ValidateCustomResourceDefinition`: a new CRD, after [`set_defaults`](super::types::set_defaults).
/// The structural schema is checked apart ([`schema_checks`]).
pub(crate) fn validate_create(crd: &CustomResourceDefinition) -> Vec<FieldError> {
    let opts = Options {
        require_schema: true,
        require_recognized_review_version: true,
        too_many_selectable_allowed: BTreeSet::new(),
    };
    let mut errs = validate_meta_create(crd);
    validate_spec(&crd.spec, &opts, &mut errs);
    validate_status(crd, &mut errs);
    validate_api_approval(crd, None, &mut errs);
    validate_preserve_unknown_fields(crd, None, &mut errs);
    errs
}

/// `ValidateCustomResourceDefinitionUpdate`: `new` replacing `old`, both defaulted. Adds to
/// [`validate_create`]'s rules: `spec.group` and `spec.names.plural` never change,
/// `spec.scope` and `spec.names.kind` not once `old` is Established. Loosened as Kubernetes
/// does for data it accepted before: no schema required if `old` lacked one, more than 8
/// selectable fields kept unchanged, an unrecognized conversion review version kept,
/// `preserveUnknownFields: true` and an API-approval annotation kept.
pub(crate) fn validate_update(
    new: &CustomResourceDefinition,
    old: &CustomResourceDefinition,
) -> Vec<FieldError> {
    let old_review = old
        .spec
        .conversion
        .as_ref()
        .and_then(|c| c.webhook.as_ref())
        .map(|w| w.conversion_review_versions.as_slice())
        .unwrap_or_default();
    let opts = Options {
        require_schema: old.spec.versions.iter().all(|v| {
            v.schema
                .as_ref()
                .is_some_and(|s| s.open_api_v3_schema.is_some())
        }),
        require_recognized_review_version: old_review.is_empty()
            || old_review
                .iter()
                .any(|v| CONVERSION_REVIEW_VERSIONS.contains(&v.as_str())),
        too_many_selectable_allowed: too_many_selectable_allowed(new, old),
    };
    let mut errs = validate_object_meta_update(&new.metadata, &old.metadata);
    validate_spec(&new.spec, &opts, &mut errs);
    let immutable = |errs: &mut Vec<FieldError>, field: &str, new: &str, old: &str| {
        if new != old {
            errs.push(FieldError::invalid(field, new, "field is immutable"));
        }
    };
    if old.condition_true(ESTABLISHED) {
        immutable(&mut errs, "spec.scope", &new.spec.scope, &old.spec.scope);
        immutable(
            &mut errs,
            "spec.names.kind",
            &new.spec.names.kind,
            &old.spec.names.kind,
        );
    }
    immutable(&mut errs, "spec.group", &new.spec.group, &old.spec.group);
    immutable(
        &mut errs,
        "spec.names.plural",
        &new.spec.names.plural,
        &old.spec.names.plural,
    );
    validate_status(new, &mut errs);
    validate_api_approval(new, Some(old), &mut errs);
    validate_preserve_unknown_fields(new, Some(old), &mut errs);
    errs
}

/// `ValidateUpdateCustomResourceDefinitionStatus`: a `/status` write checks only metadata
/// and the accepted names (this is how `storedVersions` can shrink).
#[cfg_attr(
    not(test),
    expect(
        dead_code,
        reason = "not wired yet: the Strategy trait has no update validation with the old object"
    )
)]
pub(crate) fn validate_status_update(
    new: &CustomResourceDefinition,
    old: &CustomResourceDefinition,
) -> Vec<FieldError> {
    let mut errs = validate_object_meta_update(&new.metadata, &old.metadata);
    validate_names(
        &new.status.accepted_names,
        "status.acceptedNames",
        &mut errs,
    );
    errs
}

fn too_many_selectable_allowed(
    new: &CustomResourceDefinition,
    old: &CustomResourceDefinition,
) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let (new_h, old_h) = (Hoisted::of(&new.spec), Hoisted::of(&old.spec));
    // The hoisted list is the first version's when hoisted, else none.
    let hoisted = |crd: &CustomResourceDefinition, h: Hoisted| -> Vec<SelectableField> {
        match crd.spec.versions.first() {
            Some(v) if h.selectable_fields => v.selectable_fields.clone(),
            _ => Vec::new(),
        }
    };
    let old_top = hoisted(old, old_h);
    if old_top.len() > MAX_SELECTABLE_FIELDS && hoisted(new, new_h) == old_top {
        out.insert(String::new());
    }
    if !old_h.selectable_fields && !new_h.selectable_fields {
        for v in &new.spec.versions {
            if let Some(o) = old.version(&v.name)
                && o.selectable_fields.len() > MAX_SELECTABLE_FIELDS
                && o.selectable_fields == v.selectable_fields
            {
                out.insert(v.name.clone());
            }
        }
    }
    out
}

/// `ValidateObjectMeta` with the CRD's name rule: a DNS subdomain equal to
/// `<plural>.<group>` (checked for `generateName` too, as Kubernetes does).
fn validate_meta_create(crd: &CustomResourceDefinition) -> Vec<FieldError> {
    let meta = &crd.metadata;
    let mut errs = validate_object_meta(meta, false);
    let required = format!("{}.{}", crd.spec.names.plural, crd.spec.group);
    const DETAIL: &str = "must be spec.names.plural+\".\"+spec.group";
    let after = |errs: &[FieldError], start: usize, field: &str| {
        start
            + errs[start..]
                .iter()
                .take_while(|e| e.field == field)
                .count()
    };
    let mut at = 0;
    if !meta.generate_name.is_empty() {
        at = after(&errs, 0, "metadata.generateName");
        if meta.generate_name != required {
            errs.insert(
                at,
                FieldError::invalid("metadata.generateName", &meta.generate_name, DETAIL),
            );
            at += 1;
        }
    }
    if !meta.name.is_empty() && meta.name != required {
        let at = after(&errs, at, "metadata.name");
        errs.insert(at, FieldError::invalid("metadata.name", &meta.name, DETAIL));
    }
    errs
}

fn json<T: serde::Serialize>(v: &T) -> BadValue {
    BadValue::Other(serde_json::to_value(v).unwrap_or_default())
}

fn push_label_errs(errs: &mut Vec<FieldError>, field: &str, value: &str, msgs: Vec<String>) {
    if !msgs.is_empty() {
        errs.push(FieldError::invalid(field, value, &msgs.join(",")));
    }
}

/// `validateCustomResourceDefinitionSpec`, on the internal form's paths.
fn validate_spec(spec: &CustomResourceDefinitionSpec, opts: &Options, errs: &mut Vec<FieldError>) {
    let hoisted = Hoisted::of(spec);

    if spec.group.is_empty() {
        errs.push(FieldError::required("spec.group", ""));
    } else {
        let bad = names::dns1123_subdomain_errors(&spec.group);
        if !bad.is_empty() {
            push_label_errs(errs, "spec.group", &spec.group, bad);
        } else if !spec.group.contains('.') {
            errs.push(FieldError::invalid(
                "spec.group",
                &spec.group,
                "should be a domain with at least one dot",
            ));
        }
    }

    validate_enum(
        errs,
        "spec.scope",
        &spec.scope,
        &[CLUSTER_SCOPED, NAMESPACE_SCOPED],
    );

    if opts.require_schema {
        for (i, v) in spec.versions.iter().enumerate() {
            if v.schema
                .as_ref()
                .is_none_or(|s| s.open_api_v3_schema.is_none())
            {
                errs.push(FieldError::required(
                    &format!("spec.versions[{i}].schema.openAPIV3Schema"),
                    "",
                ));
            }
        }
    }

    if spec.preserve_unknown_fields
        && spec.versions.iter().any(|v| {
            v.schema
                .as_ref()
                .and_then(|s| s.open_api_v3_schema.as_ref())
                .is_some_and(schema_has_default)
        })
    {
        errs.push(FieldError::invalid_value(
            "spec.preserveUnknownFields",
            BadValue::Bool(true),
            "must be false in order to use defaults in the schema",
        ));
    }

    let mut seen = BTreeSet::new();
    let mut unique = true;
    for (i, v) in spec.versions.iter().enumerate() {
        if !seen.insert(v.name.as_str()) {
            unique = false;
        }
        let path = format!("spec.versions[{i}]");
        push_label_errs(
            errs,
            &format!("{path}.name"),
            &v.name,
            names::dns1035_label_errors(&v.name),
        );
        validate_deprecation_warning(v.deprecated, v.deprecation_warning.as_deref(), &path, errs);
        if !hoisted.subresources
            && let Some(s) = &v.subresources
        {
            validate_subresources(s, &format!("{path}.subresources"), errs);
        }
        if !hoisted.columns {
            for (j, c) in v.additional_printer_columns.iter().enumerate() {
                validate_column(c, &format!("{path}.additionalPrinterColumns[{j}]"), errs);
            }
        }
        if !hoisted.selectable_fields && !v.selectable_fields.is_empty() {
            // The internal form has no per-version schema when schemas are hoisted, so
            // Kubernetes rejects per-version selectable fields then, with this text.
            let schema = (!hoisted.schema)
                .then(|| {
                    v.schema
                        .as_ref()
                        .and_then(|s| s.open_api_v3_schema.as_ref())
                })
                .flatten();
            match schema {
                None => errs.push(FieldError::invalid(
                    &format!("{path}.selectableFields"),
                    "",
                    "may only be set when `version.schema.openAPIV3Schema` is not included",
                )),
                Some(schema) => validate_selectable_fields(
                    &v.selectable_fields,
                    Some(schema),
                    &format!("{path}.selectableFields"),
                    opts.too_many_selectable_allowed.contains(&v.name),
                    errs,
                ),
            }
        }
    }
    if !unique {
        errs.push(FieldError::invalid_value(
            "spec.versions",
            json(&spec.versions),
            "must contain unique version names",
        ));
    }
    if spec.versions.iter().filter(|v| v.storage).count() != 1 {
        errs.push(FieldError::invalid_value(
            "spec.versions",
            json(&spec.versions),
            "must have exactly one version marked as storage version",
        ));
    }
    // The internal `spec.version` is the first version's name, checked once more.
    if let Some(first) = spec.versions.first()
        && !first.name.is_empty()
    {
        push_label_errs(
            errs,
            "spec.version",
            &first.name,
            names::dns1035_label_errors(&first.name),
        );
    }

    let n = &spec.names;
    for (field, value) in [
        ("plural", &n.plural),
        ("singular", &n.singular),
        ("kind", &n.kind),
        ("listKind", &n.list_kind),
    ] {
        if value.is_empty() {
            errs.push(FieldError::required(&format!("spec.names.{field}"), ""));
        }
    }
    validate_names(n, "spec.names", errs);

    if let Some(first) = spec.versions.first() {
        if hoisted.subresources
            && let Some(s) = &first.subresources
        {
            validate_subresources(s, "spec.subresources", errs);
        }
        if hoisted.columns {
            for (j, c) in first.additional_printer_columns.iter().enumerate() {
                validate_column(c, &format!("spec.additionalPrinterColumns[{j}]"), errs);
            }
        }
        if hoisted.selectable_fields && !first.selectable_fields.is_empty() {
            if !hoisted.schema || first.schema.is_none() {
                errs.push(FieldError::invalid(
                    "spec.selectableFields",
                    "",
                    "may only be set when validations.schema is included",
                ));
            } else {
                let schema = first
                    .schema
                    .as_ref()
                    .and_then(|s| s.open_api_v3_schema.as_ref());
                validate_selectable_fields(
                    &first.selectable_fields,
                    schema,
                    "spec.selectableFields",
                    opts.too_many_selectable_allowed.contains(""),
                    errs,
                );
            }
        }
    }

    if let Some(c) = &spec.conversion {
        if c.strategy != NONE_CONVERTER && spec.preserve_unknown_fields {
            errs.push(FieldError::invalid(
                "spec.conversion.strategy",
                &c.strategy,
                "must be None if spec.preserveUnknownFields is true",
            ));
        }
        validate_conversion(c, opts.require_recognized_review_version, errs);
    }
}

/// `validateEnumStrings` for a required value.
fn validate_enum(errs: &mut Vec<FieldError>, field: &str, value: &str, accepted: &[&str]) {
    if value.is_empty() {
        errs.push(FieldError::required(field, ""));
    } else if !accepted.contains(&value) {
        errs.push(FieldError::not_supported(
            field,
            BadValue::String(value.to_owned()),
            accepted,
        ));
    }
}

/// Whether any schema node (properties, additionalProperties, items, junctors) has a
/// `default` (`specHasDefaults`).
fn schema_has_default(schema: &Value) -> bool {
    let mut stack = vec![(schema, 0usize)];
    while let Some((node, depth)) = stack.pop() {
        let Some(o) = node.as_object() else { continue };
        if o.contains_key("default") {
            return true;
        }
        if depth > 256 {
            continue;
        }
        for key in [
            "properties",
            "patternProperties",
            "definitions",
            "dependencies",
        ] {
            if let Some(Value::Object(m)) = o.get(key) {
                stack.extend(m.values().map(|v| (v, depth + 1)));
            }
        }
        for key in ["additionalProperties", "additionalItems", "not"] {
            if let Some(v) = o.get(key) {
                stack.push((v, depth + 1));
            }
        }
        if let Some(v) = o.get("items") {
            match v {
                Value::Array(a) => stack.extend(a.iter().map(|v| (v, depth + 1))),
                v => stack.push((v, depth + 1)),
            }
        }
        for key in ["allOf", "anyOf", "oneOf"] {
            if let Some(Value::Array(a)) = o.get(key) {
                stack.extend(a.iter().map(|v| (v, depth + 1)));
            }
        }
    }
    false
}

/// `validateDeprecationWarning`.
fn validate_deprecation_warning(
    deprecated: bool,
    warning: Option<&str>,
    version_path: &str,
    errs: &mut Vec<FieldError>,
) {
    let Some(w) = warning else { return };
    let field = format!("{version_path}.deprecationWarning");
    let mut push = |detail: &str| errs.push(FieldError::invalid(&field, w, detail));
    if !deprecated {
        push("can only be set for deprecated versions");
        return;
    }
    if w.len() > MAX_DEPRECATION_WARNING_LEN {
        push("must be <= 256 characters long");
    }
    if w.is_empty() {
        push("must not be an empty string");
    }
    // Go's `unicode.IsPrint`: no control characters and no spaces other than ' '.
    if let Some((i, _)) = w
        .char_indices()
        .find(|&(_, c)| c.is_control() || (c.is_whitespace() && c != ' '))
    {
        push(&format!(
            "must only contain printable UTF-8 characters; non-printable character found at index {i}"
        ));
    }
}

/// `validateSimpleJSONPath`: what Kubernetes checks of column and scale paths.
fn simple_json_path_error(s: &str) -> Option<&'static str> {
    if s.is_empty() {
        Some("must not be empty")
    } else if !s.starts_with('.') {
        Some("must be a simple json path starting with .")
    } else {
        None
    }
}

/// `ValidateCustomResourceDefinitionSubresources`.
fn validate_subresources(s: &CustomResourceSubresources, path: &str, errs: &mut Vec<FieldError>) {
    let Some(scale) = &s.scale else { return };
    for (name, value, prefix, detail) in [
        (
            "specReplicasPath",
            &scale.spec_replicas_path,
            ".spec.",
            "should be a json path under .spec",
        ),
        (
            "statusReplicasPath",
            &scale.status_replicas_path,
            ".status.",
            "should be a json path under .status",
        ),
    ] {
        let field = format!("{path}.scale.{name}");
        if value.is_empty() {
            errs.push(FieldError::required(&field, ""));
        } else if let Some(e) = simple_json_path_error(value) {
            errs.push(FieldError::invalid(&field, value, e));
        } else if !value.starts_with(prefix) {
            errs.push(FieldError::invalid(&field, value, detail));
        }
    }
    if let Some(value) = scale
        .label_selector_path
        .as_deref()
        .filter(|s| !s.is_empty())
    {
        let field = format!("{path}.scale.labelSelectorPath");
        if let Some(e) = simple_json_path_error(value) {
            errs.push(FieldError::invalid(&field, value, e));
        } else if !value.starts_with(".spec.") && !value.starts_with(".status.") {
            errs.push(FieldError::invalid(
                &field,
                value,
                "should be a json path under either .spec or .status",
            ));
        }
    }
}

/// `ValidateCustomResourceColumnDefinition`. The path field is spelled `JSONPath`, as in
/// Kubernetes' internal type. Beyond Kubernetes' check (a leading `.`), the path must parse
/// ([`JsonPath::parse`]): Kubernetes accepts a path client-go cannot parse and then serves
/// the CRD's Table without its columns; here the CRD is refused instead.
fn validate_column(c: &CustomResourceColumnDefinition, path: &str, errs: &mut Vec<FieldError>) {
    if c.name.is_empty() {
        errs.push(FieldError::required(&format!("{path}.name"), ""));
    }
    let types = format!("must be one of {}", PRINTER_COLUMN_TYPES.join(","));
    if c.type_.is_empty() {
        errs.push(FieldError::required(&format!("{path}.type"), &types));
    } else if !PRINTER_COLUMN_TYPES.contains(&c.type_.as_str()) {
        errs.push(FieldError::invalid(
            &format!("{path}.type"),
            &c.type_,
            &types,
        ));
    }
    if !c.format.is_empty() && !PRINTER_COLUMN_FORMATS.contains(&c.format.as_str()) {
        errs.push(FieldError::invalid(
            &format!("{path}.format"),
            &c.format,
            &format!("must be one of {}", PRINTER_COLUMN_FORMATS.join(",")),
        ));
    }
    let field = format!("{path}.JSONPath");
    if c.json_path.is_empty() {
        errs.push(FieldError::required(&field, ""));
    } else if let Some(e) = simple_json_path_error(&c.json_path) {
        errs.push(FieldError::invalid(&field, &c.json_path, e));
    } else if let Err(e) = JsonPath::parse(&c.json_path) {
        errs.push(FieldError::invalid(
            &field,
            &c.json_path,
            &format!("must be a JSONPath this server can evaluate: {e}"),
        ));
    }
}

/// `ValidateCustomResourceSelectableFields`: each path leads, by `.` steps through
/// `properties` (or `additionalProperties`), to a string, integer or boolean field outside
/// `metadata`; no path twice; at most [`MAX_SELECTABLE_FIELDS`].
fn validate_selectable_fields(
    fields: &[SelectableField],
    schema: Option<&Value>,
    path: &str,
    allow_too_many: bool,
    errs: &mut Vec<FieldError>,
) {
    let mut unique = BTreeSet::new();
    for (i, f) in fields.iter().enumerate() {
        let field = format!("{path}[{i}].jsonPath");
        if f.json_path.is_empty() {
            errs.push(FieldError::required(&field, ""));
            continue;
        }
        let (root, canonical, found) = match resolve_field_path(&f.json_path, schema) {
            Ok(r) => r,
            Err(e) => {
                errs.push(FieldError::invalid(
                    &field,
                    &f.json_path,
                    &format!("is an invalid path: {e}"),
                ));
                continue;
            }
        };
        if root == "metadata" {
            errs.push(FieldError::invalid(
                &field,
                &f.json_path,
                "must not point to fields in metadata",
            ));
        }
        let ty = found.and_then(|s| s.get("type")).and_then(Value::as_str);
        if !matches!(ty, Some("string" | "boolean" | "integer")) {
            errs.push(FieldError::invalid(
                &field,
                &f.json_path,
                "must point to a field of type string, boolean or integer. Enum string fields and strings with formats are allowed.",
            ));
        }
        if !unique.insert(canonical) {
            errs.push(FieldError::duplicate(
                &field,
                BadValue::String(f.json_path.clone()),
            ));
        }
    }
    if unique.len() > MAX_SELECTABLE_FIELDS && !allow_too_many {
        errs.push(FieldError::too_many(
            path,
            unique.len() as u64,
            MAX_SELECTABLE_FIELDS as u64,
        ));
    }
}

/// `cel.ValidFieldPath` without array notation: the root field, the path as a field path
/// (`.spec.labels[key]`), and the schema found (`None` past `additionalProperties: true`).
fn resolve_field_path<'a>(
    path: &str,
    schema: Option<&'a Value>,
) -> Result<(String, String, Option<&'a Value>), String> {
    let mut node = schema;
    let mut root: Option<String> = None;
    let mut canonical = String::new();
    let mut rest = path;
    while !rest.is_empty() {
        if rest.starts_with('[') {
            return Err("array notation is not allowed".to_owned());
        }
        let Some(after) = rest.strip_prefix('.') else {
            return Err(format!(
                "expected [ or . but got: {}",
                &rest[..token_len(rest)]
            ));
        };
        if after.is_empty() {
            return Err("unexpected end of JSON path".to_owned());
        }
        let len = token_len(after);
        let tok = &after[..len];
        rest = &after[len..];
        const INVALID: &str = "does not refer to a valid field";
        let s = node.ok_or(INVALID)?;
        if let Some(props) = s.get("properties").and_then(Value::as_object) {
            node = Some(props.get(tok).ok_or(INVALID)?);
            canonical.push('.');
            canonical.push_str(tok);
        } else if let Some(ap) = s.get("additionalProperties") {
            node = ap.as_object().map(|_| ap);
            canonical.push('[');
            canonical.push_str(tok);
            canonical.push(']');
        } else {
            return Err(INVALID.to_owned());
        }
        root.get_or_insert_with(|| tok.to_owned());
    }
    Ok((root.unwrap_or_default(), canonical, node))
}

/// The length of the token `s` starts with: a delimiter (`.`, `[`, `]`) alone, or the text up
/// to the next one.
fn token_len(s: &str) -> usize {
    match s.find(['.', '[', ']']) {
        Some(0) => 1,
        Some(n) => n,
        None => s.len(),
    }
}

/// `validateCustomResourceConversion`, on the internal form's paths.
fn validate_conversion(
    c: &CustomResourceConversion,
    require_recognized: bool,
    errs: &mut Vec<FieldError>,
) {
    const PATH: &str = "spec.conversion";
    validate_enum(
        errs,
        &format!("{PATH}.strategy"),
        &c.strategy,
        &[NONE_CONVERTER, WEBHOOK_CONVERTER],
    );
    let client_config = c.webhook.as_ref().and_then(|w| w.client_config.as_ref());
    let review: &[String] = c
        .webhook
        .as_ref()
        .map(|w| w.conversion_review_versions.as_slice())
        .unwrap_or_default();
    let cc_path = format!("{PATH}.webhookClientConfig");
    let rv_path = format!("{PATH}.conversionReviewVersions");
    if c.strategy != WEBHOOK_CONVERTER {
        const NOT_WEBHOOK: &str = "should not be set when strategy is not set to Webhook";
        if client_config.is_some() {
            errs.push(FieldError::forbidden(&cc_path, NOT_WEBHOOK));
        }
        if !review.is_empty() {
            errs.push(FieldError::forbidden(&rv_path, NOT_WEBHOOK));
        }
        return;
    }
    match client_config {
        None => errs.push(FieldError::required(
            &cc_path,
            "required when strategy is set to Webhook",
        )),
        Some(cc) => validate_client_config(cc, &cc_path, errs),
    }
    if review.is_empty() {
        errs.push(FieldError::required(&rv_path, ""));
        return;
    }
    let mut seen = BTreeSet::new();
    let mut recognized = false;
    for (i, v) in review.iter().enumerate() {
        let field = format!("{rv_path}[{i}]");
        if !seen.insert(v.as_str()) {
            errs.push(FieldError::invalid(&field, v, "duplicate version"));
            continue;
        }
        for m in names::dns1035_label_errors(v) {
            errs.push(FieldError::invalid(&field, v, &m));
        }
        recognized |= CONVERSION_REVIEW_VERSIONS.contains(&v.as_str());
    }
    if require_recognized && !recognized {
        errs.push(FieldError::invalid_value(
            &rv_path,
            json(&review),
            &format!(
                "must include at least one of {}",
                CONVERSION_REVIEW_VERSIONS.join(", ")
            ),
        ));
    }
}

/// `ValidateWebhookURL` / `ValidateWebhookService` (the CA bundle is not parsed here).
fn validate_client_config(cc: &WebhookClientConfig, path: &str, errs: &mut Vec<FieldError>) {
    match (&cc.url, &cc.service) {
        (Some(_), Some(_)) | (None, None) => errs.push(FieldError::required(
            path,
            "exactly one of url or service is required",
        )),
        (Some(url), None) => validate_webhook_url(url, &format!("{path}.url"), errs),
        (None, Some(svc)) => {
            let path = format!("{path}.service");
            if svc.name.is_empty() {
                errs.push(FieldError::required(&format!("{path}.name"), ""));
            }
            if svc.namespace.is_empty() {
                errs.push(FieldError::required(&format!("{path}.namespace"), ""));
            }
            let port = svc.port.unwrap_or(0);
            if !(1..=65535).contains(&port) {
                errs.push(FieldError::invalid_value(
                    &format!("{path}.port"),
                    BadValue::Int(i64::from(port)),
                    "port is not valid: must be between 1 and 65535, inclusive",
                ));
            }
            if let Some(p) = &svc.path {
                validate_service_path(p, &format!("{path}.path"), errs);
            }
        }
    }
}

fn validate_webhook_url(url: &str, field: &str, errs: &mut Vec<FieldError>) {
    const FORM: &str = "; desired format: https://host[/path]";
    // Go's url.Parse, for the parts these checks read.
    let (before_fragment, fragment) = url.split_once('#').unwrap_or((url, ""));
    let (before_query, query) = before_fragment
        .split_once('?')
        .unwrap_or((before_fragment, ""));
    let scheme_end = before_query.find(':').filter(|&i| {
        let s = &before_query[..i];
        s.starts_with(|c: char| c.is_ascii_alphabetic())
            && s.chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'))
    });
    let (scheme, rest) = match scheme_end {
        Some(i) => (&before_query[..i], &before_query[i + 1..]),
        None => ("", before_query),
    };
    let (user, host) = match rest.strip_prefix("//") {
        Some(auth) => {
            let auth = auth.split('/').next().unwrap_or_default();
            match auth.rsplit_once('@') {
                Some((user, host)) => (Some(user), host),
                None => (None, auth),
            }
        }
        None => (None, ""),
    };
    if scheme != "https" {
        errs.push(FieldError::invalid(
            field,
            scheme,
            &format!("'https' is the only allowed URL scheme{FORM}"),
        ));
    }
    if host.is_empty() {
        errs.push(FieldError::invalid(
            field,
            host,
            &format!("host must be specified{FORM}"),
        ));
    }
    if let Some(user) = user {
        errs.push(FieldError::invalid(
            field,
            user,
            "user information is not permitted in the URL",
        ));
    }
    if !fragment.is_empty() {
        errs.push(FieldError::invalid(
            field,
            fragment,
            "fragments are not permitted in the URL",
        ));
    }
    if !query.is_empty() {
        errs.push(FieldError::invalid(
            field,
            query,
            "query parameters are not permitted in the URL",
        ));
    }
}

fn validate_service_path(p: &str, field: &str, errs: &mut Vec<FieldError>) {
    if p.is_empty() || p == "/" {
        return;
    }
    if p == "//" {
        errs.push(FieldError::invalid(field, p, "segment[0] may not be empty"));
        return;
    }
    if !p.starts_with('/') {
        errs.push(FieldError::invalid(field, p, "must start with a '/'"));
    }
    let check = p.get(1..).unwrap_or_default();
    let check = check.strip_suffix('/').unwrap_or(check);
    for (i, step) in check.split('/').enumerate() {
        if step.is_empty() {
            errs.push(FieldError::invalid(
                field,
                p,
                &format!("segment[{i}] may not be empty"),
            ));
            continue;
        }
        for m in names::dns1123_subdomain_errors(step) {
            errs.push(FieldError::invalid(field, p, &format!("segment[{i}]: {m}")));
        }
    }
}

/// `ValidateCustomResourceDefinitionNames`: the syntax of set names (emptiness is checked
/// for `spec.names` apart).
fn validate_names(n: &CustomResourceDefinitionNames, path: &str, errs: &mut Vec<FieldError>) {
    for (field, value) in [("plural", &n.plural), ("singular", &n.singular)] {
        if !value.is_empty() {
            push_label_errs(
                errs,
                &format!("{path}.{field}"),
                value,
                names::dns1035_label_errors(value),
            );
        }
    }
    for (field, value) in [("kind", &n.kind), ("listKind", &n.list_kind)] {
        let bad = names::dns1035_label_errors(&value.to_lowercase());
        if !value.is_empty() && !bad.is_empty() {
            errs.push(FieldError::invalid(
                &format!("{path}.{field}"),
                value,
                &format!(
                    "may have mixed case, but should otherwise match: {}",
                    bad.join(",")
                ),
            ));
        }
    }
    for (i, s) in n.short_names.iter().enumerate() {
        push_label_errs(
            errs,
            &format!("{path}.shortNames[{i}]"),
            s,
            names::dns1035_label_errors(s),
        );
    }
    if !n.kind.is_empty() && n.kind == n.list_kind {
        errs.push(FieldError::invalid(
            &format!("{path}.listKind"),
            &n.list_kind,
            "kind and listKind may not be the same",
        ));
    }
    for (i, c) in n.categories.iter().enumerate() {
        push_label_errs(
            errs,
            &format!("{path}.categories[{i}]"),
            c,
            names::dns1035_label_errors(c),
        );
    }
}

/// The status rules of a spec write: accepted names' syntax, and `storedVersions` non-empty,
/// holding the storage version, each entry still a version.
fn validate_status(crd: &CustomResourceDefinition, errs: &mut Vec<FieldError>) {
    validate_names(&crd.status.accepted_names, "status.acceptedNames", errs);
    const PATH: &str = "status.storedVersions";
    let stored = &crd.status.stored_versions;
    if stored.is_empty() {
        errs.push(FieldError::invalid_value(
            PATH,
            BadValue::Null,
            "must have at least one stored version",
        ));
        return;
    }
    // Each stored version at its last index, as Kubernetes' map keeps it.
    let mut left: BTreeMap<&str, usize> = stored
        .iter()
        .enumerate()
        .map(|(i, v)| (v.as_str(), i))
        .collect();
    for v in &crd.spec.versions {
        let present = left.remove(v.name.as_str()).is_some();
        if v.storage && !present {
            errs.push(FieldError::invalid_value(
                PATH,
                json(stored),
                &format!("must have the storage version {}", v.name),
            ));
        }
    }
    let mut missing: Vec<(usize, &str)> = left.into_iter().map(|(v, i)| (i, v)).collect();
    missing.sort_unstable();
    for (i, v) in missing {
        errs.push(FieldError::invalid(
            &format!("{PATH}[{i}]"),
            v,
            &format!(
                "missing from spec.versions; {v} was previously a storage version, and must remain in spec.versions until a storage migration ensures no data remains persisted in {v} and removes {v} from status.storedVersions"
            ),
        ));
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Approval {
    Invalid,
    Approved,
    Bypassed,
    Missing,
}

/// `IsProtectedCommunityGroup`: `k8s.io`, `kubernetes.io` and their subdomains.
pub(crate) fn is_protected_group(group: &str) -> bool {
    ["k8s.io", "kubernetes.io"]
        .iter()
        .any(|g| group == *g || group.strip_suffix(g).is_some_and(|s| s.ends_with('.')))
}

fn approval_state(crd: &CustomResourceDefinition) -> Approval {
    let value = crd
        .metadata
        .annotations
        .get(API_APPROVED_ANNOTATION)
        .map_or("", String::as_str);
    // `url.ParseRequestURI` with a scheme and a host.
    let is_url = value.split_once("://").is_some_and(|(scheme, rest)| {
        scheme.starts_with(|c: char| c.is_ascii_alphabetic())
            && scheme
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'))
            && !rest
                .split(['/', '?', '#'])
                .next()
                .unwrap_or_default()
                .is_empty()
            && !value.contains(' ')
    });
    if value.is_empty() {
        Approval::Missing
    } else if value.starts_with("unapproved") {
        Approval::Bypassed
    } else if is_url {
        Approval::Approved
    } else {
        Approval::Invalid
    }
}

/// `validateAPIApproval`: a protected group needs the approval annotation, unless its state
/// did not change in an update.
fn validate_api_approval(
    new: &CustomResourceDefinition,
    old: Option<&CustomResourceDefinition>,
    errs: &mut Vec<FieldError>,
) {
    if !is_protected_group(&new.spec.group) {
        return;
    }
    let state = approval_state(new);
    if old.is_some_and(|o| approval_state(o) == state) {
        return;
    }
    let field = format!("metadata.annotations[{API_APPROVED_ANNOTATION}]");
    match state {
        Approval::Approved | Approval::Bypassed => {}
        Approval::Missing => errs.push(FieldError::required(
            &field,
            &format!(
                "protected groups must have approval annotation {:?}, see https://github.com/kubernetes/enhancements/pull/1111",
                API_APPROVED_ANNOTATION
            ),
        )),
        Approval::Invalid => errs.push(FieldError::invalid(
            &field,
            new.metadata
                .annotations
                .get(API_APPROVED_ANNOTATION)
                .map_or("", String::as_str),
            &format!(
                "protected groups must have approval annotation {:?} with either a URL or a reason starting with \"unapproved\", see https://github.com/kubernetes/enhancements/pull/1111",
                API_APPROVED_ANNOTATION
            ),
        )),
    }
}

/// `validatePreserveUnknownFields`: `true` only if it was already.
fn validate_preserve_unknown_fields(
    new: &CustomResourceDefinition,
    old: Option<&CustomResourceDefinition>,
    errs: &mut Vec<FieldError>,
) {
    if old.is_some_and(|o| o.spec.preserve_unknown_fields) || !new.spec.preserve_unknown_fields {
        return;
    }
    errs.push(FieldError::invalid_value(
        "spec.preserveUnknownFields",
        BadValue::Bool(true),
        "cannot set to true, set x-kubernetes-preserve-unknown-fields to true in spec.versions[*].schema instead",
    ));
}

/// The naming controller's decision for `crd` (`calculateNamesAndConditions`): the names it
/// may serve under, and its `NamesAccepted` condition (no transition time; set it with
/// [`CustomResourceDefinition::set_condition`]).
///
/// `others` are the CRDs whose `status.acceptedNames` are taken; only those of `crd`'s group
/// count. Kubernetes lists every CRD of the group, `crd` itself included: a name `crd`
/// already holds is kept, but asking for a name it accepted under another role (say its old
/// plural as a short name) conflicts with itself. A requested name that conflicts is not
/// taken: the accepted one stays. Categories are always taken.
pub(crate) fn accepted_names(
    crd: &CustomResourceDefinition,
    others: &[&CustomResourceDefinition],
) -> (
    CustomResourceDefinitionNames,
    CustomResourceDefinitionCondition,
) {
    let mut resources: BTreeSet<&str> = BTreeSet::new();
    let mut kinds: BTreeSet<&str> = BTreeSet::new();
    for o in others.iter().filter(|o| o.spec.group == crd.spec.group) {
        let n = &o.status.accepted_names;
        resources.insert(&n.plural);
        resources.insert(&n.singular);
        resources.extend(n.short_names.iter().map(String::as_str));
        kinds.insert(&n.kind);
        kinds.insert(&n.list_kind);
    }
    let requested = &crd.spec.names;
    let accepted = &crd.status.accepted_names;
    let mut out = accepted.clone();
    let mut cond =
        CustomResourceDefinitionCondition::new(NAMES_ACCEPTED, CONDITION_UNKNOWN, "", "");
    let fresh = |req: &str, acc: &str, used: &BTreeSet<&str>| -> Result<(), String> {
        if req == acc || !used.contains(req) {
            Ok(())
        } else {
            Err(format!("{req:?} is already in use"))
        }
    };
    let mut conflict = |reason: &str, message: String| {
        cond.status = CONDITION_FALSE.to_owned();
        cond.reason = reason.to_owned();
        cond.message = message;
    };
    match fresh(&requested.plural, &accepted.plural, &resources) {
        Ok(()) => out.plural.clone_from(&requested.plural),
        Err(m) => conflict("PluralConflict", m),
    }
    match fresh(&requested.singular, &accepted.singular, &resources) {
        Ok(()) => out.singular.clone_from(&requested.singular),
        Err(m) => conflict("SingularConflict", m),
    }
    if requested.short_names != accepted.short_names {
        let errs: Vec<String> = requested
            .short_names
            .iter()
            .filter(|s| !accepted.short_names.contains(s))
            .filter_map(|s| fresh(s, "", &resources).err())
            .collect();
        match errs.len() {
            0 => out.short_names.clone_from(&requested.short_names),
            1 => conflict("ShortNamesConflict", errs[0].clone()),
            _ => conflict("ShortNamesConflict", format!("[{}]", errs.join(", "))),
        }
    }
    match fresh(&requested.kind, &accepted.kind, &kinds) {
        Ok(()) => out.kind.clone_from(&requested.kind),
        Err(m) => conflict("KindConflict", m),
    }
    match fresh(&requested.list_kind, &accepted.list_kind, &kinds) {
        Ok(()) => out.list_kind.clone_from(&requested.list_kind),
        Err(m) => conflict("ListKindConflict", m),
    }
    out.categories.clone_from(&requested.categories);
    if cond.status == CONDITION_UNKNOWN {
        cond.status = CONDITION_TRUE.to_owned();
        cond.reason = "NoConflicts".to_owned();
        cond.message = "no conflicts found".to_owned();
    }
    (out, cond)
}

/// The `Established` condition the naming controller writes with `names_accepted`: the
/// current one if already `True`; `False`/`Installing` once the names are accepted;
/// otherwise the current one, or `False`/`NotAccepted`.
pub(crate) fn established_after_naming(
    crd: &CustomResourceDefinition,
    names_accepted: &CustomResourceDefinitionCondition,
) -> CustomResourceDefinitionCondition {
    let current = crd.condition(ESTABLISHED).cloned().unwrap_or_else(|| {
        CustomResourceDefinitionCondition::new(
            ESTABLISHED,
            CONDITION_FALSE,
            "NotAccepted",
            "not all names are accepted",
        )
    });
    if current.status != CONDITION_TRUE && names_accepted.status == CONDITION_TRUE {
        return CustomResourceDefinitionCondition::new(
            ESTABLISHED,
            CONDITION_FALSE,
            "Installing",
            "the initial names have been accepted",
        );
    }
    current
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::apiextensions::types::set_defaults;
    use crate::apiextensions::types::*;
    use serde_json::json;

    fn crd(v: Value) -> CustomResourceDefinition {
        let mut c: CustomResourceDefinition = serde_json::from_value(v).unwrap();
        set_defaults(&mut c);
        c
    }

    fn valid() -> CustomResourceDefinition {
        crd(json!({
            "metadata": {"name": "crontabs.stable.example.com"},
            "spec": {"group": "stable.example.com", "scope": "Namespaced",
                     "names": {"plural": "crontabs", "kind": "CronTab", "shortNames": ["ct"]},
                     "versions": [{"name": "v1", "served": true, "storage": true,
                                   "schema": {"openAPIV3Schema": {"type": "object", "properties": {
                                       "spec": {"type": "object", "properties": {
                                           "color": {"type": "string"}, "size": {"type": "integer"},
                                           "on": {"type": "boolean"}, "ratio": {"type": "number"},
                                           "labels": {"type": "object", "additionalProperties": {"type": "string"}}}},
                                       "metadata": {"type": "object", "properties": {"name": {"type": "string"}}}}}}}]}
        }))
    }

    fn texts(errs: &[FieldError]) -> Vec<String> {
        errs.iter().map(ToString::to_string).collect()
    }

    fn create(c: &CustomResourceDefinition) -> Vec<String> {
        texts(&validate_create(c))
    }

    /// `valid()` with one change to its JSON.
    fn with(f: impl FnOnce(&mut Value)) -> CustomResourceDefinition {
        let mut v = serde_json::to_value(valid()).unwrap();
        f(&mut v);
        crd(v)
    }

    const DNS1035: &str = "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')";

    #[test]
    fn valid_crd_passes() {
        assert_eq!(create(&valid()), Vec::<String>::new());
    }

    #[test]
    fn name_must_be_plural_dot_group() {
        let c = with(|v| v["metadata"]["name"] = json!("tabs.stable.example.com"));
        assert_eq!(
            create(&c),
            [
                r#"metadata.name: Invalid value: "tabs.stable.example.com": must be spec.names.plural+"."+spec.group"#
            ]
        );
        let c = with(|v| v["metadata"]["name"] = json!("Bad"));
        let errs = create(&c);
        assert_eq!(errs.len(), 2);
        assert!(
            errs[0].starts_with(
                r#"metadata.name: Invalid value: "Bad": a lowercase RFC 1123 subdomain"#
            )
        );
        assert!(errs[1].ends_with(r#"must be spec.names.plural+"."+spec.group"#));
        let c = with(|v| {
            v["metadata"] = json!({"generateName": "crontabs.stable.example.com", "namespace": "x"})
        });
        assert_eq!(
            create(&c),
            [
                r#"metadata.name: Required value: name or generateName is required"#,
                r#"metadata.namespace: Forbidden: not allowed on this type"#,
            ]
        );
    }

    #[test]
    fn group_and_scope() {
        let c = with(|v| {
            v["spec"]["group"] = json!("");
            v["metadata"]["name"] = json!("crontabs.");
            v["spec"]["scope"] = json!("");
        });
        let errs = create(&c);
        assert!(
            errs.contains(&"spec.group: Required value".to_owned()),
            "{errs:?}"
        );
        assert!(errs.contains(&"spec.scope: Required value".to_owned()));
        let c = with(|v| {
            v["spec"]["group"] = json!("example");
            v["metadata"]["name"] = json!("crontabs.example");
            v["spec"]["scope"] = json!("Global");
        });
        assert_eq!(
            create(&c),
            [
                r#"spec.group: Invalid value: "example": should be a domain with at least one dot"#,
                r#"spec.scope: Unsupported value: "Global": supported values: "Cluster", "Namespaced""#,
            ]
        );
        let c = with(|v| {
            v["spec"]["group"] = json!("Ex.com");
            v["metadata"]["name"] = json!("crontabs.Ex.com");
        });
        assert!(create(&c).iter().any(|e| e.starts_with(
            r#"spec.group: Invalid value: "Ex.com": a lowercase RFC 1123 subdomain"#
        )));
    }

    #[test]
    fn names_rules() {
        let c = with(|v| {
            v["spec"]["names"] = json!({"plural": "Tabs", "singular": "1tab", "kind": "Cron_Tab",
                                        "listKind": "Cron_Tab", "shortNames": ["ok", "-x"],
                                        "categories": ["all", "A"]});
            v["metadata"]["name"] = json!("Tabs.stable.example.com");
        });
        let errs = create(&c);
        let names: Vec<&String> = errs
            .iter()
            .filter(|e| e.starts_with("spec.names"))
            .collect();
        assert_eq!(
            names,
            [
                &format!(r#"spec.names.plural: Invalid value: "Tabs": {DNS1035}"#),
                &format!(r#"spec.names.singular: Invalid value: "1tab": {DNS1035}"#),
                &format!(
                    r#"spec.names.kind: Invalid value: "Cron_Tab": may have mixed case, but should otherwise match: {DNS1035}"#
                ),
                &format!(
                    r#"spec.names.listKind: Invalid value: "Cron_Tab": may have mixed case, but should otherwise match: {DNS1035}"#
                ),
                &format!(r#"spec.names.shortNames[1]: Invalid value: "-x": {DNS1035}"#),
                &r#"spec.names.listKind: Invalid value: "Cron_Tab": kind and listKind may not be the same"#.to_owned(),
                &format!(r#"spec.names.categories[1]: Invalid value: "A": {DNS1035}"#),
            ]
        );
        // Required after defaulting: no kind leaves singular and listKind empty too.
        let c = with(|v| v["spec"]["names"] = json!({"plural": "crontabs"}));
        assert_eq!(
            create(&c),
            [
                "spec.names.singular: Required value",
                "spec.names.kind: Required value",
                "spec.names.listKind: Required value",
            ]
        );
        // Mixed-case kinds are fine; the accepted names are checked too.
        let c = with(|v| {
            v["spec"]["names"]["kind"] = json!("CronTab");
            v["status"]["acceptedNames"] = json!({"plural": "X", "kind": ""});
        });
        assert_eq!(
            create(&c),
            [format!(
                r#"status.acceptedNames.plural: Invalid value: "X": {DNS1035}"#
            )]
        );
    }

    #[test]
    fn versions() {
        let c = with(|v| {
            let mut v2 = v["spec"]["versions"][0].clone();
            v2["name"] = json!("V2");
            v["spec"]["versions"].as_array_mut().unwrap().push(v2);
        });
        let errs = create(&c);
        assert_eq!(errs.len(), 3, "{errs:?}");
        assert_eq!(
            errs[0],
            format!(r#"spec.versions[1].name: Invalid value: "V2": {DNS1035}"#)
        );
        assert!(errs[1].starts_with(r#"spec.versions: Invalid value: [{"name":"v1""#));
        assert!(errs[1].ends_with(": must have exactly one version marked as storage version"));
        assert_eq!(
            errs[2],
            r#"status.storedVersions: Invalid value: ["v1"]: must have the storage version V2"#
        );

        let c = with(|v| {
            let mut v2 = v["spec"]["versions"][0].clone();
            v2["storage"] = json!(false);
            v["spec"]["versions"].as_array_mut().unwrap().push(v2);
        });
        let errs = create(&c);
        assert_eq!(errs.len(), 1);
        assert!(
            errs[0].ends_with(": must contain unique version names"),
            "{errs:?}"
        );

        // The first version's name is checked again as the internal `spec.version`.
        let c = with(|v| {
            v["spec"]["versions"][0]["name"] = json!("1");
            v["status"]["storedVersions"] = json!(["1"]);
        });
        assert_eq!(
            create(&c),
            [
                format!(r#"spec.versions[0].name: Invalid value: "1": {DNS1035}"#),
                format!(r#"spec.version: Invalid value: "1": {DNS1035}"#),
            ]
        );

        let c = with(|v| v["spec"]["versions"][0]["schema"] = json!(null));
        assert_eq!(
            create(&c),
            ["spec.versions[0].schema.openAPIV3Schema: Required value"]
        );
    }

    #[test]
    fn deprecation_warning() {
        let set = |dep: bool, w: &str| {
            let w = w.to_owned();
            with(move |v| {
                v["spec"]["versions"][0]["deprecated"] = json!(dep);
                v["spec"]["versions"][0]["deprecationWarning"] = json!(w);
            })
        };
        assert_eq!(
            create(&set(false, "x")),
            [
                r#"spec.versions[0].deprecationWarning: Invalid value: "x": can only be set for deprecated versions"#
            ]
        );
        assert_eq!(create(&set(true, "use v2")), Vec::<String>::new());
        assert_eq!(
            create(&set(true, "")),
            [
                r#"spec.versions[0].deprecationWarning: Invalid value: "": must not be an empty string"#
            ]
        );
        let long = "a".repeat(257);
        assert_eq!(
            create(&set(true, &long)),
            [format!(
                r#"spec.versions[0].deprecationWarning: Invalid value: "{long}": must be <= 256 characters long"#
            )]
        );
        assert_eq!(
            create(&set(true, "ab\ncd")),
            [
                r#"spec.versions[0].deprecationWarning: Invalid value: "ab\ncd": must only contain printable UTF-8 characters; non-printable character found at index 2"#
            ]
        );
    }

    #[test]
    fn preserve_unknown_fields() {
        let c = with(|v| v["spec"]["preserveUnknownFields"] = json!(true));
        assert_eq!(
            create(&c),
            [
                "spec.preserveUnknownFields: Invalid value: true: cannot set to true, set x-kubernetes-preserve-unknown-fields to true in spec.versions[*].schema instead"
            ]
        );
        // Kept on update when it was already true; defaults then need it false.
        let mut old = c.clone();
        old.metadata.resource_version = "1".into();
        let mut new = with(|v| {
            v["spec"]["preserveUnknownFields"] = json!(true);
            v["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"]
                ["size"]["default"] = json!(1);
        });
        new.metadata.resource_version = "1".into();
        assert_eq!(
            texts(&validate_update(&new, &old)),
            [
                "spec.preserveUnknownFields: Invalid value: true: must be false in order to use defaults in the schema"
            ]
        );
        // Webhook conversion needs it false.
        let c = with(|v| {
            v["spec"]["preserveUnknownFields"] = json!(true);
            v["spec"]["conversion"] = json!({"strategy": "Webhook", "webhook": {
                "clientConfig": {"url": "https://h/c"}, "conversionReviewVersions": ["v1"]}});
        });
        assert_eq!(
            create(&c),
            [
                r#"spec.conversion.strategy: Invalid value: "Webhook": must be None if spec.preserveUnknownFields is true"#,
                "spec.preserveUnknownFields: Invalid value: true: cannot set to true, set x-kubernetes-preserve-unknown-fields to true in spec.versions[*].schema instead",
            ]
        );
    }

    fn two_versions(f: impl FnOnce(&mut Value)) -> CustomResourceDefinition {
        with(|v| {
            let mut v2 = v["spec"]["versions"][0].clone();
            v2["name"] = json!("v2");
            v2["storage"] = json!(false);
            v["spec"]["versions"].as_array_mut().unwrap().push(v2);
            f(v);
        })
    }

    #[test]
    fn hoisted_paths() {
        let cols = json!([{"name": "A", "type": "integer", "jsonPath": ".spec.size"},
                          {"name": "", "type": "", "format": "hex", "jsonPath": "spec.x"},
                          {"name": "C", "type": "text", "jsonPath": ""},
                          {"name": "D", "type": "string", "jsonPath": ".spec..x"}]);
        let expect = |prefix: &str| {
            vec![
                format!("{prefix}[1].name: Required value"),
                format!(
                    "{prefix}[1].type: Required value: must be one of boolean,date,integer,number,string"
                ),
                format!(
                    r#"{prefix}[1].format: Invalid value: "hex": must be one of byte,date,date-time,double,float,int32,int64,password"#
                ),
                format!(
                    r#"{prefix}[1].JSONPath: Invalid value: "spec.x": must be a simple json path starting with ."#
                ),
                format!(
                    r#"{prefix}[2].type: Invalid value: "text": must be one of boolean,date,integer,number,string"#
                ),
                format!("{prefix}[2].JSONPath: Required value"),
                format!(
                    r#"{prefix}[3].JSONPath: Invalid value: ".spec..x": must be a JSONPath this server can evaluate: recursive descent (..) is not supported"#
                ),
            ]
        };
        // One version: top-level paths.
        let c = with(|v| v["spec"]["versions"][0]["additionalPrinterColumns"] = cols.clone());
        assert_eq!(create(&c), expect("spec.additionalPrinterColumns"));
        // Two versions, same columns: still top-level.
        let c = two_versions(|v| {
            v["spec"]["versions"][0]["additionalPrinterColumns"] = cols.clone();
            v["spec"]["versions"][1]["additionalPrinterColumns"] = cols.clone();
        });
        assert_eq!(create(&c), expect("spec.additionalPrinterColumns"));
        assert_eq!(schema_path(&c, 1), "spec.validation.openAPIV3Schema");
        assert_eq!(
            schema_checks(&c),
            [SchemaCheck {
                version_index: 0,
                path: "spec.validation.openAPIV3Schema".into(),
                status_subresource: false
            }]
        );
        // Different columns: per-version paths.
        let c =
            two_versions(|v| v["spec"]["versions"][1]["additionalPrinterColumns"] = cols.clone());
        assert_eq!(
            create(&c),
            expect("spec.versions[1].additionalPrinterColumns")
        );
        // Different schemas: per-version schema paths; status per version.
        let c = two_versions(|v| {
            v["spec"]["versions"][1]["schema"]["openAPIV3Schema"]["description"] = json!("x");
            v["spec"]["versions"][1]["subresources"] = json!({"status": {}});
        });
        assert_eq!(
            schema_path(&c, 0),
            "spec.versions[0].schema.openAPIV3Schema"
        );
        assert_eq!(
            schema_checks(&c)
                .into_iter()
                .map(|s| (s.path, s.status_subresource))
                .collect::<Vec<_>>(),
            [
                ("spec.versions[0].schema.openAPIV3Schema".to_owned(), false),
                ("spec.versions[1].schema.openAPIV3Schema".to_owned(), true),
            ]
        );
        // Hoisted schema with status on a version: the status flag is any version's.
        let c = two_versions(|v| v["spec"]["versions"][1]["subresources"] = json!({"status": {}}));
        assert!(schema_checks(&c)[0].status_subresource);
        let c = with(|v| v["spec"]["versions"][0]["schema"] = json!(null));
        assert_eq!(schema_checks(&c), []);
    }

    #[test]
    fn scale_subresource() {
        let scale = |s: Value| {
            with(move |v| {
                v["spec"]["versions"][0]["subresources"] = json!({"status": {}, "scale": s})
            })
        };
        assert_eq!(
            create(&scale(
                json!({"specReplicasPath": ".spec.replicas", "statusReplicasPath": ".status.replicas",
                                  "labelSelectorPath": ".status.selector"})
            )),
            Vec::<String>::new()
        );
        assert_eq!(
            create(&scale(json!({}))),
            [
                "spec.subresources.scale.specReplicasPath: Required value",
                "spec.subresources.scale.statusReplicasPath: Required value",
            ]
        );
        assert_eq!(
            create(&scale(
                json!({"specReplicasPath": ".status.replicas", "statusReplicasPath": "status.replicas",
                                  "labelSelectorPath": ".metadata.labels"})
            )),
            [
                r#"spec.subresources.scale.specReplicasPath: Invalid value: ".status.replicas": should be a json path under .spec"#,
                r#"spec.subresources.scale.statusReplicasPath: Invalid value: "status.replicas": must be a simple json path starting with ."#,
                r#"spec.subresources.scale.labelSelectorPath: Invalid value: ".metadata.labels": should be a json path under either .spec or .status"#,
            ]
        );
        assert_eq!(
            create(&scale(
                json!({"specReplicasPath": ".spec.r", "statusReplicasPath": ".spec.r",
                                  "labelSelectorPath": "x"})
            )),
            [
                r#"spec.subresources.scale.statusReplicasPath: Invalid value: ".spec.r": should be a json path under .status"#,
                r#"spec.subresources.scale.labelSelectorPath: Invalid value: "x": must be a simple json path starting with ."#,
            ]
        );
        // Per version when versions differ.
        let c = two_versions(|v| v["spec"]["versions"][1]["subresources"] = json!({"scale": {}}));
        assert_eq!(
            create(&c),
            [
                "spec.versions[1].subresources.scale.specReplicasPath: Required value",
                "spec.versions[1].subresources.scale.statusReplicasPath: Required value",
            ]
        );
    }

    #[test]
    fn selectable_fields() {
        let sel = |paths: &[&str]| {
            let list: Vec<Value> = paths.iter().map(|p| json!({"jsonPath": p})).collect();
            with(move |v| v["spec"]["versions"][0]["selectableFields"] = json!(list))
        };
        assert_eq!(
            create(&sel(&[
                ".spec.color",
                ".spec.size",
                ".spec.on",
                ".spec.labels.x"
            ])),
            Vec::<String>::new()
        );
        let p = "spec.selectableFields";
        assert_eq!(
            create(&sel(&[
                "",
                ".spec.nope",
                ".spec.ratio",
                ".metadata.name",
                ".spec.color",
                ".spec.color",
                ".spec[0]",
                ".spec.",
                "spec",
                ".spec.color.x"
            ])),
            [
                format!("{p}[0].jsonPath: Required value"),
                format!(
                    r#"{p}[1].jsonPath: Invalid value: ".spec.nope": is an invalid path: does not refer to a valid field"#
                ),
                format!(
                    r#"{p}[2].jsonPath: Invalid value: ".spec.ratio": must point to a field of type string, boolean or integer. Enum string fields and strings with formats are allowed."#
                ),
                format!(
                    r#"{p}[3].jsonPath: Invalid value: ".metadata.name": must not point to fields in metadata"#
                ),
                format!(r#"{p}[5].jsonPath: Duplicate value: ".spec.color""#),
                format!(
                    r#"{p}[6].jsonPath: Invalid value: ".spec[0]": is an invalid path: array notation is not allowed"#
                ),
                format!(
                    r#"{p}[7].jsonPath: Invalid value: ".spec.": is an invalid path: unexpected end of JSON path"#
                ),
                format!(
                    r#"{p}[8].jsonPath: Invalid value: "spec": is an invalid path: expected [ or . but got: spec"#
                ),
                format!(
                    r#"{p}[9].jsonPath: Invalid value: ".spec.color.x": is an invalid path: does not refer to a valid field"#
                ),
            ]
        );
        let many: Vec<String> = (0..9).map(|i| format!(".spec.labels.k{i}")).collect();
        let many_refs: Vec<&str> = many.iter().map(String::as_str).collect();
        let c = sel(&many_refs);
        assert_eq!(
            create(&c),
            [format!("{p}: Too many: 9: must have at most 8 items")]
        );
        // Kept unchanged on update, more than 8 stay allowed.
        let mut old = c.clone();
        old.metadata.resource_version = "1".into();
        let new = old.clone();
        assert_eq!(texts(&validate_update(&new, &old)), Vec::<String>::new());

        // Per-version selectable fields while the schema is shared: refused, as Kubernetes does.
        let c = two_versions(|v| {
            v["spec"]["versions"][1]["selectableFields"] = json!([{"jsonPath": ".spec.color"}])
        });
        assert_eq!(
            create(&c),
            [
                "spec.versions[1].selectableFields: Invalid value: \"\": may only be set when `version.schema.openAPIV3Schema` is not included"
            ]
        );
        // Shared selectable fields, different schemas.
        let c = two_versions(|v| {
            v["spec"]["versions"][1]["schema"]["openAPIV3Schema"]["description"] = json!("x");
            for i in 0..2 {
                v["spec"]["versions"][i]["selectableFields"] = json!([{"jsonPath": ".spec.color"}]);
            }
        });
        assert_eq!(
            create(&c),
            [
                r#"spec.selectableFields: Invalid value: "": may only be set when validations.schema is included"#
            ]
        );
        // Different selectable fields, different schemas: each against its own schema.
        let c = two_versions(|v| {
            v["spec"]["versions"][1]["schema"]["openAPIV3Schema"]["description"] = json!("x");
            v["spec"]["versions"][1]["selectableFields"] = json!([{"jsonPath": ".spec.ratio"}]);
        });
        assert_eq!(
            create(&c),
            [
                r#"spec.versions[1].selectableFields[0].jsonPath: Invalid value: ".spec.ratio": must point to a field of type string, boolean or integer. Enum string fields and strings with formats are allowed."#
            ]
        );
    }

    #[test]
    fn conversion() {
        let conv = |c: Value| with(move |v| v["spec"]["conversion"] = c);
        assert_eq!(
            create(&conv(json!({"strategy": "None"}))),
            Vec::<String>::new()
        );
        assert_eq!(
            create(&conv(json!({"strategy": "Magic"}))),
            [
                r#"spec.conversion.strategy: Unsupported value: "Magic": supported values: "None", "Webhook""#
            ]
        );
        assert_eq!(
            create(&conv(json!({"strategy": ""}))),
            ["spec.conversion.strategy: Required value"]
        );
        assert_eq!(
            create(&conv(
                json!({"strategy": "None", "webhook": {"clientConfig": {"url": "https://x"},
                                                               "conversionReviewVersions": ["v1"]}})
            )),
            [
                "spec.conversion.webhookClientConfig: Forbidden: should not be set when strategy is not set to Webhook",
                "spec.conversion.conversionReviewVersions: Forbidden: should not be set when strategy is not set to Webhook",
            ]
        );
        assert_eq!(
            create(&conv(json!({"strategy": "Webhook"}))),
            [
                "spec.conversion.webhookClientConfig: Required value: required when strategy is set to Webhook",
                "spec.conversion.conversionReviewVersions: Required value",
            ]
        );
        assert_eq!(
            create(&conv(
                json!({"strategy": "Webhook", "webhook": {"clientConfig": {},
                                 "conversionReviewVersions": ["v2", "v2", "V3"]}})
            )),
            [
                "spec.conversion.webhookClientConfig: Required value: exactly one of url or service is required",
                r#"spec.conversion.conversionReviewVersions[1]: Invalid value: "v2": duplicate version"#,
                &format!(
                    r#"spec.conversion.conversionReviewVersions[2]: Invalid value: "V3": {DNS1035}"#
                ),
                r#"spec.conversion.conversionReviewVersions: Invalid value: ["v2","v2","V3"]: must include at least one of v1, v1beta1"#,
            ]
        );
        assert_eq!(
            create(&conv(json!({"strategy": "Webhook", "webhook": {
                "clientConfig": {"url": "http://u:p@/x?q=1#f"}, "conversionReviewVersions": ["v1beta1"]}}))),
            [
                r#"spec.conversion.webhookClientConfig.url: Invalid value: "http": 'https' is the only allowed URL scheme; desired format: https://host[/path]"#,
                r#"spec.conversion.webhookClientConfig.url: Invalid value: "": host must be specified; desired format: https://host[/path]"#,
                r#"spec.conversion.webhookClientConfig.url: Invalid value: "u:p": user information is not permitted in the URL"#,
                r#"spec.conversion.webhookClientConfig.url: Invalid value: "f": fragments are not permitted in the URL"#,
                r#"spec.conversion.webhookClientConfig.url: Invalid value: "q=1": query parameters are not permitted in the URL"#,
            ]
        );
        // A service: port defaulted to 443; path segments are DNS subdomains.
        let c = conv(json!({"strategy": "Webhook", "webhook": {
            "clientConfig": {"service": {"namespace": "ns", "name": "svc", "path": "/convert"}},
            "conversionReviewVersions": ["v1"]}}));
        assert_eq!(create(&c), Vec::<String>::new());
        let c = conv(json!({"strategy": "Webhook", "webhook": {
            "clientConfig": {"service": {"namespace": "", "name": "", "port": 0, "path": "x//"}},
            "conversionReviewVersions": ["v1"]}}));
        assert_eq!(
            create(&c),
            [
                "spec.conversion.webhookClientConfig.service.name: Required value",
                "spec.conversion.webhookClientConfig.service.namespace: Required value",
                "spec.conversion.webhookClientConfig.service.port: Invalid value: 0: port is not valid: must be between 1 and 65535, inclusive",
                r#"spec.conversion.webhookClientConfig.service.path: Invalid value: "x//": must start with a '/'"#,
                r#"spec.conversion.webhookClientConfig.service.path: Invalid value: "x//": segment[0] may not be empty"#,
                r#"spec.conversion.webhookClientConfig.service.path: Invalid value: "x//": segment[1] may not be empty"#,
            ]
        );
    }

    #[test]
    fn stored_versions() {
        let c = with(|v| v["status"]["storedVersions"] = json!(null));
        // Defaulting seeds it; an explicitly emptied list is only possible past defaulting.
        assert_eq!(c.status.stored_versions, ["v1"]);
        let mut c = valid();
        c.status.stored_versions.clear();
        assert_eq!(
            create(&c),
            ["status.storedVersions: Invalid value: null: must have at least one stored version"]
        );
        c.status.stored_versions = vec!["v0".into(), "v1beta1".into()];
        assert_eq!(
            create(&c),
            [
                r#"status.storedVersions: Invalid value: ["v0","v1beta1"]: must have the storage version v1"#,
                r#"status.storedVersions[0]: Invalid value: "v0": missing from spec.versions; v0 was previously a storage version, and must remain in spec.versions until a storage migration ensures no data remains persisted in v0 and removes v0 from status.storedVersions"#,
                r#"status.storedVersions[1]: Invalid value: "v1beta1": missing from spec.versions; v1beta1 was previously a storage version, and must remain in spec.versions until a storage migration ensures no data remains persisted in v1beta1 and removes v1beta1 from status.storedVersions"#,
            ]
        );
    }

    #[test]
    fn api_approval() {
        let group = |g: &str, ann: Option<&str>| {
            let (g, ann) = (g.to_owned(), ann.map(str::to_owned));
            with(move |v| {
                v["spec"]["group"] = json!(g);
                v["metadata"]["name"] = json!(format!("crontabs.{g}"));
                if let Some(a) = ann {
                    v["metadata"]["annotations"] = json!({"api-approved.kubernetes.io": a});
                }
            })
        };
        assert_eq!(
            create(&group("x.k8s.io", None)),
            [
                r#"metadata.annotations[api-approved.kubernetes.io]: Required value: protected groups must have approval annotation "api-approved.kubernetes.io", see https://github.com/kubernetes/enhancements/pull/1111"#
            ]
        );
        assert_eq!(
            create(&group("kubernetes.io", Some("yes"))),
            [
                r#"metadata.annotations[api-approved.kubernetes.io]: Invalid value: "yes": protected groups must have approval annotation "api-approved.kubernetes.io" with either a URL or a reason starting with "unapproved", see https://github.com/kubernetes/enhancements/pull/1111"#
            ]
        );
        assert_eq!(
            create(&group(
                "a.k8s.io",
                Some("https://github.com/kubernetes/enhancements/pull/1111")
            )),
            Vec::<String>::new()
        );
        assert_eq!(
            create(&group("a.k8s.io", Some("unapproved, testing"))),
            Vec::<String>::new()
        );
        assert_eq!(create(&group("notk8s.io", None)), Vec::<String>::new());
        // An update that keeps a missing annotation is not refused.
        let mut old = group("x.k8s.io", None);
        old.metadata.resource_version = "1".into();
        assert_eq!(
            texts(&validate_update(&old.clone(), &old)),
            Vec::<String>::new()
        );
        assert!(is_protected_group("k8s.io") && is_protected_group("a.b.kubernetes.io"));
        assert!(!is_protected_group("xk8s.io"));
    }

    #[test]
    fn update_immutables() {
        let mut old = valid();
        old.metadata.resource_version = "1".into();
        let mut new = old.clone();
        new.spec.scope = "Cluster".into();
        new.spec.names.kind = "Tab".into();
        new.spec.names.list_kind = "TabList".into();
        assert_eq!(texts(&validate_update(&new, &old)), Vec::<String>::new());
        old.set_condition(
            CustomResourceDefinitionCondition::new(ESTABLISHED, CONDITION_TRUE, "", ""),
            crate::meta::Time::from_unix(0),
        );
        new.spec.group = "other.example.com".into();
        new.spec.names.plural = "tabs".into();
        assert_eq!(
            texts(&validate_update(&new, &old)),
            [
                r#"spec.scope: Invalid value: "Cluster": field is immutable"#,
                r#"spec.names.kind: Invalid value: "Tab": field is immutable"#,
                r#"spec.group: Invalid value: "other.example.com": field is immutable"#,
                r#"spec.names.plural: Invalid value: "tabs": field is immutable"#,
            ]
        );
        // A schema is not required if the old object lacked one.
        let mut old = with(|v| v["spec"]["versions"][0]["schema"] = json!(null));
        old.metadata.resource_version = "1".into();
        assert_eq!(
            texts(&validate_update(&old.clone(), &old)),
            Vec::<String>::new()
        );
        // storedVersions must keep versions still stored.
        let mut new = old.clone();
        new.spec.versions[0].name = "v2".into();
        assert_eq!(
            texts(&validate_update(&new, &old)),
            [
                r#"status.storedVersions: Invalid value: ["v1"]: must have the storage version v2"#,
                r#"status.storedVersions[0]: Invalid value: "v1": missing from spec.versions; v1 was previously a storage version, and must remain in spec.versions until a storage migration ensures no data remains persisted in v1 and removes v1 from status.storedVersions"#,
            ]
        );
        // /status writes check only metadata and accepted names.
        new.status.accepted_names.kind = "bad_kind".into();
        assert_eq!(
            texts(&validate_status_update(&new, &old)),
            [format!(
                r#"status.acceptedNames.kind: Invalid value: "bad_kind": may have mixed case, but should otherwise match: {DNS1035}"#
            )]
        );
    }

    fn in_group(names: CustomResourceDefinitionNames) -> CustomResourceDefinition {
        let mut c = CustomResourceDefinition::default();
        c.spec.group = "stable.example.com".into();
        c.status.accepted_names = names;
        c
    }

    fn names(
        plural: &str,
        singular: &str,
        short: &[&str],
        kind: &str,
    ) -> CustomResourceDefinitionNames {
        CustomResourceDefinitionNames {
            plural: plural.into(),
            singular: singular.into(),
            short_names: short.iter().map(|s| s.to_string()).collect(),
            kind: kind.into(),
            list_kind: format!("{kind}List"),
            categories: vec!["all".into()],
        }
    }

    #[test]
    fn naming() {
        let taken = in_group(names("crontabs", "crontab", &["ct", "cts"], "CronTab"));
        let mut other_group = taken.clone();
        other_group.spec.group = "other.example.com".into();
        other_group.status.accepted_names = names("widgets", "widget", &["w"], "Widget");

        let mut c = in_group(CustomResourceDefinitionNames::default());
        c.spec.names = names("widgets", "widget", &["w"], "Widget");
        let (acc, cond) = accepted_names(&c, &[&taken, &other_group]);
        assert_eq!(acc, c.spec.names);
        assert_eq!(
            (
                cond.type_.as_str(),
                cond.status.as_str(),
                cond.reason.as_str(),
                cond.message.as_str()
            ),
            ("NamesAccepted", "True", "NoConflicts", "no conflicts found")
        );
        let est = established_after_naming(&c, &cond);
        assert_eq!(
            (
                est.status.as_str(),
                est.reason.as_str(),
                est.message.as_str()
            ),
            (
                "False",
                "Installing",
                "the initial names have been accepted"
            )
        );

        let check = |req: CustomResourceDefinitionNames, reason: &str, msg: &str| {
            let mut c = in_group(CustomResourceDefinitionNames::default());
            c.spec.names = req;
            let (acc, cond) = accepted_names(&c, &[&taken]);
            assert_eq!(
                (
                    cond.status.as_str(),
                    cond.reason.as_str(),
                    cond.message.as_str()
                ),
                ("False", reason, msg)
            );
            let est = established_after_naming(&c, &cond);
            assert_eq!(
                (est.reason.as_str(), est.message.as_str()),
                ("NotAccepted", "not all names are accepted")
            );
            acc
        };
        let acc = check(
            names("crontabs", "x", &[], "X"),
            "PluralConflict",
            r#""crontabs" is already in use"#,
        );
        assert_eq!(
            (
                acc.plural.as_str(),
                acc.singular.as_str(),
                acc.kind.as_str()
            ),
            ("", "x", "X")
        );
        check(
            names("xs", "ct", &[], "X"),
            "SingularConflict",
            r#""ct" is already in use"#,
        );
        let acc = check(
            names("xs", "x", &["ct", "ok", "crontab"], "X"),
            "ShortNamesConflict",
            r#"["ct" is already in use, "crontab" is already in use]"#,
        );
        assert!(acc.short_names.is_empty());
        check(
            names("xs", "x", &["cts"], "X"),
            "ShortNamesConflict",
            r#""cts" is already in use"#,
        );
        let mut req = names("xs", "x", &[], "CronTab");
        req.list_kind = "XList".into();
        check(req, "KindConflict", r#""CronTab" is already in use"#);
        // With the default list kind, both conflict, and the last one found is reported.
        check(
            names("xs", "x", &[], "CronTab"),
            "ListKindConflict",
            r#""CronTabList" is already in use"#,
        );
        let mut req = names("xs", "x", &[], "X");
        req.list_kind = "CronTab".into();
        // The last conflict found is the one reported.
        check(req, "ListKindConflict", r#""CronTab" is already in use"#);

        // Names a CRD holds already stay its own; Established=True is kept.
        let mut me = taken.clone();
        me.spec.names = names("crontabs", "crontab", &["ct", "cts", "new"], "CronTab");
        me.set_condition(
            CustomResourceDefinitionCondition::new(
                ESTABLISHED,
                CONDITION_TRUE,
                "InitialNamesAccepted",
                "",
            ),
            crate::meta::Time::from_unix(0),
        );
        let (acc, cond) = accepted_names(&me, &[&taken, &me]);
        assert_eq!(cond.reason, "NoConflicts");
        assert_eq!(acc.short_names, ["ct", "cts", "new"]);
        assert_eq!(established_after_naming(&me, &cond).status, "True");
    }
}

/// The examples of this file's documentation, run as tests: the module is private to the
/// crate, so rustdoc does not run them.
#[cfg(test)]
mod examples {
    #[test]
    fn schema_path() {
        use crate::apiextensions::{types::*, validation::schema_path};

        let mut crd = CustomResourceDefinition::default();
        crd.spec.versions.push(CustomResourceDefinitionVersion {
            name: "v1".into(),
            ..Default::default()
        });
        assert_eq!(schema_path(&crd, 0), "spec.validation.openAPIV3Schema");
        let mut v2 = crd.spec.versions[0].clone();
        v2.schema = Some(CustomResourceValidation {
            open_api_v3_schema: Some(serde_json::json!({})),
        });
        crd.spec.versions.push(v2);
        assert_eq!(
            schema_path(&crd, 1),
            "spec.versions[1].schema.openAPIV3Schema"
        );
    }

    #[test]
    fn validate_create() {
        use crate::apiextensions::{types::*, validation::validate_create};

        let mut crd: CustomResourceDefinition = serde_json::from_value(serde_json::json!({
            "metadata": {"name": "crontabs.stable.example.com"},
            "spec": {"group": "stable.example.com", "scope": "Namespaced",
                     "names": {"plural": "crontabs", "kind": "CronTab"},
                     "versions": [{"name": "v1", "served": true, "storage": true,
                                   "schema": {"openAPIV3Schema": {"type": "object"}},
                                   "additionalPrinterColumns": [{"name": "R", "type": "int", "jsonPath": ".spec.r"}]}]}
        })).unwrap();
        set_defaults(&mut crd);
        let errs: Vec<String> = validate_create(&crd)
            .iter()
            .map(ToString::to_string)
            .collect();
        assert_eq!(
            errs,
            [
                r#"spec.additionalPrinterColumns[0].type: Invalid value: "int": must be one of boolean,date,integer,number,string"#
            ]
        );
    }

    #[test]
    fn accepted_names() {
        use crate::apiextensions::{types::*, validation::accepted_names};

        let names = |plural: &str, kind: &str| CustomResourceDefinitionNames {
            plural: plural.into(),
            singular: plural.trim_end_matches('s').into(),
            kind: kind.into(),
            list_kind: format!("{kind}List"),
            ..Default::default()
        };
        let mut first = CustomResourceDefinition::default();
        first.spec.group = "stable.example.com".into();
        first.status.accepted_names = names("crontabs", "CronTab");
        let mut second = first.clone();
        second.status.accepted_names = Default::default();
        second.spec.names = names("crontabz", "CronTab");

        let (accepted, cond) = accepted_names(&second, &[&first]);
        assert_eq!(
            (cond.status.as_str(), cond.reason.as_str()),
            ("False", "ListKindConflict")
        );
        assert_eq!(cond.message, r#""CronTabList" is already in use"#);
        assert_eq!(accepted.plural, "crontabz");
        assert_eq!(accepted.kind, "");
    }
}
