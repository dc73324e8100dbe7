//! The server: a [`ServerBuilder`] registers the kinds and admission plugins, builds the
//! [`AppState`] over opened storage, and [`router`] serves it. How a request travels from the
//! socket to storage and back, each layer importing only from those below it:
//!
//! ```text
//! socket ─ crate::serve            connection cap; idle and header-read timeouts
//!   └─ hyper (axum::serve)
//!   └─ serve::track                marks a request in flight for its connection
//!   └─ timeouts::layer             request timeout (504), body-read deadline
//!   └─ filters::layer              401 (authentication), 403 (authorization)
//!   └─ crate::flowcontrol          priority and fairness: queue, or 429 with Retry-After
//!   └─ metrics::layer              counts every answer by verb, resource, code, media types
//!       └─ NegotiateLayer (conneg) 406/415/413 here; otherwise stores `Negotiated`
//!           └─ axum Router         path → handler
//!               ├─ crate::endpoints   the resource verbs, watch, Table, metadata only,
//!               │    │                server-side apply, admission (core_v1's
//!               │    │                NamespaceLifecycle first when standalone)
//!               │    └─ crate::registry   the generic store of every kind: get, list,
//!               │         │               create, compare-and-swap update, delete and
//!               │         │               finalizers; the kind's strategy (`Strategy`)
//!               │         └─ crate::storage   memory, embedded (redb) or etcd
//!               ├─ discovery.rs   /api, /apis, /apis/{group}[/{version}], /version
//!               ├─ openapi.rs     /openapi/v2, /openapi/v3[/apis/{group}/{version}]
//!               └─ health.rs      /healthz, /livez, /readyz; metrics.rs /metrics
//! ```
//!
//! Each group of routes gets its own [`NegotiateLayer`], configured with what that group can
//! produce: the resource routes offer Table (JSON only), metadata only
//! (`PartialObjectMetadata[List]`, every codec) and the watch stream forms; discovery
//! offers the aggregated `APIGroupDiscoveryList`; OpenAPI is JSON only, so a CBOR-preferring
//! client (`Accept: application/cbor, */*`) gets JSON rather than 406.

pub(crate) mod discovery;
pub(crate) mod filters;
pub(crate) mod health;
pub(crate) mod metrics;
pub mod openapi;
mod serving;
mod swagger;

pub use crate::endpoints::{Endpoint, Served};
pub use crate::flowcontrol::Overload;
pub use crate::http2::Http2Limits;
pub use crate::serve::ConnLimits;
pub use crate::timeouts::Timeouts;
pub use filters::Auth;
pub use metrics::Metrics;
pub use serving::Serving;

use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::extract::FromRef;
use axum::routing::get;
use conneg::{
    Codec, Codecs, Conversion, FieldValidation, NegotiateLayer, Profile, Status, StatusReason,
};

use crate::apiextensions::types::CustomResourceDefinition;
use crate::core_v1::Namespace;
use crate::core_v1::lifecycle::NamespaceLifecycle;
use crate::definitions::OpenApiSchema;
pub use crate::endpoints::DEFAULT_ENCODED_CACHE;
use crate::endpoints::admission::Plugin;
use crate::endpoints::{Context, EncodedForms, catalog_of, watch};
use crate::flowcontrol::Dispatcher;
use crate::flowcontrol::dispatcher::{DEFAULT_QUEUE_WAIT, DEFAULT_SEATS};
use crate::flowcontrol::objects::{FlowSchema, PriorityLevelConfiguration};
use crate::live::Live;
use crate::middleware::Layered;
use crate::registry::{Registry, Strategy};
use crate::resource::VersionedObject;
use crate::storage::{OpenedStorage, Store, WatchCache, WatchCacheOptions};
use openapi::{Documents, OpenApiInfo};

/// Everything a handler needs; cheap to clone (the store is reference-counted).
#[derive(Clone, Debug)]
pub struct AppState {
    /// What the resource endpoints need: the registry, the admission chain, the
    /// declarations, watch fan-out.
    pub(crate) ctx: Context,
    /// Request counters for `/metrics`.
    pub metrics: Arc<metrics::Metrics>,
    /// Priority and fairness: the configuration in force and the levels' queues.
    pub(crate) flowcontrol: Arc<Dispatcher>,
    /// The OpenAPI documents, built on first use.
    pub(crate) openapi: Arc<Documents>,
    /// Custom resource definitions the server was built with, installed by
    /// [`AppState::bootstrap`].
    definitions: Arc<[CustomResourceDefinition]>,
}

impl FromRef<AppState> for Context {
    fn from_ref(state: &AppState) -> Self {
        state.ctx.clone()
    }
}

/// The store alone, for the health checks (a handle, not the whole state, per probe).
impl FromRef<AppState> for Store {
    fn from_ref(state: &AppState) -> Self {
        state.ctx.registry.store.clone()
    }
}

/// Server options beyond storage.
#[derive(Debug, Clone, Copy)]
pub struct ServerOptions {
    /// Serve and accept CBOR (`--no-cbor` turns it off: JSON only, 415 for CBOR bodies).
    pub cbor: bool,
    /// Serve core `v1` namespaces and check that namespaced objects are created in an
    /// existing, active namespace ([`crate::core_v1::lifecycle`]), for a server that is not
    /// behind an aggregator (`--standalone=false` turns it off). Call
    /// [`AppState::bootstrap`] once before serving, to create the system namespaces.
    pub standalone: bool,
    /// The bytes objects' encoded responses may take, kept so that a GET or LIST sends an
    /// unchanged object without decoding and encoding it again (`0`: none kept;
    /// [`DEFAULT_ENCODED_CACHE`] by default).
    pub encoded_cache: u64,
}

impl Default for ServerOptions {
    fn default() -> Self {
        Self {
            cbor: true,
            standalone: true,
            encoded_cache: DEFAULT_ENCODED_CACHE,
        }
    }
}

/// What a server serves: its kinds (in the order discovery lists them, the preferred version
/// of a group first), its admission plugins and how its OpenAPI names it.
///
/// ```no_run
/// # async fn demo(storage: conneg_apiserver::storage::OpenedStorage) {
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
    admission: Vec<Arc<dyn Plugin>>,
    openapi: OpenApiInfo,
    definitions: Vec<CustomResourceDefinition>,
}

impl ServerBuilder {
    /// A server serving nothing yet, whose OpenAPI documents are described by `openapi`.
    pub fn new(openapi: OpenApiInfo) -> Self {
        Self {
            endpoints: Vec::new(),
            admission: Vec::new(),
            openapi,
            definitions: Vec::new(),
        }
    }

    /// Serves the custom resource definition `crd` from the start: [`AppState::bootstrap`]
    /// creates it (validated as a create over HTTP would be) unless one of its name is
    /// stored, and it is established before the server answers. Custom resources are served
    /// in standalone mode ([`ServerOptions::standalone`]).
    ///
    /// A definition from kube-rs' `CustomResourceExt::crd()` converts with serde:
    /// `serde_json::from_value(serde_json::to_value(Widget::crd())?)?`.
    ///
    /// ```
    /// use conneg_apiserver::apiextensions::types::CustomResourceDefinition;
    /// use conneg_apiserver::server::{ServerBuilder, openapi::OpenApiInfo};
    ///
    /// let crd: CustomResourceDefinition = serde_json::from_value(serde_json::json!({
    ///     "metadata": {"name": "widgets.example.com"},
    ///     "spec": {"group": "example.com", "scope": "Namespaced",
    ///              "names": {"plural": "widgets", "kind": "Widget"},
    ///              "versions": [{"name": "v1", "served": true, "storage": true,
    ///                            "schema": {"openAPIV3Schema": {"type": "object"}}}]},
    /// })).unwrap();
    /// let info = OpenApiInfo { title: "Example", package: "io.example" };
    /// let builder = ServerBuilder::new(info).custom_resource_definition(crd);
    /// # drop(builder);
    /// ```
    #[must_use]
    pub fn custom_resource_definition(mut self, crd: CustomResourceDefinition) -> Self {
        self.definitions.push(crd);
        self
    }

    /// Serves the versioned type `T` (every verb, at its version and resource).
    ///
    /// # Panics
    ///
    /// When `T`'s facts disagree with each other: its version is not among its kind's
    /// [`versions`](crate::registry::Strategy::versions) (server-side apply could not convert
    /// to it), or its kind is not its resource's. A mistake in the server's own code,
    /// reported before it serves anything.
    #[must_use]
    pub fn serve<T>(mut self) -> Self
    where
        T: Served<Facts = ()> + VersionedObject + OpenApiSchema,
        T::Internal: Strategy,
    {
        let version = T::VERSION.api_version();
        let versions = <T::Internal as Strategy>::versions();
        assert!(
            versions.iter().any(|v| v.api_version == version),
            "{version} {} is served but is not among its kind's versions ({})",
            T::KIND,
            versions
                .iter()
                .map(|v| v.api_version)
                .collect::<Vec<_>>()
                .join(", ")
        );
        assert_eq!(
            T::KIND,
            T::RESOURCE.kind,
            "{version} {} is served as {}, whose kind is {}",
            T::KIND,
            T::RESOURCE.resource,
            T::RESOURCE.kind
        );
        self.endpoints.push(Endpoint::of::<T>());
        self
    }

    /// Adds an admission plugin, run after those added before it.
    #[must_use]
    pub fn admission(mut self, plugin: impl Plugin) -> Self {
        self.admission.push(Arc::new(plugin));
        self
    }

    /// The endpoints served with `options`: the registered ones, and core `v1` namespaces
    /// when standalone.
    pub fn endpoints(&self, options: ServerOptions) -> Vec<Endpoint> {
        let mut endpoints = self.endpoints.clone();
        if options.standalone {
            endpoints.push(Endpoint::of::<Namespace>());
            endpoints.push(Endpoint::of::<CustomResourceDefinition>());
            endpoints.push(Endpoint::of::<FlowSchema>());
            endpoints.push(Endpoint::of::<PriorityLevelConfiguration>());
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
        let validators = openapi::validators(self.openapi, &endpoints)
            .unwrap_or_else(|e| panic!("invalid declaration: {e}"));
        let mut admission = self.admission;
        if options.standalone {
            admission.insert(0, Arc::new(NamespaceLifecycle::default()));
        }
        // Every read is answered from the watch cache (unless the store comes cached already,
        // with its own limits, from `StorageArgs::open`).
        let store = WatchCache::new(storage.store, &storage.keys, WatchCacheOptions::default());
        let registry = Registry {
            store: Store::Cached(store),
            codec: storage.codec,
            keys: storage.keys,
            catalog: Live::new(catalog_of(&endpoints)),
            counts: Default::default(),
        };
        let flowcontrol = Arc::new(Dispatcher::new(
            DEFAULT_SEATS,
            DEFAULT_QUEUE_WAIT,
            registry.counts.clone(),
        ));
        AppState {
            flowcontrol,
            ctx: Context {
                registry,
                cbor: options.cbor,
                hubs: watch::Hubs::default(),
                blocking: Arc::new(tokio::sync::Semaphore::new(
                    std::thread::available_parallelism().map_or(2, std::num::NonZero::get),
                )),
                endpoints: Live::new(endpoints),
                admission: admission.into(),
                validators: Arc::new(validators),
                encoded: Arc::new(EncodedForms::new(options.encoded_cache)),
            },
            metrics: Arc::new(metrics::Metrics::default()),
            openapi: Arc::new(Documents::new(self.openapi)),
            definitions: self.definitions.into(),
        }
    }
}

impl AppState {
    /// The registry: storage and what is served.
    pub fn registry(&self) -> &Registry {
        &self.ctx.registry
    }

    /// Creates the system namespaces that do not exist and finishes the deletion of any
    /// namespace left `Terminating`, when namespaces are served ([`ServerOptions::standalone`]);
    /// nothing otherwise. Run it once before serving.
    ///
    /// When the flowcontrol objects are served (standalone), it creates the built-in ones
    /// that are missing and puts the stored ones in force, following their changes.
    ///
    /// When custom resource definitions are served (standalone too), it also starts their
    /// controller (`crate::customresource::controller`), which serves the established
    /// ones from then on.
    ///
    /// A step that storage cannot answer (503 or 504: etcd unreachable, or without quorum)
    /// is tried again, for up to 60 s, so that a replica started while its
    /// storage recovers waits for it rather than exits. Every step is safe to repeat.
    pub async fn bootstrap(&self) -> Result<(), Status> {
        let registry = &self.ctx.registry;
        patiently(|| crate::core_v1::lifecycle::bootstrap(registry)).await?;
        patiently(|| crate::flowcontrol::configuration::bootstrap(registry)).await?;
        patiently(|| {
            crate::flowcontrol::configuration::follow(registry.clone(), self.flowcontrol.clone())
        })
        .await?;
        let crds = &crate::customresource::definition::CUSTOM_RESOURCE_DEFINITIONS;
        let compiled = self.ctx.endpoints.get();
        if compiled.iter().any(|e| e.resource == crds) {
            for crd in self.definitions.iter() {
                patiently(|| crate::customresource::definition::install(registry, crd.clone()))
                    .await?;
            }
            let base = compiled
                .iter()
                .filter(|e| e.is_compiled())
                .cloned()
                .collect();
            crate::customresource::controller::start(self.ctx.clone(), base).await;
        }
        Ok(())
    }

    /// The codecs responses may use: JSON, and CBOR unless `--no-cbor`.
    pub fn codecs(&self) -> Codecs {
        if self.ctx.cbor {
            Codecs::new()
        } else {
            Codecs::empty().with(Codec::Json)
        }
    }

    fn codec_list(&self) -> Vec<Codec> {
        self.codecs().as_slice().to_vec()
    }
}

/// How long [`AppState::bootstrap`] keeps trying a step that storage cannot answer.
const BOOTSTRAP_PATIENCE: Duration = Duration::from_secs(60);

/// Runs `step` until it succeeds, fails for another reason than unavailable storage (503,
/// 504), or [`BOOTSTRAP_PATIENCE`] has passed; waits 100 ms after the first failure, doubling
/// to at most 2 s.
async fn patiently<F, Fut>(mut step: F) -> Result<(), Status>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<(), Status>>,
{
    let deadline = tokio::time::Instant::now() + BOOTSTRAP_PATIENCE;
    let mut wait = Duration::from_millis(100);
    loop {
        match step().await {
            Err(s)
                if matches!(s.code, 503 | 504) && tokio::time::Instant::now() + wait < deadline =>
            {
                tracing::warn!(error = %s.message, "bootstrap: storage unavailable; trying again");
                tokio::time::sleep(wait).await;
                wait = (wait * 2).min(Duration::from_secs(2));
            }
            other => return other,
        }
    }
}

/// `as=Table;g=meta.k8s.io;v=v1beta1`, still asked for by older kubectl.
pub const TABLE_V1BETA1: Conversion = Conversion::new("Table", "meta.k8s.io", "v1beta1");
/// `as=APIGroupDiscoveryList;g=apidiscovery.k8s.io;v=v2` (aggregated discovery).
pub const AGGREGATED_DISCOVERY: Conversion =
    Conversion::new("APIGroupDiscoveryList", "apidiscovery.k8s.io", "v2");

/// The whole application: every route group behind its negotiation layer, then metrics.
pub fn router(state: AppState) -> Router {
    let metrics = state.metrics.clone();
    Router::new().fallback_service(Layered::new(metrics, routes(state)))
}

/// Every route group behind its negotiation layer: [`router`] without metrics.
fn routes(state: AppState) -> Router {
    let codecs = state.codecs();
    let patch_types: Vec<conneg::PatchType> = conneg::PatchType::all()
        .iter()
        .copied()
        .filter(|p| state.ctx.cbor || !p.is_cbor())
        .collect();

    // Resource routes: objects, lists, watches, patches. Table only in JSON, metadata-only
    // responses in every codec, as Kubernetes.
    let resources = crate::metadata_only::CONVERSIONS.into_iter().fold(
        NegotiateLayer::new()
            .profile(Profile::Kubernetes)
            .codecs(codecs.clone())
            .patch_types(patch_types)
            .streaming(true)
            .field_validation(FieldValidation::Warn)
            .conversion(Conversion::table(), [Codec::Json])
            .conversion(TABLE_V1BETA1, [Codec::Json]),
        |layer, conv| layer.conversion(conv, state.codec_list()),
    );
    let resources = crate::endpoints::routes().layer(resources);

    // Discovery: legacy and aggregated forms, in every served codec.
    let discovery = discovery::routes().layer(
        NegotiateLayer::new()
            .profile(Profile::Kubernetes)
            .codecs(codecs)
            .conversion(AGGREGATED_DISCOVERY, state.codec_list()),
    );

    // OpenAPI exists only as JSON: `Accept: application/cbor, */*` gets JSON.
    let openapi = openapi::routes().layer(
        NegotiateLayer::new()
            .profile(Profile::Kubernetes)
            .codecs(Codecs::empty().with(Codec::Json)),
    );

    let plain = health::routes().route("/metrics", get(metrics::serve));

    Router::new()
        .merge(resources)
        .merge(discovery)
        .merge(openapi)
        .merge(plain)
        .fallback(not_found)
        .with_state(state)
}

async fn not_found() -> Status {
    Status::failure(
        http::StatusCode::NOT_FOUND,
        StatusReason::NotFound,
        "the server could not find the requested resource",
    )
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicU32, Ordering};

    use super::*;

    /// A step that fails with `first` for its first `failures` calls, then succeeds.
    async fn run(first: Status, failures: u32) -> (Result<(), Status>, u32) {
        let calls = AtomicU32::new(0);
        let result = patiently(|| {
            let n = calls.fetch_add(1, Ordering::Relaxed);
            let first = first.clone();
            async move { if n < failures { Err(first) } else { Ok(()) } }
        })
        .await;
        (result, calls.load(Ordering::Relaxed))
    }

    #[tokio::test(start_paused = true)]
    async fn bootstrap_steps_wait_for_storage_and_only_for_storage() {
        let unavailable = Status::service_unavailable("storage unavailable: etcd");
        // Storage comes back: the step is tried until it succeeds.
        let (result, calls) = run(unavailable.clone(), 5).await;
        assert!(result.is_ok());
        assert_eq!(calls, 6);
        // Any other failure is final at once.
        let (result, calls) = run(Status::bad_request("no"), 5).await;
        assert_eq!(result.unwrap_err().code, 400);
        assert_eq!(calls, 1);
        // Storage never comes back: the step gives up after the patience, with its error.
        let start = tokio::time::Instant::now();
        let (result, calls) = run(unavailable, u32::MAX).await;
        assert_eq!(result.unwrap_err().code, 503);
        assert!(
            start.elapsed() <= BOOTSTRAP_PATIENCE,
            "{:?}",
            start.elapsed()
        );
        assert!(start.elapsed() >= BOOTSTRAP_PATIENCE - Duration::from_secs(2));
        assert!(calls > 10 && calls < 60, "{calls}");
    }
}
