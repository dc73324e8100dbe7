//! The client side: a watch response body back into typed [`WatchEvent`]s.

use std::fmt;
use std::marker::PhantomData;
use std::pin::Pin;
use std::task::{Context, Poll, ready};

use bytes::Buf;
use futures_core::Stream;
use http::HeaderValue;
use serde::de::{DeserializeOwned, IgnoredAny};

use crate::codec::BoxError;
use crate::headers::media_type::MediaRange;
use crate::watch::event::{WatchEvent, decode_event, decode_with};

/// The framing of a watch stream.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum StreamFormat {
    /// A CBOR Sequence (RFC 8742): self-delimiting items, no separators.
    CborSeq,
    /// JSON values one after another (Kubernetes writes one per line).
    Json,
}

impl StreamFormat {
    /// The format a watch response's `Content-Type` names: `application/cbor-seq` (or
    /// `application/cbor`) is a CBOR Sequence; `application/json`, with or without
    /// `;stream=watch`, is JSON. `None` for anything else.
    pub fn from_content_type(value: &HeaderValue) -> Option<Self> {
        let range = MediaRange::parse(value.to_str().ok()?)?;
        if range.essence_eq("application/cbor-seq") || range.essence_eq("application/cbor") {
            Some(StreamFormat::CborSeq)
        } else if range.essence_eq("application/json") {
            Some(StreamFormat::Json)
        } else {
            None
        }
    }
}

/// What went wrong reading a watch stream.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum WatchErrorKind {
    /// An event is not well-formed or does not decode into the event type.
    Decode,
    /// The stream ended inside an event.
    Truncated,
    /// The response body failed (connection reset...).
    Body,
    /// The response is not a watch stream (status, `Content-Type`).
    Response,
}

/// An error reading a watch stream. Every error ends the stream: a CBOR Sequence cannot be
/// resynchronised after an ill-formed item (RFC 8742 §2.8), so neither is JSON here.
#[derive(Debug)]
pub struct WatchError {
    kind: WatchErrorKind,
    message: String,
}

impl WatchError {
    fn new(kind: WatchErrorKind, message: impl Into<String>) -> Self {
        WatchError {
            kind,
            message: message.into(),
        }
    }

    /// The kind of error.
    pub fn kind(&self) -> WatchErrorKind {
        self.kind
    }
}

impl fmt::Display for WatchError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for WatchError {}

/// Splits bytes into events, whatever the chunk boundaries: feed it with
/// [`push`](Self::push), take events with [`next_event`](Self::next_event), and call
/// [`finish`](Self::finish) at the end of the input (which fails if an event was cut short).
///
/// Item boundaries come from the codecs' own parsers (conneg-cbor's incremental
/// [`SeqDecoder`](conneg_cbor::SeqDecoder); serde_json's stream deserializer), so nothing here
/// re-implements CBOR. A partial item is re-scanned from its start each time more bytes
/// arrive: linear for the usual chunk sizes, quadratic for one huge event trickling in tiny
/// chunks.
///
/// Unknown fields in objects are ignored (as client-go does); everything else about the CBOR
/// profile is enforced.
///
/// ```
/// use conneg::Codec;
/// use conneg::WatchEvent;
/// use conneg::client::{StreamFormat, WatchDecoder};
///
/// let mut wire = Vec::new();
/// WatchEvent::Added(1u32).encode(&Codec::Cbor, &mut wire).unwrap();
/// WatchEvent::Deleted(2u32).encode(&Codec::Cbor, &mut wire).unwrap();
///
/// let mut decoder = WatchDecoder::<u32>::new(StreamFormat::CborSeq);
/// decoder.push(&wire[..7]); // split anywhere
/// assert!(decoder.next_event().unwrap().is_none());
/// decoder.push(&wire[7..]);
/// assert_eq!(decoder.next_event().unwrap(), Some(WatchEvent::Added(1)));
/// assert_eq!(decoder.next_event().unwrap(), Some(WatchEvent::Deleted(2)));
/// decoder.finish().unwrap();
/// ```
pub struct WatchDecoder<T> {
    format: StreamFormat,
    /// CBOR: conneg-cbor's incremental sequence decoder finds item boundaries.
    seq: conneg_cbor::SeqDecoder,
    /// JSON: received bytes, of which `start..` are not yet returned.
    buf: Vec<u8>,
    start: usize,
    failed: bool,
    _event: PhantomData<fn() -> T>,
}

impl<T> fmt::Debug for WatchDecoder<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("WatchDecoder")
            .field("format", &self.format)
            .field(
                "buffered",
                &(self.buf.len() - self.start + self.seq.buffered()),
            )
            .finish()
    }
}

impl<T: DeserializeOwned> WatchDecoder<T> {
    /// A decoder for `format`.
    pub fn new(format: StreamFormat) -> Self {
        WatchDecoder {
            format,
            seq: conneg_cbor::SeqDecoder::with_options(cbor_options()),
            buf: Vec::new(),
            start: 0,
            failed: false,
            _event: PhantomData,
        }
    }

    /// Bytes received but not yet returned as events.
    pub fn buffered(&self) -> usize {
        match self.format {
            StreamFormat::CborSeq => self.seq.buffered(),
            StreamFormat::Json => self.buf.len() - self.start,
        }
    }

    /// Appends received bytes.
    pub fn push(&mut self, bytes: &[u8]) {
        if self.format == StreamFormat::CborSeq {
            return self.seq.push(bytes);
        }
        if self.start > 0 && self.start >= self.buf.len() / 2 {
            self.buf.drain(..self.start);
            self.start = 0;
        }
        self.buf.extend_from_slice(bytes);
    }

    /// The next complete event, `Ok(None)` if more bytes are needed. After an error, every call
    /// fails.
    pub fn next_event(&mut self) -> Result<Option<WatchEvent<T>>, WatchError> {
        if self.failed {
            return Err(WatchError::new(
                WatchErrorKind::Decode,
                "the watch stream failed earlier",
            ));
        }
        let result = match self.format {
            StreamFormat::CborSeq => next_cbor(&mut self.seq).map(|e| e.map(|e| (e, 0))),
            StreamFormat::Json => next_json(&self.buf[self.start..]),
        };
        match result {
            Ok(Some((event, used))) => {
                self.start += used;
                if self.start == self.buf.len() {
                    self.buf.clear();
                    self.start = 0;
                }
                Ok(Some(event))
            }
            Ok(None) => Ok(None),
            Err(e) => {
                self.failed = true;
                Err(e)
            }
        }
    }

    /// Checks that the input ended between events (JSON may end with whitespace).
    pub fn finish(&self) -> Result<(), WatchError> {
        let partial = match self.format {
            StreamFormat::CborSeq => self.seq.buffered() > 0,
            StreamFormat::Json => self.buf[self.start..]
                .iter()
                .any(|b| !b.is_ascii_whitespace()),
        };
        if partial {
            return Err(WatchError::new(
                WatchErrorKind::Truncated,
                format!(
                    "the watch stream ended inside an event ({} bytes of it received)",
                    self.buffered()
                ),
            ));
        }
        if self.format == StreamFormat::CborSeq {
            self.seq.finish().map_err(decode_error)?;
        }
        Ok(())
    }
}

fn cbor_options() -> conneg_cbor::DecodeOptions {
    conneg_cbor::DecodeOptions::default().unknown_fields(conneg_cbor::UnknownFields::Ignore)
}

fn decode_error(e: impl fmt::Display) -> WatchError {
    WatchError::new(WatchErrorKind::Decode, format!("invalid watch event: {e}"))
}

/// The next complete CBOR item from `seq`, decoded.
fn next_cbor<T: DeserializeOwned>(
    seq: &mut conneg_cbor::SeqDecoder,
) -> Result<Option<WatchEvent<T>>, WatchError> {
    let Some(item) = seq.next_item().map_err(decode_error)? else {
        return Ok(None);
    };
    decode_event(|target| {
        let mut de = conneg_cbor::Deserializer::with_options(item, cbor_options());
        decode_with(target, &mut de)
    })
    .map(Some)
    .map_err(decode_error)
}

/// One JSON value from the front of `rest` (after any whitespace), decoded, and the bytes used.
fn next_json<T: DeserializeOwned>(
    rest: &[u8],
) -> Result<Option<(WatchEvent<T>, usize)>, WatchError> {
    let mut values = serde_json::Deserializer::from_slice(rest).into_iter::<IgnoredAny>();
    match values.next() {
        None => return Ok(None),
        Some(Ok(_)) => {}
        Some(Err(e)) if e.is_eof() => return Ok(None),
        Some(Err(e)) => return Err(decode_error(e)),
    }
    let item = &rest[..values.byte_offset()];
    let event = decode_event(|target| {
        let mut de = serde_json::Deserializer::from_slice(item);
        decode_with(target, &mut de)
    })
    .map_err(decode_error)?;
    Ok(Some((event, item.len())))
}

/// A watch response body as a [`Stream`] of typed events; the stream ends when the body does
/// (after checking the last event was complete) and yields at most one error, then ends.
///
/// ```no_run
/// # async fn run(response: http::Response<hyper::body::Incoming>) -> Result<(), Box<dyn std::error::Error>> {
/// use futures_util::StreamExt;
/// use conneg::{WatchEvent, WatchStream};
///
/// let mut events = WatchStream::<serde_json::Value, _>::from_response(response)?;
/// while let Some(event) = events.next().await {
///     match event? {
///         WatchEvent::Added(o) | WatchEvent::Modified(o) => println!("now {o}"),
///         WatchEvent::Deleted(o) => println!("gone {o}"),
///         WatchEvent::Bookmark(_) => {}
///         WatchEvent::Error(status) => return Err(status.into()),
///     }
/// }
/// # Ok(()) }
/// ```
pub struct WatchStream<T, B> {
    body: Pin<Box<B>>,
    decoder: WatchDecoder<T>,
    done: bool,
}

impl<T, B> fmt::Debug for WatchStream<T, B> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("WatchStream")
            .field("decoder", &self.decoder)
            .field("done", &self.done)
            .finish_non_exhaustive()
    }
}

impl<T: DeserializeOwned, B> WatchStream<T, B> {
    /// Reads `body` as `format`.
    pub fn new(format: StreamFormat, body: B) -> Self {
        WatchStream {
            body: Box::pin(body),
            decoder: WatchDecoder::new(format),
            done: false,
        }
    }

    /// Reads a watch response, choosing the format from its `Content-Type`. Fails if the status
    /// is not 2xx (the body is then usually a `Status`) or the `Content-Type` is not a watch
    /// stream.
    pub fn from_response(response: http::Response<B>) -> Result<Self, WatchError> {
        if !response.status().is_success() {
            return Err(WatchError::new(
                WatchErrorKind::Response,
                format!("the watch request failed with status {}", response.status()),
            ));
        }
        let format = response
            .headers()
            .get(http::header::CONTENT_TYPE)
            .and_then(StreamFormat::from_content_type)
            .ok_or_else(|| {
                WatchError::new(
                    WatchErrorKind::Response,
                    format!(
                        "not a watch stream: Content-Type {:?}",
                        response.headers().get(http::header::CONTENT_TYPE)
                    ),
                )
            })?;
        Ok(Self::new(format, response.into_body()))
    }

    /// The decoder (to see how much is buffered).
    pub fn decoder(&self) -> &WatchDecoder<T> {
        &self.decoder
    }
}

impl<T, B> Stream for WatchStream<T, B>
where
    T: DeserializeOwned,
    B: http_body::Body,
    B::Error: Into<BoxError>,
{
    type Item = Result<WatchEvent<T>, WatchError>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let this = &mut *self;
        loop {
            if this.done {
                return Poll::Ready(None);
            }
            match this.decoder.next_event() {
                Ok(Some(event)) => return Poll::Ready(Some(Ok(event))),
                Ok(None) => {}
                Err(e) => {
                    this.done = true;
                    return Poll::Ready(Some(Err(e)));
                }
            }
            match ready!(this.body.as_mut().poll_frame(cx)) {
                Some(Ok(frame)) => {
                    if let Ok(mut data) = frame.into_data() {
                        while data.has_remaining() {
                            let chunk = data.chunk();
                            let n = chunk.len();
                            this.decoder.push(chunk);
                            data.advance(n);
                        }
                    }
                }
                Some(Err(e)) => {
                    this.done = true;
                    let e: BoxError = e.into();
                    return Poll::Ready(Some(Err(WatchError::new(
                        WatchErrorKind::Body,
                        format!("reading the watch stream failed: {e}"),
                    ))));
                }
                None => {
                    this.done = true;
                    return Poll::Ready(this.decoder.finish().err().map(Err));
                }
            }
        }
    }
}
