//! HTTP for clients that must survive the server dying under them: one request per
//! connection, bounded in time, every failure an `Err` (never a panic), and an incremental
//! reader for watch streams.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::common::{Resp, parse_response};

/// Why a request has no answer.
#[derive(Debug)]
pub(crate) enum Failure {
    /// The connection was refused: nothing was sent, so nothing happened.
    NotSent,
    /// Sent, and then no complete answer: it may or may not have happened.
    Unknown(String),
}

fn connect(addr: &str, timeout: Duration) -> Result<TcpStream, Failure> {
    let sock: SocketAddr = addr.parse().map_err(|_| Failure::NotSent)?;
    let s = TcpStream::connect_timeout(&sock, timeout).map_err(|_| Failure::NotSent)?;
    s.set_read_timeout(Some(timeout)).ok();
    s.set_write_timeout(Some(timeout)).ok();
    Ok(s)
}

fn head(method: &str, addr: &str, path: &str, body: &[u8]) -> String {
    format!(
        "{method} {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\nAccept: application/json\r\n\
         Content-Type: application/json\r\nContent-Length: {}\r\n\r\n",
        body.len()
    )
}

/// One request, answered within `timeout` (per read or write).
pub(crate) fn call(
    addr: &str,
    method: &str,
    path: &str,
    body: &[u8],
    timeout: Duration,
) -> Result<Resp, Failure> {
    let mut s = connect(addr, timeout)?;
    let unknown = |e: std::io::Error| Failure::Unknown(format!("{method} {path}: {e}"));
    s.write_all(head(method, addr, path, body).as_bytes())
        .and_then(|()| s.write_all(body))
        .map_err(unknown)?;
    let mut raw = Vec::new();
    s.read_to_end(&mut raw).map_err(unknown)?;
    let Some(end) = raw.windows(4).position(|w| w == b"\r\n\r\n") else {
        return Err(Failure::Unknown(format!(
            "{method} {path}: an incomplete answer ({} bytes)",
            raw.len()
        )));
    };
    let resp = parse_response(&raw);
    // A chunked body cut short by a crash parses as a shorter body: only a body that ends
    // with the terminating chunk is whole.
    let chunked = resp
        .header("transfer-encoding")
        .is_some_and(|v| v.contains("chunked"));
    if chunked && !raw[end..].ends_with(b"0\r\n\r\n") {
        return Err(Failure::Unknown(format!(
            "{method} {path}: a truncated answer"
        )));
    }
    Ok(resp)
}

/// What a watch stream yields.
pub(crate) enum Item {
    /// One event object.
    Event(Value),
    /// The stream ended (closed, reset, stalled, or answered with another status than 200).
    End(String),
    /// Not 200: the status code and body.
    Status(u16, String),
}

/// An open watch, read incrementally; its body is chunked JSON, one event after another.
pub(crate) struct WatchStream {
    s: TcpStream,
    /// Bytes read and not yet decoded (head, chunk framing).
    raw: Vec<u8>,
    /// Decoded body not yet parsed into events.
    body: Vec<u8>,
    head_done: bool,
    last_byte: Instant,
}

/// The longest a watch may go without a byte before it counts as stalled (a paused replica).
const STALL: Duration = Duration::from_secs(12);

impl WatchStream {
    pub(crate) fn open(addr: &str, path: &str) -> Result<WatchStream, Failure> {
        let mut s = connect(addr, Duration::from_secs(2))?;
        s.set_read_timeout(Some(Duration::from_millis(500))).ok();
        s.write_all(head("GET", addr, path, b"").as_bytes())
            .map_err(|e| Failure::Unknown(e.to_string()))?;
        Ok(WatchStream {
            s,
            raw: Vec::new(),
            body: Vec::new(),
            head_done: false,
            last_byte: Instant::now(),
        })
    }

    /// The next item; `None` when nothing arrived within half a second (the caller checks
    /// whether to stop, then asks again).
    pub(crate) fn next(&mut self) -> Option<Item> {
        if let Some(item) = self.parse() {
            return Some(item);
        }
        let mut buf = [0u8; 16384];
        match self.s.read(&mut buf) {
            Ok(0) => Some(Item::End("closed".into())),
            Ok(n) => {
                self.raw.extend_from_slice(&buf[..n]);
                self.last_byte = Instant::now();
                self.parse()
            }
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                ) =>
            {
                (self.last_byte.elapsed() > STALL).then(|| Item::End("stalled".into()))
            }
            Err(e) => Some(Item::End(e.to_string())),
        }
    }

    fn parse(&mut self) -> Option<Item> {
        if !self.head_done {
            let end = self.raw.windows(4).position(|w| w == b"\r\n\r\n")?;
            let head = String::from_utf8_lossy(&self.raw[..end]).into_owned();
            let code: u16 = head
                .split(' ')
                .nth(1)
                .and_then(|c| c.parse().ok())
                .unwrap_or(0);
            if code != 200 {
                // Small error bodies: whatever arrived with the head.
                let resp = parse_response(&self.raw);
                return Some(Item::Status(code, resp.text()));
            }
            self.raw.drain(..end + 4);
            self.head_done = true;
        }
        // Move whole chunks from raw to body.
        while let Some(eol) = self.raw.windows(2).position(|w| w == b"\r\n") {
            let size_line = String::from_utf8_lossy(&self.raw[..eol]).into_owned();
            let Ok(size) = usize::from_str_radix(size_line.split(';').next()?.trim(), 16) else {
                return Some(Item::End(format!("bad chunk size {size_line:?}")));
            };
            if size == 0 {
                return Some(Item::End("the server ended the stream".into()));
            }
            if self.raw.len() < eol + 2 + size + 2 {
                break;
            }
            self.body
                .extend_from_slice(&self.raw[eol + 2..eol + 2 + size]);
            self.raw.drain(..eol + 2 + size + 2);
        }
        let mut events = serde_json::Deserializer::from_slice(&self.body).into_iter::<Value>();
        match events.next() {
            Some(Ok(v)) => {
                let used = events.byte_offset();
                self.body.drain(..used);
                Some(Item::Event(v))
            }
            Some(Err(e)) if !e.is_eof() => Some(Item::End(format!("bad event: {e}"))),
            _ => None,
        }
    }
}
