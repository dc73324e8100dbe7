//! Discovery: `/api`, `/api/v1` (core v1 namespaces, when standalone), `/apis`,
//! `/apis/wardle.example.com`, `/apis/wardle.example.com/{v}` and `/version`, in the legacy form and in the aggregated form (`apidiscovery.k8s.io/v2`
//! `APIGroupDiscoveryList`) that kubectl asks for with
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
use super::handlers::resource_not_found;
use crate::api::{CORE_GROUP, GROUP, ResourceInfo, STATUS_VERBS, Version};

/// The discovery routes.
pub fn routes() -> Router<AppState> {
    Router::new()
        .route("/api", get(api))
        .route("/apis", get(apis))
        .route("/apis/wardle.example.com", get(group))
        .route("/apis/wardle.example.com/{version}", get(resources))
        .route("/api/{version}", get(core_resources))
        .route("/version", get(version))
        .route("/", get(index))
}

/// `/`: the list of served paths, as Kubernetes' index.
async fn index(State(st): State<AppState>, n: Negotiated) -> Response {
    let core = st.serves(Version::CoreV1).then(|| Version::CoreV1.path());
    let paths = [
        "/api",
        "/apis",
        "/apis/wardle.example.com",
        "/apis/wardle.example.com/v1alpha1",
        "/apis/wardle.example.com/v1beta1",
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
    paths.extend(core);
    paths.sort_unstable();
    n.response(StatusCode::OK, &json!({ "paths": paths }))
        .into_response()
}

/// `/version`.
pub fn version_info() -> Value {
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

/// The served core versions: `[v1]` standalone, none behind an aggregator.
fn core_versions(st: &AppState) -> Vec<Version> {
    [Version::CoreV1]
        .into_iter()
        .filter(|v| st.serves(*v))
        .collect()
}

async fn api(State(st): State<AppState>, n: Negotiated) -> Response {
    let versions = core_versions(&st);
    if n.conversion().is_some() {
        let groups = if versions.is_empty() {
            Vec::new()
        } else {
            vec![group_discovery(CORE_GROUP, &versions)]
        };
        return aggregated(&n, &discovery_list(groups));
    }
    let names: Vec<&str> = versions.iter().map(|v| v.as_str()).collect();
    n.response(
        StatusCode::OK,
        &json!({"kind": "APIVersions", "versions": names, "serverAddressByClientCIDRs": []}),
    )
    .into_response()
}

fn group_version(v: Version) -> Value {
    json!({"groupVersion": v.api_version(), "version": v.as_str()})
}

/// The legacy `APIGroup` of wardle.example.com.
pub fn api_group() -> Value {
    json!({
        "kind": "APIGroup",
        "apiVersion": "v1",
        "name": GROUP,
        "versions": Version::PRIORITY.iter().map(|v| group_version(*v)).collect::<Vec<_>>(),
        "preferredVersion": group_version(Version::PRIORITY[0]),
    })
}

async fn apis(n: Negotiated) -> Response {
    if n.conversion().is_some() {
        return aggregated(&n, &discovery_list(vec![aggregated_group()]));
    }
    let mut g = api_group();
    if let Some(m) = g.as_object_mut() {
        m.remove("kind");
        m.remove("apiVersion");
    }
    n.response(
        StatusCode::OK,
        &json!({"kind": "APIGroupList", "apiVersion": "v1", "groups": [g]}),
    )
    .into_response()
}

async fn group(n: Negotiated) -> Response {
    n.response(StatusCode::OK, &api_group()).into_response()
}

/// The `APIGroupDiscovery` of wardle.example.com.
pub fn aggregated_group() -> Value {
    group_discovery(GROUP, &Version::PRIORITY)
}

/// The `APIGroupDiscovery` of `group` (`""`: core) with `versions`, preferred first.
fn group_discovery(group: &str, versions: &[Version]) -> Value {
    let versions: Vec<Value> = versions
        .iter()
        .map(|v| {
            let resources: Vec<Value> = v
                .resources()
                .iter()
                .map(|r| {
                    let mut d = json!({
                        "resource": r.resource,
                        "responseKind": {"group": r.group, "version": v.as_str(), "kind": r.kind},
                        "scope": if r.namespaced { "Namespaced" } else { "Cluster" },
                        "singularResource": r.singular,
                        "verbs": r.verbs,
                    });
                    if !r.short_names.is_empty() {
                        d["shortNames"] = json!(r.short_names);
                    }
                    if r.status_subresource {
                        d["subresources"] = json!([{
                            "subresource": "status",
                            "responseKind": {"group": r.group, "version": v.as_str(), "kind": r.kind},
                            "verbs": STATUS_VERBS,
                        }]);
                    }
                    d
                })
                .collect();
            json!({"version": v.as_str(), "resources": resources, "freshness": "Current"})
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
    out
}

async fn resources(
    State(st): State<AppState>,
    n: Negotiated,
    Path(version): Path<String>,
) -> Result<Response, Status> {
    resource_list(&st, &n, GROUP, &version)
}

async fn core_resources(
    State(st): State<AppState>,
    n: Negotiated,
    Path(version): Path<String>,
) -> Result<Response, Status> {
    resource_list(&st, &n, CORE_GROUP, &version)
}

/// The `APIResourceList` of one served version of `group`.
fn resource_list(
    st: &AppState,
    n: &Negotiated,
    group: &str,
    version: &str,
) -> Result<Response, Status> {
    let v = Version::parse_in(group, version)
        .filter(|v| st.serves(*v))
        .ok_or_else(resource_not_found)?;
    let list = json!({
        "kind": "APIResourceList",
        "apiVersion": "v1",
        "groupVersion": v.api_version(),
        "resources": v.resources().iter().flat_map(|r| api_resources(r)).collect::<Vec<_>>(),
    });
    Ok(n.response(StatusCode::OK, &list).into_response())
}
