//! The wardle.example.com API server (Kubernetes' sample-apiserver) in Rust: domain model,
//! selectors, errors, storage, and the HTTP server ([`server`]) on conneg.
//!
//! - [`meta`]: the `metav1` types (ObjectMeta, ListMeta, Time, ...).
//! - [`api`]: wardle types per version, defaulting, conversion, validation, admission.
//! - [`apply`]: server-side apply with field ownership (`managedFields`), kind-agnostic.
//! - [`selector`]: label and field selectors.
//! - [`storage`]: the revisioned key-value store (memory, embedded redb) and the codec.
//! - [`config`]: the storage command-line flags and how they open a store.
//! - [`server`]: the HTTP layer (router, handlers, discovery, OpenAPI, Table, watch, metrics).

// `conneg::Status` (~300 bytes) is the one error type, on paths that already allocate;
// boxing it everywhere would only add noise (conneg makes the same call).
#![allow(clippy::result_large_err)]

pub mod api;
pub mod apply;
pub mod config;
pub mod meta;
pub mod names;
pub mod selector;
pub mod server;
pub mod storage;
