//! kubectl against the real binary: a server with an empty kubeconfig beside it, and
//! kubectl run plain or with the KEP-4222 client gates
//! (`KUBE_FEATURE_ClientsAllowCBOR=true KUBE_FEATURE_ClientsPreferCBOR=true`). Skipped
//! (loudly) when kubectl is not on PATH.

use std::path::Path;
use std::process::{Command, Output, Stdio};

use super::{Server, tempdir};

pub(crate) fn kubectl_available() -> bool {
    Command::new("kubectl")
        .args(["version", "--client"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

pub(crate) struct Kubectl<'a> {
    pub(crate) server: &'a Server,
    pub(crate) dir: &'a Path,
    pub(crate) cbor: bool,
}

impl Kubectl<'_> {
    pub(crate) fn cmd(&self, args: &[&str]) -> Command {
        let mut c = Command::new("kubectl");
        c.arg("--server")
            .arg(self.server.url())
            .arg("--cache-dir")
            .arg(self.dir.join("cache"))
            .env("KUBECONFIG", self.dir.join("kubeconfig"))
            .env_remove("KUBE_FEATURE_ClientsAllowCBOR")
            .env_remove("KUBE_FEATURE_ClientsPreferCBOR")
            .args(args);
        if self.server.tls {
            // A credential: over HTTPS without one, kubectl prompts for a password.
            c.arg("--certificate-authority")
                .arg(self.dir.join("certs").join("apiserver.crt"))
                .arg("--token")
                .arg(TOKEN);
        }
        if self.cbor {
            c.env("KUBE_FEATURE_ClientsAllowCBOR", "true")
                .env("KUBE_FEATURE_ClientsPreferCBOR", "true");
        }
        c
    }

    /// Runs kubectl with `input` on stdin.
    pub(crate) fn output(&self, args: &[&str], input: &str) -> Output {
        use std::io::Write;
        let mut child = self
            .cmd(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn kubectl");
        child
            .stdin
            .take()
            .expect("stdin")
            .write_all(input.as_bytes())
            .expect("write stdin");
        child.wait_with_output().expect("kubectl output")
    }

    /// Runs kubectl (with `input` on stdin), asserting success; returns stdout.
    pub(crate) fn run_stdin(&self, args: &[&str], input: &str) -> String {
        let out = self.output(args, input);
        assert!(
            out.status.success(),
            "kubectl {args:?} (cbor={}) failed:\nstdout: {}\nstderr: {}",
            self.cbor,
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// Runs kubectl, asserting success; returns stdout.
    pub(crate) fn run(&self, args: &[&str]) -> String {
        self.run_stdin(args, "")
    }

    /// Runs kubectl (with `input` on stdin), asserting failure; returns stderr.
    pub(crate) fn fail_stdin(&self, args: &[&str], input: &str) -> String {
        let out = self.output(args, input);
        assert!(
            !out.status.success(),
            "kubectl {args:?} (cbor={}) succeeded: {}",
            self.cbor,
            String::from_utf8_lossy(&out.stdout)
        );
        String::from_utf8_lossy(&out.stderr).into_owned()
    }

    /// `kubectl get <resource> -w --output-watch-events`, labelling `name` again and again
    /// until the watcher prints a whole MODIFIED line (or 30 s pass): what it printed.
    pub(crate) fn watch_until_modified(&self, resource: &str, name: &str) -> String {
        use std::io::Read;
        use std::time::{Duration, Instant};
        let mut watch = self
            .cmd(&["get", resource, "-w", "--output-watch-events"])
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn kubectl get -w");
        let mut stdout = watch.stdout.take().expect("stdout");
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let mut seen = String::new();
            let mut buf = [0u8; 4096];
            while let Ok(n) = stdout.read(&mut buf) {
                if n == 0 {
                    break;
                }
                seen.push_str(&String::from_utf8_lossy(&buf[..n]));
                if seen
                    .split_once("MODIFIED")
                    .is_some_and(|(_, rest)| rest.contains('\n'))
                {
                    break;
                }
            }
            let _ = tx.send(seen);
        });
        let deadline = Instant::now() + Duration::from_secs(30);
        let mut n = 0;
        let seen = loop {
            if let Ok(s) = rx.try_recv() {
                break s;
            }
            if Instant::now() > deadline {
                break String::new();
            }
            n += 1;
            let label = format!("watched={n}");
            let _ = self
                .cmd(&["label", "--overwrite", resource, name, &label])
                .output();
            std::thread::sleep(Duration::from_millis(200));
        };
        let _ = watch.kill();
        let _ = watch.wait();
        seen
    }
}

/// The bearer token [`Kubectl`] sends over HTTPS (user `admin`).
const TOKEN: &str = "kubectl-test-token";

/// [`setup`] of a server on HTTPS, its self-signed certificate in `certs/` of the directory
/// (which [`Kubectl`] then trusts), a token file naming [`TOKEN`].
pub(crate) fn setup_secure(test: &str) -> Option<(tempfile::TempDir, Server)> {
    start(test, &[], true)
}

/// A server started with `args` and an empty kubeconfig beside it, for the test named `test`; `None`, with a
/// loud notice, when kubectl is not on PATH.
pub(crate) fn setup(test: &str, args: &[&str]) -> Option<(tempfile::TempDir, Server)> {
    start(test, args, false)
}

fn start(test: &str, args: &[&str], secure: bool) -> Option<(tempfile::TempDir, Server)> {
    if !kubectl_available() {
        eprintln!(
            "\n!!!!! kubectl not on PATH: SKIPPING the kubectl end-to-end test ({test}) !!!!!\n"
        );
        return None;
    }
    let dir = tempdir();
    std::fs::write(
        dir.path().join("kubeconfig"),
        "apiVersion: v1\nkind: Config\n",
    )
    .unwrap();
    let certs = dir.path().join("certs");
    let tokens = dir.path().join("tokens.csv");
    let mut args = args.to_vec();
    if secure {
        std::fs::write(&tokens, format!("{TOKEN},admin,1\n")).unwrap();
        args.extend([
            "--secure-port",
            "0",
            "--bind-address",
            "127.0.0.1",
            "--cert-dir",
            certs.to_str().unwrap(),
            "--token-auth-file",
            tokens.to_str().unwrap(),
        ]);
    }
    let server = Server::start(&dir.path().join("data"), &args);
    Some((dir, server))
}
