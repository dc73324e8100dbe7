//! Lists that stream: `{"kind", "apiVersion", "metadata", "items": [...]}` encoded item by item,
//! so the server's buffer does not grow with the number of items (KEP-4222's beta criterion,
//! "buffer size is not proportional to output size"; Kubernetes' `streamingCollectionsEncoding`).
//!
//! * JSON: `{"kind":..,"apiVersion":..,"metadata":..,"items":[` then the items separated by
//!   `,`, then `]}` — the key order of Go's `encoding/json` for a typed list.
//! * CBOR: a map of `kind`, `items`, `metadata`, `apiVersion` (Kubernetes' streaming order,
//!   which is also the deterministic order of those keys), written as the list's
//!   [`Profile`] writes CBOR: under [`Profile::Kubernetes`], `d9d9f7` first and every string a
//!   byte string (items carry no `d9d9f7` of their own), as Kubernetes streams it; under
//!   [`Profile::Standard`], a plain map with text strings and no tag, which any CBOR decoder
//!   reads as it would the JSON. [`response`](StreamingList::response) takes the profile from
//!   the [`Negotiated`] request; [`body`](StreamingList::body) and
//!   [`body_from_stream`](StreamingList::body_from_stream) write the Kubernetes form unless
//!   told otherwise with [`profile`](StreamingList::profile). Both forbid indefinite lengths on
//!   output, so the `items` array needs its length up front: the items come from an
//!   [`ExactSizeIterator`], or from a stream with a declared count. An iterator or stream that
//!   yields a different number of items is a server bug; the body then fails (hyper aborts the
//!   response) rather than send malformed CBOR.
//! * A custom codec has no streaming form: the list is built in memory and encoded at once.
//!
//! The body is cut into frames of about [`StreamingList::frame_size`] bytes (64 KiB by
//! default): memory holds one frame plus one item, whatever the list's length.
//!
//! ```
//! use conneg::{Codec, StreamingList};
//! use http_body_util::BodyExt;
//!
//! # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
//! let items = (0..3).map(|i| serde_json::json!({"name": format!("item-{i}")}));
//! let body = StreamingList::new("ItemList", "v1", serde_json::json!({"resourceVersion": "7"}))
//!     .body(&Codec::Json, items);
//! let bytes = body.collect().await.unwrap().to_bytes();
//! assert_eq!(
//!     &bytes[..],
//!     br#"{"kind":"ItemList","apiVersion":"v1","metadata":{"resourceVersion":"7"},"items":[{"name":"item-0"},{"name":"item-1"},{"name":"item-2"}]}"#
//! );
//! # });
//! ```

use std::borrow::Cow;
use std::fmt;
use std::pin::Pin;
use std::task::{Context, Poll};

use bytes::Bytes;
use futures_core::Stream;
use http::header::CONTENT_TYPE;
use http::{Response, StatusCode};
use http_body::{Frame, SizeHint};
use serde::Serialize;

use crate::cbor;
use crate::codec::{Codec, EncodeError};
use crate::negotiate::decision::Negotiated;
use crate::profile::Profile;

/// The default frame size of a [`ListBody`].
pub const DEFAULT_FRAME_SIZE: usize = 64 * 1024;

/// The envelope of a streamed list: `kind`, `apiVersion` and `metadata` (any `Serialize`, e.g.
/// a `ListMeta` with `resourceVersion` and `continue`). An empty `kind` or `apiVersion` is left
/// out, as Kubernetes does.
#[derive(Clone, Debug)]
pub struct StreamingList<M> {
    kind: Cow<'static, str>,
    api_version: Cow<'static, str>,
    metadata: M,
    frame_size: usize,
    profile: Profile,
}

impl<M: Serialize> StreamingList<M> {
    /// A list envelope.
    pub fn new(
        kind: impl Into<Cow<'static, str>>,
        api_version: impl Into<Cow<'static, str>>,
        metadata: M,
    ) -> Self {
        StreamingList {
            kind: kind.into(),
            api_version: api_version.into(),
            metadata,
            frame_size: DEFAULT_FRAME_SIZE,
            profile: Profile::Kubernetes,
        }
    }

    /// How CBOR is written: [`Profile::Kubernetes`] (the self-described tag, byte strings, as
    /// Kubernetes streams a list) unless told otherwise; [`Profile::Standard`] writes a plain
    /// map with text strings and no tag. [`response`](Self::response) sets the request's
    /// profile itself.
    ///
    /// ```
    /// use conneg::{Codec, Profile, StreamingList};
    /// use http_body_util::BodyExt;
    ///
    /// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
    /// let body = StreamingList::new("", "", serde_json::json!({}))
    ///     .profile(Profile::Standard)
    ///     .body(&Codec::Cbor, ["a"]);
    /// let bytes = body.collect().await.unwrap().to_bytes();
    /// // {"items": ["a"], "metadata": {}}: text strings, no self-described tag.
    /// assert_eq!(&bytes[..], b"\xa2\x65items\x81\x61a\x68metadata\xa0");
    /// # });
    /// ```
    pub fn profile(mut self, profile: Profile) -> Self {
        self.profile = profile;
        self
    }

    /// Frames of about `bytes` (at least 1; a single item larger than this is one frame).
    pub fn frame_size(mut self, bytes: usize) -> Self {
        self.frame_size = bytes.max(1);
        self
    }

    /// The body of the list in `codec`, encoding `items` as the connection takes them.
    pub fn body<I>(self, codec: &Codec, items: I) -> ListBody
    where
        I: IntoIterator,
        I::IntoIter: ExactSizeIterator + Send + 'static,
        I::Item: Serialize,
    {
        let items = items.into_iter();
        let len = items.len();
        self.build(codec, len, Box::new(IterItems(items)))
    }

    /// The body of the list in `codec` from a stream of exactly `len` items.
    pub fn body_from_stream<S>(self, codec: &Codec, len: usize, items: S) -> ListBody
    where
        S: Stream + Send + 'static,
        S::Item: Serialize,
    {
        self.build(codec, len, Box::new(StreamItems(Box::pin(items))))
    }

    /// A 200 response with the negotiated codec's `Content-Type` and the streamed list, in the
    /// request's [`Profile`].
    ///
    /// The first frame is encoded at once: a list that fits in it (64 KiB by default) is
    /// complete and has an exact size, so hyper sends it with `Content-Length`; a longer list
    /// is sent chunked, a frame at a time.
    pub fn response<I>(self, negotiated: &Negotiated, items: I) -> Response<ListBody>
    where
        I: IntoIterator,
        I::IntoIter: ExactSizeIterator + Send + 'static,
        I::Item: Serialize,
    {
        let codec = negotiated.response_codec();
        let mut body = self.profile(negotiated.profile()).body(codec, items);
        body.prime();
        let mut response = Response::new(body);
        *response.status_mut() = StatusCode::OK;
        response
            .headers_mut()
            .insert(CONTENT_TYPE, negotiated.content_type());
        response
    }

    fn build(self, codec: &Codec, len: usize, items: Box<dyn Items>) -> ListBody {
        let mut body = ListBody {
            codec: codec.clone(),
            profile: self.profile,
            buf: Vec::new(),
            frame_size: self.frame_size,
            items: Some(items),
            expected: len,
            written: 0,
            tail: Vec::new(),
            error: None,
            whole: None,
        };
        let head = match codec {
            Codec::Json => self.json_parts(&mut body),
            Codec::Cbor => self.cbor_parts(len, &mut body),
            _ => self.erase().map(|list| {
                // No streaming form: collect (see the module docs).
                body.whole = Some(list);
            }),
        };
        if let Err(e) = head {
            body.fail(e);
        }
        body
    }

    fn json_parts(&self, body: &mut ListBody) -> Result<(), EncodeError> {
        let out = &mut body.buf;
        out.push(b'{');
        if !self.kind.is_empty() {
            out.extend_from_slice(b"\"kind\":");
            Codec::Json.encode(&*self.kind, out)?;
            out.push(b',');
        }
        if !self.api_version.is_empty() {
            out.extend_from_slice(b"\"apiVersion\":");
            Codec::Json.encode(&*self.api_version, out)?;
            out.push(b',');
        }
        out.extend_from_slice(b"\"metadata\":");
        Codec::Json.encode(&self.metadata, out)?;
        out.extend_from_slice(b",\"items\":[");
        body.tail.extend_from_slice(b"]}");
        Ok(())
    }

    fn cbor_parts(&self, len: usize, body: &mut ListBody) -> Result<(), EncodeError> {
        let p = self.profile;
        let out = &mut body.buf;
        if p == Profile::Kubernetes {
            out.extend_from_slice(&conneg_cbor::SELF_DESCRIBED_PREFIX);
        }
        let pairs = 2 + u64::from(!self.kind.is_empty()) + u64::from(!self.api_version.is_empty());
        cbor_head(5, pairs, out);
        if !self.kind.is_empty() {
            cbor_item(p, &"kind", out)?;
            cbor_item(p, &*self.kind, out)?;
        }
        cbor_item(p, &"items", out)?;
        cbor_head(4, len as u64, out);
        let tail = &mut body.tail;
        cbor_item(p, &"metadata", tail)?;
        cbor_item(p, &self.metadata, tail)?;
        if !self.api_version.is_empty() {
            cbor_item(p, &"apiVersion", tail)?;
            cbor_item(p, &*self.api_version, tail)?;
        }
        Ok(())
    }
}

/// A list encoded whole but for its items, for a caller that streams the items itself (each
/// written with [`Negotiated::encode_item`]): made from the encoding of the list with no items,
/// whose `items` field is its last (Kubernetes' list types, `apiserver`'s `List`), cut where
/// the items go. [`head`](Self::head), the items separated by [`separator`](Self::separator),
/// then [`tail`](Self::tail) are the bytes [`Negotiated::encode`] makes of the whole list, key
/// order included (unlike [`StreamingList`], which writes Kubernetes' streaming order).
///
/// ```
/// use conneg::{ListEnvelope, Negotiator};
/// use http::{HeaderMap, Method, Uri};
/// use serde_json::json;
///
/// let n = Negotiator::new()
///     .negotiate(&Method::GET, &Uri::from_static("/items"), &HeaderMap::new(), false)
///     .unwrap();
/// // serde_json's maps sort their keys: `items` comes last.
/// let empty = json!({"apiVersion": "v1", "items": []});
/// let envelope = ListEnvelope::new(&n, &empty, 2).unwrap().unwrap();
/// let mut body = envelope.head().to_vec();
/// n.encode_item(&1, &mut body).unwrap();
/// body.extend_from_slice(envelope.separator());
/// n.encode_item(&2, &mut body).unwrap();
/// body.extend_from_slice(envelope.tail());
/// assert_eq!(body, n.encode(&json!({"apiVersion": "v1", "items": [1, 2]})).unwrap());
/// ```
#[derive(Debug, Clone)]
pub struct ListEnvelope {
    head: Vec<u8>,
    separator: &'static [u8],
    tail: &'static [u8],
}

impl ListEnvelope {
    /// The envelope of `empty` for `count` items in `negotiated`'s codec; `None` when that
    /// output has no streaming form (pretty JSON, a custom codec). An `empty` whose encoding
    /// does not end with its empty `items` is an error.
    pub fn new<L: Serialize + ?Sized>(
        negotiated: &Negotiated,
        empty: &L,
        count: usize,
    ) -> Result<Option<Self>, EncodeError> {
        // Pretty JSON and custom codecs have no encoding whose bytes streaming can reproduce.
        let Some(encoding) = negotiated.encoding() else {
            return Ok(None);
        };
        let separator = encoding.item_separator();
        let json = matches!(negotiated.response_codec(), Codec::Json);
        let mut head = Vec::from(negotiated.encode(empty)?);
        let no_items: &[u8] = if json { b"[]}" } else { &[0x80] };
        if !head.ends_with(no_items) {
            return Err(EncodeError(
                "a list's items are not the last field of its encoding".into(),
            ));
        }
        head.truncate(head.len() - no_items.len());
        let tail: &[u8] = if json {
            head.push(b'[');
            b"]}"
        } else {
            cbor_head(4, count as u64, &mut head);
            b""
        };
        Ok(Some(Self {
            head,
            separator,
            tail,
        }))
    }

    /// The bytes before the first item.
    pub fn head(&self) -> &[u8] {
        &self.head
    }

    /// The bytes between two items.
    pub fn separator(&self) -> &'static [u8] {
        self.separator
    }

    /// The bytes after the last item.
    pub fn tail(&self) -> &'static [u8] {
        self.tail
    }

    /// The head, taken out.
    pub fn into_head(self) -> Vec<u8> {
        self.head
    }
}

/// A CBOR head: major type and argument in the shortest form (RFC 8949 §3).
fn cbor_head(major: u8, n: u64, out: &mut Vec<u8>) {
    let m = major << 5;
    if n < 24 {
        out.push(m | n as u8);
    } else if n <= u64::from(u8::MAX) {
        out.extend_from_slice(&[m | 24, n as u8]);
    } else if n <= u64::from(u16::MAX) {
        out.push(m | 25);
        out.extend_from_slice(&(n as u16).to_be_bytes());
    } else if n <= u64::from(u32::MAX) {
        out.push(m | 26);
        out.extend_from_slice(&(n as u32).to_be_bytes());
    } else {
        out.push(m | 27);
        out.extend_from_slice(&n.to_be_bytes());
    }
}

/// One nested CBOR item (no `d9d9f7`), with `profile`'s strings.
fn cbor_item<T: Serialize + ?Sized>(
    profile: Profile,
    value: &T,
    out: &mut Vec<u8>,
) -> Result<(), EncodeError> {
    cbor::encode_nested(profile, out, value).map_err(EncodeError)
}

/// Where the items come from, encoding each into the frame buffer.
trait Items: Send {
    fn poll_item(
        &mut self,
        cx: &mut Context<'_>,
        codec: &Codec,
        profile: Profile,
        out: &mut Vec<u8>,
    ) -> Poll<Option<Result<(), EncodeError>>>;

    /// All remaining items as JSON values (for codecs without a streaming form).
    fn collect_json(&mut self) -> Result<Vec<serde_json::Value>, EncodeError>;
}

fn encode_item<T: Serialize>(
    codec: &Codec,
    profile: Profile,
    item: &T,
    out: &mut Vec<u8>,
) -> Result<(), EncodeError> {
    match codec {
        Codec::Cbor => cbor_item(profile, item, out),
        other => other.encode(item, out),
    }
}

fn to_json<T: Serialize>(item: &T) -> Result<serde_json::Value, EncodeError> {
    serde_json::to_value(item).map_err(|e| EncodeError(e.to_string()))
}

struct IterItems<I>(I);

impl<I> Items for IterItems<I>
where
    I: Iterator + Send,
    I::Item: Serialize,
{
    fn poll_item(
        &mut self,
        _: &mut Context<'_>,
        codec: &Codec,
        profile: Profile,
        out: &mut Vec<u8>,
    ) -> Poll<Option<Result<(), EncodeError>>> {
        Poll::Ready(
            self.0
                .next()
                .map(|item| encode_item(codec, profile, &item, out)),
        )
    }

    fn collect_json(&mut self) -> Result<Vec<serde_json::Value>, EncodeError> {
        self.0.by_ref().map(|item| to_json(&item)).collect()
    }
}

struct StreamItems<S>(Pin<Box<S>>);

impl<S> Items for StreamItems<S>
where
    S: Stream + Send,
    S::Item: Serialize,
{
    fn poll_item(
        &mut self,
        cx: &mut Context<'_>,
        codec: &Codec,
        profile: Profile,
        out: &mut Vec<u8>,
    ) -> Poll<Option<Result<(), EncodeError>>> {
        self.0
            .as_mut()
            .poll_next(cx)
            .map(|item| item.map(|item| encode_item(codec, profile, &item, out)))
    }

    fn collect_json(&mut self) -> Result<Vec<serde_json::Value>, EncodeError> {
        Err(EncodeError(
            "a streamed list needs a codec with a streaming form (JSON or CBOR)".into(),
        ))
    }
}

/// The body of a streamed list (see [`StreamingList`]). Its error is an [`EncodeError`]
/// (an item failed to encode, or the item count was wrong): hyper then aborts the response.
pub struct ListBody {
    codec: Codec,
    profile: Profile,
    buf: Vec<u8>,
    frame_size: usize,
    items: Option<Box<dyn Items>>,
    expected: usize,
    written: usize,
    tail: Vec<u8>,
    error: Option<EncodeError>,
    whole: Option<StreamingList<serde_json::Value>>,
}

// `whole` holds the envelope with its metadata as a JSON value.
impl<M: Serialize> StreamingList<M> {
    fn erase(&self) -> Result<StreamingList<serde_json::Value>, EncodeError> {
        Ok(StreamingList {
            kind: self.kind.clone(),
            api_version: self.api_version.clone(),
            metadata: to_json(&self.metadata)?,
            frame_size: self.frame_size,
            profile: self.profile,
        })
    }
}

impl fmt::Debug for ListBody {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ListBody")
            .field("codec", &self.codec)
            .field("profile", &self.profile)
            .field("items", &self.expected)
            .field("written", &self.written)
            .finish_non_exhaustive()
    }
}

impl ListBody {
    fn fail(&mut self, error: EncodeError) {
        self.buf = Vec::new();
        self.tail = Vec::new();
        self.items = None;
        self.whole = None;
        self.error = Some(error);
    }

    fn take_frame(&mut self) -> Frame<Bytes> {
        let next = Vec::with_capacity(if self.items.is_some() {
            self.frame_size + self.frame_size / 4
        } else {
            0
        });
        Frame::data(Bytes::from(std::mem::replace(&mut self.buf, next)))
    }

    /// Encodes a list whose codec cannot stream, all at once.
    fn encode_whole(&mut self) -> Result<(), EncodeError> {
        let (Some(list), Some(items)) = (self.whole.take(), self.items.as_mut()) else {
            return Ok(());
        };
        let items = items.collect_json()?;
        let mut value = serde_json::Map::new();
        if !list.kind.is_empty() {
            value.insert("kind".into(), list.kind.as_ref().into());
        }
        if !list.api_version.is_empty() {
            value.insert("apiVersion".into(), list.api_version.as_ref().into());
        }
        value.insert("metadata".into(), list.metadata);
        value.insert("items".into(), items.into());
        self.items = None;
        self.codec.encode(&value, &mut self.buf)
    }
}

/// How far [`ListBody::fill`] got.
enum Filled {
    /// A frame's worth is buffered.
    Frame,
    /// The source has nothing ready.
    Pending,
    /// The list is complete in the buffer.
    Done,
}

impl ListBody {
    /// Encodes items into the buffer until a frame is full, the source pends, or the list
    /// ends (the tail is then appended).
    fn fill(&mut self, cx: &mut Context<'_>) -> Result<Filled, EncodeError> {
        if self.whole.is_some() {
            self.encode_whole()?;
        }
        while let Some(items) = self.items.as_mut() {
            if self.buf.len() >= self.frame_size {
                return Ok(Filled::Frame);
            }
            let mark = self.buf.len();
            if matches!(self.codec, Codec::Json) && self.written > 0 {
                self.buf.push(b',');
            }
            match items.poll_item(cx, &self.codec, self.profile, &mut self.buf) {
                Poll::Ready(Some(Ok(()))) => {
                    self.written += 1;
                    if self.written > self.expected && matches!(self.codec, Codec::Cbor) {
                        return Err(EncodeError(format!(
                            "the list said {} items but yielded more",
                            self.expected
                        )));
                    }
                }
                Poll::Ready(Some(Err(e))) => return Err(e),
                Poll::Ready(None) => {
                    self.buf.truncate(mark);
                    self.items = None;
                    if self.written != self.expected && matches!(self.codec, Codec::Cbor) {
                        return Err(EncodeError(format!(
                            "the list said {} items but yielded {}",
                            self.expected, self.written
                        )));
                    }
                    let tail = std::mem::take(&mut self.tail);
                    self.buf.extend_from_slice(&tail);
                }
                Poll::Pending => {
                    self.buf.truncate(mark);
                    return Ok(Filled::Pending);
                }
            }
        }
        Ok(Filled::Done)
    }

    /// Encodes the first frame now, so that a list that fits in one frame is complete before
    /// the response is sent: its exact size then gives it a `Content-Length`.
    fn prime(&mut self) {
        let mut cx = Context::from_waker(std::task::Waker::noop());
        if let Err(e) = self.fill(&mut cx) {
            self.fail(e);
        }
    }
}

impl http_body::Body for ListBody {
    type Data = Bytes;
    type Error = EncodeError;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, EncodeError>>> {
        let this = &mut *self;
        if let Some(e) = this.error.take() {
            return Poll::Ready(Some(Err(e)));
        }
        match this.fill(cx) {
            Err(e) => {
                this.fail(e);
                Poll::Ready(this.error.take().map(Err))
            }
            // Send what is ready rather than wait with it.
            Ok(Filled::Pending) if this.buf.is_empty() => Poll::Pending,
            Ok(Filled::Done) if this.buf.is_empty() => Poll::Ready(None),
            Ok(_) => Poll::Ready(Some(Ok(this.take_frame()))),
        }
    }

    fn is_end_stream(&self) -> bool {
        self.items.is_none() && self.whole.is_none() && self.buf.is_empty() && self.error.is_none()
    }

    fn size_hint(&self) -> SizeHint {
        if self.items.is_none() && self.whole.is_none() && self.error.is_none() {
            SizeHint::with_exact(self.buf.len() as u64)
        } else {
            SizeHint::default()
        }
    }
}
