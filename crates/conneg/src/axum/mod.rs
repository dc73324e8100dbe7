//! axum integration (feature `axum`): extractors and responses that use the negotiated codecs.
//!
//! * [`Negotiated`] is an extractor: the layer's decision for this request.
//! * [`Conneg<T>`] is an extractor that decodes the body into any `T: DeserializeOwned` with the
//!   request codec (rejections are `Status` 400, 413 or 415 in the negotiated format), and a
//!   response that encodes any `T: Serialize` with the response codec — the ergonomics of
//!   `axum::Json`.
//! * [`Patch`] is an extractor for PATCH bodies, tagged with their [`PatchType`](crate::PatchType).
//! * [`Status`], [`Problem`] and [`Rejection`] are responses.
//! * [`Path`] and [`Query`] are axum's extractors with rejections in the route's error format,
//!   and [`not_found`] and [`method_not_allowed`] are fallbacks in that format, so that a
//!   service answers every error the same way:
//!
//! ```
//! use axum::{Router, routing::get};
//! use conneg::{NegotiateLayer, Problem, axum::{Conneg, Path, method_not_allowed, not_found}};
//! use http::StatusCode;
//!
//! async fn note(Path(id): Path<u32>) -> Result<Conneg<String>, Problem> {
//!     Err(Problem::new(StatusCode::NOT_FOUND, format!("note {id} does not exist")))
//! }
//!
//! let app: Router = Router::new()
//!     .route("/notes/{id}", get(note))
//!     .fallback(not_found)                          // 404 for unknown paths
//!     .method_not_allowed_fallback(method_not_allowed) // 405, axum adds `Allow`
//!     .layer(NegotiateLayer::new());                // last: it wraps the fallbacks too
//! # let _ = app;
//! ```
//!
//! # Two ways to respond
//!
//! `IntoResponse` cannot see the request (axum#2295), so a response value does not know the
//! negotiated codec. conneg offers both answers to that:
//!
//! * **`negotiated.response(StatusCode::OK, &value)`** — the handler takes the [`Negotiated`]
//!   extractor and encodes right away. No type erasure, no extra allocation: the fast path, and
//!   the one to use in hot handlers.
//! * **`Conneg(value)`** (or `(StatusCode::CREATED, Conneg(value))`) — the value is moved into
//!   one boxed closure in the response extensions and the layer's response future encodes it
//!   with the negotiated codec. The encoding itself is monomorphic (no erased serde); the cost
//!   is one small allocation, and `T` must be `Send + Sync + 'static`. Without [`NegotiateLayer`](crate::NegotiateLayer) such a response
//!   is a server error (status 599) whose body, a 500 `Status`, explains that the layer is
//!   missing. With the layer, any status the handler sets is kept, 500 included.
//!
//! A [`Status`] or [`Problem`] returned from a handler has a compact JSON body, which the layer
//! re-encodes when the client negotiated CBOR (or pretty JSON); a `Status` is written in the
//! route's error format (a problem in the standard profile).
//!
//! ```
//! use axum::{Router, routing::{get, post}, http::StatusCode};
//! use conneg::{NegotiateLayer, Negotiated, Status, axum::Conneg};
//! use serde::{Deserialize, Serialize};
//!
//! #[derive(Serialize, Deserialize)]
//! struct Item { name: String }
//!
//! async fn create(Conneg(item): Conneg<Item>) -> Result<(StatusCode, Conneg<Item>), Status> {
//!     if item.name.is_empty() {
//!         return Err(Status::bad_request("name is required"));
//!     }
//!     Ok((StatusCode::CREATED, Conneg(item)))
//! }
//!
//! async fn get_item(negotiated: Negotiated) -> axum::response::Response {
//!     use axum::response::IntoResponse;
//!     negotiated.response(StatusCode::OK, &Item { name: "a".into() }).into_response()
//! }
//!
//! let app: Router = Router::new()
//!     .route("/items", post(create))
//!     .route("/items/a", get(get_item))
//!     .layer(NegotiateLayer::new());
//! # let _ = app;
//! ```

use std::sync::{Arc, OnceLock};

use axum::extract::{FromRequest, FromRequestParts, Request};
use axum::response::{IntoResponse, Response};
use bytes::Bytes;
use http::HeaderValue;
use http::header::CONTENT_TYPE;
use http::request::Parts;
use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::negotiate::Deferred;
use crate::negotiate::decision::{Negotiated, read_body};
use crate::negotiate::rejection::Rejection;
use crate::negotiate::rules::Negotiator;
use crate::patch::Patch;
use crate::problem::Problem;
use crate::status::Status;

mod extract;
mod fallback;

pub use extract::{Path, Query};
pub use fallback::{method_not_allowed, not_found};

/// The negotiation for this request: the layer's, or (without the layer) one made here with
/// the default rules.
pub(crate) fn negotiated(parts: &Parts) -> Result<Negotiated, Rejection> {
    if let Some(n) = parts.extensions.get::<Negotiated>() {
        return Ok(n.clone());
    }
    static DEFAULT: OnceLock<Negotiator> = OnceLock::new();
    DEFAULT.get_or_init(Negotiator::new).negotiate_parts(parts)
}

impl<S: Send + Sync> FromRequestParts<S> for Negotiated {
    type Rejection = Rejection;

    async fn from_request_parts(parts: &mut Parts, _state: &S) -> Result<Self, Self::Rejection> {
        negotiated(parts)
    }
}

impl IntoResponse for Rejection {
    fn into_response(self) -> Response {
        self.into_http_response().into_response()
    }
}

impl IntoResponse for Status {
    /// Compact JSON, plus the `Status` in the response extensions so that the layer re-encodes
    /// it in the negotiated format.
    fn into_response(self) -> Response {
        let mut response = self.to_response(&crate::Codec::Json, false).into_response();
        response.extensions_mut().insert(self);
        response
    }
}

impl IntoResponse for Problem {
    /// `application/problem+json`, plus the problem in the response extensions so that the
    /// layer re-encodes it in the negotiated format.
    fn into_response(self) -> Response {
        let mut response = self
            .to_response(&crate::Codec::Json)
            .map(axum::body::Body::from)
            .into_response();
        response.extensions_mut().insert(self);
        response
    }
}

/// A body decoded with, or a value to be encoded with, the negotiated codec.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Conneg<T>(pub T);

impl<T, S> FromRequest<S> for Conneg<T>
where
    T: DeserializeOwned,
    S: Send + Sync,
{
    type Rejection = Rejection;

    /// Reads the body (up to the body limit) and decodes it with the request codec; a body
    /// that cannot be read or decoded is a [`Rejection`] (400 or 413) in the negotiated format.
    async fn from_request(req: Request, _state: &S) -> Result<Self, Self::Rejection> {
        let (parts, body) = req.into_parts();
        let negotiated = negotiated(&parts)?;
        match negotiated.decode_body::<T, _>(body).await {
            Ok(decoded) => Ok(Conneg(decoded.value)),
            Err(status) => Err(negotiated.reject(status)),
        }
    }
}

/// What a `Conneg<T>` response says if `NegotiateLayer` is missing (the layer replaces it).
/// Pre-encoded so the hot path does not build a `Status` it throws away.
const MISSING_LAYER: &[u8] = br#"{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"Internal error occurred: conneg: a Conneg<T> response needs NegotiateLayer to choose its format","reason":"InternalError","code":500}"#;

impl<T> IntoResponse for Conneg<T>
where
    T: Serialize + Send + Sync + 'static,
{
    fn into_response(self) -> Response {
        let value = self.0;
        let deferred = Deferred::new(Arc::new(move |n: &Negotiated| n.encode(&value)));
        let mut response = (
            Deferred::PLACEHOLDER,
            [(CONTENT_TYPE, HeaderValue::from_static("application/json"))],
            Bytes::from_static(MISSING_LAYER),
        )
            .into_response();
        response.extensions_mut().insert(deferred);
        response
    }
}

impl<S: Send + Sync> FromRequest<S> for Patch {
    type Rejection = Rejection;

    /// Reads a PATCH body (up to the body limit: 413 beyond). A request that is not a patch
    /// (no patch type negotiated: the route is not a PATCH route, or takes no patch types) is
    /// a 415 listing, in `Accept` and `Accept-Patch`, the patch types the profile's routes
    /// take (merge patch alone in the standard profile, all six in the Kubernetes one).
    async fn from_request(req: Request, _state: &S) -> Result<Self, Self::Rejection> {
        let (parts, body) = req.into_parts();
        let negotiated = negotiated(&parts)?;
        let Some(kind) = negotiated.patch_type() else {
            let types = crate::registry::join_media_types(
                negotiated
                    .profile()
                    .patch_types()
                    .iter()
                    .map(|p| p.media_type()),
            );
            return Err(negotiated
                .reject(Status::unsupported_media_type(&types))
                .with_accepted(&types, true));
        };
        match read_body(body, negotiated.body_limit()).await {
            Ok(body) => Ok(Patch { kind, body }),
            Err(status) => Err(negotiated.reject(status)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use http::StatusCode;

    #[test]
    fn missing_layer_placeholder_is_a_valid_status() {
        let status: Status = serde_json::from_slice(MISSING_LAYER).unwrap();
        assert_eq!(status.code(), StatusCode::INTERNAL_SERVER_ERROR);
        assert!(Deferred::PLACEHOLDER.is_server_error());
        assert_ne!(Deferred::PLACEHOLDER, StatusCode::INTERNAL_SERVER_ERROR);
        let expected = Status::internal_error(
            "conneg: a Conneg<T> response needs NegotiateLayer to choose its format",
        );
        assert_eq!(
            (status.message, status.reason),
            (expected.message, expected.reason)
        );
    }
}
