//! The HTTP server: how a request travels from the socket to storage and back.
//!
//! ```text
//! socket ─ conneg_apiserver::serve  connection cap; idle and header-read timeouts (main.rs)
//!   └─ hyper (axum::serve)
//!   └─ serve::track                marks a request in flight for its connection (main.rs)
//!   └─ timeouts::layer             request timeout (504), body-read deadline (main.rs)
//!   └─ auth::layer                 401 (authentication), 403 (authorization) (main.rs)
//!   └─ metrics::layer              counts every answer by verb, resource, code, media types
//!       └─ NegotiateLayer (conneg) 406/415/413 here; otherwise stores `Negotiated`
//!           └─ metrics::capture    copies `Negotiated` into the response for the metrics layer
//!               └─ axum Router     path → handler
//!                   ├─ handlers.rs  the resource verbs (create/get/list/update/patch/delete/...)
//!                   │    ├─ namespaces.rs  core v1 namespaces when standalone: lifecycle, deletion
//!                   │    ├─ lifecycle.rs delete options, finalizers, deletion on update
//!                   │    ├─ field_manager.rs  managedFields: apply ownership, conflicts, updates
//!                   │    ├─ list_options.rs  ListOptions rules; watch-list (sendInitialEvents)
//!                   │    ├─ transform.rs  `as=Table` (table.rs), `as=PartialObjectMetadata` (metadata_only.rs)
//!                   │    └─ storage (memory, embedded redb or etcd), via the api pipeline
//!                   ├─ watch.rs     ?watch=true streams
//!                   ├─ discovery.rs /api, /apis, /apis/wardle.example.com[/v], /version
//!                   ├─ openapi.rs   /openapi/v2, /openapi/v3[/apis/wardle.example.com/v]
//!                   └─ health.rs    /healthz, /livez, /readyz; metrics.rs /metrics
//! ```
//!
//! Each group of routes gets its own [`NegotiateLayer`], configured with what that group can
//! produce: the resource routes offer Table (JSON only), metadata only
//! (`PartialObjectMetadata[List]`, every codec) and the watch stream forms; discovery
//! offers the aggregated `APIGroupDiscoveryList`; OpenAPI is JSON only, so a CBOR-preferring
//! client (`Accept: application/cbor, */*`) gets JSON rather than 406.

pub mod auth;
pub mod discovery;
pub mod field_manager;
pub mod handlers;
pub mod health;
pub mod kinds;
pub mod lifecycle;
pub mod list_options;
pub mod metrics;
pub mod namespaces;
pub mod openapi;
pub mod table;
pub mod transform;
pub mod watch;

use std::sync::Arc;

use axum::Router;
use axum::routing::get;
use conneg::{Codec, Codecs, Conversion, FieldValidation, NegotiateLayer, Status, StatusReason};

use crate::config::OpenedStorage;
use crate::storage::Store;
use crate::storage::keys::Keys;
use conneg_apiserver::resource::{Catalog, GroupVersion};

use crate::api::{core_v1, v1alpha1, v1beta1};
use conneg_apiserver::storage::codec::StorageCodec;
use handlers::Endpoint;

/// Everything a handler needs; cheap to clone (the store is reference-counted).
#[derive(Clone, Debug)]
pub struct AppState {
    /// The store.
    pub store: Store,
    /// The write format.
    pub codec: StorageCodec,
    /// The key layout.
    pub keys: Keys,
    /// Request counters for `/metrics`.
    pub metrics: Arc<metrics::Metrics>,
    /// Whether CBOR is served (false with `--no-cbor`).
    pub cbor: bool,
    /// Shared watch fan-out, one hub per version and resource ([`watch`]).
    pub hubs: watch::Hubs,
    /// Permits for work run on the blocking pool (parsing and applying patches): one per
    /// CPU, so hostile bodies queue instead of taking every thread.
    pub blocking: Arc<tokio::sync::Semaphore>,
    /// What is served: wardle.example.com, and core `v1` namespaces when
    /// [`ServerOptions::standalone`].
    pub catalog: Arc<Catalog>,
    /// The endpoint of each served version and resource ([`endpoints`]).
    pub endpoints: Arc<[Endpoint]>,
}

/// Server options beyond storage.
#[derive(Debug, Clone, Copy)]
pub struct ServerOptions {
    /// Serve and accept CBOR (`--no-cbor` turns it off: JSON only, 415 for CBOR bodies).
    pub cbor: bool,
    /// Serve core `v1` namespaces and check that namespaced objects are created in an
    /// existing, active namespace ([`namespaces`]), for a server that is not behind an
    /// aggregator (`--standalone=false` turns it off). Call [`namespaces::bootstrap`] once
    /// before serving, to create the system namespaces.
    pub standalone: bool,
}

impl Default for ServerOptions {
    fn default() -> Self {
        Self {
            cbor: true,
            standalone: true,
        }
    }
}

/// Every served version and resource, one line each: wardle.example.com (v1beta1 preferred,
/// then v1alpha1) and, when `standalone`, core `v1` namespaces. A new kind is its types, its
/// [`Kind`](kinds::Kind) and a line here.
pub fn endpoints(standalone: bool) -> Vec<Endpoint> {
    let mut e = vec![
        Endpoint::of::<v1beta1::Flunder>(),
        Endpoint::of::<v1alpha1::Fischer>(),
        Endpoint::of::<v1alpha1::Flunder>(),
    ];
    if standalone {
        e.push(Endpoint::of::<core_v1::Namespace>());
    }
    e
}

impl AppState {
    /// State over an opened storage stack.
    pub fn new(storage: OpenedStorage, options: ServerOptions) -> Self {
        let endpoints = endpoints(options.standalone);
        Self {
            store: storage.store,
            codec: storage.codec,
            keys: storage.keys,
            metrics: Arc::new(metrics::Metrics::default()),
            cbor: options.cbor,
            catalog: Arc::new(handlers::catalog_of(&endpoints)),
            endpoints: endpoints.into(),
            hubs: watch::Hubs::default(),
            blocking: Arc::new(tokio::sync::Semaphore::new(
                std::thread::available_parallelism().map_or(2, std::num::NonZero::get),
            )),
        }
    }

    /// Whether `version` is served: wardle.example.com's always, core `v1` when standalone.
    pub fn serves(&self, version: GroupVersion) -> bool {
        self.catalog.serves(version)
    }

    /// The codecs responses may use: JSON, and CBOR unless `--no-cbor`.
    pub fn codecs(&self) -> Codecs {
        if self.cbor {
            Codecs::new()
        } else {
            Codecs::empty().with(Codec::Json)
        }
    }

    fn codec_list(&self) -> Vec<Codec> {
        self.codecs().as_slice().to_vec()
    }
}

/// `as=Table;g=meta.k8s.io;v=v1beta1`, still asked for by older kubectl.
pub const TABLE_V1BETA1: Conversion = Conversion::new("Table", "meta.k8s.io", "v1beta1");
/// `as=APIGroupDiscoveryList;g=apidiscovery.k8s.io;v=v2` (aggregated discovery).
pub const AGGREGATED_DISCOVERY: Conversion =
    Conversion::new("APIGroupDiscoveryList", "apidiscovery.k8s.io", "v2");

/// The whole application: every route group behind its negotiation layer, then metrics.
pub fn router(state: AppState) -> Router {
    let codecs = state.codecs();
    let patch_types: Vec<conneg::PatchType> = conneg::PatchType::all()
        .iter()
        .copied()
        .filter(|p| state.cbor || !p.is_cbor())
        .collect();

    // Resource routes: objects, lists, watches, patches. Table only in JSON, metadata-only
    // responses in every codec, as Kubernetes.
    let resources = conneg_apiserver::metadata_only::CONVERSIONS
        .into_iter()
        .fold(
            NegotiateLayer::new()
                .codecs(codecs.clone())
                .patch_types(patch_types)
                .streaming(true)
                .field_validation(FieldValidation::Warn)
                .conversion(Conversion::table(), [Codec::Json])
                .conversion(TABLE_V1BETA1, [Codec::Json]),
            |layer, conv| layer.conversion(conv, state.codec_list()),
        );
    let resources = handlers::routes()
        .layer(axum::middleware::from_fn(metrics::capture))
        .layer(resources);

    // Discovery: legacy and aggregated forms, in every served codec.
    let discovery = discovery::routes()
        .layer(axum::middleware::from_fn(metrics::capture))
        .layer(
            NegotiateLayer::new()
                .codecs(codecs)
                .conversion(AGGREGATED_DISCOVERY, state.codec_list()),
        );

    // OpenAPI exists only as JSON: `Accept: application/cbor, */*` gets JSON.
    let openapi = openapi::routes()
        .layer(axum::middleware::from_fn(metrics::capture))
        .layer(NegotiateLayer::new().codecs(Codecs::empty().with(Codec::Json)));

    let plain = health::routes().route("/metrics", get(metrics::serve));

    Router::new()
        .merge(resources)
        .merge(discovery)
        .merge(openapi)
        .merge(plain)
        .fallback(not_found)
        .layer(axum::middleware::from_fn_with_state(
            state.clone(),
            metrics::layer,
        ))
        .with_state(state)
}

async fn not_found() -> Status {
    Status::failure(
        http::StatusCode::NOT_FOUND,
        StatusReason::NotFound,
        "the server could not find the requested resource",
    )
}
