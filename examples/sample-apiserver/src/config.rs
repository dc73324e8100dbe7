//! Command-line storage options, shared by the binary and tests.

use std::path::PathBuf;

use crate::storage::codec::{StorageCodec, StorageMediaType};
use crate::storage::keys::{DEFAULT_PREFIX, Keys};
use crate::storage::{
    DEFAULT_HISTORY, DEFAULT_WATCH_BUFFER, EmbeddedOptions, EmbeddedStore, MemoryStore, Result,
    Store,
};

/// Which backend to use.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum StorageKind {
    /// On disk under `--data-dir` (redb); survives restarts.
    #[default]
    Embedded,
    /// In memory; lost on exit.
    Memory,
}

/// Storage flags.
#[derive(Debug, Clone, PartialEq, Eq, clap::Args)]
pub struct StorageArgs {
    /// Storage backend.
    #[arg(long = "storage", value_enum, default_value_t = StorageKind::Embedded)]
    pub kind: StorageKind,
    /// Directory of the embedded store (file `wardle.redb` inside).
    #[arg(long, default_value = "./data")]
    pub data_dir: PathBuf,
    /// Format of stored objects: `cbor` (deterministic, d9d9f7-prefixed) or `json`. Either is
    /// read regardless.
    #[arg(long, default_value_t = StorageMediaType::Cbor)]
    pub storage_media_type: StorageMediaType,
    /// Revisions of history kept for watches and consistent paging.
    #[arg(long, default_value_t = DEFAULT_HISTORY)]
    pub history: u64,
    /// Events a watcher may fall behind before it is closed.
    #[arg(long, default_value_t = DEFAULT_WATCH_BUFFER)]
    pub watch_buffer: usize,
    /// Key prefix (as `--etcd-prefix` in Kubernetes).
    #[arg(long, default_value = DEFAULT_PREFIX)]
    pub storage_prefix: String,
}

impl Default for StorageArgs {
    fn default() -> Self {
        Self {
            kind: StorageKind::default(),
            data_dir: PathBuf::from("./data"),
            storage_media_type: StorageMediaType::default(),
            history: DEFAULT_HISTORY,
            watch_buffer: DEFAULT_WATCH_BUFFER,
            storage_prefix: DEFAULT_PREFIX.to_owned(),
        }
    }
}

/// An opened storage stack: store, codec and key layout.
#[derive(Debug, Clone)]
pub struct OpenedStorage {
    /// The store.
    pub store: Store,
    /// The codec for new writes (reads recognise both formats).
    pub codec: StorageCodec,
    /// The key layout.
    pub keys: Keys,
}

impl StorageArgs {
    /// Open the configured store.
    pub async fn open(&self) -> Result<OpenedStorage> {
        let store = match self.kind {
            StorageKind::Memory => {
                Store::Memory(MemoryStore::with_limits(self.history, self.watch_buffer))
            }
            StorageKind::Embedded => Store::Embedded(
                EmbeddedStore::open_async(
                    self.data_dir.join(crate::storage::embedded::DB_FILE_NAME),
                    EmbeddedOptions {
                        history: self.history,
                        watch_buffer: self.watch_buffer,
                    },
                )
                .await?,
            ),
        };
        Ok(OpenedStorage {
            store,
            codec: StorageCodec::new(self.storage_media_type),
            keys: Keys::new(&self.storage_prefix),
        })
    }
}
