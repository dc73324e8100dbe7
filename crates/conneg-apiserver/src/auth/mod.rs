//! Who may do what, as a Kubernetes API server decides it: request attributes
//! ([`Attributes`], read from the request as Kubernetes reads them), authentication
//! ([`Authenticator`]: static bearer tokens, anonymous) and authorization ([`Authorizer`]:
//! `AlwaysAllow`, `AlwaysDeny`, `ABAC` policies), impersonation ([`impersonate`]), with
//! Kubernetes' 401 and 403 answers.

mod attributes;
mod authn;
mod authz;
mod certificates;
mod impersonation;
mod webhook;

pub use attributes::{Attributes, UserInfo};
pub use authn::{Authenticator, AuthnError, Credentials};
pub use authz::{Authorizer, Decision, Mode, Policy, forbidden};
pub use certificates::{RequestHeader, X509};
pub use impersonation::impersonate;
pub use webhook::{AccessWebhook, TokenWebhook, Webhook};
