//! kubectl (1.32) against the minimal example's binary: create, get (Table), server-side
//! apply, get -w, explain, delete, in JSON and then with the CBOR gates on.
//!
//! Skipped (loudly) when kubectl is not on PATH.

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};

const WIDGET: &str = "apiVersion: widgets.example.com/v1
kind: Widget
metadata:
  name: w1
spec:
  size: 3
  color: red
";

const APPLIED: &str = "apiVersion: widgets.example.com/v1
kind: Widget
metadata:
  name: w2
spec:
  size: 5
";

/// The server, killed when dropped.
struct Server {
    child: Child,
    url: String,
}

impl Server {
    fn start() -> Server {
        let mut child = Command::new(env!("CARGO_BIN_EXE_minimal-apiserver"))
            .args(["--storage", "memory", "--listen", "127.0.0.1:0"])
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let url = line
            .trim()
            .strip_prefix("listening on ")
            .unwrap()
            .to_owned();
        Server { child, url }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn kubectl(server: &Server, dir: &Path, cbor: bool, args: &[&str], stdin: Option<&str>) -> String {
    let mut c = Command::new("kubectl");
    c.arg("--server")
        .arg(&server.url)
        .arg("--cache-dir")
        .arg(dir.join("cache"))
        .env("KUBECONFIG", dir.join("kubeconfig"))
        .env_remove("KUBE_FEATURE_ClientsAllowCBOR")
        .env_remove("KUBE_FEATURE_ClientsPreferCBOR")
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    if cbor {
        c.env("KUBE_FEATURE_ClientsAllowCBOR", "true")
            .env("KUBE_FEATURE_ClientsPreferCBOR", "true");
    }
    let mut child = c.spawn().unwrap();
    if let Some(input) = stdin {
        use std::io::Write;
        child
            .stdin
            .take()
            .unwrap()
            .write_all(input.as_bytes())
            .unwrap();
    }
    let out = child.wait_with_output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "kubectl {args:?} (cbor={cbor}) failed:\nstdout: {stdout}\nstderr: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
}

fn scenario(cbor: bool) {
    if !Command::new("kubectl")
        .args(["version", "--client"])
        .output()
        .is_ok_and(|o| o.status.success())
    {
        eprintln!(
            "\n!!!!! kubectl not on PATH: SKIPPING the minimal example's kubectl test !!!!!\n"
        );
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("kubeconfig"),
        "apiVersion: v1\nkind: Config\n",
    )
    .unwrap();
    let server = Server::start();
    let k = |args: &[&str], stdin: Option<&str>| kubectl(&server, dir.path(), cbor, args, stdin);

    assert!(
        k(&["create", "-f", "-"], Some(WIDGET)).contains("widget.widgets.example.com/w1 created")
    );
    let table = k(&["get", "widgets"], None);
    assert!(table.contains("SIZE") && table.contains("w1"), "{table}");
    // A generated name is what the name-format rule checks (not the empty requested one).
    let generated = k(
        &["create", "-f", "-"],
        Some(
            "apiVersion: widgets.example.com/v1\nkind: Widget\nmetadata:\n  generateName: gen-\nspec:\n  size: 1\n",
        ),
    );
    assert!(
        generated.contains("widget.widgets.example.com/gen-"),
        "{generated}"
    );
    let applied = k(&["apply", "--server-side", "-f", "-"], Some(APPLIED));
    assert!(applied.contains("serverside-applied"), "{applied}");
    let w2 = k(
        &["get", "widget", "w2", "-o", "json", "--show-managed-fields"],
        None,
    );
    let w2: serde_json::Value = serde_json::from_str(&w2).unwrap();
    assert_eq!(w2["spec"]["size"], 5);
    assert_eq!(w2["metadata"]["managedFields"][0]["operation"], "Apply");

    // A watch from the start lists both widgets as ADDED, then waits: ended by its timeout.
    let watched = k(
        &[
            "get",
            "widgets",
            "-w",
            "--output-watch-events",
            "--request-timeout",
            "2s",
        ],
        None,
    );
    assert!(
        watched.contains("ADDED") && watched.contains("w2"),
        "{watched}"
    );

    // The derived schema: field descriptions are the doc comments.
    let explained = k(&["explain", "widgets.spec"], None);
    assert!(
        explained.contains("size") && explained.contains("How big."),
        "{explained}"
    );

    if cbor {
        let raw = Command::new("kubectl")
            .args(["--server", &server.url, "get", "--raw"])
            .arg("/apis/widgets.example.com/v1/namespaces/default/widgets/w1")
            .env("KUBECONFIG", dir.path().join("kubeconfig"))
            .env("KUBE_FEATURE_ClientsAllowCBOR", "true")
            .env("KUBE_FEATURE_ClientsPreferCBOR", "true")
            .output()
            .unwrap();
        assert_eq!(&raw.stdout[..3], &[0xd9, 0xd9, 0xf7], "expected CBOR");
    }
    let metrics = k(&["get", "--raw", "/metrics"], None);
    assert_eq!(
        metrics.contains("response_content_type=\"application/cbor\""),
        cbor,
        "{metrics}"
    );

    assert!(k(&["delete", "widgets", "--all"], None).contains("deleted"));
    assert!(!k(&["get", "widgets"], None).contains("w1"));
}

#[test]
fn kubectl_json() {
    scenario(false);
}

#[test]
fn kubectl_with_cbor_gates() {
    scenario(true);
}
