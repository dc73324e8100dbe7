//! The resource endpoints: what an HTTP request to a resource asks, answered through the
//! [`registry`](crate::registry). Every request resolves the URL into a target
//! (`request.rs`: version, resource, namespace, name, subresource), then the [`Endpoint`] of
//! that version and resource runs the verb, generic over the versioned Rust type that serves
//! it (`endpoint.rs`). The pipelines are the ones Kubernetes' generic registry runs:
//!
//! * create (`create.rs`): decode the versioned body (conneg, with `fieldValidation`) →
//!   defaults → internal (`body.rs`) → `managedFields` (`field_manager/`) → server-managed
//!   metadata → [`admission`] → generateName → validation (`validate.rs`) →
//!   [`Registry::create`](crate::registry::Registry::create);
//! * update, patch and apply (`update.rs`): one pipeline after the new object is known (the
//!   body, the patched object or the applied one): what the endpoint may not change put back,
//!   `managedFields`, the update's checks, admission, then one compare-and-swap
//!   ([`Registry::update`](crate::registry::Registry::update));
//! * delete and deletecollection (`delete.rs`): the options, then
//!   [`Registry::delete`](crate::registry::Registry::delete), which admits the stored object;
//! * get and list (`read.rs`): stored bytes → internal → the version in the URL → the
//!   negotiated codec, or a Table or metadata only (`transform.rs`, `table.rs`); a list's
//!   items streamed one at a time (`list_body.rs`);
//! * watch (`watch.rs`): events as a stream, with the options of `list_options.rs`.
//!
//! The endpoints are the HTTP edge, where errors become answers: the layers below say what
//! went wrong in their own small types (`StorageError`, `registry::Error`, `PatchError`,
//! the field manager's, metadata-only's), each mapped to Kubernetes' `Status` by its
//! `From` impl, and `?` makes that `Status` here, boxed in a [`StatusError`]
//! (`status_error.rs`) so that a result carrying it stays small.

pub mod admission;
mod body;
mod call;
mod create;
mod delete;
mod encoded;
mod endpoint;
mod field_manager;
mod list_body;
mod list_options;
mod read;
mod request;
mod scale;
mod status_error;
mod table;
mod transform;
mod update;
mod validate;
pub(crate) mod watch;

use std::collections::BTreeMap;
use std::sync::Arc;

use axum::Router;
use axum::extract::rejection::QueryRejection;
use axum::extract::{FromRef, Path, Query, Request, State};
use axum::response::{IntoResponse, Response};
use axum::routing::any;
use conneg::{Negotiated, Status, StatusReason};
use http::StatusCode;

use crate::declarative::Validators;
use crate::live::Live;
use crate::registry::Registry;
use crate::resource::Catalog;
use call::Call;
pub use encoded::DEFAULT_CAPACITY as DEFAULT_ENCODED_CACHE;
pub(crate) use encoded::EncodedForms;
pub(crate) use endpoint::sealed::Sealed;
pub use endpoint::{Endpoint, Served};
pub(crate) use request::{Params, Target};
pub(crate) use scale::ScalePaths;
pub(crate) use status_error::StatusError;
pub(crate) use table::age;

/// Handler result: a response, or the `Status` the layer encodes in the negotiated format.
pub(crate) type HResult = Result<Response, StatusError>;

/// What the endpoints need; cheap to clone. The server builds it
/// ([`ServerBuilder`](crate::server::ServerBuilder)).
#[derive(Clone, Debug)]
pub struct Context {
    /// The registry: storage and what is served.
    pub(crate) registry: Registry,
    /// Whether CBOR is served (false with `--no-cbor`).
    pub(crate) cbor: bool,
    /// Shared watch fan-out, one hub per version and resource ([`watch`]).
    pub(crate) hubs: watch::Hubs,
    /// Permits for work run on the blocking pool (parsing and applying patches): one per
    /// CPU, so hostile bodies queue instead of taking every thread.
    pub(crate) blocking: Arc<tokio::sync::Semaphore>,
    /// The endpoint of each served version and resource, now.
    pub(crate) endpoints: Live<Vec<Endpoint>>,
    /// The admission chain, in order.
    pub(crate) admission: Arc<[Arc<dyn admission::Plugin>]>,
    /// The declarative validation of each served kind.
    pub(crate) validators: Arc<Validators>,
    /// Objects' encoded responses, kept for the next GET or LIST that sends them.
    pub(crate) encoded: Arc<encoded::EncodedForms>,
}

/// The catalog of what `endpoints` serve: group versions in the order they first appear
/// (preferred first within a group), resources in order.
pub(crate) fn catalog_of(endpoints: &[Endpoint]) -> Catalog {
    endpoints
        .iter()
        .fold(Catalog::new(), |c, e| c.with(e.version, e.resource))
}

/// The resource routes (namespaced and cluster-wide forms) of named groups (`/apis/{group}`)
/// and of the core group (`/api`), for any application state the [`Context`] comes from;
/// a path that names nothing served is answered 404.
pub(crate) fn routes<S>() -> Router<S>
where
    S: Clone + Send + Sync + 'static,
    Context: FromRef<S>,
{
    ["/apis/{group}/{version}", "/api/{version}"]
        .into_iter()
        .fold(Router::new(), |r, base| {
            r.route(
                &format!("{base}/namespaces/{{namespace}}/{{resource}}"),
                any(resource),
            )
            .route(
                &format!("{base}/namespaces/{{namespace}}/{{resource}}/{{name}}"),
                any(resource),
            )
            .route(
                &format!("{base}/namespaces/{{namespace}}/{{resource}}/{{name}}/{{subresource}}"),
                any(resource),
            )
            .route(&format!("{base}/{{resource}}"), any(resource))
            .route(&format!("{base}/{{resource}}/{{name}}"), any(resource))
            .route(
                &format!("{base}/{{resource}}/{{name}}/{{subresource}}"),
                any(resource),
            )
        })
}

/// 404 for a path that names no resource.
pub(crate) fn resource_not_found() -> Status {
    Status::failure(
        StatusCode::NOT_FOUND,
        StatusReason::NotFound,
        "the server could not find the requested resource",
    )
}

/// The User-Agent, which names the manager of a write without `fieldManager`.
fn user_agent(headers: &http::HeaderMap) -> Option<&str> {
    headers
        .get(http::header::USER_AGENT)
        .and_then(|v| v.to_str().ok())
}

/// Every resource request, handed to the endpoint of the URL's version and resource. The
/// request is taken whole: its headers are read where they are, not copied.
async fn resource(
    State(st): State<Context>,
    Path(p): Path<BTreeMap<String, String>>,
    q: Result<Query<Vec<(String, String)>>, QueryRejection>,
    n: Negotiated,
    req: Request,
) -> HResult {
    let t = Target::resolve(p, &st.registry.catalog.get())?;
    let q = Params::from_query(q)?;
    let (parts, body) = req.into_parts();
    // The served set as it is now, held for the request (not copied out of it).
    let endpoints = st.endpoints.get();
    let endpoint = endpoints
        .iter()
        .find(|e| e.version == t.version && e.resource == t.resource)
        .ok_or_else(resource_not_found)?;
    (endpoint.handle)(Call {
        st: &st,
        t: &t,
        q: &q,
        n: &n,
        method: parts.method,
        body,
        ua: user_agent(&parts.headers),
    })
    .await
}

/// A response with `value` in the negotiated codec.
fn respond<V: serde::Serialize + ?Sized>(n: &Negotiated, code: StatusCode, value: &V) -> Response {
    n.response(code, value).into_response()
}
