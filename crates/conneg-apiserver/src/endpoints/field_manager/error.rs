//! Why the field manager refused a write, with no HTTP in it; `From<FieldManagerError> for
//! Status` is Kubernetes' answer to each, given where the endpoints answer.

use conneg::{Status, StatusCause, StatusDetails, StatusReason};
use http::StatusCode;

use super::super::body::Unencodable;
use crate::apply::managed::{Conflict, conflict_message};
use crate::patch::PatchError;
use crate::validation::{FieldError, invalid};

/// A write the field manager refused.
#[derive(Debug)]
pub(crate) enum FieldManagerError {
    /// A `fieldManager` option that is not a valid name (422 on the `options` kind).
    InvalidManager {
        /// `CreateOptions`, `UpdateOptions` or `PatchOptions`.
        options: &'static str,
        /// What is wrong with it.
        errors: Vec<FieldError>,
    },
    /// An apply configuration that sets `metadata.managedFields` (400).
    ManagedFieldsSet,
    /// An apply that would change fields other managers own (409), one entry per field.
    Conflict(Vec<Conflict>),
    /// The applied object, larger than a request body may be (413).
    Patch(PatchError),
    /// An object its type cannot encode (500).
    Unencodable(Unencodable),
    /// Stored `managedFields` that cannot be read or written back (500): why.
    Internal(String),
}

impl From<Unencodable> for FieldManagerError {
    fn from(e: Unencodable) -> Self {
        Self::Unencodable(e)
    }
}

impl From<PatchError> for FieldManagerError {
    fn from(e: PatchError) -> Self {
        Self::Patch(e)
    }
}

impl From<FieldManagerError> for Status {
    fn from(e: FieldManagerError) -> Status {
        match e {
            FieldManagerError::InvalidManager { options, errors } => {
                invalid("meta.k8s.io", options, "", &errors)
            }
            FieldManagerError::ManagedFieldsSet => {
                Status::bad_request("metadata.managedFields must be nil")
            }
            FieldManagerError::Conflict(conflicts) => conflict(&conflicts),
            FieldManagerError::Patch(e) => e.into(),
            FieldManagerError::Unencodable(e) => e.into(),
            FieldManagerError::Internal(why) => Status::internal_error(why),
        }
    }
}

/// 409 with Kubernetes' message and one `FieldManagerConflict` cause per field.
fn conflict(conflicts: &[Conflict]) -> Status {
    Status::failure(
        StatusCode::CONFLICT,
        StatusReason::Conflict,
        conflict_message(conflicts),
    )
    .with_details(StatusDetails {
        causes: conflicts
            .iter()
            .map(|c| {
                StatusCause::new(
                    "FieldManagerConflict",
                    format!("conflict with {}", c.manager.describe()),
                    c.field(),
                )
            })
            .collect(),
        ..Default::default()
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::apply::fieldpath::PathElement;
    use crate::apply::managed::{ManagerId, Operation};

    /// The answers clients read, as they were when the field manager answered `Status`.
    #[test]
    fn each_error_is_the_status_it_was() {
        let status = Status::from(FieldManagerError::ManagedFieldsSet);
        assert_eq!(
            (status.code, status.message.as_str()),
            (400, "metadata.managedFields must be nil")
        );
        let status = Status::from(FieldManagerError::Internal("failed to x".into()));
        assert_eq!(
            (status.code, status.message.as_str()),
            (500, "Internal error occurred: failed to x")
        );
        let status = Status::from(FieldManagerError::Patch(PatchError::TooLarge(8)));
        assert_eq!(status.code, 413);
        let conflict = Conflict {
            manager: ManagerId::new("mgr-a", Operation::Apply, "wardle.example.com/v1beta1"),
            path: vec![
                PathElement::Field("spec".into()),
                PathElement::Field("flunderReference".into()),
            ],
        };
        let status = Status::from(FieldManagerError::Conflict(vec![conflict]));
        assert_eq!(status.code, 409);
        assert_eq!(status.reason, Some(StatusReason::Conflict));
        assert_eq!(
            status.message,
            "Apply failed with 1 conflict: conflict with \"mgr-a\": .spec.flunderReference"
        );
        let causes = &status.details.expect("details").causes;
        assert_eq!(causes.len(), 1);
        assert_eq!(
            (
                causes[0].reason.as_str(),
                causes[0].message.as_str(),
                causes[0].field.as_str()
            ),
            (
                "FieldManagerConflict",
                "conflict with \"mgr-a\"",
                ".spec.flunderReference"
            )
        );
    }
}
