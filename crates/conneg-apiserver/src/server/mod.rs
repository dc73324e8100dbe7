//! The HTTP server of the registered kinds: how a request travels from the socket to storage
//! and back. A server registers its kinds with a [`ServerBuilder`], builds its [`AppState`]
//! and serves [`router`].
//!
//! ```text
//! socket ─ crate::serve            connection cap; idle and header-read timeouts (the binary)
//!   └─ hyper (axum::serve)
//!   └─ serve::track                marks a request in flight for its connection (the binary)
//!   └─ timeouts::layer             request timeout (504), body-read deadline (the binary)
//!   └─ auth::layer                 401 (authentication), 403 (authorization) (the binary)
//!   └─ metrics::layer              counts every answer by verb, resource, code, media types
//!       └─ NegotiateLayer (conneg) 406/415/413 here; otherwise stores `Negotiated`
//!           └─ metrics::capture    copies `Negotiated` into the response for the metrics layer
//!               └─ axum Router     path → handler
//!                   ├─ handlers.rs  the resource verbs (create/get/list/update/patch/delete/...)
//!                   │    ├─ admission.rs  the admission plugins, on every write
//!                   │    ├─ namespaces.rs  core v1 namespaces when standalone: lifecycle, deletion
//!                   │    ├─ lifecycle.rs delete options, finalizers, deletion on update
//!                   │    ├─ field_manager.rs  managedFields: apply ownership, conflicts, updates
//!                   │    ├─ list_options.rs  ListOptions rules; watch-list (sendInitialEvents)
//!                   │    ├─ transform.rs  `as=Table` (table.rs), `as=PartialObjectMetadata` (metadata_only.rs)
//!                   │    └─ storage (memory, embedded redb or etcd), through each kind's
//!                   │       conversion to its storage version (kinds.rs)
//!                   ├─ watch.rs     ?watch=true streams
//!                   ├─ discovery.rs /api, /apis, /apis/{group}[/{version}], /version
//!                   ├─ openapi.rs   /openapi/v2, /openapi/v3[/apis/{group}/{version}]
//!                   └─ health.rs    /healthz, /livez, /readyz; metrics.rs /metrics
//! ```
//!
//! Each group of routes gets its own [`NegotiateLayer`], configured with what that group can
//! produce: the resource routes offer Table (JSON only), metadata only
//! (`PartialObjectMetadata[List]`, every codec) and the watch stream forms; discovery
//! offers the aggregated `APIGroupDiscoveryList`; OpenAPI is JSON only, so a CBOR-preferring
//! client (`Accept: application/cbor, */*`) gets JSON rather than 406.

pub mod admission;
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
use crate::core_v1::Namespace;
use crate::resource::{Catalog, GroupVersion};
use crate::storage::Store;
use crate::storage::codec::StorageCodec;
use crate::storage::keys::Keys;
use handlers::{Endpoint, Served};
use openapi::{Documents, OpenApiInfo, OpenApiSchema, Validators};

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
    /// What is served: the registered kinds, and core `v1` namespaces when
    /// [`ServerOptions::standalone`].
    pub catalog: Arc<Catalog>,
    /// The endpoint of each served version and resource.
    pub endpoints: Arc<[Endpoint]>,
    /// The admission chain, in order.
    pub admission: Arc<[Arc<dyn admission::Plugin>]>,
    /// The OpenAPI documents, built on first use.
    pub openapi: Arc<Documents>,
    /// The declarative validation of each served kind, compiled from those documents' schemas.
    pub validators: Arc<Validators>,
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

/// What a server serves: its kinds (in the order discovery lists them, the preferred version
/// of a group first), its admission plugins and how its OpenAPI names it.
///
/// ```no_run
/// # async fn demo(storage: conneg_apiserver::config::OpenedStorage) {
/// use conneg_apiserver::core_v1::Namespace;
/// use conneg_apiserver::server::{ServerBuilder, ServerOptions, openapi::OpenApiInfo};
///
/// let info = OpenApiInfo { title: "Example", package: "io.example.pkg.apis.example" };
/// let state = ServerBuilder::new(info)
///     .serve::<Namespace>() // and each of your own versioned types
///     .build(storage, ServerOptions { standalone: false, ..Default::default() });
/// let app = conneg_apiserver::server::router(state);
/// # drop(app);
/// # }
/// ```
#[derive(Debug)]
pub struct ServerBuilder {
    endpoints: Vec<Endpoint>,
    admission: Vec<Arc<dyn admission::Plugin>>,
    openapi: OpenApiInfo,
}

impl ServerBuilder {
    /// A server serving nothing yet, whose OpenAPI documents are described by `openapi`.
    pub fn new(openapi: OpenApiInfo) -> Self {
        Self {
            endpoints: Vec::new(),
            admission: Vec::new(),
            openapi,
        }
    }

    /// Serves the versioned type `T` (every verb, at its version and resource).
    #[must_use]
    pub fn serve<T: Served + OpenApiSchema>(mut self) -> Self {
        self.endpoints.push(Endpoint::of::<T>());
        self
    }

    /// Adds an admission plugin, run after those added before it.
    #[must_use]
    pub fn admission(mut self, plugin: impl admission::Plugin) -> Self {
        self.admission.push(Arc::new(plugin));
        self
    }

    /// The endpoints served with `options`: the registered ones, and core `v1` namespaces
    /// when standalone.
    pub fn endpoints(&self, options: ServerOptions) -> Vec<Endpoint> {
        let mut endpoints = self.endpoints.clone();
        if options.standalone {
            endpoints.push(Endpoint::of::<Namespace>());
        }
        endpoints
    }

    /// The state of a server over an opened storage stack.
    ///
    /// # Panics
    ///
    /// When a served type's declaration does not compile (a CEL rule that does not parse or
    /// could cost more than Kubernetes allows, a bad pattern): a mistake in the server's own
    /// code, reported before it serves anything. [`openapi::check_documents`] finds it in a test.
    pub fn build(self, storage: OpenedStorage, options: ServerOptions) -> AppState {
        let endpoints = self.endpoints(options);
        let validators = Validators::compile(self.openapi, &endpoints)
            .unwrap_or_else(|e| panic!("invalid declaration: {e}"));
        AppState {
            validators: Arc::new(validators),
            store: storage.store,
            codec: storage.codec,
            keys: storage.keys,
            metrics: Arc::new(metrics::Metrics::default()),
            cbor: options.cbor,
            catalog: Arc::new(handlers::catalog_of(&endpoints)),
            endpoints: endpoints.into(),
            admission: self.admission.into(),
            openapi: Arc::new(Documents::new(self.openapi)),
            hubs: watch::Hubs::default(),
            blocking: Arc::new(tokio::sync::Semaphore::new(
                std::thread::available_parallelism().map_or(2, std::num::NonZero::get),
            )),
        }
    }
}

impl AppState {
    /// Whether `version` is served.
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
    let resources = crate::metadata_only::CONVERSIONS.into_iter().fold(
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
