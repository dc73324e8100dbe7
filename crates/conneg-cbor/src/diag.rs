//! RFC 8949 §8 diagnostic notation, for debugging and error messages.
//!
//! Anything well-formed is shown, whether or not the profile accepts it (NaN, `undefined`,
//! bignums, integer keys, invalid UTF-8…). The walk is iterative, so no input can exhaust the
//! stack.
//!
//! ```
//! use conneg_cbor::diag::diagnose;
//! assert_eq!(diagnose(b"\xd9\xd9\xf7\xa1\x41a\x01").unwrap(), r#"55799({h'61': 1})"#);
//! assert_eq!(diagnose(b"\x9f\x01\x02\xff").unwrap(), "[_ 1, 2]");
//! assert_eq!(diagnose(b"\x5f\x41\x01\x41\x02\xff").unwrap(), "(_ h'01', h'02')");
//! assert_eq!(diagnose(b"\xfb\x7e\x37\xe4\x3c\x88\x00\x75\x9c").unwrap(), "1.0e+300");
//! ```

use crate::error::{Error, ErrorKind, Result};
use crate::head::{
    BREAK, Head, MAJOR_ARRAY, MAJOR_BYTES, MAJOR_MAP, MAJOR_NEGATIVE, MAJOR_TAG, MAJOR_TEXT,
    MAJOR_UNSIGNED, float_value, read_head,
};
use std::fmt::Write;

/// Diagnostic notation options.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DiagOptions {
    byte_string_text: bool,
}

impl DiagOptions {
    /// Default options: byte strings as `h'…'`.
    pub fn new() -> Self {
        Self::default()
    }

    /// Show byte strings that are valid UTF-8 as quoted text (as Kubernetes' error messages
    /// do, since it writes every string as a byte string).
    pub fn byte_string_text(mut self, yes: bool) -> Self {
        self.byte_string_text = yes;
        self
    }

    /// Renders exactly one item.
    pub fn diagnose(&self, item: &[u8]) -> Result<String> {
        let mut out = String::new();
        let end = walk(item, 0, self, &mut out)?;
        if end != item.len() {
            return Err(Error::at(
                ErrorKind::TrailingData,
                end,
                format!("{} bytes of trailing data after the item", item.len() - end),
            ));
        }
        Ok(out)
    }

    /// Renders a CBOR Sequence (RFC 8742): the items separated by `, `.
    pub fn diagnose_seq(&self, items: &[u8]) -> Result<String> {
        let mut out = String::new();
        let mut pos = 0;
        while pos < items.len() {
            if pos > 0 {
                out.push_str(", ");
            }
            pos = walk(items, pos, self, &mut out)?;
        }
        Ok(out)
    }
}

/// Renders exactly one item with the default options.
pub fn diagnose(item: &[u8]) -> Result<String> {
    DiagOptions::default().diagnose(item)
}

/// Renders a CBOR Sequence with the default options.
pub fn diagnose_seq(items: &[u8]) -> Result<String> {
    DiagOptions::default().diagnose_seq(items)
}

enum Frame {
    /// An array (or a map, counting keys and values as items).
    Items {
        left: Option<u64>,
        done: u64,
        map: bool,
    },
    Tag,
}

fn walk(input: &[u8], mut pos: usize, opts: &DiagOptions, out: &mut String) -> Result<usize> {
    let mut stack: Vec<Frame> = Vec::new();
    loop {
        if let Some(Frame::Items {
            left: None,
            done,
            map,
        }) = stack.last()
            && input.get(pos) == Some(&BREAK)
        {
            if *map && done % 2 == 1 {
                return Err(Error::at(
                    ErrorKind::Syntax,
                    pos,
                    "break (0xff) where a map value is expected",
                ));
            }
            pos += 1;
            let close = if *map { '}' } else { ']' };
            if *done == 0 {
                // "[_ ]" / "{_ }"
                out.push(' ');
            }
            out.push(close);
            stack.pop();
            if complete(&mut stack, out) {
                return Ok(pos);
            }
            continue;
        }
        if let Some(Frame::Items { done, map, .. }) = stack.last()
            && *done > 0
        {
            out.push_str(if *map && done % 2 == 1 { ": " } else { ", " });
        }
        let start = pos;
        let h = read_head(input, &mut pos)?;
        match h.major {
            MAJOR_UNSIGNED => {
                let _ = write!(out, "{}", h.arg);
            }
            MAJOR_NEGATIVE => {
                let _ = write!(out, "{}", -1 - h.arg as i128);
            }
            MAJOR_BYTES | MAJOR_TEXT => string(input, &mut pos, &h, start, opts, out)?,
            MAJOR_ARRAY | MAJOR_MAP => {
                let map = h.major == MAJOR_MAP;
                out.push(if map { '{' } else { '[' });
                if h.indefinite() {
                    out.push('_');
                    stack.push(Frame::Items {
                        left: None,
                        done: 0,
                        map,
                    });
                    // The first item gets a space after "_".
                    if input.get(pos) != Some(&BREAK) {
                        out.push(' ');
                    }
                    continue;
                }
                let n = if map { h.arg.saturating_mul(2) } else { h.arg };
                if n > 0 {
                    stack.push(Frame::Items {
                        left: Some(n),
                        done: 0,
                        map,
                    });
                    continue;
                }
                out.push(if map { '}' } else { ']' });
            }
            MAJOR_TAG => {
                let _ = write!(out, "{}(", h.arg);
                stack.push(Frame::Tag);
                continue;
            }
            _ => match h.info {
                20 => out.push_str("false"),
                21 => out.push_str("true"),
                22 => out.push_str("null"),
                23 => out.push_str("undefined"),
                25..=27 => float(float_value(&h), out),
                31 => {
                    return Err(Error::at(
                        ErrorKind::Syntax,
                        start,
                        "break (0xff) outside an indefinite-length item",
                    ));
                }
                // RFC 8949 §3.3: f8 00..f8 1f are not well-formed.
                24 if h.arg < 32 => {
                    return Err(Error::at(
                        ErrorKind::Syntax,
                        start,
                        format!("invalid two-byte encoding of simple value {}", h.arg),
                    ));
                }
                _ => {
                    let _ = write!(out, "simple({})", h.arg);
                }
            },
        }
        if complete(&mut stack, out) {
            return Ok(pos);
        }
    }
}

/// An item was written: close every container and tag it completes. True when all are closed.
fn complete(stack: &mut Vec<Frame>, out: &mut String) -> bool {
    loop {
        match stack.last_mut() {
            None => return true,
            Some(Frame::Tag) => {
                out.push(')');
                stack.pop();
            }
            Some(Frame::Items { left, done, map }) => {
                *done += 1;
                if let Some(l) = left {
                    *l -= 1;
                    if *l == 0 {
                        out.push(if *map { '}' } else { ']' });
                        stack.pop();
                        continue;
                    }
                }
                return false;
            }
        }
    }
}

fn string(
    input: &[u8],
    pos: &mut usize,
    h: &Head,
    start: usize,
    opts: &DiagOptions,
    out: &mut String,
) -> Result<()> {
    let chunk = |out: &mut String, b: &[u8]| {
        let as_text =
            h.major == MAJOR_TEXT || (opts.byte_string_text && std::str::from_utf8(b).is_ok());
        if as_text {
            let s = String::from_utf8_lossy(b);
            out.push_str(&serde_json::to_string(&s).unwrap_or_default());
        } else {
            out.push_str("h'");
            for x in b {
                let _ = write!(out, "{x:02x}");
            }
            out.push('\'');
        }
    };
    if !h.indefinite() {
        let b = definite(input, *pos, h.arg, start)?;
        *pos += b.len();
        chunk(out, b);
        return Ok(());
    }
    let mut n = 0;
    loop {
        let cstart = *pos;
        match input.get(cstart) {
            None => return Err(Error::eof(cstart)),
            Some(&BREAK) => {
                *pos += 1;
                if n == 0 {
                    out.push_str(if h.major == MAJOR_TEXT {
                        "\"\"_"
                    } else {
                        "''_"
                    });
                } else {
                    out.push(')');
                }
                return Ok(());
            }
            _ => {}
        }
        let c = read_head(input, pos)?;
        if c.major != h.major || c.indefinite() {
            return Err(Error::at(
                ErrorKind::Syntax,
                cstart,
                "indefinite-length string chunk must be a definite-length string of the same type",
            ));
        }
        let b = definite(input, *pos, c.arg, cstart)?;
        *pos += b.len();
        out.push_str(if n == 0 { "(_ " } else { ", " });
        chunk(out, b);
        n += 1;
    }
}

fn definite(input: &[u8], pos: usize, len: u64, start: usize) -> Result<&[u8]> {
    if len > (input.len() - pos) as u64 {
        return Err(Error::eof(start));
    }
    Ok(&input[pos..pos + len as usize])
}

/// Floats as RFC 8949 Appendix A writes them: always with a fraction or an exponent
/// (`1.0`, `1.0e+300`, `5.960464477539063e-8`, `0.00006103515625`), `NaN`, `Infinity`.
fn float(f: f64, out: &mut String) {
    if f.is_nan() {
        out.push_str("NaN");
        return;
    }
    if f.is_infinite() {
        out.push_str(if f > 0.0 { "Infinity" } else { "-Infinity" });
        return;
    }
    let sci = format!("{f:e}");
    let (mantissa, exp) = sci.split_once('e').expect("LowerExp has an exponent");
    let exp: i32 = exp.parse().expect("exponent is an integer");
    if (-7 < exp) && (exp < 21) {
        let plain = format!("{f}");
        out.push_str(&plain);
        if !plain.contains('.') {
            out.push_str(".0");
        }
    } else {
        out.push_str(mantissa);
        if !mantissa.contains('.') {
            out.push_str(".0");
        }
        let _ = write!(out, "e{}{}", if exp < 0 { '-' } else { '+' }, exp.abs());
    }
}
