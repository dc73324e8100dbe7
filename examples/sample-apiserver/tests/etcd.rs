//! The etcd backend against a real etcd (installed by scripts/install-test-deps), with the
//! real binary as two replicas: sharing objects and watches, no lost updates, the stored
//! format, etcd restarts and outages, compaction. Each test runs its own etcd on free
//! loopback ports with its data in a temp dir, killed when the test ends. The `Storage` trait
//! itself on etcd is in the storage conformance suite, crates/conneg-apiserver/tests/storage.rs.

mod common;

use std::io::{Read, Write};
use std::net::TcpStream;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use common::{Resp, Server, flunders, request, tempdir};
use conneg_apiserver::testing::{Etcd, PATIENCE, free_port};
use serde_json::{Value, json};

fn replica(etcd: &Etcd, dir: &tempfile::TempDir, extra: &[&str]) -> Server {
    let url = etcd.url();
    let mut args = vec!["--etcd-servers", url.as_str()];
    args.extend_from_slice(extra);
    Server::start(dir.path(), &args)
}

fn key(name: &str) -> String {
    format!("/registry/wardle.example.com/flunders/default/{name}")
}

fn obj_path(name: &str) -> String {
    format!("{}/{name}", flunders("v1alpha1", "default"))
}

fn create(s: &Server, name: &str, labels: Value) -> Resp {
    s.post_json(
        &flunders("v1alpha1", "default"),
        &json!({"metadata": {"name": name, "labels": labels}, "spec": {"reference": "r"}})
            .to_string(),
    )
}

fn put(s: &Server, name: &str, body: &Value) -> Resp {
    s.req(
        "PUT",
        &obj_path(name),
        &[("Content-Type", "application/json")],
        body.to_string().as_bytes(),
    )
}

fn get(s: &Server, name: &str) -> Resp {
    s.get(&obj_path(name), "application/json")
}

fn rv(v: &Value) -> i64 {
    v["metadata"]["resourceVersion"]
        .as_str()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("no resourceVersion in {v}"))
}

/// An open streaming GET (a watch), read incrementally.
struct Stream {
    s: TcpStream,
    raw: Vec<u8>,
}

impl Stream {
    fn open(addr: &str, path: &str) -> Stream {
        let mut s = TcpStream::connect(addr).expect("connect");
        s.set_read_timeout(Some(Duration::from_millis(500))).ok();
        write!(
            s,
            "GET {path} HTTP/1.1\r\nHost: {addr}\r\nAccept: application/json\r\nConnection: close\r\n\r\n"
        )
        .expect("write request");
        Stream { s, raw: Vec::new() }
    }

    fn text(&self) -> String {
        String::from_utf8_lossy(&self.raw).into_owned()
    }

    /// Reads until every needle appeared (true) or the stream ended (false).
    fn read_until(&mut self, needles: &[&str]) -> bool {
        let deadline = Instant::now() + PATIENCE;
        let mut buf = [0u8; 8192];
        loop {
            let text = self.text();
            if needles.iter().all(|n| text.contains(n)) {
                return true;
            }
            if Instant::now() > deadline {
                return false;
            }
            match self.s.read(&mut buf) {
                Ok(0) => return false,
                Ok(n) => self.raw.extend_from_slice(&buf[..n]),
                Err(e)
                    if matches!(
                        e.kind(),
                        std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                    ) => {}
                Err(_) => return false,
            }
        }
    }
}

/// Reads a streaming response on `addr` until every needle appeared or the stream ended;
/// returns what was read and whether all needles were found.
fn stream_until(addr: &str, path: &str, needles: &[&str]) -> (String, bool) {
    let mut st = Stream::open(addr, path);
    let ok = st.read_until(needles);
    (st.text(), ok)
}

fn wait_for(what: &str, mut cond: impl FnMut() -> bool) {
    let deadline = Instant::now() + PATIENCE;
    while !cond() {
        assert!(Instant::now() < deadline, "gave up waiting for {what}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[test]
fn an_object_created_through_one_replica_is_read_and_watched_through_the_other() {
    let etcd = Etcd::start();
    let (da, db) = (tempdir(), tempdir());
    let a = replica(&etcd, &da, &[]);
    let b = replica(&etcd, &db, &[]);

    let list = b.get(&flunders("v1alpha1", "default"), "application/json");
    assert_eq!(list.code, 200, "{}", list.text());
    let rv0 = rv(&list.json());

    let r = create(&a, "shared", json!({"from": "a"}));
    assert_eq!(r.code, 201, "{}", r.text());
    let created = r.json();

    let r = get(&b, "shared");
    assert_eq!(r.code, 200, "{}", r.text());
    let seen = r.json();
    assert_eq!(seen["metadata"]["uid"], created["metadata"]["uid"]);
    assert_eq!(rv(&seen), rv(&created), "one revision space");
    let r = b.get(&obj_path("shared"), "application/cbor");
    assert_eq!(r.code, 200);
    assert_eq!(r.header("content-type"), Some("application/cbor"));

    // An update through B is seen by A.
    let mut changed = seen.clone();
    changed["metadata"]["labels"]["from"] = json!("b");
    let r = put(&b, "shared", &changed);
    assert_eq!(r.code, 200, "{}", r.text());
    let updated = r.json();
    assert!(rv(&updated) > rv(&created));
    assert_eq!(get(&a, "shared").json()["metadata"]["labels"]["from"], "b");

    // B's watch from before the create replays both changes made through A and B.
    let (text, ok) = stream_until(
        &b.addr,
        &format!(
            "{}?watch=true&resourceVersion={rv0}&timeoutSeconds=60",
            flunders("v1alpha1", "default")
        ),
        &["\"ADDED\"", "\"MODIFIED\"", "\"from\":\"b\""],
    );
    assert!(ok, "watch on B from {rv0}: {text}");

    // A live watch on B sees a delete made through A.
    let from = rv(&updated);
    let watcher = {
        let addr = b.addr.clone();
        std::thread::spawn(move || {
            stream_until(
                &addr,
                &format!(
                    "{}?watch=true&resourceVersion={from}&timeoutSeconds=60",
                    flunders("v1alpha1", "default")
                ),
                &["\"DELETED\"", "\"name\":\"shared\""],
            )
        })
    };
    let r = a.req("DELETE", &obj_path("shared"), &[], b"");
    assert_eq!(r.code, 200, "{}", r.text());
    let (text, ok) = watcher.join().expect("watcher");
    assert!(ok, "live watch on B: {text}");
    assert_eq!(get(&b, "shared").code, 404);
}

#[test]
fn concurrent_increments_through_both_replicas_lose_nothing() {
    const PER_REPLICA: usize = 25;
    let etcd = Etcd::start();
    let (da, db) = (tempdir(), tempdir());
    let a = replica(&etcd, &da, &[]);
    let b = replica(&etcd, &db, &[]);
    let r = create(&a, "counter", json!({"count": "0"}));
    assert_eq!(r.code, 201, "{}", r.text());

    let conflicts = Arc::new(AtomicUsize::new(0));
    let results = Arc::new(Mutex::new(Vec::new()));
    let workers: Vec<_> = [a.addr.clone(), b.addr.clone()]
        .into_iter()
        .map(|addr| {
            let conflicts = conflicts.clone();
            let results = results.clone();
            std::thread::spawn(move || {
                for _ in 0..PER_REPLICA {
                    loop {
                        let r = request(
                            &addr,
                            "GET",
                            &obj_path("counter"),
                            &[("Accept", "application/json")],
                            b"",
                        );
                        assert_eq!(r.code, 200, "{}", r.text());
                        let mut obj = r.json();
                        let sent_rv = rv(&obj);
                        let n: u64 = obj["metadata"]["labels"]["count"]
                            .as_str()
                            .and_then(|s| s.parse().ok())
                            .expect("count label");
                        obj["metadata"]["labels"]["count"] = json!((n + 1).to_string());
                        let r = request(
                            &addr,
                            "PUT",
                            &obj_path("counter"),
                            &[("Content-Type", "application/json")],
                            obj.to_string().as_bytes(),
                        );
                        match r.code {
                            200 => {
                                let got = r.json();
                                assert!(rv(&got) > sent_rv);
                                results.lock().unwrap().push(n + 1);
                                break;
                            }
                            409 => {
                                // A real conflict: the object moved past the revision we sent.
                                conflicts.fetch_add(1, Ordering::Relaxed);
                                let now = request(
                                    &addr,
                                    "GET",
                                    &obj_path("counter"),
                                    &[("Accept", "application/json")],
                                    b"",
                                );
                                assert_ne!(
                                    rv(&now.json()),
                                    sent_rv,
                                    "409 although the object is still at {sent_rv}"
                                );
                            }
                            c => panic!("PUT answered {c}: {}", r.text()),
                        }
                    }
                }
            })
        })
        .collect();
    for w in workers {
        w.join().expect("worker");
    }
    let n = 2 * PER_REPLICA as u64;
    let final_obj = get(&b, "counter").json();
    assert_eq!(
        final_obj["metadata"]["labels"]["count"],
        json!(n.to_string()),
        "{} conflicts retried",
        conflicts.load(Ordering::Relaxed)
    );
    // Every acknowledged increment wrote a distinct value: none was applied twice or lost.
    let mut got = results.lock().unwrap().clone();
    got.sort_unstable();
    assert_eq!(got, (1..=n).collect::<Vec<_>>());
}

#[test]
fn values_are_cbor_in_etcd_and_json_values_are_served_and_migrated() {
    let etcd = Etcd::start();
    let (da, db, dc) = (tempdir(), tempdir(), tempdir());
    let a = replica(&etcd, &da, &[]);
    let b = replica(&etcd, &db, &[]);

    let r = create(&a, "c1", json!({}));
    assert_eq!(r.code, 201, "{}", r.text());
    let stored = etcd.value(&key("c1"));
    assert!(
        stored.starts_with(&[0xd9, 0xd9, 0xf7]),
        "stored bytes: {:02x?}",
        &stored[..stored.len().min(16)]
    );

    // A value written as JSON (an older server, or by hand) is served in JSON and CBOR.
    let legacy = json!({
        "kind": "Flunder",
        "apiVersion": "wardle.example.com/v1alpha1",
        "metadata": {
            "name": "legacy",
            "namespace": "default",
            "uid": "6b1f3a2c-0000-4000-8000-000000000001",
            "creationTimestamp": "2024-01-02T03:04:05Z",
            "labels": {"old": "yes"}
        },
        "spec": {"reference": "x"},
        "status": {}
    });
    let out = etcd.ctl(&["put", &key("legacy"), &legacy.to_string()]);
    assert!(out.status.success(), "etcdctl put: {out:?}");
    let r = get(&b, "legacy");
    assert_eq!(r.code, 200, "{}", r.text());
    let served = r.json();
    assert_eq!(served["metadata"]["uid"], legacy["metadata"]["uid"]);
    assert_eq!(served["metadata"]["labels"]["old"], "yes");
    let r = b.get(&obj_path("legacy"), "application/cbor");
    assert_eq!(r.code, 200);
    assert_eq!(r.header("content-type"), Some("application/cbor"));
    assert!(
        r.body
            .windows(b"6b1f3a2c-0000-4000-8000-000000000001".len())
            .any(|w| w == b"6b1f3a2c-0000-4000-8000-000000000001"),
        "the uid is in the CBOR body"
    );
    let listed = a.get(&flunders("v1alpha1", "default"), "application/json");
    assert_eq!(listed.json()["items"].as_array().map(Vec::len), Some(2));

    // Reading and writing back unchanged migrates it to CBOR (a new revision) ...
    let r = put(&a, "legacy", &served);
    assert_eq!(r.code, 200, "{}", r.text());
    let migrated = r.json();
    assert!(rv(&migrated) > rv(&served), "the JSON value was rewritten");
    assert!(etcd.value(&key("legacy")).starts_with(&[0xd9, 0xd9, 0xf7]));
    // ... after which an unchanged write is skipped (same revision, same bytes).
    let before = etcd.value(&key("legacy"));
    let r = put(&b, "legacy", &migrated);
    assert_eq!(r.code, 200, "{}", r.text());
    assert_eq!(
        rv(&r.json()),
        rv(&migrated),
        "unchanged update wrote nothing"
    );
    assert_eq!(etcd.value(&key("legacy")), before);

    // A replica storing JSON rewrites a CBOR value as JSON the same way.
    let c = replica(&etcd, &dc, &["--storage-media-type", "json"]);
    let obj = get(&c, "c1").json();
    let r = put(&c, "c1", &obj);
    assert_eq!(r.code, 200, "{}", r.text());
    assert!(rv(&r.json()) > rv(&obj));
    assert_eq!(etcd.value(&key("c1")).first(), Some(&b'{'));
    assert_eq!(
        get(&a, "c1").json()["metadata"]["uid"],
        obj["metadata"]["uid"]
    );
}

#[test]
fn an_etcd_crash_and_restart_loses_no_acknowledged_write() {
    let mut etcd = Etcd::start();
    let (da, db) = (tempdir(), tempdir());
    let a = replica(&etcd, &da, &[]);

    let acked = Arc::new(Mutex::new(Vec::<String>::new()));
    let failed = Arc::new(AtomicUsize::new(0));
    let stop = Arc::new(AtomicBool::new(false));
    let writer = {
        let (acked, failed, stop) = (acked.clone(), failed.clone(), stop.clone());
        let addr = a.addr.clone();
        std::thread::spawn(move || {
            let mut i = 0;
            while !stop.load(Ordering::Acquire) {
                let name = format!("obj-{i}");
                i += 1;
                let r = request(
                    &addr,
                    "POST",
                    &flunders("v1alpha1", "default"),
                    &[("Content-Type", "application/json")],
                    json!({"metadata": {"name": name}}).to_string().as_bytes(),
                );
                match r.code {
                    201 => acked.lock().unwrap().push(name),
                    c if c >= 500 => {
                        assert_eq!(r.json()["kind"], "Status", "{}", r.text());
                        failed.fetch_add(1, Ordering::Relaxed);
                        std::thread::sleep(Duration::from_millis(50));
                    }
                    c => panic!("create answered {c}: {}", r.text()),
                }
            }
        })
    };
    wait_for("10 acknowledged creates", || {
        acked.lock().unwrap().len() >= 10
    });
    etcd.kill();
    wait_for("a create failing while etcd is down", || {
        failed.load(Ordering::Relaxed) > 0
    });
    etcd.spawn();
    let before_restart = acked.lock().unwrap().len();
    wait_for("creates succeeding again", || {
        acked.lock().unwrap().len() >= before_restart + 10
    });
    stop.store(true, Ordering::Release);
    writer.join().expect("writer");

    // Everything acknowledged is there, through the old replica and a new one.
    let b = replica(&etcd, &db, &[]);
    let acked = acked.lock().unwrap().clone();
    for name in &acked {
        assert_eq!(get(&a, name).code, 200, "{name} lost (via A)");
        assert_eq!(get(&b, name).code, 200, "{name} lost (via B)");
    }
    let list = b.get(&flunders("v1alpha1", "default"), "application/json");
    let items = list.json()["items"].as_array().map(Vec::len).unwrap_or(0);
    assert!(
        items >= acked.len(),
        "{items} listed, {} acked",
        acked.len()
    );
}

#[test]
fn with_etcd_down_requests_fail_with_a_5xx_status_and_readyz_fails_until_it_returns() {
    let mut etcd = Etcd::start();
    let da = tempdir();
    let a = replica(&etcd, &da, &[]);
    let r = create(&a, "x", json!({}));
    assert_eq!(r.code, 201, "{}", r.text());
    let created_rv = rv(&r.json());
    assert_eq!(a.get("/readyz", "*/*").code, 200);

    // A watch open when etcd dies ends (with an ERROR event), so its client watches again.
    // It starts before the create, so its first event proves it is established.
    let mut watch = Stream::open(
        &a.addr,
        &format!(
            "{}?watch=true&resourceVersion={}&timeoutSeconds=3600",
            flunders("v1alpha1", "default"),
            created_rv - 1
        ),
    );
    assert!(watch.read_until(&["\"ADDED\""]), "{}", watch.text());
    etcd.kill();

    for r in [
        get(&a, "x"),
        create(&a, "y", json!({})),
        a.get(&flunders("v1alpha1", "default"), "application/json"),
    ] {
        assert!(r.code == 503 || r.code == 504, "{}: {}", r.code, r.text());
        let status = r.json();
        assert_eq!(status["kind"], "Status");
        assert_eq!(status["code"], r.code);
    }
    let ready = a.get("/readyz", "*/*");
    assert_ne!(ready.code, 200, "{}", ready.text());
    assert!(ready.text().contains("[-]etcd"), "{}", ready.text());
    assert_ne!(a.get("/readyz/etcd", "*/*").code, 200);
    assert!(
        watch.read_until(&["\"ERROR\""]),
        "the watch did not end with an ERROR event: {}",
        watch.text()
    );

    etcd.spawn();
    wait_for("/readyz to pass again", || {
        a.get("/readyz", "*/*").code == 200
    });
    assert_eq!(get(&a, "x").code, 200);
    let r = create(&a, "y", json!({}));
    assert_eq!(r.code, 201, "{}", r.text());
    let (text, ok) = stream_until(
        &a.addr,
        &format!(
            "{}?watch=true&resourceVersion={created_rv}&timeoutSeconds=60",
            flunders("v1alpha1", "default")
        ),
        &["\"ADDED\"", "\"name\":\"y\""],
    );
    assert!(ok, "watch after recovery: {text}");
}

#[test]
fn a_frozen_etcd_gives_504_instead_of_a_hang_then_service_resumes() {
    let etcd = Etcd::start();
    let da = tempdir();
    let a = replica(&etcd, &da, &["--etcd-request-timeout", "1s"]);
    let r = create(&a, "f", json!({}));
    assert_eq!(r.code, 201, "{}", r.text());

    etcd.signal("-STOP");
    // Every request is bounded by the etcd request timeout (the test client gives up after
    // 60 s, so a hang fails the test).
    let r = get(&a, "f");
    assert_eq!(r.code, 504, "{}", r.text());
    assert_eq!(r.json()["reason"], "Timeout");
    let r = create(&a, "g", json!({}));
    assert_eq!(r.code, 504, "{}", r.text());
    assert_ne!(a.get("/readyz", "*/*").code, 200);

    etcd.signal("-CONT");
    wait_for("/readyz to pass again", || {
        a.get("/readyz", "*/*").code == 200
    });
    assert_eq!(get(&a, "f").code, 200);
    // The create that timed out may or may not have been applied; either answer is honest.
    let r = create(&a, "g", json!({}));
    assert!(r.code == 201 || r.code == 409, "{}", r.text());
    assert_eq!(get(&a, "g").code, 200);
}

#[test]
fn compaction_makes_old_revisions_gone() {
    let etcd = Etcd::start();
    let da = tempdir();
    // Compact every second to the last 2 revisions.
    let a = replica(
        &etcd,
        &da,
        &["--etcd-compaction-interval", "1s", "--history", "2"],
    );
    let r = create(&a, "c", json!({"n": "0"}));
    assert_eq!(r.code, 201, "{}", r.text());
    let mut obj = r.json();
    let first = rv(&obj);
    for i in 1..=5 {
        obj["metadata"]["labels"]["n"] = json!(i.to_string());
        let r = put(&a, "c", &obj);
        assert_eq!(r.code, 200, "{}", r.text());
        obj = r.json();
    }
    let compact_key = "/registry/wardle.example.com/compact_rev_key";
    wait_for("the compactor to pass the first revision", || {
        String::from_utf8_lossy(&etcd.value(compact_key))
            .parse::<i64>()
            .is_ok_and(|c| c > first + 1)
    });
    let watch = a.get(
        &format!(
            "{}?watch=true&resourceVersion={first}&timeoutSeconds=5",
            flunders("v1alpha1", "default")
        ),
        "application/json",
    );
    assert!(
        watch.code == 410 || watch.text().contains("\"code\":410"),
        "{}: {}",
        watch.code,
        watch.text()
    );
    let list = a.get(
        &format!(
            "{}?resourceVersion={first}&resourceVersionMatch=Exact",
            flunders("v1alpha1", "default")
        ),
        "application/json",
    );
    assert_eq!(list.code, 410, "{}", list.text());
    assert_eq!(list.json()["reason"], "Expired");
    // The current state is untouched.
    assert_eq!(get(&a, "c").json()["metadata"]["labels"]["n"], "5");
}

#[test]
fn a_compaction_by_hand_is_reported_as_gone_too() {
    let etcd = Etcd::start();
    let da = tempdir();
    let a = replica(&etcd, &da, &["--etcd-compaction-interval", "0"]);
    let r = create(&a, "h", json!({"n": "0"}));
    assert_eq!(r.code, 201, "{}", r.text());
    let mut obj = r.json();
    let first = rv(&obj);
    for i in 1..=3 {
        obj["metadata"]["labels"]["n"] = json!(i.to_string());
        let r = put(&a, "h", &obj);
        assert_eq!(r.code, 200, "{}", r.text());
        obj = r.json();
    }
    let now = rv(&obj);
    // Before: the first revision is still readable.
    let at_first = format!(
        "{}?resourceVersion={first}&resourceVersionMatch=Exact",
        flunders("v1alpha1", "default")
    );
    assert_eq!(a.get(&at_first, "application/json").code, 200);
    let out = etcd.ctl(&["compact", &now.to_string()]);
    assert!(out.status.success(), "{out:?}");
    let list = a.get(&at_first, "application/json");
    assert_eq!(list.code, 410, "{}", list.text());
    assert_eq!(
        list.json()["message"],
        format!("too old resource version: {first} ({now})"),
        "the revision etcd compacted to, learnt from etcd"
    );
    let watch = a.get(
        &format!(
            "{}?watch=true&resourceVersion={first}&timeoutSeconds=5",
            flunders("v1alpha1", "default")
        ),
        "application/json",
    );
    assert!(
        watch.code == 410 || watch.text().contains("\"code\":410"),
        "{}: {}",
        watch.code,
        watch.text()
    );
    // Watching from just before the compaction revision: etcd still has that revision's
    // change but not the value before it, so it cannot be told as MODIFIED (nor a deletion
    // as DELETED with its object): the watch ends with 410, as Kubernetes' does, rather than
    // send an ADDED for an object the client already has (docs/faults.md).
    let (text, ok) = stream_until(
        &a.addr,
        &format!(
            "{}?watch=true&resourceVersion={}&timeoutSeconds=60",
            flunders("v1alpha1", "default"),
            now - 1
        ),
        &["HTTP/1.1 200", "\"code\":410"],
    );
    assert!(ok, "{text}");
    assert!(!text.contains("\"ADDED\""), "{text}");
}

#[test]
fn a_replica_given_every_member_of_a_three_member_cluster_survives_losing_one() {
    let mut members = Etcd::cluster(3);
    let urls = members.iter().map(Etcd::url).collect::<Vec<_>>().join(",");
    let da = tempdir();
    let a = Server::start(da.path(), &["--etcd-servers", &urls]);
    for i in 0..5 {
        let r = create(&a, &format!("before-{i}"), json!({}));
        assert_eq!(r.code, 201, "{}", r.text());
    }

    // Lose the member listed first (the one the replica talks to first).
    members[0].kill();
    wait_for("/readyz with two of three members", || {
        a.get("/readyz", "*/*").code == 200
    });
    for i in 0..5 {
        assert_eq!(get(&a, &format!("before-{i}")).code, 200);
    }
    // Writes and watches go on against the remaining quorum.
    for i in 0..5 {
        let r = create(&a, &format!("after-{i}"), json!({}));
        assert_eq!(r.code, 201, "{}", r.text());
    }
    let (text, ok) = stream_until(
        &a.addr,
        &format!(
            "{}?watch=true&resourceVersion=1&timeoutSeconds=60",
            flunders("v1alpha1", "default")
        ),
        &["\"name\":\"before-0\"", "\"name\":\"after-4\""],
    );
    assert!(ok, "{text}");
    // What the surviving members hold is what was acknowledged.
    let out = members[1].ctl(&[
        "get",
        "--prefix",
        "--keys-only",
        "/registry/wardle.example.com/flunders/",
    ]);
    let keys = String::from_utf8_lossy(&out.stdout).into_owned();
    assert_eq!(keys.lines().filter(|l| !l.is_empty()).count(), 10, "{keys}");
}

#[test]
fn an_unreachable_url_in_etcd_servers_is_skipped() {
    let etcd = Etcd::start();
    let dead = format!("http://127.0.0.1:{}", free_port());
    let urls = format!("{dead},{}", etcd.url());
    let da = tempdir();
    let a = Server::start(da.path(), &["--etcd-servers", &urls]);
    for i in 0..5 {
        let r = create(&a, &format!("o{i}"), json!({}));
        assert_eq!(r.code, 201, "{}", r.text());
        assert_eq!(get(&a, &format!("o{i}")).code, 200);
        assert_eq!(a.get("/readyz", "*/*").code, 200);
    }
}

/// etcd over TLS with client certificates: `--etcd-cafile`, `--etcd-certfile` and
/// `--etcd-keyfile` make the server work; without the client certificate it does not start.
#[test]
fn etcd_over_tls_with_client_certificates() {
    let etcd = Etcd::start_tls();
    let tls = etcd.client_tls();
    let path = |p: Option<std::path::PathBuf>| p.unwrap().display().to_string();
    let (ca, cert, client_key) = (path(tls.ca_file), path(tls.cert_file), path(tls.key_file));
    let d = tempdir();
    let s = replica(
        &etcd,
        &d,
        &[
            "--etcd-cafile",
            &ca,
            "--etcd-certfile",
            &cert,
            "--etcd-keyfile",
            &client_key,
        ],
    );
    let r = create(&s, "secure", json!({"over": "tls"}));
    assert_eq!(r.code, 201, "{}", r.text());
    assert_eq!(get(&s, "secure").code, 200);
    assert!(!etcd.value(&key("secure")).is_empty());

    // Only the CA: etcd wants a client certificate, so the storage is not usable.
    let d2 = tempdir();
    let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_sample-apiserver"));
    let out = cmd
        .args(["--listen", "127.0.0.1:0", "--etcd-request-timeout", "2s"])
        .args([
            "--etcd-servers",
            &etcd.url(),
            "--etcd-cafile",
            &ca,
            "--data-dir",
        ])
        .arg(d2.path())
        .output()
        .expect("run sample-apiserver");
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("storage unusable") || err.contains("cannot open storage"),
        "{err}"
    );
}

/// What etcd has sent its clients so far, in bytes (its `/metrics`).
fn etcd_sent_bytes(etcd: &Etcd) -> f64 {
    let addr = etcd.url().trim_start_matches("http://").to_owned();
    let r = request(&addr, "GET", "/metrics", &[], b"");
    assert_eq!(r.code, 200, "etcd /metrics");
    let text = r.text();
    text.lines()
        .find_map(|l| l.strip_prefix("etcd_network_client_grpc_sent_bytes_total "))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or_else(|| panic!("no sent bytes in etcd's metrics"))
}

/// Whether this etcd's progress notifications follow the events they cover (3.4.31, 3.5.13
/// and later), from its `/version`: only then may a watch cache answer consistent reads.
fn etcd_progress_is_reliable(etcd: &Etcd) -> bool {
    let addr = etcd.url().trim_start_matches("http://").to_owned();
    let r = request(&addr, "GET", "/version", &[], b"");
    assert_eq!(r.code, 200, "etcd /version");
    let version = r.json()["etcdserver"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    let parts: Vec<u64> = version.split('.').filter_map(|p| p.parse().ok()).collect();
    match parts[..] {
        [3, 4, patch] => patch >= 31,
        [3, 5, patch] => patch >= 13,
        [3, minor, _] => minor > 5,
        [major, _, _] => major > 3,
        _ => panic!("etcd version {version:?}"),
    }
}

/// A consistent list through replica B sees what was written through replica A at once. With
/// an etcd whose progress notifications can be trusted, B's watch cache answers it (etcd sends
/// a revision and a notification, not the objects); with an older etcd (Debian's 3.4.23, what
/// the tests install), whose notifications may run ahead of its events, etcd answers it.
#[test]
fn a_consistent_read_through_one_replica_sees_a_write_through_the_other() {
    let etcd = Etcd::start();
    let cached = etcd_progress_is_reliable(&etcd);
    let (da, db) = (tempdir(), tempdir());
    let a = replica(&etcd, &da, &[]);
    let b = replica(&etcd, &db, &[]);
    let padding = "x".repeat(2000);
    for i in 0..40 {
        let r = a.post_json(
            &flunders("v1alpha1", "default"),
            &json!({"metadata": {"name": format!("f{i}"), "annotations": {"pad": padding}},
                    "spec": {"reference": "r"}})
            .to_string(),
        );
        assert_eq!(r.code, 201, "{}", r.text());
    }
    let list = || {
        let r = b.get(&flunders("v1alpha1", "default"), "application/json");
        assert_eq!(r.code, 200, "{}", r.text());
        r.json()
    };
    assert_eq!(list()["items"].as_array().map(Vec::len), Some(40));
    for round in 0..5 {
        // A write through A, then (the revision moved past every flunder) a write of another
        // resource: B's cache of flunders hears of the latter only through etcd's progress
        // notification.
        let name = format!("new{round}");
        let r = create(&a, &name, json!({}));
        assert_eq!(r.code, 201, "{}", r.text());
        let r = a.post_json(
            "/apis/wardle.example.com/v1alpha1/fischers",
            &json!({"metadata": {"name": format!("fi{round}")}, "disallowedFlunders": []})
                .to_string(),
        );
        assert_eq!(r.code, 201, "{}", r.text());
        let before = etcd_sent_bytes(&etcd);
        let seen = list();
        let sent = etcd_sent_bytes(&etcd) - before;
        let names: Vec<&str> = seen["items"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|i| i["metadata"]["name"].as_str())
            .collect();
        assert!(names.contains(&name.as_str()), "round {round}: {names:?}");
        assert!(
            rv(&seen) >= rv(&r.json()),
            "a consistent list is not older than the write"
        );
        // 40 objects of 2 KB are 80 KB from etcd; B's cache answers with a revision read
        // (and a progress notification), well under 8 KB.
        if cached {
            assert!(
                sent < 8_000.0,
                "round {round}: etcd sent {sent} bytes for a cached list"
            );
        } else {
            assert!(
                sent > 60_000.0,
                "round {round}: etcd sent only {sent} bytes: the list came from a cache that \
                 trusted an old etcd's progress notification"
            );
        }
    }
}
