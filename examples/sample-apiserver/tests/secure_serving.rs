//! Secure serving with kubectl as the client: HTTPS with the self-signed certificate kept in
//! `--cert-dir`, users from client certificates and bearer tokens, ABAC decisions,
//! impersonation (`kubectl --as`), 401 without credentials, and a serving certificate rotated
//! on disk without a restart; the front proxy's identity headers, believed only with its
//! certificate, over HTTP/1.1 and HTTP/2 alike.

mod common;

use std::path::Path;
use std::process::Command;

use common::{Server, h2, tempdir};
use http_body_util::BodyExt as _;

const POLICIES: &str = r#"{"apiVersion":"abac.authorization.kubernetes.io/v1beta1","kind":"Policy","spec":{"user":"alice","namespace":"*","resource":"*","apiGroup":"*"}}
{"apiVersion":"abac.authorization.kubernetes.io/v1beta1","kind":"Policy","spec":{"user":"bob","namespace":"*","resource":"*","apiGroup":"*","readonly":true}}
{"apiVersion":"abac.authorization.kubernetes.io/v1beta1","kind":"Policy","spec":{"group":"system:authenticated","nonResourcePath":"*","readonly":true}}
"#;

const FLUNDER: &str = "apiVersion: wardle.example.com/v1beta1
kind: Flunder
metadata:
  name: secure
  namespace: default
spec:
  referenceType: Flunder
  flunderReference: x
";

/// Whether kubectl is missing (then the test says loudly that it is skipped).
fn skip_without_kubectl() -> bool {
    let available = Command::new("kubectl")
        .args(["version", "--client"])
        .output()
        .is_ok_and(|o| o.status.success());
    if !available {
        eprintln!("\n!!!!! kubectl not on PATH: SKIPPING the secure-serving test !!!!!\n");
    }
    !available
}

/// A CA, and a certificate it signs for `cn` in organization `org` (PEM files in `dir`).
struct Ca {
    cert: rcgen::Certificate,
    key: rcgen::KeyPair,
}

impl Ca {
    fn new(name: &str) -> Ca {
        let mut params = rcgen::CertificateParams::new(vec![]).unwrap();
        params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
        params
            .distinguished_name
            .push(rcgen::DnType::CommonName, name);
        let key = rcgen::KeyPair::generate().unwrap();
        let cert = params.self_signed(&key).unwrap();
        Ca { cert, key }
    }

    /// Writes a certificate signed by this CA (client or server) and its key; returns their
    /// paths.
    fn issue(
        &self,
        dir: &Path,
        file: &str,
        cn: &str,
        org: &str,
        sans: &[&str],
    ) -> (String, String) {
        let mut params =
            rcgen::CertificateParams::new(sans.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>())
                .unwrap();
        params.distinguished_name = rcgen::DistinguishedName::new();
        params
            .distinguished_name
            .push(rcgen::DnType::CommonName, cn);
        if !org.is_empty() {
            params
                .distinguished_name
                .push(rcgen::DnType::OrganizationName, org);
        }
        let key = rcgen::KeyPair::generate().unwrap();
        let cert = params.signed_by(&key, &self.cert, &self.key).unwrap();
        let (c, k) = (
            dir.join(format!("{file}.crt")),
            dir.join(format!("{file}.key")),
        );
        std::fs::write(&c, cert.pem()).unwrap();
        std::fs::write(&k, key.serialize_pem()).unwrap();
        (c.display().to_string(), k.display().to_string())
    }

    fn write(&self, path: &Path) -> String {
        std::fs::write(path, self.cert.pem()).unwrap();
        path.display().to_string()
    }
}

/// The server over HTTPS on a free loopback port, in-memory storage, its self-signed
/// certificate kept in `dir/certs`, with `args`; and that certificate directory.
fn secure_server(dir: &Path, args: &[&str]) -> (Server, std::path::PathBuf) {
    let cert_dir = dir.join("certs");
    let mut all = vec![
        "--storage",
        "memory",
        "--secure-port",
        "0",
        "--bind-address",
        "127.0.0.1",
        "--cert-dir",
        cert_dir.to_str().unwrap(),
    ];
    all.extend_from_slice(args);
    (Server::start(&dir.join("data"), &all), cert_dir)
}

/// kubectl with `kubeconfig`, as `user`; (success, stdout, stderr).
fn kubectl(kubeconfig: &Path, user: &str, args: &[&str]) -> (bool, String, String) {
    let out = Command::new("kubectl")
        .env("KUBECONFIG", kubeconfig)
        .env("HOME", kubeconfig.parent().unwrap())
        .args(["--user", user, "--request-timeout", "20s"])
        .args(args)
        .output()
        .expect("run kubectl");
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn kubeconfig(dir: &Path, server: &str, ca: &str, users: &[(&str, String)]) -> std::path::PathBuf {
    let mut text = format!(
        "apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster:\n    server: https://{server}\n    certificate-authority: {ca}\ncontexts:\n- name: c\n  context: {{cluster: c, namespace: default}}\ncurrent-context: c\nusers:\n"
    );
    for (name, body) in users {
        text.push_str(&format!("- name: {name}\n  user: {body}\n"));
    }
    let path = dir.join("kubeconfig");
    std::fs::write(&path, text).unwrap();
    path
}

#[test]
fn certificates_tokens_abac_and_impersonation() {
    if skip_without_kubectl() {
        return;
    }
    let dir = tempdir();
    let d = dir.path();
    let clients = Ca::new("clients");
    let client_ca = clients.write(&d.join("client-ca.crt"));
    let (alice_crt, alice_key) = clients.issue(d, "alice", "alice", "dev", &[]);
    // A certificate from another CA names nobody this server trusts.
    let (mallory_crt, mallory_key) = Ca::new("other").issue(d, "mallory", "alice", "", &[]);
    std::fs::write(d.join("tokens.csv"), "t0k3n-bob,bob,2\n").unwrap();
    std::fs::write(d.join("policy.jsonl"), POLICIES).unwrap();
    let (server, cert_dir) = secure_server(
        d,
        &[
            "--client-ca-file",
            &client_ca,
            "--token-auth-file",
            d.join("tokens.csv").to_str().unwrap(),
            "--anonymous-auth=false",
            "--authorization-mode",
            "ABAC",
            "--authorization-policy-file",
            d.join("policy.jsonl").to_str().unwrap(),
        ],
    );
    // The self-signed serving certificate was made in --cert-dir: the client trusts it.
    let serving_ca = cert_dir.join("apiserver.crt");
    let config = kubeconfig(
        d,
        &server.addr,
        serving_ca.to_str().unwrap(),
        &[
            (
                "alice",
                format!("{{client-certificate: {alice_crt}, client-key: {alice_key}}}"),
            ),
            (
                "mallory",
                format!("{{client-certificate: {mallory_crt}, client-key: {mallory_key}}}"),
            ),
            ("bob", "{token: t0k3n-bob}".to_owned()),
            // kubectl asks for a user name when a user has no credentials at all.
            ("nobody", "{token: not-a-known-token}".to_owned()),
        ],
    );
    let file = d.join("flunder.yaml");
    std::fs::write(&file, FLUNDER).unwrap();
    let file = file.to_str().unwrap();

    // alice (client certificate) may write.
    let (ok, out, err) = kubectl(&config, "alice", &["create", "-f", file]);
    assert!(ok, "{out}{err}");
    // bob (token) may read, not write: Kubernetes' 403 message.
    let (ok, out, err) = kubectl(&config, "bob", &["get", "flunders", "-o", "name"]);
    assert!(
        ok && out.contains("flunder.wardle.example.com/secure"),
        "{out}{err}"
    );
    let (ok, _, err) = kubectl(&config, "bob", &["delete", "flunder", "secure"]);
    assert!(!ok);
    assert!(
        err.contains(r#"flunders.wardle.example.com "secure" is forbidden: User "bob" cannot delete resource "flunders" in API group "wardle.example.com" in the namespace "default""#),
        "{err}"
    );
    // alice acting as bob is bob; bob may not act as alice.
    let (ok, _, err) = kubectl(
        &config,
        "alice",
        &["--as", "bob", "delete", "flunder", "secure"],
    );
    assert!(!ok && err.contains(r#"User "bob" cannot delete"#), "{err}");
    let (ok, _, err) = kubectl(&config, "bob", &["--as", "alice", "get", "flunders"]);
    assert!(!ok);
    assert!(
        err.contains(r#"users "alice" is forbidden: User "bob" cannot impersonate resource "users" in API group """#),
        "{err}"
    );
    // An unknown token, or a certificate from an unknown CA: no user.
    for user in ["nobody", "mallory"] {
        let (ok, _, err) = kubectl(&config, user, &["get", "flunders"]);
        assert!(!ok, "{user}");
        assert!(
            err.contains("Unauthorized") || err.contains("certificate"),
            "{user}: {err}"
        );
    }
}

#[test]
fn a_rotated_serving_certificate_is_served_without_a_restart() {
    if skip_without_kubectl() {
        return;
    }
    let dir = tempdir();
    let d = dir.path();
    let (first, second) = (Ca::new("first"), Ca::new("second"));
    let (crt, key) = first.issue(d, "serving", "server", "", &["127.0.0.1"]);
    // kubectl asks for a user name when a user has no credentials at all.
    let tokens = d.join("tokens.csv");
    std::fs::write(&tokens, "t0k3n,anyone,1\n").unwrap();
    let server = Server::start(
        &d.join("data"),
        &[
            "--storage",
            "memory",
            "--secure-port",
            "0",
            "--bind-address",
            "127.0.0.1",
            "--tls-cert-file",
            &crt,
            "--tls-private-key-file",
            &key,
            "--token-auth-file",
            tokens.to_str().unwrap(),
        ],
    );
    let users = [("anyone", "{token: t0k3n}".to_owned())];
    let trusts_first = kubeconfig(d, &server.addr, &first.write(&d.join("first.crt")), &users);
    let (ok, out, err) = kubectl(&trusts_first, "anyone", &["get", "--raw", "/readyz"]);
    assert!(ok, "{out}{err}");

    // Rotate: a certificate from the second CA replaces the files.
    std::thread::sleep(std::time::Duration::from_millis(1100));
    second.issue(d, "serving", "server", "", &["127.0.0.1"]);
    let trusts_second = kubeconfig(
        d,
        &server.addr,
        &second.write(&d.join("second.crt")),
        &users,
    );
    let mut served = false;
    for _ in 0..50 {
        if kubectl(&trusts_second, "anyone", &["get", "--raw", "/readyz"]).0 {
            served = true;
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(200));
    }
    assert!(served, "the rotated certificate was never served");
    let (ok, _, err) = kubectl(&trusts_second, "anyone", &["get", "--raw", "/readyz"]);
    assert!(ok, "{err}");
    // kubeconfig() rewrote the same file: write the first CA's again to check it fails now.
    let trusts_first = kubeconfig(
        d,
        &server.addr,
        &d.join("first.crt").display().to_string(),
        &users,
    );
    let (ok, _, err) = kubectl(&trusts_first, "anyone", &["get", "--raw", "/readyz"]);
    assert!(!ok, "the old certificate is still served");
    assert!(err.contains("certificate"), "{err}");
}

#[test]
fn plain_http_off_loopback_is_refused_with_the_flags_to_set() {
    let dir = tempdir();
    let out = Command::new(env!("CARGO_BIN_EXE_sample-apiserver"))
        .args(["--storage", "memory", "--listen", "0.0.0.0:0", "--data-dir"])
        .arg(dir.path())
        .output()
        .expect("run sample-apiserver");
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("refusing to serve plain HTTP on 0.0.0.0:0") && err.contains("--secure-port"),
        "{err}"
    );
    // A cipher suite rustls does not have stops the start, naming those it has.
    let out = Command::new(env!("CARGO_BIN_EXE_sample-apiserver"))
        .args([
            "--storage",
            "memory",
            "--secure-port",
            "0",
            "--bind-address",
            "127.0.0.1",
        ])
        .args([
            "--tls-cipher-suites",
            "TLS_RSA_WITH_RC4_128_SHA",
            "--cert-dir",
        ])
        .arg(dir.path().join("certs"))
        .output()
        .expect("run sample-apiserver");
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("TLS_RSA_WITH_RC4_128_SHA is not supported")
            && err.contains("TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256"),
        "{err}"
    );
    // TLS flags need the secure port.
    let out = Command::new(env!("CARGO_BIN_EXE_sample-apiserver"))
        .args(["--client-ca-file", "ca.crt"])
        .output()
        .expect("run sample-apiserver");
    assert!(!out.status.success());
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("--secure-port"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// One HTTPS request over a fresh connection that trusts `ca`, with a client certificate if
/// given; the status code and body.
/// The protocol a test client speaks over TLS.
#[derive(Clone, Copy, Debug)]
enum Protocol {
    Http1,
    Http2,
}

/// `req` over TLS (trusting `ca`, with a client certificate if given) in `protocol`: the
/// status and body.
fn https(
    addr: &str,
    ca: &Path,
    client: Option<(&str, &str)>,
    protocol: Protocol,
    req: http::Request<bytes::Bytes>,
) -> (u16, String) {
    let runtime = h2::runtime();
    let (code, body) = runtime.block_on(async {
        match protocol {
            Protocol::Http2 => {
                let mut c = h2::client(addr, ca, client).await;
                let (code, _, body) = h2::send(&mut c, req).await;
                (code, body)
            }
            Protocol::Http1 => {
                let io = h2::tls(addr, ca, client, &[b"http/1.1"]).await;
                let (mut c, conn) =
                    hyper::client::conn::http1::handshake(hyper_util::rt::TokioIo::new(io))
                        .await
                        .unwrap();
                tokio::spawn(conn);
                let (mut parts, body) = req.into_parts();
                parts.uri = parts
                    .uri
                    .path_and_query()
                    .unwrap()
                    .as_str()
                    .parse()
                    .unwrap();
                parts
                    .headers
                    .insert("host", http::HeaderValue::from_static("127.0.0.1"));
                let req = http::Request::from_parts(parts, http_body_util::Full::new(body));
                let resp = c.send_request(req).await.unwrap();
                let code = resp.status().as_u16();
                let body = resp.into_body().collect().await.unwrap().to_bytes();
                (code, body)
            }
        }
    });
    (code, String::from_utf8_lossy(&body).into_owned())
}

#[test]
fn front_proxy_headers_are_believed_only_with_its_certificate() {
    let dir = tempdir();
    let d = dir.path();
    let (clients, proxies) = (Ca::new("clients"), Ca::new("front-proxy-ca"));
    let client_ca = clients.write(&d.join("client-ca.crt"));
    let proxy_ca = proxies.write(&d.join("proxy-ca.crt"));
    let alice = clients.issue(d, "alice", "alice", "dev", &[]);
    let proxy = proxies.issue(d, "proxy", "front-proxy-client", "", &[]);
    let stranger = proxies.issue(d, "stranger", "someone-else", "", &[]);
    std::fs::write(d.join("policy.jsonl"), POLICIES).unwrap();
    let (server, cert_dir) = secure_server(
        d,
        &[
            "--client-ca-file",
            &client_ca,
            "--requestheader-client-ca-file",
            &proxy_ca,
            "--requestheader-allowed-names",
            "front-proxy-client",
            "--anonymous-auth=false",
            "--authorization-mode",
            "ABAC",
            "--authorization-policy-file",
            d.join("policy.jsonl").to_str().unwrap(),
        ],
    );
    let serving_ca = cert_dir.join("apiserver.crt");
    let create = |as_user: &str, name: &str| {
        let body = format!(
            r#"{{"metadata":{{"name":"{name}"}},"spec":{{"referenceType":"Flunder","flunderReference":"x"}}}}"#
        );
        http::Request::post(
            "https://127.0.0.1/apis/wardle.example.com/v1beta1/namespaces/default/flunders",
        )
        .header("content-type", "application/json")
        .header("x-remote-user", as_user)
        .header("x-remote-group", "readers")
        .body(bytes::Bytes::from(body))
        .unwrap()
    };
    fn with(p: &(String, String)) -> Option<(&str, &str)> {
        Some((p.0.as_str(), p.1.as_str()))
    }
    // The same over HTTP/1.1 and HTTP/2: the certificate is the connection's, the headers
    // each request's.
    for (protocol, name) in [(Protocol::Http1, "proxied"), (Protocol::Http2, "proxied2")] {
        let call = |client, as_user| {
            https(
                &server.addr,
                &serving_ca,
                client,
                protocol,
                create(as_user, name),
            )
        };
        // Through the proxy, bob (read-only) may not create: the answer names bob.
        let (code, body) = call(with(&proxy), "bob");
        assert_eq!(code, 403, "{protocol:?}: {body}");
        assert!(body.contains(r#"User \"bob\" cannot create"#), "{body}");
        // Through the proxy as alice: created.
        let (code, body) = call(with(&proxy), "alice");
        assert_eq!(code, 201, "{protocol:?}: {body}");
        // alice's own certificate with the headers: the headers are ignored, she is alice.
        let (code, body) = call(with(&alice), "bob");
        assert_eq!(
            code, 409,
            "{protocol:?}: alice may create; it exists: {body}"
        );
        // A proxy certificate with a name not allowed, or no certificate: nobody.
        for client in [with(&stranger), None] {
            let (code, body) = call(client, "alice");
            assert_eq!(code, 401, "{protocol:?}: {body}");
        }
    }
}

/// A TokenReview and SubjectAccessReview webhook over TLS, as kube-apiserver answers them for
/// an aggregated server: tokens `webhook-token` are wendy (group `reviewed`); wendy may read,
/// deletes are denied with a reason, anything else has no opinion. It wants its own bearer
/// token, and counts the token reviews it answers.
struct ReviewServer {
    addr: std::net::SocketAddr,
    token_reviews: std::sync::Arc<std::sync::atomic::AtomicUsize>,
    _runtime: tokio::runtime::Runtime,
}

struct TlsListener {
    tcp: tokio::net::TcpListener,
    tls: tokio_rustls::TlsAcceptor,
}

impl axum::serve::Listener for TlsListener {
    type Io = tokio_rustls::server::TlsStream<tokio::net::TcpStream>;
    type Addr = std::net::SocketAddr;
    async fn accept(&mut self) -> (Self::Io, Self::Addr) {
        loop {
            let (io, addr) = axum::serve::Listener::accept(&mut self.tcp).await;
            if let Ok(tls) = self.tls.accept(io).await {
                return (tls, addr);
            }
        }
    }
    fn local_addr(&self) -> std::io::Result<Self::Addr> {
        self.tcp.local_addr()
    }
}

impl ReviewServer {
    fn start(cert: &str, key: &str) -> ReviewServer {
        use axum::http::{HeaderMap, StatusCode};
        use axum::routing::post;
        use serde_json::{Value, json};
        use std::sync::Arc;
        use std::sync::atomic::{AtomicUsize, Ordering};

        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .unwrap();
        let token_reviews = Arc::new(AtomicUsize::new(0));
        let counter = token_reviews.clone();
        let authorized = |h: &HeaderMap| {
            h.get("authorization").and_then(|v| v.to_str().ok()) == Some("Bearer hook-secret")
        };
        let app = axum::Router::new()
            .route(
                "/apis/authentication.k8s.io/v1/tokenreviews",
                post(move |h: HeaderMap, body: axum::body::Bytes| async move {
                    let review: Value = serde_json::from_slice(&body).unwrap_or_default();
                    if !authorized(&h) {
                        return (StatusCode::UNAUTHORIZED, String::new());
                    }
                    counter.fetch_add(1, Ordering::SeqCst);
                    let status = if review["spec"]["token"] == "webhook-token" {
                        json!({"authenticated": true,
                               "user": {"username": "wendy", "uid": "w1", "groups": ["reviewed"]}})
                    } else {
                        json!({"authenticated": false})
                    };
                    (StatusCode::CREATED, json!({"status": status}).to_string())
                }),
            )
            .route(
                "/apis/authorization.k8s.io/v1/subjectaccessreviews",
                post(move |h: HeaderMap, body: axum::body::Bytes| async move {
                    let review: Value = serde_json::from_slice(&body).unwrap_or_default();
                    if !authorized(&h) {
                        return (StatusCode::UNAUTHORIZED, String::new());
                    }
                    let spec = &review["spec"];
                    let verb = spec["resourceAttributes"]["verb"]
                        .as_str()
                        .or(spec["nonResourceAttributes"]["verb"].as_str())
                        .unwrap_or_default();
                    let status = match (spec["user"].as_str(), verb) {
                        (Some("wendy"), "get" | "list" | "watch") => json!({"allowed": true}),
                        (_, "delete") => {
                            json!({"allowed": false, "denied": true, "reason": "no deletes here"})
                        }
                        _ => json!({"allowed": false}),
                    };
                    (StatusCode::CREATED, json!({"status": status}).to_string())
                }),
            );
        let options = conneg_apiserver::tls::TlsOptions {
            cert_file: Some(cert.into()),
            key_file: Some(key.into()),
            ..Default::default()
        };
        let config = conneg_apiserver::tls::server_config(&options).unwrap();
        let (tx, rx) = std::sync::mpsc::channel();
        runtime.spawn(async move {
            let tcp = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
            tx.send(tcp.local_addr().unwrap()).unwrap();
            let listener = TlsListener {
                tcp,
                tls: tokio_rustls::TlsAcceptor::from(config),
            };
            axum::serve(listener, app).await.unwrap();
        });
        ReviewServer {
            addr: rx.recv().unwrap(),
            token_reviews,
            _runtime: runtime,
        }
    }
}

#[test]
fn token_and_access_reviews_through_webhooks() {
    if skip_without_kubectl() {
        return;
    }
    let dir = tempdir();
    let d = dir.path();
    let hooks_ca = Ca::new("webhooks");
    let (cert, key) = hooks_ca.issue(d, "hook", "hook", "", &["127.0.0.1"]);
    let reviewer = ReviewServer::start(&cert, &key);
    let hook_ca = hooks_ca.write(&d.join("hook-ca.crt"));
    let hook_kubeconfig = d.join("hook.kubeconfig");
    std::fs::write(
        &hook_kubeconfig,
        format!(
            "apiVersion: v1\nkind: Config\nclusters:\n- name: hub\n  cluster:\n    server: https://{}\n    certificate-authority: {hook_ca}\nusers:\n- name: me\n  user:\n    token: hook-secret\ncontexts:\n- name: c\n  context: {{cluster: hub, user: me}}\ncurrent-context: c\n",
            reviewer.addr
        ),
    )
    .unwrap();
    let hook_kubeconfig = hook_kubeconfig.to_str().unwrap();
    let (server, cert_dir) = secure_server(
        d,
        &[
            "--anonymous-auth=false",
            "--authentication-kubeconfig",
            hook_kubeconfig,
            "--authorization-mode",
            "Webhook",
            "--authorization-kubeconfig",
            hook_kubeconfig,
        ],
    );
    let config = kubeconfig(
        d,
        &server.addr,
        cert_dir.join("apiserver.crt").to_str().unwrap(),
        &[
            ("wendy", "{token: webhook-token}".to_owned()),
            ("nobody", "{token: not-reviewed}".to_owned()),
        ],
    );
    // Reads are allowed by the webhook.
    let (ok, out, err) = kubectl(&config, "wendy", &["get", "flunders", "-o", "name"]);
    assert!(ok, "{out}{err}");
    let (ok, _, err) = kubectl(&config, "wendy", &["get", "flunders"]);
    assert!(ok, "{err}");
    // Several requests, one token review: the answer is cached.
    assert_eq!(
        reviewer
            .token_reviews
            .load(std::sync::atomic::Ordering::SeqCst),
        1
    );
    // A denial carries the webhook's reason; no opinion is a plain 403.
    let (ok, _, err) = kubectl(&config, "wendy", &["delete", "flunder", "x"]);
    assert!(!ok);
    assert!(
        err.contains(r#"User "wendy" cannot delete resource "flunders""#)
            && err.contains("no deletes here"),
        "{err}"
    );
    let file = d.join("flunder.yaml");
    std::fs::write(&file, FLUNDER).unwrap();
    let (ok, _, err) = kubectl(&config, "wendy", &["create", "-f", file.to_str().unwrap()]);
    assert!(
        !ok && err.contains(r#"User "wendy" cannot create"#),
        "{err}"
    );
    // A token the reviewer does not know: 401.
    let (ok, _, err) = kubectl(&config, "nobody", &["get", "flunders"]);
    assert!(!ok && err.contains("Unauthorized"), "{err}");
}
