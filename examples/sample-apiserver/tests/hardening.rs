//! Issue 12: one small request must not kill the server, stall it or grow it without bound.
//! Slow and idle clients are cut off by short configured timeouts, the connection cap keeps
//! descriptors bounded, deep YAML does not hold the async workers, and concurrent patches
//! without a resourceVersion all apply.

mod common;

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

use common::{Server, flunders, request, tempdir};

/// Reads until the server closes the connection; returns what it sent, or `None` if it was
/// still open after `within`.
fn closed_within(s: &mut TcpStream, within: Duration) -> Option<Vec<u8>> {
    s.set_read_timeout(Some(within)).ok();
    let mut got = Vec::new();
    match s.read_to_end(&mut got) {
        Ok(_) => Some(got),
        Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset => Some(got),
        Err(_) => None,
    }
}

fn connect(srv: &Server) -> TcpStream {
    TcpStream::connect(&srv.addr).expect("connect")
}

#[test]
fn slow_and_idle_clients_are_disconnected() {
    let dir = tempdir();
    let srv = Server::start(
        dir.path(),
        &[
            "--storage",
            "memory",
            "--header-read-timeout",
            "1s",
            "--idle-timeout",
            "2s",
            "--body-read-timeout",
            "1s",
        ],
    );
    // Slowloris: a head that keeps coming, one byte at a time, but never ends.
    let mut slow = connect(&srv);
    slow.set_write_timeout(Some(Duration::from_secs(1))).ok();
    let start = Instant::now();
    let mut cut = false;
    for b in b"GET /readyz HTTP/1.1\r\nHost: x\r\nX-Slow: "
        .iter()
        .cycle()
        .take(40)
    {
        if slow.write_all(&[*b]).is_err() {
            cut = true;
            break;
        }
        std::thread::sleep(Duration::from_millis(250));
        let mut probe = [0u8; 1];
        slow.set_nonblocking(true).ok();
        let r = slow.read(&mut probe);
        slow.set_nonblocking(false).ok();
        if matches!(r, Ok(0)) {
            cut = true;
            break;
        }
    }
    assert!(
        cut,
        "slowloris connection still open after {:?}",
        start.elapsed()
    );

    // An idle connection, and one idle after a keep-alive request.
    let mut idle = connect(&srv);
    assert!(closed_within(&mut idle, Duration::from_secs(20)).is_some());
    let mut keep = connect(&srv);
    keep.write_all(b"GET /readyz HTTP/1.1\r\nHost: x\r\n\r\n")
        .unwrap();
    let got = closed_within(&mut keep, Duration::from_secs(20)).expect("closed after idling");
    assert!(
        got.starts_with(b"HTTP/1.1 200"),
        "{:?}",
        String::from_utf8_lossy(&got)
    );

    // A body that never ends, and one shorter than its Content-Length.
    let ns = flunders("v1alpha1", "default");
    for head in [
        format!(
            "POST {ns} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n1\r\n{{\r\n"
        ),
        format!(
            "POST {ns} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{{\"a\""
        ),
    ] {
        let mut s = connect(&srv);
        s.write_all(head.as_bytes()).unwrap();
        let got = closed_within(&mut s, Duration::from_secs(20)).expect("closed");
        let text = String::from_utf8_lossy(&got);
        assert!(text.starts_with("HTTP/1.1 400"), "{text}");
        assert!(text.contains("not received within 1s"), "{text}");
    }
}

#[test]
fn the_connection_cap_bounds_open_connections_and_readyz_recovers() {
    let dir = tempdir();
    let srv = Server::start(
        dir.path(),
        &[
            "--storage",
            "memory",
            "--max-connections",
            "4",
            "--idle-timeout",
            "2s",
        ],
    );
    let pid = srv.pid();
    let fds = || std::fs::read_dir(format!("/proc/{pid}/fd")).map_or(0, Iterator::count);
    let before = fds();
    // Twenty idle connections: four are accepted, the rest wait in the backlog.
    let idle: Vec<TcpStream> = (0..20).map(|_| connect(&srv)).collect();
    std::thread::sleep(Duration::from_millis(500));
    assert!(
        fds() <= before + 4,
        "{} descriptors open, {before} before",
        fds()
    );
    // The idle timeout frees the slots, and /readyz is answered.
    let start = Instant::now();
    let r = request(&srv.addr, "GET", "/readyz", &[], b"");
    assert_eq!(r.code, 200, "{}", r.text());
    assert!(start.elapsed() < Duration::from_secs(30));
    drop(idle);
}

#[test]
fn readyz_answers_while_deep_yaml_is_refused() {
    let dir = tempdir();
    let srv = Server::start(dir.path(), &["--storage", "memory"]);
    let path = format!("{}/a", flunders("v1alpha1", "default"));
    let deep = "[".repeat(100_000);
    let hostile: Vec<_> = (0..4)
        .map(|_| {
            let (addr, path, deep) = (srv.addr.clone(), path.clone(), deep.clone());
            std::thread::spawn(move || {
                request(
                    &addr,
                    "PATCH",
                    &format!("{path}?fieldManager=t"),
                    &[("Content-Type", "application/apply-patch+yaml")],
                    deep.as_bytes(),
                )
            })
        })
        .collect();
    let start = Instant::now();
    let r = srv.get("/readyz", "*/*");
    assert_eq!(r.code, 200);
    // Before the fix each of these took ~20 s (release) on the async workers.
    assert!(
        start.elapsed() < Duration::from_secs(5),
        "{:?}",
        start.elapsed()
    );
    for h in hostile {
        let r = h.join().unwrap();
        assert_eq!(r.code, 400, "{}", r.text());
        assert!(
            r.text().contains("nested more than 100 levels"),
            "{}",
            r.text()
        );
    }
}

#[test]
fn concurrent_patches_without_resource_version_all_apply() {
    let dir = tempdir();
    let srv = Server::start(dir.path(), &[]);
    let ns = flunders("v1alpha1", "default");
    let r = srv.post_json(
        &ns,
        r#"{"apiVersion":"wardle.example.com/v1alpha1","kind":"Flunder","metadata":{"name":"hot"}}"#,
    );
    assert_eq!(r.code, 201, "{}", r.text());
    let writers: Vec<_> = (0..8)
        .map(|w| {
            let (addr, path) = (srv.addr.clone(), format!("{ns}/hot"));
            std::thread::spawn(move || {
                (0..40)
                    .map(|i| {
                        let body = format!(r#"{{"metadata":{{"labels":{{"w{w}":"{i}"}}}}}}"#);
                        let r = request(
                            &addr,
                            "PATCH",
                            &path,
                            &[("Content-Type", "application/merge-patch+json")],
                            body.as_bytes(),
                        );
                        (r.code, r.text())
                    })
                    .filter(|(code, _)| *code != 200)
                    .collect::<Vec<_>>()
            })
        })
        .collect();
    let failures: Vec<_> = writers
        .into_iter()
        .flat_map(|h| h.join().unwrap())
        .collect();
    assert!(
        failures.is_empty(),
        "{} failed: {:?}",
        failures.len(),
        failures.first()
    );
    // A resourceVersion the client sets is still a precondition.
    let r = request(
        &srv.addr,
        "PATCH",
        &format!("{ns}/hot"),
        &[("Content-Type", "application/merge-patch+json")],
        br#"{"metadata":{"resourceVersion":"1"}}"#,
    );
    assert_eq!(r.code, 409, "{}", r.text());
}
