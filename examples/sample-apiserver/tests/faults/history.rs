//! The recorded history: every operation a client invoked, with its invocation and completion
//! times and what it saw, and every record of every watch stream. The checkers read only this
//! and the store's own history (store_history.rs).

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Instant;

/// Nanoseconds since the run began.
pub(crate) type Nanos = u64;

/// An object as a client saw it: its resourceVersion and the unique id of the write that made
/// it (label `w`).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(crate) struct Obj {
    pub(crate) rv: u64,
    pub(crate) w: String,
}

/// What a client asked.
#[derive(Clone, Debug)]
pub(crate) enum Call {
    /// POST of a new object whose label `w` is this id.
    Create { w: String },
    /// PUT with `metadata.resourceVersion = expect` (compare-and-swap), label `w` set to this id.
    Update { expect: u64, w: String },
    /// DELETE (unconditional).
    Delete,
    /// GET of one object; `consistent: false` is `?resourceVersion=0`.
    Get { consistent: bool },
    /// LIST of the collection; `consistent: false` is `?resourceVersion=0`.
    List { consistent: bool },
}

/// What the client got back.
#[derive(Clone, Debug)]
pub(crate) enum Ret {
    /// A create or update was acknowledged (2xx) with this object.
    Written(Obj),
    /// A delete was acknowledged.
    Deleted,
    /// The server refused (409 Conflict/AlreadyExists, 404 NotFound): nothing was written.
    Refused(u16),
    /// No answer, or an answer that does not say whether it happened (5xx, a timeout, a reset).
    Unknown(String),
    /// A GET's answer: the object, or `None` for 404.
    Read(Option<Obj>),
    /// A LIST's answer: its resourceVersion and the objects by name.
    Listed {
        rv: u64,
        items: BTreeMap<String, Obj>,
    },
}

/// One operation: invoked at `invoke`, completed at `complete`.
#[derive(Clone, Debug)]
pub(crate) struct Op {
    pub(crate) client: usize,
    pub(crate) replica: usize,
    /// The object's name (`None` for a list).
    pub(crate) key: Option<String>,
    pub(crate) call: Call,
    pub(crate) ret: Ret,
    pub(crate) invoke: Nanos,
    pub(crate) complete: Nanos,
}

impl Op {
    /// Whether it is an acknowledged write.
    pub(crate) fn acknowledged(&self) -> bool {
        matches!(self.ret, Ret::Written(_) | Ret::Deleted)
    }
}

/// One record of a watch stream, in the order the watcher saw it.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum WatchRecord {
    /// A consistent list the watcher (re)started from.
    Relist {
        rv: u64,
        items: BTreeMap<String, Obj>,
    },
    /// A watch opened from this resourceVersion.
    Start { from: u64 },
    /// An ADDED, MODIFIED or DELETED event.
    Event {
        kind: EventKind,
        name: String,
        obj: Obj,
    },
    /// A BOOKMARK at this resourceVersion.
    Bookmark { rv: u64 },
    /// 410 Gone (an answer or an ERROR event): the watcher must list again.
    Gone,
    /// The stream ended (timeout, reset, another error); the watcher resumes from where it was.
    Ended(String),
}

/// A watch event's type.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum EventKind {
    Added,
    Modified,
    Deleted,
}

/// A watch stream's records, the replica it watched.
#[derive(Clone, Debug, Default)]
pub(crate) struct WatchLog {
    pub(crate) replica: usize,
    pub(crate) records: Vec<WatchRecord>,
}

/// Where every thread writes what it saw.
#[derive(Clone)]
pub(crate) struct Recorder {
    start: Instant,
    ops: Arc<Mutex<Vec<Op>>>,
}

impl Recorder {
    pub(crate) fn new() -> Recorder {
        Recorder {
            start: Instant::now(),
            ops: Arc::default(),
        }
    }

    /// Now, in nanoseconds since the run began.
    pub(crate) fn now(&self) -> Nanos {
        u64::try_from(self.start.elapsed().as_nanos()).unwrap_or(u64::MAX)
    }

    pub(crate) fn push(&self, op: Op) {
        self.ops
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(op);
    }

    /// Every operation recorded so far, by invocation time.
    pub(crate) fn ops(&self) -> Vec<Op> {
        let mut ops = self
            .ops
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone();
        ops.sort_by_key(|o| o.invoke);
        ops
    }
}

/// Writes the history, one item a line, into `dir`: `ops.txt`, `watch-<replica>.txt` and
/// `store.txt`, for a post-mortem.
pub(crate) fn dump(
    dir: &std::path::Path,
    ops: &[Op],
    watches: &[WatchLog],
    store: &[impl std::fmt::Debug],
) {
    fn lines<T: std::fmt::Debug>(path: std::path::PathBuf, items: &[T]) {
        let text: String = items.iter().map(|i| format!("{i:?}\n")).collect();
        std::fs::write(&path, text).unwrap_or_else(|e| panic!("write {}: {e}", path.display()));
    }
    std::fs::create_dir_all(dir).expect("create FAULTS_HISTORY_DIR");
    lines(dir.join("ops.txt"), ops);
    for w in watches {
        lines(dir.join(format!("watch-{}.txt", w.replica)), &w.records);
    }
    lines(dir.join("store.txt"), store);
}
