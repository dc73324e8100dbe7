//! An iterative (non-recursive) well-formedness and profile validator.
//!
//! [`scan`] walks one complete item starting at a given offset with an explicit stack, so no input
//! can exhaust the thread stack, and returns the offset just past the item. It applies every rule
//! the decoder applies (integers within `i64`, no NaN/Inf, only false/true/null simple values, no
//! bignums, tag 0/1 content types, valid UTF-8 text, string map keys without duplicates, nesting
//! depth and length limits), so skipping an ignored value, framing a sequence item or capturing a
//! raw item accepts exactly what a full decode would.

use crate::error::{Error, ErrorKind, Result};
use crate::head::{
    BREAK, Head, MAJOR_ARRAY, MAJOR_BYTES, MAJOR_MAP, MAJOR_NEGATIVE, MAJOR_SIMPLE, MAJOR_TAG,
    MAJOR_TEXT, MAJOR_UNSIGNED, check_float, check_int, check_simple, float_value, read_head,
};
use crate::keys::{KeyRef, KeyTracker, MapKeys, display_key};
use crate::options::DecodeOptions;

/// One open container or tag.
#[derive(Debug)]
pub(crate) enum Frame {
    Array {
        /// Elements still expected; `None` for indefinite length.
        left: Option<u64>,
        count: u64,
        /// A map walked as a flat list of keys and values (well-formedness mode).
        map: bool,
    },
    Map {
        left: Option<u64>,
        count: u64,
        want_key: bool,
        keys: MapKeys,
    },
    Tag(u64),
}

/// Reusable state for [`scan`], so repeated scans do not allocate.
#[derive(Default)]
pub(crate) struct Scanner {
    stack: Vec<Frame>,
}

/// Validates one item at `start`; `depth` is the nesting depth the item sits at. Returns the
/// offset just past the item.
pub(crate) fn scan(
    input: &[u8],
    start: usize,
    depth: usize,
    opts: &DecodeOptions,
    keys: &mut KeyTracker,
    sc: &mut Scanner,
) -> Result<usize> {
    scan_with(input, start, depth, opts, keys, sc, true)
}

/// Like [`scan`], but with `profile` false only well-formedness (RFC 8949 §5.3.1 / Appendix F)
/// is checked, plus the depth and length limits: any key types, any simple values and tags,
/// integers of any size, NaN, duplicate keys and invalid UTF-8 all pass.
pub(crate) fn scan_with(
    input: &[u8],
    start: usize,
    depth: usize,
    opts: &DecodeOptions,
    keys: &mut KeyTracker,
    sc: &mut Scanner,
    profile: bool,
) -> Result<usize> {
    sc.stack.clear();
    let r = scan_inner(input, start, depth, opts, keys, &mut sc.stack, profile);
    // On error, release any map key ranges still open.
    while let Some(f) = sc.stack.pop() {
        if let Frame::Map { keys: mk, .. } = f {
            keys.close(mk);
        }
    }
    r
}

fn scan_inner(
    input: &[u8],
    mut pos: usize,
    depth0: usize,
    opts: &DecodeOptions,
    keys: &mut KeyTracker,
    stack: &mut Vec<Frame>,
    profile: bool,
) -> Result<usize> {
    loop {
        // At the start of an item (or of a break, in an indefinite container).
        match stack.last_mut() {
            Some(Frame::Map {
                left,
                want_key: true,
                count,
                ..
            }) => {
                let kstart = pos;
                if left.is_none() && input.get(pos) == Some(&BREAK) {
                    pos += 1;
                    close_top(stack, keys);
                    if complete(stack, keys) {
                        return Ok(pos);
                    }
                    continue;
                }
                *count += 1;
                if left.is_none() && *count > opts.max_map_pairs {
                    return Err(map_too_long(kstart, opts.max_map_pairs));
                }
                let k = match input.get(pos) {
                    // Fast path: a short definite-length key with no tag in front.
                    Some(&b @ (0x40..=0x57 | 0x60..=0x77))
                        if pos + 1 + (b & 0x1f) as usize <= input.len()
                            && (b < 0x60
                                || std::str::from_utf8(
                                    &input[pos + 1..pos + 1 + (b & 0x1f) as usize],
                                )
                                .is_ok()) =>
                    {
                        let (s, e) = (pos + 1, pos + 1 + (b & 0x1f) as usize);
                        pos = e;
                        KeyRef {
                            start: s,
                            end: e,
                            arena: false,
                        }
                    }
                    _ => {
                        let d = depth0 + stack.len();
                        read_key(input, &mut pos, d, opts, keys)?
                    }
                };
                let Some(Frame::Map {
                    keys: mk, want_key, ..
                }) = stack.last_mut()
                else {
                    unreachable!("top frame is the map")
                };
                if !keys.insert(mk, input, k) {
                    return Err(dup_key(kstart, keys.resolve(input, k)));
                }
                *want_key = false;
                continue;
            }
            Some(Frame::Array {
                left: None,
                count,
                map,
            }) => {
                if input.get(pos) == Some(&BREAK) {
                    if *map && *count % 2 == 1 {
                        return Err(Error::at(
                            ErrorKind::Syntax,
                            pos,
                            "break (0xff) where a map value is expected",
                        ));
                    }
                    pos += 1;
                    stack.pop();
                    if complete(stack, keys) {
                        return Ok(pos);
                    }
                    continue;
                }
                *count += 1;
                let (limit, pairs) = if *map {
                    (opts.max_map_pairs, count.div_ceil(2))
                } else {
                    (opts.max_array_len, *count)
                };
                if pairs > limit {
                    return Err(if *map {
                        map_too_long(pos, limit)
                    } else {
                        array_too_long(pos, limit)
                    });
                }
            }
            _ => {}
        }
        // Fast path: small integers and short byte strings, outside tags, need no checks.
        if !matches!(stack.last(), Some(Frame::Tag(_))) {
            match input.get(pos) {
                Some(0x00..=0x17) => {
                    pos += 1;
                    if complete(stack, keys) {
                        return Ok(pos);
                    }
                    continue;
                }
                Some(&b @ 0x40..=0x57) if pos + 1 + (b & 0x1f) as usize <= input.len() => {
                    pos += 1 + (b & 0x1f) as usize;
                    if complete(stack, keys) {
                        return Ok(pos);
                    }
                    continue;
                }
                _ => {}
            }
        }
        let depth = depth0 + stack.len();
        let start = pos;
        let h = read_head(input, &mut pos)?;
        if profile && let Some(Frame::Tag(t)) = stack.last() {
            check_tag_content(*t, &h, start)?;
        }
        match h.major {
            MAJOR_UNSIGNED | MAJOR_NEGATIVE => {
                if profile {
                    check_int(&h, start)?;
                }
            }
            MAJOR_BYTES | MAJOR_TEXT => {
                string_body_with(input, &mut pos, &h, start, None, profile)?;
            }
            MAJOR_ARRAY => {
                enter(depth, opts, start)?;
                if h.indefinite() {
                    stack.push(Frame::Array {
                        left: None,
                        count: 0,
                        map: false,
                    });
                    continue;
                }
                if h.arg > opts.max_array_len {
                    return Err(array_too_long(start, opts.max_array_len));
                }
                if h.arg > 0 {
                    stack.push(Frame::Array {
                        left: Some(h.arg),
                        count: 0,
                        map: false,
                    });
                    continue;
                }
            }
            MAJOR_MAP => {
                enter(depth, opts, start)?;
                if !h.indefinite() && h.arg > opts.max_map_pairs {
                    return Err(map_too_long(start, opts.max_map_pairs));
                }
                if !profile && (h.indefinite() || h.arg > 0) {
                    stack.push(Frame::Array {
                        left: if h.indefinite() {
                            None
                        } else {
                            Some(h.arg.saturating_mul(2))
                        },
                        count: 0,
                        map: true,
                    });
                    continue;
                }
                if h.indefinite() || h.arg > 0 {
                    stack.push(Frame::Map {
                        left: if h.indefinite() { None } else { Some(h.arg) },
                        count: 0,
                        want_key: true,
                        keys: keys.open(),
                    });
                    continue;
                }
            }
            MAJOR_TAG => {
                enter(depth, opts, start)?;
                if profile {
                    check_tag(h.arg, start)?;
                }
                stack.push(Frame::Tag(h.arg));
                continue;
            }
            _ if profile => simple(&h, start)?,
            _ => well_formed_simple(&h, start)?,
        }
        if complete(stack, keys) {
            return Ok(pos);
        }
    }
}

/// An item finished: pop every frame it completes. Returns true when the outermost item is done.
#[inline]
fn complete(stack: &mut Vec<Frame>, keys: &mut KeyTracker) -> bool {
    loop {
        match stack.last_mut() {
            None => return true,
            Some(Frame::Tag(_)) => {
                stack.pop();
            }
            Some(Frame::Array { left, .. }) => {
                if let Some(l) = left {
                    *l -= 1;
                    if *l == 0 {
                        stack.pop();
                        continue;
                    }
                }
                return false;
            }
            Some(Frame::Map { left, want_key, .. }) => {
                // A value finished (keys are consumed whole by read_key).
                *want_key = true;
                if let Some(l) = left {
                    *l -= 1;
                    if *l == 0 {
                        close_top(stack, keys);
                        continue;
                    }
                }
                return false;
            }
        }
    }
}

fn close_top(stack: &mut Vec<Frame>, keys: &mut KeyTracker) {
    if let Some(Frame::Map { keys: mk, .. }) = stack.pop() {
        keys.close(mk);
    }
}

#[inline]
fn enter(depth: usize, opts: &DecodeOptions, start: usize) -> Result<()> {
    if depth + 1 > opts.max_depth {
        return Err(depth_error(start, opts.max_depth));
    }
    Ok(())
}

pub(crate) fn depth_error(offset: usize, max: usize) -> Error {
    Error::at(
        ErrorKind::DepthLimit,
        offset,
        format!("exceeded max nesting depth {max}"),
    )
}

pub(crate) fn array_too_long(offset: usize, max: u64) -> Error {
    Error::at(
        ErrorKind::LengthLimit,
        offset,
        format!("array has more than {max} elements"),
    )
}

pub(crate) fn map_too_long(offset: usize, max: u64) -> Error {
    Error::at(
        ErrorKind::LengthLimit,
        offset,
        format!("map has more than {max} pairs"),
    )
}

pub(crate) fn dup_key(offset: usize, key: &[u8]) -> Error {
    Error::at(
        ErrorKind::DuplicateKey,
        offset,
        format!("duplicate map key {}", display_key(key)),
    )
}

/// Rejects tags the profile forbids anywhere (bignums).
#[inline]
pub(crate) fn check_tag(tag: u64, offset: usize) -> Result<()> {
    if tag == 2 || tag == 3 {
        return Err(Error::at(
            ErrorKind::UnsupportedValue,
            offset,
            "bignums (tags 2 and 3) are not accepted",
        ));
    }
    Ok(())
}

/// Checks the head that follows tag `tag` (tag 0 needs a text string, as in Kubernetes: a byte
/// string is refused there although it is accepted as text everywhere else; tag 1 needs a number
/// in range).
#[inline]
pub(crate) fn check_tag_content(tag: u64, h: &Head, offset: usize) -> Result<()> {
    match tag {
        0 if h.major != MAJOR_TEXT => Err(Error::at(
            ErrorKind::UnsupportedValue,
            offset,
            if h.major == MAJOR_BYTES {
                "tag number 0 must be followed by text string, got byte string"
            } else {
                "tag number 0 must be followed by text string"
            },
        )),
        1 => match h.major {
            MAJOR_UNSIGNED | MAJOR_NEGATIVE => {
                let v = check_int(h, offset)?;
                crate::time::from_int(v, offset).map(drop)
            }
            MAJOR_SIMPLE if matches!(h.info, 25..=27) => {
                let f = check_float(float_value(h), offset)?;
                crate::time::from_float(f, offset).map(drop)
            }
            _ => Err(Error::at(
                ErrorKind::UnsupportedValue,
                offset,
                "tag 1 must be followed by an integer or a float",
            )),
        },
        _ => Ok(()),
    }
}

/// Checks a major type 7 head that is not a break.
#[inline]
pub(crate) fn simple(h: &Head, start: usize) -> Result<()> {
    match h.info {
        25..=27 => check_float(float_value(h), start).map(drop),
        31 => Err(Error::at(
            ErrorKind::Syntax,
            start,
            "break (0xff) outside an indefinite-length item",
        )),
        _ => check_simple(h, start).map(drop),
    }
}

/// Checks a major type 7 head for well-formedness only.
#[inline]
fn well_formed_simple(h: &Head, start: usize) -> Result<()> {
    if h.info == 31 {
        return Err(Error::at(
            ErrorKind::Syntax,
            start,
            "break (0xff) outside an indefinite-length item",
        ));
    }
    if h.info == 24 && h.arg < 32 {
        return Err(Error::at(
            ErrorKind::Syntax,
            start,
            format!("invalid two-byte encoding of simple value {}", h.arg),
        ));
    }
    Ok(())
}

/// Reads the body of a string whose head `h` (major 2 or 3) was just read. A definite string's
/// content range is returned; an indefinite one is checked chunk by chunk, its content appended
/// to `sink` when given, and `None` is returned. Text is UTF-8-checked (each chunk separately).
#[inline]
pub(crate) fn string_body(
    input: &[u8],
    pos: &mut usize,
    h: &Head,
    start: usize,
    sink: Option<&mut Vec<u8>>,
) -> Result<Option<(usize, usize)>> {
    string_body_with(input, pos, h, start, sink, true)
}

#[inline]
fn string_body_with(
    input: &[u8],
    pos: &mut usize,
    h: &Head,
    start: usize,
    mut sink: Option<&mut Vec<u8>>,
    check_utf8: bool,
) -> Result<Option<(usize, usize)>> {
    if !h.indefinite() {
        let (s, e) = definite(input, *pos, h.arg, start)?;
        if check_utf8 && h.major == MAJOR_TEXT {
            utf8(&input[s..e], start)?;
        }
        *pos = e;
        return Ok(Some((s, e)));
    }
    loop {
        let cstart = *pos;
        match input.get(cstart) {
            None => return Err(Error::eof(cstart)),
            Some(&BREAK) => {
                *pos += 1;
                return Ok(None);
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
        let (s, e) = definite(input, *pos, c.arg, cstart)?;
        if check_utf8 && h.major == MAJOR_TEXT {
            utf8(&input[s..e], cstart)?;
        }
        if let Some(sink) = sink.as_deref_mut() {
            sink.extend_from_slice(&input[s..e]);
        }
        *pos = e;
    }
}

#[inline]
fn definite(input: &[u8], pos: usize, len: u64, start: usize) -> Result<(usize, usize)> {
    let avail = input.len() - pos;
    if len > avail as u64 {
        return Err(Error::eof(start));
    }
    Ok((pos, pos + len as usize))
}

#[inline]
pub(crate) fn utf8(b: &[u8], offset: usize) -> Result<()> {
    if crate::de::utf8(b).is_some() {
        return Ok(());
    }
    // Invalid: std says where.
    match std::str::from_utf8(b) {
        Ok(_) => Ok(()),
        Err(e) => Err(Error::at(
            ErrorKind::InvalidUtf8,
            offset,
            format!(
                "invalid UTF-8 in text string at byte {} of the string",
                e.valid_up_to()
            ),
        )),
    }
}

/// Reads one map key at `*pos` (tags in front of it are skipped): it must be a byte or text
/// string. Indefinite-length keys are joined into the tracker's arena.
pub(crate) fn read_key(
    input: &[u8],
    pos: &mut usize,
    depth: usize,
    opts: &DecodeOptions,
    keys: &mut KeyTracker,
) -> Result<KeyRef> {
    let mut d = depth;
    loop {
        let start = *pos;
        let h = read_head(input, pos)?;
        match h.major {
            MAJOR_TAG => {
                d += 1;
                if d > opts.max_depth {
                    return Err(depth_error(start, opts.max_depth));
                }
                check_tag(h.arg, start)?;
            }
            MAJOR_BYTES | MAJOR_TEXT => {
                if h.indefinite() {
                    let a0 = keys.arena.len();
                    string_body(input, pos, &h, start, Some(&mut keys.arena))?;
                    return Ok(KeyRef {
                        start: a0,
                        end: keys.arena.len(),
                        arena: true,
                    });
                }
                let (s, e) = string_body(input, pos, &h, start, None)?.expect("definite");
                return Ok(KeyRef {
                    start: s,
                    end: e,
                    arena: false,
                });
            }
            _ => {
                if h.major == MAJOR_SIMPLE && h.info == 31 {
                    return Err(Error::at(
                        ErrorKind::Syntax,
                        start,
                        "break (0xff) outside an indefinite-length item",
                    ));
                }
                return Err(Error::at(
                    ErrorKind::NonStringKey,
                    start,
                    "map keys must be strings",
                ));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(input: &[u8]) -> Result<usize> {
        let mut keys = KeyTracker::default();
        let mut sc = Scanner::default();
        scan(input, 0, 0, &DecodeOptions::default(), &mut keys, &mut sc)
    }

    #[test]
    fn lengths() {
        assert_eq!(run(&[0x00, 0x01]).unwrap(), 1);
        assert_eq!(run(&[0x83, 1, 2, 3, 9]).unwrap(), 4);
        assert_eq!(run(&[0x9f, 1, 0x9f, 0xff, 0xff, 9]).unwrap(), 5);
        assert_eq!(run(&[0xa1, 0x41, b'a', 0x80]).unwrap(), 4);
        assert_eq!(run(&[0xbf, 0x41, b'a', 0x80, 0xff]).unwrap(), 5);
        assert_eq!(run(&[0xd9, 0xd9, 0xf7, 0x80]).unwrap(), 4);
        assert_eq!(run(&[0x5f, 0x41, 1, 0xff]).unwrap(), 4);
    }

    #[test]
    fn rejects() {
        let k = |b: &[u8]| run(b).unwrap_err().kind();
        assert_eq!(
            k(&[0xa2, 0x41, b'a', 1, 0x61, b'a', 2]),
            ErrorKind::DuplicateKey
        );
        assert_eq!(k(&[0xa1, 0x01, 0x01]), ErrorKind::NonStringKey);
        assert_eq!(k(&[0x83, 1, 2]), ErrorKind::Eof);
        assert_eq!(k(&[0xff]), ErrorKind::Syntax);
        assert_eq!(k(&[0xc2, 0x41, 0x01]), ErrorKind::UnsupportedValue);
        assert_eq!(k(&[0x81, 0xf7]), ErrorKind::UnsupportedValue);
        assert_eq!(k(&[0x5f, 0x61, b'a', 0xff]), ErrorKind::Syntax);
        assert_eq!(k(&[0xbf, 0x41, b'a', 0xff]), ErrorKind::Syntax);
        assert_eq!(k(&[0x62, 0xc3, 0x28]), ErrorKind::InvalidUtf8);
    }

    #[test]
    fn well_formedness_only() {
        let wf = |b: &[u8]| {
            let mut keys = KeyTracker::default();
            let mut sc = Scanner::default();
            scan_with(
                b,
                0,
                0,
                &DecodeOptions::default(),
                &mut keys,
                &mut sc,
                false,
            )
        };
        // Profile violations that are still well-formed pass.
        for b in [
            &[0xa2, 0x41, b'a', 1, 0x41, b'a', 2][..],
            &[0xa1, 0x01, 0x01],
            &[0xa1, 0x81, 0x01, 0x01],
            &[0xf7],
            &[0xc2, 0x41, 0x01],
            &[0x1b, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff],
            &[0x62, 0xc3, 0x28],
            &[0xf9, 0x7e, 0x00],
            &[0xbf, 0x01, 0x02, 0xff],
        ] {
            assert_eq!(wf(b).unwrap(), b.len(), "{b:02x?}");
        }
        for b in [
            &[0xbf, 0x01, 0xff][..],
            &[0xf8, 0x18],
            &[0xff],
            &[0x5f, 0x01, 0xff],
        ] {
            assert_eq!(wf(b).unwrap_err().kind(), ErrorKind::Syntax, "{b:02x?}");
        }
    }

    #[test]
    fn deep_is_iterative() {
        let mut v = vec![0x81; 9_999];
        v.push(0x80);
        assert_eq!(run(&v).unwrap(), 10_000);
        let mut v = vec![0x81; 10_000];
        v.push(0x80);
        assert_eq!(run(&v).unwrap_err().kind(), ErrorKind::DepthLimit);
    }
}
