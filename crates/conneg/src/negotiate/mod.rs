//! Negotiation, in one tree: a route's rules ([`Negotiator`], `rules.rs`), the decision for one
//! request ([`Negotiated`], `decision.rs`), and the Tower middleware that applies them
//! ([`NegotiateLayer`], [`Negotiate`], [`ResponseFuture`], [`NegotiateBody`]).
//!
//! In `call`, before the inner service runs, the layer decides the response codec from `Accept`
//! and the request codec from `Content-Type` (see [`Negotiator`] for the
//! rules and the order of checks), stores the decision as a [`Negotiated`]
//! in the request extensions, and calls the inner service. If the request cannot be served it
//! answers itself, without calling the inner service:
//!
//! * **406** when no codec is acceptable; the error lists what is available and is JSON
//!   (nothing the client accepts exists; indented in the Kubernetes profile, as Kubernetes);
//! * **415** when the body's `Content-Type` is not accepted, with `Accept` (RFC 9110 §15.5.16)
//!   and, on PATCH, `Accept-Patch` (RFC 5789) listing what is;
//! * **413** when `Content-Length` exceeds the limit (bodies without a length are limited while
//!   they are read, by the decode helpers);
//! * **400** for an unknown `fieldValidation` value (Kubernetes profile).
//!
//! Errors are RFC 9457 problem details or Kubernetes `Status` objects, as the
//! [`Profile`](crate::Profile) says, or the service's own body
//! ([`NegotiateLayer::map_errors`]).
//!
//! On the way out it adds `Vary: Accept` (unless already there), turns `fieldValidation=Warn`
//! warnings into `Warning` headers, and encodes response values that handlers left for it
//! (`conneg::axum::Conneg(value)`, a [`Status`](crate::Status) or [`Problem`](crate::Problem)
//! returned as an error) in the negotiated format. The response it passes on carries the
//! [`Negotiated`] in its extensions, for layers outside it (a metrics layer counting media
//! types).
//!
//! ```
//! use conneg::{NegotiateLayer, Negotiated};
//! use http::{Request, Response, StatusCode};
//! use http_body_util::Full;
//! use bytes::Bytes;
//! use tower::{ServiceBuilder, ServiceExt, service_fn};
//!
//! # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
//! let service = ServiceBuilder::new()
//!     .layer(NegotiateLayer::new())
//!     .service(service_fn(|req: Request<Full<Bytes>>| async move {
//!         let negotiated = req.extensions().get::<Negotiated>().unwrap().clone();
//!         Ok::<_, std::convert::Infallible>(
//!             negotiated.response(StatusCode::OK, &serde_json::json!({"kind": "Item"})),
//!         )
//!     }));
//!
//! let request = Request::get("/item").header("accept", "application/cbor, */*").body(Full::default()).unwrap();
//! let response = service.clone().oneshot(request).await.unwrap();
//! assert_eq!(response.headers()["content-type"], "application/cbor");
//! assert_eq!(response.headers()["vary"], "Accept");
//!
//! let request = Request::get("/item").header("accept", "text/html").body(Full::default()).unwrap();
//! let response = service.oneshot(request).await.unwrap();
//! assert_eq!(response.status(), StatusCode::NOT_ACCEPTABLE);
//! # });
//! ```

mod body;
pub(crate) mod decision;
mod future;
mod layer;
pub(crate) mod rejection;
pub(crate) mod rules;
mod service;

pub use body::NegotiateBody;
pub use decision::{
    Encoding, Negotiated, RequestFormat, append_warnings, decode_body, encode_response, read_body,
};
#[cfg_attr(not(feature = "axum"), allow(unused_imports))]
pub(crate) use future::Deferred;
pub use future::ResponseFuture;
pub use layer::NegotiateLayer;
pub use rejection::Rejection;
pub use rules::{ACCEPT_PATCH, DEFAULT_BODY_LIMIT, Negotiator};
pub use service::Negotiate;
