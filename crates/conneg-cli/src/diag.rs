//! RFC 8949 §8 diagnostic notation for any well-formed CBOR.
//!
//! Deliberately not the strict profile: the point of `conneg diag` is to look at input the
//! profile rejects (duplicate keys, NaN, `undefined`, bignums, non-string keys) and see why.
//! Only input that is not well-formed (RFC 8949 Appendix F) is an error.

use std::fmt::Write as _;

/// Well-formedness error: what and where.
#[derive(Debug)]
pub(crate) struct Malformed {
    pub(crate) offset: usize,
    pub(crate) msg: &'static str,
}

type R<T> = Result<T, Malformed>;

/// Nesting limit for the renderer (the strict decoder's default, too).
const MAX_DEPTH: usize = 10_000;

struct Reader<'a> {
    input: &'a [u8],
    pos: usize,
}

struct Head {
    major: u8,
    info: u8,
    arg: u64,
    start: usize,
}

impl Reader<'_> {
    fn err<T>(&self, offset: usize, msg: &'static str) -> R<T> {
        Err(Malformed { offset, msg })
    }

    fn take(&mut self, n: usize) -> R<&[u8]> {
        if self.input.len() - self.pos < n {
            return self.err(self.input.len(), "unexpected end of input");
        }
        let s = &self.input[self.pos..self.pos + n];
        self.pos += n;
        Ok(s)
    }

    fn head(&mut self) -> R<Head> {
        let start = self.pos;
        let b = self.take(1)?[0];
        let (major, info) = (b >> 5, b & 0x1f);
        let arg = match info {
            0..=23 => u64::from(info),
            24..=27 => {
                let n = 1usize << (info - 24);
                self.take(n)?
                    .iter()
                    .fold(0u64, |a, &x| a << 8 | u64::from(x))
            }
            28..=30 => return self.err(start, "reserved additional information value"),
            _ => {
                if matches!(major, 0 | 1 | 6) {
                    return self.err(start, "indefinite length on a major type that has none");
                }
                0
            }
        };
        if major == 7 && info == 24 && arg < 32 {
            return self.err(start, "two-byte encoding of a simple value below 32");
        }
        Ok(Head {
            major,
            info,
            arg,
            start,
        })
    }

    fn is_break(&self) -> bool {
        self.input.get(self.pos) == Some(&0xff)
    }

    fn item(&mut self, out: &mut String, depth: usize) -> R<()> {
        if depth > MAX_DEPTH {
            return self.err(self.pos, "nesting deeper than 10000 levels");
        }
        let h = self.head()?;
        let indefinite = h.info == 31;
        match h.major {
            0 => write!(out, "{}", h.arg).unwrap(),
            1 => write!(out, "{}", -1 - i128::from(h.arg)).unwrap(),
            2 | 3 if indefinite => {
                out.push_str("(_ ");
                let mut first = true;
                while !self.is_break() {
                    let c = self.head()?;
                    if c.major != h.major || c.info == 31 {
                        return self
                            .err(c.start, "indefinite-length string chunk of the wrong type");
                    }
                    if !first {
                        out.push_str(", ");
                    }
                    first = false;
                    self.string(out, &c)?;
                }
                self.pos += 1;
                out.push(')');
            }
            2 | 3 => self.string(out, &h)?,
            4 | 5 => {
                let (open, close) = if h.major == 4 { ('[', ']') } else { ('{', '}') };
                out.push(open);
                if indefinite {
                    out.push_str("_ ");
                }
                let mut i = 0u64;
                loop {
                    if indefinite {
                        if self.is_break() {
                            self.pos += 1;
                            break;
                        }
                    } else if i == h.arg {
                        break;
                    }
                    if self.pos >= self.input.len() {
                        return self.err(self.pos, "unexpected end of input");
                    }
                    if i > 0 {
                        out.push_str(", ");
                    }
                    self.item(out, depth + 1)?;
                    if h.major == 5 {
                        out.push_str(": ");
                        if self.is_break() {
                            return self.err(self.pos, "break in place of a map value");
                        }
                        self.item(out, depth + 1)?;
                    }
                    i += 1;
                }
                out.push(close);
            }
            6 => {
                write!(out, "{}(", h.arg).unwrap();
                self.item(out, depth + 1)?;
                out.push(')');
            }
            _ => match h.info {
                20 => out.push_str("false"),
                21 => out.push_str("true"),
                22 => out.push_str("null"),
                23 => out.push_str("undefined"),
                25 => float(out, half::f16::from_bits(h.arg as u16).to_f64()),
                26 => float(out, f64::from(f32::from_bits(h.arg as u32))),
                27 => float(out, f64::from_bits(h.arg)),
                31 => return self.err(h.start, "break outside an indefinite-length item"),
                _ => write!(out, "simple({})", h.arg).unwrap(),
            },
        }
        Ok(())
    }

    fn string(&mut self, out: &mut String, h: &Head) -> R<()> {
        let n = usize::try_from(h.arg).unwrap_or(usize::MAX);
        let b = self.take(n)?;
        if h.major == 2 {
            out.push_str("h'");
            for x in b {
                write!(out, "{x:02x}").unwrap();
            }
            out.push('\'');
        } else {
            match std::str::from_utf8(b) {
                Ok(s) => out.push_str(&serde_json::to_string(s).expect("strings serialize")),
                Err(_) => return self.err(h.start, "text string is not valid UTF-8"),
            }
        }
        Ok(())
    }
}

fn float(out: &mut String, f: f64) {
    if f.is_nan() {
        out.push_str("NaN");
    } else if f.is_infinite() {
        out.push_str(if f > 0.0 { "Infinity" } else { "-Infinity" });
    } else {
        // Debug formatting always has a decimal point or an exponent: 1.0, 1e300, 5.9e-8.
        write!(out, "{f:?}").unwrap();
    }
}

/// Renders every item of `input` (one per line when `seq`; exactly one item otherwise).
pub(crate) fn render(input: &[u8], seq: bool) -> R<String> {
    let mut r = Reader { input, pos: 0 };
    let mut out = String::new();
    if !seq && input.is_empty() {
        return r.err(0, "empty input");
    }
    while r.pos < input.len() {
        r.item(&mut out, 0)?;
        out.push('\n');
        if !seq && r.pos < input.len() {
            return r.err(
                r.pos,
                "trailing bytes after the item (use --seq for a CBOR sequence)",
            );
        }
    }
    Ok(out)
}
