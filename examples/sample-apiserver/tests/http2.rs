//! Issue 36: HTTP/2 on the secure port. ALPN prefers `h2`; every endpoint answers the same
//! on both protocols; fifty watches share one connection, each flushed per event; and the
//! defences, each against a hostile client: rapid reset, control-frame floods, a client that
//! never reads, a header list past the bound, more streams than allowed. Limits are small
//! and configured, so each test takes seconds.

mod common;

use std::path::{Path, PathBuf};
use std::time::Duration;

use bytes::Bytes;
use common::h2::{self, Raw, frame};
use common::{Server, flunders, tempdir};
use http_body_util::BodyExt as _;

/// The server over HTTPS (self-signed certificate in `dir/certs`), in-memory storage, with
/// `args`; and the certificate to trust.
fn secure(dir: &Path, args: &[&str]) -> (Server, PathBuf) {
    let certs = dir.join("certs");
    let mut all = vec![
        "--storage",
        "memory",
        "--secure-port",
        "0",
        "--bind-address",
        "127.0.0.1",
        "--cert-dir",
        certs.to_str().unwrap(),
    ];
    all.extend_from_slice(args);
    let server = Server::start(&dir.join("data"), &all);
    (server, certs.join("apiserver.crt"))
}

fn flunder(name: &str) -> String {
    format!(
        r#"{{"apiVersion":"wardle.example.com/v1alpha1","kind":"Flunder","metadata":{{"name":"{name}"}}}}"#
    )
}

/// Server-side TCP connections established on the server's port (Linux: /proc/net/tcp).
fn established_on(addr: &str) -> usize {
    let port = addr.rsplit(':').next().unwrap().parse::<u16>().unwrap();
    let local = format!(":{port:04X}");
    ["/proc/net/tcp", "/proc/net/tcp6"]
        .iter()
        .filter_map(|p| std::fs::read_to_string(p).ok())
        .flat_map(|t| t.lines().skip(1).map(str::to_owned).collect::<Vec<_>>())
        .filter(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            f.len() > 3 && f[1].ends_with(&local) && f[3] == "01"
        })
        .count()
}

/// The server's resident memory, in KiB.
fn rss_kib(server: &Server) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{}/status", server.pid())).unwrap();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.split_whitespace().next()?.parse().ok())
        .unwrap()
}

/// A normal request on a new HTTP/2 connection succeeds.
async fn a_normal_client_is_served(server: &Server, ca: &Path) {
    let mut c = h2::client(&server.addr, ca, None).await;
    let (code, _, body) = h2::send(&mut c, h2::get("/apis", "application/json")).await;
    assert_eq!(code, 200, "{body:?}");
}

#[test]
fn alpn_prefers_h2_and_serves_http1_to_clients_that_ask_for_it() {
    let dir = tempdir();
    let (server, ca) = secure(dir.path(), &[]);
    h2::runtime().block_on(async {
        let both = h2::tls(&server.addr, &ca, None, &[b"http/1.1", b"h2"]).await;
        assert_eq!(both.get_ref().1.alpn_protocol(), Some(&b"h2"[..]));
        let old = h2::tls(&server.addr, &ca, None, &[b"http/1.1"]).await;
        assert_eq!(old.get_ref().1.alpn_protocol(), Some(&b"http/1.1"[..]));
        let none = h2::tls(&server.addr, &ca, None, &[]).await;
        assert_eq!(none.get_ref().1.alpn_protocol(), None);
        for io in [old, none] {
            let (mut c, conn) =
                hyper::client::conn::http1::handshake(hyper_util::rt::TokioIo::new(io))
                    .await
                    .unwrap();
            tokio::spawn(conn);
            let req = h2::get("/readyz", "*/*").map(http_body_util::Full::new);
            let resp = c.send_request(req).await.unwrap();
            assert_eq!(resp.status(), 200);
            assert_eq!(resp.version(), http::Version::HTTP_11);
        }
        a_normal_client_is_served(&server, &ca).await;
    });
}

/// An HTTP/1.1 client over TLS (ALPN `http/1.1`).
async fn http1_client(
    server: &Server,
    ca: &Path,
) -> hyper::client::conn::http1::SendRequest<http_body_util::Full<Bytes>> {
    let io = h2::tls(&server.addr, ca, None, &[b"http/1.1"]).await;
    let (c, conn) = hyper::client::conn::http1::handshake(hyper_util::rt::TokioIo::new(io))
        .await
        .unwrap();
    tokio::spawn(conn);
    c
}

#[test]
fn every_endpoint_answers_alike_on_both_protocols() {
    let dir = tempdir();
    let (server, ca) = secure(dir.path(), &[]);
    let ns = flunders("v1alpha1", "default");
    h2::runtime().block_on(async {
        let mut two = h2::client(&server.addr, &ca, None).await;
        let mut one = http1_client(&server, &ca).await;
        let (code, _, body) = h2::send(&mut two, h2::with_json("POST", &ns, &flunder("a"))).await;
        assert_eq!(code, 201, "{body:?}");
        let cbor = "application/cbor";
        let json = "application/json";
        let requests = [
            h2::get("/apis", json),
            h2::get("/apis", cbor),
            h2::get("/apis/wardle.example.com/v1alpha1", json),
            h2::get(&ns, json),
            h2::get(&ns, cbor),
            h2::get(&format!("{ns}/a"), cbor),
            h2::get(&format!("{ns}/missing"), json),
            h2::get(&format!("{ns}/missing"), cbor),
            h2::get(&ns, "application/x-unknown"),
            h2::get(
                &format!("{ns}?watch=true&resourceVersion=0&timeoutSeconds=1"),
                json,
            ),
            h2::get(
                &format!("{ns}?watch=true&resourceVersion=0&timeoutSeconds=1"),
                cbor,
            ),
            h2::get(&format!("{ns}?limit=1"), json),
            h2::with_json("POST", &ns, r#"{"metadata":{"name":"UPPER"}}"#),
            h2::with_json("PUT", &format!("{ns}/missing"), "{"),
        ];
        for req in requests {
            let what = format!("{} {}", req.method(), req.uri());
            let mut req1 = http::Request::builder()
                .method(req.method())
                .uri(req.uri().path_and_query().unwrap().as_str())
                .header("host", "127.0.0.1")
                .body(req.body().clone())
                .unwrap();
            *req1.headers_mut() = req.headers().clone();
            req1.headers_mut()
                .insert("host", http::HeaderValue::from_static("127.0.0.1"));
            let (code2, head2, body2) = h2::send(&mut two, req).await;
            one.ready().await.unwrap();
            let resp1 = one
                .send_request(req1.map(http_body_util::Full::new))
                .await
                .unwrap();
            let (code1, head1) = (resp1.status().as_u16(), resp1.headers().clone());
            let body1 = resp1.into_body().collect().await.unwrap().to_bytes();
            assert_eq!(code1, code2, "{what}");
            assert_eq!(
                head1.get("content-type"),
                head2.get("content-type"),
                "{what}"
            );
            assert_eq!(body1, body2, "{what}");
            if code2 >= 400 {
                let status = String::from_utf8_lossy(&body2);
                assert!(
                    status.contains("Status") || body2.starts_with(&[0xd9, 0xd9, 0xf7]),
                    "{what}: an error is a Status: {status}"
                );
            }
        }
    });
}

#[test]
fn fifty_watches_share_one_connection_and_see_every_event() {
    let dir = tempdir();
    let (server, ca) = secure(dir.path(), &[]);
    let ns = flunders("v1alpha1", "default");
    h2::runtime().block_on(async {
        let mut c = h2::client(&server.addr, &ca, None).await;
        let (_, _, list) = h2::send(&mut c, h2::get(&ns, "application/json")).await;
        let list: serde_json::Value = serde_json::from_slice(&list).unwrap();
        let rv = list["metadata"]["resourceVersion"]
            .as_str()
            .unwrap()
            .to_owned();
        let mut watches = Vec::new();
        for i in 0..50 {
            let accept = if i % 2 == 0 {
                "application/json"
            } else {
                "application/cbor"
            };
            let path = format!("{ns}?watch=true&resourceVersion={rv}&timeoutSeconds=60");
            let resp = h2::open(&mut c, h2::get(&path, accept)).await;
            assert_eq!(resp.status(), 200);
            assert_eq!(resp.version(), http::Version::HTTP_2);
            watches.push(resp.into_body());
        }
        // Created on the same connection: everything this client does is one TCP connection.
        let names: Vec<String> = (0..5).map(|i| format!("w{i}")).collect();
        for name in &names {
            let (code, _, body) =
                h2::send(&mut c, h2::with_json("POST", &ns, &flunder(name))).await;
            assert_eq!(code, 201, "{body:?}");
        }
        assert_eq!(
            established_on(&server.addr),
            1,
            "one connection on the server"
        );
        // Each watch, still open, has every event: flushed as it happened.
        for (i, mut body) in watches.into_iter().enumerate() {
            let mut seen = Vec::new();
            let complete = |seen: &[u8]| names.iter().all(|n| contains(seen, n.as_bytes()));
            while !complete(&seen) {
                let next = tokio::time::timeout(Duration::from_secs(20), body.frame()).await;
                let Ok(Some(Ok(f))) = next else {
                    panic!(
                        "watch {i} ended or stalled with {:?}",
                        String::from_utf8_lossy(&seen)
                    )
                };
                if let Some(d) = f.data_ref() {
                    seen.extend_from_slice(d);
                }
            }
        }
    });
}

fn contains(hay: &[u8], needle: &[u8]) -> bool {
    hay.windows(needle.len()).any(|w| w == needle)
}

/// A GET of a watch on flunders, as a header block.
fn watch_block() -> Vec<u8> {
    h2::header_block(
        "GET",
        &format!(
            "{}?watch=true&timeoutSeconds=60",
            flunders("v1alpha1", "default")
        ),
        &[("accept", "application/json")],
    )
}

#[test]
fn rapid_reset_gets_goaway_and_others_are_served() {
    let dir = tempdir();
    let (server, ca) = secure(dir.path(), &["--http2-max-streams-per-connection", "8"]);
    h2::runtime().block_on(async {
        let block = watch_block();
        // Opened and cancelled in the same write: the h2 crate's own bound (streams reset
        // before they are accepted).
        let mut raw = Raw::connect(&server.addr, &ca).await;
        let mut sent = 0;
        let goaway = loop {
            let (id, mut bytes) = raw.headers(&block, true);
            bytes.extend(h2::encode(frame::RST_STREAM, 0, id, &8u32.to_be_bytes()));
            if raw.write(&bytes).await.is_err() || sent == 5000 {
                break raw.until(|f| f.kind == frame::GOAWAY).await;
            }
            sent += 1;
        };
        assert!(
            sent < 5000,
            "5000 streams opened and reset without a GOAWAY"
        );
        assert!(goaway.is_some(), "the connection closed without GOAWAY");

        // Cancelled once the server has answered (the handler ran): this server's budget of
        // cancellations, 8 a second here.
        let mut raw = Raw::connect(&server.addr, &ca).await;
        let mut cancelled = 0;
        let goaway = loop {
            let (id, bytes) = raw.headers(&block, true);
            if raw.write(&bytes).await.is_err() {
                break None;
            }
            let answer = raw
                .until(|f| (f.kind == frame::HEADERS && f.stream == id) || f.kind == frame::GOAWAY)
                .await;
            match answer {
                Some(f) if f.kind == frame::GOAWAY => break Some(f),
                Some(_) => {}
                None => break None,
            }
            let rst = h2::encode(frame::RST_STREAM, 0, id, &8u32.to_be_bytes());
            if raw.write(&rst).await.is_err() || cancelled == 2000 {
                break None;
            }
            cancelled += 1;
        };
        assert!(
            goaway.is_some_and(|g| g.error_code() == 0) && cancelled < 100,
            "{cancelled} watches opened and cancelled without a GOAWAY"
        );
        a_normal_client_is_served(&server, &ca).await;
    });
}

#[test]
fn control_frame_floods_hold_bounded_memory_and_idle_floods_are_closed() {
    let dir = tempdir();
    let (server, ca) = secure(dir.path(), &["--idle-timeout", "2s"]);
    h2::runtime().block_on(async {
        let before = rss_kib(&server);
        // PINGs and SETTINGS from a client that never reads: the server stops reading once
        // its acknowledgements cannot be written.
        for kind in [frame::PING, frame::SETTINGS] {
            let mut raw = Raw::connect(&server.addr, &ca).await;
            let one = match kind {
                frame::PING => h2::encode(frame::PING, 0, 0, &[7; 8]),
                _ => h2::encode(frame::SETTINGS, 0, 0, &[0, 4, 0, 1, 0, 0]),
            };
            let batch: Vec<u8> = one.iter().copied().cycle().take(one.len() * 1000).collect();
            let flood = async {
                for _ in 0..2000 {
                    if raw.write(&batch).await.is_err() {
                        return true;
                    }
                }
                false
            };
            // The writes block (the server stopped reading), or the connection is closed.
            let stalled = tokio::time::timeout(Duration::from_secs(5), flood).await;
            assert!(
                !matches!(stalled, Ok(false)),
                "2M control frames all taken in"
            );
            a_normal_client_is_served(&server, &ca).await;
        }
        let grown = rss_kib(&server).saturating_sub(before);
        assert!(
            grown < 64 * 1024,
            "RSS grew by {grown} KiB under control floods"
        );

        // PINGs with no stream keep nothing open: closed at the idle timeout.
        let mut raw = Raw::connect(&server.addr, &ca).await;
        let started = std::time::Instant::now();
        let closed = loop {
            if raw
                .write(&h2::encode(frame::PING, 0, 0, &[1; 8]))
                .await
                .is_err()
            {
                break true;
            }
            if started.elapsed() > Duration::from_secs(15) {
                break false;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
            while let Ok(Some(_)) = tokio::time::timeout(Duration::from_millis(1), raw.read()).await
            {
            }
        };
        assert!(
            closed,
            "a connection that only pings was still open after 15 s"
        );

        // A WINDOW_UPDATE flood overflows the window: a connection error.
        let mut raw = Raw::connect(&server.addr, &ca).await;
        let update = h2::encode(frame::WINDOW_UPDATE, 0, 0, &0x7fff_ffffu32.to_be_bytes());
        let _ = raw.write(&[update.clone(), update].concat()).await;
        let goaway = raw.until(|f| f.kind == frame::GOAWAY).await;
        assert_eq!(
            goaway.map(|g| g.error_code()),
            Some(3),
            "FLOW_CONTROL_ERROR"
        );

        // Empty DATA frames on an open stream: ENHANCE_YOUR_CALM.
        let mut raw = Raw::connect(&server.addr, &ca).await;
        let block = h2::header_block(
            "POST",
            &flunders("v1alpha1", "default"),
            &[("content-type", "application/json")],
        );
        let (id, mut bytes) = raw.headers(&block, false);
        for _ in 0..1000 {
            bytes.extend(h2::encode(frame::DATA, 0, id, &[]));
        }
        let _ = raw.write(&bytes).await;
        let goaway = raw.until(|f| f.kind == frame::GOAWAY).await;
        assert_eq!(
            goaway.map(|g| g.error_code()),
            Some(11),
            "ENHANCE_YOUR_CALM"
        );
        a_normal_client_is_served(&server, &ca).await;
    });
}

#[test]
fn a_client_that_never_reads_holds_bounded_memory() {
    let dir = tempdir();
    let (server, ca) = secure(dir.path(), &[]);
    let ns = flunders("v1alpha1", "default");
    h2::runtime().block_on(async {
        // Twenty watches whose client never reads (nor grants window).
        let mut raw = Raw::connect(&server.addr, &ca).await;
        let block = watch_block();
        for _ in 0..20 {
            let (_, bytes) = raw.headers(&block, true);
            raw.write(&bytes).await.unwrap();
        }
        let before = rss_kib(&server);
        // 200 objects of 100 KB: 20 MB of events for each watch, 400 MB in all if buffered.
        let mut c = h2::client(&server.addr, &ca, None).await;
        let pad = "x".repeat(100_000);
        for i in 0..200 {
            let body = format!(
                r#"{{"apiVersion":"wardle.example.com/v1alpha1","kind":"Flunder","metadata":{{"name":"big{i}","annotations":{{"pad":"{pad}"}}}}}}"#
            );
            let (code, _, out) = h2::send(&mut c, h2::with_json("POST", &ns, &body)).await;
            assert_eq!(code, 201, "{out:?}");
        }
        let grown = rss_kib(&server).saturating_sub(before);
        assert!(grown < 128 * 1024, "RSS grew by {grown} KiB for a client that never reads");
        a_normal_client_is_served(&server, &ca).await;
    });
}

#[test]
fn a_header_list_past_the_bound_is_refused() {
    let dir = tempdir();
    let (server, ca) = secure(dir.path(), &["--http2-max-header-list-size", "16384"]);
    h2::runtime().block_on(async {
        let mut raw = Raw::connect(&server.addr, &ca).await;
        let big = "v".repeat(20_000);
        let block = h2::header_block("GET", "/apis", &[("x-big", &big)]);
        let (id, bytes) = raw.headers(&block, true);
        raw.write(&bytes).await.unwrap();
        let answer = raw
            .until(|f| f.stream == id && matches!(f.kind, frame::HEADERS | frame::RST_STREAM))
            .await
            .expect("an answer to the oversized request");
        // `:status: 431`, as the h2 crate encodes it (the name indexed, "431" Huffman-coded),
        // with the stream ended: no handler ran.
        assert_eq!(answer.kind, frame::HEADERS, "{answer:?}");
        assert_eq!(answer.payload, [0x48, 0x83, 0x69, 0x90, 0xff], "{answer:?}");
        assert_ne!(answer.flags & frame::END_STREAM, 0);

        // Far past the bound: the connection is closed.
        let huge = "v".repeat(200_000);
        let block = h2::header_block("GET", "/apis", &[("x-big", &huge)]);
        let (_, bytes) = raw.headers(&block, true);
        let _ = raw.write(&bytes).await;
        let goaway = raw.until(|f| f.kind == frame::GOAWAY).await;
        assert!(
            goaway.as_ref().is_none_or(|g| g.error_code() != 0),
            "{goaway:?}"
        );
        a_normal_client_is_served(&server, &ca).await;
    });
}

#[test]
fn streams_past_the_limit_are_refused() {
    let dir = tempdir();
    let (server, ca) = secure(dir.path(), &["--http2-max-streams-per-connection", "4"]);
    h2::runtime().block_on(async {
        let mut raw = Raw::connect(&server.addr, &ca).await;
        let settings = raw
            .until(|f| f.kind == frame::SETTINGS && f.flags & frame::ACK == 0)
            .await
            .unwrap();
        let advertised = settings.payload.chunks(6).find_map(|s| {
            (s[..2] == [0, 3]).then(|| u32::from_be_bytes(s[2..6].try_into().unwrap()))
        });
        assert_eq!(advertised, Some(4));
        raw.write(&h2::encode(frame::SETTINGS, frame::ACK, 0, &[]))
            .await
            .unwrap();
        let block = watch_block();
        let mut ids = Vec::new();
        for _ in 0..5 {
            let (id, bytes) = raw.headers(&block, true);
            raw.write(&bytes).await.unwrap();
            ids.push(id);
        }
        let refused = raw
            .until(|f| f.kind == frame::RST_STREAM)
            .await
            .expect("a stream refused");
        assert_eq!(
            (refused.stream, refused.error_code()),
            (ids[4], 7),
            "REFUSED_STREAM"
        );
        a_normal_client_is_served(&server, &ca).await;
    });
}
