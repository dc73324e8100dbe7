//! Content negotiation for HTTP APIs: `Accept` and `Content-Type` parsing, JSON and CBOR
//! codecs (and your own, [`CustomCodec`]), a Tower layer that answers 406/415/413 itself, axum
//! extractors and responses, and errors in the negotiated format — RFC 9457 problem details
//! for any HTTP API ([`Profile::Standard`], the default), or Kubernetes `Status` objects with
//! KEP-4222 CBOR for a Kubernetes API server ([`Profile::Kubernetes`]). The
//! [`profile`] module compares the two.
//!
//! # With axum
//!
//! ```
//! # #[cfg(feature = "axum")] {
//! use axum::{Router, http::StatusCode, routing::get};
//! use conneg::axum::{Conneg, Path, method_not_allowed, not_found};
//! use conneg::{NegotiateLayer, Problem};
//! use serde::{Deserialize, Serialize};
//!
//! #[derive(Serialize, Deserialize)]
//! struct Note { title: String }
//!
//! // The body in JSON or CBOR (400 as a problem if it does not decode, naming the field).
//! async fn create(Conneg(note): Conneg<Note>) -> (StatusCode, Conneg<Note>) {
//!     (StatusCode::CREATED, Conneg(note))
//! }
//!
//! // `Path` from conneg::axum: a bad id is a problem too, not axum's plain text.
//! async fn read(Path(id): Path<u64>) -> Result<Conneg<Note>, Problem> {
//!     Err(Problem::new(StatusCode::NOT_FOUND, format!("note {id} does not exist")))
//! }
//!
//! let app: Router = Router::new()
//!     .route("/notes", axum::routing::post(create))
//!     .route("/notes/{id}", get(read))
//!     .fallback(not_found)
//!     .method_not_allowed_fallback(method_not_allowed)
//!     .layer(NegotiateLayer::new());
//! # let _ = app;
//! # }
//! ```
//!
//! A client that sends `Accept: application/cbor` gets CBOR with text strings, errors
//! included; `Accept: text/html` gets a 406 problem listing what is available. A service
//! with its own error body maps conneg's errors to it with [`NegotiateLayer::map_errors`].
//!
//! # A Kubernetes API server
//!
//! ```
//! # #[cfg(feature = "axum")] {
//! use axum::{Router, http::StatusCode, routing::{get, patch}};
//! use conneg::{Codec, Conversion, NegotiateLayer, Negotiated, Patch, Profile, Status, axum::Conneg};
//! use serde::{Deserialize, Serialize};
//!
//! #[derive(Serialize, Deserialize)]
//! struct Flunder { name: String }
//!
//! async fn create(Conneg(f): Conneg<Flunder>) -> Result<(StatusCode, Conneg<Flunder>), Status> {
//!     if f.name == "taken" {
//!         return Err(Status::already_exists("wardle.example.com", "flunders", &f.name));
//!     }
//!     Ok((StatusCode::CREATED, Conneg(f)))
//! }
//!
//! async fn list(negotiated: Negotiated) -> axum::response::Response {
//!     use axum::response::IntoResponse;
//!     if negotiated.conversion().is_some() {
//!         // build a meta.k8s.io/v1 Table instead
//!     }
//!     negotiated.response(StatusCode::OK, &[Flunder { name: "a".into() }]).into_response()
//! }
//!
//! async fn apply(patch: Patch) -> Result<Conneg<serde_json::Value>, Status> {
//!     Ok(Conneg(patch.to_json_value()?))
//! }
//!
//! let app: Router = Router::new()
//!     .route("/flunders", get(list).post(create))
//!     .route("/flunders/{name}", patch(apply))
//!     .layer(
//!         NegotiateLayer::new()
//!             .profile(Profile::Kubernetes)
//!             .conversion(Conversion::table(), [Codec::Json]),
//!     );
//! # let _ = app;
//! # }
//! ```
//!
//! # How a request flows
//!
//! 1. **Socket → layer.** [`NegotiateLayer`] (a Tower layer; [`negotiate`]) sees the request
//!    first. Before calling the inner service it picks the response codec from every `Accept`
//!    line ([`Codecs`] has the rules: highest `q`; a type the client *named* beats a wildcard
//!    match; ties go to the server's order; no `Accept` means the server's first codec) and the
//!    request codec from `Content-Type` ([`headers::request_content_type`]; missing means JSON, except on PATCH,
//!    which takes the [`PatchType`]s). If either is impossible it answers at once — 415 with
//!    `Accept`/`Accept-Patch`, 406 with the available list, 413 for a declared oversize body —
//!    as a [`Problem`] or a Kubernetes [`Status`] (the [`Profile`]) in the negotiated format,
//!    and the inner service never runs.
//! 2. **Layer → extractor.** Otherwise it stores the decision, a [`Negotiated`], in the request
//!    extensions. With axum, the [`Negotiated`] extractor hands it to the handler, and
//!    `conneg::axum::Conneg<T>` reads the body (at most the body limit, default 3 MiB: 413
//!    beyond) and decodes it with the request codec into any `T: DeserializeOwned` (400 for
//!    anything that does not decode; [`FieldValidation`] decides what unknown fields do).
//!    Without axum, [`decode_body`] does the same from the extensions.
//! 3. **Handler → response.** The handler encodes with the negotiated codec, either right away
//!    (`negotiated.response(StatusCode::OK, &value)`, no type erasure) or by returning
//!    `Conneg(value)`, which the layer encodes on the way out. The layer adds `Vary: Accept`
//!    and one `Warning` header per unknown field under `fieldValidation=Warn`; a [`Status`]
//!    returned as an error is re-encoded as CBOR for clients that asked for CBOR.
//!
//! Kubernetes' media-type parameters reach the handler through [`Negotiated::params`]:
//! `as=Table;g=meta.k8s.io;v=v1` (only if the route declared the [`Conversion`], and only in the
//! codecs it named), `stream=watch`, `pretty`, `profile`. Codecs have stream forms for watch
//! ([`Codec::stream_media_type`], [`Codec::encode_stream_item`]).
//!
//! # With plain Tower / hyper
//!
//! ```
//! use bytes::Bytes;
//! use conneg::{NegotiateLayer, Negotiated, decode_body, encode_response};
//! use http::{Request, StatusCode};
//! use http_body_util::{BodyExt, Full};
//! use tower::{ServiceBuilder, ServiceExt, service_fn};
//!
//! # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
//! let svc = ServiceBuilder::new().layer(NegotiateLayer::new()).service(service_fn(
//!     |req: Request<Full<Bytes>>| async move {
//!         let negotiated = Negotiated::from_extensions(req.extensions()).unwrap().clone();
//!         let response = match decode_body::<serde_json::Value, _>(&negotiated, req.into_body()).await {
//!             Ok(decoded) => encode_response(&negotiated, StatusCode::CREATED, &decoded.value),
//!             Err(status) => negotiated.error_response(&status),
//!         };
//!         Ok::<_, std::convert::Infallible>(response)
//!     },
//! ));
//!
//! let req = Request::post("/items")
//!     .header("content-type", "application/json")
//!     .header("accept", "application/json;q=0.9,application/cbor;q=1")
//!     .body(Full::new(Bytes::from_static(br#"{"name":"a"}"#)))
//!     .unwrap();
//! let res = svc.oneshot(req).await.unwrap();
//! assert_eq!(res.status(), StatusCode::CREATED);
//! assert_eq!(res.headers()["content-type"], "application/cbor");
//! # });
//! ```
//!
//! # Cost
//!
//! Parsing `Accept` and `Content-Type` walks the header bytes and allocates nothing; selection
//! re-walks the header once per server codec (two or three). The decision itself allocates
//! nothing for typical headers (storing it in the request extensions costs the usual extension
//! allocation); a request with a body under `fieldValidation=Warn` adds one small shared slot
//! for warnings. JSON and CBOR encode straight into the response buffer and decode straight
//! from the request bytes.
#![deny(missing_docs, unreachable_pub, unsafe_code)]
// `Status` (a Kubernetes object of ~300 bytes) is the error type of paths that are already
// error paths and allocate; the hot paths (negotiate, encode) return small errors.
#![allow(clippy::result_large_err)]

#[cfg(feature = "axum")]
pub mod axum;
mod cbor;
#[cfg(feature = "client")]
pub mod client;
mod codec;
mod explain;
mod field_validation;
pub mod headers;
mod json_duplicates;
mod list;
pub mod negotiate;
pub mod patch;
mod problem;
pub mod profile;
mod query;
mod registry;
mod status;
pub mod watch;

#[cfg(feature = "client")]
pub use client::WatchStream;
pub use codec::{BoxError, Codec, CustomCodec, DecodeError, DecodeErrorKind, Decoded, EncodeError};
pub use field_validation::{FieldValidation, warning_header_value};
pub use headers::{Conversion, MediaTypeParams};
pub use list::{DEFAULT_FRAME_SIZE, ListBody, ListEnvelope, StreamingList};
pub use negotiate::{
    ACCEPT_PATCH, DEFAULT_BODY_LIMIT, Encoding, NegotiateLayer, Negotiated, Negotiator, Rejection,
    RequestFormat, append_warnings, decode_body, encode_response, read_body,
};
pub use patch::{Patch, PatchType};
pub use problem::{APPLICATION_PROBLEM_JSON, Problem};
pub use profile::Profile;
pub use query::{option_bool, option_flag, parse_bool};
pub use registry::{Codecs, Selection};
pub use status::{Status, StatusCause, StatusDetails, StatusReason};
pub use watch::{WatchEvent, WatchHub, WatchResponse};

/// The README's examples, compiled and run as doc tests so they stay true.
#[cfg(all(doctest, feature = "axum"))]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
