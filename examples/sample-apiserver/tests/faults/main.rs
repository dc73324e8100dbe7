//! Proven under faults: three sample-apiserver replicas on a three-member etcd cluster
//! (loopback, the etcd of scripts/install-test-deps), clients creating, updating with
//! compare-and-swap, deleting, reading (consistent and `resourceVersion=0`) and watching
//! through every replica, while a nemesis kills, pauses and restarts etcd members and
//! replicas, takes etcd's quorum away and compacts. Everything the clients invoke and see is
//! recorded, etcd's own history is recorded by `etcdctl watch`, and the history is checked
//! afterwards: durability, per-object linearizability, freshness, `resourceVersion=0`
//! sanity, watch streams against the store, readiness. docs/faults.md says what is promised.
//!
//! Short form (CI, one round of every fault): `cargo test -p sample-apiserver --test faults`.
//! Long form: `FAULTS_SECONDS=600 FAULTS_SEED=7 cargo test -p sample-apiserver --test faults
//! -- --nocapture` (rounds until the time is up). `FAULTS_KEYS` sets the number of objects.
//! A failure prints its seed: the same seed replays the same schedule and the same choices.

#[path = "../common/mod.rs"]
mod common;

mod checks;
mod cluster;
mod history;
mod http;
mod linearizability;
mod nemesis;
mod netns;
mod rng;
mod store_history;
mod watch_check;
mod workload;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use conneg_apiserver::testing::PATIENCE;

use cluster::Cluster;
use history::{Recorder, Ret};
use rng::Rng;
use store_history::StoreRecorder;
use watch_check::WatchStats;
use workload::Ctx;

const REPLICAS: usize = 3;
/// Of two racing deletes one succeeds and the other is answered 404, as in Kubernetes
/// (docs/faults.md, "What was found"): the history is judged strictly.
const MODEL: linearizability::Model = linearizability::Model {
    racing_deletes_succeed: false,
};
const CLIENTS_PER_REPLICA: usize = 2;
/// The quiet at the end: the server sends a bookmark after 10 s without events.
const QUIET: Duration = Duration::from_secs(14);

/// The run's parameters, from the environment (`FAULTS_HISTORY_DIR`: where to write the
/// recorded history, for a failure's post-mortem).
struct Config {
    seed: u64,
    /// `None`: the short form, one round of every fault.
    seconds: Option<u64>,
    keys: usize,
    /// `FAULTS_PLANT=stale-cache`: the planted bug of [`Ctx::stale_cache`]; the run must
    /// then fail.
    plant_stale_cache: bool,
}

impl Config {
    fn from_env() -> Config {
        let num = |name: &str| {
            std::env::var(name).ok().map(|v| {
                v.parse::<u64>()
                    .unwrap_or_else(|_| panic!("{name} must be a number, not {v:?}"))
            })
        };
        Config {
            seed: num("FAULTS_SEED").unwrap_or(32),
            seconds: num("FAULTS_SECONDS"),
            keys: num("FAULTS_KEYS").map_or(6, |k| k.clamp(1, 1000) as usize),
            plant_stale_cache: match std::env::var("FAULTS_PLANT").as_deref() {
                Err(_) => false,
                Ok("stale-cache") => true,
                Ok(other) => panic!("FAULTS_PLANT={other:?}: the only planted bug is stale-cache"),
            },
        }
    }
}

#[test]
fn replicas_on_a_three_member_etcd_cluster_keep_their_promises_under_faults() {
    let cfg = Config::from_env();
    let mut rng = Rng::new(cfg.seed);
    // One round lasts about half a minute.
    let rounds = cfg.seconds.map_or(1, |s| s.div_ceil(30) as usize + 1);
    // Partitions need network namespaces (root and `ip`); FAULTS_NETNS=off runs without.
    let network = match std::env::var("FAULTS_NETNS").as_deref() {
        Ok("off") => Err("FAULTS_NETNS=off".to_owned()),
        _ => netns::Network::create(3),
    };
    if let Err(why) = &network {
        println!("no partitions (the members stay on loopback): {why}");
    }
    let plan = nemesis::schedule(&mut rng, rounds, (3, REPLICAS), network.is_ok());
    let replay = format!(
        "seed {} (replay: FAULTS_SEED={}{} cargo test -p sample-apiserver --test faults)",
        cfg.seed,
        cfg.seed,
        cfg.seconds
            .map(|s| format!(" FAULTS_SECONDS={s}"))
            .unwrap_or_default()
    );
    println!("{replay}; schedule:");
    for p in &plan {
        println!(
            "  {} for {:.1?}, then {:.1?} quiet",
            p.fault, p.hold, p.rest
        );
    }

    let mut cluster = Cluster::start(REPLICAS, network.ok());
    let start_rev = cluster.revision().expect("the cluster's revision") + 1;
    let store_recorder = StoreRecorder::start(&cluster.endpoints(), start_rev);
    let ctx = Ctx {
        rec: Recorder::new(),
        addrs: cluster.addrs.clone(),
        stop: Arc::new(AtomicBool::new(false)),
        quiet: Arc::new(AtomicBool::new(false)),
        keys: (0..cfg.keys).map(|k| format!("k{k}")).collect(),
        stale_cache: cfg.plant_stale_cache.then(Default::default),
    };
    let clients: Vec<_> = (0..REPLICAS * CLIENTS_PER_REPLICA)
        .map(|id| {
            let (ctx, rng) = (ctx.clone(), rng.fork());
            std::thread::spawn(move || workload::client(&ctx, id, id % REPLICAS, rng))
        })
        .collect();
    let watch_stop = Arc::new(AtomicBool::new(false));
    let watchers: Vec<_> = (0..REPLICAS)
        .map(|r| {
            let ctx = Ctx {
                stop: Arc::clone(&watch_stop),
                ..ctx.clone()
            };
            let seen = Arc::new(AtomicU64::new(0));
            let rng = rng.fork();
            let mine = Arc::clone(&seen);
            let h = std::thread::spawn(move || workload::watcher(&ctx, 100 + r, r, rng, &mine));
            (h, seen)
        })
        .collect();

    // Faults, one at a time; the clients run throughout.
    let began = Instant::now();
    let until = began + Duration::from_secs(cfg.seconds.unwrap_or(u64::MAX / 4));
    let report = nemesis::run(&mut cluster, &plan, until, &store_recorder);
    ctx.stop.store(true, Ordering::Relaxed);
    for c in clients {
        c.join().expect("a client thread");
    }
    let ran = began.elapsed();

    // The store's history, up to a sentinel written after the last client operation.
    let mut failures = report.errors.clone();
    cluster
        .etcdctl(&["put", "/faults-end", "x"])
        .expect("write the sentinel");
    let end_rev = cluster.revision().expect("the cluster's revision");
    let prefix = format!(
        "/registry/wardle.example.com/flunders/{}/",
        workload::NAMESPACE
    );
    let store = store_recorder
        .finish(end_rev, &prefix, PATIENCE)
        .unwrap_or_else(|e| panic!("{replay}: {e}"));

    // Every watch catches up with the store by itself, then stops.
    let last = store.last_rev();
    let deadline = Instant::now() + PATIENCE;
    while watchers
        .iter()
        .any(|(_, s)| s.load(Ordering::Relaxed) < last)
        && Instant::now() < deadline
    {
        std::thread::sleep(Duration::from_millis(100));
    }
    for (r, (_, seen)) in watchers.iter().enumerate() {
        let at = seen.load(Ordering::Relaxed);
        if at < last {
            failures.push(format!(
                "the watch on replica {r} did not catch up: at {at}, the store at {last}"
            ));
        }
    }
    // Quiet: every watch stream sends a bookmark after 10 s without events.
    ctx.quiet.store(true, Ordering::Relaxed);
    std::thread::sleep(QUIET);
    watch_stop.store(true, Ordering::Relaxed);
    let logs: Vec<_> = watchers
        .into_iter()
        .map(|(h, _)| h.join().expect("a watcher thread"))
        .collect();

    // Final reads through every replica: each serves, and serves the store's state.
    let mut finals = Vec::new();
    for r in 0..REPLICAS {
        for key in &ctx.keys {
            let attempt = || workload::get(&ctx, 200 + r, r, key);
            let deadline = Instant::now() + PATIENCE;
            let mut got = attempt();
            while !matches!(got, Some(Ret::Read(_))) && Instant::now() < deadline {
                std::thread::sleep(Duration::from_millis(200));
                got = attempt();
            }
            let ret = got.unwrap_or_else(|| Ret::Unknown("never answered".into()));
            finals.push(history::Op {
                client: 200 + r,
                replica: r,
                key: Some(key.clone()),
                call: history::Call::Get { consistent: true },
                ret,
                invoke: 0,
                complete: 0,
            });
        }
    }

    // The checks.
    let ops = ctx.rec.ops();
    if let Ok(dir) = std::env::var("FAULTS_HISTORY_DIR") {
        history::dump(std::path::Path::new(&dir), &ops, &logs, &store.events);
    }
    failures.extend(checks::durability(&ops, &store));
    failures.extend(checks::final_state(&finals, &store));
    failures.extend(checks::freshness(&ops));
    failures.extend(checks::any_version_reads(&ops, &store));
    let (objects, errors) = linearizability::per_object(&ops, &ctx.keys, &store.written());
    failures.extend(errors);
    let mut explored = 0;
    let mut checked_ops = 0;
    for (key, h) in &objects {
        checked_ops += h.len();
        match linearizability::check(h, MODEL) {
            Ok(v) => explored += v.explored,
            Err(e) => failures.push(format!("object {key}: {e}")),
        }
    }
    let mut watched = WatchStats::default();
    for log in &logs {
        match watch_check::check(log, &store) {
            Ok(s) if s.bookmarks == 0 => failures.push(format!(
                "the watch on replica {} had no bookmark in {QUIET:?} of quiet",
                log.replica
            )),
            Ok(s) => watched += s,
            Err(e) => failures.push(e),
        }
    }

    // The figures.
    let count = |f: &dyn Fn(&history::Op) -> bool| ops.iter().filter(|o| f(o)).count();
    println!("faults injected: {} in {ran:.1?}", report.injected);
    for line in &report.log {
        println!("  {line}");
    }
    println!(
        "operations: {} ({} acknowledged writes, {} refused, {} unknown outcome); \
         store changes: {}; linearizability: {} object histories, {checked_ops} operations, \
         {explored} states; watches: {watched:?}",
        ops.len(),
        count(&|o| o.acknowledged()),
        count(&|o| matches!(o.ret, Ret::Refused(_))),
        count(&|o| matches!(o.ret, Ret::Unknown(_))),
        store.events.len(),
        objects.len(),
    );
    let mut unknown: std::collections::BTreeMap<&str, usize> = Default::default();
    for o in &ops {
        if let Ret::Unknown(why) = &o.ret {
            let why = why.split([':', '{']).next().unwrap_or_default();
            *unknown.entry(why.trim()).or_default() += 1;
        }
    }
    println!("unknown outcomes by reason: {unknown:?}");
    assert!(
        failures.is_empty(),
        "{replay}: {} broken promises:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
