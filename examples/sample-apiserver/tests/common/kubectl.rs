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
}

/// A server started with `args` and an empty kubeconfig beside it, for the test named `test`; `None`, with a
/// loud notice, when kubectl is not on PATH.
pub(crate) fn setup(test: &str, args: &[&str]) -> Option<(tempfile::TempDir, Server)> {
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
    let server = Server::start(&dir.path().join("data"), args);
    Some((dir, server))
}
