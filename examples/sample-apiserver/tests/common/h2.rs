//! HTTP/2 from tests: a TLS connection that offers chosen ALPN protocols, hyper's HTTP/2
//! client over it, and raw frames for what no client library sends (floods, rapid resets,
//! oversized header lists, streams past the server's limit).

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt as _, Full};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::TcpStream;
use tokio_rustls::client::TlsStream;

/// A runtime for a test's async clients.
pub(crate) fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
}

/// A TLS connection to `addr` trusting `ca`, with a client certificate (cert, key files) if
/// given, offering `alpn`.
pub(crate) async fn tls(
    addr: &str,
    ca: &Path,
    client: Option<(&str, &str)>,
    alpn: &[&[u8]],
) -> TlsStream<TcpStream> {
    let mut roots = rustls::RootCertStore::empty();
    for c in CertificateDer::pem_file_iter(ca).unwrap() {
        roots.add(c.unwrap()).unwrap();
    }
    let builder = rustls::ClientConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .unwrap()
    .with_root_certificates(roots);
    let mut config = match client {
        Some((cert, key)) => builder
            .with_client_auth_cert(
                CertificateDer::pem_file_iter(cert)
                    .unwrap()
                    .map(Result::unwrap)
                    .collect(),
                PrivateKeyDer::from_pem_file(key).unwrap(),
            )
            .unwrap(),
        None => builder.with_no_client_auth(),
    };
    config.alpn_protocols = alpn.iter().map(|p| p.to_vec()).collect();
    let tcp = TcpStream::connect(addr).await.unwrap();
    tokio_rustls::TlsConnector::from(Arc::new(config))
        .connect("127.0.0.1".try_into().unwrap(), tcp)
        .await
        .unwrap()
}

/// hyper's HTTP/2 client on one connection (its task spawned on the current runtime).
pub(crate) type Client = hyper::client::conn::http2::SendRequest<Full<Bytes>>;

/// An HTTP/2 client on a new connection to `addr` (ALPN `h2`).
pub(crate) async fn client(addr: &str, ca: &Path, cert: Option<(&str, &str)>) -> Client {
    let io = tls(addr, ca, cert, &[b"h2"]).await;
    assert_eq!(io.get_ref().1.alpn_protocol(), Some(&b"h2"[..]));
    let (sender, conn) =
        hyper::client::conn::http2::Builder::new(hyper_util::rt::TokioExecutor::new())
            .handshake(hyper_util::rt::TokioIo::new(io))
            .await
            .unwrap();
    tokio::spawn(conn);
    sender
}

/// A request on `client`: its status, headers and whole body.
pub(crate) async fn send(
    client: &mut Client,
    req: http::Request<Bytes>,
) -> (u16, http::HeaderMap, Bytes) {
    let resp = open(client, req).await;
    let (parts, body) = resp.into_parts();
    let body = body.collect().await.unwrap().to_bytes();
    (parts.status.as_u16(), parts.headers, body)
}

/// A request on `client`, answered with its head; the body is read by the caller.
pub(crate) async fn open(
    client: &mut Client,
    req: http::Request<Bytes>,
) -> http::Response<hyper::body::Incoming> {
    client.ready().await.unwrap();
    let req = req.map(Full::new);
    client.send_request(req).await.unwrap()
}

/// A GET of `path` with `accept`.
pub(crate) fn get(path: &str, accept: &str) -> http::Request<Bytes> {
    http::Request::get(format!("https://127.0.0.1{path}"))
        .header("accept", accept)
        .body(Bytes::new())
        .unwrap()
}

/// A request with a JSON body.
pub(crate) fn with_json(method: &str, path: &str, body: &str) -> http::Request<Bytes> {
    http::Request::builder()
        .method(method)
        .uri(format!("https://127.0.0.1{path}"))
        .header("content-type", "application/json")
        .header("accept", "application/json")
        .body(Bytes::from(body.to_owned()))
        .unwrap()
}

/// Frame types and flags (RFC 9113, section 6).
pub(crate) mod frame {
    pub(crate) const DATA: u8 = 0;
    pub(crate) const HEADERS: u8 = 1;
    pub(crate) const RST_STREAM: u8 = 3;
    pub(crate) const SETTINGS: u8 = 4;
    pub(crate) const PING: u8 = 6;
    pub(crate) const GOAWAY: u8 = 7;
    pub(crate) const WINDOW_UPDATE: u8 = 8;
    pub(crate) const CONTINUATION: u8 = 9;
    pub(crate) const END_STREAM: u8 = 0x1;
    pub(crate) const END_HEADERS: u8 = 0x4;
    pub(crate) const ACK: u8 = 0x1;
}

/// One frame read: type, flags, stream, payload.
#[derive(Debug)]
pub(crate) struct Frame {
    pub(crate) kind: u8,
    pub(crate) flags: u8,
    pub(crate) stream: u32,
    pub(crate) payload: Vec<u8>,
}

impl Frame {
    /// The error code of a RST_STREAM or GOAWAY.
    pub(crate) fn error_code(&self) -> u32 {
        let at = if self.kind == frame::GOAWAY { 4 } else { 0 };
        u32::from_be_bytes(self.payload[at..at + 4].try_into().unwrap())
    }
}

/// A frame's bytes.
pub(crate) fn encode(kind: u8, flags: u8, stream: u32, payload: &[u8]) -> Vec<u8> {
    let len = u32::try_from(payload.len()).unwrap();
    let mut out = Vec::with_capacity(9 + payload.len());
    out.extend_from_slice(&len.to_be_bytes()[1..]);
    out.extend_from_slice(&[kind, flags]);
    out.extend_from_slice(&stream.to_be_bytes());
    out.extend_from_slice(payload);
    out
}

/// An HPACK integer with an `n`-bit prefix whose high bits are `first`.
fn hpack_int(out: &mut Vec<u8>, first: u8, n: u32, mut value: usize) {
    let max = (1usize << n) - 1;
    if value < max {
        out.push(first | value as u8);
        return;
    }
    out.push(first | max as u8);
    value -= max;
    while value >= 128 {
        out.push((value % 128) as u8 | 0x80);
        value /= 128;
    }
    out.push(value as u8);
}

/// A header block of literal fields (never indexed, no Huffman): the request pseudo-headers
/// for `method` and `path`, then `extra`.
pub(crate) fn header_block(method: &str, path: &str, extra: &[(&str, &str)]) -> Vec<u8> {
    let mut out = Vec::new();
    let fields = [
        (":method", method),
        (":scheme", "https"),
        (":path", path),
        (":authority", "127.0.0.1"),
    ];
    for (name, value) in fields.iter().chain(extra) {
        out.push(0x10);
        for s in [name, value] {
            hpack_int(&mut out, 0, 7, s.len());
            out.extend_from_slice(s.as_bytes());
        }
    }
    out
}

/// A raw HTTP/2 connection: the client preface and an empty SETTINGS are sent on connect.
pub(crate) struct Raw {
    io: TlsStream<TcpStream>,
    next_stream: u32,
}

impl Raw {
    pub(crate) async fn connect(addr: &str, ca: &Path) -> Raw {
        let mut io = tls(addr, ca, None, &[b"h2"]).await;
        io.write_all(b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n")
            .await
            .unwrap();
        io.write_all(&encode(frame::SETTINGS, 0, 0, &[]))
            .await
            .unwrap();
        Raw { io, next_stream: 1 }
    }

    /// Writes `bytes`; an error once the server has closed the connection.
    pub(crate) async fn write(&mut self, bytes: &[u8]) -> std::io::Result<()> {
        self.io.write_all(bytes).await?;
        self.io.flush().await
    }

    /// The next stream id (1, 3, 5, ...).
    pub(crate) fn stream(&mut self) -> u32 {
        let id = self.next_stream;
        self.next_stream += 2;
        id
    }

    /// HEADERS (and CONTINUATIONs, in frames of at most 16 KiB) opening a new stream; its id.
    pub(crate) fn headers(&mut self, block: &[u8], end_stream: bool) -> (u32, Vec<u8>) {
        let id = self.stream();
        let chunks: Vec<&[u8]> = if block.is_empty() {
            vec![block]
        } else {
            block.chunks(16 * 1024).collect()
        };
        let mut out = Vec::new();
        for (i, chunk) in chunks.iter().enumerate() {
            let last = i + 1 == chunks.len();
            let mut flags = if last { frame::END_HEADERS } else { 0 };
            let kind = if i == 0 {
                if end_stream {
                    flags |= frame::END_STREAM;
                }
                frame::HEADERS
            } else {
                frame::CONTINUATION
            };
            out.extend(encode(kind, flags, id, chunk));
        }
        (id, out)
    }

    /// The next frame, or `None` once the connection is closed (or nothing came within 10 s).
    pub(crate) async fn read(&mut self) -> Option<Frame> {
        let mut head = [0u8; 9];
        let read = tokio::time::timeout(Duration::from_secs(10), self.io.read_exact(&mut head));
        read.await.ok()?.ok()?;
        let len = u32::from_be_bytes([0, head[0], head[1], head[2]]) as usize;
        let mut payload = vec![0; len];
        self.io.read_exact(&mut payload).await.ok()?;
        let stream = u32::from_be_bytes(head[5..9].try_into().unwrap()) & 0x7fff_ffff;
        Some(Frame {
            kind: head[3],
            flags: head[4],
            stream,
            payload,
        })
    }

    /// Frames until one `pred` accepts (returned), or the connection closes (`None`).
    pub(crate) async fn until(&mut self, pred: impl Fn(&Frame) -> bool) -> Option<Frame> {
        loop {
            let f = self.read().await?;
            if pred(&f) {
                return Some(f);
            }
        }
    }
}
