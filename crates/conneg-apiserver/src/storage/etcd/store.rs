//! The etcd store: the [`Storage`] interface on etcd's API (the mapping is described in the
//! module above), over one [`Client`] per endpoint with failover between them, and the
//! compactor.

use std::fmt;
use std::future::Future;
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicUsize, Ordering};
use std::sync::{Arc, RwLock, Weak};
use std::time::Duration;

use bytes::Bytes;
use tonic::Status;

use super::EtcdOptions;
use super::client::{Client, Failure, WatchRequests, map_error};
use super::wire;
use super::wire::{
    CompactionRequest, Compare, CompareResult, RangeRequest, RangeResponse, RequestOp, TxnRequest,
    TxnResponse, WatchCreateRequest,
};
use crate::storage::{
    Cas, DeleteResult, Event, EventKind, KeyValue, ListOptions, ListResult, Result, Revision,
    Storage, StorageError, UpdateResult, WatchItem, WatchItems, Watcher, check_revision,
    check_update,
};

/// One etcd member's client.
struct Endpoint {
    url: String,
    client: RwLock<Client>,
    /// A call failed at the transport level: rebuild the client before the next one.
    broken: AtomicBool,
}

struct Inner {
    options: EtcdOptions,
    endpoints: Vec<Endpoint>,
    /// The endpoint calls go to first; moves on when it fails.
    current: AtomicUsize,
    /// The highest compacted revision seen (from the compact key, compactions, errors).
    compacted: AtomicI64,
    /// Whether etcd's progress notifications follow every event up to their revision (see
    /// [`EtcdStore::reliable_progress`]), once a member has told its version.
    reliable_progress: tokio::sync::OnceCell<bool>,
}

/// Whether a failed call may be sent again (to the next endpoint).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Retry {
    /// Reads: always.
    Read,
    /// Writes: only when the request surely never reached etcd (the connection could not be
    /// made); otherwise it may have been applied and the caller must find out.
    Write,
}

/// The etcd-backed store. Cloning shares the client.
#[derive(Clone)]
pub struct EtcdStore {
    inner: Arc<Inner>,
}

impl fmt::Debug for EtcdStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("EtcdStore")
            .field("endpoints", &self.inner.options.endpoints)
            .field("compact_key", &self.inner.options.compact_key)
            .finish_non_exhaustive()
    }
}

fn utf8_key(key: Vec<u8>) -> Result<String> {
    String::from_utf8(key)
        .map_err(|e| StorageError::Backend(format!("etcd key is not UTF-8: {:?}", e.as_bytes())))
}

fn to_kv(kv: wire::KeyValue) -> Result<KeyValue> {
    Ok(KeyValue {
        key: utf8_key(kv.key)?,
        value: kv.value,
        create_revision: kv.create_revision,
        mod_revision: kv.mod_revision,
    })
}

fn header_revision(h: Option<&wire::ResponseHeader>) -> Result<Revision> {
    h.map(|h| h.revision)
        .ok_or_else(|| StorageError::Backend("etcd response without header".into()))
}

/// The first key after every key starting with `prefix` (etcd's `range_end` for a prefix).
fn prefix_end(prefix: &str) -> Vec<u8> {
    let mut end = prefix.as_bytes().to_vec();
    while let Some(last) = end.pop() {
        if last < 0xff {
            end.push(last + 1);
            return end;
        }
    }
    // All 0xff (or empty): to the end of the keyspace.
    vec![0]
}

/// The current value of a key in a failed transaction's `else` branch (a single get).
fn else_get(resp: TxnResponse) -> Result<Option<KeyValue>> {
    for op in resp.responses {
        if let Some(wire::Response::Range(g)) = op.response {
            return g.kvs.into_iter().next().map(to_kv).transpose();
        }
    }
    Err(StorageError::Backend(
        "etcd transaction answer without its get".into(),
    ))
}

/// A transaction whose comparison failed although what it read back passes the same check:
/// an etcd answer this client cannot explain.
fn lost_comparison(key: &str) -> StorageError {
    StorageError::Backend(format!(
        "etcd refused a compare-and-swap on {key} that its own answer allows"
    ))
}

/// One etcd watch event as a storage event.
fn to_event(e: wire::Event) -> Result<Event> {
    let kv =
        e.kv.ok_or_else(|| StorageError::Backend("etcd watch event without kv".into()))?;
    let prev = e.prev_kv.map(to_kv).transpose()?;
    let kind = wire::EventType::try_from(e.r#type).map_err(|_| {
        StorageError::Backend(format!("etcd watch event of unknown type {}", e.r#type))
    })?;
    match kind {
        wire::EventType::Put => {
            let kv = to_kv(kv)?;
            if kv.create_revision == kv.mod_revision {
                Ok(Event {
                    kind: EventKind::Added,
                    kv,
                    prev: None,
                })
            } else {
                Ok(Event {
                    kind: EventKind::Modified,
                    kv,
                    prev,
                })
            }
        }
        wire::EventType::Delete => Ok(Event {
            kind: EventKind::Deleted,
            kv: KeyValue {
                key: utf8_key(kv.key)?,
                value: Bytes::new(),
                create_revision: prev.as_ref().map_or(0, |p| p.create_revision),
                mod_revision: kv.mod_revision,
            },
            prev,
        }),
    }
}

impl EtcdStore {
    /// A store on the etcd cluster at `options.endpoints`. Nothing is sent yet (the client
    /// connects lazily); the compactor starts when `compaction_interval` is not zero. Must be
    /// called within a tokio runtime.
    pub async fn open(options: EtcdOptions) -> Result<Self> {
        if options.endpoints.is_empty() {
            return Err(StorageError::Backend("no etcd endpoints given".into()));
        }
        let mut endpoints = Vec::with_capacity(options.endpoints.len());
        for url in &options.endpoints {
            endpoints.push(Endpoint {
                url: url.clone(),
                client: RwLock::new(Client::connect(&options, url)?),
                broken: AtomicBool::new(false),
            });
        }
        let store = EtcdStore {
            inner: Arc::new(Inner {
                options,
                endpoints,
                current: AtomicUsize::new(0),
                compacted: AtomicI64::new(0),
                reliable_progress: tokio::sync::OnceCell::new(),
            }),
        };
        let interval = store.inner.options.compaction_interval;
        if !interval.is_zero() {
            tokio::spawn(compactor(Arc::downgrade(&store.inner), interval));
        }
        Ok(store)
    }

    /// The options in use.
    pub fn options(&self) -> &EtcdOptions {
        &self.inner.options
    }

    /// Endpoint `i`'s client, rebuilt first if a call on it failed at the transport level.
    fn client_at(&self, i: usize) -> Result<Client> {
        let ep = &self.inner.endpoints[i];
        if ep.broken.swap(false, Ordering::AcqRel) {
            match Client::connect(&self.inner.options, &ep.url) {
                Ok(c) => {
                    *ep.client
                        .write()
                        .unwrap_or_else(std::sync::PoisonError::into_inner) = c;
                }
                Err(e) => {
                    ep.broken.store(true, Ordering::Release);
                    return Err(e);
                }
            }
        }
        Ok(ep
            .client
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone())
    }

    /// Runs one etcd call, each attempt bounded by the request timeout, on the current
    /// endpoint; when that one fails at the transport level the call moves on to the next
    /// endpoint (reads always, writes only if they were surely not sent). Returns the result
    /// and the endpoint that answered.
    async fn call_on<T, F, Fut>(&self, what: &str, retry: Retry, f: F) -> Result<(T, usize)>
    where
        F: Fn(Client) -> Fut,
        Fut: Future<Output = Result<T, Status>>,
    {
        let n = self.inner.endpoints.len();
        let start = self.inner.current.load(Ordering::Acquire) % n;
        let timeout = self.inner.options.request_timeout;
        let mut last = None;
        for attempt in 0..n {
            let i = (start + attempt) % n;
            let failure = match self.client_at(i) {
                Err(err) => Failure {
                    err,
                    broken: true,
                    unsent: true,
                },
                Ok(client) => match tokio::time::timeout(timeout, f(client)).await {
                    Ok(Ok(v)) => {
                        if attempt > 0 {
                            self.inner.current.store(i, Ordering::Release);
                        }
                        return Ok((v, i));
                    }
                    Ok(Err(e)) => map_error(what, &e),
                    Err(_) => Failure {
                        err: StorageError::Timeout(format!(
                            "etcd {what}: no answer within {timeout:?}"
                        )),
                        broken: true,
                        unsent: false,
                    },
                },
            };
            if !failure.broken {
                return Err(failure.err);
            }
            self.inner.endpoints[i]
                .broken
                .store(true, Ordering::Release);
            // Later calls start at the next endpoint.
            let _ = self.inner.current.compare_exchange(
                i,
                (i + 1) % n,
                Ordering::AcqRel,
                Ordering::Acquire,
            );
            let again = retry == Retry::Read || failure.unsent;
            if !again {
                return Err(failure.err);
            }
            if n > 1 {
                tracing::debug!(endpoint = %self.inner.endpoints[i].url, error = %failure.err, "etcd endpoint failed; trying the next");
            }
            last = Some(failure.err);
        }
        Err(last.unwrap_or_else(|| StorageError::Unavailable("no etcd endpoint".into())))
    }

    /// [`EtcdStore::call_on`] without the endpoint.
    async fn call<T, F, Fut>(&self, what: &str, retry: Retry, f: F) -> Result<T>
    where
        F: Fn(Client) -> Fut,
        Fut: Future<Output = Result<T, Status>>,
    {
        self.call_on(what, retry, f).await.map(|(v, _)| v)
    }

    /// A `KV/Range` call (a read).
    async fn range(&self, what: &str, request: RangeRequest) -> Result<RangeResponse> {
        self.call(what, Retry::Read, move |c| c.range(request.clone()))
            .await
    }

    /// A `KV/Txn` call (a write).
    async fn txn(&self, what: &str, request: TxnRequest) -> Result<TxnResponse> {
        self.call(what, Retry::Write, move |c| c.txn(request.clone()))
            .await
    }

    fn note_compacted(&self, rev: Revision) {
        self.inner.compacted.fetch_max(rev, Ordering::AcqRel);
    }

    fn known_compacted(&self) -> Revision {
        self.inner.compacted.load(Ordering::Acquire)
    }

    /// Fills in the revisions of a `Gone` or `FutureRevision` from etcd for `requested`.
    async fn revision_error(&self, e: StorageError, requested: Revision) -> StorageError {
        match e {
            StorageError::Gone { .. } => {
                let mut compacted = self
                    .compacted_revision()
                    .await
                    .unwrap_or_else(|_| self.known_compacted());
                if compacted <= requested {
                    // Compacted by someone else (etcdctl, another application): ask etcd.
                    if let Some(c) = self.probe_compacted().await {
                        self.note_compacted(c);
                        compacted = c;
                    }
                }
                StorageError::Gone {
                    requested,
                    compacted,
                }
            }
            StorageError::FutureRevision { .. } => StorageError::FutureRevision {
                requested,
                current: self.current_revision().await.unwrap_or(0),
            },
            other => other,
        }
    }

    /// etcd's compacted revision, learnt the only way etcd tells it: a watch from revision 1
    /// is cancelled with the compacted revision. `None` if etcd does not say in time.
    async fn probe_compacted(&self) -> Option<Revision> {
        let watch = WatchCreateRequest {
            key: self.inner.options.compact_key.clone().into(),
            start_revision: 1,
            ..WatchCreateRequest::default()
        };
        // The requests half stays open while the answers are read (`_requests`).
        let (mut stream, _requests) = self
            .call("probe compaction", Retry::Read, move |c| {
                c.watch(watch.clone())
            })
            .await
            .ok()?;
        let timeout = self.inner.options.request_timeout;
        tokio::time::timeout(timeout, async {
            // The "created" answer first, then (for a compacted start) the cancellation.
            for _ in 0..2 {
                match stream.message().await {
                    Ok(Some(resp)) if resp.compact_revision > 0 => {
                        return Some(resp.compact_revision);
                    }
                    Ok(Some(resp)) if resp.canceled => return None,
                    Ok(Some(_)) => {}
                    _ => return None,
                }
            }
            None
        })
        .await
        .ok()
        .flatten()
    }

    /// The compact key's value and `mod_revision` (0, 0 when absent).
    async fn read_compact_key(&self) -> Result<(Revision, Revision)> {
        let resp = self
            .range(
                "get compact key",
                RangeRequest::one(&self.inner.options.compact_key),
            )
            .await?;
        match resp.kvs.into_iter().next() {
            None => Ok((0, 0)),
            Some(kv) => {
                let rev = std::str::from_utf8(&kv.value)
                    .ok()
                    .and_then(|s| s.trim().parse::<Revision>().ok())
                    .unwrap_or(0);
                Ok((rev, kv.mod_revision))
            }
        }
    }

    /// One compaction round: compact to `current - history` unless that is not newer than
    /// the last compaction. Replicas agree through a compare-and-swap on the compact key, so
    /// only one of them compacts to a given revision. Returns the revision compacted to.
    pub async fn compact_once(&self) -> Result<Option<Revision>> {
        let current = self.current_revision().await?;
        let history = i64::try_from(self.inner.options.history).unwrap_or(i64::MAX);
        let target = current.saturating_sub(history.max(1));
        let (recorded, key_mod) = self.read_compact_key().await?;
        self.note_compacted(recorded);
        // Nothing new to compact, or nothing written since the last round but its own
        // compact-key write (which must not keep an idle cluster compacting every interval).
        if target <= recorded.max(1) || key_mod == current {
            return Ok(None);
        }
        let key = &self.inner.options.compact_key;
        let claim = TxnRequest {
            compare: vec![Compare::mod_revision(key, CompareResult::Equal, key_mod)],
            success: vec![RequestOp::put(key, target.to_string().into())],
            failure: vec![],
        };
        let resp = self.txn("claim compaction", claim).await?;
        if !resp.succeeded {
            // Another replica compacted meanwhile.
            return Ok(None);
        }
        let compact = CompactionRequest {
            revision: target,
            physical: true,
        };
        match self
            .call("compact", Retry::Read, move |c| c.compact(compact.clone()))
            .await
        {
            // Gone: someone (etcdctl?) already compacted further.
            Ok(_) | Err(StorageError::Gone { .. }) => {}
            Err(e) => return Err(e),
        }
        self.note_compacted(target);
        tracing::info!(revision = target, "etcd compacted");
        Ok(Some(target))
    }
}

async fn compactor(inner: Weak<Inner>, interval: Duration) {
    let mut tick = tokio::time::interval(interval);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    // The first tick is immediate; compact one interval after start, as Kubernetes.
    tick.tick().await;
    loop {
        tick.tick().await;
        let Some(inner) = inner.upgrade() else {
            return;
        };
        let store = EtcdStore { inner };
        if let Err(e) = store.compact_once().await {
            tracing::warn!(error = %e, "etcd compaction failed; retrying next interval");
        }
    }
}

struct WatchState {
    stream: tonic::Streaming<wire::WatchResponse>,
    /// The endpoint the watch runs on.
    endpoint: usize,
    pending: std::collections::VecDeque<WatchItem>,
    store: EtcdStore,
    last: Revision,
    done: bool,
    /// The error that ends the stream once the events before it are delivered.
    end: Option<StorageError>,
}

impl Storage for EtcdStore {
    async fn current_revision(&self) -> Result<Revision> {
        let count = RangeRequest {
            count_only: true,
            ..RangeRequest::one(&self.inner.options.compact_key)
        };
        let resp = self.range("get revision", count).await?;
        header_revision(resp.header.as_ref())
    }

    async fn compacted_revision(&self) -> Result<Revision> {
        let (recorded, _) = self.read_compact_key().await?;
        self.note_compacted(recorded);
        Ok(self.known_compacted())
    }

    async fn get(&self, key: &str) -> Result<Option<KeyValue>> {
        let resp = self.range("get", RangeRequest::one(key)).await?;
        resp.kvs.into_iter().next().map(to_kv).transpose()
    }

    async fn list(&self, prefix: &str, options: ListOptions) -> Result<ListResult> {
        let start = match options.start_key {
            Some(s) if s.as_str() >= prefix => s,
            _ => prefix.to_owned(),
        };
        let mut get = RangeRequest {
            key: start.into(),
            range_end: prefix_end(prefix),
            ..RangeRequest::default()
        };
        if let Some(limit) = options.limit.filter(|&l| l > 0) {
            get.limit = i64::try_from(limit).unwrap_or(i64::MAX);
        }
        if let Some(rev) = options.revision {
            if rev <= 0 {
                return Err(StorageError::Backend(format!("invalid revision {rev}")));
            }
            get.revision = rev;
        }
        let resp = match self.range("list", get).await {
            Ok(r) => r,
            Err(e) => {
                return Err(self.revision_error(e, options.revision.unwrap_or(0)).await);
            }
        };
        let revision = match options.revision {
            Some(r) => r,
            None => header_revision(resp.header.as_ref())?,
        };
        let count = resp.count;
        let items = resp
            .kvs
            .into_iter()
            .map(to_kv)
            .collect::<Result<Vec<_>>>()?;
        let remaining = u64::try_from(count).unwrap_or(0);
        let remaining = remaining.saturating_sub(items.len() as u64);
        Ok(ListResult {
            items,
            revision,
            remaining,
        })
    }

    async fn create(&self, key: &str, value: Bytes) -> Result<KeyValue> {
        let txn = TxnRequest {
            compare: vec![Compare::create_revision(key, CompareResult::Equal, 0)],
            success: vec![RequestOp::put(key, value.clone())],
            failure: vec![],
        };
        let resp = self.txn("create", txn).await?;
        if !resp.succeeded {
            return Err(StorageError::AlreadyExists { key: key.into() });
        }
        let rev = header_revision(resp.header.as_ref())?;
        Ok(KeyValue {
            key: key.into(),
            value,
            create_revision: rev,
            mod_revision: rev,
        })
    }

    async fn update(
        &self,
        key: &str,
        value: Bytes,
        expected_mod_revision: Revision,
    ) -> Result<UpdateResult> {
        // Read first: unchanged bytes are not written (no revision, no event). `value` is what
        // this server writes now, so a JSON-stored object differs from its CBOR form and is
        // migrated.
        let current = match check_update(key, self.get(key).await?, &value, expected_mod_revision)?
        {
            Cas::Unchanged(unchanged) => return Ok(unchanged),
            Cas::Replace(current) => current,
        };
        let txn = TxnRequest {
            compare: vec![Compare::mod_revision(
                key,
                CompareResult::Equal,
                expected_mod_revision,
            )],
            success: vec![RequestOp::put(key, value.clone())],
            failure: vec![RequestOp::get(key)],
        };
        let resp = self.txn("update", txn).await?;
        if resp.succeeded {
            let rev = header_revision(resp.header.as_ref())?;
            return Ok(UpdateResult {
                kv: KeyValue {
                    key: key.into(),
                    value,
                    create_revision: current.create_revision,
                    mod_revision: rev,
                },
                changed: true,
            });
        }
        // The comparison failed: the key is gone or at another revision.
        check_revision(key, else_get(resp)?, Some(expected_mod_revision))
            .and(Err(lost_comparison(key)))
    }

    async fn delete(
        &self,
        key: &str,
        expected_mod_revision: Option<Revision>,
    ) -> Result<DeleteResult> {
        let cmp = match expected_mod_revision {
            Some(e) => Compare::mod_revision(key, CompareResult::Equal, e),
            None => Compare::create_revision(key, CompareResult::Greater, 0),
        };
        let txn = TxnRequest {
            compare: vec![cmp],
            success: vec![RequestOp::delete(key)],
            failure: vec![RequestOp::get(key)],
        };
        let resp = self.txn("delete", txn).await?;
        if resp.succeeded {
            let revision = header_revision(resp.header.as_ref())?;
            for op in resp.responses {
                if let Some(wire::Response::DeleteRange(d)) = op.response
                    && let Some(prev) = d.prev_kvs.into_iter().next()
                {
                    return Ok(DeleteResult {
                        prev: to_kv(prev)?,
                        revision,
                    });
                }
            }
            return Err(StorageError::NotFound { key: key.into() });
        }
        check_revision(key, else_get(resp)?, expected_mod_revision).and(Err(lost_comparison(key)))
    }

    async fn watch(&self, prefix: &str, after_revision: Revision) -> Result<Watcher> {
        let (items, requests) = self.watch_items(prefix, after_revision).await?;
        Ok(Watcher::new(futures_util::StreamExt::filter_map(
            items,
            move |item| {
                // The request side of the gRPC stream stays open as long as the watch.
                let _open = &requests;
                std::future::ready(match item {
                    Ok(WatchItem::Event(ev)) => Some(Ok(ev)),
                    Ok(WatchItem::Progress(_)) => None,
                    Err(e) => Some(Err(e)),
                })
            },
        )))
    }
}

impl EtcdStore {
    /// Whether etcd's progress notifications can be trusted to come after every event up to
    /// their revision: etcd 3.4.31, 3.5.13 and later. Earlier members can send one before
    /// the events it vouches for (etcd issues 15220 and 17529), so a watch cache that trusted
    /// it could answer a consistent read with a stale state; Kubernetes needs the same
    /// versions before it serves consistent reads from its cache. Asked of one member until
    /// one answers (a cluster being upgraded may mix versions); `false` while none does.
    pub(crate) async fn reliable_progress(&self) -> bool {
        if let Some(&reliable) = self.inner.reliable_progress.get() {
            return reliable;
        }
        match self.call("status", Retry::Read, |c| c.status()).await {
            Ok(status) => {
                let reliable = progress_is_reliable(&status.version);
                let _ = self.inner.reliable_progress.set(reliable);
                reliable
            }
            Err(e) => {
                tracing::warn!(error = %e, "etcd status: its version is unknown for now");
                false
            }
        }
    }

    /// A watch of `prefix` after `after_revision` (see [`Storage::watch`]) whose stream also
    /// carries etcd's progress notifications, and the request side of the call, which asks
    /// etcd for one ([`WatchRequests::request_progress`]): what a watch cache needs to know it
    /// is current even when the latest revisions changed other keys. Dropping the requests
    /// ends the watch.
    pub(crate) async fn watch_items(
        &self,
        prefix: &str,
        after_revision: Revision,
    ) -> Result<(WatchItems, WatchRequests)> {
        let start = after_revision.saturating_add(1).max(1);
        // etcd reports a compacted start revision only later, on the stream; a range at the
        // same revision answers now (a future revision is fine for a watch).
        let precheck = RangeRequest {
            key: prefix.into(),
            range_end: prefix_end(prefix),
            revision: start,
            count_only: true,
            ..RangeRequest::default()
        };
        match self.range("watch precheck", precheck).await {
            Ok(_) | Err(StorageError::FutureRevision { .. }) => {}
            Err(e @ StorageError::Gone { .. }) => {
                return Err(self.revision_error(e, after_revision).await);
            }
            Err(e) => return Err(e),
        }
        let watch = WatchCreateRequest {
            key: prefix.into(),
            range_end: prefix_end(prefix),
            start_revision: start,
            prev_kv: true,
        };
        let ((stream, requests), endpoint) = self
            .call_on("watch", Retry::Read, move |c| c.watch(watch.clone()))
            .await?;
        let state = WatchState {
            stream,
            endpoint,
            pending: std::collections::VecDeque::new(),
            store: self.clone(),
            last: after_revision,
            done: false,
            end: None,
        };
        let items = futures_util::stream::unfold(state, |mut st| async move {
            loop {
                if let Some(item) = st.pending.pop_front() {
                    if let WatchItem::Event(ev) = &item {
                        st.last = ev.revision();
                    }
                    return Some((Ok(item), st));
                }
                if st.done {
                    let end = st.end.take();
                    return end.map(|e| (Err(e), st));
                }
                let err = match st.stream.message().await {
                    Ok(Some(resp)) => {
                        if resp.canceled {
                            let compacted = resp.compact_revision;
                            if compacted > 0 {
                                st.store.note_compacted(compacted);
                                StorageError::Gone {
                                    requested: st.last,
                                    compacted,
                                }
                            } else {
                                StorageError::Unavailable(format!(
                                    "etcd cancelled the watch: {}",
                                    resp.cancel_reason
                                ))
                            }
                        } else if resp.events.is_empty() && !resp.created {
                            // A progress notification: every event up to its header's
                            // revision has been sent.
                            if let Some(h) = resp.header {
                                st.pending.push_back(WatchItem::Progress(h.revision));
                            }
                            continue;
                        } else {
                            for e in resp.events {
                                match to_event(e) {
                                    // A change of an existing key whose previous state etcd no
                                    // longer has: the event at the compacted revision itself.
                                    // Without it a watcher cannot tell MODIFIED from ADDED, nor
                                    // what was deleted: gone, as the revision before it is
                                    // (Kubernetes fails such a watch too; clients list again).
                                    Ok(ev) if ev.kind != EventKind::Added && ev.prev.is_none() => {
                                        st.end = Some(StorageError::Gone {
                                            requested: st.last,
                                            compacted: ev.revision(),
                                        });
                                        st.done = true;
                                        break;
                                    }
                                    Ok(ev) => st.pending.push_back(WatchItem::Event(Arc::new(ev))),
                                    Err(err) => {
                                        tracing::warn!(error = %err, "etcd watch event skipped");
                                    }
                                }
                            }
                            continue;
                        }
                    }
                    Ok(None) => {
                        StorageError::Unavailable("etcd ended the watch stream; watch again".into())
                    }
                    Err(e) => {
                        let f = map_error("watch", &e);
                        if f.broken {
                            st.store.inner.endpoints[st.endpoint]
                                .broken
                                .store(true, Ordering::Release);
                        }
                        f.err
                    }
                };
                st.done = true;
                return Some((Err(err), st));
            }
        });
        Ok((Box::pin(items), requests))
    }
}

/// Whether an etcd of `version` (`3.5.13`) sends progress notifications only after the
/// events they cover (3.4.31, 3.5.13, and every later version).
fn progress_is_reliable(version: &str) -> bool {
    let mut parts = version.split('.').map(|p| p.parse::<u64>().ok());
    let (Some(Some(major)), Some(Some(minor)), Some(Some(patch))) =
        (parts.next(), parts.next(), parts.next())
    else {
        return false;
    };
    match (major, minor) {
        (3, 4) => patch >= 31,
        (3, 5) => patch >= 13,
        (3, minor) => minor > 5,
        (major, _) => major > 3,
    }
}

#[cfg(test)]
mod tests {
    use super::{prefix_end, progress_is_reliable};

    #[test]
    fn progress_is_trusted_from_the_fixed_versions_on() {
        for (version, reliable) in [
            ("3.4.23", false),
            ("3.4.31", true),
            ("3.5.12", false),
            ("3.5.13", true),
            ("3.6.0", true),
            ("4.0.0", true),
            ("3.3.27", false),
            ("", false),
            ("3.5", false),
            ("3.5.x", false),
        ] {
            assert_eq!(progress_is_reliable(version), reliable, "{version}");
        }
    }

    #[test]
    fn prefix_end_is_the_next_key() {
        assert_eq!(prefix_end("/registry/a/"), b"/registry/a0".to_vec());
        assert_eq!(prefix_end(""), vec![0]);
    }
}
