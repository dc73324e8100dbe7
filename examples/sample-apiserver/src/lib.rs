//! The wardle.example.com API server (Kubernetes' sample-apiserver) in Rust: the wardle types
//! and their rules, registered with the generic server of [`conneg_apiserver`] (registry,
//! discovery, OpenAPI, watch, storage, serving).
//!
//! - [`api`]: wardle types per version with their declared rules, defaulting, conversion,
//!   admission.
//! - [`strategy`]: what the generic registry needs to know of each kind (its [`Strategy`]).
//! - [`openapi`]: how the published documents name the wardle types.
//! - [`server`]: the one registration: which versions are served, in which order.
//!
//! [`Strategy`]: conneg_apiserver::registry::Strategy

pub mod api;
pub mod openapi;
pub mod strategy;

use conneg_apiserver::server::ServerBuilder;

use api::admission::BanFlunder;
use api::{v1alpha1, v1beta1};

/// The wardle server: Flunders in v1beta1 (preferred) and v1alpha1, Fischers in v1alpha1,
/// BanFlunder admission. Build its state with [`ServerBuilder::build`] (which adds core `v1`
/// namespaces when standalone) and serve [`conneg_apiserver::server::router`].
pub fn server() -> ServerBuilder {
    ServerBuilder::new(openapi::INFO)
        .serve::<v1beta1::Flunder>()
        .serve::<v1alpha1::Fischer>()
        .serve::<v1alpha1::Flunder>()
        .admission(BanFlunder)
}
