//! [`WatchResponse`] and [`WatchBody`]: a stream of events as a streaming HTTP body.

use std::convert::Infallible;
use std::fmt;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use futures_core::Stream;
use http::header::{CACHE_CONTROL, CONTENT_TYPE};
use http::{HeaderValue, Response};
use http_body::{Frame, SizeHint};
use serde::Serialize;
use tokio::time::{Instant, Sleep};

use super::event::WatchEvent;
use super::hub::{WatchHub, Watcher};
use crate::codec::Codec;
use crate::headers::media_type::{APPLICATION_CBOR_SEQ, APPLICATION_JSON};
use crate::negotiate::decision::Negotiated;
use crate::negotiate::rejection::{ErrorStyle, Rejection};
use crate::profile::Profile;
use crate::status::Status;

type ByteStream = Pin<Box<dyn Stream<Item = Bytes> + Send>>;
/// Makes the heartbeat event, encoded in the codec and profile given.
type MakeHeartbeat = Box<dyn FnMut(&Codec, Profile) -> Option<Bytes> + Send>;
/// Makes the heartbeat event, encoded.
type Heartbeat = Box<dyn FnMut() -> Option<Bytes> + Send>;

/// The `Content-Type` of a watch response in `codec`: `application/cbor-seq` for CBOR (what
/// Kubernetes sends to a client that asked for `application/cbor`), plain `application/json`
/// for JSON (Kubernetes' choice, whatever the client asked), a custom codec's stream media
/// type, or `None` if the codec cannot stream.
pub fn watch_content_type(codec: &Codec) -> Option<HeaderValue> {
    match codec {
        Codec::Cbor => Some(HeaderValue::from_static(APPLICATION_CBOR_SEQ)),
        Codec::Json => Some(HeaderValue::from_static(APPLICATION_JSON)),
        other => other.stream_content_type(),
    }
}

/// Builds the response of a watch request: status 200, the stream `Content-Type`, and a
/// [`WatchBody`] that writes each event as its own body frame the moment it is produced, in
/// the [`Profile`]'s form (see [the module docs](super)).
///
/// ```
/// use std::time::Duration;
/// use conneg::Codec;
/// use conneg::watch::{WatchEvent, WatchHub, WatchResponse};
///
/// # tokio::runtime::Builder::new_current_thread().enable_time().build().unwrap().block_on(async {
/// let hub = WatchHub::<serde_json::Value>::new();
/// // In a handler: `WatchResponse::new(&negotiated)`; here the codec is fixed.
/// let response = WatchResponse::with_codec(Codec::Cbor)
///     .timeout(Duration::from_secs(300))
///     .subscribe(&hub);
/// assert_eq!(response.headers()["content-type"], "application/cbor-seq");
/// assert_eq!(hub.watcher_count(), 1);
/// drop(response); // the client went away: the watcher leaves the hub
/// assert_eq!(hub.watcher_count(), 0);
/// # });
/// ```
pub struct WatchResponse {
    codec: Codec,
    /// The profile (how CBOR events are written) and how a 406 is written.
    errors: ErrorStyle,
    timeout: Option<Duration>,
    heartbeat: Option<(Duration, MakeHeartbeat)>,
}

impl fmt::Debug for WatchResponse {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("WatchResponse")
            .field("codec", &self.codec)
            .field("profile", &self.errors.profile)
            .field("timeout", &self.timeout)
            .field("heartbeat", &self.heartbeat.as_ref().map(|h| h.0))
            .finish()
    }
}

impl WatchResponse {
    /// A watch response in the request's negotiated codec and its route's [`Profile`]. A
    /// client that sent `Accept: application/cbor` (client-go), or `application/cbor-seq` on a
    /// route whose layer is [`streaming`](crate::NegotiateLayer::streaming), gets a CBOR
    /// Sequence.
    pub fn new(negotiated: &Negotiated) -> Self {
        WatchResponse {
            codec: negotiated.response_codec().clone(),
            errors: negotiated.error_style().clone(),
            timeout: None,
            heartbeat: None,
        }
    }

    /// A watch response in `codec`, written as [`Profile::Kubernetes`] writes it unless told
    /// otherwise with [`profile`](Self::profile).
    pub fn with_codec(codec: Codec) -> Self {
        let mut errors = ErrorStyle::default();
        errors.profile = Profile::Kubernetes;
        WatchResponse {
            codec,
            errors,
            timeout: None,
            heartbeat: None,
        }
    }

    /// Writes the events (and a 406, if the codec cannot stream) as `profile` does.
    ///
    /// ```
    /// use conneg::watch::{WatchEvent, WatchHub, WatchResponse};
    /// use conneg::{Codec, Profile};
    /// use http_body_util::BodyExt;
    ///
    /// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
    /// let hub = WatchHub::<u32>::new();
    /// let response = WatchResponse::with_codec(Codec::Cbor)
    ///     .profile(Profile::Standard)
    ///     .subscribe(&hub);
    /// hub.publish(WatchEvent::Added(7));
    /// hub.close();
    /// let bytes = response.into_body().collect().await.unwrap().to_bytes();
    /// // {"type": "ADDED", "object": 7}: text strings, no tag.
    /// assert_eq!(&bytes[..], b"\xa2\x64type\x65ADDED\x66object\x07");
    /// # });
    /// ```
    pub fn profile(mut self, profile: Profile) -> Self {
        self.errors.profile = profile;
        self
    }

    /// The codec events are encoded with.
    pub fn codec(&self) -> &Codec {
        &self.codec
    }

    /// Ends the stream cleanly after `timeout` (Kubernetes' `timeoutSeconds`), counted from the
    /// first time the server polls the body.
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = Some(timeout);
        self
    }

    /// Like [`timeout`](Self::timeout), from a `timeoutSeconds` query value; `None` and `0`
    /// mean no timeout.
    pub fn timeout_seconds(self, seconds: Option<u64>) -> Self {
        match seconds {
            Some(s) if s > 0 => self.timeout(Duration::from_secs(s)),
            _ => self,
        }
    }

    /// Sends the event `make` returns (usually a `BOOKMARK` with the current
    /// `resourceVersion`) whenever `every` passes without any other event. Kubernetes only
    /// sends bookmarks to clients that asked with `allowWatchBookmarks=true`.
    pub fn heartbeat<T: Serialize>(
        mut self,
        every: Duration,
        mut make: impl FnMut() -> WatchEvent<T> + Send + 'static,
    ) -> Self {
        let encode = move |codec: &Codec, profile| make().to_bytes_as(codec, profile).ok();
        self.heartbeat = Some((every, Box::new(encode)));
        self
    }

    /// Streams typed events, encoding each with the response codec as it arrives. An event
    /// that fails to encode becomes an `ERROR` event with a 500 `Status`, and the stream ends.
    ///
    /// The body polls `events` only when the connection can take more, so backpressure reaches
    /// the stream; a stream fed by a channel should use a bounded one. For many watchers of
    /// the same events, use a [`WatchHub`] and [`subscribe`](Self::subscribe) instead: it
    /// encodes each event once per codec and profile.
    pub fn events<S, T>(self, events: S) -> Response<WatchBody>
    where
        S: Stream<Item = WatchEvent<T>> + Send + 'static,
        T: Serialize + 'static,
    {
        let encoder = self.encoder();
        self.encoded(EncodeEvents {
            events: Box::pin(events),
            encoder,
            done: false,
        })
    }

    /// Streams events already encoded in this response's codec's stream form and profile (one
    /// item per `Bytes`), such as a [`Watcher`] or [`WatchEvent::to_bytes_as`] makes.
    pub fn encoded<S>(self, events: S) -> Response<WatchBody>
    where
        S: Stream<Item = Bytes> + Send + 'static,
    {
        let Some(content_type) = watch_content_type(&self.codec) else {
            return self.not_acceptable();
        };
        let (codec, profile) = (self.codec, self.errors.profile);
        let body = WatchBody {
            events: Some(Box::pin(events)),
            first: None,
            timeout: self.timeout.map(Timer::new),
            heartbeat: self.heartbeat.map(|(every, mut make)| {
                let beat: Heartbeat = Box::new(move || make(&codec, profile));
                (Timer::new(every), every, beat)
            }),
        };
        let mut response = Response::new(body);
        response.headers_mut().insert(CONTENT_TYPE, content_type);
        response
            .headers_mut()
            .insert(CACHE_CONTROL, HeaderValue::from_static("no-cache, private"));
        response
    }

    /// Subscribes to `hub` in this response's codec and profile and streams what it publishes
    /// from now on.
    pub fn subscribe<T: Send + 'static>(self, hub: &WatchHub<T>) -> Response<WatchBody> {
        match hub.subscribe_as(&self.codec, self.errors.profile) {
            Ok(watcher) => self.watcher(watcher),
            Err(_) => self.not_acceptable(),
        }
    }

    /// Subscribes to `hub`, then streams `initial` (encoded as the connection takes them)
    /// before what the hub publishes from now on: Kubernetes' watch without a
    /// `resourceVersion`, which starts with the current state as `ADDED` events.
    ///
    /// For no event to be lost or doubled, take the snapshot and call this under the same lock
    /// your writes hold while they publish. Live events queue (within the hub's
    /// [`WatchLimits`](super::WatchLimits)) while the initial ones are written.
    pub fn subscribe_with_initial<T, I>(self, hub: &WatchHub<T>, initial: I) -> Response<WatchBody>
    where
        T: Serialize + Send + 'static,
        I: IntoIterator<Item = WatchEvent<T>>,
        I::IntoIter: Send + 'static,
    {
        match hub.subscribe_as(&self.codec, self.errors.profile) {
            Ok(watcher) => {
                let encoder = self.encoder();
                self.encoded(InitialThen {
                    initial: Some(Box::new(initial.into_iter())),
                    encoder,
                    watcher,
                    failed: false,
                })
            }
            Err(_) => self.not_acceptable(),
        }
    }

    /// Streams an existing hub subscription (its codec and profile must be this response's:
    /// subscribe with [`WatchHub::subscribe_as`] or
    /// [`subscribe_filtered_as`](WatchHub::subscribe_filtered_as) and
    /// [`Negotiated::profile`]).
    pub fn watcher<T: Send + 'static>(self, watcher: Watcher<T>) -> Response<WatchBody> {
        debug_assert!(watcher.codec().same_as(&self.codec));
        debug_assert_eq!(watcher.profile(), self.errors.profile);
        self.encoded(watcher)
    }

    fn encoder(&self) -> Encoder {
        Encoder {
            codec: self.codec.clone(),
            profile: self.errors.profile,
        }
    }

    /// The 406 of a codec that cannot stream, in the route's error format.
    fn not_acceptable(self) -> Response<WatchBody> {
        let status = Status::not_acceptable("application/json, application/cbor-seq");
        let rejection = Rejection::new(status, self.codec, false, self.errors);
        rejection.render().map(|body| WatchBody {
            events: None,
            first: Some(body),
            timeout: None,
            heartbeat: None,
        })
    }
}

/// How a stream's typed events are encoded.
struct Encoder {
    codec: Codec,
    profile: Profile,
}

impl Encoder {
    /// The event's bytes, and whether it failed to encode: the bytes are then an `ERROR`
    /// event, after which the stream ends.
    fn encode<T: Serialize>(&self, event: &WatchEvent<T>) -> (Bytes, bool) {
        match event.to_bytes_or_error(&self.codec, self.profile) {
            Ok(bytes) => (bytes, false),
            Err(error) => (error, true),
        }
    }
}

/// Encodes typed events on the way out.
struct EncodeEvents<T> {
    events: Pin<Box<dyn Stream<Item = WatchEvent<T>> + Send>>,
    encoder: Encoder,
    done: bool,
}

impl<T: Serialize> Stream for EncodeEvents<T> {
    type Item = Bytes;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Bytes>> {
        if self.done {
            return Poll::Ready(None);
        }
        let this = &mut *self;
        match this.events.as_mut().poll_next(cx) {
            Poll::Ready(Some(event)) => {
                let (bytes, failed) = this.encoder.encode(&event);
                this.done = failed;
                Poll::Ready(Some(bytes))
            }
            Poll::Ready(None) => {
                this.done = true;
                Poll::Ready(None)
            }
            Poll::Pending => Poll::Pending,
        }
    }
}

/// Initial events, encoded one by one, then a hub subscription.
struct InitialThen<T> {
    initial: Option<Box<dyn Iterator<Item = WatchEvent<T>> + Send>>,
    encoder: Encoder,
    watcher: Watcher<T>,
    failed: bool,
}

impl<T: Serialize> Stream for InitialThen<T> {
    type Item = Bytes;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Bytes>> {
        let this = &mut *self;
        if this.failed {
            return Poll::Ready(None);
        }
        if let Some(initial) = &mut this.initial {
            match initial.next() {
                Some(event) => {
                    // A failure is a server bug: say so and end, as the hub does.
                    let (bytes, failed) = this.encoder.encode(&event);
                    this.failed = failed;
                    return Poll::Ready(Some(bytes));
                }
                None => this.initial = None,
            }
        }
        Pin::new(&mut this.watcher).poll_next(cx)
    }
}

/// A deadline, armed the first time it is polled (a tokio timer needs the runtime).
struct Timer {
    after: Duration,
    sleep: Option<Pin<Box<Sleep>>>,
}

impl Timer {
    fn new(after: Duration) -> Self {
        Timer { after, sleep: None }
    }

    fn poll(&mut self, cx: &mut Context<'_>) -> Poll<()> {
        let after = self.after;
        self.sleep
            .get_or_insert_with(|| Box::pin(tokio::time::sleep(after)))
            .as_mut()
            .poll(cx)
    }

    fn reset(&mut self, after: Duration) {
        match &mut self.sleep {
            Some(sleep) => sleep.as_mut().reset(Instant::now() + after),
            None => self.after = after,
        }
    }
}

/// The body of a watch response: one frame per event, written as soon as the event exists.
///
/// Dropping it (hyper does when the client disconnects) drops the event stream, and with it
/// the hub subscription. It ends cleanly when the events end, when the hub ends the watch, or
/// at the timeout. It needs a tokio runtime with timers when a timeout or heartbeat is set.
pub struct WatchBody {
    events: Option<ByteStream>,
    first: Option<Bytes>,
    timeout: Option<Timer>,
    heartbeat: Option<(Timer, Duration, Heartbeat)>,
}

impl fmt::Debug for WatchBody {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("WatchBody")
            .field("ended", &self.events.is_none())
            .finish_non_exhaustive()
    }
}

impl WatchBody {
    fn finish(&mut self) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        self.events = None;
        self.timeout = None;
        self.heartbeat = None;
        Poll::Ready(None)
    }
}

impl http_body::Body for WatchBody {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        let this = &mut *self;
        if let Some(first) = this.first.take() {
            return Poll::Ready(Some(Ok(Frame::data(first))));
        }
        let Some(events) = this.events.as_mut() else {
            return Poll::Ready(None);
        };
        if let Some(timeout) = &mut this.timeout
            && timeout.poll(cx).is_ready()
        {
            return this.finish();
        }
        match events.as_mut().poll_next(cx) {
            Poll::Ready(Some(bytes)) => {
                if let Some((timer, every, _)) = &mut this.heartbeat {
                    timer.reset(*every);
                }
                Poll::Ready(Some(Ok(Frame::data(bytes))))
            }
            Poll::Ready(None) => this.finish(),
            Poll::Pending => {
                if let Some((timer, every, make)) = &mut this.heartbeat
                    && timer.poll(cx).is_ready()
                {
                    timer.reset(*every);
                    // Register the new deadline's waker.
                    let _ = timer.poll(cx);
                    if let Some(bytes) = make() {
                        return Poll::Ready(Some(Ok(Frame::data(bytes))));
                    }
                }
                Poll::Pending
            }
        }
    }

    fn is_end_stream(&self) -> bool {
        self.events.is_none() && self.first.is_none()
    }

    fn size_hint(&self) -> SizeHint {
        match (&self.events, &self.first) {
            (None, Some(b)) => SizeHint::with_exact(b.len() as u64),
            (None, None) => SizeHint::with_exact(0),
            _ => SizeHint::default(),
        }
    }
}
