//! Admission: plugins that may refuse a write before it is stored, run in the order they were
//! registered ([`ServerBuilder::admission`](crate::server::ServerBuilder::admission)), as Kubernetes'
//! admission chain runs its validating plugins: on create (after defaulting, before
//! validation and `generateName`), on update and patch (after the update's checks, on every
//! attempt of a retried patch) and on delete (each object of a deletecollection too). The first
//! refusal answers the request.
//!
//! A plugin sees the internal objects ([`Request::object`], [`Request::old_object`]) and
//! downcasts them to the kinds it cares about; it may read storage through the
//! [`Registry`] (as upstream plugins read informers). A standalone server runs core v1's
//! `NamespaceLifecycle` first.
//!
//! ```
//! use conneg::Status;
//! use conneg_apiserver::admission::{Operation, Plugin, Request};
//! use conneg_apiserver::registry::Registry;
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
//!     fn admit<'a>(&'a self, _: &'a Registry, req: Request<'a>) -> BoxFuture<'a, Result<(), Status>> {
//!         Box::pin(async move {
//!             if req.operation != Operation::Delete && req.name == "forbidden" {
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

use super::Context;
use crate::registry::{Object, Registry};
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
    /// The object to be written, as its internal type (the registry's [`Object`]); `None`
    /// on delete.
    pub object: Option<&'a (dyn Any + Send + Sync)>,
    /// The object as stored, on update and delete.
    pub old_object: Option<&'a (dyn Any + Send + Sync)>,
}

impl<'a> Request<'a> {
    /// A create of `object` of `resource` (named `name`, `""` when generated).
    pub fn create<K: Object>(
        resource: &'static ResourceInfo,
        namespace: &'a str,
        name: &'a str,
        object: &'a K,
    ) -> Self {
        Self {
            operation: Operation::Create,
            resource,
            namespace,
            name,
            object: Some(object),
            old_object: None,
        }
    }

    /// An update (PUT or PATCH) of `old` to `new`, of `resource`.
    pub fn update<K: Object>(
        resource: &'static ResourceInfo,
        namespace: &'a str,
        new: &'a K,
        old: &'a K,
    ) -> Self {
        Self {
            operation: Operation::Update,
            resource,
            namespace,
            name: &old.meta().name,
            object: Some(new),
            old_object: Some(old),
        }
    }

    /// The deletion of `old`, of `resource`.
    pub fn delete<K: Object>(resource: &'static ResourceInfo, old: &'a K) -> Self {
        Self {
            operation: Operation::Delete,
            resource,
            namespace: &old.meta().namespace,
            name: &old.meta().name,
            object: None,
            old_object: Some(old),
        }
    }
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
    /// `registry` reads what the decision needs (Kubernetes reads an informer).
    fn admit<'a>(
        &'a self,
        registry: &'a Registry,
        req: Request<'a>,
    ) -> BoxFuture<'a, Result<(), Status>>;
}

/// Runs every registered plugin, in order, until one refuses.
pub(crate) async fn admit(st: &Context, req: Request<'_>) -> Result<(), Status> {
    for plugin in st.admission.iter() {
        plugin.admit(&st.registry, req).await.inspect_err(|s| {
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
