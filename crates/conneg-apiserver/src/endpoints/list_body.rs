//! A list response streamed item by item: the envelope (`kind`, `apiVersion`, `metadata`)
//! first, then each item encoded as the connection takes it, in frames of about
//! [`FRAME_SIZE`] bytes, the task yielding to the runtime between frames so that one long
//! list does not hold a worker thread while other requests wait (Kubernetes'
//! `streamingCollectionsEncoding`).
//!
//! * **The same bytes**: the envelope is the encoding of the list with no items, cut where its
//!   items go ([`ListEnvelope`]), and each item is encoded as it would be inside the whole list
//!   ([`Negotiated::encode_item`]); the concatenated frames are the bytes the whole list
//!   encodes to. Pretty JSON and custom codecs have no streaming form here: those
//!   lists are encoded whole.
//! * **Memory**: one frame and one item, besides what the caller's item source holds (for a
//!   list, the page's stored objects, whose bytes the watch cache shares). A slow client
//!   holds no encoded copy of the collection.
//! * **Errors**: the first frame is encoded before the response is made, so a list that fits
//!   in it, or whose first items fail, is answered whole (an error is then a 500 with its
//!   `Status`). An item that fails later cannot change the status already sent: the body ends
//!   with an error, which hyper turns into a truncated response (HTTP/1.1: the connection
//!   closes without the last chunk; HTTP/2: the stream is reset), as Kubernetes truncates it;
//!   a client never sees a complete-looking list. The failure is logged.

use std::collections::VecDeque;
use std::pin::Pin;
use std::task::{Context, Poll};

use axum::body::Body;
use axum::response::Response;
use bytes::Bytes;
use conneg::{ListEnvelope, Negotiated, Status};
use http::StatusCode;
use http::header::CONTENT_TYPE;
use http_body::{Frame, SizeHint};

use super::StatusError;

/// About how many bytes one frame of the body carries (one item larger than this is one
/// frame).
pub(super) const FRAME_SIZE: usize = 64 * 1024;

/// Why a streamed item could not be written.
pub(super) type ItemError = Box<dyn std::error::Error + Send + Sync>;

/// The source of a list's items: each call appends the next item's encoding to the buffer
/// (with [`Negotiated::encode_item`]), or returns it when it is encoded already: kept bytes,
/// the list's separator then the item, sent as they are without a copy (one frame for both;
/// the first item's drops the separator); `None` when there are no more.
pub(super) type Items =
    Box<dyn FnMut(&mut Vec<u8>) -> Option<Result<Option<Bytes>, ItemError>> + Send>;

/// A list to stream: the envelope around its items ([`ListEnvelope`]), and how many there are.
#[derive(Debug)]
pub(super) struct Envelope(ListEnvelope, usize);

impl Envelope {
    /// The envelope of `empty`, a list with no items whose `items` field is its last (as
    /// [`List`](crate::resource::List)'s is), for `count` items in `n`'s codec; `None` when
    /// the response cannot stream (pretty JSON, a custom codec).
    pub(super) fn new<L: serde::Serialize>(
        n: &Negotiated,
        empty: &L,
        count: usize,
    ) -> Result<Option<Self>, StatusError> {
        Ok(ListEnvelope::new(n, empty, count)?.map(|e| Self(e, count)))
    }

    /// A 200 response with the negotiated `Content-Type` whose body is the list of the items
    /// of `items` (as many as the envelope was made for). The first frame is encoded now: its
    /// errors are this call's.
    pub(super) fn respond(self, n: &Negotiated, items: Items) -> Result<Response, StatusError> {
        let (separator, tail, count) = (self.0.separator(), self.0.tail(), self.1);
        let mut body = ListBody {
            buf: self.0.into_head(),
            ready: VecDeque::new(),
            ready_len: 0,
            items: Some(items),
            separator,
            tail,
            count,
            written: 0,
            yield_first: false,
        };
        body.fill()
            .map_err(|e| Status::internal_error(e.to_string()))?;
        body.push_buf();
        body.yield_first = body.items.is_some();
        if body.items.is_none() && body.ready.len() > 1 {
            // A short list, complete now: one frame, as a whole list would be.
            let mut whole = Vec::with_capacity(body.ready_len);
            body.ready.iter().for_each(|b| whole.extend_from_slice(b));
            body.ready = VecDeque::from([Bytes::from(whole)]);
        }
        let mut response = Response::new(Body::new(body));
        response
            .headers_mut()
            .insert(CONTENT_TYPE, n.content_type());
        *response.status_mut() = StatusCode::OK;
        Ok(response)
    }
}

/// The body of a streamed list (see the module).
struct ListBody {
    /// Frames to send before `buf`, and their length: encoded bytes, and items' kept bytes.
    ready: VecDeque<Bytes>,
    ready_len: usize,
    /// Encoded bytes not yet sent, after `ready`.
    buf: Vec<u8>,
    /// `None` once every item is written (the tail then follows them in `buf`).
    items: Option<Items>,
    separator: &'static [u8],
    tail: &'static [u8],
    /// How many items the envelope announced, and how many were written.
    count: usize,
    written: usize,
    /// Whether the next poll yields to the runtime before encoding more.
    yield_first: bool,
}

impl ListBody {
    /// Encodes items until a frame's worth is buffered or the list ends.
    fn fill(&mut self) -> Result<(), ItemError> {
        while self.ready_len + self.buf.len() < FRAME_SIZE {
            let Some(items) = self.items.as_mut() else {
                break;
            };
            let mark = self.buf.len();
            if self.written > 0 {
                self.buf.extend_from_slice(self.separator);
            }
            match items(&mut self.buf) {
                Some(Ok(None)) => self.written += 1,
                Some(Ok(Some(kept))) => {
                    let Some(item) = kept.strip_prefix(self.separator) else {
                        return Err("a kept item does not begin with the list's separator".into());
                    };
                    let kept = if self.written == 0 {
                        kept.slice_ref(item)
                    } else {
                        kept
                    };
                    self.written += 1;
                    self.buf.truncate(mark);
                    self.push_buf();
                    self.ready_len += kept.len();
                    self.ready.push_back(kept);
                }
                Some(Err(e)) => return Err(e),
                None => {
                    self.buf.truncate(mark);
                    self.items = None;
                    self.buf.extend_from_slice(self.tail);
                }
            }
            if self.written > self.count || (self.items.is_none() && self.written != self.count) {
                return Err(format!(
                    "the list announced {} items but has {}",
                    self.count, self.written
                )
                .into());
            }
        }
        Ok(())
    }

    /// Moves the encoded bytes into `ready`, behind the frames there.
    fn push_buf(&mut self) {
        if !self.buf.is_empty() {
            let capacity = if self.items.is_some() { FRAME_SIZE } else { 0 };
            let buf = std::mem::replace(&mut self.buf, Vec::with_capacity(capacity));
            self.ready_len += buf.len();
            self.ready.push_back(Bytes::from(buf));
        }
    }

    fn fail(&mut self, e: &ItemError) {
        tracing::error!(error = %e, "a streamed list failed; its response is truncated");
        self.items = None;
        self.buf = Vec::new();
        self.ready.clear();
        self.ready_len = 0;
    }
}

impl http_body::Body for ListBody {
    type Data = Bytes;
    type Error = ItemError;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, ItemError>>> {
        let this = &mut *self;
        if this.ready.is_empty() {
            if std::mem::take(&mut this.yield_first) {
                // Let the other tasks of this worker run before the next frames are encoded.
                cx.waker().wake_by_ref();
                return Poll::Pending;
            }
            if let Err(e) = this.fill() {
                this.fail(&e);
                return Poll::Ready(Some(Err(e)));
            }
            this.push_buf();
            this.yield_first = this.items.is_some();
        }
        let Some(frame) = this.ready.pop_front() else {
            return Poll::Ready(None);
        };
        this.ready_len -= frame.len();
        Poll::Ready(Some(Ok(Frame::data(frame))))
    }

    fn is_end_stream(&self) -> bool {
        self.items.is_none() && self.buf.is_empty() && self.ready.is_empty()
    }

    fn size_hint(&self) -> SizeHint {
        match self.items {
            None => SizeHint::with_exact((self.ready_len + self.buf.len()) as u64),
            Some(_) => SizeHint::default(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use conneg::{Negotiator, Profile};
    use http::{HeaderMap, Method, Uri};
    use http_body::Body as _;
    use serde_json::{Value, json};

    use crate::meta::ListMeta;
    use crate::resource::List;

    fn negotiated(profile: Profile, accept: &'static str, uri: &'static str) -> Negotiated {
        let mut headers = HeaderMap::new();
        headers.insert(http::header::ACCEPT, accept.parse().unwrap());
        Negotiator::new()
            .profile(profile)
            .negotiate(&Method::GET, &Uri::from_static(uri), &headers, false)
            .unwrap()
    }

    /// Items of about 1 KiB each, so that a few hundred make several frames.
    fn items(count: usize) -> Vec<Value> {
        (0..count)
            .map(|i| json!({"metadata": {"name": format!("item-{i}")}, "spec": "x".repeat(1000)}))
            .collect()
    }

    fn list(items: Vec<Value>) -> List<Value> {
        List {
            kind: "ThingList".into(),
            api_version: "example.com/v1".into(),
            metadata: ListMeta {
                resource_version: "42".into(),
                continue_: "next".into(),
                ..Default::default()
            },
            items,
        }
    }

    /// The items of `values` as a source, failing at `fail_at`: two of every three (the
    /// first among them) as kept bytes, the others encoded into the buffer.
    fn source(n: &Negotiated, values: Vec<Value>, fail_at: Option<usize>) -> Items {
        let n = n.clone();
        let mut values = values.into_iter().enumerate();
        Box::new(move |out| {
            let (i, v) = values.next()?;
            if Some(i) == fail_at {
                return Some(Err("stored object is corrupt".into()));
            }
            if i % 3 != 2 {
                let separator = n.encoding().unwrap().item_separator();
                let mut kept = separator.to_vec();
                n.encode_item(&v, &mut kept).unwrap();
                return Some(Ok(Some(Bytes::from(kept))));
            }
            Some(n.encode_item(&v, out).map(|()| None).map_err(Into::into))
        })
    }

    fn streamed(
        n: &Negotiated,
        values: Vec<Value>,
        fail_at: Option<usize>,
    ) -> Result<Response, StatusError> {
        let count = values.len();
        let envelope = Envelope::new(n, &list(Vec::new()), count)?.unwrap();
        envelope.respond(n, source(n, values, fail_at))
    }

    /// Polls the body to its end with a waker that does nothing: the frames, how often it
    /// yielded, and its error.
    fn drain(resp: Response) -> (Vec<Bytes>, usize, Option<ItemError>) {
        let mut body = resp.into_body();
        let mut cx = Context::from_waker(std::task::Waker::noop());
        let (mut frames, mut yields) = (Vec::new(), 0);
        loop {
            match Pin::new(&mut body).poll_frame(&mut cx) {
                Poll::Ready(Some(Ok(f))) => frames.push(f.into_data().unwrap()),
                Poll::Ready(Some(Err(e))) => return (frames, yields, Some(e.into())),
                Poll::Ready(None) => return (frames, yields, None),
                Poll::Pending => yields += 1,
            }
        }
    }

    #[test]
    fn the_streamed_list_is_the_whole_lists_bytes() {
        let cases = [
            (Profile::Kubernetes, "application/json"),
            (Profile::Kubernetes, "application/cbor"),
            (Profile::Standard, "application/json"),
            (Profile::Standard, "application/cbor"),
        ];
        for (profile, accept) in cases {
            let n = negotiated(profile, accept, "/things");
            // Empty, one item, CBOR array heads of each width, several frames.
            for count in [0, 1, 23, 24, 255, 256, 300] {
                let (frames, _, error) = drain(streamed(&n, items(count), None).unwrap());
                assert!(error.is_none());
                let whole = n.encode(&list(items(count))).unwrap();
                assert_eq!(frames.concat(), whole, "{profile:?} {accept} {count} items");
            }
        }
    }

    #[test]
    fn a_kept_item_and_its_separator_are_one_frame() {
        let n = negotiated(Profile::Kubernetes, "application/json", "/things");
        let (frames, _, error) = drain(streamed(&n, items(300), None).unwrap());
        assert!(error.is_none());
        // 200 kept items, each a frame: hyper writes a bounded number of frames at once, so a
        // separator of its own would halve what one write carries.
        assert!(frames.len() > 200, "{}", frames.len());
        assert!(!frames.iter().any(|f| f == ","), "a separator alone");
        assert_eq!(frames.concat(), n.encode(&list(items(300))).unwrap());
    }

    #[test]
    fn a_long_list_is_sent_a_frame_at_a_time_yielding_between_frames() {
        let n = negotiated(Profile::Kubernetes, "application/json", "/things");
        let resp = streamed(&n, items(300), None).unwrap();
        assert_eq!(resp.body().size_hint().exact(), None, "sent chunked");
        // The bytes made between two yields to the runtime: a frame's worth and at most one
        // item beyond it, in frames of encoded bytes and of kept items.
        let mut body = resp.into_body();
        let mut cx = Context::from_waker(std::task::Waker::noop());
        let mut batches = vec![0];
        loop {
            match Pin::new(&mut body).poll_frame(&mut cx) {
                Poll::Ready(Some(Ok(f))) => {
                    *batches.last_mut().unwrap() += f.into_data().unwrap().len()
                }
                Poll::Ready(Some(Err(e))) => panic!("{e}"),
                Poll::Ready(None) => break,
                Poll::Pending => batches.push(0),
            }
        }
        assert!(batches.len() >= 4, "{batches:?}");
        assert!(
            batches.iter().all(|b| (1..FRAME_SIZE + 1100).contains(b)),
            "{batches:?}"
        );
    }

    #[test]
    fn a_short_list_is_complete_before_the_response_is_sent() {
        let n = negotiated(Profile::Kubernetes, "application/cbor", "/things");
        let resp = streamed(&n, items(3), None).unwrap();
        let exact = resp.body().size_hint().exact();
        let whole = n.encode(&list(items(3))).unwrap();
        assert_eq!(exact, Some(whole.len() as u64));
        // One frame, though an item was kept bytes of its own.
        assert_eq!(drain(resp).0, [whole]);
    }

    #[test]
    fn an_item_that_fails_in_the_first_frame_is_a_500() {
        let n = negotiated(Profile::Kubernetes, "application/json", "/things");
        let err = streamed(&n, items(300), Some(10)).unwrap_err();
        assert_eq!(err.code, 500);
        assert!(err.message.contains("corrupt"), "{}", err.message);
    }

    #[test]
    fn an_item_that_fails_later_truncates_the_body() {
        let n = negotiated(Profile::Kubernetes, "application/json", "/things");
        let resp = streamed(&n, items(300), Some(200)).unwrap();
        assert_eq!(resp.status(), StatusCode::OK);
        let (frames, _, error) = drain(resp);
        assert!(error.unwrap().to_string().contains("corrupt"));
        let sent = frames.concat();
        assert!(sent.len() < n.encode(&list(items(300))).unwrap().len());
        assert!(
            serde_json::from_slice::<Value>(&sent).is_err(),
            "never a complete list"
        );
    }

    #[test]
    fn pretty_json_is_not_streamed() {
        let n = negotiated(
            Profile::Kubernetes,
            "application/json",
            "/things?pretty=true",
        );
        assert!(Envelope::new(&n, &list(Vec::new()), 0).unwrap().is_none());
    }

    #[test]
    fn a_source_with_fewer_items_than_announced_fails() {
        let n = negotiated(Profile::Kubernetes, "application/cbor", "/things");
        let envelope = Envelope::new(&n, &list(Vec::new()), 5).unwrap().unwrap();
        let err = envelope
            .respond(&n, source(&n, items(4), None))
            .unwrap_err();
        assert!(
            err.message.contains("announced 5 items but has 4"),
            "{}",
            err.message
        );
    }
}
