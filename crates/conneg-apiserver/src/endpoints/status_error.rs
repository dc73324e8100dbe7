//! A request that failed, as the endpoints carry it to the HTTP edge: the `Status` it is
//! answered with, boxed. A `Status` is a whole Kubernetes object (over 300 bytes); a
//! `Result` holding one inline is that wide on the way that succeeds too, copied at every
//! return of every step of a request. Boxed, the cost is one allocation when a request
//! fails.

use axum::response::{IntoResponse, Response};
use conneg::Status;

/// The `Status` a request is answered with (apimachinery's `StatusError`, an error that is a
/// `Status`). `?` makes one from any error that maps to a `Status` (the registry's,
/// storage's, a patch's...), so each layer's mapping stays in one place, its `From` impl.
#[derive(Debug, Clone)]
pub(crate) struct StatusError(Box<Status>);

impl<E: Into<Status>> From<E> for StatusError {
    fn from(e: E) -> Self {
        Self(Box::new(e.into()))
    }
}

impl StatusError {
    /// The `Status`, for a watch's ERROR event.
    pub(crate) fn into_status(self) -> Status {
        *self.0
    }
}

impl std::ops::Deref for StatusError {
    type Target = Status;

    /// The `Status`, to read (its code, its message).
    fn deref(&self) -> &Status {
        &self.0
    }
}

impl IntoResponse for StatusError {
    /// The `Status`, which the negotiation layer encodes in the client's format.
    fn into_response(self) -> Response {
        (*self.0).into_response()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry;

    #[test]
    fn a_result_that_can_fail_is_a_pointer_wide() {
        assert!(size_of::<Status>() > 100, "{}", size_of::<Status>());
        assert_eq!(size_of::<Result<(), StatusError>>(), size_of::<usize>());
    }

    #[test]
    fn a_status_error_is_answered_with_its_status_as_the_layers_mapping_says() {
        let from_registry = StatusError::from(registry::Error::ContinueExpired);
        assert_eq!(
            *from_registry,
            Status::from(registry::Error::ContinueExpired)
        );
        let response = from_registry.into_response();
        assert_eq!(response.status(), 410);
        let status = response
            .extensions()
            .get::<Status>()
            .expect("for the layer");
        assert_eq!(status.code, 410);
        let error = StatusError::from(Status::bad_request("no"));
        assert_eq!(error.into_status().message, "no");
    }
}
