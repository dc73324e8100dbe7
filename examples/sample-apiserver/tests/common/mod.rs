//! Test harness: start the real binary on a free port with a temp data dir, and a tiny
//! HTTP/1.1 client over `std::net::TcpStream` (no client library in the workspace).

#![allow(dead_code)]

pub(crate) mod h2;
pub(crate) mod kubectl;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

/// A running `sample-apiserver`.
pub(crate) struct Server {
    child: Option<Child>,
    /// `127.0.0.1:PORT`.
    pub(crate) addr: String,
    /// The data directory (kept across restarts).
    pub(crate) data_dir: PathBuf,
    /// Whether it serves HTTPS (`--secure-port`).
    pub(crate) tls: bool,
}

impl Server {
    /// Starts the binary with `args` (plus `--listen 127.0.0.1:0` unless `args` ask for
    /// `--secure-port`, and `--data-dir <dir>`) and waits for the `listening on
    /// http[s]://ADDR` line.
    pub(crate) fn start(data_dir: &Path, args: &[&str]) -> Server {
        let mut command = Command::new(env!("CARGO_BIN_EXE_sample-apiserver"));
        if !args.contains(&"--secure-port") {
            command.args(["--listen", "127.0.0.1:0"]);
        }
        let mut child = command
            .arg("--data-dir")
            .arg(data_dir)
            .args(args)
            .env("RUST_LOG", "warn")
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("spawn sample-apiserver");
        let stdout = child.stdout.take().expect("stdout");
        let mut line = String::new();
        BufReader::new(stdout)
            .read_line(&mut line)
            .expect("read the listening line");
        let addr = line
            .trim()
            .strip_prefix("listening on http://")
            .or_else(|| line.trim().strip_prefix("listening on https://"))
            .unwrap_or_else(|| panic!("unexpected first line {line:?}"))
            .to_owned();
        Server {
            child: Some(child),
            addr,
            data_dir: data_dir.to_owned(),
            tls: args.contains(&"--secure-port"),
        }
    }

    /// Stops the server with SIGTERM (graceful shutdown) and waits for it to exit.
    pub(crate) fn stop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = Command::new("kill")
                .args(["-TERM", &child.id().to_string()])
                .status();
            for _ in 0..100 {
                if let Ok(Some(status)) = child.try_wait() {
                    assert!(status.success(), "server exited with {status}");
                    return;
                }
                std::thread::sleep(Duration::from_millis(50));
            }
            let _ = child.kill();
            let _ = child.wait();
            panic!("server did not stop within 5 s of SIGTERM");
        }
    }

    /// The server's process id (0 once stopped).
    pub(crate) fn pid(&self) -> u32 {
        self.child.as_ref().map_or(0, Child::id)
    }

    /// `http://127.0.0.1:PORT` (`https` with `--secure-port`).
    pub(crate) fn url(&self) -> String {
        let scheme = if self.tls { "https" } else { "http" };
        format!("{scheme}://{}", self.addr)
    }

    /// One request; returns the response (the connection is closed after it).
    pub(crate) fn req(
        &self,
        method: &str,
        path: &str,
        headers: &[(&str, &str)],
        body: &[u8],
    ) -> Resp {
        request(&self.addr, method, path, headers, body)
    }

    /// GET with an Accept header.
    pub(crate) fn get(&self, path: &str, accept: &str) -> Resp {
        self.req("GET", path, &[("Accept", accept)], b"")
    }

    /// Creates the namespace `name` (namespaced objects need one, as in Kubernetes).
    pub(crate) fn create_namespace(&self, name: &str) {
        let r = self.post_json(
            "/api/v1/namespaces",
            &format!(r#"{{"metadata":{{"name":"{name}"}}}}"#),
        );
        assert_eq!(r.code, 201, "create namespace {name}: {}", r.text());
    }

    /// POST JSON.
    pub(crate) fn post_json(&self, path: &str, body: &str) -> Resp {
        self.req(
            "POST",
            path,
            &[("Content-Type", "application/json")],
            body.as_bytes(),
        )
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

/// A response.
#[derive(Debug)]
pub(crate) struct Resp {
    /// Status code.
    pub(crate) code: u16,
    /// Headers, names lower-cased.
    pub(crate) headers: Vec<(String, String)>,
    /// Body (de-chunked).
    pub(crate) body: Vec<u8>,
}

impl Resp {
    /// The first header named `name`.
    pub(crate) fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }
    /// All headers named `name`.
    pub(crate) fn headers_named(&self, name: &str) -> Vec<&str> {
        self.headers
            .iter()
            .filter(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
            .collect()
    }
    /// The body as JSON.
    pub(crate) fn json(&self) -> serde_json::Value {
        serde_json::from_slice(&self.body).unwrap_or_else(|e| {
            panic!(
                "body is not JSON ({e}): {:?}",
                String::from_utf8_lossy(&self.body)
            )
        })
    }
    /// The body as text.
    pub(crate) fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }
}

/// Sends one HTTP/1.1 request with `Connection: close` and reads the whole response.
pub(crate) fn request(
    addr: &str,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &[u8],
) -> Resp {
    let mut s = TcpStream::connect(addr).expect("connect");
    s.set_read_timeout(Some(Duration::from_secs(60))).ok();
    let mut head = format!(
        "{method} {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\nContent-Length: {}\r\n",
        body.len()
    );
    for (k, v) in headers {
        head.push_str(&format!("{k}: {v}\r\n"));
    }
    head.push_str("\r\n");
    s.write_all(head.as_bytes()).expect("write head");
    s.write_all(body).expect("write body");
    let mut raw = Vec::new();
    s.read_to_end(&mut raw).expect("read response");
    parse_response(&raw)
}

/// Parses a complete HTTP/1.1 response.
pub(crate) fn parse_response(raw: &[u8]) -> Resp {
    let end = raw
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .expect("end of head");
    let head = String::from_utf8_lossy(&raw[..end]).into_owned();
    let mut lines = head.split("\r\n");
    let status = lines.next().expect("status line");
    let code: u16 = status
        .split(' ')
        .nth(1)
        .and_then(|c| c.parse().ok())
        .expect("status code");
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_ascii_lowercase(), v.trim().to_owned()))
        .collect();
    let mut body = raw[end + 4..].to_vec();
    if headers
        .iter()
        .any(|(k, v)| k == "transfer-encoding" && v.contains("chunked"))
    {
        body = dechunk(&body);
    }
    Resp {
        code,
        headers,
        body,
    }
}

fn dechunk(mut b: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    while let Some(i) = b.windows(2).position(|w| w == b"\r\n") {
        let size_line = String::from_utf8_lossy(&b[..i]);
        let size = usize::from_str_radix(size_line.split(';').next().unwrap_or("").trim(), 16)
            .unwrap_or(0);
        b = &b[i + 2..];
        if size == 0 || b.len() < size {
            out.extend_from_slice(&b[..size.min(b.len())]);
            break;
        }
        out.extend_from_slice(&b[..size]);
        b = &b[(size + 2).min(b.len())..];
    }
    out
}

/// The flunder collection path in a version.
pub(crate) fn flunders(version: &str, ns: &str) -> String {
    format!("/apis/wardle.example.com/{version}/namespaces/{ns}/flunders")
}

/// A fresh temp dir.
pub(crate) fn tempdir() -> tempfile::TempDir {
    tempfile::tempdir().expect("tempdir")
}

/// Runs `python3 -c script args...`, asserting success; returns stdout.
pub(crate) fn python(script: &str, args: &[&str]) -> String {
    let out = Command::new("python3")
        .arg("-c")
        .arg(script)
        .args(args)
        .output()
        .expect("python3 must be installed (scripts/test puts the venv's first on PATH)");
    assert!(
        out.status.success(),
        "python failed:\nstdout: {}\nstderr: {}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}
