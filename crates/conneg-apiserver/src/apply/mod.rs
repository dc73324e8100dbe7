//! Server-side apply with field ownership, kind-agnostic: field paths and sets in Kubernetes'
//! `FieldsV1` form ([`fieldpath`]), a kind's list and map semantics ([`schema`]), objects seen
//! through a schema ([`typed`]), and `metadata.managedFields` with the apply and update
//! algorithms of structured-merge-diff ([`managed`]).
//!
//! Everything works on objects as `serde_json::Value`s in the request's version; the server
//! turns typed objects into JSON and back around it.

pub mod fieldpath;
pub mod managed;
pub mod schema;
pub mod typed;
