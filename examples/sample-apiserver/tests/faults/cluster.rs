//! The system under test: a three-member etcd cluster on loopback and sample-apiserver
//! replicas on it, each given every member (in a different order, so that they lean on
//! different members), with the means to kill, pause and restart any of them.

use std::process::Command;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use conneg_apiserver::testing::{Etcd, PATIENCE};

use super::http;
use super::netns::Network;
use crate::common::{Server, tempdir};

/// Replicas' current addresses (a restarted replica listens on a new port).
#[derive(Clone)]
pub(crate) struct Addrs(Arc<Vec<Mutex<String>>>);

impl Addrs {
    pub(crate) fn get(&self, replica: usize) -> String {
        self.0[replica]
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    fn set(&self, replica: usize, addr: String) {
        *self.0[replica]
            .lock()
            .unwrap_or_else(PoisonError::into_inner) = addr;
    }

    pub(crate) fn len(&self) -> usize {
        self.0.len()
    }
}

pub(crate) struct Cluster {
    pub(crate) etcd: Vec<Etcd>,
    replicas: Vec<Option<Server>>,
    dirs: Vec<tempfile::TempDir>,
    pub(crate) addrs: Addrs,
    /// The members' namespaces, when partitions are possible (dropped last, after the
    /// processes in them).
    pub(crate) network: Option<Network>,
}

impl Cluster {
    /// Three etcd members (each in its own network namespace when `network` is given) and
    /// `replicas` servers, all up and ready.
    pub(crate) fn start(replicas: usize, network: Option<Network>) -> Cluster {
        let etcd = match &network {
            Some(n) => Etcd::cluster_at(&n.hosts()),
            None => Etcd::cluster(3),
        };
        let dirs: Vec<_> = (0..replicas).map(|_| tempdir()).collect();
        let addrs = Addrs(Arc::new(
            (0..replicas).map(|_| Mutex::new(String::new())).collect(),
        ));
        let mut c = Cluster {
            etcd,
            replicas: (0..replicas).map(|_| None).collect(),
            dirs,
            addrs,
            network,
        };
        for r in 0..replicas {
            c.start_replica(r).unwrap_or_else(|e| panic!("{e}"));
        }
        c
    }

    /// Every member's client URL, comma-separated.
    pub(crate) fn endpoints(&self) -> String {
        let urls: Vec<String> = self.etcd.iter().map(Etcd::url).collect();
        urls.join(",")
    }

    /// Starts replica `r` and waits until it is ready: until then it is still creating its
    /// system objects, and a replica whose etcd call fails then exits (docs/faults.md).
    fn start_replica(&mut self, r: usize) -> Result<(), String> {
        let n = self.etcd.len();
        // Replica r prefers member r: the replicas read through different members.
        let urls: Vec<String> = (0..n).map(|i| self.etcd[(r + i) % n].url()).collect();
        let urls = urls.join(",");
        let args = [
            "--etcd-servers",
            urls.as_str(),
            // The recorder needs the whole history: no compaction but the nemesis's own.
            "--etcd-compaction-interval",
            "0",
            "--etcd-request-timeout",
            "2s",
        ];
        let server = Server::start(self.dirs[r].path(), &args);
        self.addrs.set(r, server.addr.clone());
        self.replicas[r] = Some(server);
        self.await_readyz(r, true).map(drop)
    }

    /// SIGKILL: the replica dies mid-request, as in a crash.
    pub(crate) fn kill_replica(&mut self, r: usize) {
        if let Some(s) = self.replicas[r].take() {
            signal(s.pid(), "-KILL");
            drop(s); // reaps it
        }
    }

    /// Starts a killed replica again (on a new port) and waits until it is ready.
    pub(crate) fn restart_replica(&mut self, r: usize) -> Result<(), String> {
        assert!(self.replicas[r].is_none(), "replica {r} is running");
        self.start_replica(r)
    }

    /// SIGSTOP / SIGCONT a replica.
    pub(crate) fn signal_replica(&self, r: usize, sig: &str) {
        if let Some(s) = &self.replicas[r] {
            signal(s.pid(), sig);
        }
    }

    /// `etcdctl` against every member.
    pub(crate) fn etcdctl(&self, args: &[&str]) -> Result<String, String> {
        let out = Command::new("etcdctl")
            .env("ETCDCTL_API", "3")
            .args(["--endpoints", &self.endpoints(), "--command-timeout=5s"])
            .args(args)
            .output()
            .map_err(|e| format!("etcdctl: {e}"))?;
        if out.status.success() {
            Ok(String::from_utf8_lossy(&out.stdout).into_owned())
        } else {
            Err(format!(
                "etcdctl {args:?}: {}",
                String::from_utf8_lossy(&out.stderr)
            ))
        }
    }

    /// The cluster's current revision.
    pub(crate) fn revision(&self) -> Result<u64, String> {
        let out = self.etcdctl(&["get", "/", "--prefix", "--limit=1", "-w", "json"])?;
        let v: serde_json::Value =
            serde_json::from_str(&out).map_err(|e| format!("etcdctl get: {e}: {out}"))?;
        v["header"]["revision"]
            .as_u64()
            .ok_or_else(|| format!("no revision in {out}"))
    }

    /// Waits until `/readyz` of replica `r` answers 200 (`ready`) or a failure naming etcd
    /// (`!ready`); how long it took.
    pub(crate) fn await_readyz(&self, r: usize, ready: bool) -> Result<Duration, String> {
        await_readyz(&self.addrs, r, ready)
    }
}

/// As [`Cluster::await_readyz`], from any thread.
pub(crate) fn await_readyz(addrs: &Addrs, r: usize, ready: bool) -> Result<Duration, String> {
    let start = Instant::now();
    let mut last = String::new();
    while start.elapsed() < PATIENCE {
        match http::call(
            &addrs.get(r),
            "GET",
            "/readyz",
            b"",
            Duration::from_secs(10),
        ) {
            Ok(resp) if ready && resp.code == 200 => return Ok(start.elapsed()),
            Ok(resp) if !ready && resp.code != 200 && resp.text().contains("etcd") => {
                return Ok(start.elapsed());
            }
            Ok(resp) => last = format!("{} {}", resp.code, resp.text()),
            Err(e) => last = format!("{e:?}"),
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    Err(format!(
        "/readyz of replica {r} did not become {} within {PATIENCE:?}; last answer: {last}",
        if ready { "ready" } else { "not ready (etcd)" }
    ))
}

fn signal(pid: u32, sig: &str) {
    if pid != 0 {
        let _ = Command::new("kill").args([sig, &pid.to_string()]).status();
    }
}
