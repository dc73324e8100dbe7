//! The serde `Deserializer`: decodes straight from the input slice, borrowing strings when the
//! target can borrow, and applies the profile as it goes (see the crate docs).

use crate::error::{Error, ErrorKind, Result};
use crate::head::{
    BREAK, Head, MAJOR_ARRAY, MAJOR_BYTES, MAJOR_MAP, MAJOR_NEGATIVE, MAJOR_SIMPLE, MAJOR_TAG,
    MAJOR_TEXT, MAJOR_UNSIGNED, TAG_SELF_DESCRIBED, check_float, check_int, float_value, read_head,
};
use crate::keys::{KeyRef, KeyTracker, MapKeys, display_key, key_eq};
use crate::options::{DecodeOptions, UnknownFields};
use crate::scan::{self, Scanner};
use crate::strenc::LaterEncoding;
use serde::de::{self, Deserialize, DeserializeSeed, IntoDeserializer, Visitor};

pub(crate) mod decode;
mod value;

/// Working buffers of the last deserializer on this thread, so decodes in steady state do not
/// allocate them again.
#[derive(Default)]
struct Buffers {
    scratch: Vec<u8>,
    keys: KeyTracker,
    scanner: Scanner,
}

/// Largest string scratch buffer kept between decodes.
const POOL_MAX_SCRATCH: usize = 1 << 20;

thread_local! {
    static POOL: std::cell::RefCell<Option<Buffers>> = const { std::cell::RefCell::new(None) };
}

impl Deserializer<'_> {
    /// Gives the working buffers back for the next decode on this thread (explicitly rather
    /// than in `Drop`, which would extend the borrow of the input).
    pub(crate) fn recycle(mut self) {
        if self.scratch.capacity() > POOL_MAX_SCRATCH
            || self.keys.arena.capacity() > POOL_MAX_SCRATCH
        {
            return;
        }
        let mut b = Buffers {
            scratch: std::mem::take(&mut self.scratch),
            keys: std::mem::take(&mut self.keys),
            scanner: std::mem::take(&mut self.scanner),
        };
        b.scratch.clear();
        b.keys.reset();
        let _ = POOL.try_with(|p| {
            if let Ok(mut p) = p.try_borrow_mut() {
                *p = Some(b);
            }
        });
    }
}

/// One step of the path to an item: errors and warnings get it as they leave the item.
#[derive(Clone, Copy, Debug)]
enum Seg {
    Key(KeyRef),
    Index(u64),
}

/// Tags seen in front of the current item that change how it reads.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Tagged {
    None,
    /// Tag 0: the content is a date/time string and passes through.
    DateString,
    /// Tag 1: the content is an epoch time, rendered as an RFC 3339 string for text targets.
    Epoch,
}

/// How [`Deserializer::text`] checks a string that the current run does not cover.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Check {
    /// Starts a new run: where map keys are text to validate too (maps, `Value`s,
    /// `deserialize_any`).
    Run,
    /// Validates the string alone: string values of typed targets, whose neighbours are mostly
    /// struct keys.
    Alone,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum StrMode {
    /// `deserialize_any`: strings that are valid UTF-8 are offered as `str`, others as bytes.
    Any,
    /// A string target: bytes that are not UTF-8 are an error.
    Str,
    /// A bytes target: the raw content.
    Bytes,
}

/// A CBOR deserializer reading from a slice.
///
/// ```
/// use serde::Deserialize;
/// let bytes = [0xd9, 0xd9, 0xf7, 0x82, 0x01, 0x41, b'a'];
/// let mut de = conneg_cbor::Deserializer::from_slice(&bytes);
/// let v: (u8, String) = Deserialize::deserialize(&mut de).unwrap();
/// de.end().unwrap();
/// assert_eq!(v, (1, "a".to_string()));
/// ```
pub struct Deserializer<'de> {
    input: &'de [u8],
    pos: usize,
    opts: DecodeOptions,
    depth: usize,
    enc: Option<LaterEncoding>,
    scratch: Vec<u8>,
    keys: KeyTracker,
    scanner: Scanner,
    warnings: Option<Vec<Error>>,
    /// `warnings.len()` (0 when not collecting): a level that sees it grow while decoding a child
    /// prepends the child's path segment to the new warnings.
    warned: usize,
    /// Input bytes promised to size hints of open containers (each hinted element needs at least
    /// one byte of its own), so hints across nesting levels never exceed the input length.
    reserved: usize,
    /// The last stretch of ASCII input validated as text, starting at `run_start`: strings inside
    /// it are sliced from it instead of being validated one by one (see [`Deserializer::text`]).
    run: &'de str,
    run_start: usize,
}

impl<'de> Deserializer<'de> {
    /// A deserializer with the default (Kubernetes) options.
    pub fn from_slice(input: &'de [u8]) -> Self {
        Self::with_options(input, DecodeOptions::default())
    }

    /// A deserializer with the given options.
    pub fn with_options(input: &'de [u8], opts: DecodeOptions) -> Self {
        let b = POOL
            .try_with(|p| p.borrow_mut().take())
            .ok()
            .flatten()
            .unwrap_or_default();
        Deserializer {
            input,
            pos: 0,
            opts,
            depth: 0,
            enc: None,
            scratch: b.scratch,
            keys: b.keys,
            scanner: b.scanner,
            warnings: None,
            warned: 0,
            reserved: 0,
            run: "",
            run_start: 0,
        }
    }

    /// Checks that the whole input was consumed (one item, no trailing bytes).
    pub fn end(&self) -> Result<()> {
        if self.pos < self.input.len() {
            let n = self.input.len() - self.pos;
            return Err(Error::at(
                ErrorKind::TrailingData,
                self.pos,
                format!(
                    "{n} bytes of trailing data after the item, starting at offset {}",
                    self.pos
                ),
            ));
        }
        Ok(())
    }

    /// The offset of the next unread byte.
    pub fn position(&self) -> usize {
        self.pos
    }

    pub(crate) fn collect_warnings(&mut self) {
        self.warnings = Some(Vec::new());
    }

    pub(crate) fn take_warnings(&mut self) -> Vec<Error> {
        self.warnings.take().unwrap_or_default()
    }

    /// Decodes the top-level item, making sure any error carries a path.
    pub(crate) fn decode_root<T: Deserialize<'de>>(&mut self) -> Result<T> {
        if self.input.is_empty() {
            return Err(Error::at(ErrorKind::Eof, 0, "empty input"));
        }
        T::deserialize(&mut *self).map_err(|mut e| {
            e.set_offset_if_none(0);
            e
        })
    }

    fn seg_string(&self, seg: Seg) -> String {
        let mut s = String::new();
        match seg {
            Seg::Key(k) => {
                s.push('.');
                // Control characters escaped, so that a message stays one line of text.
                let key = String::from_utf8_lossy(self.keys.resolve(self.input, k));
                for c in key.chars() {
                    if c.is_control() {
                        s.extend(c.escape_debug());
                    } else {
                        s.push(c);
                    }
                }
            }
            Seg::Index(i) => {
                s.push('[');
                s.push_str(&i.to_string());
                s.push(']');
            }
        }
        s
    }

    /// An error leaves the item at `seg` (which starts at `offset`) for its parent: it gets the
    /// segment in front of its path, and the offset unless it has one.
    #[cold]
    fn leave(&self, e: &mut Error, seg: Seg, offset: usize) {
        e.prepend_path(self.seg_string(seg));
        e.set_offset_if_none(offset);
    }

    /// Warnings from `warnings[from..]` leave the item at `seg` for its parent.
    #[cold]
    fn warnings_leave(&mut self, from: usize, seg: Seg) {
        let s = self.seg_string(seg);
        if let Some(w) = &mut self.warnings {
            for e in &mut w[from..] {
                e.prepend_path(s.clone());
            }
        }
    }

    #[cold]
    fn err_here(&self, e: Error) -> Error {
        let mut e = e;
        e.set_offset_if_none(self.pos);
        e
    }

    /// Reads heads up to the first one that is not a tag, applying tags on the way: 55799 and
    /// unknown tags are dropped, bignums rejected, 21-23 set the byte string text form, 0 and 1
    /// mark date/time content. Tags count as nesting levels (the caller restores `depth`/`enc`).
    #[inline(always)]
    fn next_head(&mut self) -> Result<(Head, usize, Tagged)> {
        // Most heads are one byte (argument below 24) with no tag in front: nothing to check.
        let start = self.pos;
        match self.input.get(start) {
            Some(&b) if b & 0x1f < 24 && b >> 5 != MAJOR_TAG => {
                self.pos = start + 1;
                let info = b & 0x1f;
                let h = Head {
                    major: b >> 5,
                    info,
                    arg: info as u64,
                };
                Ok((h, start, Tagged::None))
            }
            _ => self.next_head_tagged(),
        }
    }

    /// `next_head` for heads with a longer argument, tags, and errors.
    #[inline(never)]
    fn next_head_tagged(&mut self) -> Result<(Head, usize, Tagged)> {
        let mut tagged = Tagged::None;
        loop {
            let start = self.pos;
            let h = read_head(self.input, &mut self.pos)?;
            // Tag 0 and 1 content is checked right after the tag (another tag there is refused,
            // as the scanner does).
            match tagged {
                Tagged::None => {}
                Tagged::DateString => scan::check_tag_content(0, &h, start)?,
                Tagged::Epoch => scan::check_tag_content(1, &h, start)?,
            }
            if h.major != MAJOR_TAG {
                return Ok((h, start, tagged));
            }
            self.depth += 1;
            if self.depth > self.opts.max_depth {
                return Err(scan::depth_error(start, self.opts.max_depth));
            }
            match h.arg {
                TAG_SELF_DESCRIBED => {}
                0 => tagged = Tagged::DateString,
                1 => tagged = Tagged::Epoch,
                2 | 3 => scan::check_tag(h.arg, start)?,
                21..=23 => self.enc = LaterEncoding::from_tag(h.arg),
                _ => {}
            }
        }
    }

    /// Fast path for the most common item: a definite byte or text string shorter than 256 bytes
    /// that is valid UTF-8, with no tag in front and no tag 21-23 in force. `None` means "take
    /// the general path" (which also produces any error).
    #[inline(always)]
    fn short_str(&mut self, check: Check) -> Result<Option<&'de str>> {
        let input: &'de [u8] = self.input;
        let Some((s, n)) = short_string(input, self.pos) else {
            return Ok(None);
        };
        if self.enc.is_some() && input[self.pos] < 0x60 {
            return Ok(None);
        }
        let v = self.text(s, s + n, check);
        if v.is_some() {
            self.pos = s + n;
        }
        Ok(v)
    }

    /// `input[s..e]` (within the input) as text, if it is valid UTF-8.
    ///
    /// Most strings of an API object are short and ASCII, and most of the bytes between them
    /// (string heads, small integers) are ASCII too: the first string of such a stretch finds
    /// where the stretch ends and validates it whole, once; the strings after it in the stretch
    /// are slices of that `str`. Validating each string alone costs a check per string (see
    /// [`as_text`]), mostly fixed overhead. That pays where the keys between the strings are text
    /// to validate too; where they are struct keys, which are matched against the field names and
    /// never validated, a run validates them for nothing, and `check` says to validate a string
    /// outside the current run alone.
    #[inline(always)]
    fn text(&mut self, s: usize, e: usize, check: Check) -> Option<&'de str> {
        if let Some(off) = s.checked_sub(self.run_start)
            && let Some(t) = self.run.get(off..off + (e - s))
        {
            return Some(t);
        }
        match check {
            Check::Run => self.text_new_run(s, e),
            Check::Alone => match ascii::AsciiStr::from_ascii(&self.input[s..e]) {
                Ok(a) => Some(a.as_str()),
                Err(_) => self.text_stretch(s, e),
            },
        }
    }

    /// `text` outside the current run: starts a new run at `s` when the string is ASCII and lies
    /// past the current run (so that no byte is validated twice); any other string goes to
    /// [`Deserializer::text_stretch`].
    #[inline(never)]
    fn text_new_run(&mut self, s: usize, e: usize) -> Option<&'de str> {
        let input: &'de [u8] = self.input;
        if s >= self.run_start + self.run.len() {
            let n = ascii_len(&input[s..]);
            if n >= e - s {
                let run = as_text(&input[s..s + n]).expect("ASCII is UTF-8");
                self.run = run;
                self.run_start = s;
                return Some(&run[..e - s]);
            }
        }
        self.text_stretch(s, e)
    }

    /// A string that is not ASCII, as text: validated together with the strings that follow it
    /// (see [`stretch_end`]) in one pass, which then becomes the run, so that those strings are
    /// slices of it. Validation of non-ASCII is `simdutf8`'s, by SIMD from 64 bytes up, and std's
    /// character-at-a-time `from_utf8` below: a stretch puts most short strings in the first
    /// case. The string is valid exactly when its end falls on a character boundary of the valid
    /// stretch; when the stretch is not valid (some later string is not UTF-8), the string is
    /// validated alone.
    #[inline(never)]
    fn text_stretch(&mut self, s: usize, e: usize) -> Option<&'de str> {
        let input: &'de [u8] = self.input;
        if s < self.run_start + self.run.len() {
            return utf8(&input[s..e]);
        }
        match utf8(&input[s..stretch_end(input, e)]) {
            Some(run) => {
                self.run = run;
                self.run_start = s;
                run.get(..e - s)
            }
            None => utf8(&input[s..e]),
        }
    }

    /// Peeks past tags: is the next item `null`? Consumes nothing.
    #[inline]
    fn peek_null(&self) -> Result<bool> {
        // Fast path: a null, or any first byte that is not a tag (the head itself, well-formed
        // or not, is read by whatever decodes the value next).
        match self.input.get(self.pos) {
            Some(&0xf6) => Ok(true),
            Some(&b) if b >> 5 != MAJOR_TAG => Ok(false),
            _ => self.peek_null_tagged(),
        }
    }

    /// `peek_null` past tags (and at the end of the input).
    #[inline(never)]
    fn peek_null_tagged(&self) -> Result<bool> {
        let mut pos = self.pos;
        loop {
            let h = read_head(self.input, &mut pos)?;
            if h.major != MAJOR_TAG {
                return Ok(h.major == MAJOR_SIMPLE && h.info == 22);
            }
        }
    }

    /// Skips one item, validating it as a full decode would.
    fn skip_value(&mut self) -> Result<()> {
        let end = scan::scan(
            self.input,
            self.pos,
            self.depth,
            &self.opts,
            &mut self.keys,
            &mut self.scanner,
        )?;
        self.pos = end;
        Ok(())
    }

    #[inline]
    fn enter(&mut self, start: usize) -> Result<()> {
        self.depth += 1;
        if self.depth > self.opts.max_depth {
            return Err(scan::depth_error(start, self.opts.max_depth));
        }
        Ok(())
    }

    /// Size hint for `declared` elements of at least `per` bytes each, bounded by the input not
    /// yet promised to other hints.
    #[inline]
    fn reserve(&mut self, declared: Option<u64>, per: usize) -> usize {
        let Some(n) = declared else { return 0 };
        let avail = (self.input.len() - self.pos).saturating_sub(self.reserved) / per;
        let hint = (n as usize).min(avail);
        self.reserved += hint * per;
        hint
    }

    fn invalid_utf8_bytes(&self, start: usize) -> Error {
        Error::at(
            ErrorKind::InvalidUtf8,
            start,
            "byte string is not valid UTF-8 and cannot be decoded as text",
        )
    }

    /// Visits a string item (major 2 or 3) whose head was just read.
    fn visit_string<V: Visitor<'de>>(
        &mut self,
        h: Head,
        start: usize,
        mode: StrMode,
        visitor: V,
    ) -> Result<V::Value> {
        if h.indefinite() {
            let mut buf = std::mem::take(&mut self.scratch);
            buf.clear();
            let r = scan::string_body(self.input, &mut self.pos, &h, start, Some(&mut buf))
                .and_then(|_| self.visit_joined(&buf, h.major, start, mode, visitor));
            self.scratch = buf;
            return r;
        }
        let input: &'de [u8] = self.input;
        let e = self.pos.saturating_add(h.arg as usize);
        if h.arg > (input.len() - self.pos) as u64 {
            return Err(Error::eof(start));
        }
        let b = &input[self.pos..e];
        let text = if mode == StrMode::Bytes || (h.major == MAJOR_BYTES && self.enc.is_some()) {
            None
        } else {
            let check = if mode == StrMode::Any {
                Check::Run
            } else {
                Check::Alone
            };
            self.text(self.pos, e, check)
        };
        self.pos = e;
        if mode == StrMode::Bytes {
            if h.major == MAJOR_TEXT {
                scan::utf8(b, start)?;
            }
            return visitor.visit_borrowed_bytes(b);
        }
        if h.major == MAJOR_BYTES {
            if let Some(enc) = self.enc {
                return visitor.visit_string(enc.encode(b));
            }
            return match text {
                Some(s) => visitor.visit_borrowed_str(s),
                None if mode == StrMode::Any => visitor.visit_borrowed_bytes(b),
                None => Err(self.invalid_utf8_bytes(start)),
            };
        }
        match text {
            Some(s) => visitor.visit_borrowed_str(s),
            None => Err(scan::utf8(b, start).expect_err("not UTF-8")),
        }
    }

    fn visit_joined<V: Visitor<'de>>(
        &self,
        b: &[u8],
        major: u8,
        start: usize,
        mode: StrMode,
        visitor: V,
    ) -> Result<V::Value> {
        if mode == StrMode::Bytes {
            return visitor.visit_bytes(b);
        }
        if major == MAJOR_BYTES
            && let Some(enc) = self.enc
        {
            return visitor.visit_string(enc.encode(b));
        }
        match utf8(b) {
            Some(s) => visitor.visit_str(s),
            None if mode == StrMode::Any => visitor.visit_bytes(b),
            None => Err(self.invalid_utf8_bytes(start)),
        }
    }

    fn epoch_string(&self, h: &Head, start: usize) -> Result<String> {
        match h.major {
            MAJOR_UNSIGNED | MAJOR_NEGATIVE => crate::time::from_int(check_int(h, start)?, start),
            _ => crate::time::from_float(check_float(float_value(h), start)?, start),
        }
    }

    /// The heart of `deserialize_any`, given the first non-tag head.
    fn any_with_head<V: Visitor<'de>>(
        &mut self,
        h: Head,
        start: usize,
        tagged: Tagged,
        visitor: V,
    ) -> Result<V::Value> {
        match h.major {
            MAJOR_UNSIGNED => {
                check_int(&h, start)?;
                if tagged == Tagged::Epoch {
                    return visitor.visit_string(self.epoch_string(&h, start)?);
                }
                visitor.visit_u64(h.arg)
            }
            MAJOR_NEGATIVE => {
                check_int(&h, start)?;
                if tagged == Tagged::Epoch {
                    return visitor.visit_string(self.epoch_string(&h, start)?);
                }
                visitor.visit_i64(-1 - h.arg as i64)
            }
            MAJOR_BYTES | MAJOR_TEXT => self.visit_string(h, start, StrMode::Any, visitor),
            MAJOR_ARRAY => self.visit_array(h, start, visitor),
            MAJOR_MAP => self.visit_map::<V, false>(h, start, &[], visitor),
            _ => match h.info {
                20 => visitor.visit_bool(false),
                21 => visitor.visit_bool(true),
                22 => visitor.visit_unit(),
                25..=27 => {
                    let f = check_float(float_value(&h), start)?;
                    if tagged == Tagged::Epoch {
                        return visitor.visit_string(self.epoch_string(&h, start)?);
                    }
                    visitor.visit_f64(f)
                }
                _ => {
                    scan::simple(&h, start)?;
                    unreachable!("simple() rejects everything but false/true/null and floats")
                }
            },
        }
    }

    fn visit_array<V: Visitor<'de>>(
        &mut self,
        h: Head,
        start: usize,
        visitor: V,
    ) -> Result<V::Value> {
        self.enter(start)?;
        let declared = if h.indefinite() {
            None
        } else {
            if h.arg > self.opts.max_array_len {
                return Err(scan::array_too_long(start, self.opts.max_array_len));
            }
            Some(h.arg)
        };
        let hinted = self.reserve(declared, 1);
        let mut access = SeqAccess {
            de: self,
            left: declared,
            index: 0,
            hinted,
            done: false,
        };
        let r = crate::stack::guarded_once(|| visitor.visit_seq(&mut access));
        let (index, done, left) = (access.index, access.done, access.left);
        let v = r?;
        self.reserved -= (hinted as u64).saturating_sub(index) as usize;
        let finished = match left {
            Some(l) => l == 0,
            None => done,
        };
        if !finished {
            return Err(self.err_here(Error::at(
                ErrorKind::Message,
                start,
                format!("invalid length: the array has more than the {index} elements expected"),
            )));
        }
        self.depth -= 1;
        Ok(v)
    }

    /// Visits a map whose head was just read: a struct's fields when `STRUCT` (a compile-time
    /// choice, so that each visitor carries the key path of its own kind only), else a plain map
    /// (`fields` is then empty).
    fn visit_map<V: Visitor<'de>, const STRUCT: bool>(
        &mut self,
        h: Head,
        start: usize,
        fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value> {
        self.enter(start)?;
        let indefinite = h.indefinite();
        let declared = if indefinite {
            None
        } else {
            if h.arg > self.opts.max_map_pairs {
                return Err(scan::map_too_long(start, self.opts.max_map_pairs));
            }
            Some(h.arg)
        };
        let hint_left = self.reserve(declared, 2);
        let left = declared.unwrap_or(self.opts.max_map_pairs);
        let mk = self.keys.open();
        let mut access = MapAccess::<'_, 'de, STRUCT> {
            de: self,
            left,
            indefinite,
            done: false,
            hint_left,
            keys: mk,
            fields,
            key: KeyRef {
                start: 0,
                end: 0,
                arena: false,
            },
            seen: 0,
        };
        // A struct's `deserialize_struct` made sure of the stack already.
        let r = if STRUCT {
            visitor.visit_map(&mut access)
        } else {
            crate::stack::guarded_once(|| visitor.visit_map(&mut access))
        };
        let MapAccess {
            left,
            done,
            hint_left,
            keys,
            ..
        } = access;
        let v = r?;
        self.keys.close(keys);
        self.reserved -= 2 * hint_left;
        let finished = if indefinite { done } else { left == 0 };
        if !finished {
            return Err(self.err_here(Error::at(
                ErrorKind::Message,
                start,
                "invalid length: the map has more entries than expected",
            )));
        }
        self.depth -= 1;
        Ok(v)
    }

    /// Runs `f` on the next non-tag head, restoring tag state afterwards.
    #[inline]
    fn with_head<T>(
        &mut self,
        f: impl FnOnce(&mut Self, Head, usize, Tagged) -> Result<T>,
    ) -> Result<T> {
        let (depth, enc) = (self.depth, self.enc);
        let (h, start, tagged) = self.next_head()?;
        let r = f(self, h, start, tagged);
        self.depth = depth;
        self.enc = enc;
        r
    }

    /// Reads a map key (tags skipped), returning where its bytes are.
    fn read_key(&mut self) -> Result<KeyRef> {
        scan::read_key(
            self.input,
            &mut self.pos,
            self.depth,
            &self.opts,
            &mut self.keys,
        )
    }
}

impl<'de> de::Deserializer<'de> for &mut Deserializer<'de> {
    type Error = Error;

    #[inline]
    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        if let Some(s) = self.short_str(Check::Run)? {
            return visitor.visit_borrowed_str(s);
        }
        if let Some(&b @ 0x00..=0x17) = self.input.get(self.pos) {
            self.pos += 1;
            return visitor.visit_u64(b as u64);
        }
        self.with_head(|de, h, start, tagged| de.any_with_head(h, start, tagged, visitor))
    }

    #[inline]
    fn deserialize_str<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        if let Some(s) = self.short_str(Check::Alone)? {
            return visitor.visit_borrowed_str(s);
        }
        self.with_head(|de, h, start, tagged| match h.major {
            MAJOR_BYTES | MAJOR_TEXT => de.visit_string(h, start, StrMode::Str, visitor),
            _ => de.any_with_head(h, start, tagged, visitor),
        })
    }

    #[inline]
    fn deserialize_string<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        self.deserialize_str(visitor)
    }

    fn deserialize_char<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        self.deserialize_str(visitor)
    }

    fn deserialize_identifier<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        self.deserialize_str(visitor)
    }

    fn deserialize_bytes<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        self.with_head(|de, h, start, tagged| match h.major {
            MAJOR_BYTES | MAJOR_TEXT => de.visit_string(h, start, StrMode::Bytes, visitor),
            _ => de.any_with_head(h, start, tagged, visitor),
        })
    }

    fn deserialize_byte_buf<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        self.deserialize_bytes(visitor)
    }

    #[inline]
    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        if self.peek_null()? {
            self.with_head(|_, _, _, _| Ok(()))?;
            visitor.visit_none()
        } else {
            visitor.visit_some(self)
        }
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        name: &'static str,
        visitor: V,
    ) -> Result<V::Value> {
        if name == crate::raw::TOKEN {
            return crate::raw::deserialize_raw(self, visitor);
        }
        visitor.visit_newtype_struct(self)
    }

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        name: &'static str,
        fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value> {
        // The stack check of `visit_map`, made here: with too little stack left, this whole call
        // is made again on a stack with room, so the visitor's code is inlined here and nowhere
        // else.
        if !crate::stack::has_room() {
            return crate::stack::make_room(move || self.deserialize_struct(name, fields, visitor));
        }
        self.with_head(|de, h, start, tagged| match h.major {
            MAJOR_MAP => de.visit_map::<V, true>(h, start, fields, visitor),
            _ => de.any_with_head(h, start, tagged, visitor),
        })
    }

    fn deserialize_enum<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value> {
        self.with_head(|de, h, start, tagged| match h.major {
            MAJOR_BYTES | MAJOR_TEXT => {
                de.visit_string(h, start, StrMode::Str, UnitVariantVisitor(visitor))
            }
            MAJOR_MAP => {
                if !h.indefinite() && h.arg != 1 {
                    return Err(Error::at(
                        ErrorKind::Message,
                        start,
                        "an enum variant must be a string or a map with a single key",
                    ));
                }
                de.enter(start)?;
                let value = visitor.visit_enum(VariantAccess {
                    de: &mut *de,
                    key: None,
                })?;
                if h.indefinite() {
                    if de.input.get(de.pos) != Some(&BREAK) {
                        return Err(Error::at(
                            ErrorKind::Message,
                            de.pos,
                            "an enum variant must be a map with a single key",
                        ));
                    }
                    de.pos += 1;
                }
                de.depth -= 1;
                Ok(value)
            }
            _ => de.any_with_head(h, start, tagged, visitor),
        })
    }

    fn deserialize_ignored_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        self.skip_value()?;
        visitor.visit_unit()
    }

    fn is_human_readable(&self) -> bool {
        // Types keep the structure they have in JSON (Kubernetes' rule for CBOR).
        true
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 unit unit_struct seq tuple
        tuple_struct map
    }
}

/// Turns a string into a unit variant for `deserialize_enum`.
struct UnitVariantVisitor<V>(V);

impl<'de, V: Visitor<'de>> Visitor<'de> for UnitVariantVisitor<V> {
    type Value = V::Value;
    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.expecting(f)
    }
    fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<V::Value, E> {
        self.0
            .visit_enum(de::value::BorrowedStrDeserializer::<E>::new(v))
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<V::Value, E> {
        self.0.visit_enum(v.into_deserializer())
    }
    fn visit_string<E: de::Error>(self, v: String) -> Result<V::Value, E> {
        self.0.visit_enum(v.into_deserializer())
    }
}

struct SeqAccess<'a, 'de> {
    de: &'a mut Deserializer<'de>,
    left: Option<u64>,
    index: u64,
    hinted: usize,
    done: bool,
}

impl<'de> de::SeqAccess<'de> for SeqAccess<'_, 'de> {
    type Error = Error;

    fn next_element_seed<T: DeserializeSeed<'de>>(&mut self, seed: T) -> Result<Option<T::Value>> {
        match &mut self.left {
            Some(0) => return Ok(None),
            Some(l) => *l -= 1,
            None => {
                if self.done {
                    return Ok(None);
                }
                match self.de.input.get(self.de.pos) {
                    Some(&BREAK) => {
                        self.de.pos += 1;
                        self.done = true;
                        return Ok(None);
                    }
                    None => return Err(Error::eof(self.de.pos)),
                    _ => {}
                }
                if self.index >= self.de.opts.max_array_len {
                    return Err(scan::array_too_long(
                        self.de.pos,
                        self.de.opts.max_array_len,
                    ));
                }
            }
        }
        if self.index < self.hinted as u64 {
            self.de.reserved -= 1;
        }
        let start = self.de.pos;
        let warned = self.de.warned;
        let index = self.index;
        self.index += 1;
        match seed.deserialize(&mut *self.de) {
            Ok(v) => {
                if self.de.warned != warned {
                    self.de.warnings_leave(warned, Seg::Index(index));
                }
                Ok(Some(v))
            }
            Err(mut e) => {
                self.de.leave(&mut e, Seg::Index(index), start);
                Err(e)
            }
        }
    }

    fn size_hint(&self) -> Option<usize> {
        self.left
            .map(|_| self.hinted.saturating_sub(self.index as usize))
    }
}

/// A map being visited: a struct's fields when `STRUCT`, else a plain map.
struct MapAccess<'a, 'de, const STRUCT: bool> {
    de: &'a mut Deserializer<'de>,
    /// Pairs still expected (definite length) or still allowed by `max_map_pairs` (indefinite).
    left: u64,
    indefinite: bool,
    /// The break of an indefinite-length map has been read.
    done: bool,
    /// Pairs of the size hint not read yet: each holds two bytes of `Deserializer::reserved`.
    hint_left: usize,
    keys: MapKeys,
    /// The struct's field names (empty for a plain map).
    fields: &'static [&'static str],
    /// The last key read: the path segment of its value.
    key: KeyRef,
    /// Known fields seen so far (struct mode, first 64 fields).
    seen: u64,
}

/// Where the content of the string at `pos` starts and how long it is, if the string is a
/// definite byte or text string with a one- or two-byte head (shorter than 256 bytes) that lies
/// within `input`.
#[inline(always)]
fn short_string(input: &[u8], pos: usize) -> Option<(usize, usize)> {
    let b = *input.get(pos)?;
    // Byte string (0x40-0x5b) and text string (0x60-0x7b) heads differ in bit 5 only.
    let info = (b & !0x20).wrapping_sub(0x40);
    let (s, n) = if info < 24 {
        (pos + 1, info as usize)
    } else if info == 24 {
        (pos + 2, *input.get(pos + 1)? as usize)
    } else {
        return None;
    };
    if n > input.len() - s {
        return None;
    }
    Some((s, n))
}

/// `b` as text. ASCII, most strings of an API object, is recognised inline a word at a time
/// (`ascii` does the cast from checked ASCII to `str` that this crate's `forbid(unsafe_code)`
/// rules out); anything else goes to [`utf8`].
#[inline(always)]
fn as_text(b: &[u8]) -> Option<&str> {
    match ascii::AsciiStr::from_ascii(b) {
        Ok(a) => Some(a.as_str()),
        Err(_) => utf8(b),
    }
}

/// `b` as text if it is valid UTF-8: the same answer as `str::from_utf8(b).ok()`, by SIMD from
/// 64 bytes up (`simdutf8`; std's validator takes non-ASCII text a character at a time).
#[inline]
pub(crate) fn utf8(b: &[u8]) -> Option<&str> {
    simdutf8::basic::from_utf8(b).ok()
}

/// Where a stretch of text that starts with a string ending at `e` may end: past the items that
/// follow it while they are strings or integers whose heads are ASCII (one-byte heads, or a
/// length or value byte under 0x80 after 0x18, 0x38, 0x58 or 0x78), up to 4 KiB. Only a guess at
/// what is text: the stretch is validated before use, and a string is taken from it only on
/// character boundaries.
#[inline]
fn stretch_end(input: &[u8], e: usize) -> usize {
    let limit = input.len().min(e + 4096);
    let mut p = e;
    while p < limit {
        let b = input[p];
        let next = match b {
            0x00..=0x17 | 0x20..=0x37 => p + 1,
            0x18 | 0x38 => p + 2,
            0x40..=0x57 | 0x60..=0x77 => p + 1 + (b & 0x1f) as usize,
            0x58 | 0x78 => match input.get(p + 1) {
                Some(&n) if n < 0x80 => p + 2 + n as usize,
                _ => break,
            },
            _ => break,
        };
        if next > limit {
            break;
        }
        p = next;
    }
    p
}

/// The length of the ASCII prefix of `b`, eight bytes at a time.
fn ascii_len(b: &[u8]) -> usize {
    let mut words = b.chunks_exact(8);
    let mut n = 0;
    for w in &mut words {
        let high = u64::from_le_bytes(w.try_into().expect("8 bytes")) & 0x8080_8080_8080_8080;
        if high != 0 {
            return n + (high.trailing_zeros() / 8) as usize;
        }
        n += 8;
    }
    n + words
        .remainder()
        .iter()
        .take_while(|b| b.is_ascii())
        .count()
}

/// The index of the field named `kb`.
#[inline(always)]
fn find_field(fields: &'static [&'static str], kb: &[u8]) -> Option<usize> {
    fields.iter().position(|f| key_eq(f.as_bytes(), kb))
}

impl<'de, const STRUCT: bool> MapAccess<'_, 'de, STRUCT> {
    /// Advances to the next key; false at the end of the map.
    #[inline]
    fn has_next(&mut self) -> Result<bool> {
        if !self.indefinite {
            return Ok(self.left > 0);
        }
        if self.done {
            return Ok(false);
        }
        match self.de.input.get(self.de.pos) {
            Some(&BREAK) => {
                self.de.pos += 1;
                self.done = true;
                Ok(false)
            }
            None => Err(Error::eof(self.de.pos)),
            _ if self.left == 0 => Err(scan::map_too_long(self.de.pos, self.de.opts.max_map_pairs)),
            _ => Ok(true),
        }
    }

    #[inline]
    fn pair_done(&mut self) {
        self.left -= 1;
        if self.hint_left > 0 {
            self.hint_left -= 1;
            self.de.reserved -= 2;
        }
    }

    /// The hot path of `next_key_seed`: the next key of a definite-length map is a definite
    /// string shorter than 256 bytes (no tag in front) that is a field of the struct not seen yet,
    /// or, in a plain map, valid UTF-8 and new. It is consumed and recorded; `None` means "take
    /// the general path", which reads the same key again (and produces any error).
    #[inline(always)]
    fn short_key(&mut self) -> Option<&'de str> {
        if self.indefinite || self.left == 0 {
            return None;
        }
        let input: &'de [u8] = self.de.input;
        let (s, n) = short_string(input, self.de.pos)?;
        let key = KeyRef {
            start: s,
            end: s + n,
            arena: false,
        };
        let k = if STRUCT {
            // A key equal to a field name is that (UTF-8) name: no UTF-8 check needed.
            let i = find_field(self.fields, &input[s..s + n]).filter(|&i| i < 64)?;
            let bit = 1u64 << i;
            if self.seen & bit != 0 {
                return None;
            }
            self.seen |= bit;
            self.fields[i]
        } else {
            let k = self.de.text(s, s + n, Check::Run)?;
            if !self.de.keys.insert(&mut self.keys, input, key) {
                return None;
            }
            k
        };
        self.de.pos = s + n;
        self.key = key;
        Some(k)
    }

    /// `next_key_seed` for every key `short_key` leaves: indefinite-length maps, tagged or long or
    /// chunked keys, unknown fields, fields past the 64th, duplicates, byte-string keys that are
    /// not UTF-8.
    #[inline(never)]
    fn next_key_slow<K: DeserializeSeed<'de>>(&mut self, seed: K) -> Result<Option<K::Value>> {
        loop {
            if !self.has_next()? {
                return Ok(None);
            }
            let kstart = self.de.pos;
            let input: &'de [u8] = self.de.input;
            let key = self.de.read_key()?;
            let kb = self.de.keys.resolve(input, key);
            let known = if STRUCT {
                find_field(self.fields, kb)
            } else {
                None
            };
            let fresh = match known {
                // Known fields of small structs: a bit per field.
                Some(i) if i < 64 => {
                    let bit = 1u64 << i;
                    let fresh = self.seen & bit == 0;
                    self.seen |= bit;
                    fresh
                }
                _ => self.de.keys.insert(&mut self.keys, input, key),
            };
            if !fresh {
                return Err(scan::dup_key(kstart, self.de.keys.resolve(input, key)));
            }
            if STRUCT && known.is_none() {
                // Written out only when it is kept (a warning) or refused: an ignored field
                // costs no message.
                let unknown = |kb: &[u8]| {
                    Error::at(
                        ErrorKind::UnknownField,
                        kstart,
                        format!("unknown field {}", display_key(kb)),
                    )
                };
                // The warning's path is this map's: levels above prepend theirs.
                if self.de.warnings.is_some() {
                    let err = unknown(self.de.keys.resolve(input, key));
                    if let Some(w) = &mut self.de.warnings {
                        w.push(err);
                        self.de.warned = w.len();
                    }
                } else if self.de.opts.unknown_fields == UnknownFields::Deny {
                    return Err(unknown(self.de.keys.resolve(input, key)));
                }
                if let Err(mut e) = self.de.skip_value() {
                    self.de.leave(&mut e, Seg::Key(key), kstart);
                    return Err(e);
                }
                self.pair_done();
                continue;
            }
            self.key = key;
            if let Some(i) = known {
                return seed
                    .deserialize(de::value::BorrowedStrDeserializer::<Error>::new(
                        self.fields[i],
                    ))
                    .map(Some);
            }
            return if key.arena {
                let kb = &self.de.keys.arena[key.start..key.end];
                seed.deserialize(KeyDeserializer::<'_, 'de> {
                    bytes: kb,
                    borrowed: None,
                })
                .map(Some)
            } else {
                seed.deserialize(KeyDeserializer::<'_, 'de> {
                    bytes: &[],
                    borrowed: Some(&input[key.start..key.end]),
                })
                .map(Some)
            };
        }
    }
}

impl<'de, const STRUCT: bool> de::MapAccess<'de> for MapAccess<'_, 'de, STRUCT> {
    type Error = Error;

    #[inline]
    fn next_key_seed<K: DeserializeSeed<'de>>(&mut self, seed: K) -> Result<Option<K::Value>> {
        if self.left == 0 && !self.indefinite {
            return Ok(None);
        }
        let start = self.de.pos;
        let r = match self.short_key() {
            Some(k) => seed
                .deserialize(de::value::BorrowedStrDeserializer::<Error>::new(k))
                .map(Some),
            None => self.next_key_slow(seed),
        };
        r.map_err(|mut e| {
            e.set_offset_if_none(start);
            e
        })
    }

    #[inline]
    fn next_value_seed<V: DeserializeSeed<'de>>(&mut self, seed: V) -> Result<V::Value> {
        let start = self.de.pos;
        let warned = self.de.warned;
        match seed.deserialize(&mut *self.de) {
            Ok(v) => {
                if self.de.warned != warned {
                    self.de.warnings_leave(warned, Seg::Key(self.key));
                }
                self.pair_done();
                Ok(v)
            }
            Err(mut e) => {
                self.de.leave(&mut e, Seg::Key(self.key), start);
                Err(e)
            }
        }
    }

    fn size_hint(&self) -> Option<usize> {
        (!self.indefinite).then_some(self.hint_left)
    }
}

/// Presents a map key to a seed: as `str` when it is UTF-8, as bytes otherwise.
struct KeyDeserializer<'a, 'de> {
    bytes: &'a [u8],
    borrowed: Option<&'de [u8]>,
}

impl<'de> de::Deserializer<'de> for KeyDeserializer<'_, 'de> {
    type Error = Error;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        let not_utf8 = || {
            Error::new(
                ErrorKind::InvalidUtf8,
                "map key is not valid UTF-8 and cannot be decoded as text",
            )
        };
        match self.borrowed {
            Some(b) => match utf8(b) {
                Some(s) => visitor.visit_borrowed_str(s),
                None => Err(not_utf8()),
            },
            None => match utf8(self.bytes) {
                Some(s) => visitor.visit_str(s),
                None => Err(not_utf8()),
            },
        }
    }

    fn deserialize_bytes<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        match self.borrowed {
            Some(b) => visitor.visit_borrowed_bytes(b),
            None => visitor.visit_bytes(self.bytes),
        }
    }

    fn deserialize_byte_buf<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        self.deserialize_bytes(visitor)
    }

    #[inline]
    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        visitor.visit_some(self)
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        visitor: V,
    ) -> Result<V::Value> {
        visitor.visit_newtype_struct(self)
    }

    fn deserialize_enum<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value> {
        self.deserialize_any(UnitVariantVisitor(visitor))
    }

    fn is_human_readable(&self) -> bool {
        true
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string
        unit unit_struct seq tuple tuple_struct map struct identifier ignored_any
    }
}

/// `{variant: value}` enums.
struct VariantAccess<'a, 'de> {
    de: &'a mut Deserializer<'de>,
    /// The variant's key, once read: the path segment of the content.
    key: Option<KeyRef>,
}

impl<'de> de::EnumAccess<'de> for VariantAccess<'_, 'de> {
    type Error = Error;
    type Variant = Self;

    fn variant_seed<V: DeserializeSeed<'de>>(mut self, seed: V) -> Result<(V::Value, Self)> {
        if self.de.input.get(self.de.pos) == Some(&BREAK) {
            return Err(Error::at(
                ErrorKind::Message,
                self.de.pos,
                "an enum variant must be a map with a single key",
            ));
        }
        let key = self.de.read_key()?;
        let input: &'de [u8] = self.de.input;
        let v = if key.arena {
            let kb = self.de.keys.arena[key.start..key.end].to_vec();
            seed.deserialize(KeyDeserializer::<'_, 'de> {
                bytes: &kb,
                borrowed: None,
            })?
        } else {
            seed.deserialize(KeyDeserializer::<'_, 'de> {
                bytes: &[],
                borrowed: Some(&input[key.start..key.end]),
            })?
        };
        self.key = Some(key);
        Ok((v, self))
    }
}

impl<'de> VariantAccess<'_, 'de> {
    fn finish<T>(self, r: Result<T>, start: usize, warned: usize) -> Result<T> {
        let Some(key) = self.key else { return r };
        match r {
            Ok(v) => {
                if self.de.warned != warned {
                    self.de.warnings_leave(warned, Seg::Key(key));
                }
                Ok(v)
            }
            Err(mut e) => {
                self.de.leave(&mut e, Seg::Key(key), start);
                Err(e)
            }
        }
    }
}

impl<'de> de::VariantAccess<'de> for VariantAccess<'_, 'de> {
    type Error = Error;

    fn unit_variant(self) -> Result<()> {
        let (start, warned) = (self.de.pos, self.de.warned);
        let r = <() as Deserialize>::deserialize(&mut *self.de);
        self.finish(r, start, warned)
    }

    fn newtype_variant_seed<T: DeserializeSeed<'de>>(self, seed: T) -> Result<T::Value> {
        let (start, warned) = (self.de.pos, self.de.warned);
        let r = seed.deserialize(&mut *self.de);
        self.finish(r, start, warned)
    }

    fn tuple_variant<V: Visitor<'de>>(self, _len: usize, visitor: V) -> Result<V::Value> {
        let (start, warned) = (self.de.pos, self.de.warned);
        let r = de::Deserializer::deserialize_seq(&mut *self.de, visitor);
        self.finish(r, start, warned)
    }

    fn struct_variant<V: Visitor<'de>>(
        self,
        fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value> {
        let (start, warned) = (self.de.pos, self.de.warned);
        let r = de::Deserializer::deserialize_struct(&mut *self.de, "", fields, visitor);
        self.finish(r, start, warned)
    }
}

// Used by raw.rs to capture items.
impl<'de> Deserializer<'de> {
    /// `None` for a `null` item (consumed); otherwise validates the next item and returns its
    /// bytes (tags included), advancing past it.
    pub(crate) fn take_raw_item(&mut self) -> Result<Option<&'de [u8]>> {
        if self.peek_null()? {
            self.with_head(|_, _, _, _| Ok(()))?;
            return Ok(None);
        }
        let start = self.pos;
        self.skip_value()?;
        let input: &'de [u8] = self.input;
        Ok(Some(&input[start..self.pos]))
    }
}

#[cfg(test)]
mod tests {
    use super::{as_text, ascii_len};

    #[test]
    fn as_text_is_from_utf8() {
        let long = "日本語のテキスト \u{1F600} ".repeat(20);
        let cases: [&[u8]; 7] = [
            b"",
            b"nginx:1.27",
            b"a string of more than sixteen bytes",
            "caf\u{e9} \u{1F600}".as_bytes(),
            b"\xc3\x28",
            b"ascii then \xff",
            b"\xe2\x82",
        ];
        for b in cases {
            assert_eq!(as_text(b), std::str::from_utf8(b).ok(), "{b:?}");
        }
        // Long enough for the SIMD validator, valid and broken at every position (a lone
        // continuation byte, a lead byte without its continuation, a surrogate, an overlong
        // form, a code point past U+10FFFF).
        let mut b = long.into_bytes();
        assert_eq!(as_text(&b), std::str::from_utf8(&b).ok());
        for i in 0..b.len() {
            for bad in [
                &[0x80u8][..],
                &[0xe3, b'a'],
                &[0xed, 0xa0, 0x80],
                &[0xc0, 0xaf],
                &[0xf4, 0x90, 0x80, 0x80],
            ] {
                let mut c = b.clone();
                let end = (i + bad.len()).min(c.len());
                c[i..end].copy_from_slice(&bad[..end - i]);
                assert_eq!(as_text(&c), std::str::from_utf8(&c).ok(), "{i} {bad:02x?}");
                assert_eq!(
                    super::utf8(&c),
                    std::str::from_utf8(&c).ok(),
                    "{i} {bad:02x?}"
                );
            }
        }
        b.truncate(0);
    }

    #[test]
    fn ascii_len_is_the_ascii_prefix() {
        for n in 0..40usize {
            let mut b = vec![b'a'; n];
            assert_eq!(ascii_len(&b), n);
            for i in 0..n {
                b[i] = 0x80 | (i as u8);
                assert_eq!(ascii_len(&b), i, "{n} {i}");
                b[i] = b'a';
            }
        }
    }
}
