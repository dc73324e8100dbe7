//! Custom resources: `apiextensions.k8s.io/v1` `CustomResourceDefinition`s served, validated
//! and stored like any kind, and the objects they define served through the same generic
//! registry and endpoints as compiled kinds, as unstructured objects ([`CustomResource`])
//! stored as deterministic CBOR (KEP-4222's own case).
//!
//! * [`definition`]: the definition as a kind (its strategy, validation, OpenAPI);
//! * [`controller`]: names, establishes and serves definitions while the server runs, and
//!   removes a deleted definition's objects;
//! * `served.rs` and `version.rs`: the endpoints of an established definition, each served
//!   version's facts (schemas that prune and default, the declaration that validates,
//!   printer columns); `intern.rs`: the names a served resource keeps for the process's life.

pub(crate) mod controller;
pub(crate) mod definition;
mod intern;
mod object;
mod served;
mod version;

pub(crate) use object::CustomResource;
