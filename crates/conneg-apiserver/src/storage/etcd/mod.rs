//! The etcd backend (`--etcd-servers`, crate feature `etcd`, on by default): etcd v3 is the
//! one source of truth, so any number of replicas can serve the same objects. Without the
//! feature only the options are here (the flags keep their meaning) and a server refuses
//! `--etcd-servers`.
//!
//! The store (`EtcdStore`, `store.rs`) speaks etcd's v3 gRPC API through `client.rs` (one
//! tonic channel per member) with the messages of `wire.rs`, declared by hand with prost's
//! derive: no `.proto` compilation, no `protoc`, no build script.
//!
//! Mapping of the [`Storage`](super::Storage) interface onto etcd's API:
//!
//! * Revisions are etcd's: a key's `mod_revision` is the object's `resourceVersion`, a range's
//!   header revision is a list's.
//! * `create` is a transaction on `create_revision(key) == 0`; `update` and `delete` with a
//!   precondition are transactions on `mod_revision(key) == expected`. A failed compare reads
//!   the key in the same transaction, so `NotFound` and `Conflict` are told apart without a
//!   second round trip.
//! * `update` reads the key first and writes nothing when the new bytes equal the stored bytes
//!   (as the other backends). The comparison is against the bytes the server would write now,
//!   so an object stored as JSON by an older server (or by hand) is rewritten as CBOR when a
//!   client writes it back unchanged.
//! * `list` is one range request `[start_key, prefix_end)` with etcd's `limit` and `revision`;
//!   `remaining` comes from the range's `count`.
//! * `watch` is an etcd watch with `start_revision = after + 1` and `prev_kv`; a put whose
//!   `create_revision` equals its `mod_revision` is ADDED, other puts MODIFIED.
//! * etcd's "required revision has been compacted" is `StorageError::Gone` (HTTP 410) and
//!   "required revision is a future revision" `StorageError::FutureRevision`.
//! * Compaction: etcd has no query for its compacted revision, so, as Kubernetes does, the
//!   server owns the compactor. Every `compaction_interval` each replica proposes to compact
//!   to `current - history`; the proposal is a compare-and-swap on the key
//!   `<prefix>/compact_rev_key` (value: the revision in decimal), so one replica wins each
//!   round and every replica can read the compacted revision back.
//!
//! Failure behaviour: every etcd call is bounded by `request_timeout` (5 s by default) per
//! member tried; an unreachable etcd gives `StorageError::Unavailable` (HTTP 503), no answer
//! in time `StorageError::Timeout` (HTTP 504). There is one gRPC client per endpoint; calls
//! go to the current endpoint and, when it fails at the transport level, move on to the next
//! (reads always, writes only if they surely never left). A failed endpoint's client is
//! rebuilt before its next use, so service resumes as soon as etcd answers again. A watch whose
//! etcd stream breaks ends with an error; the client watches again from its last revision.

#[cfg(feature = "etcd")]
mod client;
#[cfg(feature = "etcd")]
mod store;
#[cfg(feature = "etcd")]
mod wire;

use std::time::Duration;

use super::DEFAULT_HISTORY;

#[cfg(feature = "etcd")]
pub(crate) use client::WatchRequests;
#[cfg(feature = "etcd")]
pub use store::EtcdStore;

/// Kubernetes' default `--etcd-prefix`.
pub(crate) const DEFAULT_ETCD_PREFIX: &str = "/registry";

/// How long one etcd call may take before it fails with `StorageError::Timeout`.
pub(crate) const DEFAULT_REQUEST_TIMEOUT: Duration = Duration::from_secs(5);

/// How often the compactor runs (Kubernetes' `--etcd-compaction-interval` default).
pub(crate) const DEFAULT_COMPACTION_INTERVAL: Duration = Duration::from_secs(300);

/// The name of the key, under the key prefix, that records the last compaction.
pub(crate) const COMPACT_KEY_NAME: &str = "compact_rev_key";

/// Options of the etcd store.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EtcdOptions {
    /// etcd client URLs (`http://host:port`).
    pub endpoints: Vec<String>,
    /// The key recording compactions (`<key prefix>/compact_rev_key`).
    pub compact_key: String,
    /// Bound of every etcd call.
    pub request_timeout: Duration,
    /// How often to compact; zero: never (someone else compacts).
    pub compaction_interval: Duration,
    /// Revisions kept when compacting.
    pub history: u64,
    /// TLS to etcd (`https://` endpoints).
    pub tls: Option<EtcdTls>,
}

/// TLS to etcd, as kube-apiserver's `--etcd-cafile`, `--etcd-certfile`, `--etcd-keyfile`.
/// The files are read each time a client is built, so a rotated client certificate is used
/// from the next reconnection on.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct EtcdTls {
    /// CA bundle (PEM) that etcd's serving certificate must chain to.
    pub ca_file: Option<std::path::PathBuf>,
    /// Client certificate (PEM), for etcd's `--client-cert-auth`; with `key_file`.
    pub cert_file: Option<std::path::PathBuf>,
    /// The client certificate's key (PEM).
    pub key_file: Option<std::path::PathBuf>,
}

impl EtcdOptions {
    /// Options for `endpoints` with keys under `key_prefix`, defaults otherwise.
    pub fn new(endpoints: Vec<String>, key_prefix: &str) -> Self {
        Self {
            endpoints,
            compact_key: format!("{}/{COMPACT_KEY_NAME}", key_prefix.trim_end_matches('/')),
            request_timeout: DEFAULT_REQUEST_TIMEOUT,
            compaction_interval: DEFAULT_COMPACTION_INTERVAL,
            history: DEFAULT_HISTORY,
            tls: None,
        }
    }
}
