//! Watch end to end over real sockets: an axum server with the negotiation layer and a
//! [`WatchHub`], clients on hyper-util (and raw TCP where the socket itself matters).
//!
//! No test asserts a duration: "promptly" means an event is received while the stream is
//! demonstrably still open (the server has not ended it), and every wait is bounded by one
//! generous overall timeout so a hang fails instead of blocking CI.
#![cfg(feature = "axum")]

use std::net::SocketAddr;
use std::time::Duration;

use axum::Router;
use axum::extract::{Query, State};
use axum::http::StatusCode;
use axum::routing::get;
use bytes::Bytes;
use conneg::axum::Conneg;
use conneg::client::{WatchErrorKind, WatchStream};
use conneg::watch::{EventType, WatchBody, WatchEvent, WatchHub, WatchLimits, WatchResponse};
use conneg::{NegotiateLayer, Negotiated};
use futures_util::StreamExt;
use http_body_util::Full;
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;
use serde::{Deserialize, Serialize};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// Bounds every wait: a hang fails the test instead of blocking it.
const OVERALL: Duration = Duration::from_secs(60);

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
struct Item {
    name: String,
    #[serde(default)]
    data: String,
}

fn item(i: usize, size: usize) -> Item {
    Item {
        name: format!("item-{i}"),
        data: "x".repeat(size),
    }
}

#[derive(Deserialize)]
struct Params {
    #[serde(rename = "timeoutSeconds")]
    timeout_seconds: Option<u64>,
    /// Test-only: a BOOKMARK every this many milliseconds.
    heartbeat: Option<u64>,
}

async fn watch(
    State(hub): State<WatchHub<Item>>,
    negotiated: Negotiated,
    Query(p): Query<Params>,
) -> http::Response<WatchBody> {
    let mut response = WatchResponse::new(&negotiated).timeout_seconds(p.timeout_seconds);
    if let Some(ms) = p.heartbeat {
        response = response.heartbeat(Duration::from_millis(ms), || {
            WatchEvent::Bookmark(Item {
                name: String::new(),
                data: "rv-1".into(),
            })
        });
    }
    response.subscribe(&hub)
}

async fn create(State(hub): State<WatchHub<Item>>, Conneg(item): Conneg<Item>) -> StatusCode {
    hub.publish(WatchEvent::Added(item));
    StatusCode::CREATED
}

async fn server(hub: WatchHub<Item>) -> SocketAddr {
    let app = Router::new()
        .route("/items", get(watch).post(create))
        .with_state(hub)
        .layer(
            NegotiateLayer::new()
                .profile(conneg::Profile::Kubernetes)
                .streaming(true),
        );
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    addr
}

type HttpClient = Client<HttpConnector, Full<Bytes>>;

fn client() -> HttpClient {
    Client::builder(TokioExecutor::new()).build_http()
}

async fn open_watch(
    client: &HttpClient,
    addr: SocketAddr,
    accept: &str,
    query: &str,
) -> (String, WatchStream<Item, hyper::body::Incoming>) {
    let req = http::Request::get(format!("http://{addr}/items?watch=true{query}"))
        .header("accept", accept)
        .body(Full::default())
        .unwrap();
    let res = client.request(req).await.unwrap();
    assert_eq!(res.status(), StatusCode::OK);
    let ct = res.headers()["content-type"].to_str().unwrap().to_owned();
    (ct, WatchStream::from_response(res).unwrap())
}

async fn until(mut cond: impl FnMut() -> bool) {
    while !cond() {
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}

async fn post(client: &HttpClient, addr: SocketAddr, item: &Item) {
    let req = http::Request::post(format!("http://{addr}/items"))
        .header("content-type", "application/json")
        .body(Full::new(Bytes::from(serde_json::to_vec(item).unwrap())))
        .unwrap();
    let res = client.request(req).await.unwrap();
    assert_eq!(res.status(), StatusCode::CREATED);
}

async fn take(stream: &mut WatchStream<Item, hyper::body::Incoming>, n: usize) -> Vec<Item> {
    let mut out = Vec::with_capacity(n);
    while out.len() < n {
        match stream.next().await {
            Some(Ok(WatchEvent::Added(item))) => out.push(item),
            other => panic!("after {} events: {other:?}", out.len()),
        }
    }
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cbor_and_json_watchers_see_the_same_events_in_order() {
    tokio::time::timeout(OVERALL, async {
        let hub = WatchHub::new();
        let addr = server(hub.clone()).await;
        let client = client();
        let mut watchers = Vec::new();
        for (accept, want) in [
            ("application/cbor", "application/cbor-seq"), // client-go
            ("application/cbor, */*", "application/cbor-seq"), // kubectl
            ("application/cbor-seq", "application/cbor-seq"), // honoured (Kubernetes: 406)
            ("application/json", "application/json"),
            ("application/json;stream=watch", "application/json"),
        ] {
            let (ct, stream) = open_watch(&client, addr, accept, "").await;
            assert_eq!(ct, want, "Accept: {accept}");
            watchers.push(stream);
        }
        until(|| hub.watcher_count() == 5).await;

        const N: usize = 200;
        let writer = {
            let client = client.clone();
            tokio::spawn(async move {
                for i in 0..N {
                    post(&client, addr, &item(i, 100)).await;
                }
            })
        };
        let expected: Vec<Item> = (0..N).map(|i| item(i, 100)).collect();
        let readers: Vec<_> = watchers
            .into_iter()
            .map(|mut w| tokio::spawn(async move { take(&mut w, N).await }))
            .collect();
        for r in readers {
            assert_eq!(r.await.unwrap(), expected);
        }
        writer.await.unwrap();
        // Two codecs in use: each event was encoded twice, not five times.
        assert_eq!(hub.stats().encoded, 2 * N as u64);
    })
    .await
    .unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_event_arrives_while_the_stream_is_still_open() {
    tokio::time::timeout(OVERALL, async {
        let hub = WatchHub::new();
        let addr = server(hub.clone()).await;
        let client = client();
        for accept in ["application/cbor", "application/json"] {
            let (_, mut stream) = open_watch(&client, addr, accept, "").await;
            until(|| hub.watcher_count() == 1).await;
            for i in 0..3 {
                hub.publish(WatchEvent::Modified(item(i, 10)));
                // The hub holds the watch open (no timeout, not closed): receiving the event
                // now means it was flushed on its own, not at the end of the stream.
                match stream.next().await {
                    Some(Ok(WatchEvent::Modified(got))) => assert_eq!(got, item(i, 10)),
                    other => panic!("{other:?}"),
                }
                assert_eq!(hub.watcher_count(), 1, "the watch is still open");
            }
            drop(stream);
            until(|| {
                hub.publish(WatchEvent::Added(item(99, 0)));
                hub.watcher_count() == 0
            })
            .await;
        }
    })
    .await
    .unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_event_is_one_chunk_on_the_wire() {
    tokio::time::timeout(OVERALL, async {
        let hub = WatchHub::new();
        let addr = server(hub.clone()).await;
        let mut tcp = TcpStream::connect(addr).await.unwrap();
        tcp.write_all(
            b"GET /items?watch=1 HTTP/1.1\r\nhost: x\r\naccept: application/cbor\r\n\r\n",
        )
        .await
        .unwrap();
        let head = read_until(&mut tcp, b"\r\n\r\n").await;
        let head = String::from_utf8(head).unwrap().to_ascii_lowercase();
        assert!(head.contains("transfer-encoding: chunked"), "{head}");
        assert!(
            head.contains("content-type: application/cbor-seq"),
            "{head}"
        );
        until(|| hub.watcher_count() == 1).await;

        let event = WatchEvent::Deleted(item(1, 5));
        hub.publish(event.clone());
        let expected = event.to_bytes(&conneg::Codec::Cbor).unwrap();
        // One chunk: "<hex len>\r\n<event>\r\n".
        let size_line = read_until(&mut tcp, b"\r\n").await;
        let size = usize::from_str_radix(
            std::str::from_utf8(&size_line[..size_line.len() - 2]).unwrap(),
            16,
        )
        .unwrap();
        assert_eq!(size, expected.len());
        let mut chunk = vec![0; size + 2];
        tcp.read_exact(&mut chunk).await.unwrap();
        assert_eq!(&chunk[..size], &expected[..]);
        // The exact Kubernetes shape: the event and the object each self-described.
        assert_eq!(&chunk[..3], [0xd9, 0xd9, 0xf7]);
        assert_eq!(
            chunk
                .windows(3)
                .filter(|w| *w == [0xd9, 0xd9, 0xf7])
                .count(),
            2
        );
    })
    .await
    .unwrap();
}

async fn read_until(tcp: &mut TcpStream, end: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    let mut byte = [0u8; 1];
    while !out.ends_with(end) {
        let n = tcp.read(&mut byte).await.unwrap();
        assert_eq!(
            n,
            1,
            "connection closed after {:?}",
            String::from_utf8_lossy(&out)
        );
        out.push(byte[0]);
    }
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hundred_watchers_see_every_event() {
    tokio::time::timeout(OVERALL, async {
        let hub = WatchHub::new();
        let addr = server(hub.clone()).await;
        let client = client();
        let mut streams = Vec::new();
        for i in 0..100 {
            let accept = if i % 2 == 0 {
                "application/cbor"
            } else {
                "application/json"
            };
            streams.push(open_watch(&client, addr, accept, "").await.1);
        }
        until(|| hub.watcher_count() == 100).await;
        const N: usize = 50;
        let readers: Vec<_> = streams
            .into_iter()
            .map(|mut s| tokio::spawn(async move { take(&mut s, N).await }))
            .collect();
        for i in 0..N {
            assert_eq!(hub.publish(WatchEvent::Added(item(i, 2048))), 100);
        }
        let expected: Vec<Item> = (0..N).map(|i| item(i, 2048)).collect();
        for r in readers {
            assert_eq!(r.await.unwrap(), expected);
        }
        let stats = hub.stats();
        assert_eq!(stats.encoded, 2 * N as u64, "once per codec");
        assert_eq!(stats.overflowed, 0);
    })
    .await
    .unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reader_that_stops_reading_is_bounded_and_then_ended() {
    tokio::time::timeout(OVERALL, async {
        let limits = WatchLimits {
            max_bytes: 64 * 1024,
            max_events: 10_000,
        };
        let hub = WatchHub::with_limits(limits);
        let addr = server(hub.clone()).await;
        // A client that sends the request and then reads nothing. A fixed, small receive
        // buffer keeps the kernel from absorbing the stream (autotuning could grow it to MBs).
        let socket = tokio::net::TcpSocket::new_v4().unwrap();
        socket.set_recv_buffer_size(64 * 1024).unwrap();
        let mut tcp = socket.connect(addr).await.unwrap();
        tcp.write_all(
            b"GET /items?watch=1 HTTP/1.1\r\nhost: x\r\naccept: application/cbor\r\nconnection: close\r\n\r\n",
        )
        .await
        .unwrap();
        until(|| hub.watcher_count() == 1).await;

        // 40 MiB of events: far more than the bound, the socket buffers and hyper's buffer.
        let event_size = WatchEvent::Added(item(0, 4096))
            .to_bytes(&conneg::Codec::Cbor)
            .unwrap()
            .len();
        let mut peak = 0;
        let mut sent = 0;
        for i in 0..10_000 {
            hub.publish(WatchEvent::Added(item(i, 4096)));
            sent += 1;
            let stats = hub.stats();
            peak = peak.max(stats.max_watcher_bytes);
            assert!(
                stats.queued_bytes <= limits.max_bytes + event_size,
                "queued {} bytes after {sent} events",
                stats.queued_bytes
            );
            if i % 64 == 0 {
                tokio::task::yield_now().await; // let hyper write what the socket takes
            }
        }
        let stats = hub.stats();
        assert_eq!(stats.overflowed, 1, "the slow watch was ended");
        assert_eq!(stats.queued_bytes, 0, "its queue was released");
        assert!(peak > 0 && peak <= limits.max_bytes);

        // Reading now shows a clean end well before all events were delivered.
        let mut all = Vec::new();
        tcp.read_to_end(&mut all).await.unwrap();
        assert!(all.ends_with(b"0\r\n\r\n"), "terminating chunk");
        let body_bytes = all.len();
        assert!(
            body_bytes < sent * event_size / 4,
            "received {body_bytes} bytes of {}",
            sent * event_size
        );
        until(|| hub.watcher_count() == 0).await;
    })
    .await
    .unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_watcher_that_disconnects_is_cleaned_up() {
    tokio::time::timeout(OVERALL, async {
        let hub = WatchHub::new();
        let addr = server(hub.clone()).await;
        let mut tcp = TcpStream::connect(addr).await.unwrap();
        tcp.write_all(
            b"GET /items?watch=1 HTTP/1.1\r\nhost: x\r\naccept: application/json\r\n\r\n",
        )
        .await
        .unwrap();
        read_until(&mut tcp, b"\r\n\r\n").await;
        until(|| hub.watcher_count() == 1).await;
        drop(tcp);
        // The server learns of the disconnect when it next touches the socket.
        until(|| {
            hub.publish(WatchEvent::Modified(item(0, 10)));
            hub.watcher_count() == 0
        })
        .await;
        assert_eq!(hub.queued_bytes(), 0);
    })
    .await
    .unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn timeout_seconds_ends_the_stream_cleanly_and_heartbeats_are_bookmarks() {
    tokio::time::timeout(OVERALL, async {
        let hub = WatchHub::new();
        let addr = server(hub.clone()).await;
        let client = client();
        let (_, mut stream) =
            open_watch(&client, addr, "application/cbor", "&timeoutSeconds=1").await;
        // No events, then a clean end (no error, not truncated).
        assert!(stream.next().await.is_none());
        until(|| hub.watcher_count() == 0).await;

        let (_, mut stream) = open_watch(&client, addr, "application/json", "&heartbeat=20").await;
        match stream.next().await {
            Some(Ok(WatchEvent::Bookmark(b))) => assert_eq!(b.data, "rv-1"),
            other => panic!("{other:?}"),
        }
        hub.publish(WatchEvent::Added(item(7, 1)));
        loop {
            match stream.next().await {
                Some(Ok(WatchEvent::Bookmark(_))) => continue,
                Some(Ok(WatchEvent::Added(got))) => break assert_eq!(got, item(7, 1)),
                other => panic!("{other:?}"),
            }
        }
    })
    .await
    .unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn closing_the_hub_ends_watches_and_a_cut_stream_is_an_error() {
    tokio::time::timeout(OVERALL, async {
        let hub = WatchHub::new();
        let addr = server(hub.clone()).await;
        let client = client();
        let (_, mut stream) = open_watch(&client, addr, "application/cbor", "").await;
        until(|| hub.watcher_count() == 1).await;
        hub.publish(WatchEvent::Added(item(1, 1)));
        hub.close();
        assert!(matches!(stream.next().await, Some(Ok(WatchEvent::Added(_)))));
        assert!(stream.next().await.is_none());

        // A server that dies mid-event: the client reports a truncated stream.
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let event = WatchEvent::Added(item(2, 3)).to_bytes(&conneg::Codec::Cbor).unwrap();
        tokio::spawn(async move {
            let (mut s, _) = listener.accept().await.unwrap();
            let mut buf = [0u8; 1024];
            let _ = s.read(&mut buf).await.unwrap();
            let cut = &event[..event.len() - 1];
            let mut out = format!(
                "HTTP/1.1 200 OK\r\ncontent-type: application/cbor-seq\r\ncontent-length: {}\r\n\r\n",
                event.len() + cut.len()
            )
            .into_bytes();
            out.extend_from_slice(&event);
            out.extend_from_slice(cut);
            s.write_all(&out).await.unwrap();
        });
        let (_, mut stream) = open_watch(&client, addr, "application/cbor", "").await;
        assert!(matches!(stream.next().await, Some(Ok(WatchEvent::Added(_)))));
        let err = stream.next().await.unwrap().unwrap_err();
        assert_eq!(err.kind(), WatchErrorKind::Truncated, "{err}");
        assert!(stream.next().await.is_none());
    })
    .await
    .unwrap();
}

#[tokio::test]
async fn watch_of_an_error_event_decodes_as_status() {
    let status = conneg::Status::service_unavailable("storage is down");
    for codec in [conneg::Codec::Cbor, conneg::Codec::Json] {
        let mut wire = Vec::new();
        WatchEvent::<Item>::Error(status.clone())
            .encode(&codec, &mut wire)
            .unwrap();
        WatchEvent::Added(item(1, 2))
            .encode(&codec, &mut wire)
            .unwrap();
        let format = if codec == conneg::Codec::Cbor {
            conneg::client::StreamFormat::CborSeq
        } else {
            conneg::client::StreamFormat::Json
        };
        let mut d = conneg::client::WatchDecoder::<Item>::new(format);
        d.push(&wire);
        let first = d.next_event().unwrap().unwrap();
        assert_eq!(first.event_type(), EventType::Error);
        assert_eq!(first, WatchEvent::Error(status.clone()));
        assert_eq!(d.next_event().unwrap(), Some(WatchEvent::Added(item(1, 2))));
        d.finish().unwrap();
    }
}
