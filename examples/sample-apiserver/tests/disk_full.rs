//! The embedded store on a full filesystem: the failing write is a 500, reads, lists and
//! watches go on, `/readyz` fails while writes cannot commit, and everything works again once
//! space is freed. Needs a small tmpfs, so it mounts one; where mounting is not allowed (not
//! root, a container without CAP_SYS_ADMIN) it says so and passes.

mod common;

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;

use common::{Server, flunders, tempdir};
use serde_json::json;

/// A tmpfs mounted for the test, unmounted when dropped.
struct Tmpfs(PathBuf);

impl Tmpfs {
    fn mount(dir: &Path, size: &str) -> Result<Tmpfs, String> {
        let out = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
            .arg(dir)
            .output()
            .map_err(|e| e.to_string())?;
        if out.status.success() {
            Ok(Tmpfs(dir.to_owned()))
        } else {
            Err(String::from_utf8_lossy(&out.stderr).trim().to_owned())
        }
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg("-l").arg(&self.0).status();
    }
}

/// Writes to `path` until the filesystem is full.
fn fill(path: &Path) {
    let mut f = std::fs::File::create(path).expect("create the filler");
    let chunk = vec![0u8; 64 << 10];
    while f.write_all(&chunk).and_then(|()| f.sync_all()).is_ok() {}
    // A last byte-by-byte pass takes what a whole chunk did not fit in.
    while f.write_all(&[0]).and_then(|()| f.sync_all()).is_ok() {}
}

fn flunder(name: &str) -> String {
    json!({
        "apiVersion": "wardle.example.com/v1beta1", "kind": "Flunder",
        "metadata": {"name": name, "annotations": {"pad": "x".repeat(200_000)}},
    })
    .to_string()
}

#[test]
fn a_full_disk_fails_writes_only_and_recovers() {
    let dir = tempdir();
    let _tmpfs = match Tmpfs::mount(dir.path(), "8m") {
        Ok(t) => t,
        Err(e) => {
            println!(
                "SKIPPED a_full_disk_fails_writes_only_and_recovers: cannot mount a tmpfs ({e})"
            );
            return;
        }
    };
    // Without the system namespaces written at start, the database file keeps the size
    // this test was tuned to: the readiness probe's one-page write must not fit once the
    // disk is full.
    let mut s = Server::start(&dir.path().join("data"), &["--standalone=false"]);
    let url = flunders("v1beta1", "default");
    assert_eq!(s.post_json(&url, &flunder("a")).code, 201);
    let r = s.get("/readyz?verbose", "*/*");
    assert_eq!(r.code, 200, "{}", r.text());
    assert!(r.text().contains("[+]storage-redb ok"), "{}", r.text());

    let filler = dir.path().join("filler");
    fill(&filler);
    let failed = (0..50).find_map(|i| {
        let r = s.post_json(&url, &flunder(&format!("b{i}")));
        (r.code != 201).then_some(r)
    });
    let r = failed.expect("a write fails on a full disk");
    assert_eq!(r.code, 500, "{}", r.text());
    assert!(r.text().contains("No space left on device"), "{}", r.text());

    // Reads, lists and watches go on; readiness says why writes fail.
    for _ in 0..2 {
        let r = s.get(&format!("{url}/a"), "application/json");
        assert_eq!(r.code, 200, "{}", r.text());
        let r = s.get(&url, "application/json");
        assert_eq!(r.code, 200, "{}", r.text());
        let r = s.get(
            &format!("{url}?watch=true&timeoutSeconds=1"),
            "application/json",
        );
        assert_eq!(r.code, 200, "{}", r.text());
        assert!(r.text().contains(r#""type":"ADDED""#), "{}", r.text());
        let r = s.get("/readyz?verbose", "*/*");
        assert_eq!(r.code, 500, "{}", r.text());
        assert!(r.text().contains("[-]storage-redb failed"), "{}", r.text());
        assert!(r.text().contains("No space left on device"), "{}", r.text());
        assert!(!r.text().contains("etcd"), "{}", r.text());
    }

    std::fs::remove_file(&filler).expect("free the space");
    let r = s.post_json(&url, &flunder("c"));
    assert_eq!(r.code, 201, "{}", r.text());
    let r = s.get("/readyz", "*/*");
    assert_eq!((r.code, r.text().as_str()), (200, "ok"));
    let r = s.get(&url, "application/json");
    assert_eq!(r.code, 200);
    s.stop();
}
