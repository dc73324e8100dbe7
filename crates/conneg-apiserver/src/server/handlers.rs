//! The resource verbs: create, get, list, update, patch, delete, deletecollection (and watch,
//! in [`super::watch`]).
//!
//! Every request resolves the URL into a [`Target`] (version, resource, namespace, name), then
//! the [`Endpoint`] of that version and resource runs the verb, generic over the versioned
//! Rust type that serves it. The pipeline is the one Kubernetes' generic registry runs:
//!
//! * write: decode the versioned body (conneg, with `fieldValidation`) → defaults → internal →
//!   (create) admission ([`super::admission`]) → generateName → validation, or (update, patch)
//!   the update's checks → admission → storage version → storage codec →
//!   `Storage::create`/`update` (compare-and-swap on the revision); delete admits the stored
//!   object first ([`super::lifecycle`]);
//! * read: stored bytes → storage version (resourceVersion from the revision) → defaults → internal →
//!   the version in the URL → the negotiated codec (or a Table).

use std::collections::BTreeMap;
use std::sync::Arc;

use axum::Router;
use axum::body::Body;
use axum::extract::rejection::QueryRejection;
use axum::extract::{Path, Query, State};
use axum::response::{IntoResponse, Response};
use axum::routing::any;
use conneg::{Codec, Negotiated, PatchType, Status, StatusReason};
use futures_util::future::BoxFuture;
use http::{Method, StatusCode};
use serde_json::Value;

use super::kinds::Kind;
use super::lifecycle::{self, DeleteOptions};
use super::openapi::{Definitions, OpenApiSchema};
use super::{AppState, admission, field_manager, list_options, namespaces, transform, watch};
use crate::core_v1::NAMESPACES;
use crate::declarative::Validator;
use crate::meta::{HasObjectMeta, ListMeta, Time};
use crate::names;
use crate::patch;
use crate::resource::{
    CORE_GROUP, Catalog, GroupVersion, ResourceInfo, Versioned, VersionedList, VersionedObject,
};
use crate::selector::Selectors;
use crate::storage::{
    KeyValue, ListOptions, OPTIMISTIC_LOCK_MSG, Storage, StorageError, ToStatus, continue_token,
};
use crate::validation::{
    FieldError, invalid, resource_version_required, validate_object_meta,
    validate_object_meta_update,
};

/// Handler result: a response, or a `Status` the layer encodes in the negotiated format.
pub type HResult = Result<Response, Status>;

/// The resource routes (namespaced and cluster-wide forms) of named groups (`/apis/{group}`)
/// and of the core group (`/api`); `Target::resolve` answers 404 for what is not served.
pub fn routes() -> Router<AppState> {
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

/// A versioned type served over HTTP, with the internal kind behind it: every
/// [`VersionedObject`] whose internal type is a [`Kind`].
pub trait Served: VersionedObject + Send + Sync + 'static {
    /// The internal type.
    type K: Kind;
    /// To internal.
    fn into_kind(self) -> Self::K;
    /// From internal (sets apiVersion/kind).
    fn from_kind(k: Self::K) -> Self;
}

impl<T> Served for T
where
    T: VersionedObject + Send + Sync + 'static,
    T::Internal: Kind,
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
pub struct Call<'a> {
    st: &'a AppState,
    t: &'a Target,
    q: &'a Params,
    n: &'a Negotiated,
    method: Method,
    body: Body,
    ua: Option<&'a str>,
}

/// One served group version and resource, and the versioned Rust type that serves it.
#[derive(Clone, Copy)]
pub struct Endpoint {
    /// The group version.
    pub version: GroupVersion,
    /// The resource.
    pub resource: &'static ResourceInfo,
    handle: for<'a> fn(Call<'a>) -> BoxFuture<'a, HResult>,
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

/// The catalog of what `endpoints` serve: group versions in the order they first appear
/// (preferred first within a group), resources in order.
pub fn catalog_of(endpoints: &[Endpoint]) -> Catalog {
    endpoints
        .iter()
        .fold(Catalog::new(), |c, e| c.with(e.version, e.resource))
}

/// The verb a request asks of `T`'s endpoint: a collection (list, watch, create,
/// deletecollection) or one object (get, watch, update, patch, delete) or its `status`.
async fn verb<T: Served>(c: Call<'_>) -> HResult {
    let Call {
        st,
        t,
        q,
        n,
        method,
        body,
        ua,
    } = c;
    if t.name.is_none() {
        return match method {
            Method::GET if q.flag("watch") => watch::watch::<T>(st, t, q, n).await,
            Method::GET => list::<T>(st, t, q, n).await,
            Method::POST if t.namespace.is_some() || !t.resource.namespaced => {
                create::<T>(st, t, q, n, body, ua).await
            }
            Method::DELETE
                if (t.namespace.is_some() || !t.resource.namespaced)
                    && t.resource.verbs.contains(&"deletecollection") =>
            {
                delete_collection::<T>(st, t, q, n, body).await
            }
            m => Err(method_not_allowed(&m, t)),
        };
    }
    match method {
        // `?watch=true` on an object is a watch with fieldSelector=metadata.name=<name>.
        Method::GET if q.flag("watch") && !t.status => watch::watch::<T>(st, t, q, n).await,
        Method::GET => get::<T>(st, t, q, n).await,
        Method::PUT => update::<T>(st, t, q, n, body, ua).await,
        Method::PATCH => patch_object::<T>(st, t, q, n, body, ua).await,
        Method::DELETE if !t.status => delete::<T>(st, t, q, n, body).await,
        m => Err(method_not_allowed(&m, t)),
    }
}

/// What a URL names.
#[derive(Debug, Clone)]
pub struct Target {
    /// Version in the URL.
    pub version: GroupVersion,
    /// Resource in the URL.
    pub resource: &'static ResourceInfo,
    /// Namespace from `/namespaces/{ns}/` (`None`: all namespaces, or cluster-scoped).
    pub namespace: Option<String>,
    /// Object name.
    pub name: Option<String>,
    /// Whether the request is for the object's `status` subresource.
    pub status: bool,
}

impl Target {
    /// The subresource written through, as `managedFields` name it (`""`: the object).
    pub fn subresource(&self) -> &'static str {
        if self.status { "status" } else { "" }
    }

    /// Puts back in `new` what a write through this endpoint may not change (the strategy's
    /// `PrepareForUpdate`): everything but the status through `/status`, otherwise what the
    /// kind says (the status, for a kind with a status subresource).
    pub fn reset_fields<K: Kind>(&self, new: &mut K, old: &K) -> Result<(), Status> {
        if !self.status {
            new.prepare_for_update(old);
            return Ok(());
        }
        new.prepare_for_status_update(old);
        let errs = new.validate_status_update();
        if errs.is_empty() {
            Ok(())
        } else {
            Err(invalid(
                K::RESOURCE.group,
                K::RESOURCE.kind,
                &new.meta().name,
                &errs,
            ))
        }
    }

    fn resolve(p: &BTreeMap<String, String>, st: &AppState) -> Result<Self, Status> {
        let group = p.get("group").map_or(CORE_GROUP, String::as_str);
        let version = p
            .get("version")
            .and_then(|v| st.catalog.find(group, v))
            .ok_or_else(resource_not_found)?;
        let find = |r: &str| st.catalog.resource(version, r);
        // `/api/v1/namespaces/{name}/status` has the shape of a namespaced collection; as in
        // Kubernetes, it is the subresource of a namespace.
        let mut p = p.clone();
        if let (Some(ns), Some(sub), None) = (p.get("namespace"), p.get("resource"), p.get("name"))
            && find(sub).is_none()
            && find(NAMESPACES.resource).is_some()
        {
            let (ns, sub) = (ns.clone(), sub.clone());
            p.remove("namespace");
            p.insert("resource".into(), NAMESPACES.resource.into());
            p.insert("name".into(), ns);
            p.insert("subresource".into(), sub);
        }
        let resource = p
            .get("resource")
            .and_then(|r| find(r))
            .ok_or_else(resource_not_found)?;
        let namespace = p.get("namespace").cloned();
        // Cluster-scoped resources have no namespaced path.
        if namespace.is_some() && !resource.namespaced {
            return Err(resource_not_found());
        }
        let name = p.get("name").cloned();
        // The only subresource is `status`, of the kinds that have one.
        let status = match p.get("subresource").map(String::as_str) {
            None => false,
            Some("status") if resource.status_subresource => true,
            Some(_) => return Err(resource_not_found()),
        };
        // A namespaced object is only addressed inside its namespace.
        if name.is_some() && resource.namespaced && namespace.is_none() {
            return Err(resource_not_found());
        }
        for (what, v) in [("namespace", &namespace), ("name", &name)] {
            if let Some(v) = v {
                let errs = names::path_segment_name_errors(v, false);
                if v.is_empty() || !errs.is_empty() {
                    return Err(Status::bad_request(format!(
                        "invalid {what} {}: {}",
                        Status::quote(v),
                        errs.join(", ")
                    )));
                }
            }
        }
        // No object can have a name or namespace longer than the rules allow, so such a
        // request is answered without asking storage for it.
        if let Some(n) = &name
            && (n.len() > names::DNS1123_SUBDOMAIN_MAX
                || namespace
                    .as_ref()
                    .is_some_and(|ns| ns.len() > names::DNS1123_LABEL_MAX))
        {
            return Err(Status::not_found(resource.group, resource.resource, n));
        }
        Ok(Self {
            version,
            resource,
            namespace,
            name,
            status,
        })
    }

    fn name(&self) -> &str {
        self.name.as_deref().unwrap_or("")
    }

    fn key(&self, st: &AppState) -> String {
        st.keys.object(
            self.resource,
            self.namespace.as_deref().unwrap_or(""),
            self.name(),
        )
    }
}

/// Query parameters (last value wins).
#[derive(Debug, Clone, Default)]
pub struct Params(pub BTreeMap<String, String>);

impl Params {
    /// A parameter, if present and non-empty.
    pub fn get(&self, k: &str) -> Option<&str> {
        self.0.get(k).map(String::as_str).filter(|v| !v.is_empty())
    }
    /// A boolean parameter (`true`, `1`, ...), as Go's `strconv.ParseBool`.
    pub fn flag(&self, k: &str) -> bool {
        self.get(k).and_then(conneg::parse_bool) == Some(true)
    }
    fn dry_run(&self) -> Result<bool, Status> {
        match self.get("dryRun") {
            None => Ok(false),
            Some("All") => Ok(true),
            Some(other) => Err(Status::bad_request(format!(
                "dryRun: Unsupported value: {}: supported values: \"All\"",
                Status::quote(other)
            ))),
        }
    }
}

fn params(q: Result<Query<BTreeMap<String, String>>, QueryRejection>) -> Result<Params, Status> {
    q.map(|Query(m)| Params(m))
        .map_err(|e| Status::bad_request(format!("invalid query: {e}")))
}

/// 404 for a path that names no resource.
pub fn resource_not_found() -> Status {
    Status::failure(
        StatusCode::NOT_FOUND,
        StatusReason::NotFound,
        "the server could not find the requested resource",
    )
}

fn method_not_allowed(method: &Method, t: &Target) -> Status {
    Status::method_not_allowed(method.as_str(), t.resource.group, t.resource.resource)
}

/// A storage error as the API error Kubernetes answers with.
pub fn storage_status(e: StorageError, res: &ResourceInfo, name: &str) -> Status {
    if !matches!(
        e,
        StorageError::NotFound { .. } | StorageError::AlreadyExists { .. }
    ) {
        tracing::debug!(error = %e, "storage error");
    }
    e.to_status(res, name)
}

/// The User-Agent, which names the manager of a write without `fieldManager`.
fn user_agent(headers: &http::HeaderMap) -> Option<&str> {
    headers
        .get(http::header::USER_AGENT)
        .and_then(|v| v.to_str().ok())
}

/// Every resource request, handed to the endpoint of the URL's version and resource.
async fn resource(
    State(st): State<AppState>,
    method: Method,
    Path(p): Path<BTreeMap<String, String>>,
    q: Result<Query<BTreeMap<String, String>>, QueryRejection>,
    headers: http::HeaderMap,
    n: Negotiated,
    body: Body,
) -> HResult {
    let t = Target::resolve(&p, &st)?;
    let q = params(q)?;
    let endpoint = st
        .endpoints
        .iter()
        .find(|e| e.version == t.version && e.resource == t.resource)
        .ok_or_else(resource_not_found)?;
    (endpoint.handle)(Call {
        st: &st,
        t: &t,
        q: &q,
        n: &n,
        method,
        body,
        ua: user_agent(&headers),
    })
    .await
}

// ---------------------------------------------------------------------------------------------
// Conversions between stored bytes, internal and versioned objects.

/// Stored bytes → internal (defaults applied, resourceVersion from the revision).
pub fn decode_kind<K: Kind>(st: &AppState, kv: &KeyValue) -> Result<K, Status> {
    let mut stored: K::Stored = st
        .codec
        .decode(kv)
        .map_err(|e| storage_status(e, K::RESOURCE, ""))?;
    stored.apply_defaults();
    Ok(stored.into_internal())
}

/// Every object of the kind `K` (in `namespace`, or everywhere), at the current revision:
/// what an admission plugin or a controller reads where Kubernetes would read an informer.
pub async fn list_all<K: Kind>(st: &AppState, namespace: Option<&str>) -> Result<Vec<K>, Status> {
    let prefix = st.keys.collection(K::RESOURCE, namespace);
    let page = st
        .store
        .list(&prefix, ListOptions::default())
        .await
        .map_err(|e| storage_status(e, K::RESOURCE, ""))?;
    page.items.iter().map(|kv| decode_kind(st, kv)).collect()
}

/// Internal → stored bytes.
fn encode_kind<K: Kind>(st: &AppState, k: K) -> Result<(bytes::Bytes, K::Stored), Status> {
    let mut stored = K::Stored::from_internal(k);
    let bytes = st
        .codec
        .encode(&mut stored)
        .map_err(|e| storage_status(e, K::RESOURCE, ""))?;
    Ok((bytes, stored))
}

/// The body's `apiVersion`/`kind`, when given, must be the URL's.
fn check_type_meta<T: Served>(obj: &T) -> Result<(), Status> {
    let (api_version, kind) = obj.type_meta();
    let want = T::VERSION.api_version();
    if !api_version.is_empty() && api_version != want {
        return Err(Status::bad_request(format!(
            "the API version in the data ({api_version}) does not match the expected API version ({want})"
        )));
    }
    if !kind.is_empty() && kind != T::KIND {
        return Err(Status::bad_request(format!(
            "the kind in the data ({kind}) does not match the expected kind ({})",
            T::KIND
        )));
    }
    Ok(())
}

/// A decoded body as the internal kind: its `apiVersion`/`kind` checked against the URL's,
/// then the version's defaults, then the conversion. Also the defaulted object as JSON, what
/// declarative validation checks: the object in the request's version, before a lossy
/// conversion can drop a value its schema rejects.
fn defaulted_kind<T: Served>(mut obj: T) -> Result<(T::K, Value), Status> {
    check_type_meta(&obj)?;
    obj.apply_defaults();
    let versioned = to_json(&obj)?;
    Ok((obj.into_kind(), versioned))
}

fn to_json<V: serde::Serialize>(v: &V) -> Result<Value, Status> {
    serde_json::to_value(v).map_err(|e| Status::internal_error(format!("encoding object: {e}")))
}

/// The compiled declaration of `T`'s version and resource.
fn declaration<T: Served>(st: &AppState) -> Option<&Arc<Validator>> {
    st.validators.get(T::VERSION, T::RESOURCE)
}

/// The declarative validation ([`crate::declarative`]) of `versioned`, an object in `T`'s
/// version, against `old` on update (for transition rules and ratcheting).
fn declared_errors<T: Served>(
    st: &AppState,
    versioned: &Value,
    old: Option<&T::K>,
) -> Result<Vec<FieldError>, Status> {
    let Some(validator) = declaration::<T>(st) else {
        return Ok(Vec::new());
    };
    let old = old.map(|o| to_json(&T::from_kind(o.clone()))).transpose()?;
    Ok(validator.validate(versioned, old.as_ref()))
}

/// [`declared_errors`] for an update of `old` to `new`, as a 422. A write to `/status` is
/// checked as it will be stored (its spec is `old`'s), any other write as it was sent.
fn check_declared_update<T: Served>(
    st: &AppState,
    t: &Target,
    versioned: Value,
    new: &T::K,
    old: &T::K,
) -> Result<(), Status> {
    let versioned = if t.status {
        to_json(&T::from_kind(new.clone()))?
    } else {
        versioned
    };
    let errs = declared_errors::<T>(st, &versioned, Some(old))?;
    if errs.is_empty() {
        return Ok(());
    }
    let r = <T::K as Kind>::RESOURCE;
    Err(invalid(r.group, r.kind, &new.meta().name, &errs))
}

/// The namespace in the body must match the URL's; a missing one is filled in.
fn check_namespace<K: Kind>(k: &mut K, t: &Target) -> Result<(), Status> {
    let meta = k.meta_mut();
    match &t.namespace {
        Some(ns) => {
            if !meta.namespace.is_empty() && meta.namespace != *ns {
                return Err(Status::bad_request(
                    "the namespace of the provided object does not match the namespace sent on the request",
                ));
            }
            meta.namespace.clone_from(ns);
        }
        None => meta.namespace.clear(),
    }
    Ok(())
}

/// A response with `value` in the negotiated codec.
fn respond<V: serde::Serialize + ?Sized>(n: &Negotiated, code: StatusCode, value: &V) -> Response {
    n.response(code, value).into_response()
}

// ---------------------------------------------------------------------------------------------
// create

async fn create<T: Served>(
    st: &AppState,
    t: &Target,
    q: &Params,
    n: &Negotiated,
    body: Body,
    ua: Option<&str>,
) -> HResult {
    // The type is checked before the manager is recorded, which rewrites it.
    let (mut k, versioned) = defaulted_kind(n.decode_body::<T, _>(body).await?.value)?;
    let manager = field_manager::manager("CreateOptions", q.get("fieldManager"), ua)?;
    let declared = declaration::<T>(st);
    field_manager::record_update::<T>(None, &mut k, &manager, "", declared)?;
    let (code, out) = create_object::<T>(st, t, q, k, versioned).await?;
    Ok(respond(n, code, &out))
}

/// The create pipeline, shared by POST and apply-creates.
async fn create_object<T: Served>(
    st: &AppState,
    t: &Target,
    q: &Params,
    mut k: T::K,
    mut versioned: Value,
) -> Result<(StatusCode, T), Status> {
    let dry_run = q.dry_run()?;
    check_namespace(&mut k, t)?;
    {
        // Server-managed metadata (rest.BeforeCreate).
        let m = k.meta_mut();
        m.resource_version.clear();
        m.self_link.clear();
        m.uid = names::new_uid();
        m.creation_timestamp = Some(Time::now());
        m.generation = 1;
        m.deletion_timestamp = None;
        m.deletion_grace_period_seconds = None;
    }
    k.prepare_for_create();
    // Admission sees the name as requested (empty when generated).
    namespaces::admit_create(
        st,
        <T::K as Kind>::RESOURCE,
        t.namespace.as_deref().unwrap_or(""),
        &k.meta().name,
    )
    .await?;
    let namespace = t.namespace.as_deref().unwrap_or("");
    admission::admit(
        st,
        admission::Request::create(namespace, &k.meta().name, &k),
    )
    .await?;
    let generated = k.meta().name.is_empty() && !k.meta().generate_name.is_empty();
    if generated {
        let name = names::generate_name(&k.meta().generate_name);
        // Rules on `metadata.name` see the name the object gets.
        if let Some(Value::Object(m)) = versioned.get_mut("metadata") {
            m.insert("name".into(), Value::String(name.clone()));
        }
        k.meta_mut().name = name;
    }
    let mut errs = k.validate_create();
    errs.extend(declared_errors::<T>(st, &versioned, None)?);
    errs.extend(validate_object_meta(
        k.meta(),
        <T::K as Kind>::RESOURCE.namespaced,
    ));
    if !errs.is_empty() {
        return Err(invalid(
            <T::K as Kind>::RESOURCE.group,
            <T::K as Kind>::RESOURCE.kind,
            &k.meta().name,
            &errs,
        ));
    }
    let name = k.meta().name.clone();
    let key = st.keys.object(
        <T::K as Kind>::RESOURCE,
        t.namespace.as_deref().unwrap_or(""),
        &name,
    );
    let (mut bytes, mut stored) = encode_kind(st, k)?;
    if dry_run {
        return Ok((StatusCode::CREATED, T::from_kind(stored.into_internal())));
    }
    let (mut key, mut name) = (key, name);
    // A generated name that is taken is generated again (Kubernetes' RetryGenerateName).
    for attempt in 0.. {
        match st.store.create(&key, bytes.clone()).await {
            Ok(kv) => {
                stored.meta_mut().resource_version = kv.mod_revision.to_string();
                break;
            }
            Err(StorageError::AlreadyExists { .. })
                if generated && attempt < GENERATE_NAME_RETRIES =>
            {
                name = names::generate_name(&stored.meta().generate_name);
                stored.meta_mut().name.clone_from(&name);
                key = st.keys.object(
                    <T::K as Kind>::RESOURCE,
                    t.namespace.as_deref().unwrap_or(""),
                    &name,
                );
                bytes = st
                    .codec
                    .encode(&mut stored)
                    .map_err(|e| storage_status(e, <T::K as Kind>::RESOURCE, &name))?;
            }
            Err(e) => return Err(storage_status(e, <T::K as Kind>::RESOURCE, &name)),
        }
    }
    Ok((StatusCode::CREATED, T::from_kind(stored.into_internal())))
}

/// How many more names are generated when a generated name is taken.
const GENERATE_NAME_RETRIES: usize = 7;

// ---------------------------------------------------------------------------------------------
// get / list

async fn get<T: Served>(st: &AppState, t: &Target, q: &Params, n: &Negotiated) -> HResult {
    let kv = st
        .store
        .get(&t.key(st))
        .await
        .map_err(|e| storage_status(e, t.resource, t.name()))?
        .ok_or_else(|| Status::not_found(t.resource.group, t.resource.resource, t.name()))?;
    let k: T::K = decode_kind(st, &kv)?;
    if let Some(conv) = n.conversion() {
        return Ok(respond(
            n,
            StatusCode::OK,
            &transform::object::<T>(conv, q, k)?,
        ));
    }
    Ok(respond(n, StatusCode::OK, &T::from_kind(k)))
}

/// The revision a list (or the initial state of a watch) is read at, per `resourceVersion`
/// and `resourceVersionMatch` (`None`: the current revision), once validated by
/// [`list_options::ListOptions::parse`].
pub async fn list_revision(
    st: &AppState,
    res: &ResourceInfo,
    q: &Params,
) -> Result<Option<i64>, Status> {
    let Some(rv) = q.get("resourceVersion") else {
        return Ok(None);
    };
    let rv: i64 = rv.parse().map_err(|_| {
        Status::bad_request(format!(
            "invalid resource version {}: must be a non-negative integer",
            Status::quote(rv)
        ))
    })?;
    if rv == 0 {
        return Ok(None);
    }
    // Any other match was refused by `list_options::ListOptions::parse`.
    if q.get("resourceVersionMatch") == Some("Exact") {
        return Ok(Some(rv));
    }
    // NotOlderThan: serve the current state, if the store has reached `rv`.
    let current = st
        .store
        .current_revision()
        .await
        .map_err(|e| storage_status(e, res, ""))?;
    if rv > current {
        return Err(Status::timeout(
            StorageError::FutureRevision {
                requested: rv,
                current,
            }
            .to_string(),
            1,
        ));
    }
    Ok(None)
}

/// One page of matching objects.
pub struct Page<K> {
    /// Items.
    pub items: Vec<K>,
    /// List metadata (revision, continue, remaining).
    pub meta: ListMeta,
}

/// Lists the target collection honouring selectors, limit, continue and resourceVersion.
pub async fn list_kinds<K: Kind>(
    st: &AppState,
    t: &Target,
    q: &Params,
    sel: &Selectors,
) -> Result<Page<K>, Status> {
    let res = t.resource;
    let prefix = st.keys.collection(res, t.namespace.as_deref());
    let limit = match q.get("limit") {
        None => None,
        Some(l) => {
            let l: i64 = l
                .parse()
                .map_err(|_| Status::bad_request(format!("invalid limit {}", Status::quote(l))))?;
            usize::try_from(l).ok().filter(|l| *l > 0)
        }
    };
    let (mut start, mut revision) = match q.get("continue") {
        Some(tok) => {
            if q.get("resourceVersion").is_some_and(|rv| rv != "0") {
                return Err(Status::bad_request(
                    "specifying resource version is not allowed when using continue",
                ));
            }
            let (key, rv) = continue_token::decode(tok, &prefix)
                .map_err(|e| Status::bad_request(format!("invalid continue token: {e}")))?;
            (Some(key), Some(rv))
        }
        None => (None, list_revision(st, res, q).await?),
    };
    let mut items = Vec::new();
    loop {
        let want = limit.map(|l| l - items.len());
        let page = match st
            .store
            .list(
                &prefix,
                ListOptions {
                    revision,
                    start_key: start.take(),
                    limit: want,
                },
            )
            .await
        {
            Ok(p) => p,
            Err(StorageError::Gone { .. }) if q.get("continue").is_some() => {
                return Err(Status::expired(
                    continue_token::CONTINUE_EXPIRED_MSG.to_owned(),
                ));
            }
            Err(e) => return Err(storage_status(e, res, "")),
        };
        for kv in &page.items {
            let k: K = decode_kind(st, kv)?;
            if sel.matches(k.meta()) {
                items.push(k);
            }
        }
        revision = Some(page.revision);
        let full = limit.is_some_and(|l| items.len() >= l);
        if !page.more() || full {
            let mut meta = ListMeta {
                resource_version: page.revision.to_string(),
                ..Default::default()
            };
            if page.more() {
                meta.continue_ = continue_token::for_next_page(&page, &prefix)
                    .map_err(Status::internal_error)?
                    .unwrap_or_default();
                if sel.is_empty() {
                    meta.remaining_item_count = i64::try_from(page.remaining).ok();
                }
            }
            return Ok(Page { items, meta });
        }
        start = page.next_start_key();
    }
}

fn selectors(q: &Params) -> Result<Selectors, Status> {
    Selectors::parse(q.get("labelSelector"), q.get("fieldSelector"))
        .map_err(|e| Status::bad_request(e.0))
}

async fn list<T: Served>(st: &AppState, t: &Target, q: &Params, n: &Negotiated) -> HResult {
    list_options::ListOptions::parse(q)?;
    let sel = selectors(q)?;
    let page = list_kinds::<T::K>(st, t, q, &sel).await?;
    if let Some(conv) = n.conversion() {
        let shaped = transform::list::<T>(conv, q, page.items, page.meta)?;
        return Ok(respond(n, StatusCode::OK, &shaped));
    }
    let list = T::List::from_items(
        page.meta,
        page.items.into_iter().map(T::from_kind).collect(),
    );
    Ok(respond(n, StatusCode::OK, &list))
}

// ---------------------------------------------------------------------------------------------
// update / patch

/// Carries server-managed metadata over from `old` and validates the change
/// (rest.BeforeUpdate; the fields the endpoint may not change were put back by
/// [`Target::reset_fields`]): uid and creationTimestamp are kept, generation moves on when the
/// spec changed, and a deletion once started cannot be undone or changed.
fn prepare_update<K: Kind>(new: &mut K, old: &K) -> Result<(), Status> {
    let same = new.same_spec(old);
    let om = old.meta();
    let nm = new.meta_mut();
    if nm.uid.is_empty() {
        nm.uid.clone_from(&om.uid);
    }
    nm.creation_timestamp = om.creation_timestamp;
    nm.generation = om.generation + i64::from(!same);
    if om.deletion_timestamp.is_some() {
        nm.deletion_timestamp = om.deletion_timestamp;
    }
    if nm.deletion_grace_period_seconds.is_none() {
        nm.deletion_grace_period_seconds = om.deletion_grace_period_seconds;
    }
    nm.self_link.clear();
    let errs = validate_object_meta_update(new.meta(), old.meta());
    if errs.is_empty() {
        Ok(())
    } else {
        Err(invalid(
            K::RESOURCE.group,
            K::RESOURCE.kind,
            &new.meta().name,
            &errs,
        ))
    }
}

/// Writes `new` over `old`, the object stored at `expected` revision; or, when `new` drops
/// the last finalizer of an object being deleted, deletes it and answers `old` (see
/// [`lifecycle`]). `Ok(None)` on a revision conflict (the caller decides: 409 or retry).
pub(super) async fn write_update<K: Kind>(
    st: &AppState,
    key: &str,
    name: &str,
    new: K,
    old: &K,
    expected: i64,
    dry_run: bool,
) -> Result<Option<K>, Status> {
    if lifecycle::deletes_on_update(&new, old) {
        return lifecycle::remove(st, key, name, old.clone(), expected, dry_run).await;
    }
    let (bytes, mut stored) = encode_kind(st, new)?;
    if dry_run {
        stored.meta_mut().resource_version = expected.to_string();
        return Ok(Some(stored.into_internal()));
    }
    match st.store.update(key, bytes, expected).await {
        Ok(r) => {
            stored.meta_mut().resource_version = r.kv.mod_revision.to_string();
            Ok(Some(stored.into_internal()))
        }
        Err(StorageError::Conflict { .. }) => Ok(None),
        Err(e) => Err(storage_status(e, K::RESOURCE, name)),
    }
}

fn conflict(res: &ResourceInfo, name: &str) -> Status {
    Status::conflict(res.group, res.resource, name, OPTIMISTIC_LOCK_MSG)
}

fn check_name<K: Kind>(k: &K, t: &Target) -> Result<(), Status> {
    let name = &k.meta().name;
    if name != t.name() {
        return Err(Status::bad_request(format!(
            "the name of the object ({name}) does not match the name on the URL ({})",
            t.name()
        )));
    }
    Ok(())
}

async fn update<T: Served>(
    st: &AppState,
    t: &Target,
    q: &Params,
    n: &Negotiated,
    body: Body,
    ua: Option<&str>,
) -> HResult {
    let (mut new, versioned) = defaulted_kind(n.decode_body::<T, _>(body).await?.value)?;
    let dry_run = q.dry_run()?;
    check_namespace(&mut new, t)?;
    check_name(&new, t)?;
    let rv = new.meta().resource_version.clone();
    if rv.is_empty() {
        return Err(resource_version_required(
            t.resource.group,
            t.resource.resource,
            t.name(),
        ));
    }
    let expected: i64 = rv.parse().map_err(|_| {
        Status::bad_request(format!(
            "metadata.resourceVersion: Invalid value: {}: must be an integer",
            Status::quote(&rv)
        ))
    })?;
    let key = t.key(st);
    let kv = st
        .store
        .get(&key)
        .await
        .map_err(|e| storage_status(e, t.resource, t.name()))?
        .ok_or_else(|| Status::not_found(t.resource.group, t.resource.resource, t.name()))?;
    if kv.mod_revision != expected {
        return Err(conflict(t.resource, t.name()));
    }
    let old: T::K = decode_kind(st, &kv)?;
    let manager = field_manager::manager("UpdateOptions", q.get("fieldManager"), ua)?;
    t.reset_fields(&mut new, &old)?;
    let declared = declaration::<T>(st);
    field_manager::record_update::<T>(Some(&old), &mut new, &manager, t.subresource(), declared)?;
    prepare_update(&mut new, &old)?;
    check_declared_update::<T>(st, t, versioned, &new, &old)?;
    let namespace = t.namespace.as_deref().unwrap_or("");
    admission::admit(st, admission::Request::update(namespace, &new, &old)).await?;
    match write_update(st, &key, t.name(), new, &old, expected, dry_run).await? {
        Some(k) => Ok(respond(n, StatusCode::OK, &T::from_kind(k))),
        None => Err(conflict(t.resource, t.name())),
    }
}

/// Kubernetes' error for an apply without `fieldManager`.
fn field_manager_required() -> Status {
    Status::failure(
        StatusCode::UNPROCESSABLE_ENTITY,
        StatusReason::Invalid,
        "PatchOptions.meta.k8s.io \"\" is invalid: fieldManager: Required value: is required for apply patch",
    )
    .with_details(conneg::StatusDetails {
        group: "meta.k8s.io".into(),
        kind: "PatchOptions".into(),
        causes: vec![conneg::StatusCause::new(
            "FieldValueRequired",
            "Required value: is required for apply patch",
            "fieldManager",
        )],
        ..Default::default()
    })
}

/// Runs `f` on the blocking pool, at most [`AppState::blocking`] at a time: parsing, patching
/// and decoding a patch cost time that grows with the body and the stored object, and on an
/// async worker they would stall every other request on it (`/readyz` included).
async fn off_worker<R: Send + 'static>(
    st: &AppState,
    f: impl FnOnce() -> Result<R, Status> + Send + 'static,
) -> Result<R, Status> {
    let _permit = st
        .blocking
        .acquire()
        .await
        .map_err(|e| Status::internal_error(format!("blocking pool closed: {e}")))?;
    tokio::task::spawn_blocking(f)
        .await
        .map_err(|e| Status::internal_error(format!("patch task failed: {e}")))?
}

/// Waits before retrying a write that lost a compare-and-swap race: a yield for the first
/// retries, then a short sleep that doubles up to ~16 ms, jittered so that racing writers
/// spread out. Retries go on while the request lives; `--request-timeout` bounds them.
#[derive(Debug, Default)]
pub(super) struct ConflictBackoff {
    attempt: u32,
}

impl ConflictBackoff {
    pub(super) async fn wait(&mut self) {
        self.attempt = self.attempt.saturating_add(1);
        if self.attempt <= 2 {
            tokio::task::yield_now().await;
            return;
        }
        let ceiling_us = 250u64 << self.attempt.min(8).saturating_sub(3);
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| u64::from(d.subsec_nanos()));
        let jitter = nanos % ceiling_us.max(1);
        tokio::time::sleep(std::time::Duration::from_micros(
            ceiling_us / 2 + jitter / 2,
        ))
        .await;
    }
}

async fn patch_object<T: Served>(
    st: &AppState,
    t: &Target,
    q: &Params,
    n: &Negotiated,
    body: Body,
    ua: Option<&str>,
) -> HResult {
    let Some(kind) = n.patch_type() else {
        return Err(Status::unsupported_media_type(
            &PatchType::all()
                .iter()
                .map(|p| p.media_type())
                .collect::<Vec<_>>()
                .join(", "),
        ));
    };
    let raw = conneg::read_body(body, n.body_limit()).await?;
    let doc = Arc::new(off_worker(st, move || patch::parse(kind, &raw)).await?);
    if kind.is_apply() && q.get("fieldManager").is_none() {
        return Err(field_manager_required());
    }
    let dry_run = q.dry_run()?;
    let manager = field_manager::manager("PatchOptions", q.get("fieldManager"), ua)?;
    let force = q.flag("force");
    let key = t.key(st);
    let mut backoff = ConflictBackoff::default();
    loop {
        let current = st
            .store
            .get(&key)
            .await
            .map_err(|e| storage_status(e, t.resource, t.name()))?;
        let Some(kv) = current else {
            // Only an apply to the object itself creates it.
            if !kind.is_apply() || t.status {
                return Err(Status::not_found(
                    t.resource.group,
                    t.resource.resource,
                    t.name(),
                ));
            }
            // Server-side apply creates what does not exist.
            let (decoded, warnings) = {
                let (doc, n, manager) = (doc.clone(), n.clone(), manager.clone());
                let declared = declaration::<T>(st).cloned();
                off_worker(st, move || {
                    let applied = field_manager::apply::<T>(
                        None,
                        &doc,
                        &manager,
                        ("", declared.as_ref()),
                        force,
                    )?;
                    decode_json::<T>(&applied, &n)
                })
                .await?
            };
            let (mut k, versioned) = defaulted_kind(decoded)?;
            if k.meta().name.is_empty() {
                k.meta_mut().name = t.name().to_owned();
            }
            check_name(&k, t)?;
            let (code, out) = create_object::<T>(st, t, q, k, versioned).await?;
            let mut resp = respond(n, code, &out);
            conneg::append_warnings(resp.headers_mut(), &warnings);
            return Ok(resp);
        };
        let old: T::K = decode_kind(st, &kv)?;
        let (obj, warnings) = {
            let (doc, n, current, manager) = (doc.clone(), n.clone(), old.clone(), manager.clone());
            let declared = declaration::<T>(st).cloned();
            let subresource = t.subresource();
            off_worker(st, move || {
                let patched = if kind.is_apply() {
                    field_manager::apply::<T>(
                        Some(&current),
                        &doc,
                        &manager,
                        (subresource, declared.as_ref()),
                        force,
                    )?
                } else {
                    let current_json =
                        serde_json::to_value(T::from_kind(current)).map_err(|e| {
                            Status::internal_error(format!("encoding current object: {e}"))
                        })?;
                    patch::apply(kind, current_json, &doc)?
                };
                decode_json::<T>(&patched, &n)
            })
            .await?
        };
        let (mut new, versioned) = defaulted_kind(obj)?;
        check_namespace(&mut new, t)?;
        check_name(&new, t)?;
        // A resourceVersion in the patch is the client's precondition: a mismatch is 409.
        // Without one the current revision is used, and a lost race is retried until it
        // applies, as Kubernetes does.
        let current_rv = kv.mod_revision.to_string();
        let pinned =
            !new.meta().resource_version.is_empty() && new.meta().resource_version != current_rv;
        if pinned {
            return Err(conflict(t.resource, t.name()));
        }
        new.meta_mut().resource_version = current_rv;
        t.reset_fields(&mut new, &old)?;
        if !kind.is_apply() {
            let declared = declaration::<T>(st);
            field_manager::record_update::<T>(
                Some(&old),
                &mut new,
                &manager,
                t.subresource(),
                declared,
            )?;
        }
        prepare_update(&mut new, &old)?;
        check_declared_update::<T>(st, t, versioned, &new, &old)?;
        let namespace = t.namespace.as_deref().unwrap_or("");
        admission::admit(st, admission::Request::update(namespace, &new, &old)).await?;
        if let Some(k) =
            write_update(st, &key, t.name(), new, &old, kv.mod_revision, dry_run).await?
        {
            let mut resp = respond(n, StatusCode::OK, &T::from_kind(k));
            conneg::append_warnings(resp.headers_mut(), &warnings);
            return Ok(resp);
        }
        backoff.wait().await;
    }
}

/// Decodes a patched JSON document into `T` under the request's field validation; returns
/// it with the warnings that validation produced.
fn decode_json<T: Served>(doc: &Value, n: &Negotiated) -> Result<(T, Vec<String>), Status> {
    let bytes = serde_json::to_vec(doc)
        .map_err(|e| Status::internal_error(format!("encoding patched object: {e}")))?;
    let decoded = Codec::Json.decode::<T>(&bytes, n.field_validation())?;
    Ok((decoded.value, decoded.warnings))
}

// ---------------------------------------------------------------------------------------------
// delete

async fn delete<T: Served>(
    st: &AppState,
    t: &Target,
    q: &Params,
    n: &Negotiated,
    body: Body,
) -> HResult {
    let raw = conneg::read_body(body, n.body_limit()).await?;
    let opts = DeleteOptions::read(&raw, n.request_codec(), q)?;
    let out = lifecycle::delete_object::<T::K>(st, &t.key(st), t.name(), &opts)
        .await?
        .ok_or_else(|| Status::not_found(t.resource.group, t.resource.resource, t.name()))?;
    let code = opts.status_code(out.deleted);
    if !out.deleted || <T::K as Kind>::RETURN_DELETED_OBJECT {
        return Ok(respond(n, code, &T::from_kind(out.object)));
    }
    Ok(deleted_status::<T>(n, code, &out.object))
}

/// The answer to a DELETE that removed the object, for a kind that does not return it
/// ([`Kind::RETURN_DELETED_OBJECT`]): a `Status` of `Success` naming it (the details' `kind`
/// is the resource, as Kubernetes writes it). An object kept for its finalizers is answered
/// with itself.
fn deleted_status<T: Served>(n: &Negotiated, code: StatusCode, k: &T::K) -> Response {
    let res = <T::K as Kind>::RESOURCE;
    let meta = k.meta();
    let status = Status {
        code: 0,
        ..Status::success().with_details(conneg::StatusDetails {
            name: meta.name.clone(),
            group: res.group.to_owned(),
            kind: res.resource.to_owned(),
            uid: meta.uid.clone(),
            ..Default::default()
        })
    };
    respond(n, code, &status)
}

async fn delete_collection<T: Served>(
    st: &AppState,
    t: &Target,
    q: &Params,
    n: &Negotiated,
    body: Body,
) -> HResult {
    let raw = conneg::read_body(body, n.body_limit()).await?;
    let opts = DeleteOptions::read(&raw, n.request_codec(), q)?;
    let sel = selectors(q)?;
    let page = list_kinds::<T::K>(st, t, &Params::default(), &sel).await?;
    // Each object is deleted as a DELETE of it would; one gone meanwhile is skipped. The
    // answer lists the objects as they were listed, as Kubernetes answers.
    for k in &page.items {
        let (namespace, name) = (&k.meta().namespace, &k.meta().name);
        let key = st.keys.object(t.resource, namespace, name);
        lifecycle::delete_object::<T::K>(st, &key, name, &opts).await?;
    }
    let list = T::List::from_items(
        page.meta,
        page.items.into_iter().map(T::from_kind).collect(),
    );
    Ok(respond(n, StatusCode::OK, &list))
}
