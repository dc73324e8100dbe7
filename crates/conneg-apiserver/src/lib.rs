//! The generic machinery of a Kubernetes-style API server built on conneg, as
//! `k8s.io/apiserver` is to Kubernetes' own servers: what every resource kind needs, written
//! once and kind-agnostic. A server is its types plus one registration:
//!
//! ```text
//! ServerBuilder::new(openapi_info)
//!     .serve::<v1::Widget>()        // a versioned type whose internal type is a server::kinds::Kind
//!     .admission(MyPlugin)          // server::admission::Plugin
//!     .build(storage, options)      // AppState: serve server::router(state)
//! ```
//!
//! `examples/minimal-apiserver` is that in one file; `examples/sample-apiserver` (Kubernetes'
//! wardle.example.com) is a fuller one.
//!
//! * [`server`]: the registry verbs (create, get, list, watch, update, patch and apply,
//!   delete, deletecollection), watch-list, metadata-only and Table answers, discovery,
//!   OpenAPI, admission, metrics and health, for every registered kind; [`core_v1`]
//!   namespaces for a standalone server.
//! * [`config`]: the command-line options every server shares (storage, serving, TLS,
//!   authentication and authorization).
//! * [`resource`]: group versions, resources, the [`Catalog`](resource::Catalog) of what a
//!   server serves, and the traits of a served versioned type.
//! * [`meta`]: the `metav1` types every object carries (ObjectMeta, ListMeta, Time,
//!   managedFields), [`names`] for names and `generateName`, [`selector`] for label and field
//!   selectors.
//! * [`validation`]: field errors as apimachinery writes them and the registry's checks of
//!   object metadata; [`declarative`]: rules declared once on the versioned types, published
//!   in OpenAPI and enforced (value validations, CEL under cost limits, ratcheting).
//! * [`patch`]: PATCH documents of every patch type, bounded; [`apply`]: server-side apply
//!   with field ownership (`managedFields`).
//! * [`metadata_only`]: `as=PartialObjectMetadata[List]` answers.
//! * [`serve`] and [`timeouts`]: connections (cap, idle and header-read timeouts, TLS
//!   handshakes) and request deadlines.
//! * [`storage`]: revisioned key-value storage shaped after etcd's v3 API, with three backends
//!   (in memory, embedded on disk with redb, and etcd for more than one replica) behind one
//!   [`Storage`](storage::Storage) trait, and one conformance suite that all three pass.
//! * [`tls`]: secure serving, the rustls configuration Kubernetes' serving flags describe.
//! * [`auth`]: who sent a request and whether they may: client certificates, the front
//!   proxy, tokens (static and TokenReview), anonymous; AlwaysAllow, AlwaysDeny, ABAC,
//!   SubjectAccessReview; impersonation.
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
