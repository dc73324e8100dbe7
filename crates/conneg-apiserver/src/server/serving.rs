//! Serving a built server, safe by default: every connection and request bounded, the system
//! namespaces created, and (when given) TLS and authentication in front of everything.

use std::future::Future;
use std::sync::Arc;

use axum::Router;
use tokio::net::TcpListener;
use tokio_rustls::TlsAcceptor;

use super::filters::Auth;
use super::{AppState, routes};
use crate::flowcontrol::Overload;
use crate::middleware::Layered;
use crate::serve::{ConnLimits, LimitedListener, Track, serve_connections};
use crate::timeouts::Timeouts;

/// How a server is served: what [`AppState::serve`] puts around the router. The default is
/// Kubernetes' bounds on plain HTTP with no authentication; `config::ServeArgs::serving`
/// reads the bounds from the command line.
#[derive(Clone, Default)]
pub struct Serving {
    /// Connections open at once, header-read and idle timeouts.
    pub limits: ConnLimits,
    /// The request and body-read deadlines.
    pub timeouts: Timeouts,
    /// TLS on every connection (the secure port), when set.
    pub tls: Option<TlsAcceptor>,
    /// Authentication and authorization of every request, when set.
    pub auth: Option<Arc<Auth>>,
    /// How requests are limited (default: priority and fairness, as Kubernetes).
    pub overload: Overload,
}

impl std::fmt::Debug for Serving {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Serving")
            .field("limits", &self.limits)
            .field("timeouts", &self.timeouts)
            .field("tls", &self.tls.is_some())
            .field("auth", &self.auth.is_some())
            .field("overload", &self.overload)
            .finish()
    }
}

impl AppState {
    /// The application with every layer a request goes through, outermost first:
    /// in-flight tracking for the connection's idle timeout, the deadlines, then
    /// authentication and authorization (when [`Serving::auth`] is set), then the overload
    /// limits ([`Serving::overload`]), then [`router`](super::router) (metrics, then the
    /// routes). Each filter is a tower service holding the next by type.
    pub fn app(self, serving: &Serving) -> Router {
        let limiter = serving.overload.filter(self.flowcontrol.clone());
        let metrics = self.metrics.clone();
        let app = Layered::new(metrics, routes(self));
        let app = Layered::new(limiter, app);
        let app = Layered::new(serving.auth.clone(), app);
        let app = Layered::new(serving.timeouts, app);
        Router::new().fallback_service(Layered::new(Track, app))
    }

    /// Creates the system namespaces ([`AppState::bootstrap`]), then serves [`AppState::app`]
    /// on `listener` with the connection bounds of `serving` (and its TLS, HTTP/2 where the
    /// client negotiates it) until `shutdown` completes; connections in flight are then
    /// drained.
    ///
    /// ```no_run
    /// # async fn demo(state: conneg_apiserver::server::AppState) -> std::io::Result<()> {
    /// let listener = tokio::net::TcpListener::bind("127.0.0.1:8080").await?;
    /// state.serve(listener, Default::default(), std::future::pending()).await
    /// # }
    /// ```
    ///
    /// # Errors
    ///
    /// When the system namespaces cannot be created, or serving fails.
    pub async fn serve(
        self,
        listener: TcpListener,
        serving: Serving,
        shutdown: impl Future<Output = ()> + Send + 'static,
    ) -> std::io::Result<()> {
        self.bootstrap()
            .await
            .map_err(|s| std::io::Error::other(format!("bootstrap: {}", s.message)))?;
        let app = self.app(&serving);
        let listener = LimitedListener::new(listener, serving.limits, serving.tls);
        serve_connections(listener, app, shutdown).await;
        Ok(())
    }
}
