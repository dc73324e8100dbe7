//! The embedded on-disk backend (the default), on [redb]: ACID, copy-on-write B-trees, MVCC
//! readers that never block the writer, one file.
//!
//! Tables:
//! * `log`: revision -> event (kind, key, value, revisions, previous key-value). It holds the
//!   history, every event after the compacted revision (the last `history.revisions`
//!   revisions, within `history.bytes` of events), and below it the entry of each live key's
//!   last write, which is where that key's value is;
//! * `meta`: `revision` (current), `compacted`, and `log_bytes` (the bytes of the events after
//!   the compacted revision).
//!
//! Which entry holds a key's value is kept in memory ([`index`]), as etcd keeps its key index
//! beside bbolt's revisions, and rebuilt from `log` when the store opens (a read of the whole
//! log: opening takes time in proportion to what is stored). So a write appends one entry at
//! the end of `log`, where the writes of its batch share pages, instead of also rewriting the
//! page of a key-ordered table that its key lands in (a page, 4 KiB, per write when keys are
//! generated names). A store written by an earlier version (a `kv` table beside a log of the
//! history only) is migrated when it opens: each value the history no longer held is written
//! to `log` at its revision, and `kv` is dropped. An earlier version would see a migrated
//! store as empty: a rollback needs the data directory as it was before the upgrade.
//!
//! An entry leaves `log` once it is neither history nor a live value: when compaction passes
//! it, or when its key is written again after compaction passed it. It is removed by the
//! commit after the one that decided it, so a read that began before that commit, holding the
//! index as it was, still finds every value it points at.
//!
//! Writes go through group commit (`storage/group_commit.rs`): one writer thread takes every
//! write queued while its previous commit ran (up to 256 writes and 16 MiB), decides each in
//! order (its own precondition, revision and error), and commits the batch as one redb
//! transaction with [`Durability::Immediate`] (one fsync). Each write is answered only after
//! that commit, so an acknowledged write survives `kill -9` and power loss, and watchers get
//! the batch's events, in revision order, before any of its writes is answered. Reads run on
//! tokio's blocking pool and never wait for the writer (redb's MVCC).
//!
//! An I/O error (a full disk, say) fails the write that met it with a 500, and redb then
//! refuses every later call until the database is reopened; so the store closes and reopens
//! the file before its next call (and rebuilds its index from what the file holds), and reads
//! go on. Writes keep failing while the cause lasts; [`Storage::ready`] reports the failure
//! (probing with a write that changes nothing) until a write commits again.

mod encoding;
mod index;

use std::fmt;
use std::ops::Bound;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError, RwLock};

use self::encoding::{decode_event, decode_kv_value, encode_event, event_head, written_value};
use self::index::{Changes, Entry, Index};
use super::fanout::{Fanout, WatchBuffer};
use super::group_commit::{Change, GroupCommit, Write, Written};
use super::history::{History, check_read_revision, lower_bound, paginate, rewind, watch_stream};
use super::{
    DeleteResult, Event, EventKind, KeyValue, ListOptions, ListResult, Result, Revision, Storage,
    StorageError, UpdateResult, Watcher,
};
use bytes::Bytes;
use redb::{Database, Durability, ReadableTable, TableDefinition, TableHandle};

/// The table of live values of the layout before the index: read once, to migrate.
const KV: TableDefinition<'_, &str, &[u8]> = TableDefinition::new("kv");
const LOG: TableDefinition<'_, i64, &[u8]> = TableDefinition::new("log");
const META: TableDefinition<'_, &str, i64> = TableDefinition::new("meta");
const META_REVISION: &str = "revision";
const META_COMPACTED: &str = "compacted";
const META_LOG_BYTES: &str = "log_bytes";

/// The file of a server's store inside its data directory: the first label of its API group,
/// `.redb` (`wardle.redb` for `wardle.example.com`).
pub(crate) fn file_name(group: &str) -> String {
    let label = group
        .split('.')
        .next()
        .filter(|l| !l.is_empty())
        .unwrap_or("core");
    format!("{label}.redb")
}

/// Options of the embedded store.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct EmbeddedOptions {
    /// History kept for watches and past-revision lists.
    pub history: History,
    /// How far a watcher may fall behind before its stream is ended.
    pub watch_buffer: WatchBuffer,
}

struct Inner {
    /// The open database; `None` only while it is being reopened, or when that failed.
    db: RwLock<Option<Database>>,
    write_lock: Mutex<()>,
    tx: Fanout,
    history: History,
    path: PathBuf,
    /// Set by an I/O error: the database must be reopened before it is used again.
    reopen: AtomicBool,
    /// Why writes fail: the last I/O error, from the write that met it until one commits.
    write_failure: Mutex<Option<String>>,
    /// Transactions that committed writes since the store was opened.
    commits: AtomicU64,
    /// The current revision, as `meta` has it since the last commit: this process is the
    /// database's only writer, so a read of the revision (every consistent read asks it) needs
    /// no transaction.
    revision: AtomicI64,
    /// Every live key, as of the last commit. A read takes it and begins its transaction
    /// under the lock ([`Inner::view`]); the writer updates it after each commit.
    index: RwLock<Index>,
    /// The `log` entries the next commit removes: neither history nor live as of the last
    /// commit (the writer's, under `write_lock`).
    removals: Mutex<Vec<Revision>>,
}

impl Inner {
    /// A redb error as a storage error; an I/O error also marks the database for reopening
    /// and writes as failing.
    fn db_err(&self, e: impl Into<redb::Error>) -> StorageError {
        let e = e.into();
        if matches!(e, redb::Error::Io(_) | redb::Error::PreviousIo) {
            self.reopen.store(true, Ordering::SeqCst);
            let mut why = self.write_failure();
            if why.is_none() {
                tracing::error!(
                    path = %self.path.display(),
                    error = %e,
                    "embedded store: I/O error; reopening the database (reads go on, writes fail until one commits)"
                );
            }
            // The first cause is kept: redb reports every later call as "Previous I/O error".
            if why.is_none() || matches!(e, redb::Error::Io(_)) {
                *why = Some(e.to_string());
            }
        }
        backend(e)
    }

    fn write_failure(&self) -> MutexGuard<'_, Option<String>> {
        self.write_failure
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    /// A write committed: writes work (again).
    fn write_committed(&self) {
        if let Some(was) = self.write_failure().take() {
            tracing::info!(path = %self.path.display(), was, "embedded store: writes work again");
        }
    }

    /// Closes and reopens the database if an I/O error asked for it.
    fn reopen_if_needed(&self) -> Result<()> {
        if !self.reopen.load(Ordering::SeqCst) {
            return Ok(());
        }
        let mut db = self.db.write().unwrap_or_else(PoisonError::into_inner);
        if !self.reopen.load(Ordering::SeqCst) {
            return Ok(()); // another call reopened it meanwhile
        }
        // The file can be open once per process: close it first.
        *db = None;
        let reopened = Database::create(&self.path).map_err(backend)?;
        // What the file holds, whatever the failed commit left.
        let (index, dead) = load(&reopened)?;
        self.revision.store(index.revision, Ordering::SeqCst);
        *self.index.write().unwrap_or_else(PoisonError::into_inner) = index;
        *self.removals() = dead;
        *db = Some(reopened);
        self.reopen.store(false, Ordering::SeqCst);
        tracing::warn!(path = %self.path.display(), "embedded store: database reopened");
        Ok(())
    }

    fn removals(&self) -> MutexGuard<'_, Vec<Revision>> {
        self.removals.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// `f` over the index as of the last commit, and a read transaction begun under the same
    /// lock: whatever `f` finds is in that transaction's snapshot, since the entries a commit
    /// removes are the ones the index before it no longer pointed at.
    fn view<T>(
        &self,
        db: &Database,
        f: impl FnOnce(&Index) -> T,
    ) -> Result<(T, redb::ReadTransaction)> {
        let index = self.index.read().unwrap_or_else(PoisonError::into_inner);
        let found = f(&index);
        let txn = db.begin_read().map_err(|e| self.db_err(e))?;
        Ok((found, txn))
    }

    /// Commits `writes` as one transaction (on the writer thread): each decided in order
    /// against what the ones before it wrote, one fsync for all, then the events sent to
    /// watchers in revision order. A write that fails writes nothing and the others go on;
    /// `Err` (an I/O error, say) when the transaction itself failed.
    fn commit_batch(&self, writes: &[Write]) -> Result<Vec<Result<Written>>> {
        self.reopen_if_needed()?;
        let db = self.db.read().unwrap_or_else(PoisonError::into_inner);
        let db = db.as_ref().ok_or_else(|| {
            StorageError::Backend("embedded store: the database could not be reopened".into())
        })?;
        let _guard = self
            .write_lock
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        let mut txn = db.begin_write().map_err(|e| self.db_err(e))?;
        txn.set_durability(Durability::Immediate);
        // Only the writer changes the index, and it holds `write_lock`: a read lock is enough.
        let index = self.index.read().unwrap_or_else(PoisonError::into_inner);
        let removals = std::mem::take(&mut *self.removals());
        let mut changes = Changes::default();
        let mut answers = Vec::with_capacity(writes.len());
        let mut events = Vec::new();
        let decided = (|| -> Result<Option<(Revision, Vec<Revision>)>> {
            let mut log = txn.open_table(LOG).map_err(|e| self.db_err(e))?;
            let mut meta = txn.open_table(META).map_err(|e| self.db_err(e))?;
            let mut revision = meta
                .get(META_REVISION)
                .map_err(|e| self.db_err(e))?
                .ok_or_else(|| corrupt("no revision"))?
                .value();
            let mut compacted = meta
                .get(META_COMPACTED)
                .map_err(|e| self.db_err(e))?
                .ok_or_else(|| corrupt("no compacted revision"))?
                .value();
            let len = |n: usize| i64::try_from(n).unwrap_or(i64::MAX);
            let mut log_bytes = meta
                .get(META_LOG_BYTES)
                .map_err(|e| self.db_err(e))?
                .map_or(0, |v| v.value());
            // Entries left out of the history and of the live values as of the last commit.
            for r in &removals {
                log.remove(r).map_err(|e| self.db_err(e))?;
            }
            // The entries this batch's writes leave behind, below the history.
            let mut superseded = Vec::new();
            for write in writes {
                let key = write.key.as_str();
                let at = changes.get(&index, key);
                let current = match at {
                    Some(e) => self.value_at(&log, key, e).map(Some),
                    None => Ok(None),
                };
                let (event, answer) = match current.and_then(|c| write.decide(c, revision)) {
                    Ok(decided) => decided,
                    Err(e) => {
                        answers.push(Err(e));
                        continue;
                    }
                };
                if let Some(event) = event {
                    revision = event.revision();
                    let written = (event.kind != EventKind::Deleted).then_some(Entry {
                        create_revision: event.kv.create_revision,
                        mod_revision: revision,
                    });
                    changes.set(key, written);
                    if let Some(was) = at.filter(|e| e.mod_revision <= compacted) {
                        superseded.push(was.mod_revision);
                    }
                    let entry = encode_event(&event);
                    log.insert(revision, entry.as_slice())
                        .map_err(|e| self.db_err(e))?;
                    log_bytes += len(entry.len());
                    events.push(event);
                }
                answers.push(Ok(answer));
            }
            if events.is_empty() {
                return Ok(None);
            }
            // Compact by count, and by bytes down to the newest event: the history starts
            // later, and what it leaves that is no live value goes with the next commit.
            let keep_after = self.history.keep_after(revision);
            let max_bytes = len(self.history.bytes);
            let mut next_removals = superseded;
            loop {
                let next = log
                    .range((compacted + 1)..)
                    .map_err(|e| self.db_err(e))?
                    .next()
                    .transpose()
                    .map_err(|e| self.db_err(e))?;
                let Some((k, v)) = next else { break };
                let (k, n) = (k.value(), v.value().len());
                if !(k <= keep_after || (log_bytes > max_bytes && k < revision)) {
                    break;
                }
                log_bytes -= len(n);
                compacted = k;
                let head = event_head(v.value())?;
                if !changes.is_live(&index, head.key, k) {
                    next_removals.push(k);
                }
            }
            compacted = compacted.max(keep_after);
            meta.insert(META_LOG_BYTES, log_bytes)
                .map_err(|e| self.db_err(e))?;
            meta.insert(META_REVISION, revision)
                .map_err(|e| self.db_err(e))?;
            meta.insert(META_COMPACTED, compacted)
                .map_err(|e| self.db_err(e))?;
            Ok(Some((revision, next_removals)))
        })();
        drop(index);
        let (revision, next_removals) = match decided {
            Ok(Some(done)) => done,
            outcome => {
                // Nothing written (no commit, no fsync), or the transaction failed: the
                // removals wait for the next commit.
                *self.removals() = removals;
                txn.abort().map_err(|e| self.db_err(e))?;
                return outcome.map(|_| answers);
            }
        };
        if let Err(e) = txn.commit() {
            *self.removals() = removals;
            return Err(self.db_err(e));
        }
        self.index
            .write()
            .unwrap_or_else(PoisonError::into_inner)
            .apply(changes, revision);
        *self.removals() = next_removals;
        self.revision.store(revision, Ordering::SeqCst);
        self.commits.fetch_add(1, Ordering::Relaxed);
        self.write_committed();
        // Still under the write lock: watchers get events in revision order.
        for event in events {
            self.tx.send(&Arc::new(event));
        }
        Ok(answers)
    }

    /// The value of live `key`, at `entry`, from `log`.
    fn value_at(
        &self,
        log: &impl ReadableTable<i64, &'static [u8]>,
        key: &str,
        entry: Entry,
    ) -> Result<KeyValue> {
        let raw = log
            .get(entry.mod_revision)
            .map_err(|e| self.db_err(e))?
            .ok_or_else(|| corrupt("a live key's entry is missing"))?;
        written_value(raw.value(), key)
    }
}

/// A store of the layout before the index (its live values in a `kv` table, its log the
/// history alone) as `log` holds it now: each live value the history no longer held is
/// written at its revision (below the compacted one, so no watch replays it). The caller
/// then drops `kv`.
fn migrate_kv(
    txn: &redb::WriteTransaction,
    log: &mut redb::Table<'_, i64, &'static [u8]>,
) -> Result<()> {
    if !txn
        .list_tables()
        .map_err(backend)?
        .any(|t| t.name() == KV.name())
    {
        return Ok(());
    }
    let table = txn.open_table(KV).map_err(backend)?;
    for entry in table.iter().map_err(backend)? {
        let (k, v) = entry.map_err(backend)?;
        let kv = decode_kv_value(k.value(), v.value())?;
        let revision = kv.mod_revision;
        if log.get(revision).map_err(backend)?.is_some() {
            continue; // still history: the entry is its write
        }
        let kind = if kv.create_revision == revision {
            EventKind::Added
        } else {
            EventKind::Modified
        };
        let entry = encode_event(&Event {
            kind,
            kv,
            prev: None,
        });
        log.insert(revision, entry.as_slice()).map_err(backend)?;
    }
    Ok(())
}

/// The index of what `db` holds, and the entries of its log to remove (see [`Index::rebuild`]).
fn load(db: &Database) -> Result<(Index, Vec<Revision>)> {
    let txn = db.begin_read().map_err(backend)?;
    let (revision, compacted) = EmbeddedStore::read_meta(&txn)?;
    let log = txn.open_table(LOG).map_err(backend)?;
    Index::rebuild(&log, revision, compacted)
}

/// The redb-backed store. Cloning shares the open database (and its writer thread; the file
/// is closed when the last clone is dropped).
#[derive(Clone)]
pub struct EmbeddedStore {
    inner: Arc<Inner>,
    writer: Arc<GroupCommit>,
}

impl fmt::Debug for EmbeddedStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("EmbeddedStore")
            .field("path", &self.inner.path)
            .field("history", &self.inner.history)
            .finish_non_exhaustive()
    }
}

fn backend(e: impl fmt::Display) -> StorageError {
    StorageError::Backend(e.to_string())
}

fn corrupt(what: &str) -> StorageError {
    StorageError::Backend(format!("corrupt embedded store: {what}"))
}

// ---- the store ----

impl EmbeddedStore {
    /// Open (or create) the database file at `path`, creating parent directories. Blocking;
    /// see [`EmbeddedStore::open_async`]. A file can be open once per process.
    pub fn open(path: impl AsRef<Path>, options: EmbeddedOptions) -> Result<Self> {
        let path = path.as_ref().to_path_buf();
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(backend)?;
        }
        let db = Database::create(&path).map_err(backend)?;
        let mut txn = db.begin_write().map_err(backend)?;
        txn.set_durability(Durability::Immediate);
        {
            let mut log = txn.open_table(LOG).map_err(backend)?;
            let mut meta = txn.open_table(META).map_err(backend)?;
            if meta.get(META_REVISION).map_err(backend)?.is_none() {
                meta.insert(META_REVISION, 1).map_err(backend)?;
                meta.insert(META_COMPACTED, 0).map_err(backend)?;
            }
            migrate_kv(&txn, &mut log)?;
            // Stores written before the log was bounded in bytes: count its history once.
            if meta.get(META_LOG_BYTES).map_err(backend)?.is_none() {
                let compacted = meta
                    .get(META_COMPACTED)
                    .map_err(backend)?
                    .map_or(0, |v| v.value());
                let mut bytes = 0i64;
                for entry in log.range((compacted + 1)..).map_err(backend)? {
                    let (_, v) = entry.map_err(backend)?;
                    bytes += i64::try_from(v.value().len()).unwrap_or(i64::MAX);
                }
                meta.insert(META_LOG_BYTES, bytes).map_err(backend)?;
            }
        }
        txn.delete_table(KV).map_err(backend)?;
        txn.commit().map_err(backend)?;
        let (index, dead) = load(&db)?;
        let tx = Fanout::new(options.watch_buffer);
        let inner = Arc::new(Inner {
            db: RwLock::new(Some(db)),
            write_lock: Mutex::new(()),
            tx,
            history: options.history,
            path,
            reopen: AtomicBool::new(false),
            write_failure: Mutex::new(None),
            commits: AtomicU64::new(0),
            revision: AtomicI64::new(index.revision),
            index: RwLock::new(index),
            removals: Mutex::new(dead),
        });
        let committer = Arc::clone(&inner);
        let writer = GroupCommit::start(
            "redb-writer",
            Box::new(move |writes| committer.commit_batch(writes)),
        )?;
        Ok(Self {
            inner,
            writer: Arc::new(writer),
        })
    }

    /// Open the store of the server of `group` in `data_dir` (`file_name`).
    pub fn open_dir(
        data_dir: impl AsRef<Path>,
        group: &str,
        options: EmbeddedOptions,
    ) -> Result<Self> {
        Self::open(data_dir.as_ref().join(file_name(group)), options)
    }

    /// [`EmbeddedStore::open`] on the blocking pool.
    pub async fn open_async(path: impl AsRef<Path>, options: EmbeddedOptions) -> Result<Self> {
        let path = path.as_ref().to_path_buf();
        tokio::task::spawn_blocking(move || Self::open(path, options))
            .await
            .map_err(backend)?
    }

    /// The database file.
    pub fn path(&self) -> &Path {
        &self.inner.path
    }

    /// Runs `f` on the blocking pool with the open database (reopened first if an I/O error
    /// asked for it).
    async fn blocking<T: Send + 'static>(
        &self,
        f: impl FnOnce(&Inner, &Database) -> Result<T> + Send + 'static,
    ) -> Result<T> {
        let inner = Arc::clone(&self.inner);
        tokio::task::spawn_blocking(move || {
            inner.reopen_if_needed()?;
            let db = inner.db.read().unwrap_or_else(PoisonError::into_inner);
            match db.as_ref() {
                Some(db) => f(&inner, db),
                None => Err(StorageError::Backend(
                    "embedded store: the database could not be reopened".into(),
                )),
            }
        })
        .await
        .map_err(backend)?
    }

    /// How many transactions have committed writes since the store was opened: fewer than
    /// the writes when concurrent writes shared commits (group commit).
    pub fn commits(&self) -> u64 {
        self.inner.commits.load(Ordering::Relaxed)
    }

    fn read_meta(txn: &redb::ReadTransaction) -> Result<(Revision, Revision)> {
        let meta = txn.open_table(META).map_err(backend)?;
        let rev = meta
            .get(META_REVISION)
            .map_err(backend)?
            .ok_or_else(|| corrupt("no revision"))?
            .value();
        let compacted = meta
            .get(META_COMPACTED)
            .map_err(backend)?
            .ok_or_else(|| corrupt("no compacted revision"))?
            .value();
        Ok((rev, compacted))
    }
}

impl Storage for EmbeddedStore {
    /// Ready when the revision can be read and, after a write met an I/O error, once a write
    /// commits again: probed with a write that changes nothing (the revision, rewritten).
    async fn ready(&self) -> Result<()> {
        self.blocking(|inner, db| {
            let failure = inner.write_failure().clone();
            let Some(why) = failure else {
                let txn = db.begin_read().map_err(|e| inner.db_err(e))?;
                return Self::read_meta(&txn).map(|_| ());
            };
            let _guard = inner
                .write_lock
                .lock()
                .unwrap_or_else(PoisonError::into_inner);
            let probe = || -> Result<()> {
                let mut txn = db.begin_write().map_err(|e| inner.db_err(e))?;
                txn.set_durability(Durability::Immediate);
                {
                    let mut meta = txn.open_table(META).map_err(|e| inner.db_err(e))?;
                    let revision = meta
                        .get(META_REVISION)
                        .map_err(|e| inner.db_err(e))?
                        .map(|v| v.value());
                    if let Some(revision) = revision {
                        meta.insert(META_REVISION, revision)
                            .map_err(|e| inner.db_err(e))?;
                    }
                }
                txn.commit().map_err(|e| inner.db_err(e))
            };
            match probe() {
                Ok(()) => {
                    inner.write_committed();
                    Ok(())
                }
                Err(_) => Err(StorageError::Unavailable(format!("writes fail: {why}"))),
            }
        })
        .await
    }

    async fn current_revision(&self) -> Result<Revision> {
        Ok(self.inner.revision.load(Ordering::SeqCst))
    }

    async fn compacted_revision(&self) -> Result<Revision> {
        self.blocking(|inner, db| {
            let txn = db.begin_read().map_err(|e| inner.db_err(e))?;
            Ok(Self::read_meta(&txn)?.1)
        })
        .await
    }

    async fn get(&self, key: &str) -> Result<Option<KeyValue>> {
        let key = key.to_owned();
        self.blocking(move |inner, db| {
            let (at, txn) = inner.view(db, |index| index.get(&key))?;
            let Some(at) = at else { return Ok(None) };
            let log = txn.open_table(LOG).map_err(|e| inner.db_err(e))?;
            inner.value_at(&log, &key, at).map(Some)
        })
        .await
    }

    async fn list(&self, prefix: &str, options: ListOptions) -> Result<ListResult> {
        let prefix = prefix.to_owned();
        self.blocking(move |inner, db| {
            let limit = options.limit.filter(|&l| l > 0).unwrap_or(usize::MAX);
            // At the current revision, the page from the index (and a count of the rest); at
            // a past one, every live key under the prefix, to be rewound.
            let ((current, keys, remaining), txn) = inner.view(db, |index| {
                let past = options.revision.is_some_and(|r| r != index.revision);
                let start = if past {
                    None
                } else {
                    options.start_key.as_deref()
                };
                let keys = index.range(&prefix, start);
                let total = if past { 0 } else { keys.clone().count() };
                let take = if past { usize::MAX } else { limit };
                let page: Vec<(String, Entry)> =
                    keys.take(take).map(|(k, e)| (k.clone(), *e)).collect();
                let remaining = total.saturating_sub(page.len()) as u64;
                (index.revision, page, remaining)
            })?;
            let log = txn.open_table(LOG).map_err(|e| inner.db_err(e))?;
            let values = keys.into_iter().map(|(k, at)| inner.value_at(&log, &k, at));
            let revision = options.revision.unwrap_or(current);
            if revision == current {
                return Ok(ListResult {
                    items: values.collect::<Result<_>>()?,
                    revision,
                    remaining,
                });
            }
            let (_, compacted) = Self::read_meta(&txn)?;
            check_read_revision(revision, current, compacted)?;
            let mut snapshot = values
                .map(|kv| kv.map(|kv| (kv.key.clone(), kv)))
                .collect::<Result<std::collections::BTreeMap<_, _>>>()?;
            let mut newer = Vec::new();
            for entry in log
                .range((revision + 1)..=current)
                .map_err(|e| inner.db_err(e))?
                .rev()
            {
                let (_, v) = entry.map_err(|e| inner.db_err(e))?;
                newer.push(decode_event(v.value())?);
            }
            rewind(&mut snapshot, &prefix, newer.iter());
            let lower = lower_bound(&prefix, options.start_key.as_deref());
            let (items, remaining) = paginate(
                snapshot
                    .range::<str, _>((lower, Bound::Unbounded))
                    .map(|(_, kv)| kv),
                options.limit,
            );
            Ok(ListResult {
                items,
                revision,
                remaining,
            })
        })
        .await
    }

    async fn create(&self, key: &str, value: Bytes) -> Result<KeyValue> {
        self.writer
            .write(Write::new(key, Change::Create(value)))
            .await?
            .created()
    }

    async fn update(
        &self,
        key: &str,
        value: Bytes,
        expected_mod_revision: Revision,
    ) -> Result<UpdateResult> {
        self.writer
            .write(Write::new(
                key,
                Change::Update(value, expected_mod_revision),
            ))
            .await?
            .updated()
    }

    async fn delete(
        &self,
        key: &str,
        expected_mod_revision: Option<Revision>,
    ) -> Result<DeleteResult> {
        self.writer
            .write(Write::new(key, Change::Delete(expected_mod_revision)))
            .await?
            .deleted()
    }

    async fn watch(&self, prefix: &str, after_revision: Revision) -> Result<Watcher> {
        // Subscribe first, then read the history: anything committed in between is in both
        // and deduplicated by revision.
        let rx = self.inner.tx.subscribe(prefix);
        let p = prefix.to_owned();
        let (replay, through) = self
            .blocking(move |inner, db| {
                let txn = db.begin_read().map_err(|e| inner.db_err(e))?;
                let (current, compacted) = Self::read_meta(&txn)?;
                if after_revision < compacted {
                    return Err(StorageError::Gone {
                        requested: after_revision,
                        compacted,
                    });
                }
                let log = txn.open_table(LOG).map_err(|e| inner.db_err(e))?;
                let mut replay = Vec::new();
                for entry in log
                    .range((after_revision.saturating_add(1))..)
                    .map_err(|e| inner.db_err(e))?
                {
                    let (_, v) = entry.map_err(|e| inner.db_err(e))?;
                    let ev = decode_event(v.value())?;
                    if ev.key().starts_with(p.as_str()) {
                        replay.push(Arc::new(ev));
                    }
                }
                Ok((replay, current.max(after_revision)))
            })
            .await?;
        Ok(watch_stream(replay, through, rx))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_names_follow_the_group() {
        assert_eq!(file_name("wardle.example.com"), "wardle.redb");
        assert_eq!(file_name("widgets.example.com"), "widgets.redb");
        assert_eq!(file_name("apps"), "apps.redb");
        assert_eq!(file_name(""), "core.redb");
    }

    fn open(dir: &Path, revisions: u64) -> EmbeddedStore {
        let options = EmbeddedOptions {
            history: History {
                revisions,
                ..History::default()
            },
            ..EmbeddedOptions::default()
        };
        EmbeddedStore::open(dir.join("t.redb"), options).unwrap()
    }

    /// The revisions `log` holds, read from the closed file.
    fn log_revisions(dir: &Path) -> Vec<Revision> {
        let db = Database::create(dir.join("t.redb")).unwrap();
        let txn = db.begin_read().unwrap();
        let log = txn.open_table(LOG).unwrap();
        log.iter().unwrap().map(|e| e.unwrap().0.value()).collect()
    }

    fn value(s: &str) -> Bytes {
        Bytes::copy_from_slice(s.as_bytes())
    }

    #[tokio::test]
    async fn live_values_outlive_compaction_and_the_rest_of_the_log_goes() {
        let dir = tempfile::tempdir().unwrap();
        let s = open(dir.path(), 3);
        let old = s.create("/r/old", value("kept")).await.unwrap();
        let gone = s.create("/r/gone", value("x")).await.unwrap();
        for i in 0..20 {
            s.create(&format!("/r/k{i}"), value("v")).await.unwrap();
        }
        s.delete("/r/gone", None).await.unwrap();
        for i in 0..20 {
            let kv = s.get(&format!("/r/k{i}")).await.unwrap().unwrap();
            s.update(&kv.key, value("w"), kv.mod_revision)
                .await
                .unwrap();
        }
        // Compaction passed every write above but the last three.
        assert!(s.compacted_revision().await.unwrap() > gone.mod_revision + 20);
        assert_eq!(s.get("/r/old").await.unwrap(), Some(old.clone()));
        assert_eq!(s.get("/r/gone").await.unwrap(), None);
        let listed = s.list("/r/", ListOptions::default()).await.unwrap();
        assert_eq!(listed.items.len(), 21);
        assert!(
            listed
                .items
                .iter()
                .filter(|kv| kv.key != "/r/old")
                .all(|kv| kv.value == "w")
        );
        // One more commit removes what the last one left behind.
        s.create("/r/last", value("v")).await.unwrap();
        let current = s.current_revision().await.unwrap();
        drop(s);
        let kept = log_revisions(dir.path());
        // The 22 live values and the history: no older write, no deletion.
        assert!(kept.len() <= 22 + 3, "{kept:?}");
        assert!(kept.contains(&old.mod_revision));
        assert!(!kept.contains(&gone.mod_revision), "{kept:?}");
        // Reopened, the index is rebuilt from the log.
        let s = open(dir.path(), 3);
        assert_eq!(s.current_revision().await.unwrap(), current);
        assert_eq!(s.get("/r/old").await.unwrap(), Some(old));
        let again = s.list("/r/", ListOptions::default()).await.unwrap();
        assert_eq!(again.items.len(), 22);
        assert!(
            s.get("/r/gone").await.unwrap().is_none(),
            "a deletion stays deleted"
        );
    }

    /// Readers racing writers that rewrite the same keys while compaction passes them every
    /// commit: a read holds the index as of some commit and must find every value it points
    /// at (an entry is removed only by the commit after the one that left it behind).
    #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
    async fn reads_racing_rewrites_and_compaction_always_find_their_values() {
        let dir = tempfile::tempdir().unwrap();
        let s = open(dir.path(), 2);
        for k in 0..8 {
            s.create(&format!("/r/{k}"), value("0")).await.unwrap();
        }
        let writers: Vec<_> = (0..8)
            .map(|k| {
                let s = s.clone();
                tokio::spawn(async move {
                    let key = format!("/r/{k}");
                    for i in 1..150 {
                        let kv = s.get(&key).await.unwrap().unwrap();
                        s.update(&key, value(&i.to_string()), kv.mod_revision)
                            .await
                            .unwrap();
                    }
                })
            })
            .collect();
        let readers: Vec<_> = (0..4)
            .map(|_| {
                let s = s.clone();
                tokio::spawn(async move {
                    for _ in 0..300 {
                        let listed = s.list("/r/", ListOptions::default()).await.unwrap();
                        assert_eq!(listed.items.len(), 8);
                        for kv in &listed.items {
                            assert!(kv.mod_revision <= listed.revision);
                        }
                        assert!(s.get("/r/3").await.unwrap().is_some());
                    }
                })
            })
            .collect();
        for t in writers.into_iter().chain(readers) {
            t.await.unwrap();
        }
        let listed = s.list("/r/", ListOptions::default()).await.unwrap();
        assert!(listed.items.iter().all(|kv| kv.value == "149"));
    }

    #[tokio::test]
    async fn a_store_with_a_kv_table_is_migrated_when_it_opens() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.redb");
        // The former layout: live values in `kv`; `log` holds the history after revision 3.
        {
            let db = Database::create(&path).unwrap();
            let txn = db.begin_write().unwrap();
            {
                let mut kv = txn.open_table(KV).unwrap();
                let mut log = txn.open_table(LOG).unwrap();
                let mut meta = txn.open_table(META).unwrap();
                let raw = |c: Revision, m: Revision, v: &[u8]| {
                    let mut out = c.to_le_bytes().to_vec();
                    out.extend_from_slice(&m.to_le_bytes());
                    out.extend_from_slice(v);
                    out
                };
                kv.insert("/r/a", raw(2, 2, b"a").as_slice()).unwrap();
                kv.insert("/r/b", raw(3, 5, b"b2").as_slice()).unwrap();
                let b2 = Event {
                    kind: EventKind::Modified,
                    kv: KeyValue {
                        key: "/r/b".into(),
                        value: value("b2"),
                        create_revision: 3,
                        mod_revision: 5,
                    },
                    prev: None,
                };
                log.insert(5, encode_event(&b2).as_slice()).unwrap();
                meta.insert(META_REVISION, 5).unwrap();
                meta.insert(META_COMPACTED, 3).unwrap();
                meta.insert(META_LOG_BYTES, 10).unwrap();
            }
            txn.commit().unwrap();
        }
        let s = open(dir.path(), 100);
        let a = s.get("/r/a").await.unwrap().unwrap();
        assert_eq!(
            (a.value, a.create_revision, a.mod_revision),
            (value("a"), 2, 2)
        );
        let b = s.get("/r/b").await.unwrap().unwrap();
        assert_eq!(
            (b.value, b.create_revision, b.mod_revision),
            (value("b2"), 3, 5)
        );
        // The history is as it was: a watch after the compacted revision replays revision 5
        // only (the migrated value of revision 2 is below it).
        let mut w = s.watch("/r/", 3).await.unwrap();
        assert_eq!(w.next().await.unwrap().unwrap().revision(), 5);
        let updated = s.update("/r/a", value("a2"), 2).await.unwrap();
        assert_eq!(updated.kv.mod_revision, 6);
        drop((w, s));
        let db = Database::create(&path).unwrap();
        let txn = db.begin_read().unwrap();
        assert!(txn.open_table(KV).is_err(), "kv is dropped");
    }
}
