//! `?watch=true`: a stream of events (conneg's [`WatchResponse`]: JSON lines or a CBOR
//! Sequence in the negotiated codec).
//!
//! * `resourceVersion` unset or `"0"`: the current state first, as synthetic `ADDED` events,
//!   then changes from that revision (Kubernetes' "Get State and Start at Most Recent").
//! * `resourceVersion=N`: changes after `N`; 410 `Expired` if `N` has been compacted.
//! * Watch-list (`sendInitialEvents=true&resourceVersionMatch=NotOlderThan`, any
//!   `resourceVersion`): the state not older than `N` as `ADDED` events and, with
//!   `allowWatchBookmarks=true`, a `BOOKMARK` annotated `k8s.io/initial-events-end` at the
//!   revision that state was read at; then changes. `sendInitialEvents=false`: changes only.
//!   The options are defaulted and validated in [`super::list_options`].
//! * Selectors: an object that stops matching is sent as `DELETED`, one that starts matching
//!   as `ADDED`, as Kubernetes' filtered watches do.
//! * `allowWatchBookmarks=true`: a `BOOKMARK` with the last revision after 10 s of quiet.
//! * `timeoutSeconds`: the stream ends cleanly then (default 30 minutes).
//! * The initial state is read at its revision a page (500 objects) at a time, each page when
//!   the stream reaches it, and each object is decoded and encoded only when its event goes
//!   out: a watcher holds one page of stored bytes, not the state. An object that cannot be
//!   decoded, or a page that can no longer be read, is an `ERROR` event, which ends the stream.
//!   Without a conversion, an initial event is made around the object's kept encoded form
//!   ([`super::encoded`]), which lists, GETs and other watches share: an object already sent
//!   at its revision is not decoded or encoded again. A selector or an object name is checked
//!   against the stored metadata alone (name, namespace, labels), read without the rest.
//! * A watcher that falls too far behind gets an `ERROR` event (410 Expired) and the stream
//!   ends; the client re-lists, as client-go does.
//! * With `as=Table`, each object is a one-row Table (column definitions on the first); with
//!   `as=PartialObjectMetadata`, its metadata only ([`crate::metadata_only`]).
//!
//! Watches that start now without selectors, Table or bookmarks (a namespace or object name is
//! fine: they never change) share one [`WatchHub`] per version and resource: a single task
//! reads the storage watch, decodes each event once, and the hub encodes it once per codec
//! for all of them. The others get their own storage watch, since selectors (ADDED/DELETED
//! on a change of match) and starting revisions are theirs alone; without a conversion (an
//! informer's watch from its list's resourceVersion, with or without a selector), each of
//! their events is made around the object's kept encoded form, as initial events are: a
//! change sent to a hundred such watchers is decoded and encoded once per format, and each
//! watcher with a selector reads only the metadata it selects by.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};
use std::time::Duration;

use axum::body::Body;
use http::Response;
use std::any::Any;
use std::collections::{BTreeMap, HashMap};
use std::sync::Mutex;

use bytes::Bytes;
use conneg::watch::{EventType, WatchEvent, WatchHub, WatchResponse, encode_event_document};
use conneg::{Negotiated, Status};
use futures_util::stream;
use futures_util::stream::BoxStream;
use futures_util::{Stream, StreamExt};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::encoded::{Form, ServedBy, served_by};
use super::list_options::{self, ListOptions};
use super::read::list_revision;
use super::transform;
use super::{Context, HResult, Params, Served, StatusError, Target};
use crate::meta::{HasObjectMeta, ObjectMeta};
use crate::registry::storage_status;
use crate::resource::ResourceInfo;
use crate::selector::Selectors;
use crate::storage::codec::decode_value;
use crate::storage::{
    Event, EventKind, KeyValue, ListOptions as ReadOptions, ListResult, Storage, StorageError,
};

/// How long a watch lasts without `timeoutSeconds` (Kubernetes: 30–60 minutes).
const DEFAULT_TIMEOUT_SECS: u64 = 1800;
/// The longest watch this server grants (a day).
const MAX_TIMEOUT_SECS: u64 = 86_400;
/// Quiet time before a bookmark.
const BOOKMARK_EVERY: Duration = Duration::from_secs(10);

/// The object of an event: the typed object, or a JSON value (Table, bookmark).
#[derive(Serialize)]
#[serde(untagged)]
pub(crate) enum Obj<T> {
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
    fn matches(&self, meta: &ObjectMeta) -> bool {
        self.name.as_ref().is_none_or(|n| *n == meta.name) && self.sel.matches(meta)
    }

    fn is_empty(&self) -> bool {
        self.name.is_none() && self.sel.is_empty()
    }

    /// Whether the object stored as `kv` is selected, read from what the filter looks at
    /// alone ([`Selected`]): one that cannot be read is not.
    fn selects(&self, kv: &KeyValue) -> bool {
        decode_value::<Selected>(&kv.value).is_ok_and(|s| self.matches(&s.metadata.into_meta()))
    }
}

/// What a filter reads of a stored object: its name, namespace and labels (selectors look at
/// nothing else). The rest, `managedFields` and the spec among it, is skipped as it is read,
/// so a watch with a selector pays for no decoded object of a change it does not send.
#[derive(Deserialize)]
struct Selected {
    #[serde(default)]
    metadata: SelectedMeta,
}

#[derive(Deserialize, Default)]
struct SelectedMeta {
    #[serde(default)]
    name: Option<String>,
    #[serde(default)]
    namespace: Option<String>,
    #[serde(default)]
    labels: Option<BTreeMap<String, String>>,
}

impl SelectedMeta {
    fn into_meta(self) -> ObjectMeta {
        ObjectMeta {
            name: self.name.unwrap_or_default(),
            namespace: self.namespace.unwrap_or_default(),
            labels: self.labels.unwrap_or_default(),
            ..ObjectMeta::default()
        }
    }
}

/// The shared hubs, by (version, resource); each holds a `WatchHub<T>` for its type.
#[derive(Clone, Default)]
pub(crate) struct Hubs(Arc<Mutex<HubMap>>);

type HubMap = HashMap<(&'static str, &'static str), Box<dyn Any + Send + Sync>>;

impl std::fmt::Debug for Hubs {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Hubs")
    }
}

/// A shared hub and the revision of the last event its feeder started publishing.
struct Shared<T> {
    hub: WatchHub<T>,
    started: Arc<AtomicI64>,
}

impl<T> Clone for Shared<T> {
    fn clone(&self) -> Self {
        Self {
            hub: self.hub.clone(),
            started: self.started.clone(),
        }
    }
}

/// The hub of `T`, started (with its feeding task) on first use.
async fn hub<T: Served>(st: &Context, t: &Target, f: &T::Facts) -> Result<Shared<T>, StatusError> {
    let res = t.resource;
    let key = (t.version.api_version(), res.resource);
    let existing = |m: &HubMap| {
        m.get(&key)
            .and_then(|b| b.downcast_ref::<Shared<T>>())
            .cloned()
    };
    if let Some(h) = st.hubs.0.lock().ok().and_then(|m| existing(&m)) {
        return Ok(h);
    }
    let from = st
        .registry
        .store
        .current_revision()
        .await
        .map_err(|e| storage_status(e, res, ""))?;
    let prefix = st.registry.keys.collection(res, None);
    let events = st
        .registry
        .store
        .watch(&prefix, from)
        .await
        .map_err(|e| storage_status(e, res, ""))?;
    let shared = {
        let Ok(mut m) = st.hubs.0.lock() else {
            return Err(Status::internal_error("watch hub registry poisoned").into());
        };
        if let Some(h) = existing(&m) {
            return Ok(h); // another request started it meanwhile
        }
        let shared = Shared {
            hub: WatchHub::<T>::new(),
            started: Arc::new(AtomicI64::new(from)),
        };
        m.insert(key, Box::new(shared.clone()));
        shared
    };
    let (st2, feeder, f) = (st.clone(), shared.clone(), f.clone());
    let mut events = events.take_until(T::retired(&f));
    tokio::spawn(async move {
        let all = Filter {
            sel: Selectors::default(),
            name: None,
        };
        while let Some(item) = events.next().await {
            match item {
                Ok(ev) => {
                    feeder.started.store(ev.revision(), Ordering::SeqCst);
                    if let Some(e) = translate::<T>(&st2, res, &all, &ev) {
                        feeder.hub.publish(e.map(|k| T::from_kind(k, &f)));
                    }
                }
                Err(e) => {
                    tracing::warn!(error = %e, "watch hub feed ended; its watchers re-watch");
                    break;
                }
            }
        }
        if let Ok(mut m) = st2.hubs.0.lock() {
            m.remove(&key);
        }
        feeder.hub.close();
    });
    Ok(shared)
}

/// Serves a watch that starts now without selectors from the shared hub: `initial` (the
/// list at revision `from`) first, then every event after `from`. `None` when the hub's
/// feeder has already gone past `from` (events could be missed): the caller then watches
/// storage itself.
async fn watch_shared<T: Served>(
    (st, t, n): (&Context, &Target, &Negotiated),
    initial: impl Stream<Item = (Bytes, bool)> + Send + 'static,
    from: i64,
    timeout: u64,
    f: &T::Facts,
) -> Result<Option<Response<Body>>, StatusError> {
    let shared = hub::<T>(st, t, f).await?;
    let (ns, name) = (t.namespace.clone(), t.name.clone());
    let watcher = shared.hub.subscribe_filtered_as(
        n.response_codec(),
        n.profile(),
        move |e: &WatchEvent<T>| {
            e.object().is_some_and(|o| {
                let m = o.meta();
                ns.as_ref().is_none_or(|ns| *ns == m.namespace)
                    && name.as_ref().is_none_or(|n| *n == m.name)
                    && m.resource_version.parse::<i64>().unwrap_or(0) > from
            })
        },
    )?;
    // Every event the feeder starts from now on reaches this watcher; the ones it started
    // before must all be in the list.
    if shared.started.load(Ordering::SeqCst) > from {
        return Ok(None);
    }
    // The initial events, encoded as the client takes them, then the hub's.
    let events = through_first_error(initial.chain(watcher.map(|b| (b, false))), |e| e.1)
        .take_until(T::retired(f));
    let resp = WatchResponse::new(n)
        .timeout_seconds(Some(timeout))
        .encoded(events.map(|(bytes, _)| bytes));
    Ok(Some(resp.map(Body::new)))
}

/// Serves a watch on the target collection (or object).
pub(crate) async fn watch<T: Served>(
    st: &Context,
    t: &Target,
    q: &Params,
    n: &Negotiated,
    f: &T::Facts,
) -> HResult {
    let opts = ListOptions::parse(q)?;
    if let Some(conv) = n.conversion() {
        transform::check_watch(conv, t)?;
    }
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
            Err(_) => {
                return Err(Status::bad_request(format!("invalid timeoutSeconds {s:?}")).into());
            }
        },
    };
    let bookmarks = opts.allow_watch_bookmarks;
    let prefix = st
        .registry
        .keys
        .collection(t.resource, t.namespace.as_deref());

    // Where to start, and the initial state when it was asked for: the state not older than
    // `resourceVersion` (the current state for "" and "0"), read at the revision the stream
    // then starts from.
    let (initial, from) = if opts.sends_initial_events() {
        let mut at = Params::default();
        if let Some(rv) = opts.resource_version {
            at.0.insert("resourceVersion".to_owned(), rv.to_owned());
        }
        // The first page now (a bad resourceVersion or a storage error is the response's
        // status), the others as the stream reaches them (`initial_kinds`).
        let revision = list_revision(st, t.resource, &at).await?;
        let first = st
            .registry
            .store
            .list(
                &prefix,
                ReadOptions {
                    revision,
                    start_key: None,
                    limit: Some(INITIAL_PAGE),
                },
            )
            .await
            .map_err(|e| storage_status(e, t.resource, ""))?;
        let rev = first.revision;
        (Some(first), rev)
    } else {
        match opts.resource_version {
            None | Some("0") => (
                None,
                st.registry
                    .store
                    .current_revision()
                    .await
                    .map_err(|e| storage_status(e, t.resource, ""))?,
            ),
            Some(rv) => {
                let rev: i64 = rv
                    .parse()
                    .map_err(|_| Status::bad_request(format!("invalid resource version {rv:?}")))?;
                (None, rev)
            }
        }
    };
    if opts.sends_initial_events()
        && filter.sel.is_empty()
        && !bookmarks
        && n.conversion().is_none()
    {
        let stored = initial_stored(st, t, &prefix, initial.clone());
        let facts = f.clone();
        let added = move |k| T::from_kind(k, &facts);
        let first = initial_events::<T, T>(st, t, n, f, &filter, stored, added);
        if let Some(resp) = watch_shared::<T>((st, t, n), first, from, timeout, f).await? {
            return Ok(resp);
        }
    }
    let events = st
        .registry
        .store
        .watch(&prefix, from)
        .await
        .map_err(|e| storage_status(e, t.resource, ""))?;

    let last_rev = Arc::new(AtomicI64::new(from));
    let conversion = n.conversion().cloned();
    let headers_sent = Arc::new(AtomicBool::new(false));
    let (q, target) = (q.clone(), t.clone());
    let shape = {
        let (conversion, f) = (conversion.clone(), f.clone());
        move |k: T::K| -> Obj<T> {
            match &conversion {
                Some(conv) => {
                    let first = !headers_sent.swap(true, Ordering::Relaxed);
                    let event = transform::event::<T>(conv, (&q, &target), k, first, &f);
                    Obj::Json(or_status(event))
                }
                None => Obj::Typed(T::from_kind(k, &f)),
            }
        }
    };
    let shape = Arc::new(shape);
    // The marker a watch-list client waits for: every initial event has been sent.
    let initial_end = opts.marks_initial_events_end().then(|| {
        let end = list_options::initial_events_end(t.version.api_version(), t.resource.kind, from);
        let bookmark = transform::bookmark(conversion.as_ref(), end);
        event_bytes(&WatchEvent::Bookmark(or_status(bookmark)), n)
    });

    let initial = {
        let stored = initial_stored(st, t, &prefix, initial);
        let shape = shape.clone();
        initial_events::<T, Obj<T>>(st, t, n, f, &filter, stored, move |k| shape(k))
            .chain(stream::iter(initial_end))
    };
    let live = {
        let (st, res, n) = (st.clone(), t.resource, n.clone());
        let last_rev = last_rev.clone();
        let kept = keeps_forms(&st, &n).then(|| KeptEvents::<T>::new(&st, &n, f, res));
        events.filter_map(move |item| {
            let out = match item {
                Ok(ev) => {
                    last_rev.store(ev.revision(), Ordering::Relaxed);
                    match &kept {
                        Some(kept) if filter.is_empty() => Some(kept.live(&ev)),
                        Some(kept) => kept.filtered(&filter, &ev),
                        None => translate::<T>(&st, res, &filter, &ev)
                            .map(|e| event_bytes(&e.map(|k| shape(k)), &n)),
                    }
                }
                Err(e) => Some(event_bytes(&WatchEvent::<()>::Error(error_status(e)), &n)),
            };
            std::future::ready(out)
        })
    };
    let events = through_first_error(initial.chain(live), |e| e.1).take_until(T::retired(f));

    let mut response = WatchResponse::new(n).timeout_seconds(Some(timeout));
    if bookmarks {
        let (api_version, kind) = (t.version.api_version(), t.resource.kind);
        response = response.heartbeat(BOOKMARK_EVERY, move || {
            let b = list_options::bookmark(api_version, kind, last_rev.load(Ordering::Relaxed));
            WatchEvent::Bookmark(or_status(transform::bookmark(conversion.as_ref(), b)))
        });
    }
    let resp = response.encoded(events.map(|(bytes, _)| bytes));
    Ok(resp.map(Body::new))
}

/// `events` up to and including the first one that `is_error` says is an ERROR event: a watch
/// ends after one.
fn through_first_error<S: Stream>(
    events: S,
    is_error: impl Fn(&S::Item) -> bool,
) -> impl Stream<Item = S::Item> {
    let mut failed = false;
    events.take_while(move |e| {
        let go = !failed;
        failed = is_error(e);
        std::future::ready(go)
    })
}

/// Objects of a watch's initial state read from storage per page, each page when the stream
/// reaches it: a watcher holds one page of stored bytes, not the whole state.
const INITIAL_PAGE: usize = 500;

/// The stored objects of a watch's initial state, from its `first` page on, every page at that
/// page's revision, each page read when the stream reaches it. A page that cannot be read (the
/// revision compacted meanwhile) is an `Err`, sent as an ERROR event.
fn initial_stored(
    st: &Context,
    t: &Target,
    prefix: &str,
    first: Option<ListResult>,
) -> impl Stream<Item = Result<KeyValue, StatusError>> + Send + 'static {
    enum Next {
        Page(ListResult),
        From(String, i64),
    }
    let (st, prefix, res) = (st.clone(), prefix.to_owned(), t.resource);
    let pages = stream::unfold(first.map(Next::Page), move |next| {
        let (st, prefix) = (st.clone(), prefix.clone());
        async move {
            let page = match next? {
                Next::Page(page) => page,
                Next::From(key, revision) => {
                    let read = ReadOptions {
                        revision: Some(revision),
                        start_key: Some(key),
                        limit: Some(INITIAL_PAGE),
                    };
                    match st.registry.store.list(&prefix, read).await {
                        Ok(page) => page,
                        Err(e) => {
                            return Some((vec![Err(storage_status(e, res, "").into())], None));
                        }
                    }
                }
            };
            let after = page
                .next_start_key()
                .map(|key| Next::From(key, page.revision));
            Some((page.items.into_iter().map(Ok).collect::<Vec<_>>(), after))
        }
    });
    pages.flat_map(stream::iter)
}

/// The objects of `stored` that `filter` selects, each decoded when the stream reaches it; an
/// object that cannot be decoded is an `Err`.
fn initial_kinds<T: Served>(
    st: &Context,
    t: &Target,
    filter: &Arc<Filter>,
    stored: impl Stream<Item = Result<KeyValue, StatusError>> + Send + 'static,
) -> impl Stream<Item = Result<T::K, StatusError>> + Send + 'static {
    let (st, filter, res) = (st.clone(), filter.clone(), t.resource);
    stored.filter_map(move |kv| {
        let k = kv.and_then(|kv| Ok(st.registry.decode::<T::K>(res, &kv)?));
        std::future::ready(match k {
            Ok(k) => filter.matches(k.meta()).then_some(Ok(k)),
            Err(e) => Some(Err(e)),
        })
    })
}

/// Events made around the objects' kept encoded forms ([`EncodedForms`](super::EncodedForms)):
/// an object listed, read or sent to another watcher before at its revision is not decoded or
/// encoded again, so a hundred watchers of a resource cost one decode and one encode per
/// change, not a hundred. For watches without a filter or a conversion ([`keeps_forms`]).
struct KeptEvents<T: Served> {
    st: Context,
    n: Negotiated,
    facts: T::Facts,
    /// What tells these facts' forms from others' ([`served_by`]), worked out once.
    served: ServedBy,
    res: &'static ResourceInfo,
}

impl<T: Served> KeptEvents<T> {
    fn new(st: &Context, n: &Negotiated, f: &T::Facts, res: &'static ResourceInfo) -> Self {
        KeptEvents {
            st: st.clone(),
            n: n.clone(),
            facts: f.clone(),
            served: served_by::<T>(f),
            res,
        }
    }

    /// The event `kind` of the object stored as `kv`, with whether it is an ERROR event (an
    /// object that cannot be read), after which the stream ends.
    fn event(&self, kind: EventType, kv: Result<&KeyValue, StatusError>) -> (Bytes, bool) {
        let n = &self.n;
        let document = kv.and_then(|kv| {
            let make = || {
                let k = self.st.registry.decode(self.res, kv)?;
                Ok::<_, StatusError>(T::from_kind(k, &self.facts))
            };
            match self.st.encoded.form(n, kv, self.served, make) {
                Some(form) => form.map(Form::document),
                None => make().and_then(|object| Ok(n.encode(&object)?)),
            }
        });
        let event = document.and_then(|d| {
            let mut out = Vec::with_capacity(d.len() + 32);
            encode_event_document(n.response_codec(), n.profile(), kind, &d, &mut out)?;
            Ok(Bytes::from(out))
        });
        match event {
            Ok(bytes) => (bytes, false),
            Err(error) => event_bytes(&WatchEvent::<()>::Error(error.into_status()), n),
        }
    }

    /// A storage event as every watcher without a filter sees it (a deleted object in its
    /// last state, at the deletion's revision, as Kubernetes sends it).
    fn live(&self, ev: &Event) -> (Bytes, bool) {
        match ev.kind {
            EventKind::Added => self.event(EventType::Added, Ok(&ev.kv)),
            EventKind::Modified => self.event(EventType::Modified, Ok(&ev.kv)),
            EventKind::Deleted => match deleted_state(ev) {
                Some(last) => self.event(EventType::Deleted, Ok(&last)),
                None => self.event(
                    EventType::Deleted,
                    Err(
                        Status::internal_error("a deletion without the object's last state").into(),
                    ),
                ),
            },
        }
    }
}

impl<T: Served> KeptEvents<T> {
    /// A storage event as a watcher with `filter` sees it ([`translate`]'s events, made
    /// around the kept forms): an object that starts matching is `ADDED`, one that stops
    /// matching `DELETED` (in its new state), one that matches neither before nor after
    /// is not sent. What matches is read from the metadata alone ([`Filter::selects`]).
    fn filtered(&self, filter: &Filter, ev: &Event) -> Option<(Bytes, bool)> {
        match ev.kind {
            EventKind::Added => filter
                .selects(&ev.kv)
                .then(|| self.event(EventType::Added, Ok(&ev.kv))),
            EventKind::Modified => {
                let now = filter.selects(&ev.kv);
                let before = ev.prev.as_ref().is_some_and(|p| filter.selects(p));
                let kind = match (before, now) {
                    (true, true) => EventType::Modified,
                    (false, true) => EventType::Added,
                    (true, false) => EventType::Deleted,
                    (false, false) => return None,
                };
                Some(self.event(kind, Ok(&ev.kv)))
            }
            EventKind::Deleted => {
                let last = deleted_state(ev)?;
                filter
                    .selects(&last)
                    .then(|| self.event(EventType::Deleted, Ok(&last)))
            }
        }
    }
}

/// The last state of the object `ev` deletes, at the deletion's revision.
fn deleted_state(ev: &Event) -> Option<KeyValue> {
    Some(KeyValue {
        mod_revision: ev.revision(),
        ..ev.prev.clone()?
    })
}

/// Whether a watch's events can be made from kept encoded forms: no conversion (`as=Table`,
/// metadata only), and an encoding the forms keep. (A selector or a name is read from the
/// stored metadata, [`Filter::selects`].)
fn keeps_forms(st: &Context, n: &Negotiated) -> bool {
    n.conversion().is_none() && st.encoded.keeps(n)
}

/// The events of a watch's initial state: the objects `filter` selects, from their kept
/// encoded forms when the watch allows it ([`keeps_forms`]), else each object of `stored`
/// decoded, filtered and made an event's object by `shape`. Each with whether it is an ERROR
/// event.
fn initial_events<T: Served, O: Serialize + 'static>(
    st: &Context,
    t: &Target,
    n: &Negotiated,
    f: &T::Facts,
    filter: &Arc<Filter>,
    stored: impl Stream<Item = Result<KeyValue, StatusError>> + Send + 'static,
    shape: impl Fn(T::K) -> O + Send + 'static,
) -> BoxStream<'static, (Bytes, bool)> {
    if keeps_forms(st, n) {
        let kept = KeptEvents::<T>::new(st, n, f, t.resource);
        let filter = filter.clone();
        return stored
            .filter_map(move |kv| {
                let selected = kv
                    .as_ref()
                    .map_or(true, |kv| filter.is_empty() || filter.selects(kv));
                let event = selected
                    .then(|| kept.event(EventType::Added, kv.as_ref().map_err(Clone::clone)));
                std::future::ready(event)
            })
            .boxed();
    }
    let n = n.clone();
    initial_kinds::<T>(st, t, filter, stored)
        .map(move |k| match k {
            Ok(k) => event_bytes(&WatchEvent::Added(shape(k)), &n),
            Err(error) => event_bytes(&WatchEvent::<O>::Error(error.into_status()), &n),
        })
        .boxed()
}

/// `event` encoded for `n`'s codec and profile, and whether what is sent is an ERROR event
/// (`event` itself, or the one sent when it cannot be encoded): the watch ends after it.
fn event_bytes<T: Serialize>(event: &WatchEvent<T>, n: &Negotiated) -> (Bytes, bool) {
    match event.to_bytes_or_error(n.response_codec(), n.profile()) {
        Ok(bytes) => (bytes, matches!(event, WatchEvent::Error(_))),
        Err(error) => (error, true),
    }
}

fn error_status(e: StorageError) -> Status {
    match e {
        StorageError::WatchLagged { .. } | StorageError::Gone { .. } => {
            Status::expired(e.to_string())
        }
        other => Status::internal_error(other),
    }
}

/// Turns a storage event into the event a watcher with `filter` sees (or none).
fn translate<T: Served>(
    st: &Context,
    res: &'static ResourceInfo,
    filter: &Filter,
    ev: &Event,
) -> Option<WatchEvent<T::K>> {
    let decode = |kv: &KeyValue| st.registry.decode::<T::K>(res, kv).ok();
    match ev.kind {
        EventKind::Added => {
            let k = decode(&ev.kv)?;
            filter.matches(k.meta()).then_some(WatchEvent::Added(k))
        }
        EventKind::Modified => {
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
        EventKind::Deleted => {
            let k = decode(&deleted_state(ev)?)?;
            filter.matches(k.meta()).then_some(WatchEvent::Deleted(k))
        }
    }
}

/// An event object built as JSON; a failure to build it is sent as its `Status`.
fn or_status(v: Result<Value, StatusError>) -> Value {
    v.unwrap_or_else(|error| serde_json::to_value(error.into_status()).unwrap_or(Value::Null))
}
