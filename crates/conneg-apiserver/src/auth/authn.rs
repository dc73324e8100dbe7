//! Authentication: who sent a request. In Kubernetes' order, the first that succeeds wins:
//! the front proxy's identity headers ([`RequestHeader`]), a client certificate ([`X509`]),
//! a static bearer token (`--token-auth-file`, Kubernetes' CSV format), and anonymous
//! requests (`--anonymous-auth`).

use std::collections::HashMap;
#[cfg(test)]
use std::path::PathBuf;

use http::HeaderMap;
use http::header::AUTHORIZATION;
use rustls::pki_types::CertificateDer;

use super::{RequestHeader, TokenWebhook, UserInfo, X509};

/// Why a request is not authenticated.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum AuthnError {
    /// A credential was given and is not valid (401).
    Invalid,
    /// No credential, and anonymous requests are off (401).
    Missing,
}

/// What a request presents to prove who sent it.
#[derive(Clone, Copy, Debug, Default)]
pub struct Credentials<'a> {
    /// The connection's client certificate chain, leaf first (empty without one).
    pub client_certificates: &'a [CertificateDer<'a>],
    /// The request's headers: `Authorization`, and the front proxy's identity headers.
    pub headers: Option<&'a HeaderMap>,
}

/// Authenticates requests by front-proxy headers, client certificate, bearer token, then (if
/// allowed) as anonymous.
#[derive(Clone, Debug, Default)]
pub struct Authenticator {
    request_header: Option<RequestHeader>,
    x509: Option<X509>,
    tokens: HashMap<String, UserInfo>,
    token_webhook: Option<std::sync::Arc<TokenWebhook>>,
    anonymous: bool,
}

impl Authenticator {
    /// No tokens; anonymous requests allowed or not.
    pub fn new(anonymous: bool) -> Authenticator {
        Authenticator {
            request_header: None,
            x509: None,
            tokens: HashMap::new(),
            token_webhook: None,
            anonymous,
        }
    }

    /// Also asks a `TokenReview` webhook about bearer tokens not in the token file
    /// (`--authentication-kubeconfig`).
    pub fn with_token_webhook(mut self, hook: TokenWebhook) -> Authenticator {
        self.token_webhook = Some(std::sync::Arc::new(hook));
        self
    }

    /// Also trusts client certificates from this CA (`--client-ca-file`).
    pub fn with_x509(mut self, x509: X509) -> Authenticator {
        self.x509 = Some(x509);
        self
    }

    /// Also trusts this front proxy (`--requestheader-*`).
    pub fn with_request_header(mut self, request_header: RequestHeader) -> Authenticator {
        self.request_header = Some(request_header);
        self
    }

    /// Removes the front proxy's identity headers from a request, once it is authenticated:
    /// nothing after authentication may mistake them for the user.
    pub fn strip_identity_headers(&self, headers: &mut HeaderMap) {
        if let Some(rh) = &self.request_header {
            rh.strip(headers);
        }
    }

    /// Adds the tokens of a token file: one `token,user,uid[,"group1,group2"]` per line, as
    /// Kubernetes' `--token-auth-file`; blank lines and lines starting with `#` are skipped.
    /// A malformed line is an error naming it.
    ///
    /// ```
    /// use conneg_apiserver::auth::{Authenticator, Credentials};
    /// let a = Authenticator::new(false)
    ///     .with_token_file("t0k3n,bob,42,\"dev,ops\"\n")
    ///     .unwrap();
    /// let bearer = |t: &str| {
    ///     let mut h = http::HeaderMap::new();
    ///     h.insert("authorization", t.parse().unwrap());
    ///     h
    /// };
    /// let (good, bad) = (bearer("Bearer t0k3n"), bearer("Bearer nope"));
    /// let with = |h| Credentials { headers: Some(h), ..Credentials::default() };
    /// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
    /// let bob = a.authenticate(&with(&good)).await.unwrap();
    /// assert_eq!(bob.name, "bob");
    /// assert_eq!(bob.groups, ["dev", "ops", "system:authenticated"]);
    /// assert!(a.authenticate(&with(&bad)).await.is_err());
    /// # });
    /// ```
    pub fn with_token_file(mut self, text: &str) -> Result<Authenticator, String> {
        for (n, line) in text.lines().enumerate() {
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let fields = split_csv(line);
            if fields.len() < 3 || fields[0].is_empty() || fields[1].is_empty() {
                return Err(format!(
                    "token file line {}: want token,user,uid[,\"groups\"], got {} fields",
                    n + 1,
                    fields.len()
                ));
            }
            let mut groups: Vec<String> = fields
                .get(3)
                .map(|g| {
                    g.split(',')
                        .map(str::trim)
                        .filter(|g| !g.is_empty())
                        .map(String::from)
                        .collect()
                })
                .unwrap_or_default();
            groups.push("system:authenticated".into());
            self.tokens.insert(
                fields[0].clone(),
                UserInfo {
                    name: fields[1].clone(),
                    uid: fields[2].clone(),
                    groups,
                },
            );
        }
        Ok(self)
    }

    /// The user of a request that presents `credentials`. The front proxy's headers, then a
    /// client certificate that names a user, win; then the bearer token, if any (a bad one is 401 even when anonymous
    /// requests are allowed, as in Kubernetes); then anonymous.
    pub async fn authenticate(
        &self,
        credentials: &Credentials<'_>,
    ) -> Result<UserInfo, AuthnError> {
        let chain = credentials.client_certificates;
        let proxied = self
            .request_header
            .as_ref()
            .zip(credentials.headers)
            .and_then(|(rh, headers)| rh.authenticate(chain, headers));
        if let Some(user) =
            proxied.or_else(|| self.x509.as_ref().and_then(|x| x.authenticate(chain)))
        {
            return Ok(user);
        }
        let authorization = credentials
            .headers
            .and_then(|h| h.get(AUTHORIZATION))
            .map(|v| v.to_str().unwrap_or(""));
        match authorization {
            Some(value) => {
                let token = value
                    .strip_prefix("Bearer ")
                    .map(str::trim)
                    .filter(|t| !t.is_empty())
                    .ok_or(AuthnError::Invalid)?;
                if let Some(user) = self.tokens.get(token) {
                    return Ok(user.clone());
                }
                let Some(hook) = &self.token_webhook else {
                    return Err(AuthnError::Invalid);
                };
                match hook.review(token).await {
                    Ok(Some(user)) => Ok(user),
                    Ok(None) => Err(AuthnError::Invalid),
                    Err(e) => {
                        tracing::warn!("token review: {e}");
                        Err(AuthnError::Invalid)
                    }
                }
            }
            None if self.anonymous => Ok(UserInfo::anonymous()),
            None => Err(AuthnError::Missing),
        }
    }
}

/// One CSV record: fields split on commas outside double quotes, quotes removed (`""` is a
/// quote inside a quoted field).
fn split_csv(line: &str) -> Vec<String> {
    let mut fields = vec![String::new()];
    let mut quoted = false;
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '"' if quoted && chars.peek() == Some(&'"') => {
                chars.next();
                fields.last_mut().expect("one field at least").push('"');
            }
            '"' => quoted = !quoted,
            ',' if !quoted => fields.push(String::new()),
            c => fields.last_mut().expect("one field at least").push(c),
        }
    }
    fields
}

#[cfg(test)]
mod tests {
    use super::*;

    fn header(authorization: Option<&str>) -> HeaderMap {
        let mut h = HeaderMap::new();
        if let Some(a) = authorization {
            h.insert(AUTHORIZATION, a.parse().unwrap());
        }
        h
    }

    fn with(headers: &HeaderMap) -> Credentials<'_> {
        Credentials {
            headers: Some(headers),
            ..Credentials::default()
        }
    }

    #[tokio::test]
    async fn token_file_and_anonymous() {
        let file = "# tokens\n\nabc,alice,1\ndef,bob,2,\"g1, g2\"\n";
        let a = Authenticator::new(true).with_token_file(file).unwrap();
        assert_eq!(
            a.authenticate(&with(&header(Some("Bearer abc"))))
                .await
                .unwrap()
                .groups,
            ["system:authenticated"]
        );
        assert_eq!(
            a.authenticate(&with(&header(Some("Bearer def"))))
                .await
                .unwrap()
                .groups,
            ["g1", "g2", "system:authenticated"]
        );
        assert_eq!(
            a.authenticate(&with(&header(None))).await.unwrap(),
            UserInfo::anonymous()
        );
        for bad in ["Bearer zzz", "Basic abc", "Bearer ", "abc"] {
            assert_eq!(
                a.authenticate(&with(&header(Some(bad)))).await,
                Err(AuthnError::Invalid),
                "{bad}"
            );
        }
        let closed = Authenticator::new(false);
        assert_eq!(
            closed.authenticate(&Credentials::default()).await,
            Err(AuthnError::Missing)
        );
        assert!(
            Authenticator::new(false)
                .with_token_file("only,two")
                .is_err()
        );
        assert!(
            Authenticator::new(false)
                .with_token_file(",user,1")
                .is_err()
        );
    }

    #[test]
    fn csv_quotes() {
        assert_eq!(split_csv(r#"a,"b,c",d"#), ["a", "b,c", "d"]);
        assert_eq!(split_csv(r#"a,"say ""hi""""#), ["a", r#"say "hi""#]);
        assert_eq!(split_csv(""), [""]);
    }

    /// A CA in `dir` (its PEM at `<name>.crt`) and a certificate it signs for `cn`.
    fn ca_and_leaf(
        dir: &std::path::Path,
        name: &str,
        cn: Option<&str>,
    ) -> (PathBuf, CertificateDer<'static>) {
        let mut params = rcgen::CertificateParams::new(vec![]).unwrap();
        params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
        let ca_key = rcgen::KeyPair::generate().unwrap();
        let ca = params.self_signed(&ca_key).unwrap();
        let path = dir.join(format!("{name}.crt"));
        std::fs::write(&path, ca.pem()).unwrap();
        let mut leaf = rcgen::CertificateParams::new(vec![]).unwrap();
        leaf.distinguished_name = rcgen::DistinguishedName::new();
        if let Some(cn) = cn {
            leaf.distinguished_name.push(rcgen::DnType::CommonName, cn);
        }
        let key = rcgen::KeyPair::generate().unwrap();
        let cert = leaf.signed_by(&key, &ca, &ca_key).unwrap();
        (path, cert.der().clone())
    }

    #[tokio::test]
    async fn certificates_are_believed_for_what_their_ca_vouches() {
        let dir = tempfile::tempdir().unwrap();
        let (client_ca, carol) = ca_and_leaf(dir.path(), "clients", Some("carol"));
        let (proxy_ca, proxy) = ca_and_leaf(dir.path(), "proxies", Some("front-proxy"));
        let (_, nameless) = ca_and_leaf(dir.path(), "other", None);
        let rh = RequestHeader::new(
            proxy_ca,
            vec!["front-proxy".into()],
            &["X-Remote-User".into()],
            &["X-Remote-Group".into()],
            &["X-Remote-Extra-".into()],
        )
        .unwrap();
        let a = Authenticator::new(false)
            .with_x509(X509::new(client_ca).unwrap())
            .with_request_header(rh);
        let mut h = header(Some("Bearer unknown"));
        h.insert("x-remote-user", "dave".parse().unwrap());
        h.append("x-remote-group", "ops".parse().unwrap());
        h.insert("x-remote-extra-scopes", "s".parse().unwrap());
        let creds = |chain| Credentials {
            client_certificates: chain,
            headers: Some(&h),
        };
        // The proxy's certificate: the headers name the user.
        let dave = a
            .authenticate(&creds(std::slice::from_ref(&proxy)))
            .await
            .unwrap();
        assert_eq!(dave.name, "dave");
        assert_eq!(dave.groups, ["ops", "system:authenticated"]);
        // A client's certificate: the headers are not believed, the certificate is.
        let c = a
            .authenticate(&creds(std::slice::from_ref(&carol)))
            .await
            .unwrap();
        assert_eq!(c.name, "carol");
        // A certificate from an unknown CA proves nothing: the bad token decides.
        assert_eq!(
            a.authenticate(&creds(std::slice::from_ref(&nameless)))
                .await,
            Err(AuthnError::Invalid)
        );
        // No certificate: the headers are not believed either.
        assert_eq!(a.authenticate(&creds(&[])).await, Err(AuthnError::Invalid));
        let mut stripped = h.clone();
        a.strip_identity_headers(&mut stripped);
        assert!(stripped.get("x-remote-user").is_none());
        assert!(stripped.get("x-remote-group").is_none());
        assert!(stripped.get("x-remote-extra-scopes").is_none());
        assert!(stripped.get(AUTHORIZATION).is_some());
    }
}
