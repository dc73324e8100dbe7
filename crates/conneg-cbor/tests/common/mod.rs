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
