//! The wardle.example.com API server (Kubernetes' sample-apiserver) in Rust, on conneg and
//! the generic machinery of [`conneg_apiserver`] (metadata, selectors, validation, patch and
//! apply, storage, serving).
//!
//! - [`api`]: wardle types per version, defaulting, conversion, validation, admission.
//! - [`storage`]: where objects live (keys) and the Kubernetes error for a storage failure.
//! - [`config`]: the storage command-line flags and how they open a store.
//! - [`server`]: the HTTP layer (router, handlers, discovery, OpenAPI, Table, watch, metrics).

// `conneg::Status` (~300 bytes) is the one error type, on paths that already allocate;
// boxing it everywhere would only add noise (conneg makes the same call).
#![allow(clippy::result_large_err)]

pub mod api;
pub mod config;
pub mod server;
pub mod storage;
