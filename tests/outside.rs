//! Crates outside the workspace build from the *packaged* library crates (what `cargo package`
//! puts in a `.crate`, as crates.io would serve it: path dependencies become version
//! requirements, only the files a manifest includes) with their public API alone, and serve:
//! `tests/outside/` becomes a crate of its own (its own `[workspace]`, the packages unpacked and
//! patched in for crates.io, the workspace's lock file), built offline and started on free ports.
//!
//! * `main.rs`, an API server on conneg-apiserver, serves safely by default: a create, a read, a
//!   422 from the declared rules, a 404 for a namespace that does not exist (the namespaces
//!   `serve` bootstraps and guards), and discovery.
//! * `notes.rs`, a plain axum service on conneg's layer and extractor: JSON and CBOR both ways,
//!   406 and 415 from the layer.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use conneg_tests::Example;
use serde_json::{Value, json};

/// The workspace root.
fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("tests/ is in the workspace")
        .to_path_buf()
}

/// The library crates as a registry would hold them: `cargo package` of each (only what its
/// manifest includes, path dependencies turned into version requirements), unpacked under
/// `dir/packages`. The `[patch.crates-io]` lines that make a dependent use them.
fn package_crates(target: &Path, dir: &Path) -> String {
    let root = workspace();
    let crates = [
        "conneg-cbor-derive",
        "conneg-cbor",
        "conneg",
        "conneg-apiserver-derive",
        "conneg-apiserver",
    ];
    let mut package = Command::new(env!("CARGO"));
    package
        .current_dir(&root)
        .args([
            "package",
            "--no-verify",
            "--offline",
            "--allow-dirty",
            "--quiet",
        ])
        .arg("--target-dir")
        .arg(target.join("outside-package"));
    for name in crates {
        package.args(["-p", name]);
    }
    let out = package.output().expect("run cargo package");
    assert!(
        out.status.success(),
        "cargo package failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let packages = dir.join("packages");
    let _ = std::fs::remove_dir_all(&packages);
    std::fs::create_dir_all(&packages).unwrap();
    let version = env!("CARGO_PKG_VERSION");
    let mut patch = String::from("[patch.crates-io]\n");
    for name in crates {
        let file = target.join(format!("outside-package/package/{name}-{version}.crate"));
        let status = Command::new("tar")
            .arg("xzf")
            .arg(&file)
            .arg("-C")
            .arg(&packages)
            .status()
            .expect("run tar");
        assert!(status.success(), "unpacking {file:?}");
        let unpacked = packages.join(format!("{name}-{version}"));
        patch.push_str(&format!("{name} = {{ path = {unpacked:?} }}\n"));
    }
    patch
}

/// The directory of the outside crate's binaries, built once per test run.
fn outside_bins() -> &'static Path {
    static BUILT: OnceLock<PathBuf> = OnceLock::new();
    BUILT.get_or_init(build_outside)
}

/// Writes the outside crate under target/ and builds it from the packaged crates; the directory
/// of its binaries.
fn build_outside() -> PathBuf {
    let root = workspace();
    let target = root.join("target");
    let dir = target.join("outside-crate");
    std::fs::create_dir_all(dir.join("src")).unwrap();
    let patch = package_crates(&target, &dir);
    let version = env!("CARGO_PKG_VERSION");
    let manifest = format!(
        r#"[package]
name = "outside-inventory"
version = "0.0.0"
edition = "2024"
publish = false

[[bin]]
name = "notes"
path = "src/notes.rs"

[dependencies]
conneg-apiserver = "{version}"
conneg = "{version}"
axum = {{ version = "0.8", default-features = false, features = ["http1", "tokio"] }}
clap = {{ version = "4", features = ["derive"] }}
schemars = "1"
serde = {{ version = "1", features = ["derive"] }}
tokio = {{ version = "1", features = ["rt-multi-thread", "macros", "net"] }}

{patch}
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
    write_if_changed(
        dir.join("src/notes.rs"),
        include_str!("outside/notes.rs").as_bytes(),
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
        // Nothing but the toolchain: no protoc or other system tool (the etcd backend is on,
        // as a dependent gets it by default).
        .env_remove("PROTOC")
        .output()
        .expect("run cargo build");
    assert!(
        out.status.success(),
        "the outside crate does not build:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    target.join("debug")
}

/// One HTTP/1.1 request: the status, the head (lowercased) and the body (not chunked: the
/// servers here answer these requests with a length).
fn raw_call(
    server: &Example,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &[u8],
) -> (u16, String, Vec<u8>) {
    let mut conn = TcpStream::connect(server.addr).unwrap();
    let mut head = format!("{method} {path} HTTP/1.1\r\nHost: test\r\nConnection: close\r\n");
    for (name, value) in headers {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    head.push_str(&format!("Content-Length: {}\r\n\r\n", body.len()));
    conn.write_all(head.as_bytes()).unwrap();
    conn.write_all(body).unwrap();
    let mut raw = Vec::new();
    conn.read_to_end(&mut raw).unwrap();
    let split = raw
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .expect("an HTTP answer");
    let head = String::from_utf8_lossy(&raw[..split]).to_lowercase();
    let status = head
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .expect("a status code");
    (status, head, raw[split + 4..].to_vec())
}

/// One request with a JSON body (none when null), asking for JSON: the status and the answer.
fn call(server: &Example, method: &str, path: &str, body: Value) -> (u16, Value) {
    let body = if body.is_null() {
        Vec::new()
    } else {
        body.to_string().into_bytes()
    };
    let json = [
        ("Accept", "application/json"),
        ("Content-Type", "application/json"),
    ];
    let (status, _, body) = raw_call(server, method, path, &json, &body);
    // Chunked or not, the JSON is the one line of the body that parses.
    let value = String::from_utf8_lossy(&body)
        .lines()
        .find_map(|l| serde_json::from_str(l).ok())
        .unwrap_or(Value::Null);
    (status, value)
}

#[test]
fn a_server_from_outside_the_workspace_builds_and_serves() {
    let bin = outside_bins().join("outside-inventory");
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

#[test]
fn a_plain_axum_service_from_outside_the_workspace_negotiates() {
    let server = Example::start_with(&outside_bins().join("notes"), &[]);

    let (code, created) = call(&server, "POST", "/notes", json!({"title": "first"}));
    assert_eq!((code, &created), (201, &json!({"title": "first"})));

    // CBOR in, CBOR out: the same note, decoded by the workspace's own codec.
    let body = conneg_cbor::to_vec(&json!({"title": "second"})).unwrap();
    let cbor = [
        ("Accept", "application/cbor"),
        ("Content-Type", "application/cbor"),
    ];
    let (code, head, answer) = raw_call(&server, "POST", "/notes", &cbor, &body);
    assert_eq!(code, 201, "{head}");
    assert!(head.contains("content-type: application/cbor"), "{head}");
    let note: Value = conneg_cbor::from_slice(&answer).unwrap();
    assert_eq!(note, json!({"title": "second"}));

    // What cannot be served is answered by the layer, before the handler.
    let html = [("Accept", "text/html")];
    let (code, head, _) = raw_call(&server, "GET", "/notes", &html, b"");
    assert_eq!(code, 406, "{head}");
    let text = [("Content-Type", "text/plain")];
    let (code, head, _) = raw_call(&server, "POST", "/notes", &text, b"third");
    assert_eq!(code, 415, "{head}");
    assert!(head.contains("\naccept: application/json"), "{head}");

    let (code, all) = call(&server, "GET", "/notes", Value::Null);
    assert_eq!(
        (code, all),
        (200, json!([{"title": "first"}, {"title": "second"}]))
    );
}
