//! Field errors in apimachinery's format (`field.Error`, `field.ErrorList` and the 422
//! `Invalid` Status they make), and the checks Kubernetes' generic registry runs on every
//! object whatever its kind: object metadata on create and update, names, `fieldManager`.

use std::fmt;

use conneg::{Status, StatusCause};

use crate::meta::{FINALIZER_FOREGROUND, FINALIZER_ORPHAN, ObjectMeta, OwnerReference};
use crate::names;

/// `field.ErrorType`: the cause type (`reason` in a Status cause) and its message prefix.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FieldErrorType {
    /// `FieldValueNotFound` / "Not found".
    NotFound,
    /// `FieldValueRequired` / "Required value".
    Required,
    /// `FieldValueDuplicate` / "Duplicate value".
    Duplicate,
    /// `FieldValueInvalid` / "Invalid value".
    Invalid,
    /// `FieldValueNotSupported` / "Unsupported value".
    NotSupported,
    /// `FieldValueForbidden` / "Forbidden".
    Forbidden,
    /// `FieldValueTooLong` / "Too long".
    TooLong,
    /// `FieldValueTooMany` / "Too many".
    TooMany,
    /// `FieldValueTypeInvalid` / "Invalid value": a value of the wrong type.
    TypeInvalid,
    /// `InternalError` / "Internal error".
    Internal,
}

impl FieldErrorType {
    /// The Status cause type, e.g. `FieldValueInvalid`.
    pub fn as_reason(self) -> &'static str {
        match self {
            FieldErrorType::NotFound => "FieldValueNotFound",
            FieldErrorType::Required => "FieldValueRequired",
            FieldErrorType::Duplicate => "FieldValueDuplicate",
            FieldErrorType::Invalid => "FieldValueInvalid",
            FieldErrorType::NotSupported => "FieldValueNotSupported",
            FieldErrorType::Forbidden => "FieldValueForbidden",
            FieldErrorType::TooLong => "FieldValueTooLong",
            FieldErrorType::TooMany => "FieldValueTooMany",
            FieldErrorType::TypeInvalid => "FieldValueTypeInvalid",
            FieldErrorType::Internal => "InternalError",
        }
    }

    /// The human prefix, e.g. `Invalid value`.
    pub fn as_message(self) -> &'static str {
        match self {
            FieldErrorType::NotFound => "Not found",
            FieldErrorType::Required => "Required value",
            FieldErrorType::Duplicate => "Duplicate value",
            FieldErrorType::Invalid => "Invalid value",
            FieldErrorType::NotSupported => "Unsupported value",
            FieldErrorType::Forbidden => "Forbidden",
            FieldErrorType::TooLong => "Too long",
            FieldErrorType::TooMany => "Too many",
            FieldErrorType::TypeInvalid => "Invalid value",
            FieldErrorType::Internal => "Internal error",
        }
    }
}

/// The offending value of a field error, printed as Go's `field.Error` prints it.
#[derive(Debug, Clone, PartialEq)]
pub enum BadValue {
    /// No value (Go `nil`): printed `null`.
    Null,
    /// A string: printed quoted (`%q`).
    String(String),
    /// A signed integer: printed in decimal.
    Int(i64),
    /// An unsigned integer: printed as Go's `%#v` does, in hex (`0x0`).
    Uint(u64),
    /// A boolean.
    Bool(bool),
    /// A value Go prints with its `String` method, unquoted (e.g. a `metav1.Time`).
    Stringer(String),
    /// A list of strings: printed as Go's `%#v` does, `[]string{"a", "b"}`.
    Strings(Vec<String>),
    /// Anything else: printed as JSON.
    Other(serde_json::Value),
}

impl fmt::Display for BadValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BadValue::Null => f.write_str("null"),
            BadValue::String(s) => f.write_str(&Status::quote(s)),
            BadValue::Int(n) => write!(f, "{n}"),
            BadValue::Uint(n) => write!(f, "{n:#x}"),
            BadValue::Bool(b) => write!(f, "{b}"),
            BadValue::Stringer(s) => f.write_str(s),
            BadValue::Strings(v) => f.write_str(&go_strings(v)),
            BadValue::Other(v) => write!(f, "{v}"),
        }
    }
}

/// Go's `%#v` of a `[]string`: `[]string{"a", "b"}`.
pub fn go_strings(v: &[String]) -> String {
    let quoted: Vec<String> = v.iter().map(|s| Status::quote(s)).collect();
    format!("[]string{{{}}}", quoted.join(", "))
}

/// One field error (`field.Error`): path, type, offending value, detail.
#[derive(Debug, Clone, PartialEq)]
pub struct FieldError {
    /// Field path, e.g. `spec.fischerReference`.
    pub field: String,
    /// Error type; [`FieldErrorType::as_reason`] is the Status cause `reason`.
    pub error_type: FieldErrorType,
    /// The offending value (not printed for Required, Forbidden, TooLong, Internal).
    pub bad_value: BadValue,
    /// Detail, e.g. `cannot be set with flunderReference at the same time`.
    pub detail: String,
}

impl FieldError {
    /// `field.Invalid(path, value, detail)` with a string value.
    pub fn invalid(field: &str, value: &str, detail: &str) -> Self {
        Self::invalid_value(field, BadValue::String(value.to_owned()), detail)
    }

    /// `field.Invalid(path, value, detail)` with any value.
    pub fn invalid_value(field: &str, value: BadValue, detail: &str) -> Self {
        Self {
            field: field.to_owned(),
            error_type: FieldErrorType::Invalid,
            bad_value: value,
            detail: detail.to_owned(),
        }
    }

    /// `field.Required(path, detail)`.
    pub fn required(field: &str, detail: &str) -> Self {
        Self {
            field: field.to_owned(),
            error_type: FieldErrorType::Required,
            bad_value: BadValue::String(String::new()),
            detail: detail.to_owned(),
        }
    }

    /// `field.Forbidden(path, detail)`.
    pub fn forbidden(field: &str, detail: &str) -> Self {
        Self {
            field: field.to_owned(),
            error_type: FieldErrorType::Forbidden,
            bad_value: BadValue::String(String::new()),
            detail: detail.to_owned(),
        }
    }

    /// `field.NotSupported(path, value, supported)`.
    pub fn not_supported(field: &str, value: BadValue, supported: &[&str]) -> Self {
        let quoted: Vec<String> = supported.iter().map(|s| Status::quote(s)).collect();
        Self {
            field: field.to_owned(),
            error_type: FieldErrorType::NotSupported,
            bad_value: value,
            detail: format!("supported values: {}", quoted.join(", ")),
        }
    }

    /// `field.TooLong(path, "", max)` for byte sizes.
    pub fn too_long_bytes(field: &str, max: usize) -> Self {
        Self::too_long(field, BadValue::String(String::new()), max as u64)
    }

    /// `field.TooLong(path, value, max)` (the value is not printed).
    pub fn too_long(field: &str, value: BadValue, max: u64) -> Self {
        Self {
            field: field.to_owned(),
            error_type: FieldErrorType::TooLong,
            bad_value: value,
            detail: format!("may not be more than {max} {}", plural(max, "byte")),
        }
    }

    /// `field.TooMany(path, actual, max)`: `Too many: 5: must have at most 3 items`.
    pub fn too_many(field: &str, actual: u64, max: u64) -> Self {
        Self {
            field: field.to_owned(),
            error_type: FieldErrorType::TooMany,
            bad_value: BadValue::Int(i64::try_from(actual).unwrap_or(i64::MAX)),
            detail: format!("must have at most {max} {}", plural(max, "item")),
        }
    }

    /// `field.Duplicate(path, value)`.
    pub fn duplicate(field: &str, value: BadValue) -> Self {
        Self {
            field: field.to_owned(),
            error_type: FieldErrorType::Duplicate,
            bad_value: value,
            detail: String::new(),
        }
    }

    /// `field.TypeInvalid(path, value, detail)`.
    pub fn type_invalid(field: &str, value: BadValue, detail: &str) -> Self {
        Self {
            field: field.to_owned(),
            error_type: FieldErrorType::TypeInvalid,
            bad_value: value,
            detail: detail.to_owned(),
        }
    }

    /// `ErrorBody()`: the Status cause `message`, e.g.
    /// `Invalid value: "x": cannot be set with flunderReference at the same time`.
    pub fn body(&self) -> String {
        let mut s = match self.error_type {
            FieldErrorType::Required
            | FieldErrorType::Forbidden
            | FieldErrorType::TooLong
            | FieldErrorType::Internal => self.error_type.as_message().to_owned(),
            t => format!("{}: {}", t.as_message(), self.bad_value),
        };
        if !self.detail.is_empty() {
            s.push_str(": ");
            s.push_str(&self.detail);
        }
        s
    }
}

impl FieldError {
    /// The Status cause: reason, body, field.
    pub fn cause(&self) -> StatusCause {
        StatusCause::new(self.error_type.as_reason(), self.body(), self.field.clone())
    }
}

/// `word`, with an `s` unless `n` is 1.
fn plural(n: u64, word: &str) -> String {
    if n == 1 {
        word.to_owned()
    } else {
        format!("{word}s")
    }
}

/// 422 `Invalid` (apimachinery's `NewInvalid`): `<kind>.<group> "<name>" is invalid: <errors>`,
/// one cause per field error.
pub fn invalid(group: &str, kind: &str, name: &str, errs: &[FieldError]) -> Status {
    Status::invalid(
        group,
        kind,
        name,
        errs.iter().map(FieldError::cause).collect(),
    )
}

impl fmt::Display for FieldError {
    /// `Error()`: `<field>: <body>`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.field, self.body())
    }
}

/// Kubernetes' limit on the total size of annotations (keys plus values).
pub const TOTAL_ANNOTATION_SIZE_LIMIT: usize = 256 * 1024;

fn push_msgs(errs: &mut Vec<FieldError>, field: &str, value: &str, msgs: Vec<String>) {
    errs.extend(msgs.iter().map(|m| FieldError::invalid(field, value, m)));
}

/// `ValidateObjectMetaAccessor(meta, namespaced, NameIsDNSSubdomain, "metadata")`: the
/// generic checks Kubernetes' registry runs on create after the strategy's validation
/// (`generateName` already expanded into `name`). Kubernetes' sample-apiserver checks names
/// only as path segments (`ValidatePathSegmentName`), which admits names of any length; this
/// server holds them to the DNS-1123 subdomain rule of most built-in kinds and of custom
/// resources, at most 253 characters.
pub fn validate_object_meta(meta: &ObjectMeta, namespaced: bool) -> Vec<FieldError> {
    let mut errs = Vec::new();
    if !meta.generate_name.is_empty() {
        push_msgs(
            &mut errs,
            "metadata.generateName",
            &meta.generate_name,
            names::name_is_dns_subdomain(&meta.generate_name, true),
        );
    }
    if meta.name.is_empty() {
        errs.push(FieldError::required(
            "metadata.name",
            "name or generateName is required",
        ));
    } else {
        push_msgs(
            &mut errs,
            "metadata.name",
            &meta.name,
            names::name_is_dns_subdomain(&meta.name, false),
        );
    }
    if namespaced {
        if meta.namespace.is_empty() {
            errs.push(FieldError::required("metadata.namespace", ""));
        } else {
            push_msgs(
                &mut errs,
                "metadata.namespace",
                &meta.namespace,
                names::dns1123_label_errors(&meta.namespace),
            );
        }
    } else if !meta.namespace.is_empty() {
        errs.push(FieldError::forbidden(
            "metadata.namespace",
            "not allowed on this type",
        ));
    }
    if meta.generation < 0 {
        errs.push(FieldError::invalid_value(
            "metadata.generation",
            BadValue::Int(meta.generation),
            "must be greater than or equal to 0",
        ));
    }
    validate_meta_fields(meta, &mut errs);
    errs
}

/// The fields checked alike on create and update: labels, annotations, finalizers and
/// ownerReferences.
fn validate_meta_fields(meta: &ObjectMeta, errs: &mut Vec<FieldError>) {
    for (k, v) in &meta.labels {
        push_msgs(errs, "metadata.labels", k, names::qualified_name_errors(k));
        push_msgs(errs, "metadata.labels", v, names::label_value_errors(v));
    }
    let mut total = 0usize;
    for (k, v) in &meta.annotations {
        push_msgs(
            errs,
            "metadata.annotations",
            k,
            names::qualified_name_errors(&k.to_lowercase()),
        );
        total += k.len() + v.len();
    }
    if total > TOTAL_ANNOTATION_SIZE_LIMIT {
        errs.push(FieldError::too_long_bytes(
            "metadata.annotations",
            TOTAL_ANNOTATION_SIZE_LIMIT,
        ));
    }
    for f in &meta.finalizers {
        push_msgs(
            errs,
            "metadata.finalizers",
            f,
            names::qualified_name_errors(f),
        );
    }
    let has = |name: &str| meta.finalizers.iter().any(|f| f == name);
    if has(FINALIZER_ORPHAN) && has(FINALIZER_FOREGROUND) {
        errs.push(FieldError::invalid_value(
            "metadata.finalizers",
            BadValue::Strings(meta.finalizers.clone()),
            &format!("finalizer {FINALIZER_ORPHAN} and {FINALIZER_FOREGROUND} cannot be both set"),
        ));
    }
    validate_owner_references(&meta.owner_references, errs);
    validate_managed_fields(meta, errs);
}

/// `ValidateOwnerReferences`: each reference names its owner fully, and at most one is the
/// controller. Nothing collects garbage here, but the references are kept as Kubernetes
/// would accept them. Go prints the whole list in the controller error with `%#v`, pointer
/// addresses included; here it is the list as JSON.
fn validate_owner_references(refs: &[OwnerReference], errs: &mut Vec<FieldError>) {
    const PATH: &str = "metadata.ownerReferences";
    let mut first_controller: Option<String> = None;
    for r in refs {
        // `schema.ParseGroupVersion`: "", "/", and more than one slash have no version.
        let version = match r.api_version.matches('/').count() {
            0 => r.api_version.as_str(),
            1 => r.api_version.split_once('/').map_or("", |(_, v)| v),
            _ => "",
        };
        if version.is_empty() {
            errs.push(FieldError::invalid(
                &format!("{PATH}.apiVersion"),
                &r.api_version,
                "version must not be empty",
            ));
        }
        if r.kind.is_empty() {
            errs.push(FieldError::invalid(
                &format!("{PATH}.kind"),
                "",
                "must not be empty",
            ));
        }
        if r.name.is_empty() {
            errs.push(FieldError::invalid(
                &format!("{PATH}.name"),
                "",
                "must not be empty",
            ));
        }
        if r.uid.is_empty() {
            errs.push(FieldError::invalid(
                &format!("{PATH}.uid"),
                "",
                "must not be empty",
            ));
        }
        if r.controller == Some(true) {
            let this = format!("{}/{}", r.kind, r.name);
            match &first_controller {
                Some(first) => errs.push(FieldError::invalid_value(
                    PATH,
                    BadValue::Other(serde_json::to_value(refs).unwrap_or_default()),
                    &format!(
                        "Only one reference can have Controller set to true. Found \"true\" in references for {first} and {this}"
                    ),
                )),
                None => first_controller = Some(this),
            }
        }
    }
}

/// `ValidateNoNewFinalizers`: once deletion has started, finalizers can only be removed.
fn validate_no_new_finalizers(new: &ObjectMeta, old: &ObjectMeta, errs: &mut Vec<FieldError>) {
    let mut extra: Vec<String> = new
        .finalizers
        .iter()
        .filter(|f| !old.finalizers.contains(f))
        .cloned()
        .collect();
    extra.sort();
    extra.dedup();
    if !extra.is_empty() {
        errs.push(FieldError::forbidden(
            "metadata.finalizers",
            &format!(
                "no new finalizers can be added if the object is being deleted, found new finalizers {}",
                go_strings(&extra)
            ),
        ));
    }
}

/// `ValidateNamespaceName`: a namespace's name is a DNS-1123 label. Only checked when the
/// name passes [`validate_object_meta`]'s subdomain rule, so that one bad name gives one
/// error.
pub fn validate_namespace_name(name: &str) -> Vec<FieldError> {
    let mut errs = Vec::new();
    if names::name_is_dns_subdomain(name, false).is_empty() {
        push_msgs(
            &mut errs,
            "metadata.name",
            name,
            names::dns1123_label_errors(name),
        );
    }
    errs
}

/// The longest `fieldManager` (Kubernetes' `FieldManagerMaxLength`).
pub const FIELD_MANAGER_MAX_LENGTH: usize = 128;
/// The longest subresource name in a `managedFields` entry.
const MAX_SUBRESOURCE_NAME_LENGTH: usize = 256;

/// `ValidateManagedFields`: what a client writes into `metadata.managedFields` (entries the
/// server could not read were already replaced by the stored ones, as Kubernetes does).
fn validate_managed_fields(meta: &ObjectMeta, errs: &mut Vec<FieldError>) {
    for (i, e) in meta.managed_fields.iter().flatten().enumerate() {
        let path = format!("metadata.managedFields[{i}]");
        if !matches!(e.operation.as_str(), "Apply" | "Update") {
            errs.push(FieldError::invalid(
                &format!("{path}.operation"),
                &e.operation,
                "must be `Apply` or `Update`",
            ));
        }
        if !e.fields_type.is_empty() && e.fields_type != "FieldsV1" {
            errs.push(FieldError::invalid(
                &format!("{path}.fieldsType"),
                &e.fields_type,
                "must be `FieldsV1`",
            ));
        }
        errs.extend(validate_field_manager(
            &e.manager,
            &format!("{path}.manager"),
        ));
        if e.subresource.len() > MAX_SUBRESOURCE_NAME_LENGTH {
            errs.push(FieldError::too_long_bytes(
                &format!("{path}.subresource"),
                MAX_SUBRESOURCE_NAME_LENGTH,
            ));
        }
    }
}

/// `ValidateFieldManager`: at most 128 bytes, printable characters only.
pub fn validate_field_manager(manager: &str, field: &str) -> Vec<FieldError> {
    let mut errs = Vec::new();
    if manager.len() > FIELD_MANAGER_MAX_LENGTH {
        errs.push(FieldError::too_long_bytes(field, FIELD_MANAGER_MAX_LENGTH));
    }
    for (i, c) in manager.char_indices() {
        if c.is_control() || (c.is_whitespace() && c != ' ') {
            errs.push(FieldError::invalid(
                field,
                manager,
                &format!("invalid character U+{:04X} (at position {i})", u32::from(c)),
            ));
        }
    }
    errs
}

/// `ValidateObjectMetaAccessorUpdate`: immutable identity fields, no generation decrement,
/// a `resourceVersion` present, plus the label/annotation/finalizer syntax of the new object.
pub fn validate_object_meta_update(new: &ObjectMeta, old: &ObjectMeta) -> Vec<FieldError> {
    let mut errs = Vec::new();
    if old.deletion_timestamp.is_some() {
        validate_no_new_finalizers(new, old, &mut errs);
    }
    if new.resource_version.is_empty() {
        errs.push(FieldError::invalid(
            "metadata.resourceVersion",
            "",
            "must be specified for an update",
        ));
    }
    if new.generation < old.generation {
        errs.push(FieldError::invalid_value(
            "metadata.generation",
            BadValue::Int(new.generation),
            "must not be decremented",
        ));
    }
    let immutable = |errs: &mut Vec<FieldError>, field: &str, new: &str, old: &str| {
        if new != old {
            errs.push(FieldError::invalid(field, new, "field is immutable"));
        }
    };
    immutable(&mut errs, "metadata.name", &new.name, &old.name);
    immutable(
        &mut errs,
        "metadata.namespace",
        &new.namespace,
        &old.namespace,
    );
    immutable(&mut errs, "metadata.uid", &new.uid, &old.uid);
    if new.creation_timestamp != old.creation_timestamp {
        let value = new
            .creation_timestamp
            .map_or(BadValue::Null, |t| BadValue::String(t.to_string()));
        errs.push(FieldError::invalid_value(
            "metadata.creationTimestamp",
            value,
            "field is immutable",
        ));
    }
    if new.deletion_timestamp != old.deletion_timestamp {
        let value = new
            .deletion_timestamp
            .map_or(BadValue::Null, |t| BadValue::Stringer(t.go_string()));
        errs.push(FieldError::invalid_value(
            "metadata.deletionTimestamp",
            value,
            "field is immutable",
        ));
    }
    if new.deletion_grace_period_seconds != old.deletion_grace_period_seconds {
        let value = new
            .deletion_grace_period_seconds
            .map_or(BadValue::Null, BadValue::Int);
        errs.push(FieldError::invalid_value(
            "metadata.deletionGracePeriodSeconds",
            value,
            "field is immutable",
        ));
    }
    validate_meta_fields(new, &mut errs);
    errs
}

/// The error the generic registry returns for an update without `resourceVersion` when the
/// strategy does not allow unconditional updates (wardle's don't): note the resource in the
/// kind position and Go's `%#v` of a `uint64` zero, as Kubernetes prints them.
pub fn resource_version_required(group: &str, resource: &str, name: &str) -> Status {
    invalid(
        group,
        resource,
        name,
        &[FieldError::invalid_value(
            "metadata.resourceVersion",
            BadValue::Uint(0),
            "must be specified for an update",
        )],
    )
}
