use std::sync::Arc;

use bytes::Bytes;
use http::Response;

use tower_layer::Layer;

use super::Negotiate;
use crate::codec::Codec;
use crate::field_validation::FieldValidation;
use crate::headers::params::Conversion;
use crate::negotiate::rejection::Rejection;
use crate::negotiate::rules::Negotiator;
use crate::patch::PatchType;
use crate::profile::Profile;
use crate::registry::Codecs;

/// Applies content negotiation to a service; see the [module docs](crate::negotiate).
///
/// The builder methods mirror [`Negotiator`]'s. Build one layer per group of routes that
/// accept the same things (a PATCH route with its patch types, a list/watch route with
/// `.streaming(true)`...).
#[derive(Clone, Debug, Default)]
pub struct NegotiateLayer {
    negotiator: Arc<Negotiator>,
}

impl NegotiateLayer {
    /// The [standard profile](crate::Profile::Standard): JSON then CBOR, merge patch, 3 MiB
    /// bodies; see [`Negotiator::new`]. An API server serving Kubernetes clients adds
    /// `.profile(Profile::Kubernetes)`.
    pub fn new() -> Self {
        Self::default()
    }

    /// See [`Negotiator::profile`].
    pub fn profile(self, profile: Profile) -> Self {
        self.map(|n| n.profile(profile))
    }

    /// See [`Negotiator::map_errors`].
    ///
    /// ```
    /// # #[cfg(feature = "axum")] {
    /// use axum::{Router, routing::post};
    /// use conneg::{NegotiateLayer, axum::Conneg};
    ///
    /// #[derive(serde::Serialize)]
    /// struct ApiError { message: String }
    ///
    /// let app: Router = Router::new()
    ///     .route("/notes", post(|Conneg(v): Conneg<serde_json::Value>| async move { Conneg(v) }))
    ///     .layer(NegotiateLayer::new().map_errors(|rejection| {
    ///         rejection.respond(&ApiError { message: rejection.message().to_owned() })
    ///     }));
    /// # let _ = app;
    /// # }
    /// ```
    pub fn map_errors(
        self,
        f: impl Fn(&Rejection) -> Response<Bytes> + Send + Sync + 'static,
    ) -> Self {
        self.map(|n| n.map_errors(f))
    }

    /// A layer applying `negotiator`'s rules.
    pub fn from_negotiator(negotiator: Negotiator) -> Self {
        NegotiateLayer {
            negotiator: Arc::new(negotiator),
        }
    }

    /// The rules.
    pub fn negotiator(&self) -> &Negotiator {
        &self.negotiator
    }

    fn map(mut self, f: impl FnOnce(Negotiator) -> Negotiator) -> Self {
        let n = Arc::make_mut(&mut self.negotiator);
        *n = f(std::mem::take(n));
        self
    }

    /// See [`Negotiator::codecs`].
    pub fn codecs(self, codecs: Codecs) -> Self {
        self.map(|n| n.codecs(codecs))
    }

    /// See [`Negotiator::codec`].
    pub fn codec(self, codec: Codec) -> Self {
        self.map(|n| n.codec(codec))
    }

    /// See [`Negotiator::accept_request_types`].
    pub fn accept_request_types(self, codecs: impl IntoIterator<Item = Codec>) -> Self {
        self.map(|n| n.accept_request_types(codecs))
    }

    /// See [`Negotiator::patch_types`].
    pub fn patch_types(self, types: impl IntoIterator<Item = PatchType>) -> Self {
        self.map(|n| n.patch_types(types))
    }

    /// See [`Negotiator::conversion`].
    pub fn conversion(
        self,
        conversion: Conversion,
        codecs: impl IntoIterator<Item = Codec>,
    ) -> Self {
        self.map(|n| n.conversion(conversion, codecs))
    }

    /// See [`Negotiator::body_limit`].
    pub fn body_limit(self, limit: usize) -> Self {
        self.map(|n| n.body_limit(limit))
    }

    /// See [`Negotiator::streaming`].
    pub fn streaming(self, streaming: bool) -> Self {
        self.map(|n| n.streaming(streaming))
    }

    /// See [`Negotiator::field_validation`].
    pub fn field_validation(self, validation: FieldValidation) -> Self {
        self.map(|n| n.field_validation(validation))
    }
}

impl<S> Layer<S> for NegotiateLayer {
    type Service = Negotiate<S>;

    fn layer(&self, inner: S) -> Self::Service {
        Negotiate::from_parts(inner, self.negotiator.clone())
    }
}
