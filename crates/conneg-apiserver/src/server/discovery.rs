//! Discovery: `/api`, `/api/{version}`, `/apis`, `/apis/{group}`, `/apis/{group}/{version}`
//! and `/version`, from the [`Catalog`](crate::resource::Catalog), in the legacy
//! form and in the aggregated form (`apidiscovery.k8s.io/v2` `APIGroupDiscoveryList`) that
//! kubectl asks for with
//! `Accept: application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,...`.

use axum::Router;
use axum::extract::{Path, State};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use conneg::{Negotiated, Status};
use http::header::CONTENT_TYPE;
use http::{HeaderValue, StatusCode};
use serde_json::{Value, json};

use super::AppState;
use crate::endpoints::resource_not_found;
use crate::resource::{CORE_GROUP, GroupVersion, ResourceInfo, STATUS_VERBS};

/// The discovery routes.
pub(crate) fn routes() -> Router<AppState> {
    Router::new()
        .route("/api", get(api))
        .route("/apis", get(apis))
        .route("/apis/{group}", get(group))
        .route("/apis/{group}/{version}", get(resources))
        .route("/api/{version}", get(core_resources))
        .route("/version", get(version))
        .route("/", get(index))
}

/// `/`: the list of served paths, as Kubernetes' index.
async fn index(State(st): State<AppState>, n: Negotiated) -> Response {
    let paths = [
        "/api",
        "/apis",
        "/healthz",
        "/healthz/etcd",
        "/healthz/log",
        "/healthz/ping",
        "/livez",
        "/metrics",
        "/openapi/v2",
        "/openapi/v3",
        "/openapi/v3/",
        "/readyz",
        "/version",
    ];
    let mut paths: Vec<String> = paths.iter().map(|p| (*p).to_owned()).collect();
    paths.extend(
        st.ctx
            .registry
            .catalog
            .get()
            .groups()
            .iter()
            .map(|g| format!("/apis/{g}")),
    );
    paths.extend(
        st.ctx
            .registry
            .catalog
            .get()
            .versions()
            .map(GroupVersion::path),
    );
    paths.sort_unstable();
    n.response(StatusCode::OK, &json!({ "paths": paths }))
        .into_response()
}

/// `/version`.
pub(crate) fn version_info() -> Value {
    json!({
        "major": "1",
        "minor": "32",
        "gitVersion": concat!("v1.32.0-conneg+", env!("CARGO_PKG_VERSION")),
        "gitCommit": "",
        "gitTreeState": "clean",
        "buildDate": "1970-01-01T00:00:00Z",
        "goVersion": "n/a (rust)",
        "compiler": "rustc",
        "platform": format!("{}/{}", std::env::consts::OS, std::env::consts::ARCH),
    })
}

async fn version(n: Negotiated) -> Response {
    n.response(StatusCode::OK, &version_info()).into_response()
}

/// The aggregated form, with its own `Content-Type` (client-go checks it).
fn aggregated(n: &Negotiated, list: &Value) -> Response {
    let mut resp = n.response(StatusCode::OK, list).into_response();
    let ct = format!(
        "{};g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList",
        n.response_codec().media_type()
    );
    if let Ok(v) = HeaderValue::from_str(&ct) {
        resp.headers_mut().insert(CONTENT_TYPE, v);
    }
    resp
}

fn discovery_list(items: Vec<Value>) -> Value {
    json!({
        "kind": "APIGroupDiscoveryList",
        "apiVersion": "apidiscovery.k8s.io/v2",
        "metadata": {},
        "items": items,
    })
}

async fn api(State(st): State<AppState>, n: Negotiated) -> Response {
    let versions = st.ctx.registry.catalog.get().versions_of(CORE_GROUP);
    if n.conversion().is_some() {
        let groups = if versions.is_empty() {
            Vec::new()
        } else {
            vec![group_discovery(&st, CORE_GROUP)]
        };
        return aggregated(&n, &discovery_list(groups));
    }
    let names: Vec<&str> = versions.iter().map(|v| v.version()).collect();
    n.response(
        StatusCode::OK,
        &json!({"kind": "APIVersions", "versions": names, "serverAddressByClientCIDRs": []}),
    )
    .into_response()
}

fn group_version(v: GroupVersion) -> Value {
    json!({"groupVersion": v.api_version(), "version": v.version()})
}

/// The legacy `APIGroup` of `group`, its versions preferred first.
fn api_group(st: &AppState, group: &str) -> Value {
    let versions = st.ctx.registry.catalog.get().versions_of(group);
    json!({
        "kind": "APIGroup",
        "apiVersion": "v1",
        "name": group,
        "versions": versions.iter().map(|v| group_version(*v)).collect::<Vec<_>>(),
        "preferredVersion": versions.first().map(|v| group_version(*v)),
    })
}

async fn apis(State(st): State<AppState>, n: Negotiated) -> Response {
    let groups = st.ctx.registry.catalog.get().groups();
    if n.conversion().is_some() {
        let items = groups.iter().map(|g| group_discovery(&st, g)).collect();
        return aggregated(&n, &discovery_list(items));
    }
    let groups: Vec<Value> = groups
        .iter()
        .map(|g| {
            let mut g = api_group(&st, g);
            if let Some(m) = g.as_object_mut() {
                m.remove("kind");
                m.remove("apiVersion");
            }
            g
        })
        .collect();
    n.response(
        StatusCode::OK,
        &json!({"kind": "APIGroupList", "apiVersion": "v1", "groups": groups}),
    )
    .into_response()
}

async fn group(
    State(st): State<AppState>,
    n: Negotiated,
    Path(group): Path<String>,
) -> Result<Response, Status> {
    if !st
        .ctx
        .registry
        .catalog
        .get()
        .groups()
        .contains(&group.as_str())
    {
        return Err(resource_not_found());
    }
    Ok(n.response(StatusCode::OK, &api_group(&st, &group))
        .into_response())
}

/// The `APIGroupDiscovery` of `group` (`""`: core), its versions preferred first.
fn group_discovery(st: &AppState, group: &str) -> Value {
    let versions: Vec<Value> = st
        .ctx
        .registry
        .catalog
        .get()
        .versions_of(group)
        .into_iter()
        .map(|v| {
            let resources: Vec<Value> = st
                .ctx
                .registry
                .catalog
                .get()
                .resources(v)
                .iter()
                .map(|r| {
                    let mut d = json!({
                        "resource": r.resource,
                        "responseKind": {"group": r.group, "version": v.version(), "kind": r.kind},
                        "scope": if r.namespaced { "Namespaced" } else { "Cluster" },
                        "singularResource": r.singular,
                        "verbs": r.verbs,
                    });
                    if !r.short_names.is_empty() {
                        d["shortNames"] = json!(r.short_names);
                    }
                    if !r.categories.is_empty() {
                        d["categories"] = json!(r.categories);
                    }
                    let mut subresources = Vec::new();
                    if r.status_subresource {
                        subresources.push(json!({
                            "subresource": "status",
                            "responseKind": {"group": r.group, "version": v.version(), "kind": r.kind},
                            "verbs": STATUS_VERBS,
                        }));
                    }
                    if r.scale_subresource {
                        subresources.push(json!({
                            "subresource": "scale",
                            "responseKind": {"group": "autoscaling", "version": "v1", "kind": "Scale"},
                            "verbs": STATUS_VERBS,
                        }));
                    }
                    if !subresources.is_empty() {
                        d["subresources"] = Value::Array(subresources);
                    }
                    d
                })
                .collect();
            json!({"version": v.version(), "resources": resources, "freshness": "Current"})
        })
        .collect();
    json!({
        "metadata": {"name": group, "creationTimestamp": null},
        "versions": versions,
    })
}

/// The `APIResource` entries of `r`: the resource, then its `status` subresource if any.
fn api_resources(r: &ResourceInfo) -> Vec<Value> {
    let mut d = json!({
        "name": r.resource,
        "singularName": r.singular,
        "namespaced": r.namespaced,
        "kind": r.kind,
        "verbs": r.verbs,
    });
    if !r.short_names.is_empty() {
        d["shortNames"] = json!(r.short_names);
    }
    if !r.categories.is_empty() {
        d["categories"] = json!(r.categories);
    }
    let mut out = vec![d];
    if r.status_subresource {
        out.push(json!({
            "name": format!("{}/status", r.resource),
            "singularName": "",
            "namespaced": r.namespaced,
            "kind": r.kind,
            "verbs": STATUS_VERBS,
        }));
    }
    if r.scale_subresource {
        out.push(json!({
            "name": format!("{}/scale", r.resource),
            "singularName": "",
            "namespaced": r.namespaced,
            "group": "autoscaling",
            "version": "v1",
            "kind": "Scale",
            "verbs": STATUS_VERBS,
        }));
    }
    out
}

async fn resources(
    State(st): State<AppState>,
    n: Negotiated,
    Path((group, version)): Path<(String, String)>,
) -> Result<Response, Status> {
    resource_list(&st, &n, &group, &version).ok_or_else(resource_not_found)
}

async fn core_resources(
    State(st): State<AppState>,
    n: Negotiated,
    Path(version): Path<String>,
) -> Result<Response, Status> {
    resource_list(&st, &n, CORE_GROUP, &version).ok_or_else(resource_not_found)
}

/// The `APIResourceList` of one served version of `group` (`None` when it is not served).
fn resource_list(st: &AppState, n: &Negotiated, group: &str, version: &str) -> Option<Response> {
    let v = st.ctx.registry.catalog.get().find(group, version)?;
    let list = json!({
        "kind": "APIResourceList",
        "apiVersion": "v1",
        "groupVersion": v.api_version(),
        "resources": st.ctx.registry.catalog.get().resources(v).iter().flat_map(|r| api_resources(r)).collect::<Vec<_>>(),
    });
    Some(n.response(StatusCode::OK, &list).into_response())
}
