//! The Kubernetes error (`Status`) for a storage failure on an object.

use conneg::Status;

use super::StorageError;
use crate::resource::ResourceInfo;

/// The message of Kubernetes' 409 `Conflict` for a stale `resourceVersion`.
pub(crate) const OPTIMISTIC_LOCK_MSG: &str =
    "the object has been modified; please apply your changes to the latest version and try again";

/// The Kubernetes error for a storage failure on an object.
pub(crate) trait ToStatus {
    /// The Kubernetes error for this failure on `name` of `resource`.
    fn to_status(&self, resource: &ResourceInfo, name: &str) -> Status;
}

impl ToStatus for StorageError {
    fn to_status(&self, resource: &ResourceInfo, name: &str) -> Status {
        let (group, res) = (resource.group, resource.resource);
        match self {
            StorageError::NotFound { .. } => Status::not_found(group, res, name),
            StorageError::AlreadyExists { .. } => Status::already_exists(group, res, name),
            StorageError::Conflict { .. } => {
                Status::conflict(group, res, name, OPTIMISTIC_LOCK_MSG)
            }
            StorageError::Gone { .. } | StorageError::WatchLagged { .. } => {
                Status::expired(self.to_string())
            }
            StorageError::FutureRevision { .. } | StorageError::Timeout(_) => {
                Status::timeout(self.to_string(), 1)
            }
            StorageError::Codec(_) | StorageError::Backend(_) => Status::internal_error(self),
            StorageError::Unavailable(_) => Status::service_unavailable(self.to_string()),
        }
    }
}
