//! Support shared by the cross-crate tests: building and starting the runnable examples.
//!
//! The examples print `listening on http://ADDR` as their first line when started with
//! `--listen 127.0.0.1:0`; [`Example::start`] reads it, and the process is killed on drop.

use std::io::Read;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::OnceLock;

/// The example packages whose binaries serve the same items API.
pub const ITEM_EXAMPLES: [&str; 2] = ["axum-items", "hyper-items"];

/// Builds the item examples once per test binary and returns their paths, in the order of
/// [`ITEM_EXAMPLES`]. Each is built by its own `cargo build`, so hyper-items stays free of axum.
pub fn item_example_binaries() -> &'static [PathBuf] {
    static BINS: OnceLock<Vec<PathBuf>> = OnceLock::new();
    BINS.get_or_init(|| ITEM_EXAMPLES.iter().map(|p| build(p)).collect())
}

/// Builds `package`'s binary (of the same name) in this test's profile and returns its path.
pub fn build(package: &str) -> PathBuf {
    // A test runs from target/<profile>/deps/; the binaries land in target/<profile>/.
    let exe = std::env::current_exe().expect("test executable path");
    let dir = exe
        .parent()
        .and_then(|deps| deps.parent())
        .expect("target/<profile>/deps")
        .to_path_buf();
    let profile = dir
        .file_name()
        .and_then(|p| p.to_str())
        .expect("profile directory name")
        .to_owned();
    let status = Command::new(env!("CARGO"))
        .args(["build", "--quiet", "-p", package, "--profile"])
        .arg(if profile == "debug" { "dev" } else { &profile })
        .status()
        .expect("run cargo build");
    assert!(status.success(), "cargo build -p {package} failed");
    dir.join(format!("{package}{}", std::env::consts::EXE_SUFFIX))
}

/// sample-apiserver, built once per test binary, running with in-memory storage on a free
/// loopback port; killed when dropped.
pub struct SampleServer {
    example: Example,
}

impl SampleServer {
    /// Starts `sample-apiserver --storage memory` with `args` added.
    pub fn start(args: &[&str]) -> SampleServer {
        static BIN: OnceLock<PathBuf> = OnceLock::new();
        let bin = BIN.get_or_init(|| build("sample-apiserver"));
        let mut all = vec!["--storage", "memory"];
        all.extend_from_slice(args);
        SampleServer {
            example: Example::start_with(bin, &all),
        }
    }

    /// `http://ADDR`.
    pub fn url(&self) -> String {
        format!("http://{}", self.example.addr)
    }
}

/// A running example server; killed when dropped.
pub struct Example {
    child: Child,
    /// Where it listens.
    pub addr: SocketAddr,
}

impl Example {
    /// Starts `bin --listen 127.0.0.1:0` and waits for the address it prints.
    pub fn start(bin: &PathBuf) -> Example {
        Example::start_with(bin, &[])
    }

    /// Starts `bin --listen 127.0.0.1:0 ARGS...` and waits for the address it prints.
    pub fn start_with(bin: &PathBuf, args: &[&str]) -> Example {
        let mut child = Command::new(bin)
            .args(["--listen", "127.0.0.1:0"])
            .args(args)
            .stdout(Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| panic!("start {bin:?}: {e}"));
        let mut stdout = child.stdout.take().expect("piped stdout");
        let mut line = Vec::new();
        let mut byte = [0];
        while stdout.read(&mut byte).unwrap_or(0) == 1 && byte[0] != b'\n' {
            line.push(byte[0]);
        }
        let line = String::from_utf8_lossy(&line).into_owned();
        let addr = line
            .trim()
            .strip_prefix("listening on http://")
            .unwrap_or_else(|| panic!("{bin:?} printed {line:?}"))
            .parse()
            .unwrap_or_else(|e| panic!("{bin:?} printed a bad address {line:?}: {e}"));
        Example { child, addr }
    }
}

impl Drop for Example {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
