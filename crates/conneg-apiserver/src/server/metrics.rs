//! `/metrics` in Prometheus text format, and the middleware that feeds it.
//!
//! Two small `axum::middleware::from_fn` layers:
//! * [`capture`] sits *inside* each [`conneg::NegotiateLayer`] and copies the request's
//!   [`Negotiated`] into the response extensions;
//! * [`layer`] wraps the whole router and counts every answer — including the layer's own
//!   406/415/413 — by verb, group, version, resource, code, and the negotiated request and
//!   response media types (`apiserver_request_total`), so an operator sees CBOR in use
//!   (KEP-4222 asks for exactly that), and by HTTP version
//!   (`apiserver_requests_by_protocol_total`: an HTTP/2 stream is a request), so an operator
//!   sees which clients multiplex.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::sync::Mutex;
use std::time::Instant;

use axum::extract::{Request, State};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use conneg::{Negotiated, RequestFormat};
use http::header::CONTENT_TYPE;
use http::{HeaderValue, Method};

use super::AppState;

/// The labels of one counter.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct Labels {
    /// Kubernetes-style verb: GET, LIST, WATCH, POST, PUT, PATCH, APPLY, DELETE, DELETECOLLECTION.
    pub verb: &'static str,
    /// API group (empty for non-resource paths).
    pub group: String,
    /// API version.
    pub version: String,
    /// Resource, or for non-resource requests the path family (`/apis`, `/openapi/v3`...).
    pub resource: String,
    /// HTTP status code.
    pub code: u16,
    /// The request body's media type (empty without a body).
    pub request_content_type: String,
    /// The response's media type.
    pub response_content_type: String,
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
    protocols: Mutex<BTreeMap<&'static str, u64>>,
}

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
        let protocol = match version {
            http::Version::HTTP_2 => "HTTP/2.0",
            http::Version::HTTP_11 => "HTTP/1.1",
            http::Version::HTTP_10 => "HTTP/1.0",
            _ => "other",
        };
        if let Ok(mut m) = self.protocols.lock() {
            *m.entry(protocol).or_default() += 1;
        }
    }

    fn record(&self, labels: Labels, seconds: f64) {
        if let Ok(mut m) = self.requests.lock() {
            let c = m.entry(labels).or_default();
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
        let protocols = self.protocols.lock().map(|m| m.clone()).unwrap_or_default();
        out.push_str("# HELP apiserver_requests_by_protocol_total Counter of requests broken out by HTTP version (an HTTP/2 stream is a request).\n");
        out.push_str("# TYPE apiserver_requests_by_protocol_total counter\n");
        for (protocol, n) in &protocols {
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
    let mut r = text.into_response();
    r.headers_mut().insert(
        CONTENT_TYPE,
        HeaderValue::from_static("text/plain; version=0.0.4; charset=utf-8"),
    );
    r
}

/// Inner middleware: hands the negotiation result to [`layer`].
pub(crate) async fn capture(req: Request, next: Next) -> Response {
    let negotiated = req.extensions().get::<Negotiated>().cloned();
    let mut resp = next.run(req).await;
    if let Some(n) = negotiated {
        resp.extensions_mut().insert(n);
    }
    resp
}

fn essence(v: Option<&HeaderValue>) -> String {
    v.and_then(|v| v.to_str().ok())
        .map(|s| {
            s.split(';')
                .next()
                .unwrap_or("")
                .trim()
                .to_ascii_lowercase()
        })
        .unwrap_or_default()
}

/// Splits a path into (group, version, resource, has name) for resource requests.
fn classify(path: &str) -> Option<(String, String, String, bool)> {
    let rest = path.strip_prefix("/apis/")?;
    let segs: Vec<&str> = rest.split('/').filter(|s| !s.is_empty()).collect();
    let (group, version) = (segs.first()?, segs.get(1)?);
    let tail = &segs[2..];
    let tail = if tail.first() == Some(&"namespaces") && tail.len() >= 3 {
        &tail[2..]
    } else {
        tail
    };
    let resource = tail.first()?;
    Some((
        (*group).to_owned(),
        (*version).to_owned(),
        (*resource).to_owned(),
        tail.len() > 1,
    ))
}

fn path_family(path: &str) -> String {
    for p in [
        "/openapi/v3",
        "/openapi/v2",
        "/apis",
        "/api",
        "/version",
        "/healthz",
        "/livez",
        "/readyz",
        "/metrics",
    ] {
        if path == p || path.starts_with(&format!("{p}/")) {
            return p.to_owned();
        }
    }
    "other".to_owned()
}

/// Outer middleware: counts every request.
pub(crate) async fn layer(State(st): State<AppState>, req: Request, next: Next) -> Response {
    let start = Instant::now();
    let method = req.method().clone();
    let path = req.uri().path().to_owned();
    let watch = req.uri().query().is_some_and(|q| {
        q.split('&')
            .any(|p| matches!(p, "watch=true" | "watch=1" | "watch=True" | "watch=t"))
    });
    let req_ct = essence(req.headers().get(CONTENT_TYPE));
    st.metrics.count_protocol(req.version());
    let resp = next.run(req).await;
    let (group, version, resource, verb) = match classify(&path) {
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
            (String::new(), String::new(), path_family(&path), verb)
        }
    };
    let negotiated = resp.extensions().get::<Negotiated>();
    let request_content_type = match negotiated.and_then(Negotiated::request_format) {
        Some(RequestFormat::Codec(c)) => c.media_type().to_owned(),
        Some(RequestFormat::Patch(p)) => p.media_type().to_owned(),
        None => req_ct,
    };
    let mut response_content_type = essence(resp.headers().get(CONTENT_TYPE));
    if response_content_type.is_empty()
        && let Some(n) = negotiated
    {
        response_content_type = n.response_codec().media_type().to_owned();
    }
    st.metrics.record(
        Labels {
            verb,
            group,
            version,
            resource,
            code: resp.status().as_u16(),
            request_content_type,
            response_content_type,
        },
        start.elapsed().as_secs_f64(),
    );
    resp
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classifies_paths() {
        assert_eq!(
            classify("/apis/wardle.example.com/v1beta1/namespaces/default/flunders/x"),
            Some((
                "wardle.example.com".into(),
                "v1beta1".into(),
                "flunders".into(),
                true
            ))
        );
        assert_eq!(
            classify("/apis/wardle.example.com/v1alpha1/fischers"),
            Some((
                "wardle.example.com".into(),
                "v1alpha1".into(),
                "fischers".into(),
                false
            ))
        );
        assert_eq!(classify("/apis/wardle.example.com"), None);
        assert_eq!(path_family("/openapi/v3/apis/x"), "/openapi/v3");
        assert_eq!(path_family("/x"), "other");
    }
}
