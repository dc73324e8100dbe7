//! The endpoint of one served version and resource: the versioned Rust type behind it
//! ([`Served`]), erased into an [`Endpoint`] the router can hold, and the verb each request
//! asks of it.

use std::sync::Arc;

use conneg::PatchType;
use futures_util::future::BoxFuture;
use http::Method;
use serde_json::Value;

use super::call::Call;
use super::scale::ScalePaths;
use super::{Context, HResult, create, delete, read, scale, table, update, watch};
use crate::apply::schema::Schema;
use crate::declarative::Validator;
use crate::definitions::{Definitions, OpenApiSchema};
use crate::meta::{HasObjectMeta, ListMeta, Time};
use crate::registry::{Object, Strategy};
use crate::resource::{
    GroupVersion, List, ResourceInfo, Versioned, VersionedList, VersionedObject,
};

/// Seals [`Served`]: its methods name the server's internals, so only this crate implements it.
pub(crate) mod sealed {
    /// Implemented where [`Served`](super::Served) is.
    #[allow(unreachable_pub)]
    pub trait Sealed {}
}

/// A versioned type served over HTTP, with the object kind behind it: every
/// [`VersionedObject`] whose internal type has a [`Strategy`] (its facts are constants:
/// `Facts = ()`), and the unstructured custom resource, whose facts come from its
/// definition at run time.
///
/// Sealed: the crate implements it for those types, and a server only names it in bounds
/// (what [`ServerBuilder::serve`](crate::server::ServerBuilder::serve) takes); its methods
/// are the endpoints' own.
pub trait Served:
    sealed::Sealed
    + serde::Serialize
    + serde::de::DeserializeOwned
    + HasObjectMeta
    + Send
    + Sync
    + 'static
{
    /// The object the registry stores.
    type K: Object;
    /// What the endpoint knows of the type at run time.
    type Facts: Clone + Send + Sync + 'static;
    /// The list of this type in the same version.
    type List: serde::Serialize;
    /// The patch types PATCH takes (a custom resource has no strategic merge patch).
    const PATCH_TYPES: &'static [PatchType] = PatchType::all();
    /// To the registry's object.
    fn into_kind(self, f: &Self::Facts) -> Self::K;
    /// From the registry's object (sets apiVersion/kind).
    fn from_kind(k: Self::K, f: &Self::Facts) -> Self;
    /// The version's defaults (and, for a custom resource, pruning to its schema): the
    /// paths of the unknown fields dropped.
    fn apply_defaults(&mut self, f: &Self::Facts) -> Vec<String>;
    /// `apiVersion` and `kind` as they were sent (empty when absent).
    fn type_meta(&self) -> (&str, &str);
    /// The list of `items`.
    fn list(meta: ListMeta, items: Vec<Self>, f: &Self::Facts) -> Self::List;
    /// The compiled declaration of this version, if it has one.
    fn declaration<'a>(
        st: &'a Context,
        version: GroupVersion,
        resource: &ResourceInfo,
        f: &'a Self::Facts,
    ) -> Option<&'a Arc<Validator>>;
    /// Table columns after Name.
    fn columns(f: &Self::Facts) -> Vec<Value>;
    /// Table cells after the name, in [`Served::columns`]' order.
    fn cells(k: &Self::K, f: &Self::Facts, now: Time) -> Vec<Value>;
    /// The list and map semantics of server-side apply.
    fn apply_schema(f: &Self::Facts) -> Schema;
    /// Whether `a` and `b` are equal but for what does not move `metadata.generation` on
    /// (metadata, and the status of a kind with a status subresource).
    fn same_spec(a: &Self::K, b: &Self::K, f: &Self::Facts) -> bool;
    /// The warning every request to this version gets (a deprecated version's).
    fn warning(f: &Self::Facts) -> Option<&str>;
    /// Whether creates are refused (403): the definition is being deleted.
    fn terminating(f: &Self::Facts) -> bool;
    /// Where the `scale` subresource reads and writes the replicas (none: no such
    /// subresource, as for every compiled type).
    fn scale(f: &Self::Facts) -> Option<&ScalePaths>;
    /// Resolves once the endpoint stops being served as it is (a custom resource
    /// definition changed or deleted): its watches end then, and clients watch again.
    /// Never, for a compiled type.
    fn retired(f: &Self::Facts) -> BoxFuture<'static, ()>;
    /// An object of this kind as JSON in the version `from`, converted to `to` (what
    /// server-side apply compares managers' fields in).
    fn convert(obj: &Value, from: &str, to: &str) -> Option<Value>;
    /// Tells apart the facts of this type that serve one stored object differently (each
    /// served version of a custom resource, each time its definition changes): objects'
    /// encoded responses are kept per type and this. The same for every fact of a compiled
    /// type.
    fn forms(f: &Self::Facts) -> u64 {
        let _ = f;
        0
    }
}

impl<T> sealed::Sealed for T
where
    T: VersionedObject<List = List<T>> + Send + Sync + 'static,
    T::Internal: Strategy,
{
}

impl<T> Served for T
where
    T: VersionedObject<List = List<T>> + Send + Sync + 'static,
    T::Internal: Strategy,
{
    type K = T::Internal;
    type Facts = ();
    type List = List<T>;
    fn into_kind(self, (): &()) -> T::Internal {
        Versioned::into_internal(self)
    }
    fn from_kind(k: T::Internal, (): &()) -> Self {
        Versioned::from_internal(k)
    }
    fn apply_defaults(&mut self, (): &()) -> Vec<String> {
        Versioned::apply_defaults(self);
        Vec::new()
    }
    fn type_meta(&self) -> (&str, &str) {
        VersionedObject::type_meta(self)
    }
    fn list(meta: ListMeta, items: Vec<Self>, (): &()) -> List<T> {
        List::from_items(meta, items)
    }
    fn declaration<'a>(
        st: &'a Context,
        version: GroupVersion,
        resource: &ResourceInfo,
        (): &'a (),
    ) -> Option<&'a Arc<Validator>> {
        st.validators.get(version, resource)
    }
    fn columns((): &()) -> Vec<Value> {
        let mut cols: Vec<Value> = <T::Internal as Strategy>::COLUMNS
            .iter()
            .map(|c| table::column(c.name, c.ty, c.format, c.description))
            .collect();
        cols.push(table::age_column());
        cols
    }
    fn cells(k: &T::Internal, (): &(), now: Time) -> Vec<Value> {
        let mut cells = k.cells();
        cells.push(Value::String(table::age(k.meta().creation_timestamp, now)));
        cells
    }
    fn apply_schema((): &()) -> Schema {
        Schema::of(<T::Internal as Strategy>::APPLY_SCHEMA)
    }
    fn same_spec(a: &T::Internal, b: &T::Internal, (): &()) -> bool {
        Strategy::same_spec(a, b)
    }
    fn warning((): &()) -> Option<&str> {
        None
    }
    fn terminating((): &()) -> bool {
        false
    }
    fn scale((): &()) -> Option<&ScalePaths> {
        None
    }
    fn retired((): &()) -> BoxFuture<'static, ()> {
        Box::pin(std::future::pending())
    }
    fn convert(obj: &Value, from: &str, to: &str) -> Option<Value> {
        let versions = <T::Internal as Strategy>::versions();
        let find = |v: &str| versions.iter().find(|s| s.api_version == v);
        let (from, to) = (find(from)?, find(to)?);
        (to.encode)((from.decode)(obj)?)
    }
}

/// The verbs of one endpoint, over its type and with its facts.
type Handle = Arc<dyn for<'a> Fn(Call<'a>) -> BoxFuture<'a, HResult> + Send + Sync>;

/// One served group version and resource, and the versioned Rust type that serves it.
#[derive(Clone)]
pub struct Endpoint {
    /// The group version.
    pub version: GroupVersion,
    /// The resource.
    pub resource: &'static ResourceInfo,
    pub(super) handle: Handle,
    definitions: Publish,
    compiled: bool,
    patch_types: &'static [PatchType],
}

/// What an endpoint's type adds to its version's OpenAPI definitions.
type Publish = Arc<dyn Fn(&mut Definitions<'_>) + Send + Sync>;

impl std::fmt::Debug for Endpoint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Endpoint")
            .field("version", &self.version)
            .field("resource", &self.resource.resource)
            .finish_non_exhaustive()
    }
}

impl Endpoint {
    /// The endpoint of the compiled type `T`: its version and resource, every verb over
    /// `T`, its OpenAPI.
    pub fn of<T: Served<Facts = ()> + VersionedObject + OpenApiSchema>() -> Self {
        Self {
            version: T::VERSION,
            resource: T::RESOURCE,
            handle: Arc::new(|c| Box::pin(verb::<T>(c, &()))),
            definitions: Arc::new(T::definitions),
            compiled: true,
            patch_types: T::PATCH_TYPES,
        }
    }

    /// The endpoint of `resource` in `version`, served by `T` with `facts`, a type known at
    /// run time whose OpenAPI definitions `publish` adds.
    pub fn dynamic<T: Served>(
        (version, resource): (GroupVersion, &'static ResourceInfo),
        facts: T::Facts,
        publish: impl Fn(&mut Definitions<'_>) + Send + Sync + 'static,
    ) -> Self {
        Self {
            version,
            resource,
            handle: Arc::new(move |c| {
                let facts = facts.clone();
                Box::pin(async move { verb::<T>(c, &facts).await })
            }),
            definitions: Arc::new(publish),
            compiled: false,
            patch_types: T::PATCH_TYPES,
        }
    }

    /// The patch types its PATCH takes ([`Served::PATCH_TYPES`]), as OpenAPI publishes them:
    /// kubectl sends a strategic merge patch only where the PATCH operation lists it.
    pub fn patch_types(&self) -> &'static [PatchType] {
        self.patch_types
    }

    /// Whether a compiled type serves it (not a definition read at run time).
    pub fn is_compiled(&self) -> bool {
        self.compiled
    }

    /// Adds the OpenAPI schemas of the endpoint's type to `defs`.
    pub fn definitions(&self, defs: &mut Definitions<'_>) {
        (self.definitions)(defs);
    }
}

/// The verb a request asks of `T`'s endpoint: a collection (list, watch, create,
/// deletecollection) or one object (get, watch, update, patch, delete) or its `status`.
async fn verb<T: Served>(c: Call<'_>, f: &T::Facts) -> HResult {
    let mut resp = dispatch::<T>(c, f).await?;
    if let Some(w) = T::warning(f) {
        conneg::append_warnings(resp.headers_mut(), &[w.to_owned()]);
    }
    Ok(resp)
}

/// [`verb`], before the version's warning. Each verb's future is boxed on its own: the
/// future of this function would otherwise be as large as the largest verb's (tens of KB, an
/// update with its patch and apply states), and every request would move that much.
async fn dispatch<T: Served>(c: Call<'_>, f: &T::Facts) -> HResult {
    let (st, t, q, n) = (c.st, c.t, c.q, c.n);
    let method = c.method.clone();
    if t.scale {
        return Box::pin(scale::scale::<T>(c, f)).await;
    }
    let watch = q.flag("watch");
    match (t.name.is_some(), method) {
        (false, Method::GET) if watch => Box::pin(watch::watch::<T>(st, t, q, n, f)).await,
        (false, Method::GET) => Box::pin(read::list::<T>(st, t, q, n, f)).await,
        (false, Method::POST) if t.allowed().contains(&Method::POST) => {
            Box::pin(create::create::<T>(c, f)).await
        }
        (false, Method::DELETE) if t.allowed().contains(&Method::DELETE) => {
            Box::pin(delete::delete_collection::<T>(c, f)).await
        }
        // `?watch=true` on an object is a watch with fieldSelector=metadata.name=<name>.
        (true, Method::GET) if watch && !t.status => {
            Box::pin(watch::watch::<T>(st, t, q, n, f)).await
        }
        (true, Method::GET) => Box::pin(read::get::<T>(st, t, q, n, f)).await,
        (true, Method::PUT) => Box::pin(update::update::<T>(c, f)).await,
        (true, Method::PATCH) => Box::pin(update::patch::<T>(c, f)).await,
        (true, Method::DELETE) if !t.status => Box::pin(delete::delete::<T>(c, f)).await,
        (_, m) => Ok(t.method_not_allowed(&m)),
    }
}
