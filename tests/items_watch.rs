//! `GET /items?watch=true` (and `watch=1`) and the streamed `GET /items`, against both item
//! examples (axum-items and hyper-items) over a socket: every later create, change and delete reaches a CBOR watcher and a
//! JSON watcher, in order, while the watch stays open.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use conneg::WatchEvent;
use conneg::client::{StreamFormat, WatchDecoder};
use conneg_tests::{Example, item_example_binaries};
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// A response read from a socket: the head, then the body chunk by chunk.
struct Conn {
    tcp: TcpStream,
    buf: Vec<u8>,
}

impl Conn {
    async fn send(addr: SocketAddr, head: &str, body: &[u8]) -> (String, Conn) {
        let mut tcp = TcpStream::connect(addr).await.unwrap();
        let mut req =
            format!("{head}host: x\r\ncontent-length: {}\r\n\r\n", body.len()).into_bytes();
        req.extend_from_slice(body);
        tcp.write_all(&req).await.unwrap();
        let mut conn = Conn {
            tcp,
            buf: Vec::new(),
        };
        let head = conn.until(b"\r\n\r\n").await;
        (String::from_utf8(head).unwrap().to_ascii_lowercase(), conn)
    }

    async fn fill(&mut self) -> bool {
        let mut chunk = [0u8; 8192];
        let n = self.tcp.read(&mut chunk).await.unwrap();
        self.buf.extend_from_slice(&chunk[..n]);
        n > 0
    }

    async fn until(&mut self, end: &[u8]) -> Vec<u8> {
        loop {
            if let Some(i) = self.buf.windows(end.len()).position(|w| w == end) {
                let out = self.buf[..i].to_vec();
                self.buf.drain(..i + end.len());
                return out;
            }
            assert!(self.fill().await, "connection closed early");
        }
    }

    /// The next chunk of a chunked body; `None` at its end.
    async fn chunk(&mut self) -> Option<Vec<u8>> {
        let size = self.until(b"\r\n").await;
        let size = usize::from_str_radix(std::str::from_utf8(&size).unwrap(), 16).unwrap();
        while self.buf.len() < size + 2 {
            assert!(self.fill().await, "connection closed inside a chunk");
        }
        let data = self.buf[..size].to_vec();
        self.buf.drain(..size + 2);
        (size > 0).then_some(data)
    }
}

fn header<'a>(head: &'a str, name: &str) -> Option<&'a str> {
    head.lines()
        .find_map(|l| l.strip_prefix(name)?.strip_prefix(':'))
        .map(str::trim)
}

async fn write(addr: SocketAddr, method: &str, path: &str, ct: &str, body: Value) -> String {
    let (head, mut conn) = Conn::send(
        addr,
        &format!("{method} {path} HTTP/1.1\r\nconnection: close\r\ncontent-type: {ct}\r\n"),
        body.to_string().as_bytes(),
    )
    .await;
    while conn.fill().await {} // read the answer to its end
    head
}

async fn next_event(conn: &mut Conn, d: &mut WatchDecoder<Value>) -> WatchEvent<Value> {
    loop {
        if let Some(e) = d.next_event().unwrap() {
            return e;
        }
        let chunk = conn.chunk().await.expect("the watch ended");
        d.push(&chunk);
    }
}

#[tokio::test]
async fn watch_streams_every_change_and_list_streams() {
    for bin in item_example_binaries() {
        watch_streams_every_change_and_list_streams_on(bin).await;
    }
}

async fn watch_streams_every_change_and_list_streams_on(bin: &PathBuf) {
    tokio::time::timeout(Duration::from_secs(60), async {
        let server = Example::start(bin);
        let addr = server.addr;
        let mut watchers = Vec::new();
        for (query, accept, ct, format) in [
            (
                "watch=true",
                "application/cbor",
                "application/cbor-seq",
                StreamFormat::CborSeq,
            ),
            (
                "watch=1",
                "application/json",
                "application/json",
                StreamFormat::Json,
            ),
            // The stream type itself, on a watch, whatever the layer's streaming mode.
            (
                "watch=true",
                "application/cbor-seq",
                "application/cbor-seq",
                StreamFormat::CborSeq,
            ),
        ] {
            let (head, conn) = Conn::send(
                addr,
                &format!("GET /items?{query} HTTP/1.1\r\naccept: {accept}\r\n"),
                b"",
            )
            .await;
            assert!(head.starts_with("http/1.1 200"), "{head}");
            assert_eq!(header(&head, "content-type"), Some(ct), "{head}");
            assert_eq!(
                header(&head, "transfer-encoding"),
                Some("chunked"),
                "{head}"
            );
            watchers.push((conn, WatchDecoder::<Value>::new(format)));
        }

        // A list (not a watch) of a route that does not stream has no sequence type to offer.
        let (head, _) = Conn::send(
            addr,
            "GET /items HTTP/1.1\r\nconnection: close\r\naccept: application/cbor-seq\r\n",
            b"",
        )
        .await;
        assert!(head.starts_with("http/1.1 406"), "{head}");

        let a = json!({"metadata": {"name": "a"}, "spec": 1});
        let a2 = json!({"metadata": {"name": "a"}, "spec": 2});
        let a3 = json!({"metadata": {"name": "a"}, "spec": 3});
        let b = json!({"metadata": {"name": "b"}});
        let json = "application/json";
        let expected = [
            (
                write(addr, "POST", "/items", json, a.clone()).await,
                WatchEvent::Added(a),
            ),
            (
                write(addr, "PUT", "/items/a", json, a2.clone()).await,
                WatchEvent::Modified(a2),
            ),
            (
                write(
                    addr,
                    "PATCH",
                    "/items/a",
                    "application/merge-patch+json",
                    json!({"spec": 3}),
                )
                .await,
                WatchEvent::Modified(a3.clone()),
            ),
            (
                write(addr, "POST", "/items", json, b.clone()).await,
                WatchEvent::Added(b),
            ),
            (
                write(addr, "DELETE", "/items/a", json, json!({})).await,
                WatchEvent::Deleted(a3),
            ),
        ];
        for (head, _) in &expected {
            assert!(head.starts_with("http/1.1 20"), "{head}");
        }
        // A failed write changes nothing and sends nothing.
        let head = write(
            addr,
            "POST",
            "/items",
            json,
            json!({"metadata": {"name": "b"}}),
        )
        .await;
        assert!(head.starts_with("http/1.1 409"), "{head}");
        let last = json!({"metadata": {"name": "c"}});
        write(addr, "POST", "/items", json, last.clone()).await;

        for (conn, decoder) in &mut watchers {
            for (_, want) in &expected {
                assert_eq!(&next_event(conn, decoder).await, want);
            }
            assert_eq!(
                next_event(conn, decoder).await,
                WatchEvent::Added(last.clone())
            );
        }

        // The list: a small one fits one frame and has a Content-Length.
        let small = json!({"apiVersion": "v1", "kind": "List", "metadata": {},
                           "items": [{"metadata": {"name": "b"}}, {"metadata": {"name": "c"}}]});
        for accept in ["application/json", "application/cbor"] {
            let (head, body) = get_list(addr, accept).await;
            assert!(header(&head, "content-length").is_some(), "{head}");
            assert_eq!(decode(accept, &body), small);
        }
        // A list longer than a frame (64 KiB) streams chunked, item by item.
        for i in 0..600 {
            let item = json!({"metadata": {"name": format!("x{i:03}")}, "spec": "s".repeat(200)});
            write(addr, "POST", "/items", json, item).await;
        }
        for accept in ["application/json", "application/cbor"] {
            let (head, body) = get_list(addr, accept).await;
            assert_eq!(
                header(&head, "transfer-encoding"),
                Some("chunked"),
                "{head}"
            );
            let list = decode(accept, &body);
            assert_eq!(list["kind"], "List");
            assert_eq!(list["items"].as_array().unwrap().len(), 602);
        }
    })
    .await
    .unwrap();
}

/// `GET /items`: the head and the whole body, however it is framed.
async fn get_list(addr: SocketAddr, accept: &str) -> (String, Vec<u8>) {
    let (head, mut conn) = Conn::send(
        addr,
        &format!("GET /items HTTP/1.1\r\nconnection: close\r\naccept: {accept}\r\n"),
        b"",
    )
    .await;
    assert!(head.starts_with("http/1.1 200"), "{head}");
    let mut body = Vec::new();
    if let Some(len) = header(&head, "content-length") {
        let len: usize = len.parse().unwrap();
        while conn.buf.len() < len {
            assert!(conn.fill().await, "connection closed inside the body");
        }
        body = conn.buf[..len].to_vec();
    } else {
        while let Some(chunk) = conn.chunk().await {
            body.extend_from_slice(&chunk);
        }
    }
    (head, body)
}

/// A list body in `accept`'s codec, as JSON.
fn decode(accept: &str, body: &[u8]) -> Value {
    let codec = if accept == "application/cbor" {
        conneg::Codec::Cbor
    } else {
        conneg::Codec::Json
    };
    codec
        .decode::<Value>(body, conneg::FieldValidation::Strict)
        .unwrap()
        .value
}
