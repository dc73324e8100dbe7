//! The generic machinery of a Kubernetes-style API server built on conneg, as
//! `k8s.io/apiserver` is to Kubernetes' own servers: what every resource kind needs, written
//! once and kind-agnostic. A server is its types plus one registration
//! (`use conneg_apiserver::prelude::*` brings what it needs):
//!
//! ```text
//! let state = ServerBuilder::new(openapi_info)
//!     .serve::<v1::Widget>()        // a versioned type whose internal type has a registry::Kind
//!     .admission(MyPlugin)          // an endpoints::admission::Plugin
//!     .build(storage, options);     // AppState
//! state.serve(listener, serve_args.serving(), shutdown).await?;  // bounded, bootstrapped
//! ```
//!
//! `examples/minimal-apiserver` is that in one file; `examples/sample-apiserver` (Kubernetes'
//! wardle.example.com) is a fuller one.
//!
//! The layers, each importing only from those below it (`docs/architecture.md` follows one
//! request through them):
//!
//! * [`server`]: the builder, [`AppState`](server::AppState), the router, discovery, OpenAPI
//!   documents, metrics, health, and [`Serving`](server::Serving) (connection bounds,
//!   timeouts, TLS, authentication) around them; [`config`]: the command-line options every
//!   server shares.
//! * [`core_v1`]: namespaces for a standalone server, registered as a user's kinds are.
//! * [`endpoints`]: the resource verbs over HTTP (create, get, list, watch, update, patch and
//!   apply, delete, deletecollection), watch-list, metadata-only and Table answers,
//!   server-side apply's field manager, and the [`admission`](endpoints::admission) chain.
//! * [`registry`]: the generic store of every kind, no HTTP in it: get, list and pages,
//!   create, one compare-and-swap update, delete with finalizers, the status subresource;
//!   the kind's strategy ([`Kind`](registry::Kind)).
//! * [`storage`]: revisioned key-value storage shaped after etcd's v3 API, with three backends
//!   (in memory, embedded on disk with redb, and etcd for more than one replica) behind one
//!   [`Storage`](storage::Storage) trait, and one conformance suite that all three pass.
//! * The object types and what they are checked with: [`resource`] (group versions,
//!   resources, the traits of a served versioned type), [`meta`] (`metav1`), [`definitions`]
//!   (the OpenAPI schemas a type publishes), [`declarative`] (rules declared once on the
//!   types, published in OpenAPI and enforced), [`validation`], [`names`], [`selector`],
//!   [`patch`], [`apply`] (field ownership), [`metadata_only`].
//! * Serving connections: [`serve`] and [`timeouts`] (cap, idle and header-read timeouts,
//!   request deadlines), [`tls`] and [`auth`] (who sent a request and whether they may).
#![deny(unsafe_code)]
// `conneg::Status` (~300 bytes) is the one error type, on paths that already allocate;
// boxing it everywhere would only add noise (conneg makes the same call).
#![allow(clippy::result_large_err)]

pub mod apply;
pub mod auth;
pub mod config;
pub mod core_v1;
pub mod declarative;
pub mod definitions;
pub mod endpoints;
pub mod meta;
pub mod metadata_only;
pub mod names;
pub mod patch;
pub mod prelude;
pub mod registry;
pub mod resource;
pub mod selector;
pub mod serve;
pub mod server;
pub mod storage;
#[cfg(feature = "testing")]
pub mod testing;
pub mod timeouts;
pub mod tls;
pub mod validation;
