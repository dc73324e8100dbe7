//! The write benchmark's two programs (`scripts/bench-writes` runs them):
//!
//! * `write-bench floor ADDR`: a bare hyper 1 HTTP/1 server that reads each request's body and
//!   answers 201 with a fixed Flunder-sized JSON object: what the same clients reach when the
//!   server does nothing but HTTP.
//! * `write-bench load ADDR OP CLIENTS SECONDS`: CLIENTS keep-alive connections, each writing
//!   for SECONDS, one request in flight per connection. OP is `create` (POST with
//!   `generateName`), `update` (PUT of the client's own Flunder with the `resourceVersion` of
//!   the previous answer, so every PUT is a compare-and-swap that succeeds) or `apply`
//!   (server-side apply of the client's own Flunder, a changed field each time). Prints
//!   `RESULT <op> <requests> <req/s> <p50 ms> <p99 ms> <failed>`.

use std::convert::Infallible;
use std::time::{Duration, Instant};

use bytes::Bytes;
use http::{Method, Request, Response, StatusCode};
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper_util::rt::TokioIo;
use serde_json::{Value, json};
use tokio::net::{TcpListener, TcpStream};

/// The allocator sample-apiserver runs on, so the floor is not cheaper by its allocator.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

const COLLECTION: &str = "/apis/wardle.example.com/v1beta1/namespaces/default/flunders";

fn usage() -> ! {
    eprintln!(
        "usage: write-bench floor ADDR | write-bench load ADDR create|update|apply CLIENTS SECONDS"
    );
    std::process::exit(2)
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let rt = tokio::runtime::Runtime::new().expect("tokio runtime");
    match args.iter().map(String::as_str).collect::<Vec<_>>()[..] {
        ["floor", addr] => rt.block_on(floor(addr)),
        ["load", addr, op, clients, seconds] => {
            let (Ok(clients), Ok(seconds)) = (clients.parse(), seconds.parse()) else {
                usage()
            };
            if !["create", "update", "apply"].contains(&op) {
                usage()
            }
            rt.block_on(load(addr, op, clients, Duration::from_secs(seconds)));
        }
        _ => usage(),
    }
}

/// The floor: HTTP and nothing else.
async fn floor(addr: &str) {
    let listener = TcpListener::bind(addr).await.expect("bind");
    println!("listening on {addr}");
    let answer = Bytes::from(flunder("floor", 0).to_string());
    loop {
        let Ok((stream, _)) = listener.accept().await else {
            continue;
        };
        let answer = answer.clone();
        tokio::spawn(async move {
            let service = hyper::service::service_fn(move |req: Request<Incoming>| {
                let answer = answer.clone();
                async move {
                    let _ = req.into_body().collect().await;
                    Ok::<_, Infallible>(
                        Response::builder()
                            .status(StatusCode::CREATED)
                            .header("content-type", "application/json")
                            .body(Full::new(answer))
                            .expect("response"),
                    )
                }
            });
            let _ = hyper::server::conn::http1::Builder::new()
                .serve_connection(TokioIo::new(stream), service)
                .await;
        });
    }
}

/// A v1beta1 Flunder named `name` (`generateName` when empty) whose reference is `n`.
fn flunder(name: &str, n: u64) -> Value {
    let metadata = if name.is_empty() {
        json!({"generateName": "wb-", "labels": {"app": "bench"}})
    } else {
        json!({"name": name, "labels": {"app": "bench"}})
    };
    json!({
        "apiVersion": "wardle.example.com/v1beta1",
        "kind": "Flunder",
        "metadata": metadata,
        "spec": {"flunderReference": format!("ref-{n}"), "referenceType": "Flunder"},
    })
}

type Sender = hyper::client::conn::http1::SendRequest<Full<Bytes>>;

async fn connect(addr: &str) -> Sender {
    let stream = TcpStream::connect(addr).await.expect("connect");
    stream.set_nodelay(true).expect("nodelay");
    let (sender, conn) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
        .await
        .expect("handshake");
    tokio::spawn(conn);
    sender
}

/// Sends one request; the status and the answer's JSON (`Null` when it is not JSON).
async fn send(
    sender: &mut Sender,
    method: Method,
    path: &str,
    content_type: &str,
    body: &Value,
) -> (StatusCode, Value) {
    let req = Request::builder()
        .method(method)
        .uri(path)
        .header("host", "bench")
        .header("content-type", content_type)
        .header("accept", "application/json")
        .body(Full::new(Bytes::from(body.to_string())))
        .expect("request");
    sender.ready().await.expect("connection ready");
    let resp = sender.send_request(req).await.expect("answer");
    let status = resp.status();
    let bytes = resp.into_body().collect().await.expect("body").to_bytes();
    (
        status,
        serde_json::from_slice(&bytes).unwrap_or(Value::Null),
    )
}

/// One client: its own Flunder for update and apply, then `op` until `until`. Gives the
/// latency of each request and how many failed.
async fn client(addr: &str, op: &str, id: usize, until: Instant) -> (Vec<Duration>, u64) {
    let mut sender = connect(addr).await;
    let name = format!("wb-{id}-{}", std::process::id());
    let item = format!("{COLLECTION}/{name}");
    let mut rv = String::new();
    if op == "update" {
        let (_, created) = send(
            &mut sender,
            Method::POST,
            COLLECTION,
            "application/json",
            &flunder(&name, 0),
        )
        .await;
        rv = created["metadata"]["resourceVersion"]
            .as_str()
            .unwrap_or_default()
            .to_owned();
    }
    let apply = format!("{item}?fieldManager=bench&force=true");
    let (mut latencies, mut failed) = (Vec::new(), 0);
    for n in 1u64.. {
        let start = Instant::now();
        if start >= until {
            break;
        }
        let (status, answer) = match op {
            "create" => {
                send(
                    &mut sender,
                    Method::POST,
                    COLLECTION,
                    "application/json",
                    &flunder("", n),
                )
                .await
            }
            "update" => {
                let mut body = flunder(&name, n);
                body["metadata"]["resourceVersion"] = Value::String(rv.clone());
                send(&mut sender, Method::PUT, &item, "application/json", &body).await
            }
            _ => {
                send(
                    &mut sender,
                    Method::PATCH,
                    &apply,
                    "application/apply-patch+yaml",
                    &flunder(&name, n),
                )
                .await
            }
        };
        latencies.push(start.elapsed());
        if status.is_success() {
            if let Some(v) = answer["metadata"]["resourceVersion"].as_str() {
                v.clone_into(&mut rv);
            }
        } else {
            failed += 1;
        }
    }
    (latencies, failed)
}

async fn load(addr: &str, op: &str, clients: usize, duration: Duration) {
    let until = Instant::now() + duration;
    let started = Instant::now();
    let tasks: Vec<_> = (0..clients)
        .map(|id| {
            let (addr, op) = (addr.to_owned(), op.to_owned());
            tokio::spawn(async move { client(&addr, &op, id, until).await })
        })
        .collect();
    let (mut latencies, mut failed) = (Vec::new(), 0);
    for t in tasks {
        let (l, f) = t.await.expect("client");
        latencies.extend(l);
        failed += f;
    }
    let elapsed = started.elapsed().as_secs_f64();
    latencies.sort_unstable();
    let pct = |p: f64| {
        latencies
            .get(((latencies.len() as f64 * p) as usize).min(latencies.len().saturating_sub(1)))
            .map_or(0.0, |d| d.as_secs_f64() * 1e3)
    };
    println!(
        "RESULT {op} {} {:.1} {:.3} {:.3} {failed}",
        latencies.len(),
        latencies.len() as f64 / elapsed,
        pct(0.5),
        pct(0.99)
    );
}
