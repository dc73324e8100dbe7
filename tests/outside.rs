//! A server written outside the workspace builds with conneg-apiserver's public API alone and
//! serves safely by default: `tests/outside/main.rs` becomes a crate of its own (its own
//! `[workspace]`, conneg-apiserver as a path dependency, the workspace's lock file), is built
//! offline, started on a free port, and driven over HTTP: a create, a read, a 422 from the
//! declared rules, a 404 for a namespace that does not exist (the namespaces `serve` bootstraps
//! and guards), and discovery.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::Command;

use conneg_tests::Example;
use serde_json::{Value, json};

/// The workspace root.
fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("tests/ is in the workspace")
        .to_path_buf()
}

/// Writes the outside crate under target/ and builds it; the path of its binary.
fn build_outside() -> PathBuf {
    let root = workspace();
    let target = root.join("target");
    let dir = target.join("outside-crate");
    std::fs::create_dir_all(dir.join("src")).unwrap();
    let apiserver = root.join("crates/conneg-apiserver");
    let manifest = format!(
        r#"[package]
name = "outside-inventory"
version = "0.0.0"
edition = "2024"
publish = false

[dependencies]
conneg-apiserver = {{ path = {apiserver:?} }}
clap = {{ version = "4", features = ["derive"] }}
schemars = "1"
serde = {{ version = "1", features = ["derive"] }}
tokio = {{ version = "1", features = ["rt-multi-thread", "macros", "net"] }}

[workspace]
"#
    );
    let write_if_changed = |path: PathBuf, text: &[u8]| {
        if std::fs::read(&path).ok().as_deref() != Some(text) {
            std::fs::write(path, text).unwrap();
        }
    };
    write_if_changed(dir.join("Cargo.toml"), manifest.as_bytes());
    write_if_changed(
        dir.join("src/main.rs"),
        include_str!("outside/main.rs").as_bytes(),
    );
    // The versions the workspace is tested with; cargo drops what the crate does not use.
    write_if_changed(
        dir.join("Cargo.lock"),
        &std::fs::read(root.join("Cargo.lock")).unwrap(),
    );
    let out = Command::new(env!("CARGO"))
        .args(["build", "--offline", "--quiet", "--manifest-path"])
        .arg(dir.join("Cargo.toml"))
        .arg("--target-dir")
        .arg(&target)
        // etcd-client's build script needs protoc: the workspace's wrapper, which a
        // dependent does not see through .cargo/config.toml.
        .env("PROTOC", root.join("scripts/protoc"))
        .output()
        .expect("run cargo build");
    assert!(
        out.status.success(),
        "the outside crate does not build:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    target.join("debug/outside-inventory")
}

/// One HTTP/1.1 request with a JSON body (none when null): the status and the JSON answer.
fn call(server: &Example, method: &str, path: &str, body: Value) -> (u16, Value) {
    let mut conn = TcpStream::connect(server.addr).unwrap();
    let body = if body.is_null() {
        String::new()
    } else {
        body.to_string()
    };
    write!(
        conn,
        "{method} {path} HTTP/1.1\r\nHost: test\r\nAccept: application/json\r\n\
         Content-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    let mut raw = Vec::new();
    conn.read_to_end(&mut raw).unwrap();
    let text = String::from_utf8_lossy(&raw);
    let (head, rest) = text.split_once("\r\n\r\n").expect("an HTTP answer");
    let status = head
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .expect("a status code");
    // Chunked or not, the JSON is the one line of the body that parses.
    let value = rest
        .lines()
        .find_map(|l| serde_json::from_str(l).ok())
        .unwrap_or(Value::Null);
    (status, value)
}

#[test]
fn a_server_from_outside_the_workspace_builds_and_serves() {
    let bin = build_outside();
    let server = Example::start_with(&bin, &["--storage", "memory"]);
    let items = "/apis/inventory.example.com/v1/namespaces/default/items";
    let item = json!({"apiVersion": "inventory.example.com/v1", "kind": "Item",
                      "metadata": {"name": "bolts"}, "spec": {"sku": "B-1", "count": 40}});

    let (code, created) = call(&server, "POST", items, item.clone());
    assert_eq!(code, 201, "{created}");
    assert_eq!(created["metadata"]["generation"], 1);
    let (code, read) = call(&server, "GET", &format!("{items}/bolts"), Value::Null);
    assert_eq!(
        (code, &read["spec"]),
        (200, &json!({"sku": "B-1", "count": 40}))
    );

    // The declared rules are enforced: 422 naming the field.
    let mut bad = item.clone();
    bad["metadata"]["name"] = json!("nuts");
    bad["spec"]["count"] = json!(-1);
    let (code, status) = call(&server, "POST", items, bad);
    assert_eq!(code, 422, "{status}");
    assert_eq!(status["details"]["causes"][0]["field"], "spec.count");

    // Namespaces came with the server: `default` exists (above), `nowhere` does not.
    let elsewhere = items.replace("/default/", "/nowhere/");
    let (code, status) = call(&server, "POST", &elsewhere, item);
    assert_eq!(code, 404, "{status}");
    assert_eq!(status["details"]["kind"], "namespaces");

    let (code, group) = call(&server, "GET", "/apis/inventory.example.com", Value::Null);
    assert_eq!(code, 200);
    assert_eq!(group["preferredVersion"]["version"], "v1");
}
