//! The read benchmark's floor (`scripts/bench-list-watch` runs it): a bare hyper 1 HTTP/1
//! server that answers `GET /NAME` with the bytes of the file `DIR/NAME`, read once at start
//! and held in memory, sent in one piece. What a client reading the same responses reaches when
//! the server does nothing but HTTP.
//!
//!     read-floor ADDR DIR

use std::collections::HashMap;
use std::convert::Infallible;
use std::sync::Arc;

use bytes::Bytes;
use http::{Request, Response, StatusCode};
use http_body_util::Full;
use hyper::body::Incoming;
use hyper_util::rt::TokioIo;
use tokio::net::TcpListener;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [addr, dir] = &args[..] else {
        eprintln!("usage: read-floor ADDR DIR");
        std::process::exit(2)
    };
    let mut files = HashMap::new();
    for entry in std::fs::read_dir(dir).expect("read DIR") {
        let path = entry.expect("DIR entry").path();
        let name = format!(
            "/{}",
            path.file_name().unwrap_or_default().to_string_lossy()
        );
        files.insert(
            name,
            Bytes::from(std::fs::read(&path).expect("read a file")),
        );
    }
    let files = Arc::new(files);
    let rt = tokio::runtime::Runtime::new().expect("tokio runtime");
    rt.block_on(async move {
        let listener = TcpListener::bind(addr).await.expect("bind");
        let bound = listener.local_addr().expect("bound address");
        println!("listening on http://{bound}");
        loop {
            let Ok((stream, _)) = listener.accept().await else {
                continue;
            };
            let files = Arc::clone(&files);
            tokio::spawn(async move {
                let service = hyper::service::service_fn(move |req: Request<Incoming>| {
                    let found = files.get(req.uri().path()).cloned();
                    async move {
                        let (status, body) = match found {
                            Some(body) => (StatusCode::OK, body),
                            None => (StatusCode::NOT_FOUND, Bytes::new()),
                        };
                        Ok::<_, Infallible>(
                            Response::builder()
                                .status(status)
                                .body(Full::new(body))
                                .expect("response"),
                        )
                    }
                });
                let _ = hyper::server::conn::http1::Builder::new()
                    .serve_connection(TokioIo::new(stream), service)
                    .await;
            });
        }
    });
}
