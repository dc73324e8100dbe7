//! The decoder fuzz body (fuzz/src/lib.rs) over a generated seed corpus, on stable, so that CI
//! checks what `cargo fuzz run decode` checks: RFC 8949 Appendix A, the benchmark objects in
//! every encoder configuration, edge cases, every truncation and deterministic mutations.
//!
//! `CONNEG_WRITE_CORPUS=fuzz/corpus/decode cargo test -p conneg-tests --test fuzz_corpus`
//! also writes the seeds there, one file each, to start a libFuzzer run from.

#[path = "../fuzz/src/lib.rs"]
mod body;

fn appendix_a() -> Vec<String> {
    let p = concat!(env!("CARGO_MANIFEST_DIR"), "/vectors/rfc-appendix-a.json");
    let text = std::fs::read_to_string(p).unwrap_or_else(|e| panic!("{p}: {e}"));
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    v.as_array()
        .unwrap()
        .iter()
        .map(|e| e["hex"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn fuzz_body_over_seed_corpus() {
    let seeds = body::seeds(&appendix_a());
    assert!(seeds.len() > 4000, "{}", seeds.len());
    if let Ok(dir) = std::env::var("CONNEG_WRITE_CORPUS") {
        std::fs::create_dir_all(&dir).unwrap();
        for (i, s) in seeds.iter().enumerate() {
            std::fs::write(format!("{dir}/seed-{i:05}"), s).unwrap();
        }
    }
    let mut accepted = 0;
    for s in &seeds {
        body::decode(s);
        accepted += usize::from(conneg_cbor::from_slice::<serde_json::Value>(s).is_ok());
    }
    // The corpus exercises both sides of the decoder.
    assert!(
        accepted > 100 && accepted < seeds.len() / 2,
        "{accepted} of {}",
        seeds.len()
    );
}

#[test]
fn the_kubernetes_seed_decodes() {
    body::decode(&body::unhex("a24a61706956657273696f6e4178446b696e644179"));
    let v: serde_json::Value =
        conneg_cbor::from_slice(&body::unhex("a24a61706956657273696f6e4178446b696e644179"))
            .unwrap();
    assert_eq!(v, serde_json::json!({"apiVersion": "x", "kind": "y"}));
}

/// Inputs the fuzzer once failed on (fuzz/regressions), kept passing.
#[test]
fn fuzz_regressions() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../fuzz/regressions");
    let mut n = 0;
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        body::decode(&std::fs::read(&path).unwrap());
        n += 1;
    }
    assert!(n >= 2, "{n} regression inputs");
}

/// Found by `cargo fuzz`: a map key holding a newline made the error's path, and so its
/// `Display`, span lines. Paths escape control characters.
#[test]
fn error_paths_escape_control_characters() {
    // [{_ "b": "c", "\n\0": <break>}]
    let e = conneg_cbor::from_slice::<serde_json::Value>(&body::unhex("82bf61626163620a00ff"))
        .unwrap_err();
    assert_eq!(e.path(), r"[0].\n\0");
    assert!(!e.to_string().contains('\n'), "{e}");
    // Ordinary keys are untouched.
    let e =
        conneg_cbor::from_slice::<serde_json::Value>(&body::unhex("a1416ba1416af7")).unwrap_err();
    assert_eq!(e.path(), ".k.j");
}
