//! The client subcommands against the sample API server.
//!
//! The server runs in-process, from the `sample_apiserver` library (router + memory storage,
//! `ServerOptions { cbor: false }` being `--no-cbor`), on a background runtime: a test can
//! name only its own package's binaries with `CARGO_BIN_EXE_`, and this one needs `conneg`.
//! What the command sends is read back from the server's `/metrics`.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::process::{Command, Output};

use clap::Parser;
use conneg_apiserver::config::StorageArgs;
use conneg_apiserver::server::{ServerOptions, router};
use serde_json::{Value, json};

const COLL: &str = "/apis/wardle.example.com/v1beta1/namespaces/default/flunders";

struct TestServer {
    url: String,
    addr: String,
    _runtime: tokio::runtime::Runtime,
}

#[derive(Parser)]
struct Storage {
    #[command(flatten)]
    storage: StorageArgs,
}

fn start(cbor: bool) -> TestServer {
    // Namespaces are not what these tests are about: none to create first.
    start_with(ServerOptions {
        cbor,
        standalone: false,
        ..Default::default()
    })
}

/// A server with `options`, bootstrapped (standalone: the system namespaces exist and the
/// custom resource definition controller runs).
fn start_with(options: ServerOptions) -> TestServer {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    let addr = runtime.block_on(async {
        let args = Storage::try_parse_from(["test", "--storage", "memory"]).unwrap();
        let opened = args
            .storage
            .open(sample_apiserver::api::GROUP)
            .await
            .unwrap();
        let state = sample_apiserver::server().build(opened, options);
        state.bootstrap().await.unwrap();
        let app = router(state);
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
        addr
    });
    TestServer {
        url: format!("http://{addr}"),
        addr: addr.to_string(),
        _runtime: runtime,
    }
}

impl TestServer {
    /// `/metrics`, as (labels, count) per `apiserver_request_total` series.
    fn metrics(&self) -> Vec<(String, u64)> {
        let mut s = TcpStream::connect(&self.addr).unwrap();
        write!(
            s,
            "GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
        )
        .unwrap();
        let mut raw = String::new();
        s.read_to_string(&mut raw).unwrap();
        let body = raw.split_once("\r\n\r\n").unwrap().1;
        body.lines()
            .filter_map(|l| l.strip_prefix("apiserver_request_total{"))
            .map(|l| {
                let (labels, n) = l.rsplit_once("} ").unwrap();
                (labels.to_owned(), n.parse().unwrap())
            })
            .collect()
    }

    /// The requests whose labels contain every one of `needles`.
    fn count(&self, needles: &[&str]) -> u64 {
        self.metrics()
            .iter()
            .filter(|(l, _)| needles.iter().all(|n| l.contains(n)))
            .map(|(_, c)| c)
            .sum()
    }
}

/// Runs `conneg args...` with its cache under `cache`, and no gate variables.
fn conneg(cache: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_conneg"))
        .args(args)
        .env("XDG_CACHE_HOME", cache)
        .env_remove("KUBE_FEATURE_ClientsAllowCBOR")
        .env_remove("KUBE_FEATURE_ClientsPreferCBOR")
        .output()
        .unwrap()
}

fn ok(out: &Output) -> (Vec<Value>, String) {
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "exit {:?}: {stderr}", out.status);
    let values = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    (values, stderr)
}

fn flunder(name: &str) -> Value {
    json!({"apiVersion": "wardle.example.com/v1beta1", "kind": "Flunder", "metadata": {"name": name}})
}

#[test]
fn twenty_creates_against_a_json_only_server_cost_one_415() {
    let s = start(false);
    let cache = tempfile::tempdir().unwrap();
    let files = tempfile::tempdir().unwrap();
    for i in 0..20 {
        let file = files.path().join(format!("f{i}.json"));
        std::fs::write(&file, flunder(&format!("f{i}")).to_string()).unwrap();
        let out = conneg(
            cache.path(),
            &[
                "create",
                "-v",
                "--server",
                &s.url,
                COLL,
                "-f",
                file.to_str().unwrap(),
            ],
        );
        let (values, stderr) = ok(&out);
        assert_eq!(values.len(), 1);
        assert_eq!(values[0]["metadata"]["name"], format!("f{i}"));
        if i == 0 {
            assert!(
                stderr.contains("415 Unsupported Media Type for application/cbor; the 415 offered application/json; retried once as application/json"),
                "{stderr}"
            );
        } else {
            assert!(
                stderr.contains("learnt from an earlier 415 (cached)"),
                "{stderr}"
            );
            assert!(!stderr.contains("retried"), "{stderr}");
        }
        assert!(
            stderr.contains("response 201 Content-Type: application/json"),
            "{stderr}"
        );
    }
    assert_eq!(s.count(&["code=\"415\""]), 1, "{:?}", s.metrics());
    assert_eq!(
        s.count(&[
            "verb=\"POST\"",
            "code=\"201\"",
            "request_content_type=\"application/json\""
        ]),
        20
    );
    let cached = std::fs::read_to_string(cache.path().join("conneg/fallback.json")).unwrap();
    assert!(
        cached.contains(&s.url) && cached.contains("\"application/json\""),
        "{cached}"
    );

    // Without the cache, a run starts from CBOR again: a second 415.
    let file = files.path().join("f0.json");
    std::fs::write(&file, flunder("nocache").to_string()).unwrap();
    let out = conneg(
        cache.path(),
        &[
            "create",
            "--no-cache",
            "--server",
            &s.url,
            COLL,
            "-f",
            file.to_str().unwrap(),
        ],
    );
    ok(&out);
    assert_eq!(s.count(&["code=\"415\""]), 2);

    // Apply learns its own fallback (apply-patch+yaml), once.
    for i in 0..3 {
        let mut o = flunder("f1");
        o["metadata"]["labels"] = json!({"n": i.to_string()});
        std::fs::write(&file, o.to_string()).unwrap();
        let out = conneg(
            cache.path(),
            &[
                "apply",
                "--server",
                &s.url,
                &format!("{COLL}/f1"),
                "-f",
                file.to_str().unwrap(),
            ],
        );
        let (values, _) = ok(&out);
        assert_eq!(values[0]["metadata"]["labels"]["n"], i.to_string());
    }
    assert_eq!(s.count(&["verb=\"APPLY\"", "code=\"415\""]), 1);
    assert_eq!(
        s.count(&[
            "verb=\"APPLY\"",
            "request_content_type=\"application/apply-patch+yaml\""
        ]),
        3
    );
}

#[test]
fn get_create_apply_delete_watch_and_errors() {
    let s = start(true);
    let cache = tempfile::tempdir().unwrap();
    let files = tempfile::tempdir().unwrap();
    // A directory: a JSON stream of two objects and a CBOR file.
    std::fs::write(
        files.path().join("a.json"),
        format!("{}\n{}\n", flunder("a"), flunder("b")),
    )
    .unwrap();
    std::fs::write(
        files.path().join("c.cbor"),
        conneg_cbor_bytes(&flunder("c")),
    )
    .unwrap();
    let dir = files.path().to_str().unwrap();
    let (created, stderr) = ok(&conneg(
        cache.path(),
        &["create", "-v", "--server", &s.url, COLL, "-f", dir],
    ));
    let names: Vec<&str> = created
        .iter()
        .map(|v| v["metadata"]["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["a", "b", "c"]);
    assert!(
        stderr.contains("request POST Content-Type: application/cbor"),
        "{stderr}"
    );
    assert!(
        stderr.contains("response 201 Content-Type: application/cbor"),
        "{stderr}"
    );
    assert_eq!(
        s.count(&[
            "verb=\"POST\"",
            "code=\"201\"",
            "request_content_type=\"application/cbor\""
        ]),
        3
    );

    let (list, _) = ok(&conneg(cache.path(), &["get", "--server", &s.url, COLL]));
    assert_eq!(list[0]["items"].as_array().unwrap().len(), 3);
    let (one, _) = ok(&conneg(
        cache.path(),
        &["get", "--server", &s.url, &format!("{COLL}/b")],
    ));
    assert_eq!(one[0]["metadata"]["name"], "b");

    let mut o = flunder("b");
    o["metadata"]["labels"] = json!({"applied": "yes"});
    let f = files.path().join("apply.json");
    std::fs::write(&f, o.to_string()).unwrap();
    let (applied, _) = ok(&conneg(
        cache.path(),
        &[
            "apply",
            "--server",
            &s.url,
            &format!("{COLL}/b"),
            "-f",
            f.to_str().unwrap(),
        ],
    ));
    assert_eq!(applied[0]["metadata"]["labels"]["applied"], "yes");
    assert_eq!(
        s.count(&[
            "verb=\"APPLY\"",
            "request_content_type=\"application/apply-patch+cbor\""
        ]),
        1
    );

    let (deleted, _) = ok(&conneg(
        cache.path(),
        &["delete", "--server", &s.url, &format!("{COLL}/a")],
    ));
    // The server answers a Status of Success naming the object, as the generic registry.
    assert_eq!(deleted[0]["details"]["name"], "a");

    // An error Status: exit 1, its message on stderr, nothing on stdout.
    let out = conneg(
        cache.path(),
        &["get", "--server", &s.url, &format!("{COLL}/a")],
    );
    assert_eq!(out.status.code(), Some(1));
    assert!(out.stdout.is_empty());
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "error: flunders.wardle.example.com \"a\" not found\n"
    );
    let out = conneg(
        cache.path(),
        &[
            "create",
            "--server",
            &s.url,
            COLL,
            "-f",
            &format!("{dir}/c.cbor"),
        ],
    );
    assert_eq!(out.status.code(), Some(1));
    assert!(out.stdout.is_empty());
    assert!(String::from_utf8_lossy(&out.stderr).contains("already exists"));

    // Watch: the current objects, one event per line, until the server's timeout.
    let (events, stderr) = ok(&conneg(
        cache.path(),
        &["watch", "-v", "--timeout", "1", "--server", &s.url, COLL],
    ));
    assert!(
        stderr.contains("Content-Type: application/cbor-seq"),
        "{stderr}"
    );
    let seen: Vec<(&str, &str)> = events
        .iter()
        .map(|e| {
            (
                e["type"].as_str().unwrap(),
                e["object"]["metadata"]["name"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(seen, [("ADDED", "b"), ("ADDED", "c")]);

    // Nothing was learnt from a CBOR server: no cache file.
    assert!(!cache.path().join("conneg/fallback.json").exists());
}

#[test]
fn format_flags_set_the_gates() {
    let s = start(true);
    let cache = tempfile::tempdir().unwrap();
    let files = tempfile::tempdir().unwrap();
    let f = files.path().join("x.json");

    std::fs::write(&f, flunder("j").to_string()).unwrap();
    ok(&conneg(
        cache.path(),
        &[
            "create",
            "--json",
            "--server",
            &s.url,
            COLL,
            "-f",
            f.to_str().unwrap(),
        ],
    ));
    ok(&conneg(
        cache.path(),
        &["get", "--json", "--server", &s.url, COLL],
    ));
    assert_eq!(s.count(&["cbor"]), 0, "{:?}", s.metrics());

    std::fs::write(&f, flunder("c").to_string()).unwrap();
    ok(&conneg(
        cache.path(),
        &[
            "create",
            "--cbor",
            "--server",
            &s.url,
            COLL,
            "-f",
            f.to_str().unwrap(),
        ],
    ));
    assert_eq!(
        s.count(&[
            "request_content_type=\"application/json\"",
            "response_content_type=\"application/cbor\""
        ]),
        1
    );
    assert_eq!(s.count(&["request_content_type=\"application/cbor\""]), 0);

    // The environment is read when no flag is given, like client-go's gates.
    std::fs::write(&f, flunder("e").to_string()).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_conneg"))
        .args([
            "create",
            "--server",
            &s.url,
            COLL,
            "-f",
            f.to_str().unwrap(),
        ])
        .env("XDG_CACHE_HOME", cache.path())
        .env("KUBE_FEATURE_ClientsAllowCBOR", "false")
        .output()
        .unwrap();
    ok(&out);
    assert_eq!(s.count(&["request_content_type=\"application/cbor\""]), 0);
    // An invalid value is ignored with a warning: the default (CBOR) applies.
    std::fs::write(&f, flunder("w").to_string()).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_conneg"))
        .args([
            "create",
            "--server",
            &s.url,
            COLL,
            "-f",
            f.to_str().unwrap(),
        ])
        .env("XDG_CACHE_HOME", cache.path())
        .env("KUBE_FEATURE_ClientsAllowCBOR", "yes")
        .env_remove("KUBE_FEATURE_ClientsPreferCBOR")
        .output()
        .unwrap();
    let (_, stderr) = ok(&out);
    assert_eq!(
        stderr,
        "conneg: warning: ignoring KUBE_FEATURE_ClientsAllowCBOR=\"yes\": not a boolean\n"
    );
    assert_eq!(s.count(&["request_content_type=\"application/cbor\""]), 1);

    // Two format flags at once are a usage error.
    let out = conneg(
        cache.path(),
        &["get", "--json", "--cbor", "--server", &s.url, COLL],
    );
    assert_eq!(out.status.code(), Some(2));
}

fn conneg_cbor_bytes(v: &Value) -> Vec<u8> {
    // The command itself encodes JSON to CBOR.
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("in.json");
    std::fs::write(&p, v.to_string()).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_conneg"))
        .args(["encode", p.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(out.status.success());
    assert_eq!(&out.stdout[..3], &[0xd9, 0xd9, 0xf7]);
    out.stdout
}

/// KEP-4222's dynamic client: the `conneg` command creates a definition, then creates,
/// reads, applies and watches its custom resources in CBOR, with no type compiled in.
#[test]
fn a_custom_resource_through_the_command_in_cbor() {
    const CRS: &str = "/apis/stable.example.com/v1/namespaces/default/crontabs";
    let s = start_with(ServerOptions::default());
    let cache = tempfile::tempdir().unwrap();
    let files = tempfile::tempdir().unwrap();
    let crd = json!({
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": "crontabs.stable.example.com"},
        "spec": {"group": "stable.example.com", "scope": "Namespaced",
                 "names": {"plural": "crontabs", "kind": "CronTab"},
                 "versions": [{"name": "v1", "served": true, "storage": true,
                    "schema": {"openAPIV3Schema": {"type": "object", "properties": {
                        "spec": {"type": "object", "properties": {
                            "image": {"type": "string"},
                            "replicas": {"type": "integer", "default": 1}}}}}}}]}
    });
    let f = files.path().join("crd.json");
    std::fs::write(&f, crd.to_string()).unwrap();
    ok(&conneg(
        cache.path(),
        &[
            "create",
            "--server",
            &s.url,
            "/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
            "-f",
            f.to_str().unwrap(),
        ],
    ));
    // Established by the server's controller: served a moment later.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while !conneg(cache.path(), &["get", "--server", &s.url, CRS])
        .status
        .success()
    {
        assert!(std::time::Instant::now() < deadline, "never served");
        std::thread::sleep(std::time::Duration::from_millis(50));
    }

    let cr = json!({"apiVersion": "stable.example.com/v1", "kind": "CronTab",
                    "metadata": {"name": "c"}, "spec": {"image": "x"}});
    let f = files.path().join("c.cbor");
    std::fs::write(&f, conneg_cbor_bytes(&cr)).unwrap();
    let (created, stderr) = ok(&conneg(
        cache.path(),
        &[
            "create",
            "-v",
            "--server",
            &s.url,
            CRS,
            "-f",
            f.to_str().unwrap(),
        ],
    ));
    assert!(
        stderr.contains("response 201 Content-Type: application/cbor"),
        "{stderr}"
    );
    assert_eq!(created[0]["spec"], json!({"image": "x", "replicas": 1}));

    // An apply of a field nobody owns yet (the create's manager owns spec.image).
    let mut applied = cr.clone();
    applied["metadata"]["labels"] = json!({"applied": "yes"});
    let f = files.path().join("apply.json");
    std::fs::write(&f, applied.to_string()).unwrap();
    let (out, _) = ok(&conneg(
        cache.path(),
        &[
            "apply",
            "--server",
            &s.url,
            &format!("{CRS}/c"),
            "-f",
            f.to_str().unwrap(),
        ],
    ));
    assert_eq!(out[0]["metadata"]["labels"]["applied"], "yes");
    assert_eq!(
        s.count(&[
            "verb=\"APPLY\"",
            "request_content_type=\"application/apply-patch+cbor\""
        ]),
        1
    );
    let (got, _) = ok(&conneg(
        cache.path(),
        &["get", "--server", &s.url, &format!("{CRS}/c")],
    ));
    assert_eq!(got[0]["spec"], json!({"image": "x", "replicas": 1}));
    assert_eq!(got[0]["metadata"]["labels"]["applied"], "yes");

    let (events, stderr) = ok(&conneg(
        cache.path(),
        &["watch", "-v", "--timeout", "1", "--server", &s.url, CRS],
    ));
    assert!(
        stderr.contains("Content-Type: application/cbor-seq"),
        "{stderr}"
    );
    assert_eq!(events.len(), 1);
    assert_eq!(
        (
            events[0]["type"].clone(),
            events[0]["object"]["spec"]["image"].clone()
        ),
        (json!("ADDED"), json!("x"))
    );
}
