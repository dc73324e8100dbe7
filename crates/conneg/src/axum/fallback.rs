//! Fallbacks for axum's router whose 404 and 405 are in the route's error format (axum's own
//! have empty bodies).

use http::{Method, Uri};

use crate::negotiate::decision::Negotiated;
use crate::status::Status;

/// A handler for [`Router::fallback`](axum::Router::fallback): 404 in the route's error
/// format, naming the path. Put the [`NegotiateLayer`](crate::NegotiateLayer) after it
/// (`.fallback(not_found).layer(...)`), so that it wraps the fallback too.
pub async fn not_found(negotiated: Negotiated, uri: Uri) -> crate::Rejection {
    negotiated.reject(Status::for_code(
        http::StatusCode::NOT_FOUND,
        format!("no resource at {}", uri.path()),
    ))
}

/// A handler for [`Router::method_not_allowed_fallback`](axum::Router::method_not_allowed_fallback):
/// 405 in the route's error format; axum adds the `Allow` header listing the route's methods.
pub async fn method_not_allowed(
    negotiated: Negotiated,
    method: Method,
    uri: Uri,
) -> crate::Rejection {
    negotiated.reject(Status::for_code(
        http::StatusCode::METHOD_NOT_ALLOWED,
        format!("{method} is not allowed on {}", uri.path()),
    ))
}
