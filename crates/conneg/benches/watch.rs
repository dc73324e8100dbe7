//! Watch fan-out and streamed-list memory, over real sockets (hyper server with the
//! negotiation layer, hyper-util clients in the same process).
//!
//! ```text
//! cargo bench -p conneg --bench watch            # everything (about two minutes)
//! cargo bench -p conneg --bench watch -- fanout  # only the fan-out table
//! cargo bench -p conneg --bench watch -- list    # only the list memory table
//! ```
//!
//! * fan-out: events per second from one publisher through a `WatchHub` to 1, 10 and 100
//!   watchers, a ~2 KiB object, CBOR vs JSON. The publisher waits while the slowest watcher
//!   has more than half its queue bound pending (so nobody is cut off) and the clock stops when
//!   every watcher has read every byte. Medians of 5 runs.
//! * list: peak resident memory (VmHWM) added while serving a 100,000-item list of the same
//!   object, streamed (`StreamingList`, 64 KiB frames) vs encoded in memory and sent at once.
//!   Each case runs in a fresh process (this binary re-runs itself), measured against the
//!   resident size after the items were built. Medians of 3 runs.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::time::{Duration, Instant};

use axum::Router;
use axum::extract::State;
use axum::routing::get;
use bytes::Bytes;
use conneg::watch::{WatchBody, WatchEvent, WatchHub, WatchLimits, WatchResponse};
use conneg::{Codec, ListBody, NegotiateLayer, Negotiated, StreamingList};
use http_body_util::{BodyExt, Full};
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;
use serde::Serialize;
use tokio::net::TcpListener;

#[derive(Clone, Serialize)]
#[serde(rename_all = "camelCase")]
struct Object {
    api_version: &'static str,
    kind: &'static str,
    metadata: Meta,
    spec: Spec,
}

#[derive(Clone, Serialize)]
#[serde(rename_all = "camelCase")]
struct Meta {
    name: String,
    namespace: &'static str,
    uid: String,
    resource_version: String,
    generation: i64,
    creation_timestamp: &'static str,
    labels: BTreeMap<String, String>,
    annotations: BTreeMap<String, String>,
}

#[derive(Clone, Serialize)]
#[serde(rename_all = "camelCase")]
struct Spec {
    replicas: i64,
    image: &'static str,
    args: Vec<String>,
    env: Vec<Env>,
    ratio: f64,
}

#[derive(Clone, Serialize)]
struct Env {
    name: String,
    value: String,
}

/// An object of about 2 KiB in JSON (a little less in CBOR).
fn object(i: usize) -> Object {
    Object {
        api_version: "wardle.example.com/v1beta1",
        kind: "Flunder",
        metadata: Meta {
            name: format!("flunder-{i:06}"),
            namespace: "default",
            uid: format!("6f1c1a62-2b7d-4c1e-9a53-{i:012}"),
            resource_version: (100_000 + i).to_string(),
            generation: 3,
            creation_timestamp: "2026-11-20T22:40:58Z",
            labels: (0..8)
                .map(|k| (format!("label-{k}"), format!("value-{k}-{}", i % 7)))
                .collect(),
            annotations: [(
                "kubectl.kubernetes.io/last-applied-configuration".to_string(),
                "x".repeat(1100),
            )]
            .into(),
        },
        spec: Spec {
            replicas: (i % 5) as i64,
            image: "registry.example.com/wardle/flunder:v1.2.3",
            args: (0..6).map(|k| format!("--flag-{k}=value")).collect(),
            env: (0..6)
                .map(|k| Env {
                    name: format!("ENV_{k}"),
                    value: format!("some-value-{k}"),
                })
                .collect(),
            ratio: 0.25,
        },
    }
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

type HttpClient = Client<HttpConnector, Full<Bytes>>;

fn client() -> HttpClient {
    Client::builder(TokioExecutor::new())
        .pool_max_idle_per_host(200)
        .build_http()
}

async fn watch_handler(
    State(hub): State<WatchHub<Object>>,
    negotiated: Negotiated,
) -> http::Response<WatchBody> {
    WatchResponse::new(&negotiated).subscribe(&hub)
}

async fn start(app: Router) -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    addr
}

/// How events reach the watchers' bodies.
#[derive(Clone, Copy, PartialEq)]
enum Fanout {
    /// A `WatchHub`: encoded once per codec, bytes shared.
    Hub,
    /// The baseline: a broadcast channel of objects, each watcher's body encoding every event
    /// itself (`WatchResponse::events`).
    PerWatcher,
}

/// An object shared by the broadcast channel (serde's `rc` feature is off).
struct SharedObject(std::sync::Arc<Object>);

impl Serialize for SharedObject {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.0.serialize(s)
    }
}

async fn broadcast_handler(
    State(tx): State<tokio::sync::broadcast::Sender<std::sync::Arc<Object>>>,
    negotiated: Negotiated,
) -> http::Response<WatchBody> {
    let rx = tx.subscribe();
    let events = futures_util::stream::unfold(rx, |mut rx| async move {
        let o = rx.recv().await.ok()?;
        Some((WatchEvent::Added(SharedObject(o)), rx))
    });
    WatchResponse::new(&negotiated).events(events)
}

/// One fan-out run: seconds for `events` events to reach `watchers` watchers.
async fn fanout_once(codec: &Codec, watchers: usize, events: usize, how: Fanout) -> f64 {
    let limits = WatchLimits {
        max_bytes: 8 << 20,
        max_events: 4096,
    };
    let hub = WatchHub::with_limits(limits);
    let (tx, _) = tokio::sync::broadcast::channel::<std::sync::Arc<Object>>(4096);
    let app = match how {
        Fanout::Hub => Router::new()
            .route("/items", get(watch_handler))
            .with_state(hub.clone()),
        Fanout::PerWatcher => Router::new()
            .route("/items", get(broadcast_handler))
            .with_state(tx.clone()),
    }
    .layer(
        NegotiateLayer::new()
            .profile(conneg::Profile::Kubernetes)
            .streaming(true),
    );
    let addr = start(app).await;
    let accept = if *codec == Codec::Cbor {
        "application/cbor"
    } else {
        "application/json"
    };
    let objects: Vec<Object> = (0..events).map(object).collect();
    let total: usize = objects
        .iter()
        .map(|o| WatchEvent::Added(o).to_bytes(codec).unwrap().len())
        .sum();

    let client = client();
    let mut readers = Vec::new();
    for _ in 0..watchers {
        let req = http::Request::get(format!("http://{addr}/items?watch=1"))
            .header("accept", accept)
            .body(Full::default())
            .unwrap();
        let mut body = client.request(req).await.unwrap().into_body();
        readers.push(tokio::spawn(async move {
            let mut seen = 0;
            while seen < total {
                let frame = body.frame().await.expect("stream ended early").unwrap();
                if let Ok(data) = frame.into_data() {
                    seen += data.len();
                }
            }
        }));
    }
    while hub.watcher_count().max(tx.receiver_count()) < watchers {
        tokio::time::sleep(Duration::from_millis(1)).await;
    }

    let start = Instant::now();
    for o in objects {
        match how {
            Fanout::Hub => {
                while hub.stats().max_watcher_bytes > limits.max_bytes / 2 {
                    tokio::time::sleep(Duration::from_micros(200)).await;
                }
                hub.publish(WatchEvent::Added(o));
            }
            Fanout::PerWatcher => {
                while tx.len() > 2048 {
                    tokio::time::sleep(Duration::from_micros(200)).await;
                }
                assert!(tx.send(std::sync::Arc::new(o)).is_ok());
            }
        }
        tokio::task::yield_now().await;
    }
    for r in readers {
        r.await.unwrap();
    }
    let secs = start.elapsed().as_secs_f64();
    assert_eq!(
        hub.stats().overflowed,
        0,
        "a watcher was cut off; lower the rate"
    );
    secs
}

async fn fanout() {
    for codec in [Codec::Cbor, Codec::Json] {
        let size = WatchEvent::Added(object(0)).to_bytes(&codec).unwrap().len();
        println!("fan-out {codec}: event {size} bytes");
    }
    println!(
        "| watchers | codec | hub: events/s (each watcher) | hub: events/s delivered (all) | hub: MB/s | per-watcher encoding: events/s (each) | hub / per-watcher |"
    );
    println!("|---:|---|---:|---:|---:|---:|---:|");
    for (watchers, events) in [(1, 20_000), (10, 5_000), (100, 1_000)] {
        for codec in [Codec::Cbor, Codec::Json] {
            let size = WatchEvent::Added(object(0)).to_bytes(&codec).unwrap().len();
            let mut hub_runs = Vec::new();
            let mut base_runs = Vec::new();
            // Interleaved, so drift on a noisy machine hits both alike.
            for _ in 0..5 {
                hub_runs.push(fanout_once(&codec, watchers, events, Fanout::Hub).await);
                base_runs.push(fanout_once(&codec, watchers, events, Fanout::PerWatcher).await);
            }
            let rate = events as f64 / median(hub_runs);
            let base = events as f64 / median(base_runs);
            println!(
                "| {watchers} | {codec} | {:.0} | {:.0} | {:.0} | {:.0} | {:.2}x |",
                rate,
                rate * watchers as f64,
                rate * watchers as f64 * size as f64 / 1e6,
                base,
                rate / base
            );
        }
    }
}

const LIST_ITEMS: usize = 100_000;

fn rss_kib(field: &str) -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    status
        .lines()
        .find_map(|l| l.strip_prefix(field))
        .and_then(|v| v.trim().trim_end_matches(" kB").trim().parse().ok())
        .unwrap()
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct WholeList<'a> {
    kind: &'static str,
    api_version: &'static str,
    metadata: serde_json::Value,
    items: &'a [Object],
}

/// Item `.1` of the stored list, serialized in place (no copy of the object).
struct Stored(std::sync::Arc<Vec<Object>>, usize);

impl Serialize for Stored {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.0[self.1].serialize(s)
    }
}

/// In a child process: serves the list once (`mode` streamed or buffered) and prints the peak
/// resident memory added while doing so, in KiB, and the seconds it took.
async fn list_child(mode: &str, codec: Codec) {
    let items: std::sync::Arc<Vec<Object>> =
        std::sync::Arc::new((0..LIST_ITEMS).map(object).collect());
    let streamed = mode == "streamed";
    let app = Router::new()
        .route(
            "/items",
            get(move |negotiated: Negotiated| {
                let items = std::sync::Arc::clone(&items);
                async move {
                    let meta = serde_json::json!({"resourceVersion": "200000"});
                    if streamed {
                        let n = items.len();
                        let body: ListBody =
                            StreamingList::new("FlunderList", "wardle.example.com/v1beta1", meta)
                                .body(
                                    negotiated.response_codec(),
                                    (0..n).map(move |i| Stored(std::sync::Arc::clone(&items), i)),
                                );
                        axum::body::Body::new(body)
                    } else {
                        let bytes = negotiated
                            .encode(&WholeList {
                                kind: "FlunderList",
                                api_version: "wardle.example.com/v1beta1",
                                metadata: meta,
                                items: &items,
                            })
                            .unwrap();
                        axum::body::Body::from(bytes)
                    }
                }
            }),
        )
        .layer(NegotiateLayer::new().profile(conneg::Profile::Kubernetes));
    let addr = start(app).await;
    let client = client();
    // Warm up the connection and runtime, then take the baseline.
    let accept = if codec == Codec::Cbor {
        "application/cbor"
    } else {
        "application/json"
    };
    let baseline = rss_kib("VmHWM:").max(rss_kib("VmRSS:"));
    let start = Instant::now();
    let req = http::Request::get(format!("http://{addr}/items"))
        .header("accept", accept)
        .body(Full::default())
        .unwrap();
    let mut body = client.request(req).await.unwrap().into_body();
    let mut bytes = 0usize;
    while let Some(frame) = body.frame().await {
        if let Ok(d) = frame.unwrap().into_data() {
            bytes += d.len();
        }
    }
    let secs = start.elapsed().as_secs_f64();
    let peak = rss_kib("VmHWM:");
    println!("{} {} {}", peak.saturating_sub(baseline), bytes, secs);
}

fn list() {
    let exe = std::env::current_exe().unwrap();
    println!(
        "| codec | list | body size | peak memory added (median of 3) | time to send (median) |"
    );
    println!("|---|---|---:|---:|---:|");
    for codec in ["cbor", "json"] {
        let mut results = BTreeMap::new();
        for mode in ["streamed", "buffered"] {
            let mut peaks = Vec::new();
            let mut times = Vec::new();
            let mut size = 0;
            for _ in 0..3 {
                let out = std::process::Command::new(&exe)
                    .args(["--list-child", mode, codec])
                    .output()
                    .unwrap();
                assert!(
                    out.status.success(),
                    "{}",
                    String::from_utf8_lossy(&out.stderr)
                );
                let text = String::from_utf8(out.stdout).unwrap();
                let mut f = text.split_whitespace();
                peaks.push(f.next().unwrap().parse::<f64>().unwrap());
                size = f.next().unwrap().parse::<usize>().unwrap();
                times.push(f.next().unwrap().parse::<f64>().unwrap());
            }
            let peak = median(peaks);
            let time = median(times);
            println!(
                "| {codec} | {mode} | {:.1} MB | {:.1} MiB | {:.2} s |",
                size as f64 / 1e6,
                peak / 1024.0,
                time
            );
            results.insert(mode, peak);
        }
        println!(
            "| {codec} | ratio buffered/streamed | | {:.0}x | |",
            results["buffered"] / results["streamed"].max(1.0)
        );
    }
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    if let Some(i) = args.iter().position(|a| a == "--list-child") {
        let codec = if args[i + 2] == "cbor" {
            Codec::Cbor
        } else {
            Codec::Json
        };
        runtime.block_on(list_child(&args[i + 1], codec));
        return;
    }
    let only: Vec<&String> = args.iter().filter(|a| !a.starts_with('-')).collect();
    let wants = |name: &str| only.is_empty() || only.iter().any(|a| a.as_str() == name);
    if wants("fanout") {
        runtime.block_on(fanout());
    }
    if wants("list") {
        list();
    }
}
