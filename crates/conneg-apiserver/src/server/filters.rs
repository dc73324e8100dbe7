//! The authentication and authorization filter (Kubernetes' `WithAuthentication` and
//! `WithAuthorization`): every request, before it reaches negotiation and the
//! handlers: the front proxy's headers, a client certificate, a bearer token or anonymous
//! (401 otherwise; the proxy's identity headers are then removed), then
//! impersonation if asked for, then the authorization modes (403 otherwise), with the
//! generic machinery of `crate::auth`. The user (`UserInfo`) and what the request does
//! (`Attributes`, read once) go into the request extensions for the layers after it, and into
//! the access log (target `access`, at debug
//! level: `RUST_LOG=info,access=debug`).
//!
//! With no flags every request is allowed, as anonymous: the server on loopback stays as easy
//! to try as before.

use std::future::Future;
use std::sync::Arc;

use crate::auth::{Attributes, Authenticator, Authorizer, Credentials, Decision, impersonate};
use axum::body::Body;
use axum::extract::ConnectInfo;
use axum::extract::Request;
use axum::response::Response;
use conneg::{Codec, Negotiator, Status};

use super::metrics::Metrics;
use crate::middleware::{Inner, Middleware, Next};
use crate::serve::ConnActivity;

/// Who may do what on this server.
#[derive(Clone, Debug)]
pub struct Auth {
    /// Who is asking.
    pub authenticator: Authenticator,
    /// Whether they may.
    pub authorizer: Authorizer,
    /// How a refusal is answered: in the format the request accepts, as any other error.
    pub errors: Negotiator,
    /// Where authenticated users are counted (`/metrics`).
    pub metrics: Arc<Metrics>,
}

impl Auth {
    /// `status` in a format the request accepts (JSON when it accepts none).
    fn refuse(&self, req: &Request, status: &Status) -> Response {
        match self
            .errors
            .negotiate(req.method(), req.uri(), req.headers(), false)
        {
            Ok(n) => n.error_response(status).map(Body::new),
            Err(_) => status.to_response(&Codec::Json, false).map(Body::new),
        }
    }
}

/// The filter: 401 for a bad or (without anonymous) missing credential, 403 for a denial,
/// otherwise the request goes on with its `UserInfo`.
impl Middleware for Arc<Auth> {
    fn run<S: Inner>(self, req: Request, next: Next<S>) -> impl Future<Output = Response> + Send {
        layer(self, req, next)
    }
}

async fn layer<S: Inner>(auth: Arc<Auth>, mut req: Request, next: Next<S>) -> Response {
    let conn: Option<&ConnectInfo<ConnActivity>> = req.extensions().get();
    let credentials = Credentials {
        client_certificates: conn.map_or(&[], |c| c.0.client_certificates()),
        headers: Some(req.headers()),
    };
    let user = match auth.authenticator.authenticate(&credentials).await {
        Ok(user) => user,
        Err(_) => return auth.refuse(&req, &Status::unauthorized("Unauthorized")),
    };
    auth.metrics.count_user(&user.name);
    auth.authenticator.strip_identity_headers(req.headers_mut());
    let user = match impersonate(&auth.authorizer, user, req.headers()).await {
        Ok(user) => user,
        Err(status) => return auth.refuse(&req, &status),
    };
    let attributes = Attributes::from_request(req.method(), req.uri().path(), req.uri().query());
    if let Decision::Deny(reason) = auth.authorizer.authorize(&user, &attributes).await {
        tracing::info!(user = %user.name, verb = %attributes.verb, path = %attributes.path, "forbidden");
        let status = crate::auth::forbidden(&user, &attributes, &reason);
        return auth.refuse(&req, &status);
    }
    // The access log (`RUST_LOG=access=debug`) keeps what it needs only when it is on.
    let logged = tracing::enabled!(target: "access", tracing::Level::DEBUG).then(|| {
        (
            std::time::Instant::now(),
            user.name.clone(),
            attributes.clone(),
        )
    });
    let version = req.version();
    // For priority and fairness, which classifies the request by the same attributes.
    req.extensions_mut().insert(attributes);
    req.extensions_mut().insert(user);
    let resp = next.run(req).await;
    // Who did what, the answer, how long it took to start answering (a watch goes on after).
    if let Some((started, name, attributes)) = logged {
        tracing::debug!(
            target: "access",
            user = %name,
            verb = %attributes.verb,
            resource = %attributes.resource,
            namespace = %attributes.namespace,
            name = %attributes.name,
            path = %attributes.path,
            protocol = ?version,
            code = resp.status().as_u16(),
            latency_ms = started.elapsed().as_secs_f64() * 1e3,
        );
    }
    resp
}
