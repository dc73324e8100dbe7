//! API errors as plain data, shaped like Kubernetes' `metav1.Status` failures (reference
//! `kubernetes-behaviour.md` §7) with the messages apimachinery's `errors.New*` produce.
//! The HTTP layer turns an [`ApiError`] into conneg's `Status` (`kind: Status`,
//! `apiVersion: v1`, `status: Failure`, `code`, `reason`, `message`, `details`).

use std::fmt;

use crate::api::validation::FieldError;

/// `metav1.StatusCause`: one field-level cause (`reason` is the cause type, e.g.
/// `FieldValueInvalid`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StatusCause {
    /// Cause type, written as `reason`.
    pub reason: String,
    /// Human-readable description (the field error body, e.g. `Invalid value: "x": ...`).
    pub message: String,
    /// Field path, e.g. `spec.fischerReference`.
    pub field: String,
}

/// `metav1.StatusDetails`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct StatusDetails {
    /// Object name.
    pub name: String,
    /// API group.
    pub group: String,
    /// Kind (or, as Kubernetes does for NotFound/Forbidden/AlreadyExists/Conflict, the
    /// resource).
    pub kind: String,
    /// Object UID, when known.
    pub uid: String,
    /// Field-level causes.
    pub causes: Vec<StatusCause>,
    /// Seconds a client should wait before retrying.
    pub retry_after_seconds: Option<i32>,
}

/// A failed API request: HTTP code, `StatusReason`, message and optional details.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApiError {
    /// HTTP status code.
    pub code: u16,
    /// Machine-readable reason (`NotFound`, `Invalid`, `Forbidden`, ...).
    pub reason: &'static str,
    /// Human-readable message.
    pub message: String,
    /// Details, when the error is about one object.
    pub details: Option<Box<StatusDetails>>,
}

fn resource_details(group_resource: &str, name: &str) -> StatusDetails {
    let (resource, group) = group_resource
        .split_once('.')
        .unwrap_or((group_resource, ""));
    StatusDetails {
        name: conneg::Status::echo(name).into_owned(),
        group: group.to_owned(),
        kind: resource.to_owned(),
        ..Default::default()
    }
}

/// Go's `%q` for a string, as Kubernetes quotes values in messages: [`conneg::Status::quote`].
pub fn go_quote(s: &str) -> String {
    conneg::Status::quote(s)
}

impl ApiError {
    /// 404 NotFound: `flunders.wardle.example.com "x" not found`.
    pub fn not_found(group_resource: &str, name: &str) -> Self {
        Self {
            code: 404,
            reason: "NotFound",
            message: format!("{group_resource} {} not found", go_quote(name)),
            details: Some(Box::new(resource_details(group_resource, name))),
        }
    }

    /// 409 AlreadyExists: `flunders.wardle.example.com "x" already exists`.
    pub fn already_exists(group_resource: &str, name: &str) -> Self {
        Self {
            code: 409,
            reason: "AlreadyExists",
            message: format!("{group_resource} {} already exists", go_quote(name)),
            details: Some(Box::new(resource_details(group_resource, name))),
        }
    }

    /// 409 Conflict: `Operation cannot be fulfilled on flunders.wardle.example.com "x": <msg>`.
    pub fn conflict(group_resource: &str, name: &str, msg: &str) -> Self {
        Self {
            code: 409,
            reason: "Conflict",
            message: format!(
                "Operation cannot be fulfilled on {group_resource} {}: {msg}",
                go_quote(name)
            ),
            details: Some(Box::new(resource_details(group_resource, name))),
        }
    }

    /// The optimistic-lock conflict message Kubernetes uses for a stale `resourceVersion`.
    pub const OPTIMISTIC_LOCK_MSG: &'static str = "the object has been modified; please apply your changes to the latest version and try again";

    /// 403 Forbidden: `flunders.wardle.example.com "x" is forbidden: <msg>` (apimachinery
    /// `NewForbidden`, including its forms for an empty name or resource).
    pub fn forbidden(group_resource: &str, name: &str, msg: &str) -> Self {
        let message = if group_resource.is_empty() {
            format!("forbidden: {msg}")
        } else if name.is_empty() {
            format!("{group_resource} is forbidden: {msg}")
        } else {
            format!("{group_resource} {} is forbidden: {msg}", go_quote(name))
        };
        Self {
            code: 403,
            reason: "Forbidden",
            message,
            details: Some(Box::new(resource_details(group_resource, name))),
        }
    }

    /// 422 Invalid: `Flunder.wardle.example.com "x" is invalid: <errors>` with one cause per
    /// field error (apimachinery `NewInvalid`; several errors are joined as `[a, b]`).
    pub fn invalid(group_kind: &str, name: &str, errors: &[FieldError]) -> Self {
        let (kind, group) = group_kind.split_once('.').unwrap_or((group_kind, ""));
        let causes = errors
            .iter()
            .map(|e| StatusCause {
                reason: e.error_type.as_reason().to_owned(),
                message: e.body(),
                field: e.field.clone(),
            })
            .collect();
        // Aggregate: duplicates removed, one error printed bare, several in brackets.
        let mut msgs: Vec<String> = Vec::new();
        for e in errors {
            let m = e.to_string();
            if !msgs.contains(&m) {
                msgs.push(m);
            }
        }
        let quoted = go_quote(name);
        let message = match msgs.len() {
            0 => format!("{group_kind} {quoted} is invalid"),
            1 => format!("{group_kind} {quoted} is invalid: {}", msgs[0]),
            _ => format!("{group_kind} {quoted} is invalid: [{}]", msgs.join(", ")),
        };
        Self {
            code: 422,
            reason: "Invalid",
            message,
            details: Some(Box::new(StatusDetails {
                name: conneg::Status::echo(name).into_owned(),
                group: group.to_owned(),
                kind: kind.to_owned(),
                causes,
                ..Default::default()
            })),
        }
    }

    /// 410 Expired (apimachinery `NewResourceExpired`), e.g.
    /// `too old resource version: 5 (10)`.
    pub fn expired(msg: impl Into<String>) -> Self {
        Self {
            code: 410,
            reason: "Expired",
            message: msg.into(),
            details: None,
        }
    }

    /// 400 BadRequest.
    pub fn bad_request(msg: impl Into<String>) -> Self {
        Self {
            code: 400,
            reason: "BadRequest",
            message: msg.into(),
            details: None,
        }
    }

    /// 500 InternalError: `Internal error occurred: <msg>`.
    pub fn internal(msg: impl fmt::Display) -> Self {
        Self {
            code: 500,
            reason: "InternalError",
            message: format!("Internal error occurred: {msg}"),
            details: Some(Box::new(StatusDetails {
                causes: vec![StatusCause {
                    reason: String::new(),
                    message: msg.to_string(),
                    field: String::new(),
                }],
                ..Default::default()
            })),
        }
    }

    /// 504 Timeout, e.g. `Too large resource version: 20, current: 10` (Kubernetes answers
    /// this with `retryAfterSeconds: 1`).
    pub fn timeout(msg: impl Into<String>, retry_after_seconds: i32) -> Self {
        Self {
            code: 504,
            reason: "Timeout",
            message: msg.into(),
            details: Some(Box::new(StatusDetails {
                retry_after_seconds: Some(retry_after_seconds),
                ..Default::default()
            })),
        }
    }
}

impl fmt::Display for ApiError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for ApiError {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_match_apimachinery() {
        let e = ApiError::not_found("flunders.wardle.example.com", "a");
        assert_eq!(e.message, r#"flunders.wardle.example.com "a" not found"#);
        let d = e.details.unwrap();
        assert_eq!(
            (d.group.as_str(), d.kind.as_str()),
            ("wardle.example.com", "flunders")
        );
        assert_eq!(
            ApiError::conflict(
                "fischers.wardle.example.com",
                "f",
                ApiError::OPTIMISTIC_LOCK_MSG
            )
            .message,
            "Operation cannot be fulfilled on fischers.wardle.example.com \"f\": the object has been modified; please apply your changes to the latest version and try again"
        );
        assert_eq!(go_quote("a\"b\\c\n\u{1}é"), r#""a\"b\\c\n\x01é""#);
    }
}
