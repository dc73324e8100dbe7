//! `/healthz`, `/livez`, `/readyz` and their per-check subpaths (`/healthz/ping`,
//! `/readyz/etcd`, ...), in Kubernetes' plain-text form (`ok`; with `?verbose`, one
//! `[+]<check> ok` line per check). The storage check is named after the backend
//! ([`Store::check_name`](crate::storage::Store::check_name)): `etcd`, `storage-redb` or
//! `storage-memory`.

use axum::Router;
use axum::extract::{Path, RawQuery, State};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use http::StatusCode;
use http::header::{CONTENT_TYPE, HeaderValue};

use super::AppState;
use crate::storage::{Storage, Store};

/// The health routes.
pub(crate) fn routes() -> Router<AppState> {
    let mut r = Router::new();
    for base in ["/healthz", "/livez", "/readyz"] {
        r = r
            .route(base, get(all))
            .route(&format!("{base}/{{check}}"), get(one));
    }
    r
}

/// The checks, in order: Kubernetes' `ping` and `log`, then the storage's.
fn checks(store: &Store) -> [&'static str; 3] {
    ["ping", "log", store.check_name()]
}

async fn run(store: &Store, check: &str) -> Result<(), String> {
    match check {
        "ping" | "log" => Ok(()),
        _ => store.ready().await.map_err(|e| e.to_string()),
    }
}

fn text(code: StatusCode, body: String) -> Response {
    let mut r = (code, body).into_response();
    r.headers_mut().insert(
        CONTENT_TYPE,
        HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    r.headers_mut().insert(
        "x-content-type-options",
        HeaderValue::from_static("nosniff"),
    );
    r
}

async fn all(State(store): State<Store>, RawQuery(q): RawQuery) -> Response {
    let verbose = q.is_some_and(|q| {
        q.split('&')
            .any(|p| p == "verbose" || p.starts_with("verbose="))
    });
    let checks = checks(&store);
    let mut results = [Ok(()), Ok(()), Ok(())];
    for (c, r) in checks.iter().zip(&mut results) {
        *r = run(&store, c).await;
    }
    let failed = results.iter().any(Result::is_err);
    if !failed && !verbose {
        return text(StatusCode::OK, "ok".into());
    }
    // The lines only for an answer that shows them.
    let mut lines = String::new();
    for (c, r) in checks.iter().zip(&results) {
        match r {
            Ok(()) => lines.push_str(&format!("[+]{c} ok\n")),
            Err(e) => lines.push_str(&format!("[-]{c} failed: {e}\n")),
        }
    }
    if failed {
        return text(
            StatusCode::INTERNAL_SERVER_ERROR,
            format!("{lines}healthz check failed\n"),
        );
    }
    text(StatusCode::OK, format!("{lines}healthz check passed\n"))
}

async fn one(State(store): State<Store>, Path(check): Path<String>) -> Response {
    if !checks(&store).contains(&check.as_str()) {
        return text(StatusCode::NOT_FOUND, "404 page not found\n".into());
    }
    match run(&store, &check).await {
        Ok(()) => text(StatusCode::OK, "ok".into()),
        Err(e) => text(
            StatusCode::INTERNAL_SERVER_ERROR,
            format!("internal server error: {e}\n"),
        ),
    }
}
