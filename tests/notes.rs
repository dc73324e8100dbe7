//! `examples/axum-notes` (an ordinary REST service on conneg's standard profile) over a real
//! socket, driven the way a non-Rust client would: Python's `http.client` for the requests and
//! `cbor2`, an independent generic CBOR decoder, for CBOR bodies. The script (`notes.py`)
//! checks every success and every error: each error must be an RFC 9457 problem with the right
//! status, `Content-Type` and headers (`Allow` on 405, `Accept`/`Accept-Patch` on 415), in
//! JSON and in CBOR, and every CBOR string must be a text string — in single objects, in the
//! streamed list, and in the stream of changes (a CBOR Sequence cbor2 reads event by event,
//! compared with the JSON lines of a second watch).
//!
//! Needs `python3` with `cbor2` (`scripts/install-test-deps`); fails, not skips, without it.

use std::process::Command;

use conneg_tests::{Example, build};

#[test]
fn every_answer_of_the_notes_service() {
    let server = Example::start(&build("axum-notes"));
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/notes.py");
    let out = Command::new("python3")
        .arg(script)
        .arg(server.addr.port().to_string())
        .output()
        .expect("run python3");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "notes.py failed:\n{stdout}\n{stderr}");
    // The script prints one line per check; make sure it ran them.
    assert!(stdout.contains("checked"), "{stdout}");
}
