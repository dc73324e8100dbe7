//! The endpoint of one served version and resource: the versioned Rust type behind it
//! ([`Served`]), erased into an [`Endpoint`] the router can hold, and the verb each request
//! asks of it.

use axum::body::Body;
use conneg::{Negotiated, Status};
use futures_util::future::BoxFuture;
use http::Method;

use super::{Context, HResult, Params, Target, create, delete, read, update, watch};
use crate::definitions::{Definitions, OpenApiSchema};
use crate::registry::Strategy;
use crate::resource::{GroupVersion, ResourceInfo, Versioned, VersionedObject};

/// A versioned type served over HTTP, with the internal kind behind it: every
/// [`VersionedObject`] whose internal type has a [`Strategy`].
pub trait Served: VersionedObject + Send + Sync + 'static {
    /// The internal type.
    type K: Strategy;
    /// To internal.
    fn into_kind(self) -> Self::K;
    /// From internal (sets apiVersion/kind).
    fn from_kind(k: Self::K) -> Self;
}

impl<T> Served for T
where
    T: VersionedObject + Send + Sync + 'static,
    T::Internal: Strategy,
{
    type K = T::Internal;
    fn into_kind(self) -> T::Internal {
        Versioned::into_internal(self)
    }
    fn from_kind(k: T::Internal) -> Self {
        Versioned::from_internal(k)
    }
}

/// One request to an endpoint, as the verbs take it.
pub(crate) struct Call<'a> {
    pub(super) st: &'a Context,
    pub(super) t: &'a Target,
    pub(super) q: &'a Params,
    pub(super) n: &'a Negotiated,
    pub(super) method: Method,
    pub(super) body: Body,
    pub(super) ua: Option<&'a str>,
}

/// One served group version and resource, and the versioned Rust type that serves it.
#[derive(Clone, Copy)]
pub struct Endpoint {
    /// The group version.
    pub version: GroupVersion,
    /// The resource.
    pub resource: &'static ResourceInfo,
    pub(super) handle: for<'a> fn(Call<'a>) -> BoxFuture<'a, HResult>,
    definitions: fn(&mut Definitions<'_>),
}

impl std::fmt::Debug for Endpoint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Endpoint")
            .field("version", &self.version)
            .field("resource", &self.resource.resource)
            .finish_non_exhaustive()
    }
}

impl Endpoint {
    /// The endpoint of `T`: its version and resource, every verb over `T`, its OpenAPI.
    pub fn of<T: Served + OpenApiSchema>() -> Self {
        Self {
            version: T::VERSION,
            resource: T::RESOURCE,
            handle: |c| Box::pin(verb::<T>(c)),
            definitions: T::definitions,
        }
    }

    /// Adds the OpenAPI schemas of the endpoint's type to `defs`.
    pub fn definitions(&self, defs: &mut Definitions<'_>) {
        (self.definitions)(defs);
    }
}

/// The verb a request asks of `T`'s endpoint: a collection (list, watch, create,
/// deletecollection) or one object (get, watch, update, patch, delete) or its `status`.
async fn verb<T: Served>(c: Call<'_>) -> HResult {
    let (st, t, q, n) = (c.st, c.t, c.q, c.n);
    let method = c.method.clone();
    if t.name.is_none() {
        return match method {
            Method::GET if q.flag("watch") => watch::watch::<T>(st, t, q, n).await,
            Method::GET => read::list::<T>(st, t, q, n).await,
            Method::POST if t.namespace.is_some() || !t.resource.namespaced => {
                create::create::<T>(c).await
            }
            Method::DELETE
                if (t.namespace.is_some() || !t.resource.namespaced)
                    && t.resource.verbs.contains(&"deletecollection") =>
            {
                delete::delete_collection::<T>(c).await
            }
            m => Err(method_not_allowed(&m, t)),
        };
    }
    match method {
        // `?watch=true` on an object is a watch with fieldSelector=metadata.name=<name>.
        Method::GET if q.flag("watch") && !t.status => watch::watch::<T>(st, t, q, n).await,
        Method::GET => read::get::<T>(st, t, q, n).await,
        Method::PUT => update::update::<T>(c).await,
        Method::PATCH => update::patch::<T>(c).await,
        Method::DELETE if !t.status => delete::delete::<T>(c).await,
        m => Err(method_not_allowed(&m, t)),
    }
}

fn method_not_allowed(method: &Method, t: &Target) -> Status {
    Status::method_not_allowed(method.as_str(), t.resource.group, t.resource.resource)
}
