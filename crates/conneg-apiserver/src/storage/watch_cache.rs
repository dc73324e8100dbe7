//! The watch cache: a store's reads answered from memory, one cache per resource, as
//! Kubernetes' cacher answers them (`k8s.io/apiserver/pkg/storage/cacher`). [`WatchCache`]
//! implements [`Storage`] over another store, so the registry and the endpoints above it read
//! through it unchanged.
//!
//! * **One cache per resource** (the keys under `<prefix>/<resource>/`), made by its first
//!   read: filled by one list of the resource, kept current by one storage watch from that
//!   list's revision. Each object is held once: the cache's map and its history share their
//!   bytes with the events storage delivered.
//! * **Consistent reads** (KEP-2340): `get`, and `list` without a revision, read the store's
//!   current revision (one cheap call) and wait until the cache has reached it. The cache of a
//!   memory or embedded store watches every key of that store, so it reaches every revision;
//!   with etcd it watches its resource only and, while a read waits, asks etcd for a progress
//!   notification (every event up to a revision has been sent). Several replicas on one etcd
//!   each keep their own caches, and a write through one is seen at once by a consistent read
//!   through another.
//! * **Past revisions**: a list at a revision (`resourceVersionMatch=Exact`, continue tokens)
//!   is answered by the cache when nothing of the resource changed since (its history says
//!   so, once it has caught up with storage's current revision), as is a watch from a revision with nothing to replay (from a list's revision, or
//!   from now). Other past states and replays come from storage, which owns compaction (410
//!   when it no longer has the revision, even when an operator compacted etcd by hand).
//! * **Writes** go to storage; the cache learns of them from its watch.
//! * **Never stale**: a read whose revision the cache has not reached within
//!   [`WatchCacheOptions::wait`] (its watch lags or is broken) is answered by storage. When the
//!   cache's watch ends (the cache fell behind storage's watch buffer, etcd went away), the
//!   cache is dropped, its watchers' streams end (clients watch again from their last
//!   revision) and reads go to storage until a new list has filled it again, after a backoff.
//! * **Memory**: the current objects of every resource read so far (once each), the history of
//!   [`WatchCacheOptions::history`] per resource (events share the objects' bytes), and per
//!   watcher a queue bounded by [`WatchCacheOptions::watch_buffer`]. At most
//!   [`MAX_RESOURCES`] resources are cached; reads of others go to storage.

use std::collections::HashMap;
use std::fmt;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError, RwLock};
use std::time::{Duration, Instant};

use bytes::Bytes;
use foldhash::quality::RandomState;
use futures_util::StreamExt;
use tokio::sync::{Notify, watch};
use tokio::task::AbortHandle;

#[cfg(feature = "etcd")]
use super::EtcdStore;
use super::keys::Keys;
use super::memory::MemoryStore;
use super::{
    DeleteResult, EmbeddedStore, History, KeyValue, ListOptions, ListResult, Result, Revision,
    Storage, StorageError, Store, UpdateResult, WatchBuffer, WatchItem, WatchItems, Watcher,
};

/// How long a read waits for the cache to reach its revision before storage answers it
/// (Kubernetes waits 3 s too).
pub(crate) const DEFAULT_WAIT: Duration = Duration::from_secs(3);

/// The most resources cached at once; reads of further resources go to storage.
pub(crate) const MAX_RESOURCES: usize = 1024;

/// The first wait before a broken cache is filled again; doubled up to [`MAX_BACKOFF`].
const MIN_BACKOFF: Duration = Duration::from_millis(100);
const MAX_BACKOFF: Duration = Duration::from_secs(5);

/// How much a watch cache holds and how long a read waits for it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WatchCacheOptions {
    /// The history each resource's cache keeps (past revisions for lists and watches).
    pub history: History,
    /// How far one watcher of the cache may fall behind before its stream is ended.
    pub watch_buffer: WatchBuffer,
    /// How long a read waits for the cache to reach its revision.
    pub wait: Duration,
}

impl Default for WatchCacheOptions {
    fn default() -> Self {
        Self {
            history: History::default(),
            watch_buffer: WatchBuffer::default(),
            wait: DEFAULT_WAIT,
        }
    }
}

/// A store whose reads are answered from per-resource caches (see the module). Cloning shares
/// the caches.
///
/// ```
/// # async fn demo() -> Result<(), conneg_apiserver::storage::StorageError> {
/// use conneg_apiserver::storage::keys::Keys;
/// use conneg_apiserver::storage::{MemoryStore, Storage, Store, WatchCache};
///
/// let keys = Keys::for_group("wardle.example.com");
/// let store = Store::Memory(MemoryStore::new());
/// let cached = WatchCache::new(store.clone(), &keys, Default::default());
/// let key = "/registry/wardle.example.com/flunders/default/f";
/// store.create(key, "{}".into()).await?; // written around the cache
/// assert!(cached.get(key).await?.is_some()); // a consistent read still sees it
/// # Ok(()) }
/// ```
#[derive(Clone)]
pub struct WatchCache {
    inner: Arc<Inner>,
}

/// The store under a cache: any but another cache (so that a [`Store`] and a cache do not
/// contain each other's futures).
#[derive(Debug, Clone)]
enum Under {
    Memory(MemoryStore),
    Embedded(EmbeddedStore),
    #[cfg(feature = "etcd")]
    Etcd(EtcdStore),
}

/// `$e` with `$s` bound to the store under a cache.
macro_rules! under {
    ($under:expr, $s:ident => $e:expr) => {
        match $under {
            Under::Memory($s) => $e,
            Under::Embedded($s) => $e,
            #[cfg(feature = "etcd")]
            Under::Etcd($s) => $e,
        }
    };
}

struct Inner {
    store: Under,
    /// The key prefix of the resources, with its trailing `/`.
    prefix: String,
    options: WatchCacheOptions,
    resources: Mutex<HashMap<String, Arc<Resource>, RandomState>>,
    /// The tasks that keep the caches current; stopped with the last clone.
    feeds: Mutex<Vec<AbortHandle>>,
}

impl Drop for Inner {
    fn drop(&mut self) {
        for feed in lock(&self.feeds).drain(..) {
            feed.abort();
        }
    }
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // Every update under these locks is one infallible step.
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// One resource's cache.
struct Resource {
    /// The contents while current; `None` while the cache is filled (again).
    contents: RwLock<Option<MemoryStore>>,
    /// The revision the cache has reached (0 while it is filled).
    reached: watch::Sender<Revision>,
    /// A read waits for a revision: ask etcd for a progress notification.
    progress_wanted: Notify,
}

impl Resource {
    fn contents(&self) -> Option<MemoryStore> {
        self.contents
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    fn install(&self, contents: Option<MemoryStore>) {
        let revision = contents.as_ref().map_or(0, MemoryStore::revision);
        *self
            .contents
            .write()
            .unwrap_or_else(PoisonError::into_inner) = contents;
        self.reached.send_replace(revision);
    }

    fn reach(&self, revision: Revision) {
        // Waking no one still locks each shard of tokio's notifier (~2,900 instructions per
        // write), so with no reader waiting the revision only moves. A reader subscribes
        // before it looks at the revision, so it either sees the new one or is woken.
        self.reached.send_if_modified(|r| {
            let newer = revision > *r;
            if newer {
                *r = revision;
            }
            newer && self.reached.receiver_count() > 0
        });
    }
}

impl fmt::Debug for WatchCache {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("WatchCache")
            .field("store", &self.inner.store)
            .field("prefix", &self.inner.prefix)
            .field("options", &self.inner.options)
            .finish_non_exhaustive()
    }
}

impl WatchCache {
    /// Caches the reads of `store`'s resources laid out by `keys` (a store that is already
    /// cached is given back as it is).
    pub fn new(store: Store, keys: &Keys, options: WatchCacheOptions) -> Self {
        let store = match store {
            Store::Cached(cached) => return cached,
            Store::Memory(s) => Under::Memory(s),
            Store::Embedded(s) => Under::Embedded(s),
            #[cfg(feature = "etcd")]
            Store::Etcd(s) => Under::Etcd(s),
        };
        Self {
            inner: Arc::new(Inner {
                store,
                prefix: format!("{}/", keys.prefix()),
                options,
                resources: Mutex::new(HashMap::default()),
                feeds: Mutex::new(Vec::new()),
            }),
        }
    }

    /// The store under the cache (where writes go).
    pub fn store(&self) -> Store {
        match &self.inner.store {
            Under::Memory(s) => Store::Memory(s.clone()),
            Under::Embedded(s) => Store::Embedded(s.clone()),
            #[cfg(feature = "etcd")]
            Under::Etcd(s) => Store::Etcd(s.clone()),
        }
    }

    /// The cache of the resource that `key` (or a collection prefix) belongs to, made now if
    /// it is new; `None` for keys outside every resource, or past [`MAX_RESOURCES`].
    fn resource(&self, key: &str) -> Option<Arc<Resource>> {
        let rest = key.strip_prefix(self.inner.prefix.as_str())?;
        let end = rest.find('/').filter(|&e| e > 0)?;
        let root = &key[..self.inner.prefix.len() + end + 1];
        let mut resources = lock(&self.inner.resources);
        if let Some(r) = resources.get(root) {
            return Some(r.clone());
        }
        if resources.len() >= MAX_RESOURCES {
            return None;
        }
        let resource = Arc::new(Resource {
            contents: RwLock::new(None),
            reached: watch::Sender::new(0),
            progress_wanted: Notify::new(),
        });
        resources.insert(root.to_owned(), resource.clone());
        let feed = tokio::spawn(feed(
            self.inner.store.clone(),
            root.to_owned(),
            resource.clone(),
            self.inner.options,
        ));
        lock(&self.inner.feeds).push(feed.abort_handle());
        Some(resource)
    }

    /// The cache's contents once it has reached `revision`; `None` when it has not within
    /// the wait (the caller asks storage).
    async fn reached(&self, res: &Resource, revision: Revision) -> Option<MemoryStore> {
        let mut reached = res.reached.subscribe();
        if *reached.borrow_and_update() < revision {
            // Over an etcd whose progress notifications may run ahead of its events, only the
            // cache's own events count, and waiting for them could be long: storage answers.
            if !self.reliable_progress().await {
                return None;
            }
            res.progress_wanted.notify_one();
            let wait = reached.wait_for(|r| *r >= revision);
            if !matches!(
                tokio::time::timeout(self.inner.options.wait, wait).await,
                Ok(Ok(_))
            ) {
                return None;
            }
        }
        res.contents()
    }

    /// Whether the store's watch reaches every revision the cache may wait for: memory and
    /// embedded stores send every event; etcd's progress notifications must be trustworthy.
    async fn reliable_progress(&self) -> bool {
        match &self.inner.store {
            #[cfg(feature = "etcd")]
            Under::Etcd(s) => s.reliable_progress().await,
            _ => true,
        }
    }

    /// The cache's contents once current (a consistent read).
    async fn current(&self, res: &Resource) -> Result<Option<MemoryStore>> {
        let revision = under!(&self.inner.store, s => s.current_revision().await)?;
        Ok(self.reached(res, revision).await)
    }

    /// The cache's contents once it has reached `revision`, when the store has (a revision
    /// ahead of the store's is for storage to refuse).
    async fn at(&self, res: &Resource, revision: Revision) -> Result<Option<MemoryStore>> {
        if *res.reached.borrow() >= revision {
            return Ok(res.contents());
        }
        if revision > under!(&self.inner.store, s => s.current_revision().await)? {
            return Ok(None);
        }
        Ok(self.reached(res, revision).await)
    }
}

/// Keeps `res`, the cache of the keys under `root`, current: a list, then its watch, again
/// after a backoff whenever the watch ends.
async fn feed(store: Under, root: String, res: Arc<Resource>, options: WatchCacheOptions) {
    let mut backoff = MIN_BACKOFF;
    loop {
        let started = Instant::now();
        let e = follow(&store, &root, &res, options).await;
        res.install(None);
        tracing::warn!(resource = %root, error = %e, "watch cache reset; filling it again");
        if started.elapsed() > MAX_BACKOFF {
            backoff = MIN_BACKOFF;
        }
        tokio::time::sleep(backoff).await;
        backoff = (backoff * 2).min(MAX_BACKOFF);
    }
}

/// Fills `res` from one list of `root` and applies the store's watch to it until that ends.
async fn follow(
    store: &Under,
    root: &str,
    res: &Resource,
    options: WatchCacheOptions,
) -> StorageError {
    let page = match under!(store, s => s.list(root, ListOptions::default()).await) {
        Ok(page) => page,
        Err(e) => return e,
    };
    let (mut items, progress) = match watch_items(store, root, page.revision).await {
        Ok(watch) => watch,
        Err(e) => return e,
    };
    let contents = MemoryStore::mirror(
        options.history,
        options.watch_buffer,
        page.items,
        page.revision,
    );
    res.install(Some(contents.clone()));
    loop {
        tokio::select! {
            item = items.next() => {
                let revision = match item {
                    Some(Ok(WatchItem::Event(ev))) => {
                        let revision = ev.revision();
                        if ev.key().starts_with(root) {
                            contents.apply(ev);
                        } else {
                            contents.advance(revision);
                        }
                        revision
                    }
                    Some(Ok(WatchItem::Progress(revision))) => {
                        contents.advance(revision);
                        revision
                    }
                    Some(Err(e)) => return e,
                    None => return StorageError::Unavailable("the storage watch ended".into()),
                };
                res.reach(revision);
            }
            () = res.progress_wanted.notified(), if progress.is_some() => {
                if let Some(requests) = &progress
                    && let Err(e) = request_progress(requests).await
                {
                    return StorageError::Unavailable(format!("etcd progress request: {e}"));
                }
            }
        }
    }
}

/// The request side of a store's watch, for the stores that take requests (etcd: progress).
#[cfg(feature = "etcd")]
type Requests = super::etcd::WatchRequests;
/// No store without etcd takes watch requests.
#[cfg(not(feature = "etcd"))]
type Requests = std::convert::Infallible;

/// Asks the store for a progress notification on its watch.
#[cfg(feature = "etcd")]
async fn request_progress(requests: &Requests) -> Result<()> {
    requests.request_progress().await
}

/// Asks the store for a progress notification on its watch.
#[cfg(not(feature = "etcd"))]
async fn request_progress(requests: &Requests) -> Result<()> {
    match *requests {}
}

/// The watch that keeps the cache of `root` current from `after`: with etcd, of `root` and
/// with progress notifications on request; otherwise of every key of the store (in-process
/// events are cheap), so that every revision reaches the cache.
#[cfg_attr(not(feature = "etcd"), allow(unused_variables))]
async fn watch_items(
    store: &Under,
    root: &str,
    after: Revision,
) -> Result<(WatchItems, Option<Requests>)> {
    let events = match store {
        #[cfg(feature = "etcd")]
        Under::Etcd(etcd) => {
            let (items, sender) = etcd.watch_items(root, after).await?;
            return Ok((items, Some(sender)));
        }
        Under::Memory(s) => s.watch("", after).await?,
        Under::Embedded(s) => s.watch("", after).await?,
    };
    Ok((Box::pin(events.map(|e| e.map(WatchItem::Event))), None))
}

impl Storage for WatchCache {
    async fn current_revision(&self) -> Result<Revision> {
        under!(&self.inner.store, s => s.current_revision().await)
    }

    async fn compacted_revision(&self) -> Result<Revision> {
        under!(&self.inner.store, s => s.compacted_revision().await)
    }

    async fn get(&self, key: &str) -> Result<Option<KeyValue>> {
        if let Some(res) = self.resource(key)
            && let Some(contents) = self.current(&res).await?
        {
            return contents.get(key).await;
        }
        under!(&self.inner.store, s => s.get(key).await)
    }

    async fn list(&self, prefix: &str, options: ListOptions) -> Result<ListResult> {
        if let Some(res) = self.resource(prefix) {
            let contents = match options.revision {
                None => self.current(&res).await?,
                // A past state is the cache's to give only when nothing changed since, which
                // only a cache that has caught up with storage can tell: one that lags has not
                // seen the changes yet, and would answer for a revision storage compacted.
                Some(revision) => match self.at(&res, revision).await? {
                    Some(_) => self.current(&res).await?,
                    None => None,
                },
            };
            // The cache answers with its current state (at a past revision only when that
            // state is the same); older states come from storage, which owns compaction.
            if let Some(contents) = contents
                && options
                    .revision
                    .is_none_or(|r| contents.unchanged_since(prefix, r))
            {
                return contents.list(prefix, options).await;
            }
        }
        under!(&self.inner.store, s => s.list(prefix, options).await)
    }

    async fn create(&self, key: &str, value: Bytes) -> Result<KeyValue> {
        under!(&self.inner.store, s => s.create(key, value).await)
    }

    async fn update(
        &self,
        key: &str,
        value: Bytes,
        expected_mod_revision: Revision,
    ) -> Result<UpdateResult> {
        under!(&self.inner.store, s => s.update(key, value, expected_mod_revision).await)
    }

    async fn delete(
        &self,
        key: &str,
        expected_mod_revision: Option<Revision>,
    ) -> Result<DeleteResult> {
        under!(&self.inner.store, s => s.delete(key, expected_mod_revision).await)
    }

    async fn watch(&self, prefix: &str, after_revision: Revision) -> Result<Watcher> {
        // From the cache when there is nothing to replay (a watch from a list's revision, or
        // from now); a replay of past changes comes from storage, which owns compaction.
        if let Some(contents) = self.resource(prefix).and_then(|res| res.contents())
            && contents.unchanged_since(prefix, after_revision)
        {
            return contents.watch(prefix, after_revision).await;
        }
        under!(&self.inner.store, s => s.watch(prefix, after_revision).await)
    }

    async fn ready(&self) -> Result<()> {
        under!(&self.inner.store, s => s.ready().await)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const P: &str = "/registry/wardle.example.com/flunders/";
    const OTHER: &str = "/registry/wardle.example.com/fischers/f";

    fn cache(store: &Store, options: WatchCacheOptions) -> WatchCache {
        WatchCache::new(
            store.clone(),
            &Keys::for_group("wardle.example.com"),
            options,
        )
    }

    /// Waits until the cache of `P` holds its contents (its first list is made by a task).
    async fn filled(cached: &WatchCache) {
        let res = cached.resource(P).unwrap();
        let mut reached = res.reached.subscribe();
        reached.wait_for(|r| *r > 0).await.unwrap();
    }

    fn names(list: &ListResult) -> Vec<&str> {
        list.items.iter().map(|kv| kv.key.as_str()).collect()
    }

    #[tokio::test]
    async fn a_consistent_read_sees_a_write_made_around_the_cache_at_once() {
        let store = Store::Memory(MemoryStore::new());
        let cached = cache(&store, WatchCacheOptions::default());
        assert!(
            cached
                .list(P, ListOptions::default())
                .await
                .unwrap()
                .items
                .is_empty()
        );
        filled(&cached).await;
        for i in 0..20 {
            let key = format!("{P}default/f{i}");
            let kv = store.create(&key, Bytes::from("x")).await.unwrap();
            // No yield between the write and the read: only the wait makes it current.
            assert_eq!(cached.get(&key).await.unwrap(), Some(kv.clone()));
            let list = cached.list(P, ListOptions::default()).await.unwrap();
            assert_eq!(list.items.len(), i + 1);
            assert!(list.revision >= kv.mod_revision);
        }
    }

    #[tokio::test]
    async fn writes_to_other_resources_move_the_cache_on_without_waiting_out_its_bound() {
        let store = Store::Memory(MemoryStore::new());
        // A read that never saw the cache reach its revision would hang past the test's own
        // bound (the cache never gives up here).
        let options = WatchCacheOptions {
            wait: Duration::from_secs(3600),
            ..WatchCacheOptions::default()
        };
        let cached = cache(&store, options);
        filled(&cached).await;
        for i in 0..5 {
            let kv = store
                .create(&format!("{OTHER}{i}"), Bytes::from("y"))
                .await
                .unwrap();
            let list = tokio::time::timeout(
                Duration::from_secs(10),
                cached.list(P, ListOptions::default()),
            )
            .await
            .expect("the cache reached the revision of a write elsewhere")
            .unwrap();
            assert_eq!(list.revision, kv.mod_revision);
        }
    }

    #[tokio::test]
    async fn a_cache_whose_watch_lags_is_filled_again_and_reads_stay_current() {
        // The cache's own storage watch may fall two events behind: a burst of writes made
        // without yielding breaks it.
        let store = Store::Memory(MemoryStore::with_limits(
            History::default(),
            WatchBuffer {
                events: 2,
                bytes: usize::MAX,
            },
        ));
        let cached = cache(&store, WatchCacheOptions::default());
        cached.list(P, ListOptions::default()).await.unwrap();
        let res = cached.resource(P).unwrap();
        assert!(res.contents().is_some());
        for round in 0..3 {
            for i in 0..10 {
                store
                    .create(&format!("{P}default/r{round}-{i}"), Bytes::from("z"))
                    .await
                    .unwrap();
            }
            let list = cached.list(P, ListOptions::default()).await.unwrap();
            assert_eq!(list.items.len(), 10 * (round + 1), "{:?}", names(&list));
        }
        // Filled again by a new list, after its backoff.
        let current = store.current_revision().await.unwrap();
        let mut reached = res.reached.subscribe();
        tokio::time::timeout(Duration::from_secs(30), reached.wait_for(|r| *r >= current))
            .await
            .expect("the cache was filled again")
            .unwrap();
        let contents = res.contents().expect("filled");
        assert_eq!(
            contents
                .list(P, ListOptions::default())
                .await
                .unwrap()
                .items
                .len(),
            30
        );
    }

    #[tokio::test]
    async fn keys_outside_every_resource_are_read_from_storage() {
        let store = Store::Memory(MemoryStore::new());
        let cached = cache(&store, WatchCacheOptions::default());
        for key in [
            "/elsewhere/x",
            "/registry/wardle.example.com/compact_rev_key",
        ] {
            store.create(key, Bytes::from("v")).await.unwrap();
            assert!(cached.get(key).await.unwrap().is_some());
            assert!(cached.resource(key).is_none());
        }
        assert!(lock(&cached.inner.resources).is_empty());
    }
}
