//! The two authenticators that read the connection's client certificate, each trusting its
//! own CA (the TLS layer accepts a certificate from either; what it proves depends on which):
//!
//! * [`X509`] (`--client-ca-file`): the certificate's subject is the user (CN) and its groups
//!   (O).
//! * [`RequestHeader`] (the front proxy: `--requestheader-client-ca-file`,
//!   `--requestheader-allowed-names`, `--requestheader-username-headers`,
//!   `--requestheader-group-headers`, `--requestheader-extra-headers-prefix`): a proxy that
//!   presents such a certificate says who the user is in headers (`X-Remote-User`,
//!   `X-Remote-Group`). Those headers are believed on such connections only; a server removes
//!   them from every request ([`RequestHeader::strip`]) so that nothing after authentication
//!   reads them.

use std::fmt;
use std::path::PathBuf;
use std::sync::Arc;

use http::{HeaderMap, HeaderName};
use rustls::pki_types::CertificateDer;
use rustls::server::danger::ClientCertVerifier;

use super::UserInfo;
use crate::tls::{TlsError, chain_verifies, client_verifier, subject};

/// Users from client certificates that chain to the client CA.
#[derive(Clone)]
pub struct X509 {
    verifier: Arc<dyn ClientCertVerifier>,
}

impl fmt::Debug for X509 {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("X509").finish_non_exhaustive()
    }
}

impl X509 {
    /// Trusts the CA bundle in `ca_file`.
    pub fn new(ca_file: PathBuf) -> Result<X509, TlsError> {
        Ok(X509 {
            verifier: client_verifier(&[ca_file])?,
        })
    }

    /// The user of a chain (leaf first) that this CA signed.
    pub fn authenticate(&self, chain: &[CertificateDer<'_>]) -> Option<UserInfo> {
        if !chain_verifies(self.verifier.as_ref(), chain) {
            return None;
        }
        client_user(chain.first()?)
    }
}

/// The front proxy's identity headers, believed from connections with its certificate.
#[derive(Clone)]
pub struct RequestHeader {
    verifier: Arc<dyn ClientCertVerifier>,
    allowed_names: Vec<String>,
    username_headers: Vec<HeaderName>,
    group_headers: Vec<HeaderName>,
    extra_prefixes: Vec<String>,
}

impl fmt::Debug for RequestHeader {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RequestHeader")
            .field("allowed_names", &self.allowed_names)
            .field("username_headers", &self.username_headers)
            .field("group_headers", &self.group_headers)
            .field("extra_prefixes", &self.extra_prefixes)
            .finish_non_exhaustive()
    }
}

impl RequestHeader {
    /// Trusts proxies whose certificate chains to `ca_file` and, unless `allowed_names` is
    /// empty, whose common name is one of `allowed_names`; the user is the first non-empty
    /// `username_headers` value, the groups every value of `group_headers`. Header names are
    /// case-insensitive; a name that is not a valid header name is an error.
    pub fn new(
        ca_file: PathBuf,
        allowed_names: Vec<String>,
        username_headers: &[String],
        group_headers: &[String],
        extra_prefixes: &[String],
    ) -> Result<RequestHeader, TlsError> {
        let names = |list: &[String]| -> Result<Vec<HeaderName>, TlsError> {
            list.iter()
                .map(|h| {
                    HeaderName::from_bytes(h.to_ascii_lowercase().as_bytes())
                        .map_err(|_| TlsError::new(format!("{h:?} is not a valid header name")))
                })
                .collect()
        };
        Ok(RequestHeader {
            verifier: client_verifier(&[ca_file])?,
            allowed_names,
            username_headers: names(username_headers)?,
            group_headers: names(group_headers)?,
            extra_prefixes: extra_prefixes
                .iter()
                .map(|p| p.to_ascii_lowercase())
                .collect(),
        })
    }

    /// The user the proxy names, when the chain (leaf first) is a trusted proxy's and a user
    /// header is set; otherwise `None` and the other authenticators decide.
    pub fn authenticate(
        &self,
        chain: &[CertificateDer<'_>],
        headers: &HeaderMap,
    ) -> Option<UserInfo> {
        if !chain_verifies(self.verifier.as_ref(), chain) {
            return None;
        }
        if !self.allowed_names.is_empty() {
            let (cn, _) = subject(chain.first()?)?;
            if !self.allowed_names.contains(&cn) {
                tracing::info!(cn, "a front-proxy certificate whose name is not allowed");
                return None;
            }
        }
        let name = self
            .username_headers
            .iter()
            .flat_map(|h| headers.get_all(h))
            .filter_map(|v| v.to_str().ok())
            .find(|v| !v.is_empty())?
            .to_owned();
        let mut groups: Vec<String> = self
            .group_headers
            .iter()
            .flat_map(|h| headers.get_all(h))
            .filter_map(|v| v.to_str().ok())
            .map(str::to_owned)
            .collect();
        groups.push("system:authenticated".into());
        Some(UserInfo {
            name,
            uid: String::new(),
            groups,
        })
    }

    /// Removes the identity headers (user, groups, extras) from `headers`.
    pub fn strip(&self, headers: &mut HeaderMap) {
        for h in self.username_headers.iter().chain(&self.group_headers) {
            headers.remove(h);
        }
        let extras: Vec<HeaderName> = headers
            .keys()
            .filter(|k| {
                self.extra_prefixes
                    .iter()
                    .any(|p| k.as_str().starts_with(p))
            })
            .cloned()
            .collect();
        for h in extras {
            headers.remove(h);
        }
    }
}

/// The user a client certificate names, as Kubernetes' x509 authenticator reads it: the
/// subject's common name is the user, its organizations are the groups (then
/// `system:authenticated`). `None` when the certificate cannot be read or has no common name.
/// Whether the certificate is trusted is not checked here ([`X509`] does).
fn client_user(certificate: &[u8]) -> Option<UserInfo> {
    let (name, mut groups) = subject(certificate)?;
    if name.is_empty() {
        return None;
    }
    groups.push("system:authenticated".into());
    Some(UserInfo {
        name,
        uid: String::new(),
        groups,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_client_certificate_names_user_and_groups() {
        let mut params = rcgen::CertificateParams::new(vec![]).unwrap();
        params
            .distinguished_name
            .push(rcgen::DnType::CommonName, "alice");
        params
            .distinguished_name
            .push(rcgen::DnType::OrganizationName, "dev");
        let key = rcgen::KeyPair::generate().unwrap();
        let cert = params.self_signed(&key).unwrap();
        let user = client_user(cert.der()).unwrap();
        assert_eq!(user.name, "alice");
        assert_eq!(user.groups, ["dev", "system:authenticated"]);
        assert!(client_user(b"not a certificate").is_none());
    }
}
