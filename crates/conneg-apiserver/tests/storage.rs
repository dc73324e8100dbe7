//! The storage conformance suite: the `Storage` trait's semantics, run against every backend
//! (memory, embedded redb, and a real etcd started per test, with the `etcd` feature), so a
//! backend cannot drift.

use conneg_apiserver::testing::Etcd;

use std::time::Duration;

use bytes::Bytes;
use conneg_apiserver::storage::keys::Keys;
use conneg_apiserver::storage::{
    EmbeddedOptions, EmbeddedStore, EventKind, History, KeyValue, ListOptions, MemoryStore,
    Storage, StorageError, Store, UpdateResult, WatchBuffer, WatchCache, WatchCacheOptions,
};
#[cfg(feature = "etcd")]
use conneg_apiserver::storage::{EtcdOptions, EtcdStore};
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
    #[cfg(feature = "etcd")]
    Etcd,
    CachedMemory,
    CachedEmbedded,
    #[cfg(feature = "etcd")]
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
            #[cfg(feature = "etcd")]
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
            #[cfg(feature = "etcd")]
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
        #[cfg(feature = "etcd")]
        {
            let store = match &self.store {
                Store::Cached(c) => c.store(),
                store => store.clone(),
            };
            if let Store::Etcd(s) = store {
                s.compact_once().await.unwrap();
            }
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
        #[cfg(feature = "etcd")]
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
        #[cfg(feature = "etcd")]
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
    no_event_without_its_previous_state_after_compaction,
    future_revision_is_refused,
    paging_at_one_revision,
    many_concurrent_writers,
    concurrent_compare_and_swap_has_one_winner,
    a_failing_write_does_not_fail_its_neighbours,
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
    w: &mut conneg_apiserver::storage::Watcher,
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

/// A watch from just before the compacted revision: etcd still has the change at that
/// revision but no longer the state before it, without which a MODIFIED looks like an ADDED
/// and a DELETED has no object (the fault suite, tests/faults, saw a watch turn a MODIFIED
/// into an ADDED there). Such a watch is gone, at once or before that event.
async fn no_event_without_its_previous_state_after_compaction(kind: Kind) {
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
    backend.compact().await;
    let compacted = s.compacted_revision().await.unwrap();
    match s.watch(P, compacted - 1).await {
        Err(e) => assert!(matches!(e, StorageError::Gone { .. }), "{e:?}"),
        Ok(mut w) => {
            let item = tokio::time::timeout(Duration::from_secs(5), w.next())
                .await
                .expect("an answer within 5s")
                .expect("an item");
            match item {
                Err(e) => assert!(matches!(e, StorageError::Gone { .. }), "{e:?}"),
                Ok(ev) => assert!(
                    ev.kind == conneg_apiserver::storage::EventKind::Modified && ev.prev.is_some(),
                    "the change at {compacted} without its previous state: {ev:?}"
                ),
            }
        }
    }
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

/// Pages read from where the previous one stopped, at its revision (what a continue token
/// carries; the token's encoding is tested in `storage/continue_token.rs`).
async fn paging_at_one_revision(kind: Kind) {
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
        let Some(start) = page.next_start_key() else {
            break;
        };
        opts.start_key = Some(start);
        opts.revision = Some(page.revision);
    }
    let want: Vec<_> = (0..7).map(|i| key("ns", &format!("o{i}"))).collect();
    assert_eq!(seen, want);
}

/// Runs every future in `writes` at once (each on its own task) and gives their results in the
/// order given.
async fn all_at_once<T: Send + 'static>(
    writes: Vec<std::pin::Pin<Box<dyn std::future::Future<Output = T> + Send>>>,
) -> Vec<T> {
    let tasks: Vec<_> = writes.into_iter().map(tokio::spawn).collect();
    let mut out = Vec::new();
    for t in tasks {
        out.push(t.await.unwrap());
    }
    out
}

/// 32 writers, each creating, updating and deleting its own keys, all at once: every write
/// succeeds with a revision of its own, the revisions are exactly the writes, and a watcher
/// sees every event once, in revision order.
async fn many_concurrent_writers(kind: Kind) {
    const WRITERS: usize = 32;
    const EACH: usize = 4;
    let backend = Backend::new(kind, 10_000, 4096).await;
    let s = &backend.store;
    let start = s.current_revision().await.unwrap();
    let mut w = s.watch(P, start).await.unwrap();
    let writers = (0..WRITERS)
        .map(|i| {
            let s = s.clone();
            Box::pin(async move {
                let mut revs = Vec::new();
                for j in 0..EACH {
                    let k = key("ns", &format!("w{i}-{j}"));
                    let kv = s.create(&k, b("v1")).await.unwrap();
                    revs.push(kv.mod_revision);
                    let up = s.update(&k, b("v2"), kv.mod_revision).await.unwrap();
                    assert!(up.changed);
                    assert_eq!(up.kv.create_revision, kv.mod_revision);
                    revs.push(up.kv.mod_revision);
                }
                // The first key of each writer is deleted again.
                let k = key("ns", &format!("w{i}-0"));
                let at = s.get(&k).await.unwrap().unwrap().mod_revision;
                revs.push(s.delete(&k, Some(at)).await.unwrap().revision);
                revs
            }) as std::pin::Pin<Box<dyn std::future::Future<Output = _> + Send>>
        })
        .collect();
    let mut revs: Vec<i64> = all_at_once(writers).await.concat();
    revs.sort_unstable();
    let n = WRITERS * (2 * EACH + 1);
    let want: Vec<i64> = (start + 1..=start + n as i64).collect();
    assert_eq!(revs, want, "one revision per write, none shared or skipped");
    assert_eq!(s.current_revision().await.unwrap(), start + n as i64);
    for rev in want {
        assert_eq!(
            next_event(&mut w).await.revision(),
            rev,
            "in revision order"
        );
    }
    let listed = s.list(P, ListOptions::default()).await.unwrap();
    assert_eq!(listed.items.len(), WRITERS * (EACH - 1));
    assert!(listed.items.iter().all(|kv| kv.value == b("v2")));
}

/// Writers racing on one key, all at once: of the updates at one revision exactly one wins,
/// the others get a conflict naming the winner's revision; of the creates of one key exactly
/// one wins, the others find it existing.
async fn concurrent_compare_and_swap_has_one_winner(kind: Kind) {
    const RACERS: usize = 16;
    let backend = Backend::new(kind, 100, 64).await;
    let s = &backend.store;
    let k = key("ns", "contended");
    let kv = s.create(&k, b("v0")).await.unwrap();
    let updates = (0..RACERS)
        .map(|i| {
            let (s, k) = (s.clone(), k.clone());
            Box::pin(async move {
                s.update(&k, b(&format!("v{}", i + 1)), kv.mod_revision)
                    .await
            }) as std::pin::Pin<Box<dyn std::future::Future<Output = _> + Send>>
        })
        .collect();
    let results: Vec<Result<UpdateResult, StorageError>> = all_at_once(updates).await;
    let won: Vec<_> = results.iter().filter_map(|r| r.as_ref().ok()).collect();
    assert_eq!(won.len(), 1, "exactly one update wins: {results:?}");
    let winner = won[0].kv.clone();
    assert_eq!(winner.mod_revision, kv.mod_revision + 1);
    for r in &results {
        match r {
            Ok(_) => {}
            Err(e) => assert_eq!(
                *e,
                StorageError::Conflict {
                    key: k.clone(),
                    expected: kv.mod_revision,
                    actual: winner.mod_revision,
                }
            ),
        }
    }
    assert_eq!(s.get(&k).await.unwrap().unwrap(), winner);
    assert_eq!(s.current_revision().await.unwrap(), winner.mod_revision);

    let fresh = key("ns", "fresh");
    let creates = (0..RACERS)
        .map(|i| {
            let (s, k) = (s.clone(), fresh.clone());
            Box::pin(async move { s.create(&k, b(&i.to_string())).await })
                as std::pin::Pin<Box<dyn std::future::Future<Output = _> + Send>>
        })
        .collect();
    let results: Vec<Result<KeyValue, StorageError>> = all_at_once(creates).await;
    assert_eq!(results.iter().filter(|r| r.is_ok()).count(), 1);
    assert!(
        results
            .iter()
            .filter_map(|r| r.as_ref().err())
            .all(|e| matches!(e, StorageError::AlreadyExists { .. })),
        "{results:?}"
    );
    assert_eq!(s.current_revision().await.unwrap(), winner.mod_revision + 1);
}

/// Failing writes (a create of an existing key, an update and a delete at a stale revision, a
/// delete of a missing key) sent at once with successful ones: each fails alone, the others
/// are written, and the failures take no revision.
async fn a_failing_write_does_not_fail_its_neighbours(kind: Kind) {
    let backend = Backend::new(kind, 100, 64).await;
    let s = &backend.store;
    let existing = s.create(&key("ns", "existing"), b("v")).await.unwrap();
    let start = existing.mod_revision;
    type Write =
        std::pin::Pin<Box<dyn std::future::Future<Output = Result<i64, StorageError>> + Send>>;
    let mut writes: Vec<Write> = Vec::new();
    for i in 0..24 {
        let ok = s.clone();
        writes.push(Box::pin(async move {
            ok.create(&key("ns", &format!("ok{i}")), b("v"))
                .await
                .map(|kv| kv.mod_revision)
        }));
        let s = s.clone();
        writes.push(match i % 4 {
            0 => Box::pin(async move {
                s.create(&key("ns", "existing"), b("again"))
                    .await
                    .map(|kv| kv.mod_revision)
            }),
            1 => Box::pin(async move {
                s.update(&key("ns", "existing"), b("new"), start - 1)
                    .await
                    .map(|u| u.kv.mod_revision)
            }),
            2 => Box::pin(async move {
                s.delete(&key("ns", "existing"), Some(start + 1_000))
                    .await
                    .map(|d| d.revision)
            }),
            _ => Box::pin(async move {
                s.delete(&key("ns", &format!("missing{i}")), None)
                    .await
                    .map(|d| d.revision)
            }),
        });
    }
    let results = all_at_once(writes).await;
    let mut revs = Vec::new();
    for (i, r) in results.into_iter().enumerate() {
        match (i % 2, (i / 2) % 4, r) {
            (0, _, Ok(rev)) => revs.push(rev),
            (1, 0, Err(StorageError::AlreadyExists { .. })) => {}
            (1, 1 | 2, Err(StorageError::Conflict { actual, .. })) => assert_eq!(actual, start),
            (1, 3, Err(StorageError::NotFound { .. })) => {}
            (_, _, r) => panic!("write {i}: unexpected {r:?}"),
        }
    }
    revs.sort_unstable();
    assert_eq!(revs, (start + 1..=start + 24).collect::<Vec<_>>());
    assert_eq!(s.current_revision().await.unwrap(), start + 24);
    assert_eq!(s.get(&key("ns", "existing")).await.unwrap(), Some(existing));
}

/// The embedded store commits concurrent writes together: fewer transactions (and fsyncs)
/// than writes, each write still acknowledged with its own revision.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn embedded_concurrent_writes_share_commits() {
    let dir = tempfile::tempdir().unwrap();
    let s = EmbeddedStore::open_dir(dir.path(), "example.com", EmbeddedOptions::default()).unwrap();
    let creates = (0..64)
        .map(|i| {
            let s = s.clone();
            Box::pin(async move {
                s.create(&key("ns", &format!("c{i}")), b("v"))
                    .await
                    .unwrap()
                    .mod_revision
            }) as std::pin::Pin<Box<dyn std::future::Future<Output = _> + Send>>
        })
        .collect();
    let mut revs = all_at_once(creates).await;
    revs.sort_unstable();
    assert_eq!(revs, (2..66).collect::<Vec<i64>>());
    let commits = s.commits();
    assert!(
        (1..64).contains(&commits),
        "64 concurrent creates took {commits} commits"
    );
    // A lone write is committed at once, on its own.
    s.create(&key("ns", "lone"), b("v")).await.unwrap();
    assert_eq!(s.commits(), commits + 1);
}
