//! The storage conformance suite: the `Storage` trait's semantics, run against every backend
//! (memory, embedded redb, and a real etcd started per test), so a backend cannot drift.

use conneg_apiserver::testing::Etcd;

use std::time::Duration;

use bytes::Bytes;
use conneg_apiserver::storage::keys::Keys;
use conneg_apiserver::storage::{
    EmbeddedOptions, EmbeddedStore, EtcdOptions, EtcdStore, EventKind, History, ListOptions,
    MemoryStore, Storage, StorageError, Store, WatchBuffer, WatchCache, WatchCacheOptions,
};
use tempfile::TempDir;

const P: &str = "/registry/wardle.example.com/flunders/";

fn b(s: &str) -> Bytes {
    Bytes::copy_from_slice(s.as_bytes())
}

fn key(ns: &str, name: &str) -> String {
    format!("{P}{ns}/{name}")
}

/// A backend under test; keeps its temporary directory (and etcd process) alive.
struct Backend {
    store: Store,
    _dir: Option<TempDir>,
    _etcd: Option<Etcd>,
}

/// The backends the conformance suite runs on: each store alone, and each behind a watch
/// cache (which must answer every read as the store would).
#[derive(Clone, Copy)]
enum Kind {
    Memory,
    Embedded,
    Etcd,
    CachedMemory,
    CachedEmbedded,
    CachedEtcd,
}

/// A watch buffer bounded by `n` events (and the default bytes).
fn events(n: usize) -> WatchBuffer {
    WatchBuffer {
        events: n,
        ..WatchBuffer::default()
    }
}

/// A history of `n` revisions (and the default bytes).
fn revisions(n: u64) -> History {
    History {
        revisions: n,
        ..History::default()
    }
}

impl Backend {
    /// A fresh, empty store of `kind` keeping `history` revisions; watchers may fall `buffer`
    /// events behind (etcd keeps its own watch buffers, so `buffer` does not apply there).
    async fn new(kind: Kind, history: u64, buffer: usize) -> Backend {
        let under = match kind {
            Kind::CachedMemory => Kind::Memory,
            Kind::CachedEmbedded => Kind::Embedded,
            Kind::CachedEtcd => Kind::Etcd,
            _ => return Self::uncached(kind, history, buffer).await,
        };
        let mut backend = Box::pin(Self::uncached(under, history, buffer)).await;
        let options = WatchCacheOptions {
            history: revisions(history),
            watch_buffer: events(buffer),
            ..WatchCacheOptions::default()
        };
        let keys = Keys::for_group("wardle.example.com");
        backend.store = Store::Cached(WatchCache::new(backend.store, &keys, options));
        backend
    }

    async fn uncached(kind: Kind, history: u64, buffer: usize) -> Backend {
        match kind {
            Kind::Memory => Backend {
                store: Store::Memory(MemoryStore::with_limits(revisions(history), events(buffer))),
                _dir: None,
                _etcd: None,
            },
            Kind::Embedded => {
                let dir = tempfile::tempdir().unwrap();
                let store = EmbeddedStore::open_dir(
                    dir.path(),
                    "example.com",
                    EmbeddedOptions {
                        history: revisions(history),
                        watch_buffer: events(buffer),
                    },
                )
                .unwrap();
                Backend {
                    store: Store::Embedded(store),
                    _dir: Some(dir),
                    _etcd: None,
                }
            }
            Kind::Etcd => {
                let etcd = tokio::task::spawn_blocking(Etcd::start).await.unwrap();
                let mut o = EtcdOptions::new(vec![etcd.url()], "/registry/wardle.example.com");
                // Compaction runs when the suite says (compact), not on a timer.
                o.compaction_interval = Duration::ZERO;
                o.history = history;
                let store = EtcdStore::open(o).await.expect("open the etcd store");
                Backend {
                    store: Store::Etcd(store),
                    _dir: None,
                    _etcd: Some(etcd),
                }
            }
            _ => unreachable!("a cached kind is made by `new`"),
        }
    }

    /// Compacts what is older than the history: memory and embedded stores do it as they
    /// write; etcd compacts on a timer, here run once by hand.
    async fn compact(&self) {
        let store = match &self.store {
            Store::Cached(c) => c.store(),
            store => store.clone(),
        };
        if let Store::Etcd(s) = store {
            s.compact_once().await.unwrap();
        }
    }
}

macro_rules! every_backend {
    ($($name:ident),* $(,)?) => {
        mod on_memory {
            $(
                #[tokio::test]
                async fn $name() {
                    super::$name(super::Kind::Memory).await;
                }
            )*
        }
        mod on_embedded {
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn $name() {
                    super::$name(super::Kind::Embedded).await;
                }
            )*
        }
        mod on_etcd {
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn $name() {
                    super::$name(super::Kind::Etcd).await;
                }
            )*
        }
        mod on_cached_memory {
            $(
                #[tokio::test]
                async fn $name() {
                    super::$name(super::Kind::CachedMemory).await;
                }
            )*
        }
        mod on_cached_embedded {
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn $name() {
                    super::$name(super::Kind::CachedEmbedded).await;
                }
            )*
        }
        mod on_cached_etcd {
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn $name() {
                    super::$name(super::Kind::CachedEtcd).await;
                }
            )*
        }
    };
}

every_backend!(
    create_get_and_already_exists,
    update_compare_and_swap,
    identical_bytes_are_skipped,
    delete_with_precondition,
    list_prefix_and_pages,
    list_at_past_revision_is_consistent,
    watch_replays_then_follows,
    gone_after_compaction,
    future_revision_is_refused,
    paging_with_continue_tokens,
);

// A watcher that falls behind is the server's own queue (memory and embedded); etcd buffers
// its watch streams itself.
mod lagging {
    #[tokio::test]
    async fn on_memory() {
        super::lagging_watcher_is_ended(super::Kind::Memory).await;
    }
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn on_embedded() {
        super::lagging_watcher_is_ended(super::Kind::Embedded).await;
    }
    #[tokio::test]
    async fn on_cached_memory() {
        super::lagging_watcher_is_ended(super::Kind::CachedMemory).await;
    }
}

async fn next_event(
    w: &mut conneg_apiserver::storage::WatchStream,
) -> std::sync::Arc<conneg_apiserver::storage::Event> {
    tokio::time::timeout(Duration::from_secs(5), w.next())
        .await
        .expect("event within 5s")
        .expect("stream open")
        .expect("no error")
}

async fn create_get_and_already_exists(kind: Kind) {
    let backend = Backend::new(kind, 100, 64).await;
    let s = &backend.store;
    assert_eq!(s.current_revision().await.unwrap(), 1);
    assert_eq!(s.get(&key("ns", "a")).await.unwrap(), None);
    let kv = s.create(&key("ns", "a"), b("one")).await.unwrap();
    assert_eq!((kv.create_revision, kv.mod_revision), (2, 2));
    assert_eq!(s.get(&key("ns", "a")).await.unwrap(), Some(kv));
    let err = s.create(&key("ns", "a"), b("two")).await.unwrap_err();
    assert!(matches!(err, StorageError::AlreadyExists { .. }), "{err:?}");
    assert_eq!(
        s.current_revision().await.unwrap(),
        2,
        "failed create writes nothing"
    );
    let kv = s.create(&key("ns", "b"), b("x")).await.unwrap();
    assert_eq!(kv.mod_revision, 3);
}

async fn update_compare_and_swap(kind: Kind) {
    let backend = Backend::new(kind, 100, 64).await;
    let s = &backend.store;
    let kv = s.create(&key("ns", "a"), b("v1")).await.unwrap();
    let up = s
        .update(&key("ns", "a"), b("v2"), kv.mod_revision)
        .await
        .unwrap();
    assert!(up.changed);
    assert_eq!((up.kv.create_revision, up.kv.mod_revision), (2, 3));
    assert_eq!(up.kv.value, b("v2"));
    // Stale revision -> Conflict, nothing written.
    let err = s
        .update(&key("ns", "a"), b("v3"), kv.mod_revision)
        .await
        .unwrap_err();
    assert_eq!(
        err,
        StorageError::Conflict {
            key: key("ns", "a"),
            expected: 2,
            actual: 3
        }
    );
    assert_eq!(
        s.get(&key("ns", "a")).await.unwrap().unwrap().value,
        b("v2")
    );
    let err = s.update(&key("ns", "zz"), b("v"), 1).await.unwrap_err();
    assert!(matches!(err, StorageError::NotFound { .. }), "{err:?}");
}

async fn identical_bytes_are_skipped(kind: Kind) {
    let backend = Backend::new(kind, 100, 64).await;
    let s = &backend.store;
    let kv = s.create(&key("ns", "a"), b("same")).await.unwrap();
    let mut w = s.watch(P, kv.mod_revision).await.unwrap();
    let up = s
        .update(&key("ns", "a"), b("same"), kv.mod_revision)
        .await
        .unwrap();
    assert!(!up.changed);
    assert_eq!(up.kv, kv);
    assert_eq!(s.current_revision().await.unwrap(), kv.mod_revision);
    // The next event the watcher sees is the next real change.
    let up = s
        .update(&key("ns", "a"), b("different"), kv.mod_revision)
        .await
        .unwrap();
    assert!(up.changed);
    let ev = next_event(&mut w).await;
    assert_eq!(
        (ev.kind, ev.revision()),
        (EventKind::Modified, up.kv.mod_revision)
    );
}

async fn delete_with_precondition(kind: Kind) {
    let backend = Backend::new(kind, 100, 64).await;
    let s = &backend.store;
    let kv = s.create(&key("ns", "a"), b("v1")).await.unwrap();
    let err = s
        .delete(&key("ns", "a"), Some(kv.mod_revision + 7))
        .await
        .unwrap_err();
    assert!(matches!(err, StorageError::Conflict { .. }), "{err:?}");
    let del = s
        .delete(&key("ns", "a"), Some(kv.mod_revision))
        .await
        .unwrap();
    assert_eq!(del.prev, kv);
    assert_eq!(del.revision, kv.mod_revision + 1);
    assert_eq!(s.get(&key("ns", "a")).await.unwrap(), None);
    let err = s.delete(&key("ns", "a"), None).await.unwrap_err();
    assert!(matches!(err, StorageError::NotFound { .. }), "{err:?}");
    s.create(&key("ns", "b"), b("v")).await.unwrap();
    s.delete(&key("ns", "b"), None).await.unwrap();
    // Re-create after delete starts a new life.
    let again = s.create(&key("ns", "a"), b("v2")).await.unwrap();
    assert_eq!(again.create_revision, again.mod_revision);
}

async fn list_prefix_and_pages(kind: Kind) {
    let backend = Backend::new(kind, 100, 64).await;
    let s = &backend.store;
    for (ns, name) in [("a", "1"), ("a", "2"), ("a", "3"), ("b", "1"), ("ab", "1")] {
        s.create(&key(ns, name), b(name)).await.unwrap();
    }
    s.create("/registry/wardle.example.com/fischers/f", b("f"))
        .await
        .unwrap();
    let all = s.list(P, ListOptions::default()).await.unwrap();
    assert_eq!(all.items.len(), 5);
    assert_eq!(all.revision, 7);
    assert!(!all.more());
    let ns_a = s
        .list(&format!("{P}a/"), ListOptions::default())
        .await
        .unwrap();
    let keys: Vec<_> = ns_a.items.iter().map(|kv| kv.key.as_str()).collect();
    assert_eq!(keys, [key("a", "1"), key("a", "2"), key("a", "3")]);

    let page1 = s
        .list(
            P,
            ListOptions {
                limit: Some(2),
                ..Default::default()
            },
        )
        .await
        .unwrap();
    assert_eq!(page1.items.len(), 2);
    assert_eq!(page1.remaining, 3);
    let page2 = s
        .list(
            P,
            ListOptions {
                limit: Some(2),
                start_key: page1.next_start_key(),
                revision: Some(page1.revision),
            },
        )
        .await
        .unwrap();
    assert_eq!(page2.items[0].key, key("a", "3"));
    assert_eq!(page2.remaining, 1);
    assert_eq!(page2.revision, page1.revision);
}

async fn list_at_past_revision_is_consistent(kind: Kind) {
    let backend = Backend::new(kind, 100, 64).await;
    let s = &backend.store;
    let a = s.create(&key("ns", "a"), b("a1")).await.unwrap();
    let bb = s.create(&key("ns", "b"), b("b1")).await.unwrap();
    s.create(&key("ns", "c"), b("c1")).await.unwrap();
    let page1 = s
        .list(
            P,
            ListOptions {
                limit: Some(1),
                ..Default::default()
            },
        )
        .await
        .unwrap();
    let snapshot_rev = page1.revision;
    // Writes between pages: modify a, delete b, add d, modify c.
    s.update(&key("ns", "a"), b("a2"), a.mod_revision)
        .await
        .unwrap();
    s.delete(&key("ns", "b"), Some(bb.mod_revision))
        .await
        .unwrap();
    s.create(&key("ns", "d"), b("d1")).await.unwrap();
    let c = s.get(&key("ns", "c")).await.unwrap().unwrap();
    s.update(&key("ns", "c"), b("c2"), c.mod_revision)
        .await
        .unwrap();
    let rest = s
        .list(
            P,
            ListOptions {
                revision: Some(snapshot_rev),
                start_key: page1.next_start_key(),
                limit: None,
            },
        )
        .await
        .unwrap();
    let seen: Vec<_> = rest
        .items
        .iter()
        .map(|kv| (kv.key.clone(), kv.value.clone(), kv.mod_revision))
        .collect();
    assert_eq!(
        seen,
        [(key("ns", "b"), b("b1"), 3), (key("ns", "c"), b("c1"), 4)]
    );
    assert_eq!(rest.revision, snapshot_rev);
    let whole_old = s
        .list(
            P,
            ListOptions {
                revision: Some(2),
                ..Default::default()
            },
        )
        .await
        .unwrap();
    assert_eq!(whole_old.items.len(), 1);
    assert_eq!(whole_old.items[0].value, b("a1"));
    let now = s.list(P, ListOptions::default()).await.unwrap();
    let values: Vec<_> = now.items.iter().map(|kv| kv.value.clone()).collect();
    assert_eq!(values, [b("a2"), b("c2"), b("d1")]);
}

async fn watch_replays_then_follows(kind: Kind) {
    let backend = Backend::new(kind, 100, 64).await;
    let s = &backend.store;
    let a = s.create(&key("ns", "a"), b("a1")).await.unwrap();
    s.create("/registry/wardle.example.com/fischers/f", b("f"))
        .await
        .unwrap();
    let a2 = s
        .update(&key("ns", "a"), b("a2"), a.mod_revision)
        .await
        .unwrap();
    let mut w = s.watch(P, a.mod_revision - 1).await.unwrap();
    let mut from_mid = s.watch(P, a.mod_revision).await.unwrap();
    // Replay: ADDED then MODIFIED (the fischer is outside the prefix).
    let ev = next_event(&mut w).await;
    assert_eq!(
        (ev.kind, ev.revision(), ev.kv.value.clone()),
        (EventKind::Added, 2, b("a1"))
    );
    let ev = next_event(&mut w).await;
    assert_eq!(ev.kind, EventKind::Modified);
    assert_eq!(ev.prev.as_ref().unwrap().value, b("a1"));
    assert_eq!(ev.revision(), a2.kv.mod_revision);
    let ev = next_event(&mut from_mid).await;
    assert_eq!(
        ev.revision(),
        a2.kv.mod_revision,
        "replay starts after the given revision"
    );
    // Live.
    let del = s.delete(&key("ns", "a"), None).await.unwrap();
    let ev = next_event(&mut w).await;
    assert_eq!(ev.kind, EventKind::Deleted);
    assert_eq!(ev.revision(), del.revision);
    assert_eq!(ev.prev.as_ref().unwrap().value, b("a2"));
    assert_eq!(ev.object_value(), &b("a2"));
    s.create(&key("other", "x"), b("x")).await.unwrap();
    let ev = next_event(&mut w).await;
    assert_eq!(
        (ev.kind, ev.key()),
        (EventKind::Added, key("other", "x").as_str())
    );
    // A namespaced watch sees only its namespace.
    let mut ns_watch = s.watch(&format!("{P}ns/"), 0).await.unwrap();
    let kinds: Vec<_> = [
        next_event(&mut ns_watch).await.kind,
        next_event(&mut ns_watch).await.kind,
        next_event(&mut ns_watch).await.kind,
    ]
    .into();
    assert_eq!(
        kinds,
        [EventKind::Added, EventKind::Modified, EventKind::Deleted]
    );
    s.create(&key("ns", "z"), b("z")).await.unwrap();
    let ev = next_event(&mut ns_watch).await;
    assert_eq!(ev.key(), key("ns", "z"));
    // A watch from a future revision waits for it.
    let cur = s.current_revision().await.unwrap();
    let mut future = s.watch(P, cur + 1).await.unwrap();
    s.create(&key("ns", "f1"), b("1")).await.unwrap();
    s.create(&key("ns", "f2"), b("2")).await.unwrap();
    let ev = next_event(&mut future).await;
    assert_eq!(ev.revision(), cur + 2);
}

async fn gone_after_compaction(kind: Kind) {
    let backend = Backend::new(kind, 3, 64).await;
    let s = &backend.store;
    let mut kv = s.create(&key("ns", "a"), b("0")).await.unwrap();
    for i in 1..10 {
        kv = s
            .update(&key("ns", "a"), b(&i.to_string()), kv.mod_revision)
            .await
            .unwrap()
            .kv;
    }
    let current = s.current_revision().await.unwrap();
    assert_eq!(current, 11);
    backend.compact().await;
    let compacted = s.compacted_revision().await.unwrap();
    assert_eq!(compacted, current - 3);
    // Older than the compacted revision is gone everywhere. (etcd also keeps the event at the
    // compacted revision itself, so it still serves a watch after `compacted - 1`; the
    // server's own histories keep the state at `compacted` but only the events after it.)
    let err = s.watch(P, compacted - 2).await.unwrap_err();
    assert_eq!(
        err,
        StorageError::Gone {
            requested: compacted - 2,
            compacted
        }
    );
    assert_eq!(err.to_string(), "too old resource version: 6 (8)");
    let err = s
        .list(
            P,
            ListOptions {
                revision: Some(2),
                ..Default::default()
            },
        )
        .await
        .unwrap_err();
    assert!(matches!(err, StorageError::Gone { .. }), "{err:?}");
    // The retained window still works.
    let mut w = s.watch(P, compacted).await.unwrap();
    let ev = next_event(&mut w).await;
    assert_eq!(ev.revision(), compacted + 1);
    let old = s
        .list(
            P,
            ListOptions {
                revision: Some(compacted),
                ..Default::default()
            },
        )
        .await
        .unwrap();
    assert_eq!(old.items[0].value, b("6"));
}

async fn future_revision_is_refused(kind: Kind) {
    let backend = Backend::new(kind, 100, 64).await;
    let s = &backend.store;
    let err = s
        .list(
            P,
            ListOptions {
                revision: Some(5),
                ..Default::default()
            },
        )
        .await
        .unwrap_err();
    assert_eq!(
        err,
        StorageError::FutureRevision {
            requested: 5,
            current: 1
        }
    );
}

async fn lagging_watcher_is_ended(kind: Kind) {
    let backend = Backend::new(kind, 100, 4).await;
    let s = &backend.store;
    let mut w = s.watch(P, 1).await.unwrap();
    for i in 0..10 {
        s.create(&key("ns", &i.to_string()), b("x")).await.unwrap();
    }
    let mut got_err = false;
    while let Some(item) = tokio::time::timeout(Duration::from_secs(5), w.next())
        .await
        .unwrap()
    {
        if let Err(e) = item {
            assert!(matches!(e, StorageError::WatchLagged { .. }), "{e:?}");
            got_err = true;
        }
    }
    assert!(got_err, "a lagging watcher ends with an error");
}

/// 30 updates of 100 KB to an idle watcher: far under the event bound, over the byte bound,
/// so the watcher lags (it held 4096 events of any size before).
#[tokio::test]
async fn an_idle_watcher_lags_by_bytes() {
    let s = MemoryStore::with_limits(
        revisions(100),
        WatchBuffer {
            events: 4096,
            bytes: 1 << 20,
        },
    );
    let mut w = s.watch(P, 1).await.unwrap();
    let big = Bytes::from(vec![b'x'; 100_000]);
    let mut kv = s.create(&key("ns", "a"), big.clone()).await.unwrap();
    for i in 0..30u8 {
        let mut v = big.to_vec();
        v[0] = i;
        kv = s
            .update(&kv.key, v.into(), kv.mod_revision)
            .await
            .unwrap()
            .kv;
    }
    let mut events = 0;
    loop {
        match tokio::time::timeout(Duration::from_secs(5), w.next())
            .await
            .unwrap()
        {
            Some(Ok(_)) => events += 1,
            Some(Err(e)) => {
                assert!(matches!(e, StorageError::WatchLagged { .. }), "{e:?}");
                break;
            }
            None => panic!("the watch ended without a lag after {events} events"),
        }
    }
    assert!(
        events < 10,
        "{events} events of 200 KB queued under a 1 MiB bound"
    );
}

/// 31 writes of 100 KB under a 1 MiB history: compacted by bytes, long before the 100
/// revisions (history held 10,000 revisions of any size before).
async fn history_is_bounded_by_bytes(s: Store) {
    let big = Bytes::from(vec![b'x'; 100_000]);
    let first = s.create(&key("ns", "a"), big.clone()).await.unwrap();
    let mut kv = first.clone();
    for i in 0..30u8 {
        let mut v = big.to_vec();
        v[0] = i;
        kv = s
            .update(&kv.key, v.into(), kv.mod_revision)
            .await
            .unwrap()
            .kv;
    }
    let compacted = s.compacted_revision().await.unwrap();
    assert!(
        compacted > first.mod_revision + 20,
        "compacted at {compacted}"
    );
    match s.watch(P, first.mod_revision).await {
        Err(StorageError::Gone { .. }) => {}
        other => panic!("expected Gone, got {other:?}"),
    }
    // The newest revisions are still there.
    let mut w = s.watch(P, kv.mod_revision - 2).await.unwrap();
    for _ in 0..2 {
        let ev = tokio::time::timeout(Duration::from_secs(5), w.next())
            .await
            .unwrap();
        assert!(matches!(ev, Some(Ok(_))), "{ev:?}");
    }
    let past = ListOptions {
        revision: Some(kv.mod_revision - 1),
        ..ListOptions::default()
    };
    assert_eq!(s.list(P, past).await.unwrap().items.len(), 1);
}

fn small_history() -> History {
    History {
        revisions: 100,
        bytes: 1 << 20,
    }
}

#[tokio::test]
async fn memory_history_is_bounded_by_bytes() {
    let s = MemoryStore::with_limits(small_history(), WatchBuffer::default());
    history_is_bounded_by_bytes(Store::Memory(s)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn embedded_history_is_bounded_by_bytes() {
    let dir = tempfile::tempdir().unwrap();
    let options = EmbeddedOptions {
        history: small_history(),
        watch_buffer: WatchBuffer::default(),
    };
    let s = EmbeddedStore::open_dir(dir.path(), "example.com", options).unwrap();
    history_is_bounded_by_bytes(Store::Embedded(s)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn embedded_survives_restart() {
    let dir = tempfile::tempdir().unwrap();
    let opts = EmbeddedOptions {
        history: revisions(100),
        watch_buffer: events(16),
    };
    {
        let s = EmbeddedStore::open_dir(dir.path(), "example.com", opts).unwrap();
        let kv = s.create(&key("ns", "a"), b("a1")).await.unwrap();
        s.update(&key("ns", "a"), b("a2"), kv.mod_revision)
            .await
            .unwrap();
        s.create(&key("ns", "b"), b("b1")).await.unwrap();
        s.delete(&key("ns", "b"), None).await.unwrap();
    }
    let s = EmbeddedStore::open_dir(dir.path(), "example.com", opts).unwrap();
    assert_eq!(s.current_revision().await.unwrap(), 5);
    let a = s.get(&key("ns", "a")).await.unwrap().unwrap();
    assert_eq!(
        (a.value.clone(), a.create_revision, a.mod_revision),
        (b("a2"), 2, 3)
    );
    assert_eq!(s.get(&key("ns", "b")).await.unwrap(), None);
    // History survives too.
    let mut w = s.watch(P, 1).await.unwrap();
    let kinds: Vec<_> = [
        next_event(&mut w).await.kind,
        next_event(&mut w).await.kind,
        next_event(&mut w).await.kind,
        next_event(&mut w).await.kind,
    ]
    .into();
    assert_eq!(
        kinds,
        [
            EventKind::Added,
            EventKind::Modified,
            EventKind::Added,
            EventKind::Deleted
        ]
    );
    let next = s.create(&key("ns", "c"), b("c")).await.unwrap();
    assert_eq!(next.mod_revision, 6);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_writers_get_distinct_revisions() {
    let dir = tempfile::tempdir().unwrap();
    let s = EmbeddedStore::open_dir(dir.path(), "example.com", EmbeddedOptions::default()).unwrap();
    let mut w = s.watch(P, 1).await.unwrap();
    let mut tasks = Vec::new();
    for i in 0..20 {
        let s = s.clone();
        tasks.push(tokio::spawn(async move {
            s.create(&key("ns", &i.to_string()), b("x"))
                .await
                .unwrap()
                .mod_revision
        }));
    }
    let mut revs = Vec::new();
    for t in tasks {
        revs.push(t.await.unwrap());
    }
    revs.sort_unstable();
    assert_eq!(revs, (2..22).collect::<Vec<_>>());
    for want in 2..22 {
        assert_eq!(
            next_event(&mut w).await.revision(),
            want,
            "in revision order"
        );
    }
}

async fn paging_with_continue_tokens(kind: Kind) {
    use conneg_apiserver::storage::continue_token;
    let backend = Backend::new(kind, 100, 64).await;
    let s = &backend.store;
    for i in 0..7 {
        s.create(&key("ns", &format!("o{i}")), b("v"))
            .await
            .unwrap();
    }
    let mut seen = Vec::new();
    let mut opts = ListOptions {
        limit: Some(3),
        ..Default::default()
    };
    let mut first_rev = None;
    loop {
        let page = s.list(P, opts.clone()).await.unwrap();
        first_rev.get_or_insert(page.revision);
        assert_eq!(Some(page.revision), first_rev, "all pages at one revision");
        seen.extend(page.items.iter().map(|kv| kv.key.clone()));
        // A write between pages must not show up.
        s.create(&key("ns", &format!("late{}", seen.len())), b("v"))
            .await
            .unwrap();
        let Some(token) = continue_token::for_next_page(&page, P).unwrap() else {
            break;
        };
        let (start, rev) = continue_token::decode(&token, P).unwrap();
        opts.start_key = Some(start);
        opts.revision = Some(rev);
    }
    let want: Vec<_> = (0..7).map(|i| key("ns", &format!("o{i}"))).collect();
    assert_eq!(seen, want);
}
