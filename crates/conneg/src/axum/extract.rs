//! axum's `Path` and `Query` with their rejections in the route's error format.

use axum::extract::FromRequestParts;
use http::request::Parts;
use serde::de::DeserializeOwned;

use crate::negotiate::rejection::Rejection;
use crate::status::Status;

/// axum's [`Path`](axum::extract::Path), whose rejection (400 for a segment that does not
/// parse, 500 for a route without the parameter) is a [`Rejection`] in the route's error
/// format (a problem, a `Status`, or the service's mapping) instead of plain text.
///
/// ```
/// use conneg::axum::{Conneg, Path};
///
/// async fn get_note(Path(id): Path<u32>) -> Conneg<u32> {
///     Conneg(id)
/// }
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Path<T>(pub T);

/// axum's [`Query`](axum::extract::Query), whose rejection (400) is a [`Rejection`] in the
/// route's error format instead of plain text.
///
/// ```
/// use conneg::axum::{Conneg, Query};
///
/// #[derive(serde::Deserialize)]
/// struct Page { limit: Option<u32> }
///
/// async fn list(Query(page): Query<Page>) -> Conneg<u32> {
///     Conneg(page.limit.unwrap_or(20))
/// }
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Query<T>(pub T);

/// axum's rejection (its status code and text) as a [`Rejection`].
fn reject(parts: &Parts, code: http::StatusCode, text: String) -> Rejection {
    let status = Status::for_code(code, text);
    match super::negotiated(parts) {
        Ok(negotiated) => negotiated.reject(status),
        Err(rejection) => rejection,
    }
}

impl<T, S> FromRequestParts<S> for Path<T>
where
    T: DeserializeOwned + Send,
    S: Send + Sync,
{
    type Rejection = Rejection;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, Rejection> {
        match axum::extract::Path::<T>::from_request_parts(parts, state).await {
            Ok(axum::extract::Path(value)) => Ok(Path(value)),
            Err(err) => Err(reject(parts, err.status(), err.body_text())),
        }
    }
}

impl<T, S> FromRequestParts<S> for Query<T>
where
    T: DeserializeOwned,
    S: Send + Sync,
{
    type Rejection = Rejection;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, Rejection> {
        match axum::extract::Query::<T>::from_request_parts(parts, state).await {
            Ok(axum::extract::Query(value)) => Ok(Query(value)),
            Err(err) => Err(reject(parts, err.status(), err.body_text())),
        }
    }
}
