//! Durability: a writer process killed with SIGKILL loses no acknowledged write, whether it
//! writes one at a time or with many concurrent writers whose writes share commits.
//!
//! The test binary runs itself as the child (`child_writer` or `child_concurrent_writers`, a
//! no-op unless the environment variable below is set), reads its acknowledgements from stdout,
//! kills it mid-stream and reopens the store.

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use bytes::Bytes;
use conneg_apiserver::storage::{EmbeddedOptions, EmbeddedStore, History, Storage};

const CHILD_DIR_ENV: &str = "SAMPLE_APISERVER_CRASH_CHILD_DIR";
/// How many concurrent writers `child_concurrent_writers` runs.
const WRITERS: u64 = 32;
const COUNTER: &str = "/registry/wardle.example.com/fischers/counter";

fn key(i: u64) -> String {
    format!("/registry/wardle.example.com/flunders/ns/f{i}")
}

/// In a child process only (its directory in [`CHILD_DIR_ENV`]): a runtime of `workers`
/// threads, and the directory of its store.
fn child_runtime(workers: usize) -> Option<(tokio::runtime::Runtime, String)> {
    let dir = std::env::var(CHILD_DIR_ENV).ok()?;
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(workers)
        .enable_all()
        .build()
        .unwrap();
    Some((rt, dir))
}

/// The child's store in `dir`, with a short history: compaction passes the acknowledged
/// writes long before the kill, so what survives it is each key's live value, not history.
fn open_store(dir: impl AsRef<std::path::Path>) -> EmbeddedStore {
    let options = EmbeddedOptions {
        history: History {
            revisions: 16,
            ..History::default()
        },
        ..EmbeddedOptions::default()
    };
    EmbeddedStore::open_dir(dir, sample_apiserver::api::GROUP, options).unwrap()
}

/// The child: writes forever, printing `ACK <kind> <n> <revision>` after each acknowledged
/// write. Does nothing in a normal test run.
#[test]
fn child_writer() {
    let Some((rt, dir)) = child_runtime(1) else {
        return;
    };
    rt.block_on(async move {
        let s = open_store(&dir);
        let mut counter = s.create(COUNTER, Bytes::from_static(b"0")).await.unwrap();
        println!("ACK counter 0 {}", counter.mod_revision);
        for i in 1u64.. {
            let kv = s
                .create(&key(i), Bytes::from(format!("value {i}")))
                .await
                .unwrap();
            println!("ACK create {i} {}", kv.mod_revision);
            counter = s
                .update(COUNTER, Bytes::from(i.to_string()), counter.mod_revision)
                .await
                .unwrap()
                .kv;
            println!("ACK counter {i} {}", counter.mod_revision);
        }
    });
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn acknowledged_writes_survive_sigkill() {
    let dir = tempfile::tempdir().unwrap();
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "child_writer", "--nocapture", "--test-threads=1"])
        .env(CHILD_DIR_ENV, dir.path())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    let mut creates: Vec<(u64, i64)> = Vec::new();
    let mut last_counter: Option<(u64, i64)> = None;
    let deadline = Instant::now() + Duration::from_secs(60);
    for line in BufReader::new(stdout).lines() {
        let line = line.unwrap();
        let parts: Vec<&str> = line.split_whitespace().collect();
        if let ["ACK", kind, n, rev] = parts[..] {
            let (n, rev): (u64, i64) = (n.parse().unwrap(), rev.parse().unwrap());
            match kind {
                "create" => creates.push((n, rev)),
                "counter" => last_counter = Some((n, rev)),
                _ => panic!("unexpected line {line}"),
            }
        }
        if creates.len() >= 40 || Instant::now() > deadline {
            break;
        }
    }
    // SIGKILL while it is still writing.
    child.kill().unwrap();
    let status = child.wait().unwrap();
    assert!(!status.success());
    assert!(
        creates.len() >= 40,
        "child acknowledged only {} writes",
        creates.len()
    );

    let s = open_store(dir.path());
    for (n, rev) in &creates {
        let kv = s
            .get(&key(*n))
            .await
            .unwrap()
            .unwrap_or_else(|| panic!("lost f{n}"));
        assert_eq!(kv.mod_revision, *rev);
        assert_eq!(kv.value, Bytes::from(format!("value {n}")));
    }
    let (n, rev) = last_counter.unwrap();
    let counter = s.get(COUNTER).await.unwrap().unwrap();
    assert!(counter.mod_revision >= rev, "counter went back in time");
    let stored: u64 = std::str::from_utf8(&counter.value)
        .unwrap()
        .parse()
        .unwrap();
    assert!(stored >= n);
    // The store is consistent and writable after the crash.
    let current = s.current_revision().await.unwrap();
    assert!(current >= creates.last().unwrap().1);
    let kv = s
        .create(&key(1_000_000), Bytes::from_static(b"after"))
        .await
        .unwrap();
    assert_eq!(kv.mod_revision, current + 1);
}

/// The child under load: [`WRITERS`] tasks create keys of their own as fast as they can, each
/// printing `ACK <writer> <n> <revision> <commits>` once its create is acknowledged (with the
/// store's commits so far). Does nothing in a normal test run.
#[test]
fn child_concurrent_writers() {
    let Some((rt, dir)) = child_runtime(2) else {
        return;
    };
    rt.block_on(async move {
        let s = open_store(&dir);
        let writers: Vec<_> = (0..WRITERS)
            .map(|w| {
                let s = s.clone();
                tokio::spawn(async move {
                    for n in 0u64.. {
                        let kv = s
                            .create(&load_key(w, n), Bytes::from(format!("{w}/{n}")))
                            .await
                            .unwrap();
                        println!("ACK {w} {n} {} {}", kv.mod_revision, s.commits());
                    }
                })
            })
            .collect();
        for w in writers {
            w.await.unwrap();
        }
    });
}

fn load_key(writer: u64, n: u64) -> String {
    format!("/registry/wardle.example.com/flunders/w{writer}/f{n}")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn acknowledged_concurrent_writes_survive_sigkill() {
    let dir = tempfile::tempdir().unwrap();
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "child_concurrent_writers",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(CHILD_DIR_ENV, dir.path())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    let mut acked: Vec<(u64, u64, i64)> = Vec::new();
    let mut commits = 0u64;
    let deadline = Instant::now() + Duration::from_secs(60);
    for line in BufReader::new(stdout).lines() {
        let line = line.unwrap();
        let parts: Vec<&str> = line.split_whitespace().collect();
        if let ["ACK", w, n, rev, c] = parts[..] {
            acked.push((w.parse().unwrap(), n.parse().unwrap(), rev.parse().unwrap()));
            commits = commits.max(c.parse().unwrap());
        }
        if acked.len() >= 2_000 || Instant::now() > deadline {
            break;
        }
    }
    // SIGKILL while every writer is still writing.
    child.kill().unwrap();
    assert!(!child.wait().unwrap().success());
    assert!(
        acked.len() >= 2_000,
        "the child acknowledged only {} writes",
        acked.len()
    );
    assert!(
        commits < acked.len() as u64,
        "{} acknowledged writes took {commits} commits: none were shared",
        acked.len()
    );

    let s = open_store(dir.path());
    for (w, n, rev) in &acked {
        let kv = s
            .get(&load_key(*w, *n))
            .await
            .unwrap()
            .unwrap_or_else(|| panic!("lost the acknowledged write {w}/{n}"));
        assert_eq!(
            (kv.mod_revision, &kv.value[..]),
            (*rev, format!("{w}/{n}").as_bytes())
        );
    }
    // Revisions stay one per write: the store is at least at the last acknowledged one, and
    // every revision up to it was taken by a write that is there.
    let current = s.current_revision().await.unwrap();
    let last = acked.iter().map(|a| a.2).max().unwrap();
    assert!(current >= last);
    let stored = s
        .list("/registry/wardle.example.com/flunders/", Default::default())
        .await
        .unwrap();
    assert_eq!(
        stored.items.len() as i64,
        current - 1,
        "one key per revision"
    );
}
