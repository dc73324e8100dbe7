//! Watch: streams of [`WatchEvent`]s as CBOR Sequences (RFC 8742) or JSON streams, on the
//! server ([`WatchResponse`], [`WatchHub`]); the client side, `WatchStream`, is in
//! `conneg::client` (feature `client`).
//!
//! # Wire format
//!
//! * **CBOR, [`Profile::Kubernetes`](crate::Profile::Kubernetes)** (as Kubernetes writes it):
//!   `Content-Type: application/cbor-seq`. Each event is one self-described item,
//!   `d9d9f7 a2 "type" "ADDED" "object" d9d9f7 {...}`, with no other framing; the object keeps
//!   its own `d9d9f7` prefix, as Kubernetes embeds it. Kubernetes answers a watch that asks for
//!   `application/cbor` (what client-go sends) this way. `application/cbor-seq` in `Accept` is
//!   honoured too on any watch (`?watch=true`) and on a
//!   [`streaming`](crate::NegotiateLayer::streaming) route — a deliberate improvement:
//!   Kubernetes answers it with 406.
//! * **CBOR, [`Profile::Standard`](crate::Profile::Standard)**: the same `Content-Type` and
//!   framing (a CBOR Sequence), each event the plain map `{"type": "ADDED", "object": {...}}`
//!   with text strings and no tag anywhere, which any CBOR decoder reads item by item
//!   (Python's `cbor2.CBORDecoder(stream).decode()` in a loop).
//!   [`WatchResponse::new`] takes the profile from the [`Negotiated`](crate::Negotiated)
//!   request; [`WatchResponse::with_codec`], [`WatchHub::subscribe`], [`WatchEvent::encode`]
//!   and [`encode_event`] write the Kubernetes form unless given a profile
//!   ([`WatchResponse::profile`], [`WatchHub::subscribe_as`], [`WatchEvent::encode_as`],
//!   [`encode_event_as`]). An `ERROR` event carries a `Status` in both profiles.
//! * **JSON** (both profiles): `Content-Type: application/json` (Kubernetes' choice, also for a client that
//!   asked for `application/json;stream=watch`), one compact event per line.
//!
//! Each event is written as its own body frame the moment it exists, so hyper flushes it
//! straight away. A slow client applies backpressure: the body polls its source only when the
//! connection can take more, and a [`WatchHub`] keeps a bounded queue per watcher
//! ([`WatchLimits`]) and ends the watch of a client that falls further behind. A client that
//! disconnects drops the body, which drops its subscription.
//!
//! # Server: a hub fed by storage
//!
//! ```
//! # #[cfg(feature = "axum")] {
//! use axum::{Router, extract::{Query, State}, routing::get};
//! use conneg::{NegotiateLayer, Negotiated};
//! use conneg::watch::{WatchBody, WatchEvent, WatchHub, WatchResponse};
//! use serde::{Deserialize, Serialize};
//!
//! #[derive(Clone, Serialize, Deserialize)]
//! struct Item { name: String }
//!
//! #[derive(Deserialize)]
//! struct Params { #[serde(rename = "timeoutSeconds")] timeout_seconds: Option<u64> }
//!
//! async fn watch(
//!     State(hub): State<WatchHub<Item>>,
//!     negotiated: Negotiated,
//!     Query(p): Query<Params>,
//! ) -> http::Response<WatchBody> {
//!     WatchResponse::new(&negotiated).timeout_seconds(p.timeout_seconds).subscribe(&hub)
//! }
//!
//! let hub = WatchHub::<Item>::new();
//! // The storage layer publishes every change once; each watcher's codec encodes it once.
//! hub.publish(WatchEvent::Added(Item { name: "a".into() }));
//!
//! let app: Router = Router::new()
//!     .route("/items", get(watch))
//!     .with_state(hub)
//!     .layer(NegotiateLayer::new().streaming(true));
//! # let _ = app;
//! # }
//! ```
//!
//! A watch that starts from the current state (Kubernetes' watch without `resourceVersion`)
//! uses [`WatchResponse::subscribe_with_initial`]: snapshot and subscribe under the lock your
//! writes publish under, and the snapshot's `ADDED` events go out before the live ones.
//!
//! # Client
//!
//! `conneg::client::WatchStream::from_response` (also `conneg::WatchStream`) turns a response
//! (`http::Response<B>` for any `http_body::Body`) into a `Stream` of
//! `Result<WatchEvent<T>, WatchError>`, picking the framing from `Content-Type`;
//! `conneg::client::WatchDecoder` does the same over bytes you push.

mod body;
pub(crate) mod event;
mod hub;

pub use body::{WatchBody, WatchResponse, watch_content_type};
pub use event::{EventType, WatchEvent, encode_event, encode_event_as, encode_event_document};
pub use hub::{HubStats, WatchEnd, WatchHub, WatchLimits, Watcher};
