//! End to end over a real socket (axum::serve on hyper): body detection, chunked bodies and
//! limits depend on what hyper reports, which in-memory bodies do not show.
#![cfg(feature = "axum")]

use axum::Router;
use axum::http::StatusCode;
use axum::routing::post;
use conneg::axum::Conneg;
use conneg::{NegotiateLayer, Negotiated};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

async fn echo(
    negotiated: Negotiated,
    Conneg(v): Conneg<serde_json::Value>,
) -> (StatusCode, Conneg<serde_json::Value>) {
    let code = if negotiated.request_format().is_some() {
        StatusCode::CREATED
    } else {
        StatusCode::OK
    };
    (code, Conneg(v))
}

async fn get_ok(negotiated: Negotiated) -> Conneg<serde_json::Value> {
    Conneg(serde_json::json!({ "request": negotiated.request_format().map(|f| f.to_string()) }))
}

async fn server() -> std::net::SocketAddr {
    let app = Router::new().route("/echo", post(echo).get(get_ok)).layer(
        NegotiateLayer::new()
            .profile(conneg::Profile::Kubernetes)
            .body_limit(64),
    );
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    addr
}

/// Sends raw HTTP/1.1 and returns (status, head, body).
async fn raw(addr: std::net::SocketAddr, request: &str) -> (u16, String, String) {
    let mut stream = TcpStream::connect(addr).await.unwrap();
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut out = Vec::new();
    stream.read_to_end(&mut out).await.unwrap();
    let text = String::from_utf8_lossy(&out).into_owned();
    let (head, body) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
    let status = head[9..12].parse().unwrap();
    (status, head.to_ascii_lowercase(), body.to_owned())
}

#[tokio::test]
async fn over_a_socket() {
    let addr = server().await;

    // GET without a body: a bogus Content-Type is irrelevant.
    let (status, head, body) = raw(
        addr,
        "GET /echo HTTP/1.1\r\nhost: x\r\ncontent-type: nonsense\r\nconnection: close\r\n\r\n",
    )
    .await;
    assert_eq!(status, 200, "{head}{body}");
    assert!(head.contains("vary: accept"));
    assert!(body.contains(r#"{"request":null}"#), "{body}");

    // Chunked body without Content-Length: still a body, so its type is checked.
    let (status, head, _) = raw(
        addr,
        "POST /echo HTTP/1.1\r\nhost: x\r\ncontent-type: application/cbor-seq\r\ntransfer-encoding: chunked\r\nconnection: close\r\n\r\n2\r\n{}\r\n0\r\n\r\n",
    )
    .await;
    assert_eq!(status, 415);
    assert!(
        head.contains("accept: application/json, application/cbor"),
        "{head}"
    );

    // Chunked JSON body without Content-Type: JSON, decoded.
    let (status, _, body) = raw(
        addr,
        "POST /echo HTTP/1.1\r\nhost: x\r\ntransfer-encoding: chunked\r\nconnection: close\r\n\r\nc\r\n{\"name\":\"a\"}\r\n0\r\n\r\n",
    )
    .await;
    assert_eq!(status, 201, "{body}");
    assert!(body.contains(r#"{"name":"a"}"#), "{body}");

    // Chunked body over the 64-byte limit: 413 while reading.
    let big = format!("{{\"name\":\"{}\"}}", "x".repeat(100));
    let request = format!(
        "POST /echo HTTP/1.1\r\nhost: x\r\ntransfer-encoding: chunked\r\nconnection: close\r\n\r\n{:x}\r\n{big}\r\n0\r\n\r\n",
        big.len()
    );
    let (status, _, body) = raw(addr, &request).await;
    assert_eq!(status, 413, "{body}");
    assert!(body.contains("RequestEntityTooLarge"));

    // Declared too large: 413 before the handler.
    let (status, _, _) = raw(
        addr,
        "POST /echo HTTP/1.1\r\nhost: x\r\ncontent-length: 100\r\nconnection: close\r\n\r\n",
    )
    .await;
    assert_eq!(status, 413);

    // kubectl with CBOR: the 415 body is CBOR.
    let (status, head, _) = raw(
        addr,
        "POST /echo HTTP/1.1\r\nhost: x\r\naccept: application/cbor, */*\r\ncontent-type: text/plain\r\ncontent-length: 2\r\nconnection: close\r\n\r\nhi",
    )
    .await;
    assert_eq!(status, 415);
    assert!(head.contains("content-type: application/cbor"), "{head}");
}
