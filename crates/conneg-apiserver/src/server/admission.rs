//! Admission: plugins that may refuse a create before it is validated and stored, run in the
//! order they were registered ([`ServerBuilder::admission`](super::ServerBuilder::admission)),
//! as Kubernetes' admission chain runs its validating plugins. The first refusal answers the
//! request.
//!
//! A plugin sees the internal object ([`Request::object`]) and downcasts it to the kinds it
//! cares about; it may read storage through the server's state (as upstream plugins read
//! informers).
//!
//! ```
//! use conneg::Status;
//! use conneg_apiserver::server::AppState;
//! use conneg_apiserver::server::admission::{Operation, Plugin, Request};
//! use futures_util::future::BoxFuture;
//!
//! /// Refuses every object named `forbidden`.
//! #[derive(Debug)]
//! struct NoForbidden;
//!
//! impl Plugin for NoForbidden {
//!     fn name(&self) -> &'static str {
//!         "NoForbidden"
//!     }
//!     fn admit<'a>(&'a self, _: &'a AppState, req: Request<'a>) -> BoxFuture<'a, Result<(), Status>> {
//!         Box::pin(async move {
//!             if req.operation == Operation::Create && req.name == "forbidden" {
//!                 let r = req.resource;
//!                 return Err(Status::forbidden(r.group, r.resource, req.name, "not this name"));
//!             }
//!             Ok(())
//!         })
//!     }
//! }
//! ```

use std::any::Any;
use std::fmt::Debug;

use conneg::Status;
use futures_util::future::BoxFuture;

use super::AppState;
use crate::resource::ResourceInfo;

/// The operation being admitted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Operation {
    /// POST (and an apply that creates).
    Create,
    /// PUT and PATCH.
    Update,
    /// DELETE.
    Delete,
    /// A connect subresource.
    Connect,
}

/// What a plugin is asked to admit.
#[derive(Clone, Copy)]
pub struct Request<'a> {
    /// The operation.
    pub operation: Operation,
    /// The resource written.
    pub resource: &'static ResourceInfo,
    /// The namespace (`""` for a cluster-scoped resource).
    pub namespace: &'a str,
    /// The object's name as requested: on create, `""` when it is to be generated
    /// (`generateName` is expanded after admission, as in Kubernetes).
    pub name: &'a str,
    /// The object, as its internal type ([`Kind`](super::kinds::Kind)).
    pub object: &'a (dyn Any + Send + Sync),
}

impl Debug for Request<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Request")
            .field("operation", &self.operation)
            .field("resource", &self.resource.resource)
            .field("namespace", &self.namespace)
            .field("name", &self.name)
            .finish_non_exhaustive()
    }
}

/// An admission plugin.
pub trait Plugin: Debug + Send + Sync + 'static {
    /// The plugin's registered name (`BanFlunder`).
    fn name(&self) -> &'static str;
    /// `Ok` to let the request through; the `Status` that answers it otherwise.
    fn admit<'a>(&'a self, st: &'a AppState, req: Request<'a>)
    -> BoxFuture<'a, Result<(), Status>>;
}

/// Runs every registered plugin, in order, until one refuses.
pub async fn admit(st: &AppState, req: Request<'_>) -> Result<(), Status> {
    for plugin in st.admission.iter() {
        plugin.admit(st, req).await.inspect_err(|s| {
            tracing::debug!(
                plugin = plugin.name(),
                ?req,
                code = s.code,
                "admission refused"
            );
        })?;
    }
    Ok(())
}
