//! What a request names and asks: the [`Target`] of its URL and its query [`Params`], and the
//! checks of a body against them.

use std::collections::BTreeMap;

use axum::extract::Query;
use axum::extract::rejection::QueryRejection;
use axum::response::{IntoResponse, Response};
use conneg::Status;
use http::{HeaderValue, Method, header};

use super::validate::valid;
use super::{StatusError, resource_not_found};
use crate::names;
use crate::registry::{Object, Registry, status};
use crate::resource::{CORE_GROUP, Catalog, GroupVersion, ResourceInfo};
use crate::selector::Selectors;

/// The resource whose name is the `/namespaces/{namespace}/` segment of namespaced paths.
const NAMESPACES: &str = "namespaces";

/// What a URL names.
#[derive(Debug, Clone)]
pub(crate) struct Target {
    /// Version in the URL.
    pub(crate) version: GroupVersion,
    /// Resource in the URL.
    pub(crate) resource: &'static ResourceInfo,
    /// Namespace from `/namespaces/{ns}/` (`None`: all namespaces, or cluster-scoped).
    pub(crate) namespace: Option<String>,
    /// Object name.
    pub(crate) name: Option<String>,
    /// Whether the request is for the object's `status` subresource.
    pub(crate) status: bool,
    /// Whether the request is for the object's `scale` subresource.
    pub(crate) scale: bool,
}

impl Target {
    /// The subresource written through, as `managedFields` name it (`""`: the object).
    pub(crate) fn subresource(&self) -> &'static str {
        match (self.status, self.scale) {
            (true, _) => "status",
            (_, true) => "scale",
            _ => "",
        }
    }

    /// Puts back in `new` what a write through this endpoint may not change (the strategy's
    /// `PrepareForUpdate`): for a kind with a status subresource, the status through the
    /// object and everything but the status through `/status` ([`status`]); then what the
    /// kind's own strategy keeps.
    pub(crate) fn reset_fields<K: Object>(&self, new: &mut K, old: &K) -> Result<(), StatusError> {
        if !self.status {
            if self.resource.status_subresource {
                status::keep_status(new, old)?;
            }
            new.prepare_for_update(old);
            return Ok(());
        }
        status::status_only(new, old)?;
        new.prepare_for_status_update(old);
        Ok(valid(self.resource, new, new.validate_status_update())?)
    }

    /// Resolves the path parameters of a resource route against what `catalog` serves: 404
    /// for what is not served, 400 for a name or namespace no object can have.
    pub(crate) fn resolve(
        mut p: BTreeMap<String, String>,
        catalog: &Catalog,
    ) -> Result<Self, StatusError> {
        let group = p.get("group").map_or(CORE_GROUP, String::as_str);
        let version = p
            .get("version")
            .and_then(|v| catalog.find(group, v))
            .ok_or_else(resource_not_found)?;
        let find = |r: &str| catalog.resource(version, r);
        // `/api/v1/namespaces/{name}/status` has the shape of a namespaced collection; as in
        // Kubernetes, it is the subresource of a namespace.
        if let (Some(_), Some(sub), None) = (p.get("namespace"), p.get("resource"), p.get("name"))
            && find(sub).is_none()
            && find(NAMESPACES).is_some()
            && let (Some(ns), Some(sub)) = (p.remove("namespace"), p.remove("resource"))
        {
            p.insert("resource".into(), NAMESPACES.into());
            p.insert("name".into(), ns);
            p.insert("subresource".into(), sub);
        }
        let resource = p
            .get("resource")
            .and_then(|r| find(r))
            .ok_or_else(resource_not_found)?;
        let namespace = p.remove("namespace");
        // Cluster-scoped resources have no namespaced path.
        if namespace.is_some() && !resource.namespaced {
            return Err(resource_not_found().into());
        }
        let name = p.remove("name");
        // The subresources are `status` and `scale`, of the kinds that have them.
        let (status, scale) = match p.get("subresource").map(String::as_str) {
            None => (false, false),
            Some("status") if resource.status_subresource => (true, false),
            Some("scale") if resource.scale_subresource => (false, true),
            Some(_) => return Err(resource_not_found().into()),
        };
        // A namespaced object is only addressed inside its namespace.
        if name.is_some() && resource.namespaced && namespace.is_none() {
            return Err(resource_not_found().into());
        }
        for (what, v) in [("namespace", &namespace), ("name", &name)] {
            if let Some(v) = v {
                let errs = names::path_segment_name_errors(v, false);
                if v.is_empty() || !errs.is_empty() {
                    return Err(Status::bad_request(format!(
                        "invalid {what} {}: {}",
                        Status::quote(v),
                        errs.join(", ")
                    ))
                    .into());
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
            return Err(Status::not_found(resource.group, resource.resource, n).into());
        }
        Ok(Self {
            version,
            resource,
            namespace,
            name,
            status,
            scale,
        })
    }

    /// The object's name (`""` for a collection).
    pub(crate) fn name(&self) -> &str {
        self.name.as_deref().unwrap_or("")
    }

    /// 404 for the object the URL names.
    pub(crate) fn not_found(&self) -> Status {
        Status::not_found(self.resource.group, self.resource.resource, self.name())
    }

    /// The namespace (`""` for all namespaces or a cluster-scoped resource).
    pub(crate) fn namespace(&self) -> &str {
        self.namespace.as_deref().unwrap_or("")
    }

    /// The methods this target serves, in the order `Allow` lists them: a collection is
    /// listed (and watched), and, in a namespace or when cluster-scoped, created into and
    /// deleted (when the resource has `deletecollection`); an object is read, replaced,
    /// patched and deleted; its `status` and `scale` are read, replaced and patched.
    pub(crate) fn allowed(&self) -> &'static [Method] {
        const READ_ONLY: &[Method] = &[Method::GET];
        const CREATE: &[Method] = &[Method::GET, Method::POST];
        const COLLECTION: &[Method] = &[Method::GET, Method::POST, Method::DELETE];
        const OBJECT: &[Method] = &[Method::GET, Method::PUT, Method::PATCH, Method::DELETE];
        const SUBRESOURCE: &[Method] = &[Method::GET, Method::PUT, Method::PATCH];
        if self.name.is_some() {
            return if self.status || self.scale {
                SUBRESOURCE
            } else {
                OBJECT
            };
        }
        if self.namespace.is_none() && self.resource.namespaced {
            READ_ONLY
        } else if self.resource.verbs.contains(&"deletecollection") {
            COLLECTION
        } else {
            CREATE
        }
    }

    /// 405 for a method this target does not serve, with the `Allow` header RFC 9110
    /// §15.5.6 requires (Kubernetes sends none).
    pub(crate) fn method_not_allowed(&self, method: &Method) -> Response {
        let r = self.resource;
        let mut resp =
            Status::method_not_allowed(method.as_str(), r.group, r.resource).into_response();
        let allow: Vec<&str> = self.allowed().iter().map(Method::as_str).collect();
        if let Ok(v) = HeaderValue::from_str(&allow.join(", ")) {
            resp.headers_mut().insert(header::ALLOW, v);
        }
        resp
    }

    /// The storage key of the named object.
    pub(crate) fn key(&self, registry: &Registry) -> String {
        registry
            .keys
            .object(self.resource, self.namespace(), self.name())
    }
}

/// Query parameters: the first value of each, as Kubernetes converts its options.
#[derive(Debug, Clone, Default)]
pub(crate) struct Params(pub(crate) BTreeMap<String, String>);

impl Params {
    /// A parameter, if present and non-empty.
    pub(crate) fn get(&self, k: &str) -> Option<&str> {
        self.0.get(k).map(String::as_str).filter(|v| !v.is_empty())
    }
    /// A boolean option (`watch`, `allowWatchBookmarks`, `force`, ...), `None` when absent:
    /// false for `0` and `false` in any case, true for anything else ([`conneg::option_bool`],
    /// apimachinery's `Convert_Slice_string_To_bool`).
    pub(crate) fn option(&self, k: &str) -> Option<bool> {
        self.0.get(k).map(|v| conneg::option_bool(v))
    }
    /// A boolean option ([`Params::option`]), false when absent.
    pub(crate) fn flag(&self, k: &str) -> bool {
        self.option(k) == Some(true)
    }
    /// `dryRun`: `All` or nothing.
    pub(crate) fn dry_run(&self) -> Result<bool, StatusError> {
        match self.get("dryRun") {
            None => Ok(false),
            Some("All") => Ok(true),
            Some(other) => Err(Status::bad_request(format!(
                "dryRun: Unsupported value: {}: supported values: \"All\"",
                Status::quote(other)
            ))
            .into()),
        }
    }
}

impl Params {
    /// The query of a request, the first value of each parameter; 400 when it does not
    /// parse.
    pub(crate) fn from_query(
        q: Result<Query<Vec<(String, String)>>, QueryRejection>,
    ) -> Result<Self, StatusError> {
        let Query(pairs) = q.map_err(|e| Status::bad_request(format!("invalid query: {e}")))?;
        let mut m = BTreeMap::new();
        for (k, v) in pairs {
            m.entry(k).or_insert(v);
        }
        Ok(Self(m))
    }

    /// The label and field selectors.
    pub(crate) fn selectors(&self) -> Result<Selectors, StatusError> {
        Ok(
            Selectors::parse(self.get("labelSelector"), self.get("fieldSelector"))
                .map_err(|e| Status::bad_request(e.0))?,
        )
    }
}

/// The namespace in the body must match the URL's; a missing one is filled in.
pub(super) fn check_namespace<K: Object>(k: &mut K, t: &Target) -> Result<(), StatusError> {
    let meta = k.meta_mut();
    match &t.namespace {
        Some(ns) => {
            if !meta.namespace.is_empty() && meta.namespace != *ns {
                return Err(Status::bad_request(
                    "the namespace of the provided object does not match the namespace sent on the request",
                ).into());
            }
            meta.namespace.clone_from(ns);
        }
        None => meta.namespace.clear(),
    }
    Ok(())
}

/// The name in the body must match the URL's.
pub(super) fn check_name<K: Object>(k: &K, t: &Target) -> Result<(), StatusError> {
    let name = &k.meta().name;
    if name != t.name() {
        return Err(Status::bad_request(format!(
            "the name of the object ({name}) does not match the name on the URL ({})",
            t.name()
        ))
        .into());
    }
    Ok(())
}
