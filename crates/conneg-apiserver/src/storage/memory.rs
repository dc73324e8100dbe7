//! The in-memory backend: for tests and `--storage memory`. Same semantics as the others,
//! including history, compaction and identical-bytes skipping.

use std::collections::{BTreeMap, VecDeque};
use std::fmt;
use std::ops::Bound;
use std::sync::{Arc, Mutex, MutexGuard};

use super::fanout::{Fanout, WatchBuffer, event_bytes};
use super::group_commit::{Change, Write, Written};
use super::history::{History, check_read_revision, lower_bound, paginate, rewind, watch_stream};
use super::{
    DeleteResult, Event, EventKind, KeyValue, ListOptions, ListResult, Result, Revision, Storage,
    StorageError, UpdateResult, Watcher,
};
use bytes::Bytes;

struct State {
    kvs: BTreeMap<String, KeyValue>,
    log: VecDeque<Arc<Event>>,
    /// Bytes of keys and values in `log`.
    log_bytes: usize,
    revision: Revision,
    compacted: Revision,
}

struct Inner {
    state: Mutex<State>,
    tx: Fanout,
    history: History,
}

/// An in-memory store. Cloning shares the store.
#[derive(Clone)]
pub struct MemoryStore {
    inner: Arc<Inner>,
}

impl fmt::Debug for MemoryStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("MemoryStore")
            .field("history", &self.inner.history)
            .finish_non_exhaustive()
    }
}

impl Default for MemoryStore {
    fn default() -> Self {
        Self::new()
    }
}

impl MemoryStore {
    /// A store with the default [`History`] and [`WatchBuffer`].
    pub fn new() -> Self {
        Self::with_limits(History::default(), WatchBuffer::default())
    }

    /// A store keeping `history`, with watchers allowed to fall `watch_buffer` behind.
    pub fn with_limits(history: History, watch_buffer: WatchBuffer) -> Self {
        let tx = Fanout::new(watch_buffer);
        Self {
            inner: Arc::new(Inner {
                state: Mutex::new(State {
                    kvs: BTreeMap::new(),
                    log: VecDeque::new(),
                    log_bytes: 0,
                    revision: 1,
                    compacted: 0,
                }),
                tx,
                history,
            }),
        }
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        // A panic while holding the lock cannot leave the maps half-updated in a way later
        // calls would misread (each write is applied with infallible operations), so a
        // poisoned lock is still usable.
        self.inner
            .state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// One write, decided as every backend does ([`Write::decide`]) and applied under the
    /// lock. There is no fsync to share, so writes are not batched: the lock is held for a map
    /// update, a log append and the hand-off to watchers' queues (microseconds), which is
    /// what concurrent writers contend for.
    fn write(&self, write: Write) -> Result<Written> {
        let mut state = self.lock();
        let (event, answer) = write.decide(state.kvs.get(&write.key).cloned(), state.revision)?;
        if let Some(event) = event {
            match event.kind {
                EventKind::Deleted => state.kvs.remove(&write.key),
                EventKind::Added | EventKind::Modified => {
                    state.kvs.insert(write.key, event.kv.clone())
                }
            };
            self.commit(&mut state, event);
        }
        Ok(answer)
    }

    /// A store holding `items` at `revision`, with no history before it: a copy of another
    /// store's keys that [`MemoryStore::apply`] keeps current (the watch cache's contents).
    pub(crate) fn mirror(
        history: History,
        watch_buffer: WatchBuffer,
        items: Vec<KeyValue>,
        revision: Revision,
    ) -> Self {
        let store = Self::with_limits(history, watch_buffer);
        {
            let mut state = store.lock();
            state.kvs = items.into_iter().map(|kv| (kv.key.clone(), kv)).collect();
            state.revision = revision;
            state.compacted = revision;
        }
        store
    }

    /// The revision this store is at.
    pub(crate) fn revision(&self) -> Revision {
        self.lock().revision
    }

    /// Applies `ev`, an event of the store this one mirrors, at its own revision (revisions
    /// may skip: writes elsewhere). An event not newer than this store is ignored.
    pub(crate) fn apply(&self, ev: Arc<Event>) {
        let mut state = self.lock();
        if ev.revision() <= state.revision {
            return;
        }
        match ev.kind {
            EventKind::Deleted => state.kvs.remove(ev.key()),
            EventKind::Added | EventKind::Modified => {
                state.kvs.insert(ev.kv.key.clone(), ev.kv.clone())
            }
        };
        self.commit(&mut state, ev);
    }

    /// Whether the keys under `prefix` are as they were at `revision` (known from the
    /// compacted revision on; a revision ahead of this store's counts as unchanged).
    pub(crate) fn unchanged_since(&self, prefix: &str, revision: Revision) -> bool {
        let state = self.lock();
        revision >= state.compacted && !changed_after(&state, prefix, revision)
    }

    /// Moves this mirror to `revision` without a change of its keys (the mirrored store
    /// changed other keys, or reported its progress).
    pub(crate) fn advance(&self, revision: Revision) {
        let mut state = self.lock();
        if revision > state.revision {
            state.revision = revision;
            self.compact(&mut state);
        }
    }

    /// Record `ev` (whose revision is above `state.revision`), compact, and notify watchers.
    /// Called with the lock held so watchers see events in revision order.
    fn commit(&self, state: &mut State, ev: impl Into<Arc<Event>>) {
        let ev = ev.into();
        state.revision = ev.revision();
        state.log_bytes += event_bytes(&ev);
        state.log.push_back(Arc::clone(&ev));
        self.compact(state);
        self.inner.tx.send(&ev);
    }

    /// Drops history older than the bounds allow.
    fn compact(&self, state: &mut State) {
        let keep_after = self.inner.history.keep_after(state.revision);
        while let Some(oldest) = state.log.front() {
            let over_bytes = state.log_bytes > self.inner.history.bytes && state.log.len() > 1;
            if oldest.revision() > keep_after && !over_bytes {
                break;
            }
            state.log_bytes -= event_bytes(oldest);
            state.compacted = state.compacted.max(oldest.revision());
            state.log.pop_front();
        }
        state.compacted = state.compacted.max(keep_after);
    }
}

/// Whether a key under `prefix` changed after `revision`, per the log.
fn changed_after(state: &State, prefix: &str, revision: Revision) -> bool {
    state
        .log
        .iter()
        .rev()
        .take_while(|e| e.revision() > revision)
        .any(|e| e.key().starts_with(prefix))
}

impl Storage for MemoryStore {
    async fn current_revision(&self) -> Result<Revision> {
        Ok(self.lock().revision)
    }

    async fn compacted_revision(&self) -> Result<Revision> {
        Ok(self.lock().compacted)
    }

    async fn get(&self, key: &str) -> Result<Option<KeyValue>> {
        Ok(self.lock().kvs.get(key).cloned())
    }

    async fn list(&self, prefix: &str, options: ListOptions) -> Result<ListResult> {
        let state = self.lock();
        let revision = options.revision.unwrap_or(state.revision);
        check_read_revision(revision, state.revision, state.compacted)?;
        let lower = lower_bound(prefix, options.start_key.as_deref());
        // The state at `revision` is the current one when nothing under `prefix` changed
        // since (writes elsewhere move the revision too).
        let (items, remaining) = if !changed_after(&state, prefix, revision) {
            let iter = state
                .kvs
                .range::<str, _>((lower, Bound::Unbounded))
                .take_while(|(k, _)| k.starts_with(prefix))
                .map(|(_, v)| v);
            paginate(iter, options.limit)
        } else {
            let mut snapshot: BTreeMap<String, KeyValue> = state
                .kvs
                .range::<str, _>((Bound::Included(prefix), Bound::Unbounded))
                .take_while(|(k, _)| k.starts_with(prefix))
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect();
            let newer = state
                .log
                .iter()
                .rev()
                .take_while(|e| e.revision() > revision)
                .map(|e| &**e);
            rewind(&mut snapshot, prefix, newer);
            let iter = snapshot
                .range::<str, _>((lower, Bound::Unbounded))
                .map(|(_, v)| v);
            paginate(iter, options.limit)
        };
        Ok(ListResult {
            items,
            revision,
            remaining,
        })
    }

    async fn create(&self, key: &str, value: Bytes) -> Result<KeyValue> {
        self.write(Write::new(key, Change::Create(value)))?
            .created()
    }

    async fn update(
        &self,
        key: &str,
        value: Bytes,
        expected_mod_revision: Revision,
    ) -> Result<UpdateResult> {
        self.write(Write::new(
            key,
            Change::Update(value, expected_mod_revision),
        ))?
        .updated()
    }

    async fn delete(
        &self,
        key: &str,
        expected_mod_revision: Option<Revision>,
    ) -> Result<DeleteResult> {
        self.write(Write::new(key, Change::Delete(expected_mod_revision)))?
            .deleted()
    }

    async fn watch(&self, prefix: &str, after_revision: Revision) -> Result<Watcher> {
        let state = self.lock();
        if after_revision < state.compacted {
            return Err(StorageError::Gone {
                requested: after_revision,
                compacted: state.compacted,
            });
        }
        // Subscribed under the lock: no write can slip between replay and live events.
        let rx = self.inner.tx.subscribe(prefix);
        let replay: Vec<_> = state
            .log
            .iter()
            .filter(|e| e.revision() > after_revision && e.key().starts_with(prefix))
            .cloned()
            .collect();
        let through = state.revision.max(after_revision);
        drop(state);
        Ok(watch_stream(replay, through, rx))
    }
}
