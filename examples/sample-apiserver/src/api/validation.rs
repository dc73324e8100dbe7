//! Validation of Flunders (reference §5), with field errors in apimachinery's format.
//!
//! Runs on create only (the strategy's `ValidateUpdate` is empty); Fischers are not validated.

use std::fmt;

use crate::error::{ApiError, go_quote};

use super::{FLUNDERS, ReferenceType, internal};

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
            FieldErrorType::Internal => "Internal error",
        }
    }
}

/// One field error (`field.Error`): path, type, offending value, detail.
#[derive(Debug, Clone, PartialEq)]
pub struct FieldError {
    /// Field path, e.g. `spec.fischerReference`.
    pub field: String,
    /// Error type; [`FieldErrorType::as_reason`] is the Status cause `reason`.
    pub error_type: FieldErrorType,
    /// The offending value (`None` is Go's nil, printed `null`).
    pub bad_value: Option<serde_json::Value>,
    /// Detail, e.g. `cannot be set with flunderReference at the same time`.
    pub detail: String,
}

impl FieldError {
    /// `field.Invalid(path, value, detail)` with a string value.
    pub fn invalid(field: &str, value: &str, detail: &str) -> Self {
        Self {
            field: field.to_owned(),
            error_type: FieldErrorType::Invalid,
            bad_value: Some(serde_json::Value::String(value.to_owned())),
            detail: detail.to_owned(),
        }
    }

    /// `field.Required(path, detail)`.
    pub fn required(field: &str, detail: &str) -> Self {
        Self {
            field: field.to_owned(),
            error_type: FieldErrorType::Required,
            bad_value: None,
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
            t => {
                let value = match &self.bad_value {
                    None | Some(serde_json::Value::Null) => "null".to_owned(),
                    Some(serde_json::Value::String(s)) => go_quote(s),
                    Some(serde_json::Value::Number(n)) => n.to_string(),
                    Some(serde_json::Value::Bool(b)) => b.to_string(),
                    Some(other) => other.to_string(),
                };
                format!("{}: {value}", t.as_message())
            }
        };
        if !self.detail.is_empty() {
            s.push_str(": ");
            s.push_str(&self.detail);
        }
        s
    }
}

impl fmt::Display for FieldError {
    /// `Error()`: `<field>: <body>`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.field, self.body())
    }
}

/// `ValidateFlunder`: the spec rules of reference §5 (first match of 1–5, then 6).
pub fn validate_flunder(flunder: &internal::Flunder) -> Vec<FieldError> {
    validate_flunder_spec(&flunder.spec, "spec")
}

/// `ValidateFlunderSpec` at `path`.
pub fn validate_flunder_spec(spec: &internal::FlunderSpec, path: &str) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let flunder_path = format!("{path}.flunderReference");
    let fischer_path = format!("{path}.fischerReference");
    let ty = spec.reference_type.as_ref().filter(|t| !t.is_empty());
    let is = |want: &ReferenceType| ty == Some(want);
    let flunder = &spec.flunder_reference;
    let fischer = &spec.fischer_reference;

    if !flunder.is_empty() && !fischer.is_empty() {
        errs.push(FieldError::invalid(
            &fischer_path,
            fischer,
            "cannot be set with flunderReference at the same time",
        ));
    } else if !flunder.is_empty() && !is(&ReferenceType::Flunder) {
        errs.push(FieldError::invalid(
            &flunder_path,
            flunder,
            "cannot be set if referenceType is not Flunder",
        ));
    } else if !fischer.is_empty() && !is(&ReferenceType::Fischer) {
        errs.push(FieldError::invalid(
            &fischer_path,
            fischer,
            "cannot be set if referenceType is not Fischer",
        ));
    } else if fischer.is_empty() && is(&ReferenceType::Fischer) {
        errs.push(FieldError::invalid(
            &fischer_path,
            fischer,
            "cannot be empty if referenceType is Fischer",
        ));
    } else if flunder.is_empty() && is(&ReferenceType::Flunder) {
        errs.push(FieldError::invalid(
            &flunder_path,
            flunder,
            "cannot be empty if referenceType is Flunder",
        ));
    }

    if let Some(t) = ty.filter(|t| !t.is_known()) {
        errs.push(FieldError::invalid(
            &format!("{path}.referenceType"),
            t.as_str(),
            "must be Flunder or Fischer",
        ));
    }
    errs
}

/// Validate a Flunder for create and turn any errors into the 422 `Invalid` error.
pub fn validate_flunder_create(flunder: &internal::Flunder) -> Result<(), ApiError> {
    let errs = validate_flunder(flunder);
    if errs.is_empty() {
        Ok(())
    } else {
        Err(ApiError::invalid(
            &FLUNDERS.group_kind(),
            &flunder.metadata.name,
            &errs,
        ))
    }
}
