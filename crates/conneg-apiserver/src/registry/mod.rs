//! The generic registry: what every kind's objects go through between the endpoints and
//! storage, written once (Kubernetes' `registry/generic/registry.Store`). No HTTP here: the
//! endpoints (`crate::endpoints`) decide what a request asks; the registry reads, creates,
//! updates and deletes objects of any kind (its [`Strategy`]) in their storage version.
//!
//! * [`Registry`]: the storage stack of a server (store, storage codec, key layout) and what
//!   it serves, with the verbs over it: [`Registry::get`], `list_stored` (pages, continue
//!   tokens, revisions), [`Registry::list_all`], [`Registry::create`] (with `generateName`
//!   retries), [`Registry::update`] (one compare-and-swap; the deletion of a finalized object)
//!   and, in `delete`, DELETE with its options, finalizers and preconditions.
//! * `strategy`: the [`Strategy`] trait, what differs between kinds; `status`: the status
//!   subresource of any kind that declares one.
//! * `backoff`: how a write that lost a compare-and-swap race waits before it retries.

pub(crate) mod backoff;
mod counts;
pub(crate) mod delete;
mod error;
mod object;
pub(crate) mod status;
pub(crate) mod strategy;

use conneg::Status;

pub use crate::apply::schema::ApplySchema;
use crate::live::Live;
use crate::meta::ListMeta;
use crate::names;
use crate::resource::{Catalog, GroupVersion, ResourceInfo};
use crate::selector::Selectors;
use crate::storage::codec::StorageCodec;
use crate::storage::keys::Keys;
use crate::storage::{KeyValue, ListOptions, Storage, StorageError, Store, continue_token};
pub use counts::ObjectCounts;
pub use error::Error;
pub use object::Object;
pub use strategy::{Column, ServedVersion, Strategy};

/// The storage stack of a server and what it serves; cheap to clone.
#[derive(Clone, Debug)]
pub struct Registry {
    /// The revisioned key-value store.
    pub store: Store,
    /// The write format.
    pub codec: StorageCodec,
    /// The key layout.
    pub keys: Keys,
    /// What is served now: the group versions and resources.
    pub(crate) catalog: Live<Catalog>,
    /// How many objects each collection held at its last full list.
    pub counts: ObjectCounts,
}

/// How many more names are generated when a generated name is taken.
const GENERATE_NAME_RETRIES: usize = 7;

/// One page of a list.
#[derive(Debug)]
pub(crate) struct Page<K> {
    /// The objects, in key order.
    pub(crate) items: Vec<K>,
    /// List metadata (revision, continue, remaining).
    pub(crate) meta: ListMeta,
}

/// What [`Registry::list_stored`] reads: one page.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct ListRequest<'a> {
    /// At most this many objects (`None`: all).
    pub(crate) limit: Option<usize>,
    /// The continue token of the previous page.
    pub(crate) continue_token: Option<&'a str>,
    /// The revision to read at (`None`: the current one); ignored with a continue token,
    /// which carries its own.
    pub(crate) revision: Option<i64>,
}

/// A storage error on the object `name` of `res`, as the API error Kubernetes answers with.
pub(crate) fn storage_status(e: StorageError, res: &'static ResourceInfo, name: &str) -> Status {
    Error::storage(e, res, name).into()
}

impl Registry {
    /// Whether `version` is served.
    pub fn serves(&self, version: GroupVersion) -> bool {
        self.catalog.get().serves(version)
    }

    /// The key of the object `name` of `res` in `namespace` (`""`: cluster-scoped).
    pub fn key(&self, res: &ResourceInfo, namespace: &str, name: &str) -> String {
        self.keys.object(res, namespace, name)
    }

    /// Stored bytes → the object (defaults applied, resourceVersion from the revision).
    pub fn decode<K: Object>(&self, res: &'static ResourceInfo, kv: &KeyValue) -> Result<K, Error> {
        K::decode_stored(&self.codec, kv).map_err(|e| Error::storage(e, res, ""))
    }

    /// The object → stored bytes, and the object as stored.
    fn encode<K: Object>(
        &self,
        res: &'static ResourceInfo,
        k: K,
    ) -> Result<(bytes::Bytes, K), Error> {
        k.encode_stored(&self.codec)
            .map_err(|e| Error::storage(e, res, ""))
    }

    /// The object at `key` and the revision it was last written at; `None` when there is
    /// none.
    pub async fn get<K: Object>(
        &self,
        res: &'static ResourceInfo,
        key: &str,
        name: &str,
    ) -> Result<Option<(K, i64)>, Error> {
        let Some(kv) = self.get_stored(res, key, name).await? else {
            return Ok(None);
        };
        Ok(Some((self.decode(res, &kv)?, kv.mod_revision)))
    }

    /// [`get`](Self::get) as stored: the bytes, to [`decode`](Self::decode) when needed.
    pub async fn get_stored(
        &self,
        res: &'static ResourceInfo,
        key: &str,
        name: &str,
    ) -> Result<Option<KeyValue>, Error> {
        self.store
            .get(key)
            .await
            .map_err(|e| Error::storage(e, res, name))
    }

    /// Every object of `res` (in `namespace`, or everywhere), at the current revision: what
    /// an admission plugin or a controller reads where Kubernetes would read an informer.
    pub async fn list_all<K: Object>(
        &self,
        res: &'static ResourceInfo,
        namespace: Option<&str>,
    ) -> Result<Vec<K>, Error> {
        let prefix = self.keys.collection(res, namespace);
        let page = self
            .store
            .list(&prefix, ListOptions::default())
            .await
            .map_err(|e| Error::storage(e, res, ""))?;
        page.items.iter().map(|kv| self.decode(res, kv)).collect()
    }

    /// One page of the objects of `res` in `namespace` (or everywhere) that `sel` matches: at
    /// most `req.limit` of them, from `req.continue_token` on, at `req.revision`. Storage is
    /// read until the page is full or the collection ends, so a selective filter still
    /// fills pages. The page's objects are left as storage holds them (their bytes shared
    /// with the watch cache, not copied), for a caller that decodes them one at a time; they
    /// are decoded here only when `sel` needs them, and dropped once matched.
    pub(crate) async fn list_stored<K: Object>(
        &self,
        res: &'static ResourceInfo,
        namespace: Option<&str>,
        req: ListRequest<'_>,
        sel: &Selectors,
    ) -> Result<Page<KeyValue>, Error> {
        let prefix = self.keys.collection(res, namespace);
        let (mut start, mut revision) = match req.continue_token {
            Some(tok) => {
                let (key, rv) = continue_token::decode(tok, &prefix)
                    .map_err(|e| Error::InvalidContinue(e.to_string()))?;
                (Some(key), Some(rv))
            }
            None => (None, req.revision),
        };
        let mut items = Vec::new();
        let mut scanned = 0;
        loop {
            let want = req.limit.map(|l| l - items.len());
            let opts = ListOptions {
                revision,
                start_key: start.take(),
                limit: want,
            };
            let page = match self.store.list(&prefix, opts).await {
                Ok(p) => p,
                Err(StorageError::Gone { .. }) if req.continue_token.is_some() => {
                    return Err(Error::ContinueExpired);
                }
                Err(e) => return Err(Error::storage(e, res, "")),
            };
            scanned += page.items.len();
            for kv in page.items.iter() {
                if sel.is_empty() || sel.matches(self.decode::<K>(res, kv)?.meta()) {
                    items.push(kv.clone());
                }
            }
            revision = Some(page.revision);
            let full = req.limit.is_some_and(|l| items.len() >= l);
            if !page.more() || full {
                if req.continue_token.is_none() {
                    let stored = scanned + usize::try_from(page.remaining).unwrap_or(0);
                    self.counts
                        .record(res.group, res.resource, namespace, stored);
                }
                let mut meta = ListMeta {
                    resource_version: page.revision.to_string(),
                    ..Default::default()
                };
                if page.more() {
                    meta.continue_ = continue_token::for_next_page(&page, &prefix)
                        .map_err(|e| Error::Internal(e.to_string()))?
                        .unwrap_or_default();
                    if sel.is_empty() {
                        meta.remaining_item_count = i64::try_from(page.remaining).ok();
                    }
                }
                return Ok(Page { items, meta });
            }
            start = page.next_start_key();
        }
    }

    /// Creates `k` (its metadata prepared, its name set or generated from `generateName`
    /// when `generated`): a generated name that is taken is generated again (Kubernetes'
    /// `RetryGenerateName`). The answer is the object as stored, with its resourceVersion.
    pub async fn create<K: Object>(
        &self,
        res: &'static ResourceInfo,
        k: K,
        generated: bool,
        dry_run: bool,
    ) -> Result<K, Error> {
        let (namespace, mut name) = (k.meta().namespace.clone(), k.meta().name.clone());
        let mut key = self.key(res, &namespace, &name);
        let (mut bytes, mut stored) = self.encode(res, k)?;
        if dry_run {
            return Ok(stored);
        }
        for attempt in 0.. {
            match self.store.create(&key, bytes.clone()).await {
                Ok(kv) => {
                    stored.meta_mut().resource_version = kv.mod_revision.to_string();
                    break;
                }
                Err(StorageError::AlreadyExists { .. })
                    if generated && attempt < GENERATE_NAME_RETRIES =>
                {
                    name = names::generate_name(&stored.meta().generate_name);
                    stored.meta_mut().name.clone_from(&name);
                    key = self.key(res, &namespace, &name);
                    (bytes, stored) = self.encode(res, stored)?;
                }
                Err(e) => return Err(Error::storage(e, res, &name)),
            }
        }
        Ok(stored)
    }

    /// Writes `new` over `old`, the object stored at `expected` revision; or, when `new` drops
    /// the last finalizer of an object being deleted, deletes it and answers `old` (see
    /// `delete`). `Ok(None)` on a revision conflict (the caller decides: 409 or retry).
    pub async fn update<K: Object>(
        &self,
        res: &'static ResourceInfo,
        key: &str,
        new: K,
        old: &K,
        expected: i64,
        dry_run: bool,
    ) -> Result<Option<K>, Error> {
        if delete::deletes_on_update(&new, old) {
            return self.remove(res, key, old.clone(), expected, dry_run).await;
        }
        let name = new.meta().name.clone();
        let (bytes, mut stored) = self.encode(res, new)?;
        if dry_run {
            stored.meta_mut().resource_version = expected.to_string();
            return Ok(Some(stored));
        }
        match self.store.update(key, bytes, expected).await {
            Ok(r) => {
                stored.meta_mut().resource_version = r.kv.mod_revision.to_string();
                Ok(Some(stored))
            }
            Err(StorageError::Conflict { .. }) => Ok(None),
            Err(e) => Err(Error::storage(e, res, &name)),
        }
    }

    /// Removes `old`, stored at revision `expected`, from storage; the answer is `old` with
    /// the deletion's revision as its resourceVersion (what watchers see in the DELETED
    /// event). `Ok(None)` when the stored object changed or went away meanwhile; the caller
    /// decides (409, or read again: a DELETE that finds the object gone answers 404, so of
    /// two racing DELETEs one succeeds and the other is told the object was not there, as
    /// Kubernetes answers).
    pub(crate) async fn remove<K: Object>(
        &self,
        res: &'static ResourceInfo,
        key: &str,
        mut old: K,
        expected: i64,
        dry_run: bool,
    ) -> Result<Option<K>, Error> {
        if dry_run {
            return Ok(Some(old));
        }
        match self.store.delete(key, Some(expected)).await {
            Ok(r) => {
                old.meta_mut().resource_version = r.revision.to_string();
                Ok(Some(old))
            }
            Err(StorageError::NotFound { .. } | StorageError::Conflict { .. }) => Ok(None),
            Err(e) => Err(Error::storage(e, res, &old.meta().name)),
        }
    }
}
