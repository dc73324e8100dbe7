//! Helpers shared by the integration tests (each test binary compiles this module and uses
//! what it needs, hence the `dead_code` allowance).

#![allow(dead_code)]

/// Bytes from hex digits; whitespace between them is ignored (`"a1 61 61 01"`).
pub(crate) fn unhex(s: &str) -> Vec<u8> {
    let s: String = s.chars().filter(|c| !c.is_whitespace()).collect();
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
        .collect()
}

/// Lower-case hex digits of `b`, no separators.
pub(crate) fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

/// One of the test-vector files the repository keeps under `tests/vectors/` (RFC 8949
/// Appendix A, and Kubernetes' outcome for each), parsed.
pub(crate) fn vectors(name: &str) -> Vec<serde_json::Value> {
    let p = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/vectors")
        .join(name);
    let text = std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}
