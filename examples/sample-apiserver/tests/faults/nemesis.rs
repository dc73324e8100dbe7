//! The nemesis: a schedule of faults drawn from the seed, applied one at a time while the
//! clients run, each held for a while and then healed. After each heal every replica must
//! be ready again by itself (no replica is ever restarted to recover, only the one the fault
//! killed); during a loss of etcd quorum every replica's `/readyz` must say etcd fails.

use std::fmt;
use std::time::{Duration, Instant};

use conneg_apiserver::testing::PATIENCE;

use super::cluster::{Cluster, await_readyz};
use super::rng::Rng;
use super::store_history::StoreRecorder;

/// One fault.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Fault {
    /// SIGKILL an etcd member, then start it again on its data.
    KillMember(usize),
    /// SIGSTOP an etcd member, then SIGCONT it.
    PauseMember(usize),
    /// SIGKILL a replica, then start it again.
    KillReplica(usize),
    /// SIGSTOP a replica, then SIGCONT it.
    PauseReplica(usize),
    /// Cut an etcd member off the network (its link down), then join it again.
    Partition(usize),
    /// SIGSTOP two of the three members (no quorum: etcd is unreachable for every replica).
    QuorumLoss(usize, usize),
    /// SIGKILL a replica, `etcdctl compact` to the current revision (or as far as the store's
    /// history was recorded), start the replica again: its watchers resume from a compacted
    /// revision, and must get 410 and list again, not a gap.
    CompactWhileDown(usize),
}

impl fmt::Display for Fault {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Fault::KillMember(m) => write!(f, "kill -9 etcd member {m}, restart it"),
            Fault::PauseMember(m) => write!(f, "SIGSTOP etcd member {m}, SIGCONT"),
            Fault::KillReplica(r) => write!(f, "kill -9 replica {r}, restart it"),
            Fault::PauseReplica(r) => write!(f, "SIGSTOP replica {r}, SIGCONT"),
            Fault::Partition(m) => write!(f, "cut etcd member {m} off the network, join it again"),
            Fault::QuorumLoss(a, b) => write!(f, "SIGSTOP etcd members {a} and {b} (no quorum)"),
            Fault::CompactWhileDown(r) => {
                write!(f, "kill -9 replica {r}, compact etcd, restart the replica")
            }
        }
    }
}

/// A fault, how long it is held, and the quiet after it is healed.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Planned {
    pub(crate) fault: Fault,
    pub(crate) hold: Duration,
    pub(crate) rest: Duration,
}

/// `rounds` rounds, each every kind of fault once (partitions only when `partitions`) in a
/// seeded order on seeded targets.
pub(crate) fn schedule(
    rng: &mut Rng,
    rounds: usize,
    (members, replicas): (usize, usize),
    partitions: bool,
) -> Vec<Planned> {
    let mut plan = Vec::new();
    for _ in 0..rounds {
        let pick = |rng: &mut Rng, n: usize| rng.below(n as u64) as usize;
        let a = pick(rng, members);
        let b = (a + 1 + pick(rng, members - 1)) % members;
        let mut round = vec![
            Fault::KillMember(pick(rng, members)),
            Fault::PauseMember(pick(rng, members)),
            Fault::KillReplica(pick(rng, replicas)),
            Fault::PauseReplica(pick(rng, replicas)),
            Fault::QuorumLoss(a, b),
            Fault::CompactWhileDown(pick(rng, replicas)),
        ];
        // Drawn either way: a seed picks the same targets with or without partitions.
        let cut = Fault::Partition(pick(rng, members));
        if partitions {
            round.push(cut);
        }
        for i in (1..round.len()).rev() {
            round.swap(i, pick(rng, i + 1));
        }
        for fault in round {
            plan.push(Planned {
                fault,
                hold: rng.millis(1500, 4000),
                rest: rng.millis(500, 2000),
            });
        }
    }
    plan
}

/// What running the schedule showed.
#[derive(Default)]
pub(crate) struct NemesisReport {
    /// One line per fault: what, and how the replicas took it.
    pub(crate) log: Vec<String>,
    /// Broken promises (readiness).
    pub(crate) errors: Vec<String>,
    pub(crate) injected: usize,
}

/// Applies the plan in order, stopping early at `until`. Before compacting it waits until
/// the store's history is recorded up to there (`recorder`): nothing is compacted unrecorded.
pub(crate) fn run(
    cluster: &mut Cluster,
    plan: &[Planned],
    until: Instant,
    recorder: &StoreRecorder,
) -> NemesisReport {
    let mut report = NemesisReport::default();
    let replicas = cluster.addrs.len();
    for p in plan {
        if Instant::now() >= until {
            break;
        }
        let started = Instant::now();
        let mut note = String::new();
        match p.fault {
            Fault::KillMember(m) => {
                cluster.etcd[m].kill();
                std::thread::sleep(p.hold);
                cluster.etcd[m].spawn();
            }
            Fault::PauseMember(m) => {
                cluster.etcd[m].signal("-STOP");
                std::thread::sleep(p.hold);
                cluster.etcd[m].signal("-CONT");
            }
            Fault::KillReplica(r) => {
                cluster.kill_replica(r);
                std::thread::sleep(p.hold);
                if let Err(e) = cluster.restart_replica(r) {
                    report.errors.push(format!("{}: {e}", p.fault));
                }
            }
            Fault::Partition(m) => {
                let net = cluster
                    .network
                    .as_ref()
                    .expect("partitions need the namespaces");
                let cut = net.set(m, false);
                std::thread::sleep(p.hold);
                if let Err(e) = cut.and(net.set(m, true)) {
                    report.errors.push(format!("{}: {e}", p.fault));
                }
            }
            Fault::PauseReplica(r) => {
                cluster.signal_replica(r, "-STOP");
                std::thread::sleep(p.hold);
                cluster.signal_replica(r, "-CONT");
            }
            Fault::QuorumLoss(a, b) => {
                cluster.etcd[a].signal("-STOP");
                cluster.etcd[b].signal("-STOP");
                // Every replica must say so, each checked at once.
                let addrs = cluster.addrs.clone();
                let waits: Vec<_> = (0..replicas)
                    .map(|r| {
                        let addrs = addrs.clone();
                        std::thread::spawn(move || await_readyz(&addrs, r, false))
                    })
                    .collect();
                for (r, w) in waits.into_iter().enumerate() {
                    match w.join().expect("readyz waiter") {
                        Ok(t) => note.push_str(&format!(" replica {r} not ready after {t:.1?};")),
                        Err(e) => report.errors.push(format!("during {}: {e}", p.fault)),
                    }
                }
                std::thread::sleep(p.hold.saturating_sub(started.elapsed()));
                cluster.etcd[a].signal("-CONT");
                cluster.etcd[b].signal("-CONT");
            }
            Fault::CompactWhileDown(r) => {
                cluster.kill_replica(r);
                // Let the clients write past what the replica's watchers saw.
                std::thread::sleep(p.hold / 2);
                let compacted = cluster.revision().and_then(|rev| {
                    recorder.wait_for(rev, PATIENCE)?;
                    cluster.etcdctl(&["compact", &rev.to_string()])?;
                    Ok(rev)
                });
                match compacted {
                    Ok(rev) => note = format!(" compacted to {rev};"),
                    Err(e) => report.errors.push(format!("{}: {e}", p.fault)),
                }
                std::thread::sleep(p.hold / 2);
                if let Err(e) = cluster.restart_replica(r) {
                    report.errors.push(format!("{}: {e}", p.fault));
                }
            }
        }
        report.injected += 1;
        let healed = Instant::now();
        // No replica needs a restart: each recovers by itself.
        for r in 0..replicas {
            if let Err(e) = cluster.await_readyz(r, true) {
                report.errors.push(format!("after {}: {e}", p.fault));
            }
        }
        report.log.push(format!(
            "{} (held {:.1?}):{note} all replicas ready {:.1?} after the heal",
            p.fault,
            p.hold,
            healed.elapsed()
        ));
        std::thread::sleep(p.rest);
    }
    report
}
