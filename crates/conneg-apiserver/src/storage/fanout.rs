//! Live events from one writer to many storage watchers, each with its own queue bounded in
//! events and in bytes.
//!
//! A watcher that does not read (an idle client, a stalled connection) holds only its own
//! queue; when the next event would take that queue over either bound, the queue is dropped at
//! once and the watcher's next read is [`StorageError::WatchLagged`] (the client re-watches, as
//! after any lag). A watcher that goes releases its queue with it.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex, MutexGuard, Weak};

use tokio::sync::Notify;

use super::{Event, StorageError};

/// How far one watcher may fall behind the writers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WatchBuffer {
    /// Events queued for one watcher.
    pub events: usize,
    /// Bytes of keys and values queued for one watcher (events are shared among watchers, so
    /// this bounds what one watcher can keep alive).
    pub bytes: usize,
}

/// The bytes of keys and values one event holds.
pub(crate) fn event_bytes(ev: &Event) -> usize {
    let kv = |kv: &super::KeyValue| kv.key.len() + kv.value.len();
    kv(&ev.kv) + ev.prev.as_ref().map_or(0, kv)
}

#[derive(Default)]
struct Queue {
    events: VecDeque<Arc<Event>>,
    bytes: usize,
    /// Events dropped since the watcher last read, once it fell behind.
    missed: Option<u64>,
    closed: bool,
}

struct Slot {
    /// Only events under this key prefix are queued.
    prefix: String,
    queue: Mutex<Queue>,
    notify: Notify,
}

impl Slot {
    fn lock(&self) -> MutexGuard<'_, Queue> {
        // Every update below leaves the queue consistent before anything can panic.
        self.queue
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

/// The sending side, owned by a store.
pub(crate) struct Fanout {
    limits: WatchBuffer,
    slots: Mutex<Vec<Weak<Slot>>>,
}

impl Fanout {
    pub(crate) fn new(limits: WatchBuffer) -> Self {
        Self {
            limits: WatchBuffer {
                events: limits.events.max(1),
                bytes: limits.bytes,
            },
            slots: Mutex::new(Vec::new()),
        }
    }

    fn slots(&self) -> MutexGuard<'_, Vec<Weak<Slot>>> {
        self.slots
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// A new watcher of the keys under `prefix`; it receives every such event sent from now on.
    pub(crate) fn subscribe(&self, prefix: &str) -> Receiver {
        let slot = Arc::new(Slot {
            prefix: prefix.to_owned(),
            queue: Mutex::new(Queue::default()),
            notify: Notify::new(),
        });
        self.slots().push(Arc::downgrade(&slot));
        Receiver { slot }
    }

    /// Queues `ev` for every watcher; a watcher it would take over the bounds loses its queue
    /// and lags. An empty queue always takes one event, however large.
    pub(crate) fn send(&self, ev: &Arc<Event>) {
        let size = event_bytes(ev);
        let mut slots = self.slots();
        slots.retain(|weak| {
            let Some(slot) = weak.upgrade() else {
                return false; // the watcher went
            };
            if !ev.key().starts_with(&slot.prefix) {
                return true;
            }
            {
                let mut q = slot.lock();
                if q.closed {
                    return false; // its watch ended
                }
                if let Some(missed) = &mut q.missed {
                    *missed += 1;
                } else if !q.events.is_empty()
                    && (q.events.len() >= self.limits.events || q.bytes + size > self.limits.bytes)
                {
                    let missed = q.events.len() as u64 + 1;
                    *q = Queue {
                        missed: Some(missed),
                        ..Queue::default()
                    };
                } else {
                    q.events.push_back(Arc::clone(ev));
                    q.bytes += size;
                }
            }
            slot.notify.notify_one();
            true
        });
    }

    /// Ends every watch after what is queued for it (the store is going away).
    pub(crate) fn close(&self) {
        for slot in self.slots().drain(..).filter_map(|w| w.upgrade()) {
            slot.lock().closed = true;
            slot.notify.notify_one();
        }
    }

    /// Bytes queued for all watchers now (an event queued for several counts once each).
    #[cfg(test)]
    fn queued_bytes(&self) -> usize {
        self.slots()
            .iter()
            .filter_map(Weak::upgrade)
            .map(|s| s.lock().bytes)
            .sum()
    }
}

impl Drop for Fanout {
    fn drop(&mut self) {
        self.close();
    }
}

/// One watcher's queue. Dropping it frees the queue.
pub(crate) struct Receiver {
    slot: Arc<Slot>,
}

impl Receiver {
    /// The next event; `Err(WatchLagged)` once after the watcher fell behind, `None` when
    /// the store closed.
    pub(crate) async fn recv(&mut self) -> Option<Result<Arc<Event>, StorageError>> {
        loop {
            {
                let mut q = self.slot.lock();
                if let Some(missed) = q.missed.take() {
                    q.closed = true;
                    return Some(Err(StorageError::WatchLagged { missed }));
                }
                if let Some(ev) = q.events.pop_front() {
                    q.bytes -= event_bytes(&ev);
                    return Some(Ok(ev));
                }
                if q.closed {
                    return None;
                }
            }
            // A notification sent between the check above and this wait is kept as a permit.
            self.slot.notify.notified().await;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::storage::{EventKind, KeyValue};
    use bytes::Bytes;

    fn event(rev: i64, size: usize) -> Arc<Event> {
        let kv = KeyValue {
            key: "/k".into(),
            value: Bytes::from(vec![b'x'; size]),
            create_revision: 2,
            mod_revision: rev,
        };
        Arc::new(Event {
            kind: EventKind::Modified,
            kv: kv.clone(),
            prev: Some(kv),
        })
    }

    #[tokio::test]
    async fn an_idle_watcher_holds_at_most_its_byte_bound_then_lags() {
        const BOUND: usize = 1 << 20;
        let fanout = Fanout::new(WatchBuffer {
            events: 4096,
            bytes: BOUND,
        });
        let mut idle = fanout.subscribe("/");
        let mut reader = fanout.subscribe("/");
        for rev in 0..3000 {
            fanout.send(&event(rev, 100_000));
            assert!(reader.recv().await.unwrap().is_ok());
            assert!(fanout.queued_bytes() <= BOUND, "revision {rev}");
        }
        match idle.recv().await {
            Some(Err(StorageError::WatchLagged { missed })) => assert!(missed > 2900),
            other => panic!("expected a lag, got {other:?}"),
        }
        assert!(idle.recv().await.is_none(), "the lagged watch has ended");
        fanout.send(&event(3000, 10));
        assert_eq!(fanout.queued_bytes(), 2 * (2 + 10), "only the reader's");
        drop(reader);
        drop(idle);
        assert_eq!(fanout.queued_bytes(), 0, "queues leave with their watchers");
        assert!(fanout.slots().iter().all(|w| w.upgrade().is_none()));
    }

    #[tokio::test]
    async fn the_event_bound_still_applies_and_one_large_event_fits_an_empty_queue() {
        let fanout = Fanout::new(WatchBuffer {
            events: 2,
            bytes: 10,
        });
        let mut w = fanout.subscribe("/");
        fanout.send(&event(1, 1000));
        assert!(
            w.recv().await.unwrap().is_ok(),
            "over the byte bound, alone"
        );
        for rev in 2..=4 {
            fanout.send(&event(rev, 0));
        }
        let fanout2 = Fanout::new(WatchBuffer {
            events: 2,
            bytes: usize::MAX,
        });
        let mut v = fanout2.subscribe("/");
        for rev in 1..=3 {
            fanout2.send(&event(rev, 0));
        }
        assert!(matches!(
            v.recv().await,
            Some(Err(StorageError::WatchLagged { missed: 3 }))
        ));
        assert!(matches!(
            w.recv().await,
            Some(Err(StorageError::WatchLagged { .. }))
        ));
    }
}
