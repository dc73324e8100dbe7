//! Writes, as every backend decides them, and group commit: concurrent writes queued to one
//! writer thread, which gathers what is queued into a batch and commits it at once (for the
//! embedded store: one redb transaction and one fsync for the whole batch).
//!
//! A [`Write`] is decided against the key's current value and the store's revision
//! ([`Write::decide`]), the same in every backend: its own precondition, its own revision, its
//! own error. Inside a batch, writes are decided in queue order, each seeing the ones before
//! it, so a batch is exactly the writes one after another; a write that fails (a conflict, an
//! existing key) writes nothing and does not fail its neighbours.
//!
//! Bounds: the queue holds at most [`QUEUE_WRITES`] writes (callers wait for room beyond
//! that); a batch takes at most [`MAX_BATCH_WRITES`] writes and [`MAX_BATCH_BYTES`] of keys and
//! values (always at least one write). The writer does not wait for a batch to fill: it takes
//! what was queued while the previous commit ran, so an idle store commits a lone write at
//! once, and under load a write waits for at most the commit in flight plus its own.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::thread::JoinHandle;

use bytes::Bytes;
use tokio::sync::{mpsc, oneshot};

use super::{
    Cas, DeleteResult, Event, EventKind, KeyValue, Result, Revision, StorageError, UpdateResult,
    check_revision, check_update,
};

/// The most writes the queue of a group commit holds.
pub(crate) const QUEUE_WRITES: usize = 1024;

/// The most writes one batch commits.
pub(crate) const MAX_BATCH_WRITES: usize = 256;

/// The most bytes of keys and values one batch commits (a larger lone write is a batch of
/// its own): 16 MiB.
pub(crate) const MAX_BATCH_BYTES: usize = 16 << 20;

/// What a write does to its key.
#[derive(Debug, Clone)]
pub(crate) enum Change {
    /// Create the key with this value; `AlreadyExists` if present.
    Create(Bytes),
    /// Replace the value if the key is at this `mod_revision`.
    Update(Bytes, Revision),
    /// Delete the key, if given only at this `mod_revision`.
    Delete(Option<Revision>),
}

/// One write.
#[derive(Debug, Clone)]
pub(crate) struct Write {
    pub(crate) key: String,
    pub(crate) change: Change,
}

/// The answer to a [`Write`].
#[derive(Debug)]
pub(crate) enum Written {
    Created(KeyValue),
    Updated(UpdateResult),
    Deleted(DeleteResult),
}

impl Written {
    fn mismatch() -> StorageError {
        StorageError::Backend("a write was answered as another kind of write".into())
    }

    pub(crate) fn created(self) -> Result<KeyValue> {
        match self {
            Written::Created(kv) => Ok(kv),
            _ => Err(Self::mismatch()),
        }
    }

    pub(crate) fn updated(self) -> Result<UpdateResult> {
        match self {
            Written::Updated(u) => Ok(u),
            _ => Err(Self::mismatch()),
        }
    }

    pub(crate) fn deleted(self) -> Result<DeleteResult> {
        match self {
            Written::Deleted(d) => Ok(d),
            _ => Err(Self::mismatch()),
        }
    }
}

impl Write {
    pub(crate) fn new(key: &str, change: Change) -> Self {
        Self {
            key: key.to_owned(),
            change,
        }
    }

    /// The bytes of key and value this write adds to a batch.
    fn bytes(&self) -> usize {
        self.key.len()
            + match &self.change {
                Change::Create(v) | Change::Update(v, _) => v.len(),
                Change::Delete(_) => 0,
            }
    }

    /// The write against `current`, the key's value, with the store at `revision`: the event
    /// to record (at `revision + 1`; `None`: nothing to write) and the answer.
    pub(crate) fn decide(
        &self,
        current: Option<KeyValue>,
        revision: Revision,
    ) -> Result<(Option<Event>, Written)> {
        let rev = revision + 1;
        let key = &self.key;
        Ok(match &self.change {
            Change::Create(value) => {
                if current.is_some() {
                    return Err(StorageError::AlreadyExists { key: key.clone() });
                }
                let kv = KeyValue {
                    key: key.clone(),
                    value: value.clone(),
                    create_revision: rev,
                    mod_revision: rev,
                };
                let event = Event {
                    kind: EventKind::Added,
                    kv: kv.clone(),
                    prev: None,
                };
                (Some(event), Written::Created(kv))
            }
            Change::Update(value, expected) => {
                let current = match check_update(key, current, value, *expected)? {
                    Cas::Unchanged(unchanged) => return Ok((None, Written::Updated(unchanged))),
                    Cas::Replace(current) => current,
                };
                let kv = KeyValue {
                    key: key.clone(),
                    value: value.clone(),
                    create_revision: current.create_revision,
                    mod_revision: rev,
                };
                let event = Event {
                    kind: EventKind::Modified,
                    kv: kv.clone(),
                    prev: Some(current),
                };
                (
                    Some(event),
                    Written::Updated(UpdateResult { kv, changed: true }),
                )
            }
            Change::Delete(expected) => {
                let current = check_revision(key, current, *expected)?;
                let event = Event {
                    kind: EventKind::Deleted,
                    kv: KeyValue {
                        key: key.clone(),
                        value: Bytes::new(),
                        create_revision: current.create_revision,
                        mod_revision: rev,
                    },
                    prev: Some(current.clone()),
                };
                let answer = DeleteResult {
                    prev: current,
                    revision: rev,
                };
                (Some(event), Written::Deleted(answer))
            }
        })
    }
}

/// A queued write and where its answer goes.
struct Queued {
    write: Write,
    reply: oneshot::Sender<Result<Written>>,
}

/// Commits a batch: one answer per write, in order, each given only once the batch is durable;
/// `Err` when the batch as a whole failed (nothing of it was written).
pub(crate) type CommitBatch = dyn FnMut(&[Write]) -> Result<Vec<Result<Written>>> + Send;

/// The queue and the writer thread of a store. Dropping it lets the thread finish what is
/// queued and waits for it (so the store's file is closed when this returns).
pub(crate) struct GroupCommit {
    queue: Option<mpsc::Sender<Queued>>,
    thread: Option<JoinHandle<()>>,
}

impl GroupCommit {
    /// Starts the writer thread `name`, committing batches with `commit`.
    pub(crate) fn start(name: &str, commit: Box<CommitBatch>) -> Result<Self> {
        let (queue, rx) = mpsc::channel(QUEUE_WRITES);
        let thread = std::thread::Builder::new()
            .name(name.to_owned())
            .spawn(move || run(rx, commit))
            .map_err(|e| StorageError::Backend(format!("starting the writer thread: {e}")))?;
        Ok(Self {
            queue: Some(queue),
            thread: Some(thread),
        })
    }

    /// Queues `write` and waits for its answer, given once the batch it joined is durable.
    /// A caller that stops waiting does not withdraw the write.
    pub(crate) async fn write(&self, write: Write) -> Result<Written> {
        let stopped = || StorageError::Backend("the store's writer has stopped".into());
        let queue = self.queue.as_ref().ok_or_else(stopped)?;
        let (reply, answer) = oneshot::channel();
        queue
            .send(Queued { write, reply })
            .await
            .map_err(|_| stopped())?;
        answer.await.map_err(|_| stopped())?
    }
}

impl Drop for GroupCommit {
    fn drop(&mut self) {
        drop(self.queue.take());
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// The writer thread: takes what is queued (within the batch bounds), commits it, answers.
fn run(mut rx: mpsc::Receiver<Queued>, mut commit: Box<CommitBatch>) {
    let mut carried: Option<Queued> = None;
    while let Some(first) = carried.take().or_else(|| rx.blocking_recv()) {
        let mut bytes = first.write.bytes();
        let mut batch = vec![first];
        while batch.len() < MAX_BATCH_WRITES {
            let Ok(next) = rx.try_recv() else { break };
            bytes += next.write.bytes();
            if bytes > MAX_BATCH_BYTES {
                carried = Some(next);
                break;
            }
            batch.push(next);
        }
        let (writes, replies): (Vec<Write>, Vec<_>) =
            batch.into_iter().map(|q| (q.write, q.reply)).unzip();
        // A panic fails its batch, not the writer.
        let answers = catch_unwind(AssertUnwindSafe(|| commit(&writes))).unwrap_or_else(|_| {
            Err(StorageError::Backend(
                "the store's writer panicked while committing".into(),
            ))
        });
        match answers {
            Ok(answers) => {
                let mut answers = answers.into_iter();
                for reply in replies {
                    let answer = answers.next().unwrap_or_else(|| {
                        Err(StorageError::Backend("a write got no answer".into()))
                    });
                    let _ = reply.send(answer);
                }
            }
            Err(e) => {
                for reply in replies {
                    let _ = reply.send(Err(e.clone()));
                }
            }
        }
    }
}
