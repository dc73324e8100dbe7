//! Revisioned key-value storage, shaped after the etcd v3 API so that an etcd backend fits
//! behind [`Storage`] unchanged.
//!
//! * One global revision (`i64`), incremented by exactly one per write (create, changed update,
//!   delete). A fresh store is at revision 1, so the first write gets 2 (as etcd) and no object
//!   or list ever has `resourceVersion` `"0"`, which Kubernetes reserves for "any".
//! * Every key carries its `create_revision` and `mod_revision`; an object's
//!   `metadata.resourceVersion` is its `mod_revision` in decimal, a list's is the revision it
//!   was read at.
//! * The history of the last N revisions is kept as events (with the previous value), which
//!   serves watches from a revision and lists at a past revision (consistent paging). Older
//!   revisions are compacted; asking for them is [`StorageError::Gone`].
//! * An update whose bytes equal the stored bytes is not written: no revision, no event,
//!   [`UpdateResult::changed`] is `false` (KEP-4222 "Encoding Determinism").
//!
//! Keys are opaque here; a server lays them out as Kubernetes does
//! (`/registry/<group>/<resource>/<namespace>/<name>`).

pub mod codec;
pub(crate) mod continue_token;
pub(crate) mod embedded;
pub(crate) mod etcd;
pub mod keys;
pub(crate) mod memory;
pub(crate) mod watch_cache;

mod fanout;
mod group_commit;
mod history;
mod status;

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use bytes::Bytes;
use futures_core::Stream;

pub use embedded::{EmbeddedOptions, EmbeddedStore};
#[cfg(feature = "etcd")]
pub use etcd::EtcdStore;
pub use etcd::{EtcdOptions, EtcdTls};
pub use fanout::WatchBuffer;
pub use history::History;
pub use memory::MemoryStore;
pub(crate) use status::{OPTIMISTIC_LOCK_MSG, ToStatus};
pub use watch_cache::{WatchCache, WatchCacheOptions};

/// A storage revision (etcd's `int64` revision; Kubernetes' `resourceVersion`).
pub type Revision = i64;

/// How many past revisions are kept for watches and past-revision lists by default.
pub const DEFAULT_HISTORY: u64 = 10_000;

/// How many bytes of keys and values of past revisions are kept at most by default (the
/// memory store holds them in memory, the embedded store on disk): 64 MiB.
pub const DEFAULT_HISTORY_BYTES: usize = 64 << 20;

/// How many events a watcher may fall behind the writers before its stream is ended with
/// [`StorageError::WatchLagged`] (bounded memory; the client re-watches).
pub const DEFAULT_WATCH_BUFFER: usize = 4096;

/// How many bytes of keys and values a watcher may fall behind the writers before its stream
/// is ended with [`StorageError::WatchLagged`]: 16 MiB.
pub const DEFAULT_WATCH_BUFFER_BYTES: usize = 16 << 20;

impl Default for WatchBuffer {
    fn default() -> Self {
        Self {
            events: DEFAULT_WATCH_BUFFER,
            bytes: DEFAULT_WATCH_BUFFER_BYTES,
        }
    }
}

/// A stored key with its value and revisions.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyValue {
    /// The key.
    pub key: String,
    /// The stored bytes (empty in the `kv` of a DELETED event).
    pub value: Bytes,
    /// The revision that created the key.
    pub create_revision: Revision,
    /// The revision of the last change (for a DELETED event: the deletion's revision).
    pub mod_revision: Revision,
}

/// What happened to a key.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum EventKind {
    /// The key was created.
    Added,
    /// The key's value changed.
    Modified,
    /// The key was deleted.
    Deleted,
}

impl EventKind {
    /// `ADDED`, `MODIFIED`, `DELETED`, as in a Kubernetes watch event.
    pub fn as_str(self) -> &'static str {
        match self {
            EventKind::Added => "ADDED",
            EventKind::Modified => "MODIFIED",
            EventKind::Deleted => "DELETED",
        }
    }
}

/// One change, at one revision.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Event {
    /// What happened.
    pub kind: EventKind,
    /// The key after the change. For [`EventKind::Deleted`], `value` is empty and
    /// `mod_revision` is the deletion's revision (use it as the deleted object's
    /// `resourceVersion`, as Kubernetes does).
    pub kv: KeyValue,
    /// The key before the change: `None` for ADDED, the old value for MODIFIED and DELETED.
    pub prev: Option<KeyValue>,
}

impl Event {
    /// The revision of the change.
    pub fn revision(&self) -> Revision {
        self.kv.mod_revision
    }

    /// The key.
    pub fn key(&self) -> &str {
        &self.kv.key
    }

    /// The object bytes to show a watcher: the new value, or for DELETED the last value.
    pub fn object_value(&self) -> &Bytes {
        match (self.kind, &self.prev) {
            (EventKind::Deleted, Some(prev)) => &prev.value,
            _ => &self.kv.value,
        }
    }
}

/// Options of [`Storage::list`].
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ListOptions {
    /// Read at this revision (`None`: the current one). Pass the revision of the first page
    /// when fetching the next, for a consistent snapshot.
    pub revision: Option<Revision>,
    /// Start at this key (inclusive), as etcd and Kubernetes' continue tokens do; for the
    /// next page pass [`ListResult::next_start_key`] (the last key plus `"\0"`).
    pub start_key: Option<String>,
    /// Return at most this many items (`None` or 0: all).
    pub limit: Option<usize>,
}

/// The answer to [`Storage::list`].
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ListResult {
    /// Items in key order.
    pub items: Vec<KeyValue>,
    /// The revision the list was read at (the list's `resourceVersion`).
    pub revision: Revision,
    /// How many keys under the prefix follow the last item (0 when complete).
    pub remaining: u64,
}

impl ListResult {
    /// Whether there are more items after this page.
    pub fn more(&self) -> bool {
        self.remaining > 0
    }

    /// Where the next page starts (the last key plus `"\0"`, its immediate successor), when
    /// there is one.
    pub fn next_start_key(&self) -> Option<String> {
        if !self.more() {
            return None;
        }
        self.items.last().map(|kv| format!("{}\0", kv.key))
    }
}

/// The answer to [`Storage::update`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UpdateResult {
    /// The key as stored after the call.
    pub kv: KeyValue,
    /// `false` when the new bytes equalled the stored bytes and nothing was written.
    pub changed: bool,
}

/// What an update may do once [`check_update`] passed.
pub(crate) enum Cas {
    /// The new bytes equal the stored ones: nothing is written (no revision, no event).
    Unchanged(UpdateResult),
    /// Write the new bytes over this stored key-value.
    Replace(KeyValue),
}

/// The check of an update: [`check_revision`] at `expected_mod_revision`, and bytes equal
/// to the stored ones are not written.
pub(crate) fn check_update(
    key: &str,
    current: Option<KeyValue>,
    value: &Bytes,
    expected_mod_revision: Revision,
) -> Result<Cas> {
    let current = check_revision(key, current, Some(expected_mod_revision))?;
    if current.value == *value {
        return Ok(Cas::Unchanged(UpdateResult {
            kv: current,
            changed: false,
        }));
    }
    Ok(Cas::Replace(current))
}

/// The compare-and-swap check, the same in every backend and for every write: the key must
/// exist (else [`StorageError::NotFound`]) and, when a revision is expected, be at it (else
/// [`StorageError::Conflict`] with the revision it is at). Gives the current key-value back.
pub(crate) fn check_revision<K: std::borrow::Borrow<KeyValue>>(
    key: &str,
    current: Option<K>,
    expected_mod_revision: Option<Revision>,
) -> Result<K> {
    let Some(current) = current else {
        return Err(StorageError::NotFound { key: key.into() });
    };
    let actual = current.borrow().mod_revision;
    match expected_mod_revision {
        Some(expected) if expected != actual => Err(StorageError::Conflict {
            key: key.into(),
            expected,
            actual,
        }),
        _ => Ok(current),
    }
}

/// The answer to [`Storage::delete`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeleteResult {
    /// The key as it was before deletion.
    pub prev: KeyValue,
    /// The deletion's revision.
    pub revision: Revision,
}

/// Storage failures.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StorageError {
    /// The key does not exist.
    NotFound {
        /// The key.
        key: String,
    },
    /// Create of a key that exists.
    AlreadyExists {
        /// The key.
        key: String,
    },
    /// A compare-and-swap precondition failed.
    Conflict {
        /// The key.
        key: String,
        /// The `mod_revision` the caller expected.
        expected: Revision,
        /// The `mod_revision` found.
        actual: Revision,
    },
    /// The revision asked for has been compacted ("too old resource version"; HTTP 410).
    Gone {
        /// The revision asked for.
        requested: Revision,
        /// The oldest revision still available minus one.
        compacted: Revision,
    },
    /// The revision asked for is newer than the store's.
    FutureRevision {
        /// The revision asked for.
        requested: Revision,
        /// The store's current revision.
        current: Revision,
    },
    /// A watcher fell more than the watch buffer behind and its stream was ended; the
    /// client should watch again from the last revision it saw.
    WatchLagged {
        /// Events the watcher missed.
        missed: u64,
    },
    /// Stored bytes could not be decoded or an object could not be encoded.
    Codec(String),
    /// The backend failed (I/O, corruption, task failure).
    Backend(String),
    /// The backend cannot be reached (etcd down or unreachable); retry later (HTTP 503).
    Unavailable(String),
    /// The backend did not answer in time (HTTP 504).
    Timeout(String),
}

impl fmt::Display for StorageError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            StorageError::NotFound { key } => write!(f, "key not found: {key}"),
            StorageError::AlreadyExists { key } => write!(f, "key already exists: {key}"),
            StorageError::Conflict {
                key,
                expected,
                actual,
            } => write!(
                f,
                "revision conflict on {key}: expected {expected}, found {actual}"
            ),
            StorageError::Gone {
                requested,
                compacted,
            } => write!(f, "too old resource version: {requested} ({compacted})"),
            StorageError::FutureRevision { requested, current } => write!(
                f,
                "Too large resource version: {requested}, current: {current}"
            ),
            StorageError::WatchLagged { missed } => write!(
                f,
                "watcher fell behind by {missed} events and was closed; watch again"
            ),
            StorageError::Codec(m) => write!(f, "storage codec error: {m}"),
            StorageError::Backend(m) => write!(f, "storage backend error: {m}"),
            StorageError::Unavailable(m) => write!(f, "storage unavailable: {m}"),
            StorageError::Timeout(m) => write!(f, "storage timeout: {m}"),
        }
    }
}

impl std::error::Error for StorageError {}

/// Storage results.
pub(crate) type Result<T, E = StorageError> = std::result::Result<T, E>;

/// The events of a watch: first the history after the start revision, then live writes.
/// Ends with an `Err` when the watcher lags (or never, until dropped, otherwise). Events are
/// shared (`Arc`) among all watchers, so an encoded form can be cached per event.
pub struct Watcher {
    inner: Pin<Box<dyn Stream<Item = Result<Arc<Event>>> + Send>>,
}

impl Watcher {
    pub(crate) fn new(inner: impl Stream<Item = Result<Arc<Event>>> + Send + 'static) -> Self {
        Self {
            inner: Box::pin(inner),
        }
    }

    /// The next event (`None` when the stream has ended).
    pub async fn next(&mut self) -> Option<Result<Arc<Event>>> {
        std::future::poll_fn(|cx| self.inner.as_mut().poll_next(cx)).await
    }
}

impl Stream for Watcher {
    type Item = Result<Arc<Event>>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        self.inner.as_mut().poll_next(cx)
    }
}

impl fmt::Debug for Watcher {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Watcher").finish_non_exhaustive()
    }
}

/// What a watch that reports progress yields: an event, or a revision every event up to
/// which has been yielded (etcd's progress notification).
#[derive(Debug, Clone)]
pub(crate) enum WatchItem {
    /// A change.
    Event(Arc<Event>),
    /// The watch has sent every event up to this revision (etcd's progress notifications).
    #[cfg_attr(not(feature = "etcd"), allow(dead_code))]
    Progress(Revision),
}

/// A stream of [`WatchItem`]s.
pub(crate) type WatchItems = Pin<Box<dyn Stream<Item = Result<WatchItem>> + Send>>;

/// The storage interface (etcd v3 semantics). All methods are async and cheap to call from
/// any tokio task; backends do blocking work off the runtime threads.
pub trait Storage: Send + Sync {
    /// The current revision.
    fn current_revision(&self) -> impl Future<Output = Result<Revision>> + Send;

    /// The oldest revision that is no longer available (watches and lists need a revision
    /// `>=` this).
    fn compacted_revision(&self) -> impl Future<Output = Result<Revision>> + Send;

    /// The current value of `key`.
    fn get(&self, key: &str) -> impl Future<Output = Result<Option<KeyValue>>> + Send;

    /// Keys starting with `prefix`, in key order, at a revision, paged.
    /// `Gone` if `options.revision` is compacted, `FutureRevision` if it is ahead.
    fn list(
        &self,
        prefix: &str,
        options: ListOptions,
    ) -> impl Future<Output = Result<ListResult>> + Send;

    /// Create `key`; `AlreadyExists` if present.
    fn create(&self, key: &str, value: Bytes) -> impl Future<Output = Result<KeyValue>> + Send;

    /// Replace `key`'s value if its `mod_revision` is `expected_mod_revision`
    /// (`Conflict` otherwise, `NotFound` if absent). Identical bytes are not written.
    fn update(
        &self,
        key: &str,
        value: Bytes,
        expected_mod_revision: Revision,
    ) -> impl Future<Output = Result<UpdateResult>> + Send;

    /// Delete `key`, if given only when its `mod_revision` matches (`Conflict` otherwise).
    fn delete(
        &self,
        key: &str,
        expected_mod_revision: Option<Revision>,
    ) -> impl Future<Output = Result<DeleteResult>> + Send;

    /// Watch keys starting with `prefix` for changes with revision `> after_revision`:
    /// history is replayed first, then live writes follow. `Gone` if `after_revision` is
    /// older than the compacted revision. A future revision is allowed (events start when
    /// the store gets there).
    fn watch(
        &self,
        prefix: &str,
        after_revision: Revision,
    ) -> impl Future<Output = Result<Watcher>> + Send;

    /// Whether the store can serve requests now (`/readyz`): by default, whether the current
    /// revision can be read.
    fn ready(&self) -> impl Future<Output = Result<()>> + Send {
        async { self.current_revision().await.map(|_| ()) }
    }
}

/// A store chosen at run time: enum dispatch over the backends.
#[derive(Clone, Debug)]
pub enum Store {
    /// In-process, lost on exit.
    Memory(MemoryStore),
    /// On disk (redb), the default.
    Embedded(EmbeddedStore),
    /// In etcd (`--etcd-servers`), shared by every replica (feature `etcd`).
    #[cfg(feature = "etcd")]
    Etcd(EtcdStore),
    /// Another store, its reads answered from a [`WatchCache`].
    Cached(WatchCache),
}

impl Store {
    /// The name of the storage check in `/healthz`, `/livez` and `/readyz`: `etcd`, as
    /// Kubernetes names it, for etcd; `storage-redb` and `storage-memory` for the others.
    pub fn check_name(&self) -> &'static str {
        match self {
            Store::Memory(_) => "storage-memory",
            Store::Embedded(_) => "storage-redb",
            #[cfg(feature = "etcd")]
            Store::Etcd(_) => "etcd",
            Store::Cached(c) => c.store().check_name(),
        }
    }

    /// How many transactions the embedded store has committed since it was opened (each
    /// holds the writes group commit gathered); `None` for the other stores.
    pub fn commits(&self) -> Option<u64> {
        match self {
            Store::Embedded(s) => Some(s.commits()),
            Store::Cached(c) => c.store().commits(),
            _ => None,
        }
    }
}

macro_rules! dispatch {
    ($self:ident, $s:ident => $e:expr) => {
        match $self {
            Store::Memory($s) => $e,
            Store::Embedded($s) => $e,
            #[cfg(feature = "etcd")]
            Store::Etcd($s) => $e,
            Store::Cached($s) => $e,
        }
    };
}

impl Storage for Store {
    async fn current_revision(&self) -> Result<Revision> {
        dispatch!(self, s => s.current_revision().await)
    }
    async fn compacted_revision(&self) -> Result<Revision> {
        dispatch!(self, s => s.compacted_revision().await)
    }
    async fn get(&self, key: &str) -> Result<Option<KeyValue>> {
        dispatch!(self, s => s.get(key).await)
    }
    async fn list(&self, prefix: &str, options: ListOptions) -> Result<ListResult> {
        dispatch!(self, s => s.list(prefix, options).await)
    }
    async fn create(&self, key: &str, value: Bytes) -> Result<KeyValue> {
        dispatch!(self, s => s.create(key, value).await)
    }
    async fn update(
        &self,
        key: &str,
        value: Bytes,
        expected_mod_revision: Revision,
    ) -> Result<UpdateResult> {
        dispatch!(self, s => s.update(key, value, expected_mod_revision).await)
    }
    async fn delete(
        &self,
        key: &str,
        expected_mod_revision: Option<Revision>,
    ) -> Result<DeleteResult> {
        dispatch!(self, s => s.delete(key, expected_mod_revision).await)
    }
    async fn watch(&self, prefix: &str, after_revision: Revision) -> Result<Watcher> {
        dispatch!(self, s => s.watch(prefix, after_revision).await)
    }
    async fn ready(&self) -> Result<()> {
        dispatch!(self, s => s.ready().await)
    }
}

/// An opened storage stack: store, codec and key layout (what
/// `config::StorageArgs::open` opens).
#[derive(Debug, Clone)]
pub struct OpenedStorage {
    /// The store.
    pub store: Store,
    /// The codec for new writes (reads recognise both formats).
    pub codec: codec::StorageCodec,
    /// The key layout.
    pub keys: keys::Keys,
}
