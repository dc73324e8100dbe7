//! Storage for the wardle kinds: the generic revisioned store of `conneg_apiserver::storage`
//! (re-exported here: the `Storage` trait, its memory, embedded and etcd backends), plus what
//! is about objects rather than bytes: how objects are encoded in storage ([`codec`]), where
//! they live ([`keys`]), and the Kubernetes error for a storage failure.

pub mod codec;
pub mod keys;

pub use conneg_apiserver::storage::*;

use crate::api::ResourceInfo;
use crate::error::ApiError;

/// The Kubernetes error for a storage failure on an object.
pub trait ToApiError {
    /// The Kubernetes error for this failure on `name` of `resource`.
    fn to_api_error(&self, resource: &ResourceInfo, name: &str) -> ApiError;
}

impl ToApiError for StorageError {
    fn to_api_error(&self, resource: &ResourceInfo, name: &str) -> ApiError {
        let gr = resource.group_resource();
        match self {
            StorageError::NotFound { .. } => ApiError::not_found(&gr, name),
            StorageError::AlreadyExists { .. } => ApiError::already_exists(&gr, name),
            StorageError::Conflict { .. } => {
                ApiError::conflict(&gr, name, ApiError::OPTIMISTIC_LOCK_MSG)
            }
            StorageError::Gone { .. } => ApiError::expired(self.to_string()),
            StorageError::FutureRevision { .. } => ApiError::timeout(self.to_string(), 1),
            StorageError::WatchLagged { .. } => ApiError::expired(self.to_string()),
            StorageError::Codec(_) | StorageError::Backend(_) => ApiError::internal(self),
            StorageError::Unavailable(_) => ApiError {
                code: 503,
                reason: "ServiceUnavailable",
                message: self.to_string(),
                details: None,
            },
            StorageError::Timeout(_) => ApiError::timeout(self.to_string(), 1),
        }
    }
}
