//! Interop: Python's `cbor2` (an independent CBOR implementation) reads a CBOR watch stream
//! from a real socket, event by event, with `cbor2.CBORDecoder` over the response as a file.
//! The server publishes each event only after Python has printed the previous one, so this
//! also shows every event is decodable as soon as it arrives.
//!
//! Needs `python3` with `cbor2` (`scripts/install-test-deps`); fails, not skips, without it.
#![cfg(feature = "axum")]

use std::process::Stdio;
use std::time::Duration;

use axum::Router;
use axum::extract::State;
use axum::routing::get;
use conneg::watch::{WatchBody, WatchEvent, WatchHub, WatchResponse};
use conneg::{NegotiateLayer, Negotiated};
use serde::Serialize;
use std::io::BufRead;
use tokio::net::TcpListener;

const SCRIPT: &str = r#"
import io, sys, json, http.client
from collections.abc import Mapping
import cbor2

def plain(o):
    # Kubernetes (and conneg) write strings as byte strings.
    if isinstance(o, bytes):
        return o.decode("utf-8")
    # cbor2 6 gives a frozendict (and may give tuples) for containers under a tag
    if isinstance(o, Mapping):
        return {plain(k): plain(v) for k, v in o.items()}
    if isinstance(o, (list, tuple)):
        return [plain(v) for v in o]
    if isinstance(o, cbor2.CBORTag):
        return {"tag": o.tag, "value": plain(o.value)}
    return o

port, n = int(sys.argv[1]), int(sys.argv[2])
conn = http.client.HTTPConnection("127.0.0.1", port)
conn.request("GET", "/items?watch=true", headers={"Accept": "application/cbor"})
resp = conn.getresponse()
print(json.dumps({"status": resp.status, "content-type": resp.getheader("Content-Type")}), flush=True)

class Raw(io.RawIOBase):
    # Counts self-described prefixes on the raw bytes cbor2 reads. A RawIOBase, as cbor2 6
    # wants a real readable file object.
    def __init__(self, f):
        self.f, self.buf = f, b""
    def readable(self):
        return True
    def readinto(self, b):
        data = self.f.read(len(b))
        b[:len(data)] = data
        self.buf += data
        return len(data)

raw = Raw(resp)
dec = cbor2.CBORDecoder(raw)
for i in range(n):
    start = len(raw.buf)
    event = dec.decode()
    item = raw.buf[start:]
    print(json.dumps({"event": plain(event), "prefixes": item.count(b"\xd9\xd9\xf7"),
                      "starts": item[:3].hex()}), flush=True)
"#;

#[derive(Serialize)]
struct Item {
    name: String,
    size: u64,
    labels: std::collections::BTreeMap<String, String>,
}

async fn watch(
    State(hub): State<WatchHub<Item>>,
    negotiated: Negotiated,
) -> http::Response<WatchBody> {
    WatchResponse::new(&negotiated).subscribe(&hub)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cbor2_reads_the_watch_stream_event_by_event() {
    tokio::time::timeout(Duration::from_secs(60), async {
        let hub = WatchHub::new();
        let app = Router::new()
            .route("/items", get(watch))
            .with_state(hub.clone())
            .layer(
                NegotiateLayer::new()
                    .profile(conneg::Profile::Kubernetes)
                    .streaming(true),
            );
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });

        const N: usize = 5;
        let mut child = std::process::Command::new("python3")
            .args(["-c", SCRIPT, &port.to_string(), &N.to_string()])
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("python3");
        let _kill = KillOnDrop(child.id());
        // Python's lines, as they are printed.
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
        let stdout = child.stdout.take().unwrap();
        std::thread::spawn(move || {
            for line in std::io::BufReader::new(stdout).lines() {
                if tx.send(line.unwrap()).is_err() {
                    break;
                }
            }
        });
        let mut lines = LineReader(&mut rx);
        let head: serde_json::Value =
            serde_json::from_str(&lines.next_line().await.expect("python printed the status"))
                .unwrap();
        assert_eq!(head["status"], 200);
        assert_eq!(head["content-type"], "application/cbor-seq");

        while hub.watcher_count() == 0 {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        let kinds = ["ADDED", "MODIFIED", "DELETED", "BOOKMARK", "ADDED"];
        for (i, kind) in kinds.iter().enumerate() {
            let item = Item {
                name: format!("item-{i}"),
                size: 1 << (i * 10),
                labels: [("app".to_string(), "watch".to_string())].into(),
            };
            let event = match *kind {
                "ADDED" => WatchEvent::Added(item),
                "MODIFIED" => WatchEvent::Modified(item),
                "DELETED" => WatchEvent::Deleted(item),
                _ => WatchEvent::Bookmark(item),
            };
            hub.publish(event);
            // Python must decode this event before the next one exists.
            let line = lines
                .next_line()
                .await
                .unwrap_or_else(|| panic!("python stopped before event {i}"));
            let got: serde_json::Value = serde_json::from_str(&line).unwrap();
            assert_eq!(got["event"]["type"], *kind, "{line}");
            assert_eq!(
                got["event"]["object"]["name"],
                format!("item-{i}"),
                "{line}"
            );
            assert_eq!(got["event"]["object"]["size"], 1u64 << (i * 10), "{line}");
            assert_eq!(got["event"]["object"]["labels"]["app"], "watch", "{line}");
            // The event and the embedded object are each self-described, as Kubernetes writes.
            assert_eq!(got["starts"], "d9d9f7", "{line}");
            assert_eq!(got["prefixes"], 2, "{line}");
        }
        let status = tokio::task::spawn_blocking(move || child.wait())
            .await
            .unwrap()
            .unwrap();
        assert!(status.success());
    })
    .await
    .unwrap();
}

struct LineReader<'a>(&'a mut tokio::sync::mpsc::UnboundedReceiver<String>);

impl LineReader<'_> {
    async fn next_line(&mut self) -> Option<String> {
        self.0.recv().await
    }
}

/// Kills the Python process if the test fails before it exits.
struct KillOnDrop(u32);

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        if std::thread::panicking() {
            let _ = std::process::Command::new("kill")
                .arg(self.0.to_string())
                .status();
        }
    }
}
