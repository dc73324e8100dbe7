//! The etcd backend (`--etcd-servers`): etcd v3 is the one source of truth, so any number of
//! sample-apiserver replicas can serve the same objects.
//!
//! Mapping of the [`Storage`] interface onto etcd's API:
//!
//! * Revisions are etcd's: a key's `mod_revision` is the object's `resourceVersion`, a range's
//!   header revision is a list's.
//! * `create` is a transaction on `create_revision(key) == 0`; `update` and `delete` with a
//!   precondition are transactions on `mod_revision(key) == expected`. A failed compare reads
//!   the key in the same transaction, so `NotFound` and `Conflict` are told apart without a
//!   second round trip.
//! * `update` reads the key first and writes nothing when the new bytes equal the stored bytes
//!   (as the other backends). The comparison is against the bytes the server would write now,
//!   so an object stored as JSON by an older server (or by hand) is rewritten as CBOR when a
//!   client writes it back unchanged.
//! * `list` is one range request `[start_key, prefix_end)` with etcd's `limit` and `revision`;
//!   `remaining` comes from the range's `count`.
//! * `watch` is an etcd watch with `start_revision = after + 1` and `prev_kv`; a put whose
//!   `create_revision` equals its `mod_revision` is ADDED, other puts MODIFIED.
//! * etcd's "required revision has been compacted" is [`StorageError::Gone`] (HTTP 410) and
//!   "required revision is a future revision" [`StorageError::FutureRevision`].
//! * Compaction: etcd has no query for its compacted revision, so, as Kubernetes does, the
//!   server owns the compactor. Every `compaction_interval` each replica proposes to compact
//!   to `current - history`; the proposal is a compare-and-swap on the key
//!   `<prefix>/compact_rev_key` (value: the revision in decimal), so one replica wins each
//!   round and every replica can read the compacted revision back.
//!
//! Failure behaviour: every etcd call is bounded by `request_timeout` (5 s by default) per
//! member tried; an unreachable etcd gives [`StorageError::Unavailable`] (HTTP 503), no answer
//! in time [`StorageError::Timeout`] (HTTP 504). There is one gRPC client per endpoint; calls
//! go to the current endpoint and, when it fails at the transport level, move on to the next
//! (reads always, writes only if they surely never left). A failed endpoint's client is
//! rebuilt before its next use, so service resumes as soon as etcd answers again. A watch whose
//! etcd stream breaks ends with an error; the client watches again from its last revision.

use std::fmt;
use std::future::Future;
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicUsize, Ordering};
use std::sync::{Arc, RwLock, Weak};
use std::time::Duration;

use bytes::Bytes;
use etcd_client::{
    Client, CompactionOptions, Compare, CompareOp, ConnectOptions, DeleteOptions, GetOptions, Txn,
    TxnOp, TxnOpResponse, WatchOptions,
};

use super::{
    Cas, DEFAULT_HISTORY, DeleteResult, Event, EventKind, KeyValue, ListOptions, ListResult,
    Result, Revision, Storage, StorageError, UpdateResult, WatchItem, WatchItems, WatchStream,
    check_revision, check_update,
};
use futures_util::StreamExt;

/// Kubernetes' default `--etcd-prefix`.
pub const DEFAULT_ETCD_PREFIX: &str = "/registry";

/// How long one etcd call may take before it fails with [`StorageError::Timeout`].
pub const DEFAULT_REQUEST_TIMEOUT: Duration = Duration::from_secs(5);

/// How often the compactor runs (Kubernetes' `--etcd-compaction-interval` default).
pub const DEFAULT_COMPACTION_INTERVAL: Duration = Duration::from_secs(300);

/// The name of the key, under the key prefix, that records the last compaction.
pub const COMPACT_KEY_NAME: &str = "compact_rev_key";

/// Options of the etcd store.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EtcdOptions {
    /// etcd client URLs (`http://host:port`).
    pub endpoints: Vec<String>,
    /// The key recording compactions (`<key prefix>/compact_rev_key`).
    pub compact_key: String,
    /// Bound of every etcd call.
    pub request_timeout: Duration,
    /// How often to compact; zero: never (someone else compacts).
    pub compaction_interval: Duration,
    /// Revisions kept when compacting.
    pub history: u64,
    /// TLS to etcd (`https://` endpoints).
    pub tls: Option<EtcdTls>,
}

/// TLS to etcd, as kube-apiserver's `--etcd-cafile`, `--etcd-certfile`, `--etcd-keyfile`.
/// The files are read each time a client is built, so a rotated client certificate is used
/// from the next reconnection on.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct EtcdTls {
    /// CA bundle (PEM) that etcd's serving certificate must chain to.
    pub ca_file: Option<std::path::PathBuf>,
    /// Client certificate (PEM), for etcd's `--client-cert-auth`; with `key_file`.
    pub cert_file: Option<std::path::PathBuf>,
    /// The client certificate's key (PEM).
    pub key_file: Option<std::path::PathBuf>,
}

impl EtcdTls {
    fn options(&self) -> Result<etcd_client::TlsOptions> {
        let read = |p: &std::path::Path| {
            std::fs::read(p).map_err(|e| {
                StorageError::Unavailable(format!("etcd TLS file {}: {e}", p.display()))
            })
        };
        let mut tls = etcd_client::TlsOptions::new();
        if let Some(ca) = &self.ca_file {
            tls = tls.ca_certificate(etcd_client::Certificate::from_pem(read(ca)?));
        }
        match (&self.cert_file, &self.key_file) {
            (Some(cert), Some(key)) => {
                tls = tls.identity(etcd_client::Identity::from_pem(read(cert)?, read(key)?));
            }
            (None, None) => {}
            _ => {
                return Err(StorageError::Unavailable(
                    "etcd TLS: a client certificate needs its key, and a key its certificate"
                        .into(),
                ));
            }
        }
        Ok(tls)
    }
}

impl EtcdOptions {
    /// Options for `endpoints` with keys under `key_prefix`, defaults otherwise.
    pub fn new(endpoints: Vec<String>, key_prefix: &str) -> Self {
        Self {
            endpoints,
            compact_key: format!("{}/{COMPACT_KEY_NAME}", key_prefix.trim_end_matches('/')),
            request_timeout: DEFAULT_REQUEST_TIMEOUT,
            compaction_interval: DEFAULT_COMPACTION_INTERVAL,
            history: DEFAULT_HISTORY,
            tls: None,
        }
    }
}

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

fn connect_options(o: &EtcdOptions) -> Result<ConnectOptions> {
    let options = ConnectOptions::new()
        // Requests are bounded by `call` (one timeout, one error: Timeout), not by tonic.
        .with_connect_timeout(o.request_timeout)
        // HTTP/2 pings find a dead or frozen etcd under a long-lived watch.
        .with_keep_alive(Duration::from_secs(10), o.request_timeout)
        .with_keep_alive_while_idle(true);
    Ok(match &o.tls {
        Some(tls) => options.with_tls(tls.options()?),
        None => options,
    })
}

/// A client for one endpoint (lazy: nothing is sent until the first request).
async fn connect(o: &EtcdOptions, url: &str) -> Result<Client> {
    match tokio::time::timeout(
        o.request_timeout,
        Client::connect([url], Some(connect_options(o)?)),
    )
    .await
    {
        Ok(Ok(c)) => Ok(c),
        Ok(Err(e)) => Err(StorageError::Unavailable(format!(
            "etcd client for {url}: {e}"
        ))),
        Err(_) => Err(StorageError::Timeout(format!(
            "etcd client for {url}: not built within {:?}",
            o.request_timeout
        ))),
    }
}

/// A failed etcd call, mapped.
struct Failure {
    err: StorageError,
    /// The connection is suspect: rebuild the endpoint's client and try another endpoint.
    broken: bool,
    /// The request never left (no connection could be made), so even a write may be retried.
    unsent: bool,
}

/// An etcd client error as a storage error, and what it says about the connection.
fn map_error(what: &str, e: etcd_client::Error) -> Failure {
    let text = e.to_string();
    let (err, broken) = classify(what, e);
    let unsent = broken
        && [
            "tcp connect error",
            "error trying to connect",
            "Connection refused",
        ]
        .iter()
        .any(|m| text.contains(m));
    Failure {
        err,
        broken,
        unsent,
    }
}

const COMPACTED_MSG: &str = "required revision has been compacted";
const FUTURE_MSG: &str = "required revision is a future revision";

/// An etcd client error as a storage error, and whether the connection is suspect. `Gone`
/// and `FutureRevision` carry placeholder
/// revisions; callers that know the requested revision fill them in.
fn classify(what: &str, e: etcd_client::Error) -> (StorageError, bool) {
    use etcd_client::Error as E;
    match e {
        E::GRpcStatus(s) => {
            let msg = s.message();
            if msg.contains(COMPACTED_MSG) {
                return (
                    StorageError::Gone {
                        requested: 0,
                        compacted: 0,
                    },
                    false,
                );
            }
            if msg.contains(FUTURE_MSG) {
                return (
                    StorageError::FutureRevision {
                        requested: 0,
                        current: 0,
                    },
                    false,
                );
            }
            let text = format!("etcd {what}: {} ({:?})", msg, s.code());
            let code: i32 = s.code().into();
            if code == grpc_code::CANCELLED && msg.contains("Timeout expired") {
                // tonic's own deadline.
                return (StorageError::Timeout(text), true);
            }
            match code {
                grpc_code::UNAVAILABLE | grpc_code::CANCELLED | grpc_code::UNKNOWN => {
                    (StorageError::Unavailable(text), true)
                }
                grpc_code::DEADLINE_EXCEEDED => (StorageError::Timeout(text), true),
                _ => (StorageError::Backend(text), false),
            }
        }
        E::TransportError(t) => (StorageError::Unavailable(format!("etcd {what}: {t}")), true),
        E::IoError(io) => (
            StorageError::Unavailable(format!("etcd {what}: {io}")),
            true,
        ),
        other => (
            StorageError::Backend(format!("etcd {what}: {other}")),
            false,
        ),
    }
}

/// gRPC status codes (numbered as in the gRPC spec; tonic is only a transitive dependency).
mod grpc_code {
    pub(super) const CANCELLED: i32 = 1;
    pub(super) const UNKNOWN: i32 = 2;
    pub(super) const DEADLINE_EXCEEDED: i32 = 4;
    pub(super) const UNAVAILABLE: i32 = 14;
}

fn utf8_key(key: &[u8]) -> Result<String> {
    String::from_utf8(key.to_vec())
        .map_err(|_| StorageError::Backend(format!("etcd key is not UTF-8: {key:?}")))
}

fn to_kv(kv: etcd_client::KeyValue) -> Result<KeyValue> {
    let create_revision = kv.create_revision();
    let mod_revision = kv.mod_revision();
    let (key, value) = kv.into_key_value();
    Ok(KeyValue {
        key: utf8_key(&key)?,
        value: Bytes::from(value),
        create_revision,
        mod_revision,
    })
}

fn to_kv_ref(kv: &etcd_client::KeyValue) -> Result<KeyValue> {
    Ok(KeyValue {
        key: utf8_key(kv.key())?,
        value: Bytes::copy_from_slice(kv.value()),
        create_revision: kv.create_revision(),
        mod_revision: kv.mod_revision(),
    })
}

fn header_revision(h: Option<&etcd_client::ResponseHeader>) -> Result<Revision> {
    h.map(etcd_client::ResponseHeader::revision)
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
fn else_get(resp: &etcd_client::TxnResponse) -> Result<Option<KeyValue>> {
    for op in resp.op_responses() {
        if let TxnOpResponse::Get(mut g) = op {
            return g.take_kvs().into_iter().next().map(to_kv).transpose();
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
fn to_event(e: &etcd_client::Event) -> Result<Event> {
    let kv = e
        .kv()
        .ok_or_else(|| StorageError::Backend("etcd watch event without kv".into()))?;
    let prev = e.prev_kv().map(to_kv_ref).transpose()?;
    match e.event_type() {
        etcd_client::EventType::Put => {
            let kv = to_kv_ref(kv)?;
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
        etcd_client::EventType::Delete => Ok(Event {
            kind: EventKind::Deleted,
            kv: KeyValue {
                key: utf8_key(kv.key())?,
                value: Bytes::new(),
                create_revision: prev.as_ref().map_or(0, |p| p.create_revision),
                mod_revision: kv.mod_revision(),
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
                client: RwLock::new(connect(&options, url).await?),
                broken: AtomicBool::new(false),
            });
        }
        let store = EtcdStore {
            inner: Arc::new(Inner {
                options,
                endpoints,
                current: AtomicUsize::new(0),
                compacted: AtomicI64::new(0),
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
    async fn client_at(&self, i: usize) -> Result<Client> {
        let ep = &self.inner.endpoints[i];
        if ep.broken.swap(false, Ordering::AcqRel) {
            match connect(&self.inner.options, &ep.url).await {
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
        Fut: Future<Output = Result<T, etcd_client::Error>>,
    {
        let n = self.inner.endpoints.len();
        let start = self.inner.current.load(Ordering::Acquire) % n;
        let timeout = self.inner.options.request_timeout;
        let mut last = None;
        for attempt in 0..n {
            let i = (start + attempt) % n;
            let failure = match self.client_at(i).await {
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
                    Ok(Err(e)) => map_error(what, e),
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
        Fut: Future<Output = Result<T, etcd_client::Error>>,
    {
        self.call_on(what, retry, f).await.map(|(v, _)| v)
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
        let key = self.inner.options.compact_key.clone();
        let mut stream = self
            .call("probe compaction", Retry::Read, move |mut c| {
                let key = key.clone();
                async move {
                    c.watch(key, Some(WatchOptions::new().with_start_revision(1)))
                        .await
                }
            })
            .await
            .ok()?;
        let timeout = self.inner.options.request_timeout;
        tokio::time::timeout(timeout, async {
            // The "created" answer first, then (for a compacted start) the cancellation.
            for _ in 0..2 {
                match stream.message().await {
                    Ok(Some(resp)) if resp.compact_revision() > 0 => {
                        return Some(resp.compact_revision());
                    }
                    Ok(Some(resp)) if resp.canceled() => return None,
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
        let key = self.inner.options.compact_key.clone();
        let mut resp = self
            .call("get compact key", Retry::Read, move |mut c| {
                let key = key.clone();
                async move { c.get(key, None).await }
            })
            .await?;
        match resp.take_kvs().into_iter().next() {
            None => Ok((0, 0)),
            Some(kv) => {
                let rev = std::str::from_utf8(kv.value())
                    .ok()
                    .and_then(|s| s.trim().parse::<Revision>().ok())
                    .unwrap_or(0);
                Ok((rev, kv.mod_revision()))
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
        let key = self.inner.options.compact_key.clone();
        let claim = Txn::new()
            .when([Compare::mod_revision(
                key.clone(),
                CompareOp::Equal,
                key_mod,
            )])
            .and_then([TxnOp::put(key, target.to_string(), None)]);
        let resp = self
            .call("claim compaction", Retry::Write, move |mut c| {
                let claim = claim.clone();
                async move { c.txn(claim).await }
            })
            .await?;
        if !resp.succeeded() {
            // Another replica compacted meanwhile.
            return Ok(None);
        }
        match self
            .call("compact", Retry::Read, move |mut c| async move {
                c.compact(target, Some(CompactionOptions::new().with_physical()))
                    .await
            })
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
    stream: etcd_client::WatchResponseStream,
    /// The endpoint the watch runs on.
    endpoint: usize,
    pending: std::collections::VecDeque<WatchItem>,
    store: EtcdStore,
    last: Revision,
    done: bool,
}

impl Storage for EtcdStore {
    async fn current_revision(&self) -> Result<Revision> {
        let key = self.inner.options.compact_key.clone();
        let resp = self
            .call("get revision", Retry::Read, move |mut c| {
                let key = key.clone();
                async move { c.get(key, Some(GetOptions::new().with_count_only())).await }
            })
            .await?;
        header_revision(resp.header())
    }

    async fn compacted_revision(&self) -> Result<Revision> {
        let (recorded, _) = self.read_compact_key().await?;
        self.note_compacted(recorded);
        Ok(self.known_compacted())
    }

    async fn get(&self, key: &str) -> Result<Option<KeyValue>> {
        let k = key.to_owned();
        let mut resp = self
            .call("get", Retry::Read, move |mut c| {
                let k = k.clone();
                async move { c.get(k, None).await }
            })
            .await?;
        resp.take_kvs().into_iter().next().map(to_kv).transpose()
    }

    async fn list(&self, prefix: &str, options: ListOptions) -> Result<ListResult> {
        let start = match options.start_key {
            Some(s) if s.as_str() >= prefix => s,
            _ => prefix.to_owned(),
        };
        let mut get = GetOptions::new().with_range(prefix_end(prefix));
        if let Some(limit) = options.limit.filter(|&l| l > 0) {
            get = get.with_limit(i64::try_from(limit).unwrap_or(i64::MAX));
        }
        if let Some(rev) = options.revision {
            if rev <= 0 {
                return Err(StorageError::Backend(format!("invalid revision {rev}")));
            }
            get = get.with_revision(rev);
        }
        let mut resp = match self
            .call("list", Retry::Read, move |mut c| {
                let (start, get) = (start.clone(), get.clone());
                async move { c.get(start, Some(get)).await }
            })
            .await
        {
            Ok(r) => r,
            Err(e) => {
                return Err(self.revision_error(e, options.revision.unwrap_or(0)).await);
            }
        };
        let revision = match options.revision {
            Some(r) => r,
            None => header_revision(resp.header())?,
        };
        let count = resp.count();
        let items = resp
            .take_kvs()
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
        let txn = Txn::new()
            .when([Compare::create_revision(key, CompareOp::Equal, 0)])
            .and_then([TxnOp::put(key, value.to_vec(), None)]);
        let resp = self
            .call("create", Retry::Write, move |mut c| {
                let txn = txn.clone();
                async move { c.txn(txn).await }
            })
            .await?;
        if !resp.succeeded() {
            return Err(StorageError::AlreadyExists { key: key.into() });
        }
        let rev = header_revision(resp.header())?;
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
        let txn = Txn::new()
            .when([Compare::mod_revision(
                key,
                CompareOp::Equal,
                expected_mod_revision,
            )])
            .and_then([TxnOp::put(key, value.to_vec(), None)])
            .or_else([TxnOp::get(key, None)]);
        let resp = self
            .call("update", Retry::Write, move |mut c| {
                let txn = txn.clone();
                async move { c.txn(txn).await }
            })
            .await?;
        if resp.succeeded() {
            let rev = header_revision(resp.header())?;
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
        check_revision(key, else_get(&resp)?, Some(expected_mod_revision))
            .and(Err(lost_comparison(key)))
    }

    async fn delete(
        &self,
        key: &str,
        expected_mod_revision: Option<Revision>,
    ) -> Result<DeleteResult> {
        let cmp = match expected_mod_revision {
            Some(e) => Compare::mod_revision(key, CompareOp::Equal, e),
            None => Compare::create_revision(key, CompareOp::Greater, 0),
        };
        let txn = Txn::new()
            .when([cmp])
            .and_then([TxnOp::delete(
                key,
                Some(DeleteOptions::new().with_prev_key()),
            )])
            .or_else([TxnOp::get(key, None)]);
        let resp = self
            .call("delete", Retry::Write, move |mut c| {
                let txn = txn.clone();
                async move { c.txn(txn).await }
            })
            .await?;
        if resp.succeeded() {
            let revision = header_revision(resp.header())?;
            for op in resp.op_responses() {
                if let TxnOpResponse::Delete(mut d) = op
                    && let Some(prev) = d.take_prev_kvs().into_iter().next()
                {
                    return Ok(DeleteResult {
                        prev: to_kv(prev)?,
                        revision,
                    });
                }
            }
            return Err(StorageError::NotFound { key: key.into() });
        }
        check_revision(key, else_get(&resp)?, expected_mod_revision).and(Err(lost_comparison(key)))
    }

    async fn watch(&self, prefix: &str, after_revision: Revision) -> Result<WatchStream> {
        let (items, progress) = self.watch_items(prefix, after_revision).await?;
        Ok(WatchStream::new(items.filter_map(move |item| {
            // The request side of the gRPC stream stays open as long as the watch.
            let _open = &progress;
            std::future::ready(match item {
                Ok(WatchItem::Event(ev)) => Some(Ok(ev)),
                Ok(WatchItem::Progress(_)) => None,
                Err(e) => Some(Err(e)),
            })
        })))
    }
}

impl EtcdStore {
    /// A watch of `prefix` after `after_revision` (see [`Storage::watch`]) whose stream also
    /// carries etcd's progress notifications, and the sender that asks etcd for one
    /// (`request_progress`): what a watch cache needs to know it is current even when the
    /// latest revisions changed other keys.
    pub(crate) async fn watch_items(
        &self,
        prefix: &str,
        after_revision: Revision,
    ) -> Result<(WatchItems, etcd_client::WatchRequestSender)> {
        let start = after_revision.saturating_add(1).max(1);
        // etcd reports a compacted start revision only later, on the stream; a range at the
        // same revision answers now (a future revision is fine for a watch).
        let (p, end) = (prefix.to_owned(), prefix_end(prefix));
        match self
            .call("watch precheck", Retry::Read, move |mut c| {
                let (p, end) = (p.clone(), end.clone());
                async move {
                    c.get(
                        p,
                        Some(
                            GetOptions::new()
                                .with_range(end)
                                .with_count_only()
                                .with_revision(start),
                        ),
                    )
                    .await
                }
            })
            .await
        {
            Ok(_) | Err(StorageError::FutureRevision { .. }) => {}
            Err(e @ StorageError::Gone { .. }) => {
                return Err(self.revision_error(e, after_revision).await);
            }
            Err(e) => return Err(e),
        }
        let (p, end) = (prefix.to_owned(), prefix_end(prefix));
        let (stream, endpoint) = self
            .call_on("watch", Retry::Read, move |mut c| {
                let (p, end) = (p.clone(), end.clone());
                async move {
                    c.watch(
                        p,
                        Some(
                            WatchOptions::new()
                                .with_range(end)
                                .with_start_revision(start)
                                .with_prev_key(),
                        ),
                    )
                    .await
                }
            })
            .await?;
        let (sender, stream) = stream.split();
        let state = WatchState {
            stream,
            endpoint,
            pending: std::collections::VecDeque::new(),
            store: self.clone(),
            last: after_revision,
            done: false,
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
                    return None;
                }
                let err = match st.stream.message().await {
                    Ok(Some(resp)) => {
                        if resp.canceled() {
                            let compacted = resp.compact_revision();
                            if compacted > 0 {
                                st.store.note_compacted(compacted);
                                StorageError::Gone {
                                    requested: st.last,
                                    compacted,
                                }
                            } else {
                                StorageError::Unavailable(format!(
                                    "etcd cancelled the watch: {}",
                                    resp.cancel_reason()
                                ))
                            }
                        } else if resp.events().is_empty() && !resp.created() {
                            // A progress notification: every event up to its header's
                            // revision has been sent.
                            if let Some(h) = resp.header() {
                                st.pending.push_back(WatchItem::Progress(h.revision()));
                            }
                            continue;
                        } else {
                            for e in resp.events() {
                                match to_event(e) {
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
                        let f = map_error("watch", e);
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
        Ok((Box::pin(items), sender))
    }
}

#[cfg(test)]
mod tests {
    use super::prefix_end;

    #[test]
    fn prefix_end_is_the_next_key() {
        assert_eq!(prefix_end("/registry/a/"), b"/registry/a0".to_vec());
        assert_eq!(prefix_end(""), vec![0]);
    }
}
