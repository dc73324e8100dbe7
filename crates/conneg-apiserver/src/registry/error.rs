//! The registry's errors: what went wrong and which object it concerns, with no HTTP in them.
//! The endpoints answer each with the `Status` Kubernetes answers with (`From<Error> for
//! Status`), so `?` carries a registry error to the HTTP edge.

use std::fmt;

use conneg::Status;

use crate::resource::ResourceInfo;
use crate::storage::{StorageError, ToStatus, continue_token};
use crate::validation::{FieldError, invalid};

/// A registry operation that failed.
#[derive(Debug)]
pub enum Error {
    /// Storage failed or refused (not found, already exists, a lost compare-and-swap, a
    /// compacted revision, unavailable...), on the object `name` of `resource`.
    Storage {
        /// What storage said.
        error: StorageError,
        /// The resource.
        resource: &'static ResourceInfo,
        /// The object's name (`""` for a collection).
        name: String,
    },
    /// A continue token that does not decode.
    InvalidContinue(String),
    /// A continue token whose revision has been compacted: the client lists again.
    ContinueExpired,
    /// A precondition of the client (uid, resourceVersion) that the stored object does not
    /// meet: Kubernetes' message, answered 409.
    Precondition {
        /// The resource.
        resource: &'static ResourceInfo,
        /// The object's name.
        name: String,
        /// Why.
        message: String,
    },
    /// Invalid options or object (422), each field error named.
    Invalid {
        /// The group of the invalid kind (`meta.k8s.io` for options).
        group: &'static str,
        /// The invalid kind (`DeleteOptions`, `Flunder`).
        kind: &'static str,
        /// The object's name.
        name: String,
        /// What is wrong, field by field.
        errors: Vec<FieldError>,
    },
    /// A deletion the kind does not allow (403): the object `name` of `resource`, and why.
    Forbidden {
        /// The resource.
        resource: &'static ResourceInfo,
        /// The object's name.
        name: String,
        /// Why (`this namespace may not be deleted`).
        message: String,
    },
    /// An admission check or a controller refused, with its own answer.
    Refused(Box<Status>),
    /// An object its own types cannot convert: a bug in a kind.
    Internal(String),
}

impl Error {
    /// Storage's `error` on the object `name` of `resource`.
    pub fn storage(error: StorageError, resource: &'static ResourceInfo, name: &str) -> Self {
        if !matches!(
            error,
            StorageError::NotFound { .. } | StorageError::AlreadyExists { .. }
        ) {
            tracing::debug!(%error, "storage error");
        }
        Self::Storage {
            error,
            resource,
            name: name.to_owned(),
        }
    }

    /// The object `name` of `resource`, invalid for `errors`.
    pub(crate) fn invalid(
        resource: &'static ResourceInfo,
        name: String,
        errors: Vec<FieldError>,
    ) -> Self {
        Self::Invalid {
            group: resource.group,
            kind: resource.kind,
            name,
            errors,
        }
    }

    /// Options of a request (`kind`: `DeleteOptions`, `ListOptions`), invalid for `errors`.
    pub(crate) fn invalid_options(kind: &'static str, errors: Vec<FieldError>) -> Self {
        Self::Invalid {
            group: "meta.k8s.io",
            kind,
            name: String::new(),
            errors,
        }
    }

    /// A refusal answered as `status`.
    pub fn refused(status: Status) -> Self {
        Self::Refused(Box::new(status))
    }
}

impl From<Error> for Status {
    fn from(e: Error) -> Status {
        match e {
            Error::Storage {
                error,
                resource,
                name,
            } => error.to_status(resource, &name),
            Error::InvalidContinue(why) => {
                Status::bad_request(format!("invalid continue token: {why}"))
            }
            Error::ContinueExpired => {
                Status::expired(continue_token::CONTINUE_EXPIRED_MSG.to_owned())
            }
            Error::Precondition {
                resource,
                name,
                message,
            } => Status::conflict(resource.group, resource.kind, &name, &message),
            Error::Invalid {
                group,
                kind,
                name,
                errors,
            } => invalid(group, kind, &name, &errors),
            Error::Forbidden {
                resource,
                name,
                message,
            } => Status::forbidden(resource.group, resource.resource, &name, &message),
            Error::Refused(status) => *status,
            Error::Internal(why) => Status::internal_error(why),
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Storage { error, .. } => write!(f, "storage: {error}"),
            Error::InvalidContinue(why) => write!(f, "invalid continue token: {why}"),
            Error::ContinueExpired => f.write_str(continue_token::CONTINUE_EXPIRED_MSG),
            Error::Precondition { message, .. } | Error::Forbidden { message, .. } => {
                f.write_str(message)
            }
            Error::Invalid { errors, .. } => {
                let errors: Vec<String> = errors.iter().map(ToString::to_string).collect();
                write!(f, "invalid: {}", errors.join(", "))
            }
            Error::Refused(status) => f.write_str(&status.message),
            Error::Internal(why) => f.write_str(why),
        }
    }
}

impl std::error::Error for Error {}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::apiextensions::types::CUSTOM_RESOURCE_DEFINITIONS;

    #[test]
    fn an_invalid_object_is_answered_with_kubernetes_422() {
        let errors = vec![
            FieldError::required("spec.x", ""),
            FieldError::invalid("metadata.name", "a", "too short"),
        ];
        let crds = &CUSTOM_RESOURCE_DEFINITIONS;
        let status = Status::from(Error::invalid(crds, "a.example.com".into(), errors));
        assert_eq!(status.code, 422);
        assert_eq!(
            status.message,
            r#"CustomResourceDefinition.apiextensions.k8s.io "a.example.com" is invalid: [spec.x: Required value, metadata.name: Invalid value: "a": too short]"#
        );
        assert_eq!(status.details.map(|d| d.causes.len()), Some(2));
    }

    #[test]
    fn invalid_options_are_meta_k8s_io_kinds_without_a_name() {
        let errors = vec![FieldError::invalid("limit", "-1", "must be positive")];
        let status = Status::from(Error::invalid_options("ListOptions", errors));
        assert_eq!(status.code, 422);
        assert_eq!(
            status.message,
            r#"ListOptions.meta.k8s.io "" is invalid: limit: Invalid value: "-1": must be positive"#
        );
    }
}
