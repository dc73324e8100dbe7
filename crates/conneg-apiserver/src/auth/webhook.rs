//! Delegated authentication and authorization: a `TokenReview` or `SubjectAccessReview` posted
//! to the API a kubeconfig names (kube-apiserver itself, for an aggregated server), as
//! Kubernetes' `--authentication-kubeconfig` and `--authorization-kubeconfig` do. Answers are
//! cached for a while (`--authentication-token-webhook-cache-ttl`,
//! `--authorization-webhook-cache-authorized-ttl`, `...-unauthorized-ttl`), in a bounded map.
//!
//! The kubeconfig's current context (or its only cluster and user) gives the server URL, the
//! CA to trust (`certificate-authority[-data]`), and the client's credentials
//! (`client-certificate[-data]` and `client-key[-data]`, or `token`).

use std::collections::HashMap;
use std::hash::Hash;
use std::path::Path;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use base64::Engine as _;
use bytes::Bytes;
use http_body_util::{BodyExt as _, Full, Limited};
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use serde::Deserialize;
use serde_json::{Value, json};

use super::{Attributes, Decision, UserInfo};

/// How long one review may take.
const TIMEOUT: Duration = Duration::from_secs(10);
/// The largest review answer read.
const MAX_ANSWER_BYTES: usize = 1 << 20;
/// The most answers cached at once.
const MAX_CACHED: usize = 4096;

/// A client of the reviewing API.
#[derive(Clone)]
pub struct Webhook {
    client: Client<hyper_rustls::HttpsConnector<HttpConnector>, Full<Bytes>>,
    server: String,
    token: Option<String>,
}

impl std::fmt::Debug for Webhook {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Webhook")
            .field("server", &self.server)
            .finish_non_exhaustive()
    }
}

#[derive(Deserialize)]
struct Kubeconfig {
    #[serde(default)]
    clusters: Vec<Named<Cluster>>,
    #[serde(default)]
    users: Vec<Named<User>>,
    #[serde(default)]
    contexts: Vec<Named<Context>>,
    #[serde(default, rename = "current-context")]
    current_context: String,
}

#[derive(Deserialize)]
struct Named<T> {
    name: String,
    #[serde(alias = "cluster", alias = "user", alias = "context")]
    value: T,
}

#[derive(Deserialize)]
#[serde(rename_all = "kebab-case")]
struct Cluster {
    server: String,
    certificate_authority: Option<String>,
    certificate_authority_data: Option<String>,
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "kebab-case")]
struct User {
    client_certificate: Option<String>,
    client_key: Option<String>,
    client_certificate_data: Option<String>,
    client_key_data: Option<String>,
    token: Option<String>,
}

#[derive(Deserialize)]
struct Context {
    cluster: String,
    #[serde(default)]
    user: String,
}

/// PEM bytes from a file path or base64 data, relative paths resolved against `base`.
fn pem(
    base: &Path,
    file: Option<&String>,
    data: Option<&String>,
) -> Result<Option<Vec<u8>>, String> {
    if let Some(d) = data {
        return base64::engine::general_purpose::STANDARD
            .decode(d.trim())
            .map(Some)
            .map_err(|e| format!("base64 data: {e}"));
    }
    file.map(|f| std::fs::read(base.join(f)).map_err(|e| format!("{f}: {e}")))
        .transpose()
}

impl Webhook {
    /// The client a kubeconfig file describes; the error names what is wrong in it.
    pub fn from_kubeconfig(path: &Path) -> Result<Webhook, String> {
        let what = |e: String| format!("kubeconfig {}: {e}", path.display());
        let text = std::fs::read_to_string(path).map_err(|e| what(e.to_string()))?;
        let config: Kubeconfig = serde_norway::from_str(&text).map_err(|e| what(e.to_string()))?;
        let base = path.parent().unwrap_or(Path::new("."));
        let context = config
            .contexts
            .iter()
            .find(|c| c.name == config.current_context)
            .map(|c| &c.value);
        let cluster = match context {
            Some(c) => config.clusters.iter().find(|x| x.name == c.cluster),
            None => config.clusters.first(),
        }
        .ok_or_else(|| what("no cluster".into()))?;
        let user = match context {
            Some(c) => config.users.iter().find(|x| x.name == c.user),
            None => config.users.first(),
        }
        .map(|u| &u.value);
        let default_user = User::default();
        let user = user.unwrap_or(&default_user);

        let mut roots = rustls::RootCertStore::empty();
        let ca = pem(
            base,
            cluster.value.certificate_authority.as_ref(),
            cluster.value.certificate_authority_data.as_ref(),
        )
        .map_err(what)?
        .ok_or_else(|| what("the cluster has no certificate-authority".into()))?;
        for cert in CertificateDer::pem_slice_iter(&ca) {
            roots
                .add(cert.map_err(|e| what(e.to_string()))?)
                .map_err(|e| what(e.to_string()))?;
        }
        let builder = rustls::ClientConfig::builder_with_provider(std::sync::Arc::new(
            rustls::crypto::ring::default_provider(),
        ))
        .with_safe_default_protocol_versions()
        .map_err(|e| what(e.to_string()))?
        .with_root_certificates(roots);
        let cert = pem(
            base,
            user.client_certificate.as_ref(),
            user.client_certificate_data.as_ref(),
        )
        .map_err(what)?;
        let key = pem(
            base,
            user.client_key.as_ref(),
            user.client_key_data.as_ref(),
        )
        .map_err(what)?;
        let tls = match (cert, key) {
            (Some(cert), Some(key)) => {
                let chain = CertificateDer::pem_slice_iter(&cert)
                    .collect::<Result<Vec<_>, _>>()
                    .map_err(|e| what(e.to_string()))?;
                let key = PrivateKeyDer::from_pem_slice(&key).map_err(|e| what(e.to_string()))?;
                builder
                    .with_client_auth_cert(chain, key)
                    .map_err(|e| what(e.to_string()))?
            }
            (None, None) => builder.with_no_client_auth(),
            _ => return Err(what("a client certificate needs its key".into())),
        };
        let connector = hyper_rustls::HttpsConnectorBuilder::new()
            .with_tls_config(tls)
            .https_only()
            .enable_http1()
            .build();
        Ok(Webhook {
            client: Client::builder(TokioExecutor::new()).build(connector),
            server: cluster.value.server.trim_end_matches('/').to_owned(),
            token: user.token.clone(),
        })
    }

    /// Posts a review to `path` and answers its `status`.
    async fn review(&self, path: &str, review: &Value) -> Result<Value, String> {
        let mut req = http::Request::post(format!("{}{path}", self.server))
            .header(http::header::CONTENT_TYPE, "application/json")
            .header(http::header::ACCEPT, "application/json");
        if let Some(t) = &self.token {
            req = req.header(http::header::AUTHORIZATION, format!("Bearer {t}"));
        }
        let req = req
            .body(Full::new(Bytes::from(review.to_string())))
            .map_err(|e| e.to_string())?;
        let call = async {
            let resp = self.client.request(req).await.map_err(|e| e.to_string())?;
            let status = resp.status();
            let body = Limited::new(resp.into_body(), MAX_ANSWER_BYTES)
                .collect()
                .await
                .map_err(|e| e.to_string())?
                .to_bytes();
            if !status.is_success() {
                return Err(format!("{path}: {status}"));
            }
            let v: Value = serde_json::from_slice(&body).map_err(|e| e.to_string())?;
            Ok(v.get("status").cloned().unwrap_or(Value::Null))
        };
        tokio::time::timeout(TIMEOUT, call)
            .await
            .map_err(|_| format!("{path}: no answer within {TIMEOUT:?}"))?
    }
}

/// Answers kept until they expire; bounded (when full, expired answers go, then all).
#[derive(Debug)]
struct Cache<K, V> {
    entries: Mutex<HashMap<K, (Instant, V)>>,
}

impl<K: Hash + Eq, V: Clone> Cache<K, V> {
    fn new() -> Self {
        Cache {
            entries: Mutex::new(HashMap::new()),
        }
    }

    fn get(&self, k: &K) -> Option<V> {
        let entries = self.entries.lock().unwrap_or_else(|e| e.into_inner());
        entries
            .get(k)
            .filter(|(until, _)| *until > Instant::now())
            .map(|(_, v)| v.clone())
    }

    fn put(&self, k: K, v: V, ttl: Duration) {
        if ttl.is_zero() {
            return;
        }
        let mut entries = self.entries.lock().unwrap_or_else(|e| e.into_inner());
        if entries.len() >= MAX_CACHED {
            let now = Instant::now();
            entries.retain(|_, (until, _)| *until > now);
            if entries.len() >= MAX_CACHED {
                entries.clear();
            }
        }
        entries.insert(k, (Instant::now() + ttl, v));
    }
}

/// Bearer tokens checked by `TokenReview` (`--authentication-kubeconfig`).
#[derive(Debug)]
pub struct TokenWebhook {
    hook: Webhook,
    ttl: Duration,
    cache: Cache<String, Option<UserInfo>>,
}

impl TokenWebhook {
    /// Reviews tokens with `hook`, keeping answers for `ttl`.
    pub fn new(hook: Webhook, ttl: Duration) -> TokenWebhook {
        TokenWebhook {
            hook,
            ttl,
            cache: Cache::new(),
        }
    }

    /// The user of `token`, `None` when the reviewer says it is not authenticated. An error
    /// (the reviewer cannot be reached) is not cached.
    pub async fn review(&self, token: &str) -> Result<Option<UserInfo>, String> {
        if let Some(hit) = self.cache.get(&token.to_owned()) {
            return Ok(hit);
        }
        let status = self
            .hook
            .review(
                "/apis/authentication.k8s.io/v1/tokenreviews",
                &json!({"apiVersion": "authentication.k8s.io/v1", "kind": "TokenReview",
                        "spec": {"token": token}}),
            )
            .await?;
        let user = (status["authenticated"] == true).then(|| {
            let u = &status["user"];
            let mut groups: Vec<String> = u["groups"]
                .as_array()
                .map(|g| {
                    g.iter()
                        .filter_map(Value::as_str)
                        .map(String::from)
                        .collect()
                })
                .unwrap_or_default();
            if !groups.iter().any(|g| g == "system:authenticated") {
                groups.push("system:authenticated".into());
            }
            UserInfo {
                name: u["username"].as_str().unwrap_or_default().to_owned(),
                uid: u["uid"].as_str().unwrap_or_default().to_owned(),
                groups,
            }
        });
        self.cache.put(token.to_owned(), user.clone(), self.ttl);
        Ok(user)
    }
}

/// Decisions asked of `SubjectAccessReview` (`--authorization-mode=Webhook`,
/// `--authorization-kubeconfig`).
#[derive(Debug)]
pub struct AccessWebhook {
    hook: Webhook,
    allowed_ttl: Duration,
    denied_ttl: Duration,
    cache: Cache<String, Option<Decision>>,
}

impl AccessWebhook {
    /// Asks `hook`, keeping allowed answers for `allowed_ttl` and the others for
    /// `denied_ttl`.
    pub fn new(hook: Webhook, allowed_ttl: Duration, denied_ttl: Duration) -> AccessWebhook {
        AccessWebhook {
            hook,
            allowed_ttl,
            denied_ttl,
            cache: Cache::new(),
        }
    }

    /// The reviewer's decision: `Some(Allow)`, `Some(Deny)` (denied outright), or `None`
    /// (no opinion: the next mode decides). An unreachable reviewer has no opinion.
    pub async fn review(&self, user: &UserInfo, a: &Attributes) -> Option<Decision> {
        let mut spec = json!({"user": user.name, "groups": user.groups});
        if !user.uid.is_empty() {
            spec["uid"] = json!(user.uid);
        }
        if a.resource_request {
            spec["resourceAttributes"] = json!({
                "namespace": a.namespace, "verb": a.verb, "group": a.api_group,
                "version": a.api_version, "resource": a.resource,
                "subresource": a.subresource, "name": a.name,
            });
        } else {
            spec["nonResourceAttributes"] = json!({"path": a.path, "verb": a.verb});
        }
        let key = spec.to_string();
        if let Some(hit) = self.cache.get(&key) {
            return hit;
        }
        let review = json!({"apiVersion": "authorization.k8s.io/v1",
                            "kind": "SubjectAccessReview", "spec": spec});
        let status = match self
            .hook
            .review(
                "/apis/authorization.k8s.io/v1/subjectaccessreviews",
                &review,
            )
            .await
        {
            Ok(s) => s,
            Err(e) => {
                tracing::warn!("authorization webhook: {e}");
                return None;
            }
        };
        let reason = status["reason"].as_str().unwrap_or_default().to_owned();
        let decision = if status["allowed"] == true {
            Some(Decision::Allow)
        } else if status["denied"] == true {
            Some(Decision::Deny(reason))
        } else {
            None
        };
        let ttl = if decision == Some(Decision::Allow) {
            self.allowed_ttl
        } else {
            self.denied_ttl
        };
        self.cache.put(key, decision.clone(), ttl);
        decision
    }
}
