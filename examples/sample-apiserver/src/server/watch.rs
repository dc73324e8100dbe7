//! `?watch=true`: a stream of events (conneg's [`WatchResponse`]: JSON lines or a CBOR
//! Sequence in the negotiated codec).
//!
//! * `resourceVersion` unset or `"0"`: the current state first, as synthetic `ADDED` events,
//!   then changes from that revision (Kubernetes' "Get State and Start at Most Recent").
//! * `resourceVersion=N`: changes after `N`; 410 `Expired` if `N` has been compacted.
//! * Selectors: an object that stops matching is sent as `DELETED`, one that starts matching
//!   as `ADDED`, as Kubernetes' filtered watches do.
//! * `allowWatchBookmarks=true`: a `BOOKMARK` with the last revision after 10 s of quiet.
//! * `timeoutSeconds`: the stream ends cleanly then (default 30 minutes).
//! * A watcher that falls too far behind gets an `ERROR` event (410 Expired) and the stream
//!   ends; the client re-lists, as client-go does.
//! * With `as=Table`, each object is a one-row Table (column definitions on the first).

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};
use std::time::Duration;

use axum::body::Body;
use conneg::watch::{WatchEvent, WatchResponse};
use conneg::{Negotiated, Status};
use futures_util::StreamExt;
use futures_util::stream;
use serde::Serialize;
use serde_json::{Value, json};

use super::AppState;
use super::handlers::{HResult, Params, Served, Target, decode_kind, list_kinds, storage_status};
use super::kinds::Kind;
use super::table;
use crate::api::Versioned;
use crate::meta::HasObjectMeta;
use crate::selector::Selectors;
use crate::storage::{Event, EventType, KeyValue, Storage, StorageError};

/// How long a watch lasts without `timeoutSeconds` (Kubernetes: 30–60 minutes).
const DEFAULT_TIMEOUT_SECS: u64 = 1800;
/// The longest watch this server grants (a day).
const MAX_TIMEOUT_SECS: u64 = 86_400;
/// Quiet time before a bookmark.
const BOOKMARK_EVERY: Duration = Duration::from_secs(10);

/// The object of an event: the typed object, or a JSON value (Table, bookmark).
#[derive(Serialize)]
#[serde(untagged)]
pub enum Obj<T> {
    /// A typed object.
    Typed(T),
    /// Any other shape.
    Json(Value),
}

struct Filter {
    sel: Selectors,
    name: Option<String>,
}

impl Filter {
    fn matches(&self, meta: &crate::meta::ObjectMeta) -> bool {
        self.name.as_ref().is_none_or(|n| *n == meta.name) && self.sel.matches(meta)
    }
}

/// Serves a watch on the target collection (or object).
pub async fn watch<T: Served>(st: &AppState, t: &Target, q: &Params, n: &Negotiated) -> HResult {
    let sel = Selectors::parse(q.get("labelSelector"), q.get("fieldSelector"))
        .map_err(|e| Status::bad_request(e.0))?;
    let filter = Arc::new(Filter {
        sel,
        name: t.name.clone(),
    });
    let timeout = match q.get("timeoutSeconds") {
        None => DEFAULT_TIMEOUT_SECS,
        Some(s) => match s.parse::<u64>() {
            Ok(0) => DEFAULT_TIMEOUT_SECS,
            Ok(n) => n.min(MAX_TIMEOUT_SECS),
            Err(_) => return Err(Status::bad_request(format!("invalid timeoutSeconds {s:?}"))),
        },
    };
    let bookmarks = q.flag("allowWatchBookmarks");
    let prefix = st.keys.collection(t.resource, t.namespace.as_deref());

    // Where to start, and the initial state when starting "now".
    let (initial, from) = match q.get("resourceVersion") {
        None | Some("0") => {
            let page = list_kinds::<T::K>(st, t, &Params::default(), &filter.sel).await?;
            let rev: i64 = page.meta.resource_version.parse().unwrap_or(0);
            let items: Vec<T::K> = page
                .items
                .into_iter()
                .filter(|k| filter.matches(k.meta()))
                .collect();
            (items, rev)
        }
        Some(rv) => {
            let rev: i64 = rv
                .parse()
                .map_err(|_| Status::bad_request(format!("invalid resource version {rv:?}")))?;
            (Vec::new(), rev)
        }
    };
    let events = st
        .store
        .watch(&prefix, from)
        .await
        .map_err(|e| storage_status(e, t.resource, ""))?;

    let last_rev = Arc::new(AtomicI64::new(from));
    let table = n.conversion().cloned();
    let headers_sent = Arc::new(AtomicBool::new(false));
    let q = q.clone();
    let shape = {
        let headers_sent = headers_sent.clone();
        move |k: T::K| -> Obj<T> {
            match &table {
                Some(conv) => {
                    let first = !headers_sent.swap(true, Ordering::Relaxed);
                    match table::event_table::<T>(conv, &q, k, first) {
                        Ok(v) => Obj::Json(v),
                        Err(s) => Obj::Json(serde_json::to_value(s).unwrap_or(Value::Null)),
                    }
                }
                None => Obj::Typed(T::from_kind(k)),
            }
        }
    };
    let shape = Arc::new(shape);

    let initial = {
        let shape = shape.clone();
        stream::iter(
            initial
                .into_iter()
                .map(move |k| WatchEvent::Added(shape(k))),
        )
    };
    let live = {
        let st = st.clone();
        let last_rev = last_rev.clone();
        events.filter_map(move |item| {
            let out = match item {
                Ok(ev) => {
                    last_rev.store(ev.revision(), Ordering::Relaxed);
                    translate::<T>(&st, &filter, &ev).map(|e| e.map(|k| shape(k)))
                }
                Err(e) => Some(WatchEvent::Error(error_status(e))),
            };
            std::future::ready(out)
        })
    };
    // The stream ends after an ERROR event.
    let mut failed = false;
    let live = live.take_while(move |e| {
        let go = !failed;
        failed = matches!(e, WatchEvent::Error(_));
        std::future::ready(go)
    });

    let mut response = WatchResponse::new(n).timeout_seconds(Some(timeout));
    if bookmarks {
        response = response.heartbeat(BOOKMARK_EVERY, move || {
            WatchEvent::Bookmark(bookmark::<T>(last_rev.load(Ordering::Relaxed)))
        });
    }
    let resp = response.events(initial.chain(live));
    Ok(resp.map(Body::new))
}

fn error_status(e: StorageError) -> Status {
    match e {
        StorageError::WatchLagged { .. } | StorageError::Gone { .. } => {
            crate::error::ApiError::expired(e.to_string()).into()
        }
        other => Status::internal_error(other),
    }
}

/// Turns a storage event into the event a watcher with `filter` sees (or none).
fn translate<T: Served>(st: &AppState, filter: &Filter, ev: &Event) -> Option<WatchEvent<T::K>> {
    let decode = |kv: &KeyValue| decode_kind::<T::K>(st, kv).ok();
    match ev.kind {
        EventType::Added => {
            let k = decode(&ev.kv)?;
            filter.matches(k.meta()).then_some(WatchEvent::Added(k))
        }
        EventType::Modified => {
            let k = decode(&ev.kv)?;
            let now = filter.matches(k.meta());
            let before = ev
                .prev
                .as_ref()
                .and_then(decode)
                .is_some_and(|old| filter.matches(old.meta()));
            match (before, now) {
                (true, true) => Some(WatchEvent::Modified(k)),
                (false, true) => Some(WatchEvent::Added(k)),
                (true, false) => Some(WatchEvent::Deleted(k)),
                (false, false) => None,
            }
        }
        EventType::Deleted => {
            let mut stored: <T::K as Kind>::Stored = st.codec.decode_event(ev).ok()?;
            stored.apply_defaults();
            let k = stored.into_internal();
            filter.matches(k.meta()).then_some(WatchEvent::Deleted(k))
        }
    }
}

/// A `BOOKMARK` object: only `apiVersion`, `kind` and `metadata.resourceVersion`.
pub fn bookmark<T: Served>(rev: i64) -> Value {
    json!({
        "kind": T::KIND,
        "apiVersion": T::VERSION.api_version(),
        "metadata": {"resourceVersion": rev.to_string()},
    })
}
