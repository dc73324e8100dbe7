//! `/metrics` in Prometheus text format, and the middleware that feeds it.
//!
//! The filter around the whole router counts every answer — including the negotiation layer's
//! own 406/415/413 — by verb, group, version, resource, code, and the negotiated request and
//! response media types (`apiserver_request_total`, read from the [`Negotiated`] that
//! [`conneg::NegotiateLayer`] leaves in the response's extensions), so an operator sees CBOR
//! in use (KEP-4222 asks for exactly that), and by HTTP version
//! (`apiserver_requests_by_protocol_total`: an HTTP/2 stream is a request), so an operator
//! sees which clients multiplex.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::future::Future;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use axum::extract::{Request, State};
use axum::response::{IntoResponse, Response};
use conneg::{Negotiated, RequestFormat};
use http::header::CONTENT_TYPE;
use http::{HeaderValue, Method};

use super::AppState;
use crate::middleware::{Inner, Middleware, Next};

/// The labels of one counter.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct Labels {
    /// Kubernetes-style verb: GET, LIST, WATCH, POST, PUT, PATCH, APPLY, DELETE, DELETECOLLECTION.
    pub(crate) verb: &'static str,
    /// API group (empty for non-resource paths).
    pub(crate) group: String,
    /// API version.
    pub(crate) version: String,
    /// Resource, or for non-resource requests the path family (`/apis`, `/openapi/v3`...).
    pub(crate) resource: String,
    /// HTTP status code.
    pub(crate) code: u16,
    /// The request body's media type (empty without a body).
    pub(crate) request_content_type: String,
    /// The response's media type.
    pub(crate) response_content_type: String,
}

/// [`Labels`] borrowed from a request, to find its counter without building the labels
/// (they are built once, when a counter is new). Ordered as [`Labels`] (field by field).
#[derive(Debug, PartialEq, Eq, PartialOrd, Ord)]
struct LabelsRef<'a> {
    verb: &'static str,
    group: &'a str,
    version: &'a str,
    resource: &'a str,
    code: u16,
    request_content_type: &'a str,
    response_content_type: &'a str,
}

/// What [`Labels`] and [`LabelsRef`] have in common: the key of a counter.
trait LabelsKey {
    fn key(&self) -> LabelsRef<'_>;
}

impl LabelsKey for Labels {
    fn key(&self) -> LabelsRef<'_> {
        LabelsRef {
            verb: self.verb,
            group: &self.group,
            version: &self.version,
            resource: &self.resource,
            code: self.code,
            request_content_type: &self.request_content_type,
            response_content_type: &self.response_content_type,
        }
    }
}

impl LabelsKey for LabelsRef<'_> {
    fn key(&self) -> LabelsRef<'_> {
        LabelsRef { ..*self }
    }
}

impl<'a> std::borrow::Borrow<dyn LabelsKey + 'a> for Labels {
    fn borrow(&self) -> &(dyn LabelsKey + 'a) {
        self
    }
}

impl PartialEq for dyn LabelsKey + '_ {
    fn eq(&self, other: &Self) -> bool {
        self.key() == other.key()
    }
}

impl Eq for dyn LabelsKey + '_ {}

impl PartialOrd for dyn LabelsKey + '_ {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for dyn LabelsKey + '_ {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.key().cmp(&other.key())
    }
}

impl LabelsRef<'_> {
    fn to_owned(&self) -> Labels {
        Labels {
            verb: self.verb,
            group: self.group.to_owned(),
            version: self.version.to_owned(),
            resource: self.resource.to_owned(),
            code: self.code,
            request_content_type: self.request_content_type.to_owned(),
            response_content_type: self.response_content_type.to_owned(),
        }
    }
}

#[derive(Debug, Default, Clone, Copy)]
struct Counter {
    count: u64,
    seconds: f64,
}

/// The counters.
#[derive(Debug, Default)]
pub struct Metrics {
    requests: Mutex<BTreeMap<Labels, Counter>>,
    users: Mutex<BTreeMap<&'static str, u64>>,
    /// By [`PROTOCOLS`], in its order.
    protocols: [AtomicU64; PROTOCOLS.len()],
}

/// The `protocol` label of `apiserver_requests_by_protocol_total`, in the order rendered.
const PROTOCOLS: [&str; 4] = ["HTTP/1.0", "HTTP/1.1", "HTTP/2.0", "other"];

/// Kubernetes' `compressUsername`: the user label of `authenticated_user_requests`, a handful
/// of values whatever the users (a label per user would grow without bound).
fn compress_username(name: &str) -> &'static str {
    match name {
        "admin" => "admin",
        "client" => "client",
        "kube_proxy" => "kube_proxy",
        "kubelet" => "kubelet",
        "system:serviceaccount:kube-system:default" => "system:serviceaccount:kube-system:default",
        n if n.contains('@') => "email_id",
        _ => "other",
    }
}

impl Metrics {
    /// Counts an authenticated request of `user` (`authenticated_user_requests`).
    pub fn count_user(&self, user: &str) {
        if let Ok(mut m) = self.users.lock() {
            *m.entry(compress_username(user)).or_default() += 1;
        }
    }

    fn count_protocol(&self, version: http::Version) {
        let at = match version {
            http::Version::HTTP_10 => 0,
            http::Version::HTTP_11 => 1,
            http::Version::HTTP_2 => 2,
            _ => 3,
        };
        self.protocols[at].fetch_add(1, Ordering::Relaxed);
    }

    fn record(&self, labels: &LabelsRef<'_>, seconds: f64) {
        if let Ok(mut m) = self.requests.lock() {
            let c = match m.get_mut(labels as &dyn LabelsKey) {
                Some(c) => c,
                None => m.entry(labels.to_owned()).or_default(),
            };
            c.count += 1;
            c.seconds += seconds;
        }
    }

    /// The exposition text.
    pub fn render(&self) -> String {
        let m = match self.requests.lock() {
            Ok(m) => m.clone(),
            Err(_) => BTreeMap::new(),
        };
        let mut out = String::new();
        out.push_str("# HELP apiserver_request_total Counter of apiserver requests broken out for each verb, group, version, resource, HTTP response code and negotiated request and response media type.\n");
        out.push_str("# TYPE apiserver_request_total counter\n");
        for (l, c) in &m {
            let _ = writeln!(out, "apiserver_request_total{{{}}} {}", labels(l), c.count);
        }
        out.push_str("# HELP apiserver_request_duration_seconds_sum Total time spent answering requests (until the response head), by the same labels.\n");
        out.push_str("# TYPE apiserver_request_duration_seconds_sum counter\n");
        for (l, c) in &m {
            let _ = writeln!(
                out,
                "apiserver_request_duration_seconds_sum{{{}}} {}",
                labels(l),
                c.seconds
            );
        }
        let users = self.users.lock().map(|m| m.clone()).unwrap_or_default();
        out.push_str("# HELP authenticated_user_requests Counter of authenticated requests broken out by username.\n");
        out.push_str("# TYPE authenticated_user_requests counter\n");
        for (user, n) in &users {
            let _ = writeln!(
                out,
                "authenticated_user_requests{{username=\"{user}\"}} {n}"
            );
        }
        out.push_str("# HELP apiserver_requests_by_protocol_total Counter of requests broken out by HTTP version (an HTTP/2 stream is a request).\n");
        out.push_str("# TYPE apiserver_requests_by_protocol_total counter\n");
        for (protocol, n) in PROTOCOLS.iter().zip(&self.protocols) {
            let n = n.load(Ordering::Relaxed);
            if n == 0 {
                continue;
            }
            let _ = writeln!(
                out,
                "apiserver_requests_by_protocol_total{{protocol=\"{protocol}\"}} {n}"
            );
        }
        out
    }
}

fn esc(s: &str) -> String {
    s.replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}

fn labels(l: &Labels) -> String {
    format!(
        "verb=\"{}\",group=\"{}\",version=\"{}\",resource=\"{}\",code=\"{}\",request_content_type=\"{}\",response_content_type=\"{}\"",
        l.verb,
        esc(&l.group),
        esc(&l.version),
        esc(&l.resource),
        l.code,
        esc(&l.request_content_type),
        esc(&l.response_content_type)
    )
}

/// `GET /metrics`.
pub(crate) async fn serve(State(st): State<AppState>) -> Response {
    let mut text = st.metrics.render();
    text.push_str(&st.flowcontrol.render_metrics());
    if let Some(commits) = st.ctx.registry.store.commits() {
        text.push_str("# HELP conneg_storage_commits_total Transactions the embedded store has committed, each with the writes group commit gathered into it (one fsync each).\n");
        text.push_str("# TYPE conneg_storage_commits_total counter\n");
        let _ = writeln!(text, "conneg_storage_commits_total {commits}");
    }
    let mut r = text.into_response();
    r.headers_mut().insert(
        CONTENT_TYPE,
        HeaderValue::from_static("text/plain; version=0.0.4; charset=utf-8"),
    );
    r
}

/// The media type of a `Content-Type` without its parameters, lower-case (copied only when
/// it is not already).
fn essence(v: Option<&HeaderValue>) -> Cow<'_, str> {
    let s = v
        .and_then(|v| v.to_str().ok())
        .and_then(|s| s.split(';').next())
        .unwrap_or("")
        .trim();
    if s.bytes().any(|b| b.is_ascii_uppercase()) {
        Cow::Owned(s.to_ascii_lowercase())
    } else {
        Cow::Borrowed(s)
    }
}

/// Splits a path into (group, version, resource, has name) for resource requests.
fn classify(path: &str) -> Option<(&str, &str, &str, bool)> {
    let rest = path.strip_prefix("/apis/")?;
    let mut segs = rest.split('/').filter(|s| !s.is_empty());
    let (group, version) = (segs.next()?, segs.next()?);
    let mut resource = segs.next()?;
    let mut named = segs.next();
    // `namespaces/{namespace}/{resource}`.
    if resource == "namespaces"
        && named.is_some()
        && let Some(r) = segs.next()
    {
        resource = r;
        named = segs.next();
    }
    Some((group, version, resource, named.is_some()))
}

fn path_family(path: &str) -> &'static str {
    [
        "/openapi/v3",
        "/openapi/v2",
        "/apis",
        "/api",
        "/version",
        "/healthz",
        "/livez",
        "/readyz",
        "/metrics",
    ]
    .into_iter()
    .find(|p| {
        path.strip_prefix(p)
            .is_some_and(|rest| rest.is_empty() || rest.starts_with('/'))
    })
    .unwrap_or("other")
}

/// The filter: counts every request. Nothing is copied from the request but handles (its URI
/// and `Content-Type` share the bytes hyper read).
impl Middleware for Arc<Metrics> {
    fn run<S: Inner>(self, req: Request, next: Next<S>) -> impl Future<Output = Response> + Send {
        layer(self, req, next)
    }
}

async fn layer<S: Inner>(metrics: Arc<Metrics>, req: Request, next: Next<S>) -> Response {
    let start = Instant::now();
    let method = req.method().clone();
    let uri = req.uri().clone();
    let req_ct = req.headers().get(CONTENT_TYPE).cloned();
    metrics.count_protocol(req.version());
    let resp = next.run(req).await;
    let path = uri.path();
    let watch = uri.query().is_some_and(|q| {
        q.split('&')
            .any(|p| matches!(p, "watch=true" | "watch=1" | "watch=True" | "watch=t"))
    });
    let req_ct = essence(req_ct.as_ref());
    let (group, version, resource, verb) = match classify(path) {
        Some((g, v, r, named)) => {
            let verb = match method {
                Method::GET if watch => "WATCH",
                Method::GET if named => "GET",
                Method::GET => "LIST",
                Method::POST => "POST",
                Method::PUT => "PUT",
                Method::PATCH if req_ct.starts_with("application/apply-patch") => "APPLY",
                Method::PATCH => "PATCH",
                Method::DELETE if named => "DELETE",
                Method::DELETE => "DELETECOLLECTION",
                _ => "OTHER",
            };
            (g, v, r, verb)
        }
        None => {
            let verb = match method {
                Method::GET => "GET",
                Method::HEAD => "HEAD",
                _ => "OTHER",
            };
            ("", "", path_family(path), verb)
        }
    };
    let negotiated = resp.extensions().get::<Negotiated>();
    let request_content_type = match negotiated.and_then(Negotiated::request_format) {
        Some(RequestFormat::Codec(c)) => c.media_type(),
        Some(RequestFormat::Patch(p)) => p.media_type(),
        None => &req_ct,
    };
    let mut response_content_type = essence(resp.headers().get(CONTENT_TYPE));
    if response_content_type.is_empty()
        && let Some(n) = negotiated
    {
        response_content_type = Cow::Borrowed(n.response_codec().media_type());
    }
    metrics.record(
        &LabelsRef {
            verb,
            group,
            version,
            resource,
            code: resp.status().as_u16(),
            request_content_type,
            response_content_type: &response_content_type,
        },
        start.elapsed().as_secs_f64(),
    );
    resp
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(verb: &'static str, resource: &'static str, code: u16) -> LabelsRef<'static> {
        LabelsRef {
            verb,
            group: "wardle.example.com",
            version: "v1beta1",
            resource,
            code,
            request_content_type: "",
            response_content_type: "application/json",
        }
    }

    /// A request's borrowed labels find the counter made by the first request with the same
    /// labels, and only that one, whatever the order the counters were made in.
    #[test]
    fn borrowed_labels_find_their_counter() {
        let m = Metrics::default();
        let keys = [
            key("GET", "flunders", 200),
            key("LIST", "flunders", 200),
            key("GET", "fischers", 404),
            key("GET", "flunders", 404),
            key("DELETE", "flunders", 200),
        ];
        for round in 0..3 {
            for (i, k) in keys.iter().enumerate() {
                if i <= round + 2 {
                    m.record(k, 0.5);
                }
            }
        }
        let counters = m.requests.lock().unwrap();
        assert_eq!(counters.len(), keys.len());
        let counts: Vec<u64> = keys
            .iter()
            .map(|k| counters[k as &dyn LabelsKey].count)
            .collect();
        assert_eq!(counts, [3, 3, 3, 2, 1]);
        for (labels, _) in counters.iter() {
            assert_eq!(labels, &labels.key().to_owned());
        }
    }

    #[test]
    fn classifies_paths() {
        assert_eq!(
            classify("/apis/wardle.example.com/v1beta1/namespaces/default/flunders/x"),
            Some(("wardle.example.com", "v1beta1", "flunders", true))
        );
        assert_eq!(
            classify("/apis/wardle.example.com/v1alpha1/fischers"),
            Some(("wardle.example.com", "v1alpha1", "fischers", false))
        );
        assert_eq!(classify("/apis/wardle.example.com"), None);
        assert_eq!(path_family("/openapi/v3/apis/x"), "/openapi/v3");
        assert_eq!(path_family("/x"), "other");
        assert_eq!(path_family("/healthz"), "/healthz");
        assert_eq!(path_family("/healthzx"), "other");
        assert_eq!(
            classify("/apis/wardle.example.com/v1beta1/namespaces/default/flunders"),
            Some(("wardle.example.com", "v1beta1", "flunders", false))
        );
        assert_eq!(
            classify("/apis/wardle.example.com/v1beta1/namespaces/default"),
            Some(("wardle.example.com", "v1beta1", "namespaces", true))
        );
    }
}
