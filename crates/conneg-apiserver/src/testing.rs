//! Test support (feature `testing`): a real etcd for the tests that need one, a single member
//! or a cluster on free loopback ports with its data in a temp dir, killed on drop. `etcd` and
//! `etcdctl` come from PATH (the repository's scripts/test puts the copies it unpacks under
//! target/test-deps first). Used by this crate's storage conformance suite and by servers'
//! own etcd tests.

use std::collections::BTreeSet;
use std::net::TcpListener;
use std::path::PathBuf;
use std::process::{Child, Command, Output, Stdio};
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};

/// How long a condition may take to come true before the test fails (generous: the machine
/// is shared). Not a timing assertion: only "never" fails.
pub const PATIENCE: Duration = Duration::from_secs(90);

/// A free loopback TCP port (bound once, then released), never one this process was given
/// before: tests run in parallel, and two etcd members handed the same port would have one
/// fail to bind while its test talked to the other's.
pub fn free_port() -> u16 {
    static GIVEN: Mutex<BTreeSet<u16>> = Mutex::new(BTreeSet::new());
    loop {
        let port = TcpListener::bind("127.0.0.1:0")
            .expect("bind a free port")
            .local_addr()
            .expect("local addr")
            .port();
        if GIVEN
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(port)
        {
            return port;
        }
    }
}

fn etcd_installed() {
    let ok = Command::new("etcd")
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
        && Command::new("etcdctl")
            .arg("version")
            .env("ETCDCTL_API", "3")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
    assert!(
        ok,
        "etcd and etcdctl must be installed for the etcd tests: run the suite with scripts/test, \
         which unpacks Debian's etcd-server and etcd-client into target/test-deps"
    );
}

/// A single-member etcd on loopback; killed on drop.
pub struct Etcd {
    child: Option<Child>,
    dir: tempfile::TempDir,
    name: String,
    client_port: u16,
    peer_port: u16,
    /// The address it listens on (127.0.0.1, or its network namespace's).
    host: String,
    /// The network namespace it runs in (`ip netns exec`), if any.
    netns: Option<String>,
    /// `--initial-cluster`: every member's `name=peer-url`.
    initial_cluster: String,
    /// Serving clients over TLS, with client certificates required.
    tls: bool,
}

/// PEM files in `dir`: a CA, etcd's serving certificate for 127.0.0.1 and a client
/// certificate, all issued by that CA.
fn write_tls_files(dir: &std::path::Path) {
    let key = |name: &str| {
        let k = rcgen::KeyPair::generate().expect("a key pair");
        std::fs::write(dir.join(format!("{name}.key")), k.serialize_pem()).expect("write key");
        k
    };
    let mut ca_params = rcgen::CertificateParams::new(Vec::new()).expect("CA params");
    ca_params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
    let ca_key = key("ca");
    let ca = ca_params.self_signed(&ca_key).expect("a CA");
    std::fs::write(dir.join("ca.crt"), ca.pem()).expect("write CA");
    for (name, sans) in [
        ("server", vec!["127.0.0.1".to_owned(), "localhost".into()]),
        ("client", vec![]),
    ] {
        let k = key(name);
        let cert = rcgen::CertificateParams::new(sans)
            .expect("params")
            .signed_by(&k, &ca, &ca_key)
            .expect("a certificate");
        std::fs::write(dir.join(format!("{name}.crt")), cert.pem()).expect("write certificate");
    }
}

impl Etcd {
    fn member(name: &str) -> Etcd {
        Etcd::member_at(name, "127.0.0.1", None)
    }

    fn member_at(name: &str, host: &str, netns: Option<&str>) -> Etcd {
        let peer_port = free_port();
        // Unique, so that a member can tell its own answers from another's (wait_healthy).
        let name = format!("{name}-{peer_port}");
        Etcd {
            child: None,
            dir: tempfile::tempdir().expect("a temp dir for etcd"),
            client_port: free_port(),
            peer_port,
            initial_cluster: format!("{name}=http://{host}:{peer_port}"),
            host: host.to_owned(),
            netns: netns.map(str::to_owned),
            name,
            tls: false,
        }
    }

    /// A single-member etcd that serves clients over TLS only and requires a client
    /// certificate (`--client-cert-auth`); [`Etcd::client_tls`] gives what a client needs.
    pub fn start_tls() -> Etcd {
        etcd_installed();
        let mut e = Etcd::member("test");
        e.tls = true;
        write_tls_files(e.dir.path());
        e.spawn();
        e
    }

    /// The CA, client certificate and key a client of a [`Etcd::start_tls`] member uses.
    pub fn client_tls(&self) -> crate::storage::EtcdTls {
        let file = |name: &str| Some(self.dir.path().join(name));
        crate::storage::EtcdTls {
            ca_file: file("ca.crt"),
            cert_file: file("client.crt"),
            key_file: file("client.key"),
        }
    }

    /// A single-member etcd, started and healthy; the test fails saying what to install when
    /// `etcd` is missing.
    pub fn start() -> Etcd {
        etcd_installed();
        let mut e = Etcd::member("test");
        e.spawn();
        e
    }

    /// An `n`-member cluster, all members started and healthy.
    pub fn cluster(n: usize) -> Vec<Etcd> {
        let hosts = vec![("127.0.0.1".to_owned(), None); n];
        Etcd::cluster_at(&hosts)
    }

    /// A cluster with one member per `(address, network namespace)`: each member listens on
    /// its address, inside its namespace (run with `ip netns exec`) when one is given, so
    /// that a test can cut it off the network. All started and healthy.
    pub fn cluster_at(hosts: &[(String, Option<String>)]) -> Vec<Etcd> {
        etcd_installed();
        let mut members: Vec<Etcd> = hosts
            .iter()
            .enumerate()
            .map(|(i, (host, netns))| Etcd::member_at(&format!("m{i}"), host, netns.as_deref()))
            .collect();
        let initial = members
            .iter()
            .map(|m| m.initial_cluster.clone())
            .collect::<Vec<_>>()
            .join(",");
        for m in &mut members {
            m.initial_cluster.clone_from(&initial);
            // A member is healthy only once a quorum runs: start all, then wait.
            m.spawn_nowait();
        }
        for m in &mut members {
            m.wait_healthy();
        }
        members
    }

    /// Its client URL, `http://127.0.0.1:PORT` (its own address in a namespace; `https://`
    /// with TLS).
    pub fn url(&self) -> String {
        let scheme = if self.tls { "https" } else { "http" };
        format!("{scheme}://{}:{}", self.host, self.client_port)
    }

    fn log_path(&self) -> PathBuf {
        self.dir.path().join("etcd.log")
    }

    /// Starts etcd on the data dir and ports (again, after [`Etcd::kill`]) and waits until it
    /// answers.
    pub fn spawn(&mut self) {
        self.spawn_nowait();
        self.wait_healthy();
    }

    fn spawn_nowait(&mut self) {
        assert!(self.child.is_none(), "etcd already running");
        let peer = format!("http://{}:{}", self.host, self.peer_port);
        let log = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(self.log_path())
            .expect("etcd log file");
        let mut cmd = match &self.netns {
            // `ip netns exec` execs etcd: its pid is etcd's, for kill and signal.
            Some(ns) => {
                let mut c = Command::new("ip");
                c.args(["netns", "exec", ns, "etcd"]);
                c
            }
            None => Command::new("etcd"),
        };
        cmd.arg("--name")
            .arg(&self.name)
            .arg("--data-dir")
            .arg(self.dir.path().join("data"))
            .arg("--listen-client-urls")
            .arg(self.url())
            .arg("--advertise-client-urls")
            .arg(self.url())
            .arg("--listen-peer-urls")
            .arg(&peer)
            .arg("--initial-advertise-peer-urls")
            .arg(&peer)
            .arg("--initial-cluster")
            .arg(&self.initial_cluster)
            .stdout(Stdio::null())
            .stderr(log);
        if self.tls {
            let file = |name: &str| self.dir.path().join(name);
            cmd.arg("--cert-file")
                .arg(file("server.crt"))
                .arg("--key-file")
                .arg(file("server.key"))
                .arg("--trusted-ca-file")
                .arg(file("ca.crt"))
                .arg("--client-cert-auth");
        }
        if cfg!(target_arch = "aarch64") {
            cmd.env("ETCD_UNSUPPORTED_ARCH", "arm64");
        }
        self.child = Some(cmd.spawn().expect("spawn etcd"));
    }

    fn wait_healthy(&mut self) {
        let deadline = Instant::now() + PATIENCE;
        loop {
            if let Some(Ok(Some(status))) = self.child.as_mut().map(Child::try_wait) {
                panic!(
                    "etcd exited with {status}:\n{}",
                    std::fs::read_to_string(self.log_path()).unwrap_or_default()
                );
            }
            if self.ctl(&["endpoint", "health"]).status.success() && self.is_the_one_answering() {
                return;
            }
            assert!(
                Instant::now() < deadline,
                "etcd did not become healthy:\n{}",
                std::fs::read_to_string(self.log_path()).unwrap_or_default()
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// Whether the etcd answering on this member's client port is this member (not another
    /// test's that holds the port), by its name in `member list`.
    fn is_the_one_answering(&self) -> bool {
        let out = self.ctl(&["member", "list"]);
        String::from_utf8_lossy(&out.stdout)
            .lines()
            .any(|l| l.split(", ").nth(2) == Some(self.name.as_str()))
    }

    /// SIGKILL, as a crash: only what etcd acknowledged (fsynced) survives.
    pub fn kill(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }

    /// SIGSTOP / SIGCONT: etcd keeps its sockets but stops answering.
    pub fn signal(&self, sig: &str) {
        let pid = self.child.as_ref().expect("etcd running").id().to_string();
        let ok = Command::new("kill")
            .args([sig, &pid])
            .status()
            .is_ok_and(|s| s.success());
        assert!(ok, "kill {sig} {pid}");
    }

    /// Runs `etcdctl ARGS...` (API v3) against this member.
    pub fn ctl(&self, args: &[&str]) -> Output {
        Command::new("etcdctl")
            .env("ETCDCTL_API", "3")
            .arg("--endpoints")
            .arg(self.url())
            .arg("--command-timeout=5s")
            .args(
                self.tls
                    .then(|| {
                        let file = |name: &str| self.dir.path().join(name).display().to_string();
                        [
                            format!("--cacert={}", file("ca.crt")),
                            format!("--cert={}", file("client.crt")),
                            format!("--key={}", file("client.key")),
                        ]
                    })
                    .into_iter()
                    .flatten(),
            )
            .args(args)
            .output()
            .expect("run etcdctl")
    }

    /// `etcdctl get --print-value-only key`: the stored bytes (etcdctl adds a newline).
    pub fn value(&self, key: &str) -> Vec<u8> {
        let out = self.ctl(&["get", "--print-value-only", key]);
        assert!(out.status.success(), "etcdctl get: {out:?}");
        let mut v = out.stdout;
        if v.last() == Some(&b'\n') {
            v.pop();
        }
        v
    }
}

impl Drop for Etcd {
    fn drop(&mut self) {
        self.kill();
    }
}

/// A server running in this process on a free loopback port, stopped on drop: what a test
/// needs to point a real client (kube-rs, the `conneg` client) at, with no other process.
///
/// ```no_run
/// # async fn demo(state: conneg_apiserver::server::AppState) {
/// let server = conneg_apiserver::testing::InProcess::start(state).await;
/// let url = server.url(); // http://127.0.0.1:<port>
/// # drop(url);
/// # }
/// ```
pub struct InProcess {
    url: String,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
}

impl InProcess {
    /// Binds a free port and serves `state` on it ([`AppState::serve`](crate::server::AppState::serve):
    /// bootstrapped first; a request sent meanwhile waits for it).
    ///
    /// # Panics
    ///
    /// When no port can be bound: the test cannot go on.
    pub async fn start(state: crate::server::AppState) -> Self {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind a free port");
        let url = format!("http://{}", listener.local_addr().expect("local addr"));
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        tokio::spawn(async move {
            let shutdown = async {
                let _ = stopped.await;
            };
            if let Err(e) = state.serve(listener, Default::default(), shutdown).await {
                tracing::warn!(error = %e, "in-process server ended");
            }
        });
        Self {
            url,
            stop: Some(stop),
        }
    }

    /// `http://127.0.0.1:<port>`.
    pub fn url(&self) -> &str {
        &self.url
    }
}

impl Drop for InProcess {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
    }
}
