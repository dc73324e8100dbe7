//! Decoding straight into [`serde_json::Value`] (`value_from_slice`), for unstructured objects.
//!
//! `from_slice::<Value>` goes through serde: serde_json's visitor asks for every key and value
//! one at a time, grows each array from empty (it ignores size hints) and inserts map entries
//! one by one, and the deserializer keeps a path segment per item for error messages. Here the
//! deserializer builds the arrays and maps itself, with the same profile checks (it calls the
//! same head, string and limit code; a duplicate key is found by the map being built, where the
//! serde path needs the key tracker), arrays sized from their declared lengths, and integers,
//! floats, booleans and `null` with no tag in front made here as serde_json's visitor makes them;
//! every rarer shape (tagged scalars, long or chunked strings, byte strings) goes through
//! serde_json's own visitor, so it comes out exactly as it does with `from_slice`.
//!
//! Errors take the other way: when anything fails here, the input is decoded again through
//! serde, which produces the error with its path and offset. So the result, value or error, is
//! always the one `from_slice::<Value>` gives (`tests/value.rs` checks this on generated and
//! malformed input); only the speed differs.

use super::Deserializer;
use crate::error::{Error, ErrorKind, Result};
use crate::head::{
    BREAK, Head, MAJOR_ARRAY, MAJOR_BYTES, MAJOR_MAP, MAJOR_NEGATIVE, MAJOR_TAG, MAJOR_TEXT,
    MAJOR_UNSIGNED, check_float, check_int, float_value,
};
use crate::keys::KeyRef;
use crate::scan;
use serde::Deserialize;
use serde_json::{Map, Value};

impl<'de> Deserializer<'de> {
    /// Decodes the whole input (one item, no trailing bytes) into a `Value`.
    pub(crate) fn value_root(&mut self) -> Result<Value> {
        if !self.input.is_empty()
            && let Ok(v) = self.value().and_then(|v| self.end().map(|()| v))
        {
            return Ok(v);
        }
        self.restart();
        self.decode_root::<Value>()
            .and_then(|v| self.end().map(|()| v))
    }

    /// Forgets everything read so far, for decoding the input again from its start.
    #[cold]
    pub(super) fn restart(&mut self) {
        self.pos = 0;
        self.depth = 0;
        self.enc = None;
        self.keys.reset();
        self.reserved = 0;
        self.run = "";
        self.run_start = 0;
    }

    /// One item: short strings, arrays and maps here, everything else through serde_json's
    /// visitor.
    pub(super) fn value(&mut self) -> Result<Value> {
        if let Some(s) = self.short_str(super::Check::Run)? {
            return Ok(Value::String(s.to_owned()));
        }
        let Some(&b) = self.input.get(self.pos) else {
            return Err(Error::eof(self.pos));
        };
        match b >> 5 {
            MAJOR_ARRAY | MAJOR_MAP => {
                let (h, start, _) = self.next_head()?;
                self.container(h, start)
            }
            // Tags in front of a container (the self-described prefix of every object): read
            // them here so that the container is built here too.
            MAJOR_TAG => {
                let (at, depth, enc) = (self.pos, self.depth, self.enc);
                let (h, start, _) = self.next_head()?;
                let r = if matches!(h.major, MAJOR_ARRAY | MAJOR_MAP) {
                    self.container(h, start)
                } else {
                    self.pos = at;
                    self.depth = depth;
                    self.enc = enc;
                    Value::deserialize(&mut *self)
                };
                self.depth = depth;
                self.enc = enc;
                r
            }
            // Strings that `short_str` did not take.
            MAJOR_BYTES | MAJOR_TEXT => Value::deserialize(&mut *self),
            _ => self.scalar(),
        }
    }

    /// An integer, `false`, `true`, `null` or a float (no tag in front), made as serde_json's
    /// visitor makes it from what `deserialize_any` gives it, with the same profile checks;
    /// any other simple value goes to serde, for its error.
    #[inline]
    fn scalar(&mut self) -> Result<Value> {
        let at = self.pos;
        let (h, start, _) = self.next_head()?;
        Ok(match (h.major, h.info) {
            (MAJOR_UNSIGNED, _) => {
                check_int(&h, start)?;
                Value::from(h.arg)
            }
            (MAJOR_NEGATIVE, _) => {
                check_int(&h, start)?;
                Value::from(-1 - h.arg as i64)
            }
            (_, 20) => Value::Bool(false),
            (_, 21) => Value::Bool(true),
            (_, 22) => Value::Null,
            (_, 25..=27) => Value::from(check_float(float_value(&h), start)?),
            _ => {
                self.pos = at;
                return Value::deserialize(&mut *self);
            }
        })
    }

    /// An array or a map whose head was just read.
    fn container(&mut self, h: Head, start: usize) -> Result<Value> {
        self.enter(start)?;
        let v = crate::stack::guarded(|| {
            if h.major == MAJOR_ARRAY {
                self.array(h, start)
            } else {
                self.map(h, start)
            }
        })?;
        self.depth -= 1;
        Ok(v)
    }

    fn array(&mut self, h: Head, start: usize) -> Result<Value> {
        if h.indefinite() {
            let mut items = Vec::new();
            while self.input.get(self.pos) != Some(&BREAK) {
                if items.len() as u64 >= self.opts.max_array_len {
                    return Err(scan::array_too_long(self.pos, self.opts.max_array_len));
                }
                items.push(self.value()?);
            }
            self.pos += 1;
            return Ok(Value::Array(items));
        }
        if h.arg > self.opts.max_array_len {
            return Err(scan::array_too_long(start, self.opts.max_array_len));
        }
        // Each element takes at least a byte: `reserve` bounds the capacity by the input.
        let hinted = self.reserve(Some(h.arg), 1);
        let mut items = Vec::with_capacity(hinted);
        for i in 0..h.arg {
            if i < hinted as u64 {
                self.reserved -= 1;
            }
            items.push(self.value()?);
        }
        Ok(Value::Array(items))
    }

    fn map(&mut self, h: Head, start: usize) -> Result<Value> {
        let indefinite = h.indefinite();
        if !indefinite && h.arg > self.opts.max_map_pairs {
            return Err(scan::map_too_long(start, self.opts.max_map_pairs));
        }
        // Pairs still expected, or (indefinite length) still allowed.
        let mut left = if indefinite {
            self.opts.max_map_pairs
        } else {
            h.arg
        };
        // The key tracker only holds the arena of chunked keys here: duplicates are found by
        // the map itself (keys equal as bytes are equal as `String`s).
        let keys = self.keys.open();
        let mut m = Map::new();
        loop {
            if indefinite {
                match self.input.get(self.pos) {
                    Some(&BREAK) => {
                        self.pos += 1;
                        break;
                    }
                    _ if left == 0 => {
                        return Err(scan::map_too_long(self.pos, self.opts.max_map_pairs));
                    }
                    _ => {}
                }
            } else if left == 0 {
                break;
            }
            left -= 1;
            let kstart = self.pos;
            let k = self.map_key()?;
            let v = self.value()?;
            // `insert`, not `entry`: 5% fewer instructions per decode of the benchmark's Pod
            // and custom resource (callgrind, docs/benchmarks.md). A duplicate only has to be
            // noticed here: every error of this path sends the caller to the decode through
            // serde, which makes the error it reports (naming the key). It also speeds up
            // `from_slice::<Value>` by 3-4%: serde_json's visitor inserts with the same
            // `BTreeMap<String, Value>::insert`, and while this file called `entry` on that
            // map type, `entry` and `VacantEntry::insert` stayed out-of-line functions shared by
            // both paths (callgrind); now `insert` has them inlined. Keep `entry` off this type.
            if m.insert(k, v).is_some() {
                return Err(Error::at(
                    ErrorKind::DuplicateKey,
                    kstart,
                    "duplicate map key",
                ));
            }
        }
        self.keys.close(keys);
        Ok(Value::Object(m))
    }

    /// The next map key as an owned `String`.
    #[inline]
    fn map_key(&mut self) -> Result<String> {
        let kstart = self.pos;
        let input: &'de [u8] = self.input;
        let key = match super::short_string(input, kstart) {
            Some((s, n)) => {
                self.pos = s + n;
                KeyRef {
                    start: s,
                    end: s + n,
                    arena: false,
                }
            }
            // Tagged, long or chunked keys.
            None => self.read_key()?,
        };
        let text = if key.arena {
            super::utf8(&self.keys.arena[key.start..key.end])
        } else {
            self.text(key.start, key.end, super::Check::Run)
        };
        text.map(str::to_owned)
            .ok_or_else(|| self.invalid_utf8_bytes(kstart))
    }
}
