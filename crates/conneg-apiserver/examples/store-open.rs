//! What opening the embedded store costs as it grows: it rebuilds its key index from the
//! whole log (`storage/embedded/`). Writes KEYS values of BYTES each (from 64 concurrent
//! writers, so group commit shares the commits), updates a tenth of them, closes the store,
//! and times three opens of the same file.
//!
//! ```sh
//! cargo run --release -p conneg-apiserver --example store-open -- [KEYS (100000)] [BYTES (1024)]
//! ```

use std::time::Instant;

use bytes::Bytes;
use conneg_apiserver::storage::{EmbeddedOptions, EmbeddedStore, Storage};

const WRITERS: usize = 64;

#[tokio::main]
async fn main() {
    let mut args = std::env::args().skip(1);
    let keys: usize = args.next().map_or(100_000, |a| a.parse().expect("KEYS"));
    let bytes: usize = args.next().map_or(1024, |a| a.parse().expect("BYTES"));
    let dir = tempfile::tempdir().expect("a temporary directory");
    let path = dir.path().join("store-open.redb");
    let store = EmbeddedStore::open(&path, EmbeddedOptions::default()).expect("open");
    let value = Bytes::from(vec![b'x'; bytes]);
    let started = Instant::now();
    let tasks: Vec<_> = (0..WRITERS)
        .map(|w| {
            let (store, value) = (store.clone(), value.clone());
            tokio::spawn(async move {
                for i in (w..keys).step_by(WRITERS) {
                    let kv = store
                        .create(&format!("/registry/things/ns/thing-{i:08}"), value.clone())
                        .await
                        .expect("create");
                    if i % 10 == 0 {
                        let mut changed = value.to_vec();
                        changed[0] = b'y';
                        store
                            .update(&kv.key, Bytes::from(changed), kv.mod_revision)
                            .await
                            .expect("update");
                    }
                }
            })
        })
        .collect();
    for t in tasks {
        t.await.expect("a writer");
    }
    let wrote = started.elapsed();
    let revision = store.current_revision().await.expect("revision");
    drop(store);
    let file = std::fs::metadata(&path).map_or(0, |m| m.len());
    println!(
        "wrote {keys} keys of {bytes} bytes ({revision} revisions) in {wrote:.2?}; file {:.1} MiB",
        file as f64 / f64::from(1 << 20)
    );
    for _ in 0..3 {
        let started = Instant::now();
        let store = EmbeddedStore::open(&path, EmbeddedOptions::default()).expect("reopen");
        let opened = started.elapsed();
        assert_eq!(store.current_revision().await.expect("revision"), revision);
        println!("open: {opened:.2?}");
    }
}
