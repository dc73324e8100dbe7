//! RFC 8742 CBOR Sequences: items back to back with no other framing (Kubernetes' watch streams,
//! `application/cbor-seq`).
//!
//! ```
//! use conneg_cbor::{SeqDecoder, SeqEncoder};
//!
//! let mut enc = SeqEncoder::new();
//! enc.push(&serde_json::json!({"type": "ADDED"})).unwrap();
//! enc.push(&serde_json::json!({"type": "DELETED"})).unwrap();
//! let stream = enc.into_inner();
//!
//! // Bytes arrive in arbitrary chunks.
//! let mut dec = SeqDecoder::new();
//! let mut seen = Vec::new();
//! for chunk in stream.chunks(5) {
//!     dec.push(chunk);
//!     while let Some(v) = dec.next::<serde_json::Value>().unwrap() {
//!         seen.push(v["type"].as_str().unwrap().to_string());
//!     }
//! }
//! dec.finish().unwrap();
//! assert_eq!(seen, ["ADDED", "DELETED"]);
//! ```

use crate::de::Deserializer;
use crate::error::{Error, ErrorKind, Result};
use crate::frame::{Framed, Framer};
use crate::keys::KeyTracker;
use crate::options::{DecodeOptions, EncodeOptions};
use crate::scan::{self, Scanner};
use serde::Serialize;
use serde::de::DeserializeOwned;

/// Builds a CBOR Sequence: each pushed value is one complete item (with the `d9 d9 f7` prefix
/// unless the options say otherwise).
#[derive(Default)]
pub struct SeqEncoder {
    buf: Vec<u8>,
    opts: EncodeOptions,
}

impl SeqEncoder {
    /// An encoder with the default (deterministic, self-described) options.
    pub fn new() -> Self {
        Self::default()
    }

    /// An encoder with the given options.
    pub fn with_options(opts: EncodeOptions) -> Self {
        SeqEncoder {
            buf: Vec::new(),
            opts,
        }
    }

    /// Appends one item; on error nothing is appended.
    pub fn push<T: ?Sized + Serialize>(&mut self, value: &T) -> Result<()> {
        self.opts.encode_into(&mut self.buf, value)
    }

    /// Appends one already-encoded item after checking that it is exactly one well-formed,
    /// profile-valid item.
    pub fn push_raw(&mut self, item: &[u8]) -> Result<()> {
        let end = scan::scan(
            item,
            0,
            0,
            &DecodeOptions::default(),
            &mut KeyTracker::default(),
            &mut Scanner::default(),
        )?;
        if end != item.len() {
            return Err(Error::at(
                ErrorKind::TrailingData,
                end,
                "raw item is followed by other bytes",
            ));
        }
        self.buf.extend_from_slice(item);
        Ok(())
    }

    /// The sequence so far.
    pub fn as_bytes(&self) -> &[u8] {
        &self.buf
    }

    /// Takes the bytes written so far (to send them), leaving the encoder empty and reusable.
    pub fn take(&mut self) -> Vec<u8> {
        std::mem::take(&mut self.buf)
    }

    /// Empties the buffer, keeping its capacity.
    pub fn clear(&mut self) {
        self.buf.clear();
    }

    /// The number of bytes buffered.
    pub fn len(&self) -> usize {
        self.buf.len()
    }

    /// Whether nothing is buffered.
    pub fn is_empty(&self) -> bool {
        self.buf.is_empty()
    }

    /// The sequence.
    pub fn into_inner(self) -> Vec<u8> {
        self.buf
    }
}

/// Splits a CBOR Sequence arriving in chunks into items.
///
/// [`push`](Self::push) bytes as they arrive, then call [`next_item`](Self::next_item) (raw item
/// bytes) or [`next`](Self::next) (decoded values) until they return `Ok(None)`, which means
/// "need more bytes". Chunks may split an item anywhere. An item that is well-formed but breaks
/// the profile (a duplicate key, NaN, …) or does not fit the target type is reported as an error
/// and skipped; an ill-formed item is fatal (RFC 8742 §2.8): that call and every later one return
/// the error. At the end of the stream, [`finish`](Self::finish) reports a truncated last item.
///
/// A partial item is walked on from where the last chunk ended, heads and lengths only, and
/// decoded once complete (see frame.rs): an item costs the same whatever the chunks.
#[derive(Default)]
pub struct SeqDecoder {
    buf: Vec<u8>,
    /// Bytes of `buf` already handed out.
    start: usize,
    opts: DecodeOptions,
    keys: KeyTracker,
    scanner: Scanner,
    /// Where the item at `start` ends, as far as it has arrived.
    framer: Framer,
    fatal: Option<Error>,
    /// `buf.len()` when an attempt last ran out of input: no point trying again until it grows.
    starved_at: Option<usize>,
    /// Bytes consumed before `buf[0]`, for error offsets in the whole stream.
    consumed: usize,
}

impl SeqDecoder {
    /// A decoder with the default (Kubernetes) limits; unknown fields are errors.
    pub fn new() -> Self {
        Self::default()
    }

    /// A decoder with the given options.
    pub fn with_options(opts: DecodeOptions) -> Self {
        SeqDecoder {
            opts,
            ..Self::default()
        }
    }

    /// Adds bytes that arrived.
    pub fn push(&mut self, bytes: &[u8]) {
        if self.start > 0 {
            self.buf.drain(..self.start);
            self.consumed += self.start;
            self.start = 0;
            self.starved_at = self.starved_at.map(|_| self.buf.len());
        }
        self.buf.extend_from_slice(bytes);
    }

    /// Bytes received but not yet returned as items.
    pub fn buffered(&self) -> usize {
        self.buf.len() - self.start
    }

    fn check_fatal(&self) -> Result<()> {
        match &self.fatal {
            Some(e) => Err(e.duplicate()),
            None => Ok(()),
        }
    }

    fn starved(&self) -> bool {
        self.starved_at == Some(self.buf.len())
    }

    /// Whether the item at `start` may be complete: false while the bytes provably stop inside
    /// it (walking on from the last call), true when it is complete or the walk cannot tell.
    fn may_be_complete(&mut self) -> bool {
        if self.start == self.buf.len() || self.starved() {
            return false;
        }
        self.framer.advance(&self.buf[self.start..], &self.opts) != Framed::Incomplete
    }

    /// Moves past `n` bytes: the item at `start` is done with.
    fn skip(&mut self, n: usize) {
        self.start += n;
        self.starved_at = None;
        self.framer.reset();
    }

    /// Handles a failed attempt on the item at `start`: more bytes needed (`Ok(false)`), the
    /// item skipped with an error, or a fatal error.
    fn classify(&mut self, err: Error) -> Result<bool> {
        if err.is_eof() {
            self.starved_at = Some(self.buf.len());
            return Ok(false);
        }
        let data = &self.buf[self.start..];
        match scan::scan_with(
            data,
            0,
            0,
            &self.opts,
            &mut self.keys,
            &mut self.scanner,
            false,
        ) {
            Ok(end) => {
                // Well-formed but unacceptable: skip just this item.
                self.skip(end);
                let mut err = err;
                err.shift_offset(self.consumed + self.start - end);
                Err(err)
            }
            Err(e) if e.is_eof() => {
                // The rest of the item has not arrived yet; judge it when it has.
                self.starved_at = Some(self.buf.len());
                Ok(false)
            }
            Err(mut e) => {
                e.shift_offset(self.consumed + self.start);
                self.fatal = Some(e.duplicate());
                Err(e)
            }
        }
    }

    /// The next complete item's bytes (as sent, prefix included), validated against the profile;
    /// `Ok(None)` when more bytes are needed.
    pub fn next_item(&mut self) -> Result<Option<&[u8]>> {
        self.check_fatal()?;
        if !self.may_be_complete() {
            return Ok(None);
        }
        let data = &self.buf[self.start..];
        match scan::scan(data, 0, 0, &self.opts, &mut self.keys, &mut self.scanner) {
            Ok(end) => {
                let s = self.start;
                self.skip(end);
                Ok(Some(&self.buf[s..s + end]))
            }
            Err(e) => {
                self.classify(e)?;
                Ok(None)
            }
        }
    }

    /// The next complete item decoded as `T`; `Ok(None)` when more bytes are needed.
    ///
    /// The item is decoded straight from the buffer; it is scanned separately only when decoding
    /// fails, to tell a truncated, a bad and an ill-formed item apart.
    // Named like an iterator's method on purpose: it is the stream's "next".
    #[allow(clippy::should_implement_trait)]
    pub fn next<T: DeserializeOwned>(&mut self) -> Result<Option<T>> {
        self.check_fatal()?;
        if !self.may_be_complete() {
            return Ok(None);
        }
        let r = {
            let mut de = Deserializer::with_options(&self.buf[self.start..], self.opts);
            let r = de.decode_root::<T>().map(|v| (v, de.position()));
            de.recycle();
            r
        };
        match r {
            Ok((v, used)) => {
                self.skip(used);
                Ok(Some(v))
            }
            Err(e) => {
                self.classify(e)?;
                Ok(None)
            }
        }
    }

    /// Ends the stream: an error if a truncated item is left over (or the stream was broken).
    pub fn finish(&self) -> Result<()> {
        self.check_fatal()?;
        if self.start < self.buf.len() {
            let n = self.buf.len() - self.start;
            return Err(Error::at(
                ErrorKind::Eof,
                self.consumed + self.start,
                format!("stream ended inside an item ({n} bytes of it received)"),
            ));
        }
        Ok(())
    }
}
