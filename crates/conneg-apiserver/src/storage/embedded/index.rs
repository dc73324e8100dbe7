//! The embedded store's key index, in memory: each live key's revisions, and so where its
//! value is (the `log` entry of its last write, by revision), as etcd keeps its key index
//! beside the revisions in bbolt. A write then appends to `log` alone, at its end, instead of
//! also rewriting the page of a `kv` table its key lands in; the index is rebuilt from `log`
//! when the store opens.

use std::collections::{BTreeMap, HashMap};
use std::ops::Bound;

use foldhash::quality::RandomState;
use redb::ReadableTable;

use super::encoding::event_head;
use crate::storage::history::lower_bound;
use crate::storage::{EventKind, Result, Revision};

/// Where a live key is: its revisions (its value is the `log` entry at `mod_revision`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Entry {
    pub(super) create_revision: Revision,
    pub(super) mod_revision: Revision,
}

/// Every live key, as of the last commit.
#[derive(Debug, Default)]
pub(super) struct Index {
    /// The revision of the last commit the index has.
    pub(super) revision: Revision,
    entries: BTreeMap<String, Entry>,
}

impl Index {
    pub(super) fn get(&self, key: &str) -> Option<Entry> {
        self.entries.get(key).copied()
    }

    /// The live keys under `prefix`, in order, from `start_key` (inclusive) when given.
    pub(super) fn range<'a>(
        &'a self,
        prefix: &'a str,
        start_key: Option<&'a str>,
    ) -> impl Iterator<Item = (&'a String, &'a Entry)> + Clone + 'a {
        self.entries
            .range::<str, _>((lower_bound(prefix, start_key), Bound::Unbounded))
            .take_while(move |(k, _)| k.starts_with(prefix))
    }

    fn set(&mut self, key: &str, entry: Option<Entry>) {
        match entry {
            Some(e) => {
                if let Some(held) = self.entries.get_mut(key) {
                    *held = e;
                } else {
                    self.entries.insert(key.to_owned(), e);
                }
            }
            None => {
                self.entries.remove(key);
            }
        }
    }

    /// The index with a committed batch's changes, at `revision`.
    pub(super) fn apply(&mut self, changes: Changes, revision: Revision) {
        for (key, entry) in changes.0 {
            self.set(&key, entry);
        }
        self.revision = revision;
    }

    /// The index of the entries of `log` (every entry, oldest first, read for its head), at
    /// `revision`; and the revisions of the entries at or below `compacted` that no live key
    /// points at (to be removed: the store's history no longer holds them).
    pub(super) fn rebuild(
        log: &impl ReadableTable<i64, &'static [u8]>,
        revision: Revision,
        compacted: Revision,
    ) -> Result<(Self, Vec<Revision>)> {
        let backend = |e: redb::StorageError| crate::storage::StorageError::Backend(e.to_string());
        let mut index = Index {
            revision,
            entries: BTreeMap::new(),
        };
        for entry in log.iter().map_err(backend)? {
            let (rev, raw) = entry.map_err(backend)?;
            let head = event_head(raw.value())?;
            let entry = (head.kind != EventKind::Deleted).then_some(Entry {
                create_revision: head.create_revision,
                mod_revision: rev.value(),
            });
            index.set(head.key, entry);
        }
        let mut dead = Vec::new();
        for entry in log.range(..=compacted).map_err(backend)? {
            let (rev, raw) = entry.map_err(backend)?;
            let head = event_head(raw.value())?;
            if index.get(head.key).map(|e| e.mod_revision) != Some(rev.value()) {
                dead.push(rev.value());
            }
        }
        Ok((index, dead))
    }
}

/// What a batch changes of the index, seen over it while the batch is decided: a key the
/// batch wrote is where its last write put it. (Looked up once per write of the batch:
/// hashed with foldhash, not SipHash.)
#[derive(Debug, Default)]
pub(super) struct Changes(HashMap<String, Option<Entry>, RandomState>);

impl Changes {
    /// Where `key` is, with the batch's changes over `index`.
    pub(super) fn get(&self, index: &Index, key: &str) -> Option<Entry> {
        match self.0.get(key) {
            Some(changed) => *changed,
            None => index.get(key),
        }
    }

    pub(super) fn set(&mut self, key: &str, entry: Option<Entry>) {
        if let Some(held) = self.0.get_mut(key) {
            *held = entry;
        } else {
            self.0.insert(key.to_owned(), entry);
        }
    }

    /// Whether the entry at `revision` of `key` holds its live value once the batch commits.
    pub(super) fn is_live(&self, index: &Index, key: &str, revision: Revision) -> bool {
        self.get(index, key).map(|e| e.mod_revision) == Some(revision)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(create_revision: Revision, mod_revision: Revision) -> Option<Entry> {
        Some(Entry {
            create_revision,
            mod_revision,
        })
    }

    #[test]
    fn a_batch_sees_its_own_changes_over_the_index_until_they_are_applied() {
        let mut index = Index::default();
        let mut first = Changes::default();
        first.set("/a", at(2, 2));
        first.set("/b", at(3, 3));
        index.apply(first, 3);
        let mut batch = Changes::default();
        batch.set("/a", at(2, 4));
        batch.set("/b", None);
        batch.set("/c", at(6, 6));
        assert_eq!(batch.get(&index, "/a"), at(2, 4));
        assert_eq!(index.get("/a"), at(2, 2), "the index waits for the commit");
        assert!(batch.is_live(&index, "/a", 4) && !batch.is_live(&index, "/a", 2));
        assert!(!batch.is_live(&index, "/b", 3));
        index.apply(batch, 6);
        assert_eq!(index.revision, 6);
        assert_eq!(index.get("/b"), None);
        let keys: Vec<&str> = index.range("/", None).map(|(k, _)| k.as_str()).collect();
        assert_eq!(keys, ["/a", "/c"]);
        let from_b: Vec<&str> = index
            .range("/", Some("/b"))
            .map(|(k, _)| k.as_str())
            .collect();
        assert_eq!(from_b, ["/c"]);
        assert_eq!(index.range("/c/", None).count(), 0, "a prefix, not a key");
    }
}
