//! Low-level CBOR heads (RFC 8949 §3): reading them from a slice and writing them, shortest form,
//! through minicbor's encoder.

use crate::error::{Error, ErrorKind, Result};
use minicbor::Encoder;

pub(crate) const MAJOR_UNSIGNED: u8 = 0;
pub(crate) const MAJOR_NEGATIVE: u8 = 1;
pub(crate) const MAJOR_BYTES: u8 = 2;
pub(crate) const MAJOR_TEXT: u8 = 3;
pub(crate) const MAJOR_ARRAY: u8 = 4;
pub(crate) const MAJOR_MAP: u8 = 5;
pub(crate) const MAJOR_TAG: u8 = 6;
pub(crate) const MAJOR_SIMPLE: u8 = 7;

/// Additional information 31: indefinite length (or "break" for major type 7).
pub(crate) const INDEFINITE: u8 = 31;
pub(crate) const BREAK: u8 = 0xff;

pub(crate) const TAG_SELF_DESCRIBED: u64 = 55799;

/// One decoded head. `arg` is the argument (count, length, value, tag number or float bits);
/// it is 0 when `info` is 31.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Head {
    pub(crate) major: u8,
    pub(crate) info: u8,
    pub(crate) arg: u64,
}

impl Head {
    #[inline]
    pub(crate) fn indefinite(&self) -> bool {
        self.info == INDEFINITE
    }
}

/// Reads one head at `*pos`, advancing `*pos`. Rejects reserved additional information (28-30) and
/// indefinite lengths on major types 0, 1 and 6; leaves other uses of 31 to the caller.
#[inline(always)]
pub(crate) fn read_head(input: &[u8], pos: &mut usize) -> Result<Head> {
    let start = *pos;
    let Some(&ib) = input.get(start) else {
        return Err(Error::eof(start));
    };
    let major = ib >> 5;
    let info = ib & 0x1f;
    let (arg, n) = match info {
        0..=23 => (info as u64, 0),
        24 => (
            *input.get(start + 1).ok_or_else(|| Error::eof(start))? as u64,
            1,
        ),
        25 => (be(input, start + 1, 2)?, 2),
        26 => (be(input, start + 1, 4)?, 4),
        27 => (be(input, start + 1, 8)?, 8),
        28..=30 => {
            return Err(Error::at(
                ErrorKind::Syntax,
                start,
                format!("reserved additional information {info} in initial byte 0x{ib:02x}"),
            ));
        }
        _ => {
            if matches!(major, MAJOR_UNSIGNED | MAJOR_NEGATIVE | MAJOR_TAG) {
                return Err(Error::at(
                    ErrorKind::Syntax,
                    start,
                    format!("indefinite length is not allowed for major type {major}"),
                ));
            }
            (0, 0)
        }
    };
    *pos = start + 1 + n;
    Ok(Head { major, info, arg })
}

#[inline]
fn be(input: &[u8], at: usize, n: usize) -> Result<u64> {
    let Some(b) = input.get(at..at + n) else {
        return Err(Error::eof(at - 1));
    };
    let mut v = 0u64;
    for &x in b {
        v = (v << 8) | x as u64;
    }
    Ok(v)
}

/// Decodes the float carried by a major type 7 head with info 25, 26 or 27.
#[inline]
pub(crate) fn float_value(h: &Head) -> f64 {
    match h.info {
        25 => half::f16::from_bits(h.arg as u16).to_f64(),
        26 => f32::from_bits(h.arg as u32) as f64,
        _ => f64::from_bits(h.arg),
    }
}

/// Checks a decoded float against the profile: NaN and ±Infinity are rejected.
#[inline]
pub(crate) fn check_float(f: f64, offset: usize) -> Result<f64> {
    if f.is_nan() {
        Err(Error::at(
            ErrorKind::UnsupportedValue,
            offset,
            "floating-point NaN is not accepted",
        ))
    } else if f.is_infinite() {
        Err(Error::at(
            ErrorKind::UnsupportedValue,
            offset,
            "floating-point infinity is not accepted",
        ))
    } else {
        Ok(f)
    }
}

/// Checks a simple value (major 7, info < 25) against the profile; returns its value.
#[inline]
pub(crate) fn check_simple(h: &Head, offset: usize) -> Result<u8> {
    if h.info == 24 && h.arg < 32 {
        return Err(Error::at(
            ErrorKind::Syntax,
            offset,
            format!("invalid two-byte encoding of simple value {}", h.arg),
        ));
    }
    match h.arg {
        20..=22 => Ok(h.arg as u8),
        23 => Err(Error::at(
            ErrorKind::UnsupportedValue,
            offset,
            "undefined is not accepted",
        )),
        n => Err(Error::at(
            ErrorKind::UnsupportedValue,
            offset,
            format!("simple value {n} is not recognized"),
        )),
    }
}

/// Profile check for an integer head (major 0 or 1): the value must fit `i64`.
#[inline]
pub(crate) fn check_int(h: &Head, offset: usize) -> Result<i128> {
    if h.arg > i64::MAX as u64 {
        let v = if h.major == MAJOR_UNSIGNED {
            h.arg as i128
        } else {
            -1 - h.arg as i128
        };
        return Err(Error::at(
            ErrorKind::IntegerOverflow,
            offset,
            format!("integer {v} overflows i64"),
        ));
    }
    Ok(if h.major == MAJOR_UNSIGNED {
        h.arg as i128
    } else {
        -1 - h.arg as i128
    })
}

// ---- writing -------------------------------------------------------------------------------

/// Writes a head for `major` with argument `n` in its shortest form, with one capacity check.
///
/// (minicbor's `Encoder` produces the same bytes, see the tests, but writes the initial byte and
/// the argument through two non-inlined `write_all` calls, which costs about half of the encode
/// time on string-heavy objects.)
#[inline(always)]
pub(crate) fn write_head(out: &mut Vec<u8>, major: u8, n: u64) {
    let m = major << 5;
    if n < 24 {
        out.push(m | n as u8);
    } else if n <= 0xff {
        out.extend_from_slice(&[m | 24, n as u8]);
    } else if n <= 0xffff {
        let b = (n as u16).to_be_bytes();
        out.extend_from_slice(&[m | 25, b[0], b[1]]);
    } else if n <= 0xffff_ffff {
        let b = (n as u32).to_be_bytes();
        out.extend_from_slice(&[m | 26, b[0], b[1], b[2], b[3]]);
    } else {
        let b = n.to_be_bytes();
        out.extend_from_slice(&[m | 27, b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7]]);
    }
}

/// The number of bytes a shortest head with argument `n` takes.
#[inline]
pub(crate) fn head_len(n: u64) -> usize {
    match n {
        0..=23 => 1,
        24..=0xff => 2,
        0x100..=0xffff => 3,
        0x1_0000..=0xffff_ffff => 5,
        _ => 9,
    }
}

/// Writes an unsigned integer.
#[inline]
pub(crate) fn write_u64(out: &mut Vec<u8>, v: u64) {
    write_head(out, MAJOR_UNSIGNED, v);
}

/// Writes a signed integer.
#[inline]
pub(crate) fn write_i64(out: &mut Vec<u8>, v: i64) {
    if v >= 0 {
        write_head(out, MAJOR_UNSIGNED, v as u64);
    } else {
        write_head(out, MAJOR_NEGATIVE, !(v as u64));
    }
}

/// Writes a finite float in the shortest width that holds it exactly (f16 subnormals included),
/// through minicbor's encoder. The caller has rejected NaN and infinities.
#[inline]
pub(crate) fn write_f64(out: &mut Vec<u8>, v: f64) {
    let mut e = Encoder::new(out);
    let h = half::f16::from_f64(v);
    let _ = if h.to_f64() == v {
        e.f16(h.to_f32())
    } else if (v as f32) as f64 == v {
        e.f32(v as f32)
    } else {
        e.f64(v)
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hex(b: &[u8]) -> String {
        b.iter().map(|x| format!("{x:02x}")).collect()
    }

    #[test]
    fn shortest_floats() {
        for (v, want) in [
            (0.0, "f90000"),
            (-0.0, "f98000"),
            (1.1, "fb3ff199999999999a"),
            (100000.0, "fa47c35000"),
            (5.960464477539063e-8, "f90001"),
            (1.0, "f93c00"),
            (65504.0, "f97bff"),
            (3.4028234663852886e+38, "fa7f7fffff"),
            (1.0e300, "fb7e37e43c8800759c"),
        ] {
            let mut out = Vec::new();
            write_f64(&mut out, v);
            assert_eq!(hex(&out), want, "{v}");
        }
    }

    #[test]
    fn shortest_heads() {
        for (n, want) in [
            (0u64, "40"),
            (23, "57"),
            (24, "5818"),
            (256, "590100"),
            (65536, "5a00010000"),
            (1 << 32, "5b0000000100000000"),
        ] {
            let mut out = Vec::new();
            write_head(&mut out, MAJOR_BYTES, n);
            assert_eq!(hex(&out), want);
            assert_eq!(head_len(n), out.len());
        }
    }

    #[test]
    fn heads_match_minicbor() {
        let mut ns = vec![0u64, 1, 23, 24, 255, 256, 65535, 65536, u32::MAX as u64];
        ns.extend([u32::MAX as u64 + 1, i64::MAX as u64, u64::MAX]);
        for n in ns {
            for major in [
                MAJOR_UNSIGNED,
                MAJOR_BYTES,
                MAJOR_TEXT,
                MAJOR_ARRAY,
                MAJOR_MAP,
                MAJOR_TAG,
            ] {
                let mut ours = Vec::new();
                write_head(&mut ours, major, n);
                let mut theirs = Vec::new();
                let mut e = Encoder::new(&mut theirs);
                let _ = match major {
                    MAJOR_UNSIGNED => e.u64(n),
                    MAJOR_BYTES => e.bytes_len(n),
                    MAJOR_TEXT => e.str_len(n),
                    MAJOR_ARRAY => e.array(n),
                    MAJOR_MAP => e.map(n),
                    _ => e.tag(minicbor::data::Tag::new(n)),
                };
                assert_eq!(ours, theirs, "major {major} n {n}");
            }
        }
        for v in [0i64, -1, -24, -25, -256, -257, i64::MIN, i64::MAX] {
            let mut ours = Vec::new();
            write_i64(&mut ours, v);
            let mut theirs = Vec::new();
            let _ = Encoder::new(&mut theirs).i64(v);
            assert_eq!(ours, theirs, "{v}");
        }
    }

    #[test]
    fn reserved_info_is_syntax() {
        for b in [0x1c, 0x1d, 0x1e, 0x3c, 0xfc, 0x1f, 0x3f, 0xdf] {
            let mut pos = 0;
            let e = read_head(&[b, 0, 0, 0, 0, 0, 0, 0, 0], &mut pos).unwrap_err();
            assert_eq!(e.kind(), ErrorKind::Syntax, "{b:02x}");
        }
    }
}
