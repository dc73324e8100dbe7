//! The embedded on-disk backend (the default), on [redb]: ACID, copy-on-write B-trees, MVCC
//! readers that never block the writer, one file.
//!
//! Tables:
//! * `kv`: key -> `create_revision (i64 LE) | mod_revision (i64 LE) | value`;
//! * `log`: revision -> event (kind, key, value, revisions, previous key-value), kept for the
//!   last `history.revisions` revisions, within `history.bytes`, and compacted as new ones are
//!   written;
//! * `meta`: `revision` (current), `compacted`, and `log_bytes` (the bytes of `log`'s events).
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
//! the file before its next call, and reads go on. Writes keep failing while the cause lasts;
//! [`Storage::ready`] reports the failure (probing with a write that changes nothing) until a
//! write commits again.

use std::fmt;
use std::ops::Bound;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError, RwLock};

use super::fanout::{Fanout, WatchBuffer};
use super::group_commit::{Change, GroupCommit, Write, Written};
use super::history::{History, check_read_revision, lower_bound, rewind, watch_stream};
use super::{
    DeleteResult, Event, EventKind, KeyValue, ListOptions, ListResult, Result, Revision, Storage,
    StorageError, UpdateResult, Watcher,
};
use bytes::Bytes;
use redb::{Database, Durability, ReadableTable, TableDefinition};

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
        *db = Some(reopened);
        self.reopen.store(false, Ordering::SeqCst);
        tracing::warn!(path = %self.path.display(), "embedded store: database reopened");
        Ok(())
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
        let mut answers = Vec::with_capacity(writes.len());
        let mut events = Vec::new();
        {
            let mut kv = txn.open_table(KV).map_err(|e| self.db_err(e))?;
            let mut log = txn.open_table(LOG).map_err(|e| self.db_err(e))?;
            let mut meta = txn.open_table(META).map_err(|e| self.db_err(e))?;
            let mut revision = meta
                .get(META_REVISION)
                .map_err(|e| self.db_err(e))?
                .ok_or_else(|| corrupt("no revision"))?
                .value();
            let len = |n: usize| i64::try_from(n).unwrap_or(i64::MAX);
            let mut log_bytes = meta
                .get(META_LOG_BYTES)
                .map_err(|e| self.db_err(e))?
                .map_or(0, |v| v.value());
            for write in writes {
                let key = write.key.as_str();
                let current = match kv.get(key).map_err(|e| self.db_err(e))? {
                    Some(raw) => decode_kv_value(key, raw.value()).map(Some),
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
                    match event.kind {
                        EventKind::Deleted => {
                            kv.remove(key).map_err(|e| self.db_err(e))?;
                        }
                        EventKind::Added | EventKind::Modified => {
                            let raw = encode_kv_value(
                                event.kv.create_revision,
                                event.kv.mod_revision,
                                &event.kv.value,
                            );
                            kv.insert(key, raw.as_slice()).map_err(|e| self.db_err(e))?;
                        }
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
                // Nothing to write: no commit, no fsync.
                drop((kv, log, meta));
                txn.abort().map_err(|e| self.db_err(e))?;
                return Ok(answers);
            }
            let mut compacted = meta
                .get(META_COMPACTED)
                .map_err(|e| self.db_err(e))?
                .ok_or_else(|| corrupt("no compacted revision"))?
                .value();
            // Compact by count, and by bytes down to the newest event.
            let keep_after = self.history.keep_after(revision);
            let max_bytes = len(self.history.bytes);
            loop {
                let oldest = log
                    .first()
                    .map_err(|e| self.db_err(e))?
                    .map(|(k, v)| (k.value(), v.value().len()));
                match oldest {
                    Some((k, n)) if k <= keep_after || (log_bytes > max_bytes && k < revision) => {
                        log.remove(k).map_err(|e| self.db_err(e))?;
                        log_bytes -= len(n);
                        compacted = compacted.max(k);
                    }
                    _ => break,
                }
            }
            compacted = compacted.max(keep_after);
            meta.insert(META_LOG_BYTES, log_bytes)
                .map_err(|e| self.db_err(e))?;
            meta.insert(META_REVISION, revision)
                .map_err(|e| self.db_err(e))?;
            meta.insert(META_COMPACTED, compacted)
                .map_err(|e| self.db_err(e))?;
        }
        txn.commit().map_err(|e| self.db_err(e))?;
        if let Some(last) = events.last() {
            self.revision.store(last.revision(), Ordering::SeqCst);
        }
        self.commits.fetch_add(1, Ordering::Relaxed);
        self.write_committed();
        // Still under the write lock: watchers get events in revision order.
        for event in events {
            self.tx.send(&Arc::new(event));
        }
        Ok(answers)
    }
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

// ---- value and event encoding ----

fn encode_kv_value(create: Revision, modr: Revision, value: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(16 + value.len());
    out.extend_from_slice(&create.to_le_bytes());
    out.extend_from_slice(&modr.to_le_bytes());
    out.extend_from_slice(value);
    out
}

fn decode_kv_value(key: &str, raw: &[u8]) -> Result<KeyValue> {
    if raw.len() < 16 {
        return Err(corrupt("short kv value"));
    }
    let (c, rest) = raw.split_at(8);
    let (m, value) = rest.split_at(8);
    Ok(KeyValue {
        key: key.to_owned(),
        value: Bytes::copy_from_slice(value),
        create_revision: i64::from_le_bytes(c.try_into().map_err(|_| corrupt("revision"))?),
        mod_revision: i64::from_le_bytes(m.try_into().map_err(|_| corrupt("revision"))?),
    })
}

fn put_bytes(out: &mut Vec<u8>, b: &[u8]) {
    out.extend_from_slice(&(b.len() as u64).to_le_bytes());
    out.extend_from_slice(b);
}

fn put_kv(out: &mut Vec<u8>, kv: &KeyValue) {
    put_bytes(out, kv.key.as_bytes());
    out.extend_from_slice(&kv.create_revision.to_le_bytes());
    out.extend_from_slice(&kv.mod_revision.to_le_bytes());
    put_bytes(out, &kv.value);
}

fn encode_event(ev: &Event) -> Vec<u8> {
    let mut out = Vec::with_capacity(64 + ev.kv.value.len());
    out.push(match ev.kind {
        EventKind::Added => 1,
        EventKind::Modified => 2,
        EventKind::Deleted => 3,
    });
    put_kv(&mut out, &ev.kv);
    match &ev.prev {
        Some(prev) => {
            out.push(1);
            put_kv(&mut out, prev);
        }
        None => out.push(0),
    }
    out
}

struct Reader<'a>(&'a [u8]);

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8]> {
        if self.0.len() < n {
            return Err(corrupt("truncated event"));
        }
        let (a, b) = self.0.split_at(n);
        self.0 = b;
        Ok(a)
    }
    fn u8(&mut self) -> Result<u8> {
        Ok(self.take(1)?[0])
    }
    fn i64(&mut self) -> Result<i64> {
        let b = self.take(8)?;
        Ok(i64::from_le_bytes(
            b.try_into().map_err(|_| corrupt("int"))?,
        ))
    }
    fn bytes(&mut self) -> Result<&'a [u8]> {
        let n = usize::try_from(self.i64()?).map_err(|_| corrupt("length"))?;
        self.take(n)
    }
    fn kv(&mut self) -> Result<KeyValue> {
        let key = std::str::from_utf8(self.bytes()?).map_err(|_| corrupt("key utf-8"))?;
        let create_revision = self.i64()?;
        let mod_revision = self.i64()?;
        let value = Bytes::copy_from_slice(self.bytes()?);
        Ok(KeyValue {
            key: key.to_owned(),
            value,
            create_revision,
            mod_revision,
        })
    }
}

fn decode_event(raw: &[u8]) -> Result<Event> {
    let mut r = Reader(raw);
    let kind = match r.u8()? {
        1 => EventKind::Added,
        2 => EventKind::Modified,
        3 => EventKind::Deleted,
        _ => return Err(corrupt("event kind")),
    };
    let kv = r.kv()?;
    let prev = match r.u8()? {
        0 => None,
        1 => Some(r.kv()?),
        _ => return Err(corrupt("event prev flag")),
    };
    if !r.0.is_empty() {
        return Err(corrupt("trailing event bytes"));
    }
    Ok(Event { kind, kv, prev })
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
        let revision;
        let mut txn = db.begin_write().map_err(backend)?;
        txn.set_durability(Durability::Immediate);
        {
            txn.open_table(KV).map_err(backend)?;
            let log = txn.open_table(LOG).map_err(backend)?;
            let mut meta = txn.open_table(META).map_err(backend)?;
            if meta.get(META_REVISION).map_err(backend)?.is_none() {
                meta.insert(META_REVISION, 1).map_err(backend)?;
                meta.insert(META_COMPACTED, 0).map_err(backend)?;
            }
            revision = meta
                .get(META_REVISION)
                .map_err(backend)?
                .map_or(1, |v| v.value());
            // Stores written before the log was bounded in bytes: count it once.
            if meta.get(META_LOG_BYTES).map_err(backend)?.is_none() {
                let mut bytes = 0i64;
                for entry in log.iter().map_err(backend)? {
                    let (_, v) = entry.map_err(backend)?;
                    bytes += i64::try_from(v.value().len()).unwrap_or(i64::MAX);
                }
                meta.insert(META_LOG_BYTES, bytes).map_err(backend)?;
            }
        }
        txn.commit().map_err(backend)?;
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
            revision: AtomicI64::new(revision),
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
            let txn = db.begin_read().map_err(|e| inner.db_err(e))?;
            let kv = txn.open_table(KV).map_err(|e| inner.db_err(e))?;
            match kv.get(key.as_str()).map_err(|e| inner.db_err(e))? {
                Some(raw) => Ok(Some(decode_kv_value(&key, raw.value())?)),
                None => Ok(None),
            }
        })
        .await
    }

    async fn list(&self, prefix: &str, options: ListOptions) -> Result<ListResult> {
        let prefix = prefix.to_owned();
        self.blocking(move |inner, db| {
            let txn = db.begin_read().map_err(|e| inner.db_err(e))?;
            let (current, compacted) = Self::read_meta(&txn)?;
            let revision = options.revision.unwrap_or(current);
            check_read_revision(revision, current, compacted)?;
            let kv = txn.open_table(KV).map_err(|e| inner.db_err(e))?;
            let limit = options.limit.filter(|&l| l > 0).unwrap_or(usize::MAX);
            let mut items = Vec::new();
            let mut remaining = 0u64;
            if revision == current {
                let lower = lower_bound(&prefix, options.start_key.as_deref());
                for entry in kv
                    .range::<&str>((lower, Bound::Unbounded))
                    .map_err(|e| inner.db_err(e))?
                {
                    let (k, v) = entry.map_err(|e| inner.db_err(e))?;
                    let k = k.value();
                    if !k.starts_with(prefix.as_str()) {
                        break;
                    }
                    if items.len() < limit {
                        items.push(decode_kv_value(k, v.value())?);
                    } else {
                        remaining += 1;
                    }
                }
            } else {
                let mut snapshot = std::collections::BTreeMap::new();
                for entry in kv
                    .range::<&str>((Bound::Included(prefix.as_str()), Bound::Unbounded))
                    .map_err(|e| inner.db_err(e))?
                {
                    let (k, v) = entry.map_err(|e| inner.db_err(e))?;
                    let k = k.value();
                    if !k.starts_with(prefix.as_str()) {
                        break;
                    }
                    snapshot.insert(k.to_owned(), decode_kv_value(k, v.value())?);
                }
                let log = txn.open_table(LOG).map_err(|e| inner.db_err(e))?;
                let mut newer = Vec::new();
                for entry in log
                    .range((revision + 1)..)
                    .map_err(|e| inner.db_err(e))?
                    .rev()
                {
                    let (_, v) = entry.map_err(|e| inner.db_err(e))?;
                    newer.push(decode_event(v.value())?);
                }
                rewind(&mut snapshot, &prefix, newer.iter());
                let lower = lower_bound(&prefix, options.start_key.as_deref());
                for (_, kv) in snapshot.range::<str, _>((lower, Bound::Unbounded)) {
                    if items.len() < limit {
                        items.push(kv.clone());
                    } else {
                        remaining += 1;
                    }
                }
            }
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

    #[test]
    fn event_encoding_round_trips() {
        let kv = |k: &str, v: &'static [u8], c, m| KeyValue {
            key: k.into(),
            value: Bytes::from_static(v),
            create_revision: c,
            mod_revision: m,
        };
        for ev in [
            Event {
                kind: EventKind::Added,
                kv: kv("/a", b"x", 2, 2),
                prev: None,
            },
            Event {
                kind: EventKind::Deleted,
                kv: kv("/a", b"", 2, 4),
                prev: Some(kv("/a", b"\xd9\xd9\xf7\xa0", 2, 3)),
            },
        ] {
            assert_eq!(decode_event(&encode_event(&ev)).unwrap(), ev);
        }
        assert!(decode_event(&[1, 0]).is_err());
        assert!(decode_kv_value("k", &[0; 15]).is_err());
    }
}
