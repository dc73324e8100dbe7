//! The `conneg` binary end to end: stdin and files, exit codes, stdout stays empty on errors,
//! stderr is one line.

use serde_json::{Value, json};
use std::io::Write;
use std::process::{Command, Output, Stdio};

const BIN: &str = env!("CARGO_BIN_EXE_conneg");

fn run(args: &[&str], stdin: &[u8]) -> Output {
    let mut child = Command::new(BIN)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run conneg");
    child.stdin.take().unwrap().write_all(stdin).unwrap();
    child.wait_with_output().unwrap()
}

/// Runs and expects success; returns stdout.
fn ok(args: &[&str], stdin: &[u8]) -> Vec<u8> {
    let out = run(args, stdin);
    assert!(
        out.status.success(),
        "conneg {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        out.stderr.is_empty(),
        "stderr: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

fn ok_str(args: &[&str], stdin: &[u8]) -> String {
    String::from_utf8(ok(args, stdin)).unwrap()
}

/// Runs and expects failure with exit 1, nothing on stdout and one line on stderr; returns it.
fn fails(args: &[&str], stdin: &[u8]) -> String {
    let out = run(args, stdin);
    assert_eq!(out.status.code(), Some(1), "conneg {args:?}: {out:?}");
    assert!(out.stdout.is_empty(), "stdout not empty: {:?}", out.stdout);
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(err.starts_with("error: "), "{err:?}");
    assert!(
        err.ends_with('\n') && err.matches('\n').count() == 1,
        "{err:?}"
    );
    err.trim_end().to_string()
}

fn unhex(s: &str) -> Vec<u8> {
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
        .collect()
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

fn vectors(name: &str) -> Vec<Value> {
    let p = format!("{}/../../tests/vectors/{name}", env!("CARGO_MANIFEST_DIR"));
    serde_json::from_str(&std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{p}: {e}")))
        .unwrap()
}

fn repo(path: &str) -> String {
    format!("{}/../../{path}", env!("CARGO_MANIFEST_DIR"))
}

#[test]
fn decode_appendix_a_as_kubernetes_does() {
    let mut accepted = 0;
    for v in vectors("appendix-a-kubernetes-expectations.json") {
        let h = v["hex"].as_str().unwrap();
        let input = unhex(h);
        if v["k8s"] == "accept" {
            let out = ok_str(&["decode"], &input);
            assert!(
                out.ends_with('\n') && out.matches('\n').count() == 1,
                "{h}: {out:?}"
            );
            let want: Value = conneg_cbor_value(&input);
            assert_eq!(serde_json::from_str::<Value>(&out).unwrap(), want, "{h}");
            // Kubernetes re-encodes it to these bytes; so does `encode --deterministic` from our
            // JSON (self-described prefix aside).
            let re = ok(&["encode", "--deterministic"], out.as_bytes());
            assert_eq!(
                hex(&re),
                format!("d9d9f7{}", v["reencoded"].as_str().unwrap()),
                "{h}"
            );
            accepted += 1;
        } else {
            fails(&["decode"], &input);
        }
    }
    assert_eq!(accepted, 64);
}

/// What `input` decodes to: the library's reading, which must agree with the RFC's decoded value
/// where the RFC gives one (with Kubernetes' readings of the time tags).
fn conneg_cbor_value(input: &[u8]) -> Value {
    let lib: Value = conneg_cbor::from_slice(input).unwrap();
    let h = hex(input);
    let rfc = vectors("rfc-appendix-a.json");
    let entry = rfc.iter().find(|e| e["hex"] == h.as_str()).expect("vector");
    let want = match h.as_str() {
        "c074323031332d30332d32315432303a30343a30305a" | "c11a514b67b0" => {
            Some(json!("2013-03-21T20:04:00Z"))
        }
        "c1fb41d452d9ec200000" => Some(json!("2013-03-21T20:04:00.5Z")),
        _ => entry.get("decoded").cloned(),
    };
    if let Some(w) = want {
        assert_eq!(lib, w, "{h}");
    }
    lib
}

#[test]
fn floats_always_have_a_point_or_exponent() {
    let cases = [
        ("f93c00", "1.0"),
        ("fb3ff0000000000000", "1.0"),
        ("f90000", "0.0"),
        ("f98000", "-0.0"),
        ("fa47c35000", "100000.0"),
        ("fb7e37e43c8800759c", "1e+300"),
        ("f90001", "5.960464477539063e-8"),
        ("01", "1"),
        ("3903e7", "-1000"),
        ("1b7fffffffffffffff", "9223372036854775807"),
        ("3b7fffffffffffffff", "-9223372036854775808"),
    ];
    for (h, want) in cases {
        assert_eq!(ok_str(&["decode"], &unhex(h)), format!("{want}\n"), "{h}");
    }
    // Through encode and back: 1.0 stays a float, 1 an integer.
    let cbor = ok(&["encode"], br#"{"f":1.0,"i":1,"g":[2.5,-0.0,1e300]}"#);
    assert_eq!(
        ok_str(&["decode"], &cbor),
        "{\"f\":1.0,\"i\":1,\"g\":[2.5,-0.0,1e+300]}\n"
    );
}

const FLUNDER_JSON: &str = r#"{"apiVersion":"wardle.example.com/v1beta1","kind":"Flunder","metadata":{"name":"my-first-flunder","namespace":"default"},"spec":{"flunderReference":"other","referenceType":"Flunder"},"status":{}}"#;

#[test]
fn decode_the_go_style_flunder_sample() {
    let path = repo("examples/samples/flunder.cbor");
    let out = ok_str(&["decode", &path], b"");
    // Same object; keys in the order the Go encoder sorted them (shorter first).
    assert_eq!(
        serde_json::from_str::<Value>(&out).unwrap(),
        serde_json::from_str::<Value>(FLUNDER_JSON).unwrap()
    );
    assert!(out.starts_with(r#"{"kind":"Flunder","spec":{"#), "{out}");
    // Stdin, implicit and explicit, gives the same.
    let bytes = std::fs::read(&path).unwrap();
    assert_eq!(ok_str(&["decode"], &bytes), out);
    assert_eq!(ok_str(&["decode", "-"], &bytes), out);
    // And we write exactly those bytes for that JSON (a Go peer's deterministic output).
    assert_eq!(
        ok(&["encode", "--deterministic"], FLUNDER_JSON.as_bytes()),
        bytes
    );
}

#[test]
fn encode_round_trips_and_modes() {
    let pod = std::fs::read(repo("crates/conneg-cbor/benches/fixtures/pod.json")).unwrap();
    let want: Value = serde_json::from_slice(&pod).unwrap();
    for args in [
        &["encode"][..],
        &["encode", "--deterministic"],
        &["encode", "--text-strings"],
        &["encode", "--deterministic", "--text-strings"],
    ] {
        let cbor = ok(args, &pod);
        assert!(cbor.starts_with(&[0xd9, 0xd9, 0xf7]), "{args:?}");
        let back: Value = serde_json::from_str(&ok_str(&["decode"], &cbor)).unwrap();
        assert_eq!(back, want, "{args:?}");
    }
    // Byte strings by default (Kubernetes), text strings on request.
    assert_eq!(hex(&ok(&["encode"], br#"{"a":"b"}"#)), "d9d9f7a141614162");
    assert_eq!(
        hex(&ok(&["encode", "--text-strings"], br#"{"a":"b"}"#)),
        "d9d9f7a161616162"
    );
    // Deterministic sorts by encoded key: shorter keys first.
    assert_eq!(
        hex(&ok(&["encode", "--deterministic"], br#"{"bb":1,"a":2}"#)),
        "d9d9f7a241610242626201"
    );
    // Deterministic output is the library's.
    assert_eq!(
        ok(&["encode", "--deterministic"], &pod),
        conneg_cbor::to_vec(&want).unwrap()
    );
}

#[test]
fn encode_rejects_bad_json() {
    let err = fails(&["encode"], b"{\"a\":");
    assert!(err.starts_with("error: invalid JSON input"), "{err}");
    fails(&["encode"], b"{} {}"); // two values without --seq
    fails(&["encode"], b"");
}

#[test]
fn sequences() {
    let json = b"{\"type\":\"ADDED\",\"object\":{\"a\":1}}\n{\"type\":\"DELETED\",\"object\":{\"a\":2.5}}\n 7 \"x\" null";
    let seq = ok(&["encode", "--seq"], json);
    // Each item self-described, back to back (RFC 8742, no framing).
    let mut want = Vec::new();
    for text in [
        r#"{"type":"ADDED","object":{"a":1}}"#,
        r#"{"type":"DELETED","object":{"a":2.5}}"#,
        "7",
        r#""x""#,
        "null",
    ] {
        let fast = conneg_cbor::EncodeOptions::fast();
        conneg_cbor::transcode::json_to_cbor_with(text.as_bytes(), &fast, &mut want).unwrap();
    }
    assert_eq!(seq, want);
    assert_eq!(
        seq.windows(3).filter(|w| w == &[0xd9, 0xd9, 0xf7]).count(),
        5
    );
    let out = ok_str(&["decode", "--seq"], &seq);
    assert_eq!(
        out,
        "{\"type\":\"ADDED\",\"object\":{\"a\":1}}\n{\"type\":\"DELETED\",\"object\":{\"a\":2.5}}\n7\n\"x\"\nnull\n"
    );
    // An empty sequence is zero items.
    assert_eq!(ok_str(&["decode", "--seq"], b""), "");
    assert!(ok(&["encode", "--seq"], b"  \n").is_empty());
    // Items without the prefix are fine too.
    assert_eq!(
        ok_str(&["decode", "--seq"], &unhex("01f93c0080")),
        "1\n1.0\n[]\n"
    );
    // Without --seq a sequence is trailing data.
    let err = fails(&["decode"], &seq);
    assert!(err.contains("trailing"), "{err}");
    // One bad item: nothing at all on stdout, the item named on stderr.
    let mut bad = seq.clone();
    bad.extend(unhex("a2416101416102"));
    bad.extend(&seq);
    let err = fails(&["decode", "--seq"], &bad);
    assert_eq!(err, r#"error: item 5: duplicate map key "a""#);
    // A truncated last item.
    let err = fails(&["decode", "--seq"], &seq[..seq.len() - 1]);
    assert!(
        err.starts_with("error: item 4: stream ended inside an item"),
        "{err}"
    );
}

#[test]
fn profile_errors_are_one_line_with_the_path() {
    // {"metadata": {"name": "a", "name": "b"}}, Kubernetes-style byte strings.
    let dup = unhex("d9d9f7a1486d65746164617461a2446e616d654161446e616d654162");
    assert_eq!(
        fails(&["decode"], &dup),
        r#"error: duplicate map key "name" at .metadata"#
    );
    let cases = [
        ("a1416af97e00", "NaN"),
        ("a1416a82f7", "undefined"),
        ("c249010000000000000000", "bignum"),
        ("1bffffffffffffffff", "overflows"),
        ("a10102", "key"),
        ("62c328", "UTF-8"),
        ("ff", ""),
        ("", "empty"),
        ("a1", "end of input"),
    ];
    for (h, needle) in cases {
        let err = fails(&["decode"], &unhex(h));
        assert!(err.contains(needle), "{h}: {err}");
    }
    // A map key holding control characters appears in the path escaped (found by fuzzing).
    let err = fails(&["decode"], &unhex("82bf61626163620a00ff"));
    assert!(err.contains(r"at [0].\n\0"), "{err}");
}

#[test]
fn file_errors_and_usage() {
    let err = fails(&["decode", "/nonexistent/x.cbor"], b"");
    assert_eq!(
        err,
        "error: cannot read /nonexistent/x.cbor: No such file or directory"
    );
    fails(&["encode", "/nonexistent/x.json"], b"");
    fails(&["diag", "/nonexistent/x.cbor"], b"");
    // Usage errors are clap's: exit 2.
    for args in [
        &[][..],
        &["decode", "--bogus"],
        &["frobnicate"],
        &["decode", "a", "b"],
    ] {
        let out = run(args, b"");
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert!(out.stdout.is_empty());
    }
    // --help everywhere.
    for args in [
        &["--help"][..],
        &["decode", "--help"],
        &["encode", "--help"],
        &["diag", "--help"],
    ] {
        let out = ok_str(args, b"");
        assert!(out.contains("Usage: conneg"), "{args:?}: {out}");
    }
    assert!(ok_str(&["encode", "--help"], b"").contains("--deterministic"));
    assert!(ok_str(&["decode", "--help"], b"").contains("--seq"));
}

#[test]
fn files_in_a_tempdir() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("in.json");
    std::fs::write(&json, br#"{"kind":"Flunder","n":[1,2.5]}"#).unwrap();
    let cbor = ok(&["encode", "--deterministic", json.to_str().unwrap()], b"");
    let cbor_path = dir.path().join("out.cbor");
    std::fs::write(&cbor_path, &cbor).unwrap();
    assert_eq!(
        ok_str(&["decode", cbor_path.to_str().unwrap()], b""),
        "{\"n\":[1,2.5],\"kind\":\"Flunder\"}\n"
    );
    assert_eq!(
        ok_str(&["diag", cbor_path.to_str().unwrap()], b""),
        "55799({h'6e': [1, 2.5], h'6b696e64': h'466c756e646572'})\n"
    );
}

#[test]
fn diag_examples() {
    let cases = [
        ("d9d9f7a1616101", r#"55799({"a": 1})"#),
        ("420102", "h'0102'"),
        ("9f0102ff", "[_ 1, 2]"),
        ("9fff", "[_ ]"),
        ("bf61610161629f0203ffff", r#"{_ "a": 1, "b": [_ 2, 3]}"#),
        ("7f657374726561646d696e67ff", r#"(_ "strea", "ming")"#),
        ("83010203", "[1, 2, 3]"),
        ("a0", "{}"),
        ("3bffffffffffffffff", "-18446744073709551616"),
        ("1bffffffffffffffff", "18446744073709551615"),
        ("fb3ff199999999999a", "1.1"),
        ("f93c00", "1.0"),
        ("fbc010666666666666", "-4.1"),
        ("fb7e37e43c8800759c", "1.0e+300"),
        ("f5", "true"),
        ("f6", "null"),
        // What decode rejects, diag shows.
        ("a2616101616102", r#"{"a": 1, "a": 2}"#),
        ("c249010000000000000000", "2(h'010000000000000000')"),
        ("6449455446", r#""IETF""#),
        ("62225c", r#""\"\\""#),
    ];
    for (h, want) in cases {
        assert_eq!(ok_str(&["diag"], &unhex(h)), format!("{want}\n"), "{h}");
    }
    // The RFC's own diagnostic forms where Appendix A gives them.
    let mut n = 0;
    for v in vectors("rfc-appendix-a.json") {
        if let Some(d) = v.get("diagnostic").and_then(Value::as_str) {
            let h = v["hex"].as_str().unwrap();
            if h == "f818" {
                // RFC 7049's example. RFC 8949 §3.3 made two-byte simple values below 32 not
                // well-formed, as Kubernetes treats them.
                let err = fails(&["diag"], &unhex(h));
                assert!(err.contains("simple value 24"), "{err}");
                continue;
            }
            assert_eq!(ok_str(&["diag"], &unhex(h)), format!("{d}\n"), "{h}");
            n += 1;
        }
    }
    assert!(n >= 20, "{n}");
    // Every Appendix A vector renders (diag accepts all well-formed input).
    for v in vectors("rfc-appendix-a.json") {
        if v["hex"] != "f818" {
            ok(&["diag"], &unhex(v["hex"].as_str().unwrap()));
        }
    }
    // A sequence, RFC 8742 §4.2 style.
    assert_eq!(
        ok_str(&["diag", "--seq"], &unhex("01820203a0")),
        "1, [2, 3], {}\n"
    );
    assert_eq!(ok_str(&["diag", "--seq"], b""), "");
    // Kubernetes' byte strings as text on request.
    assert_eq!(
        ok_str(&["diag", "--text"], &unhex("d9d9f7a1446e616d654161")),
        "55799({\"name\": \"a\"})\n"
    );
    let flunder = std::fs::read(repo("examples/samples/flunder.cbor")).unwrap();
    assert!(ok_str(&["diag", "--text"], &flunder).contains(r#""kind": "Flunder""#));
    // Malformed input is an error with the offset.
    let err = fails(&["diag"], &unhex("9f01"));
    assert_eq!(err, "error: unexpected end of input (byte offset 2)");
    let err = fails(&["diag"], &unhex("1c"));
    assert!(err.contains("reserved"), "{err}");
    let err = fails(&["diag"], &unhex("0101"));
    assert!(err.contains("trailing"), "{err}");
}
