//! Authentication: who sent a request. In Kubernetes' order, the first that succeeds wins:
//! a verified client certificate (`--client-ca-file`; see [`crate::tls::client_user`]), a
//! static bearer token (`--token-auth-file`, Kubernetes' CSV format), and anonymous requests
//! (`--anonymous-auth`).

use std::collections::HashMap;

use super::UserInfo;

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
    /// The leaf client certificate (DER) of the connection, already verified against the
    /// client CA by the TLS layer.
    pub client_certificate: Option<&'a [u8]>,
    /// The `Authorization` header value.
    pub authorization: Option<&'a str>,
}

/// Authenticates requests by client certificate, then bearer token, then (if allowed) as
/// anonymous.
#[derive(Clone, Debug, Default)]
pub struct Authenticator {
    tokens: HashMap<String, UserInfo>,
    anonymous: bool,
}

impl Authenticator {
    /// No tokens; anonymous requests allowed or not.
    pub fn new(anonymous: bool) -> Authenticator {
        Authenticator {
            tokens: HashMap::new(),
            anonymous,
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
    /// let bearer = |t| Credentials { authorization: Some(t), ..Credentials::default() };
    /// let bob = a.authenticate(&bearer("Bearer t0k3n")).unwrap();
    /// assert_eq!(bob.name, "bob");
    /// assert_eq!(bob.groups, ["dev", "ops", "system:authenticated"]);
    /// assert!(a.authenticate(&bearer("Bearer nope")).is_err());
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

    /// The user of a request that presents `credentials`. A client certificate that names a
    /// user wins; then the bearer token, if any (a bad one is 401 even when anonymous
    /// requests are allowed, as in Kubernetes); then anonymous.
    pub fn authenticate(&self, credentials: &Credentials<'_>) -> Result<UserInfo, AuthnError> {
        if let Some(user) = credentials
            .client_certificate
            .and_then(crate::tls::client_user)
        {
            return Ok(user);
        }
        match credentials.authorization {
            Some(value) => {
                let token = value
                    .strip_prefix("Bearer ")
                    .map(str::trim)
                    .filter(|t| !t.is_empty())
                    .ok_or(AuthnError::Invalid)?;
                self.tokens.get(token).cloned().ok_or(AuthnError::Invalid)
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

    fn header(authorization: Option<&str>) -> Credentials<'_> {
        Credentials {
            authorization,
            ..Credentials::default()
        }
    }

    #[test]
    fn token_file_and_anonymous() {
        let file = "# tokens\n\nabc,alice,1\ndef,bob,2,\"g1, g2\"\n";
        let a = Authenticator::new(true).with_token_file(file).unwrap();
        assert_eq!(
            a.authenticate(&header(Some("Bearer abc"))).unwrap().groups,
            ["system:authenticated"]
        );
        assert_eq!(
            a.authenticate(&header(Some("Bearer def"))).unwrap().groups,
            ["g1", "g2", "system:authenticated"]
        );
        assert_eq!(
            a.authenticate(&header(None)).unwrap(),
            UserInfo::anonymous()
        );
        for bad in ["Bearer zzz", "Basic abc", "Bearer ", "abc"] {
            assert_eq!(
                a.authenticate(&header(Some(bad))),
                Err(AuthnError::Invalid),
                "{bad}"
            );
        }
        let closed = Authenticator::new(false);
        assert_eq!(closed.authenticate(&header(None)), Err(AuthnError::Missing));
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

    #[test]
    fn a_client_certificate_comes_first() {
        let mut params = rcgen::CertificateParams::new(vec![]).unwrap();
        params
            .distinguished_name
            .push(rcgen::DnType::CommonName, "carol");
        let key = rcgen::KeyPair::generate().unwrap();
        let cert = params.self_signed(&key).unwrap();
        let a = Authenticator::new(false);
        let both = Credentials {
            client_certificate: Some(cert.der()),
            authorization: Some("Bearer unknown"),
        };
        assert_eq!(a.authenticate(&both).unwrap().name, "carol");
        // A certificate without a common name names nobody: the token decides.
        let mut nameless = rcgen::CertificateParams::new(vec![]).unwrap();
        nameless.distinguished_name = rcgen::DistinguishedName::new();
        let nameless = nameless.self_signed(&key).unwrap();
        let c = Credentials {
            client_certificate: Some(nameless.der()),
            authorization: Some("Bearer unknown"),
        };
        assert_eq!(a.authenticate(&c), Err(AuthnError::Invalid));
    }
}
