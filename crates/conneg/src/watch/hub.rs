//! [`WatchHub`]: fan-out of one event source to many watchers, each event encoded once per codec
//! and profile.

use std::collections::HashMap;
use std::fmt;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Context, Poll, Waker};

use bytes::Bytes;
use futures_core::Stream;
use serde::Serialize;

use super::event::WatchEvent;
use crate::codec::Codec;
use crate::profile::Profile;
use crate::status::Status;

/// How much a [`WatchHub`] may hold for one watcher that does not keep up.
///
/// A watcher's queue holds the encoded events the server has not yet handed to its connection.
/// When admitting the next event would take the queue over either limit, the hub drops the
/// queue and ends that watch (its body finishes cleanly; a Kubernetes client re-watches from
/// the last `resourceVersion` it saw). An empty queue always admits one event, however large, so
/// a single event over `max_bytes` does not end every watch. Beyond the queue, a connection
/// holds at most what hyper buffers for writing (about 400 KiB by default) and the socket's
/// kernel buffers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WatchLimits {
    /// Encoded bytes queued for one watcher (default 4 MiB).
    pub max_bytes: usize,
    /// Events queued for one watcher (default 1024).
    pub max_events: usize,
}

impl Default for WatchLimits {
    fn default() -> Self {
        WatchLimits {
            max_bytes: 4 << 20,
            max_events: 1024,
        }
    }
}

/// A snapshot of a hub's counters ([`WatchHub::stats`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct HubStats {
    /// Watchers subscribed now.
    pub watchers: usize,
    /// Encoded bytes queued for all watchers now. Watchers of one codec share the bytes of an
    /// event, so this counts each shared buffer once per watcher holding it (an upper bound on
    /// memory).
    pub queued_bytes: usize,
    /// Events queued for all watchers now.
    pub queued_events: usize,
    /// The most bytes queued for any one watcher now.
    pub max_watcher_bytes: usize,
    /// Events published since the hub was made.
    pub published: u64,
    /// Encodings made since the hub was made: at most one per event and (codec, profile) in
    /// use.
    pub encoded: u64,
    /// Watches ended because the watcher fell behind by more than the [`WatchLimits`].
    pub overflowed: u64,
}

type Filter<T> = Box<dyn Fn(&WatchEvent<T>) -> bool + Send + Sync>;

/// What a watcher receives: a codec's stream form, as a profile writes it. The two profiles
/// write CBOR differently, so each pair is encoded on its own.
type Form = (Codec, Profile);

/// Why a watcher's stream ended, if it did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WatchEnd {
    /// The watcher fell behind by more than the hub's [`WatchLimits`].
    Overflowed,
    /// The hub was closed or dropped.
    Closed,
}

struct Slot<T> {
    /// The index of the watcher's form in [`State::forms`].
    form: usize,
    queue: std::collections::VecDeque<Bytes>,
    bytes: usize,
    end: Option<WatchEnd>,
    waker: Option<Waker>,
    filter: Option<Filter<T>>,
}

struct State<T> {
    slots: HashMap<u64, Slot<T>>,
    next_id: u64,
    /// The forms watchers have asked for, with how many watchers use each; indices are stable.
    forms: Vec<(Form, usize)>,
    closed: bool,
    queued_bytes: usize,
    queued_events: usize,
}

struct Shared<T> {
    state: Mutex<State<T>>,
    /// Serialises publishers, so every watcher sees events in the order `publish` was entered.
    publish: Mutex<()>,
    limits: WatchLimits,
    published: AtomicU64,
    encoded: AtomicU64,
    overflowed: AtomicU64,
}

impl<T> Shared<T> {
    fn lock(&self) -> MutexGuard<'_, State<T>> {
        // A panic while holding the lock leaves consistent counters (no partial updates span an
        // unwind point), so a poisoned lock is still usable.
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Ends every watch: queued events are still delivered, then the streams end.
    fn close(&self) {
        let wakers: Vec<Waker> = {
            let mut state = self.lock();
            state.closed = true;
            state
                .slots
                .values_mut()
                .filter_map(|slot| {
                    slot.end.get_or_insert(WatchEnd::Closed);
                    slot.waker.take()
                })
                .collect()
        };
        wakers.into_iter().for_each(Waker::wake);
    }
}

/// Closes the hub when the last [`WatchHub`] handle goes.
struct Handle<T> {
    shared: Arc<Shared<T>>,
}

impl<T> Drop for Handle<T> {
    fn drop(&mut self) {
        self.shared.close();
    }
}

/// Fans events out to watchers: each event is encoded once per codec and [`Profile`] in use
/// (lazily: a form no watcher uses is never encoded) and every watcher of that form gets a
/// cheap clone of the same [`Bytes`].
///
/// Feed it from one task (for example the storage layer's change feed); subscribe one
/// [`Watcher`] per watch request and hand it to [`WatchResponse`](super::WatchResponse). Each
/// watcher has a bounded queue ([`WatchLimits`]); a watcher that falls further behind is ended,
/// and a watcher that is dropped (its client disconnected, hyper dropped the body) releases its
/// queue and leaves the hub at once. Dropping every clone of the hub ends all watches.
///
/// ```
/// use conneg::Codec;
/// use conneg::watch::{WatchEvent, WatchHub};
///
/// let hub = WatchHub::new();
/// let mut cbor = hub.subscribe(&Codec::Cbor).unwrap();
/// let json = hub.subscribe(&Codec::Json).unwrap();
/// hub.publish(WatchEvent::Added(serde_json::json!({"name": "a"})));
/// assert_eq!(hub.stats().encoded, 2); // once per codec, not per watcher
/// assert_eq!(json.queued_bytes(), r#"{"type":"ADDED","object":{"name":"a"}}"#.len() + 1);
/// drop(json);
/// assert_eq!(hub.watcher_count(), 1);
/// # let _ = &mut cbor;
/// ```
pub struct WatchHub<T> {
    handle: Arc<Handle<T>>,
}

impl<T> Clone for WatchHub<T> {
    fn clone(&self) -> Self {
        WatchHub {
            handle: Arc::clone(&self.handle),
        }
    }
}

impl<T> fmt::Debug for WatchHub<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("WatchHub")
            .field("limits", &self.handle.shared.limits)
            .field("stats", &self.stats())
            .finish()
    }
}

impl<T> Default for WatchHub<T> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T> WatchHub<T> {
    /// A hub with the default [`WatchLimits`].
    pub fn new() -> Self {
        Self::with_limits(WatchLimits::default())
    }

    /// A hub with the given per-watcher limits.
    pub fn with_limits(limits: WatchLimits) -> Self {
        WatchHub {
            handle: Arc::new(Handle {
                shared: Arc::new(Shared {
                    state: Mutex::new(State {
                        slots: HashMap::new(),
                        next_id: 0,
                        forms: Vec::new(),
                        closed: false,
                        queued_bytes: 0,
                        queued_events: 0,
                    }),
                    publish: Mutex::new(()),
                    limits,
                    published: AtomicU64::new(0),
                    encoded: AtomicU64::new(0),
                    overflowed: AtomicU64::new(0),
                }),
            }),
        }
    }

    fn shared(&self) -> &Arc<Shared<T>> {
        &self.handle.shared
    }

    /// The per-watcher limits.
    pub fn limits(&self) -> WatchLimits {
        self.shared().limits
    }

    /// Subscribes a watcher that receives every later event in `codec`'s stream form, as
    /// [`Profile::Kubernetes`] writes it. Fails with 406 if the codec has no stream form.
    pub fn subscribe(&self, codec: &Codec) -> Result<Watcher<T>, Status> {
        self.subscribe_inner(codec, Profile::Kubernetes, None)
    }

    /// Like [`subscribe`](Self::subscribe), in `profile`'s form (the request's
    /// [`Negotiated::profile`](crate::Negotiated::profile)).
    pub fn subscribe_as(&self, codec: &Codec, profile: Profile) -> Result<Watcher<T>, Status> {
        self.subscribe_inner(codec, profile, None)
    }

    /// Like [`subscribe`](Self::subscribe), for only the events `filter` accepts (a label or
    /// field selector, a namespace). The filter runs on the publisher's thread under the hub's
    /// lock: keep it cheap.
    pub fn subscribe_filtered(
        &self,
        codec: &Codec,
        filter: impl Fn(&WatchEvent<T>) -> bool + Send + Sync + 'static,
    ) -> Result<Watcher<T>, Status> {
        self.subscribe_inner(codec, Profile::Kubernetes, Some(Box::new(filter)))
    }

    /// Like [`subscribe_filtered`](Self::subscribe_filtered), in `profile`'s form.
    pub fn subscribe_filtered_as(
        &self,
        codec: &Codec,
        profile: Profile,
        filter: impl Fn(&WatchEvent<T>) -> bool + Send + Sync + 'static,
    ) -> Result<Watcher<T>, Status> {
        self.subscribe_inner(codec, profile, Some(Box::new(filter)))
    }

    fn subscribe_inner(
        &self,
        codec: &Codec,
        profile: Profile,
        filter: Option<Filter<T>>,
    ) -> Result<Watcher<T>, Status> {
        if codec.stream_media_type().is_none() {
            return Err(Status::not_acceptable(
                "application/json, application/cbor-seq",
            ));
        }
        let mut state = self.shared().lock();
        let same = |((c, p), _): &(Form, usize)| c.same_as(codec) && *p == profile;
        let index = match state.forms.iter().position(same) {
            Some(i) => i,
            None => {
                state.forms.push(((codec.clone(), profile), 0));
                state.forms.len() - 1
            }
        };
        state.forms[index].1 += 1;
        let id = state.next_id;
        state.next_id += 1;
        let end = state.closed.then_some(WatchEnd::Closed);
        state.slots.insert(
            id,
            Slot {
                form: index,
                queue: Default::default(),
                bytes: 0,
                end,
                waker: None,
                filter,
            },
        );
        Ok(Watcher {
            shared: Arc::clone(self.shared()),
            id,
            codec: codec.clone(),
            profile,
        })
    }

    /// Watchers subscribed now.
    pub fn watcher_count(&self) -> usize {
        self.shared().lock().slots.len()
    }

    /// Encoded bytes queued for all watchers now (see [`HubStats::queued_bytes`]).
    pub fn queued_bytes(&self) -> usize {
        self.shared().lock().queued_bytes
    }

    /// A snapshot of the counters.
    pub fn stats(&self) -> HubStats {
        let shared = self.shared();
        let state = shared.lock();
        HubStats {
            watchers: state.slots.len(),
            queued_bytes: state.queued_bytes,
            queued_events: state.queued_events,
            max_watcher_bytes: state.slots.values().map(|s| s.bytes).max().unwrap_or(0),
            published: shared.published.load(Ordering::Relaxed),
            encoded: shared.encoded.load(Ordering::Relaxed),
            overflowed: shared.overflowed.load(Ordering::Relaxed),
        }
    }

    /// Ends every watch: each body delivers what is queued for it and finishes cleanly.
    /// Later subscriptions end at once. Dropping the last hub handle does the same.
    pub fn close(&self) {
        self.shared().close();
    }
}

impl<T: Serialize> WatchHub<T> {
    /// Publishes one event to every current watcher whose filter accepts it.
    ///
    /// The event is encoded once for each codec and profile some matching watcher uses,
    /// outside the hub's lock; then each watcher's queue gets a clone of the bytes. An event that fails to encode
    /// (a server bug) ends the watches that would have received it, with an `ERROR` event
    /// carrying a 500 `Status`. Returns how many watchers received it.
    pub fn publish(&self, event: WatchEvent<T>) -> usize {
        let shared = self.shared();
        let _order = shared.publish.lock().unwrap_or_else(|e| e.into_inner());
        shared.published.fetch_add(1, Ordering::Relaxed);

        // 1. Which watchers want it, and in which forms.
        let (targets, forms): (Vec<(u64, usize)>, Vec<Form>) = {
            let state = shared.lock();
            let targets: Vec<(u64, usize)> = state
                .slots
                .iter()
                .filter(|(_, s)| s.end.is_none() && s.filter.as_ref().is_none_or(|f| f(&event)))
                .map(|(id, s)| (*id, s.form))
                .collect();
            (
                targets,
                state.forms.iter().map(|(form, _)| form.clone()).collect(),
            )
        };
        if targets.is_empty() {
            return 0;
        }

        // 2. Encode once per form in use, without the lock.
        let mut encoded: Vec<Option<Result<Bytes, Bytes>>> = vec![None; forms.len()];
        for &(_, index) in &targets {
            if encoded[index].is_none() {
                shared.encoded.fetch_add(1, Ordering::Relaxed);
                let (codec, profile) = &forms[index];
                encoded[index] = Some(event.to_bytes_or_error(codec, *profile));
            }
        }

        // 3. Queue, ending watchers that fell too far behind.
        let limits = shared.limits;
        let mut wakers = Vec::with_capacity(targets.len());
        let mut delivered = 0;
        {
            let mut guard = shared.lock();
            let state = &mut *guard;
            for (id, index) in targets {
                let Some(slot) = state.slots.get_mut(&id) else {
                    continue; // dropped meanwhile
                };
                if slot.end.is_some() {
                    continue;
                }
                let (bytes, fatal) = match encoded[index].as_ref().expect("encoded above") {
                    Ok(b) => (b.clone(), false),
                    Err(b) => (b.clone(), true),
                };
                let over = !slot.queue.is_empty()
                    && (slot.queue.len() >= limits.max_events
                        || slot.bytes + bytes.len() > limits.max_bytes);
                if over {
                    state.queued_bytes -= slot.bytes;
                    state.queued_events -= slot.queue.len();
                    slot.queue = Default::default();
                    slot.bytes = 0;
                    slot.end = Some(WatchEnd::Overflowed);
                    shared.overflowed.fetch_add(1, Ordering::Relaxed);
                } else {
                    slot.bytes += bytes.len();
                    state.queued_bytes += bytes.len();
                    state.queued_events += 1;
                    slot.queue.push_back(bytes);
                    delivered += 1;
                    if fatal {
                        slot.end = Some(WatchEnd::Closed);
                    }
                }
                wakers.extend(slot.waker.take());
            }
        }
        wakers.into_iter().for_each(Waker::wake);
        delivered
    }
}

/// One subscription to a [`WatchHub`]: a [`Stream`] of encoded events in its codec's stream
/// form and its profile, ready to be written to a response body. Dropping it unsubscribes.
pub struct Watcher<T> {
    shared: Arc<Shared<T>>,
    id: u64,
    codec: Codec,
    profile: Profile,
}

impl<T> fmt::Debug for Watcher<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Watcher")
            .field("id", &self.id)
            .field("codec", &self.codec)
            .field("profile", &self.profile)
            .finish_non_exhaustive()
    }
}

impl<T> Watcher<T> {
    /// The codec this watcher receives events in.
    pub fn codec(&self) -> &Codec {
        &self.codec
    }

    /// The profile this watcher's events are written in.
    pub fn profile(&self) -> Profile {
        self.profile
    }

    /// Encoded bytes queued for this watcher now.
    pub fn queued_bytes(&self) -> usize {
        self.shared
            .lock()
            .slots
            .get(&self.id)
            .map_or(0, |s| s.bytes)
    }

    /// Events queued for this watcher now.
    pub fn queued_events(&self) -> usize {
        self.shared
            .lock()
            .slots
            .get(&self.id)
            .map_or(0, |s| s.queue.len())
    }

    /// Why the hub ended this watch, if it did (queued events are still delivered after
    /// [`WatchEnd::Closed`]; an overflow drops them).
    pub fn end(&self) -> Option<WatchEnd> {
        self.shared.lock().slots.get(&self.id).and_then(|s| s.end)
    }
}

impl<T> Stream for Watcher<T> {
    type Item = Bytes;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Bytes>> {
        let mut guard = self.shared.lock();
        let state = &mut *guard;
        let Some(slot) = state.slots.get_mut(&self.id) else {
            return Poll::Ready(None);
        };
        if let Some(bytes) = slot.queue.pop_front() {
            slot.bytes -= bytes.len();
            state.queued_bytes -= bytes.len();
            state.queued_events -= 1;
            return Poll::Ready(Some(bytes));
        }
        if slot.end.is_some() {
            return Poll::Ready(None);
        }
        match &mut slot.waker {
            Some(w) if w.will_wake(cx.waker()) => {}
            other => *other = Some(cx.waker().clone()),
        }
        Poll::Pending
    }
}

impl<T> Drop for Watcher<T> {
    fn drop(&mut self) {
        let mut state = self.shared.lock();
        if let Some(slot) = state.slots.remove(&self.id) {
            state.queued_bytes -= slot.bytes;
            state.queued_events -= slot.queue.len();
            state.forms[slot.form].1 -= 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::task::Context;

    fn poll(w: &mut Watcher<u32>) -> Poll<Option<Bytes>> {
        let mut cx = Context::from_waker(Waker::noop());
        Pin::new(w).poll_next(&mut cx)
    }

    #[test]
    fn filters_choose_watchers_and_unused_codecs_are_never_encoded() {
        let hub = WatchHub::<u32>::new();
        let mut even = hub
            .subscribe_filtered(&Codec::Json, |e| e.object().is_some_and(|n| n % 2 == 0))
            .unwrap();
        let mut all = hub.subscribe(&Codec::Json).unwrap();
        assert_eq!(hub.publish(WatchEvent::Added(1)), 1);
        assert_eq!(hub.publish(WatchEvent::Added(2)), 2);
        assert_eq!(hub.stats().encoded, 2, "JSON only, once per event");
        assert_eq!(
            poll(&mut even),
            Poll::Ready(Some(Bytes::from_static(
                b"{\"type\":\"ADDED\",\"object\":2}\n"
            )))
        );
        assert!(poll(&mut even).is_pending());
        assert!(matches!(poll(&mut all), Poll::Ready(Some(_))));
        assert!(matches!(poll(&mut all), Poll::Ready(Some(_))));

        drop((even, all));
        assert_eq!(hub.publish(WatchEvent::Added(4)), 0);
        assert_eq!(hub.stats().encoded, 2, "nobody listening: nothing encoded");
    }

    #[test]
    fn each_profile_gets_its_own_cbor_and_kubernetes_keeps_its_bytes() {
        let hub = WatchHub::<u32>::new();
        let mut standard = hub.subscribe_as(&Codec::Cbor, Profile::Standard).unwrap();
        let mut standard_too = hub.subscribe_as(&Codec::Cbor, Profile::Standard).unwrap();
        let mut kubernetes = hub.subscribe(&Codec::Cbor).unwrap();
        hub.publish(WatchEvent::Added(7));
        assert_eq!(hub.stats().encoded, 2, "once per profile, not per watcher");
        let text = Bytes::from_static(b"\xa2\x64type\x65ADDED\x66object\x07");
        assert_eq!(poll(&mut standard), Poll::Ready(Some(text.clone())));
        assert_eq!(poll(&mut standard_too), Poll::Ready(Some(text)));
        let go = WatchEvent::Added(7u32).to_bytes(&Codec::Cbor).unwrap();
        assert_eq!(
            &go[..],
            b"\xd9\xd9\xf7\xa2\x44type\x45ADDED\x46object\xd9\xd9\xf7\x07"
        );
        assert_eq!(poll(&mut kubernetes), Poll::Ready(Some(go)));
    }

    #[test]
    fn a_full_queue_ends_the_watch_and_frees_it() {
        let hub = WatchHub::<u32>::with_limits(WatchLimits {
            max_bytes: usize::MAX,
            max_events: 3,
        });
        let mut slow = hub.subscribe(&Codec::Cbor).unwrap();
        let mut fast = hub.subscribe(&Codec::Cbor).unwrap();
        for i in 0..5 {
            hub.publish(WatchEvent::Modified(i));
            assert!(matches!(poll(&mut fast), Poll::Ready(Some(_))));
            assert!(slow.queued_events() <= 3);
        }
        let stats = hub.stats();
        assert_eq!(stats.overflowed, 1);
        assert_eq!(slow.end(), Some(WatchEnd::Overflowed));
        assert_eq!(slow.queued_bytes(), 0, "the queue was dropped");
        assert_eq!(poll(&mut slow), Poll::Ready(None));
        assert!(poll(&mut fast).is_pending(), "the fast watcher goes on");
        assert_eq!(fast.end(), None);
    }

    #[test]
    fn the_byte_bound_admits_one_event_into_an_empty_queue() {
        let hub = WatchHub::<String>::with_limits(WatchLimits {
            max_bytes: 10,
            max_events: 100,
        });
        let mut w = hub.subscribe(&Codec::Json).unwrap();
        hub.publish(WatchEvent::Added("a long object, over the bound".into()));
        assert_eq!(w.end(), None);
        assert!(w.queued_bytes() > 10);
        hub.publish(WatchEvent::Added("x".into()));
        assert_eq!(w.end(), Some(WatchEnd::Overflowed));
        let mut cx = Context::from_waker(Waker::noop());
        assert_eq!(Pin::new(&mut w).poll_next(&mut cx), Poll::Ready(None));
    }

    #[test]
    fn dropping_the_hub_ends_watches_after_their_queues() {
        let hub = WatchHub::<u32>::new();
        let mut w = hub.subscribe(&Codec::Json).unwrap();
        hub.publish(WatchEvent::Deleted(7));
        drop(hub);
        assert!(matches!(poll(&mut w), Poll::Ready(Some(_))));
        assert_eq!(poll(&mut w), Poll::Ready(None));
        assert_eq!(w.end(), Some(WatchEnd::Closed));
    }
}
