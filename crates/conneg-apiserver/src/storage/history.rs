//! Pieces both backends share: paging, rewinding to a past revision, the watch stream.

use std::collections::BTreeMap;
use std::ops::Bound;
use std::sync::Arc;

use super::fanout::Receiver;
use super::{Event, EventKind, KeyValue, Revision, StorageError, Watcher};

/// How much history a store keeps: the last `revisions`, and no more than `bytes` of them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct History {
    /// Revisions kept (at least 1).
    pub revisions: u64,
    /// Bytes of keys and values kept (the newest event is kept whatever its size).
    pub bytes: usize,
}

impl Default for History {
    fn default() -> Self {
        Self {
            revisions: super::DEFAULT_HISTORY,
            bytes: super::DEFAULT_HISTORY_BYTES,
        }
    }
}

impl History {
    /// The newest revision to compact away, by count, once the store is at `revision`.
    pub(crate) fn keep_after(&self, revision: Revision) -> Revision {
        revision - i64::try_from(self.revisions.max(1)).unwrap_or(i64::MAX)
    }
}

/// The lower bound of a prefix scan that starts at `start_key` (inclusive).
pub(crate) fn lower_bound<'a>(prefix: &'a str, start_key: Option<&'a str>) -> Bound<&'a str> {
    match start_key {
        Some(start) if start >= prefix => Bound::Included(start),
        _ => Bound::Included(prefix),
    }
}

/// Up to `limit` items of `iter`, and how many are left after them. The items are counted
/// before they are copied, so the page is allocated once at its size (a list of thousands of
/// objects no longer grows its vector a dozen times) and the rest are counted, not copied.
pub(crate) fn paginate<'a>(
    iter: impl Iterator<Item = &'a KeyValue> + Clone,
    limit: Option<usize>,
) -> (Vec<KeyValue>, u64) {
    let limit = limit.filter(|&l| l > 0).unwrap_or(usize::MAX);
    let total = iter.clone().count();
    let kept = total.min(limit);
    let mut items = Vec::with_capacity(kept);
    items.extend(iter.take(kept).cloned());
    (items, (total - kept) as u64)
}

/// Undo `events` (newest first, all with revision > the target) on `items`, the current
/// state of the keys under `prefix`, giving the state at the target revision.
pub(crate) fn rewind<'a>(
    items: &mut BTreeMap<String, KeyValue>,
    prefix: &str,
    events_newest_first: impl Iterator<Item = &'a Event>,
) {
    for ev in events_newest_first {
        if !ev.key().starts_with(prefix) {
            continue;
        }
        match (ev.kind, &ev.prev) {
            (EventKind::Added, _) => {
                items.remove(ev.key());
            }
            (EventKind::Modified | EventKind::Deleted, Some(prev)) => {
                items.insert(prev.key.clone(), prev.clone());
            }
            (EventKind::Modified | EventKind::Deleted, None) => {
                items.remove(ev.key());
            }
        }
    }
}

/// Validate a list revision against the store's window.
pub(crate) fn check_read_revision(
    requested: Revision,
    current: Revision,
    compacted: Revision,
) -> Result<(), StorageError> {
    if requested > current {
        Err(StorageError::FutureRevision { requested, current })
    } else if requested < compacted {
        Err(StorageError::Gone {
            requested,
            compacted,
        })
    } else {
        Ok(())
    }
}

struct WatchState {
    replay: std::vec::IntoIter<Arc<Event>>,
    rx: Receiver,
    /// Highest revision already delivered or covered by the replay.
    seen: Revision,
    done: bool,
}

/// Build a watch stream from a replay (already filtered: under the watched prefix, revision >
/// start, oldest first) read through revision `replayed_through`, and a receiver of the same
/// prefix that was subscribed *before* the replay was read (duplicates are skipped by
/// revision).
pub(crate) fn watch_stream(
    replay: Vec<Arc<Event>>,
    replayed_through: Revision,
    rx: Receiver,
) -> Watcher {
    let state = WatchState {
        replay: replay.into_iter(),
        rx,
        seen: replayed_through,
        done: false,
    };
    Watcher::new(futures_util::stream::unfold(state, |mut st| async move {
        if st.done {
            return None;
        }
        if let Some(ev) = st.replay.next() {
            return Some((Ok(ev), st));
        }
        loop {
            match st.rx.recv().await? {
                Ok(ev) => {
                    if ev.revision() <= st.seen {
                        continue;
                    }
                    st.seen = ev.revision();
                    return Some((Ok(ev), st));
                }
                Err(lagged) => {
                    st.done = true;
                    return Some((Err(lagged), st));
                }
            }
        }
    }))
}
