//! Command-line options every server shares, named as Kubernetes' generic API server names
//! them: storage, serving (connections and timeouts), secure serving, authentication and
//! authorization. A binary flattens them into its own `clap` parser.

use std::path::PathBuf;
use std::time::Duration;

use crate::flowcontrol::Overload;
use crate::http2::Http2Limits;
use crate::serve::ConnLimits;
use crate::server::Serving;
use crate::storage::codec::{StorageCodec, StorageMediaType};
use crate::storage::etcd::{
    DEFAULT_COMPACTION_INTERVAL, DEFAULT_ETCD_PREFIX, DEFAULT_REQUEST_TIMEOUT,
};
use crate::storage::keys::Keys;
use crate::storage::{
    DEFAULT_HISTORY, DEFAULT_HISTORY_BYTES, DEFAULT_WATCH_BUFFER, DEFAULT_WATCH_BUFFER_BYTES,
    EmbeddedOptions, EmbeddedStore, History, MemoryStore, OpenedStorage, Result, Store,
    WatchBuffer, WatchCache, WatchCacheOptions,
};
#[cfg(feature = "etcd")]
use crate::storage::{EtcdOptions, EtcdStore, EtcdTls};
use crate::timeouts::Timeouts;

/// Which backend to use.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum StorageKind {
    /// On disk under `--data-dir` (redb); survives restarts.
    #[default]
    Embedded,
    /// In memory; lost on exit.
    Memory,
}

/// Storage flags.
#[derive(Debug, Clone, PartialEq, Eq, clap::Args)]
pub struct StorageArgs {
    /// Storage backend.
    #[arg(long = "storage", value_enum, default_value_t = StorageKind::Embedded)]
    pub kind: StorageKind,
    /// Directory of the embedded store: the file `<group's first label>.redb` inside
    /// (`wardle.redb` for `wardle.example.com`).
    #[arg(long, default_value = "./data")]
    pub data_dir: PathBuf,
    /// Format of stored objects: `cbor` (deterministic, d9d9f7-prefixed) or `json`. Either is
    /// read regardless.
    #[arg(long, default_value_t = StorageMediaType::Cbor)]
    pub storage_media_type: StorageMediaType,
    /// Revisions of history kept for watches and consistent paging.
    #[arg(long, default_value_t = DEFAULT_HISTORY)]
    pub history: u64,
    /// Bytes of objects that history may hold (memory and embedded storage: in memory and on
    /// disk); older revisions are compacted sooner when objects are large.
    #[arg(long, default_value_t = DEFAULT_HISTORY_BYTES)]
    pub history_bytes: usize,
    /// Events a watcher may fall behind before it is closed.
    #[arg(long, default_value_t = DEFAULT_WATCH_BUFFER)]
    pub watch_buffer: usize,
    /// Bytes of objects a watcher may fall behind before it is closed (with `--watch-buffer`,
    /// whichever comes first; the client re-watches).
    #[arg(long, default_value_t = DEFAULT_WATCH_BUFFER_BYTES)]
    pub watch_buffer_bytes: usize,
    /// Key prefix of the memory and embedded stores (default: `/registry/<group>`, as with
    /// etcd).
    #[arg(long)]
    pub storage_prefix: Option<String>,
    /// etcd client URLs, comma-separated (`http://127.0.0.1:2379`). When given, objects live
    /// in etcd (whatever `--storage` says) and several replicas can share them. Needs
    /// conneg-apiserver's `etcd` feature (on by default): a server built without it refuses
    /// this flag.
    #[arg(long, value_delimiter = ',', num_args = 1.., value_parser = etcd_server)]
    pub etcd_servers: Vec<String>,
    /// Prefix of every etcd key: objects are `<prefix>/<group>/<resource>/...`.
    #[arg(long, default_value = DEFAULT_ETCD_PREFIX)]
    pub etcd_prefix: String,
    /// How often this server compacts etcd to the last `--history` revisions (`5m`, `30s`,
    /// `0` never). Replicas coordinate, so one compaction happens per interval.
    #[arg(long, default_value = "5m", value_parser = parse_duration)]
    pub etcd_compaction_interval: Duration,
    /// Bound of every etcd request; past it the request fails with 504.
    #[arg(long, default_value = "5s", value_parser = parse_duration)]
    pub etcd_request_timeout: Duration,
    /// CA bundle (PEM) that etcd's serving certificate must chain to (`https://` servers).
    #[arg(long, requires = "etcd_servers")]
    pub etcd_cafile: Option<PathBuf>,
    /// Client certificate (PEM) for etcd's `--client-cert-auth`.
    #[arg(long, requires_all = ["etcd_servers", "etcd_keyfile"])]
    pub etcd_certfile: Option<PathBuf>,
    /// The client certificate's key (PEM).
    #[arg(long, requires_all = ["etcd_servers", "etcd_certfile"])]
    pub etcd_keyfile: Option<PathBuf>,
}

/// Authentication and authorization flags, named as Kubernetes' generic API server names them.
#[derive(Debug, Clone, PartialEq, Eq, clap::Args)]
pub struct AuthArgs {
    /// Allow requests without credentials, as user `system:anonymous` (group
    /// `system:unauthenticated`); otherwise they are 401.
    #[arg(long, default_value_t = true, action = clap::ArgAction::Set)]
    pub anonymous_auth: bool,
    /// Static bearer tokens: a CSV file of `token,user,uid[,"group1,group2"]` lines.
    #[arg(long)]
    pub token_auth_file: Option<PathBuf>,
    /// Authorization modes, tried in order: `AlwaysAllow`, `AlwaysDeny`, `ABAC`, `Webhook`.
    #[arg(long, value_delimiter = ',', default_value = "AlwaysAllow")]
    pub authorization_mode: Vec<String>,
    /// The ABAC policy file (one JSON policy per line), for `--authorization-mode=ABAC`.
    #[arg(long)]
    pub authorization_policy_file: Option<PathBuf>,
    /// Paths any user may reach (a trailing `*` matches a prefix).
    #[arg(long, value_delimiter = ',', default_value = "/healthz,/readyz,/livez")]
    pub authorization_always_allow_paths: Vec<String>,
    /// CA bundle (PEM) for client certificates: a certificate it signed authenticates its
    /// common name as the user and its organizations as the groups.
    #[arg(long, requires = "secure_port")]
    pub client_ca_file: Option<PathBuf>,
    /// CA bundle (PEM) of the front proxy (kube-apiserver's aggregator): a connection with a
    /// certificate it signed may name the user in the request headers.
    #[arg(long, requires = "secure_port")]
    pub requestheader_client_ca_file: Option<PathBuf>,
    /// Common names the front proxy's certificate may have (empty: any).
    #[arg(long, value_delimiter = ',')]
    pub requestheader_allowed_names: Vec<String>,
    /// Headers naming the user, first non-empty wins.
    #[arg(long, value_delimiter = ',', default_value = "X-Remote-User")]
    pub requestheader_username_headers: Vec<String>,
    /// Headers naming the user's groups.
    #[arg(long, value_delimiter = ',', default_value = "X-Remote-Group")]
    pub requestheader_group_headers: Vec<String>,
    /// Prefixes of headers carrying extra user fields (removed from every request; this
    /// server keeps no extra fields).
    #[arg(long, value_delimiter = ',', default_value = "X-Remote-Extra-")]
    pub requestheader_extra_headers_prefix: Vec<String>,
    /// A kubeconfig naming the API that reviews bearer tokens (`TokenReview`) unknown to the
    /// token file.
    #[arg(long)]
    pub authentication_kubeconfig: Option<PathBuf>,
    /// How long a token review's answer is kept.
    #[arg(long, default_value = "10s", value_parser = parse_duration)]
    pub authentication_token_webhook_cache_ttl: Duration,
    /// A kubeconfig naming the API asked by `--authorization-mode=Webhook`
    /// (`SubjectAccessReview`).
    #[arg(long)]
    pub authorization_kubeconfig: Option<PathBuf>,
    /// How long an "allowed" answer of the authorization webhook is kept.
    #[arg(long, default_value = "10s", value_parser = parse_duration)]
    pub authorization_webhook_cache_authorized_ttl: Duration,
    /// How long another answer of the authorization webhook is kept.
    #[arg(long, default_value = "10s", value_parser = parse_duration)]
    pub authorization_webhook_cache_unauthorized_ttl: Duration,
}

impl AuthArgs {
    /// Every CA a client certificate may chain to, for the TLS handshake.
    pub fn client_ca_files(&self) -> Vec<PathBuf> {
        self.client_ca_file
            .iter()
            .chain(&self.requestheader_client_ca_file)
            .cloned()
            .collect()
    }

    /// The authenticator and authorizer these flags describe, reading the files they name,
    /// answering refusals in one of `codecs` and counting users in `metrics`; the error says which flag or file is wrong.
    pub fn build(
        &self,
        codecs: conneg::Codecs,
        metrics: std::sync::Arc<crate::server::Metrics>,
    ) -> std::result::Result<crate::server::Auth, String> {
        use crate::auth::{
            AccessWebhook, Authenticator, Authorizer, Mode, Policy, RequestHeader, TokenWebhook,
            Webhook, X509,
        };
        let read = |flag: &str, p: &PathBuf| {
            std::fs::read_to_string(p).map_err(|e| format!("--{flag} {}: {e}", p.display()))
        };
        let mut authenticator = Authenticator::new(self.anonymous_auth);
        if let Some(ca) = &self.client_ca_file {
            authenticator = authenticator
                .with_x509(X509::new(ca.clone()).map_err(|e| format!("--client-ca-file: {e}"))?);
        }
        if let Some(path) = &self.authentication_kubeconfig {
            let hook = Webhook::from_kubeconfig(path)
                .map_err(|e| format!("--authentication-kubeconfig: {e}"))?;
            authenticator = authenticator.with_token_webhook(TokenWebhook::new(
                hook,
                self.authentication_token_webhook_cache_ttl,
            ));
        }
        if let Some(ca) = &self.requestheader_client_ca_file {
            let rh = RequestHeader::new(
                ca.clone(),
                self.requestheader_allowed_names.clone(),
                &self.requestheader_username_headers,
                &self.requestheader_group_headers,
                &self.requestheader_extra_headers_prefix,
            )
            .map_err(|e| format!("--requestheader-*: {e}"))?;
            authenticator = authenticator.with_request_header(rh);
        }
        if let Some(p) = &self.token_auth_file {
            authenticator = authenticator
                .with_token_file(&read("token-auth-file", p)?)
                .map_err(|e| format!("--token-auth-file {}: {e}", p.display()))?;
        }
        let mut modes = Vec::new();
        for mode in &self.authorization_mode {
            modes.push(match mode.as_str() {
                "AlwaysAllow" => Mode::AlwaysAllow,
                "AlwaysDeny" => Mode::AlwaysDeny,
                "ABAC" => {
                    let p = self.authorization_policy_file.as_ref().ok_or(
                        "--authorization-mode=ABAC needs --authorization-policy-file",
                    )?;
                    Mode::Abac(
                        Policy::parse_file(&read("authorization-policy-file", p)?)
                            .map_err(|e| format!("--authorization-policy-file {}: {e}", p.display()))?,
                    )
                }
                "Webhook" => {
                    let path = self.authorization_kubeconfig.as_ref().ok_or(
                        "--authorization-mode=Webhook needs --authorization-kubeconfig",
                    )?;
                    let hook = Webhook::from_kubeconfig(path)
                        .map_err(|e| format!("--authorization-kubeconfig: {e}"))?;
                    Mode::Webhook(std::sync::Arc::new(AccessWebhook::new(
                        hook,
                        self.authorization_webhook_cache_authorized_ttl,
                        self.authorization_webhook_cache_unauthorized_ttl,
                    )))
                }
                other => {
                    return Err(format!(
                        "--authorization-mode: unknown mode {other:?} (AlwaysAllow, AlwaysDeny, ABAC, Webhook)"
                    ));
                }
            });
        }
        Ok(crate::server::Auth {
            authenticator,
            authorizer: Authorizer::new(modes)
                .always_allow_paths(self.authorization_always_allow_paths.clone()),
            errors: conneg::Negotiator::new()
                .profile(conneg::Profile::Kubernetes)
                .codecs(codecs),
            metrics,
        })
    }
}

/// Secure serving flags, named as Kubernetes' generic API server names them. With
/// `--secure-port` the server serves HTTPS on `--bind-address`, instead of plain HTTP on
/// `--listen`.
#[derive(Debug, Clone, PartialEq, Eq, clap::Args)]
pub struct SecureServingArgs {
    /// Port to serve HTTPS on (0: any free port; the bound address is printed).
    #[arg(long, conflicts_with = "listen")]
    pub secure_port: Option<u16>,
    /// Address to serve HTTPS on.
    #[arg(long, default_value = "0.0.0.0")]
    pub bind_address: std::net::IpAddr,
    /// The serving certificate chain (PEM); without it, a self-signed certificate in
    /// `--cert-dir` is used (made the first time).
    #[arg(long, requires_all = ["secure_port", "tls_private_key_file"])]
    pub tls_cert_file: Option<PathBuf>,
    /// The serving certificate's private key (PEM).
    #[arg(long, requires_all = ["secure_port", "tls_cert_file"])]
    pub tls_private_key_file: Option<PathBuf>,
    /// Where the self-signed serving certificate is kept (`apiserver.crt`, `apiserver.key`).
    #[arg(long, default_value = "apiserver.local.config/certificates")]
    pub cert_dir: PathBuf,
    /// The lowest TLS version served: `VersionTLS12` or `VersionTLS13`.
    #[arg(long, default_value = "VersionTLS12")]
    pub tls_min_version: crate::tls::TlsVersion,
    /// TLS 1.2 cipher suites offered, by IANA name (default: rustls' AEAD ECDHE suites).
    #[arg(long, value_delimiter = ',', requires = "secure_port")]
    pub tls_cipher_suites: Vec<String>,
}

impl SecureServingArgs {
    /// The TLS acceptor these flags describe, asking for client certificates from
    /// `client_ca_files` ([`AuthArgs::client_ca_files`]), or `None` to serve plain HTTP; the
    /// error names the flag or file that is wrong.
    pub fn acceptor(
        &self,
        client_ca_files: Vec<PathBuf>,
    ) -> std::result::Result<Option<tokio_rustls::TlsAcceptor>, String> {
        if self.secure_port.is_none() {
            return Ok(None);
        }
        let bind = self.bind_address;
        let hosts = if bind.is_unspecified() {
            Vec::new()
        } else {
            vec![bind.to_string()]
        };
        let opts = crate::tls::TlsOptions {
            cert_file: self.tls_cert_file.clone(),
            key_file: self.tls_private_key_file.clone(),
            cert_dir: self.cert_dir.clone(),
            hosts,
            client_ca_files,
            min_version: self.tls_min_version,
            cipher_suites: self.tls_cipher_suites.clone(),
        };
        let config = crate::tls::server_config(&opts).map_err(|e| e.to_string())?;
        Ok(Some(tokio_rustls::TlsAcceptor::from(config)))
    }
}

/// Serving flags: how long a request and a connection may take, and how many connections may
/// be open (see `docs/limits.md`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::Args)]
pub struct ServeArgs {
    /// Time a request (other than a watch) has to produce its response; past it the answer is
    /// 504 `Timeout` (as kube-apiserver's `--request-timeout`).
    #[arg(long, default_value = "60s", value_parser = parse_duration)]
    pub request_timeout: Duration,
    /// Time from a request's first byte to the end of its head; past it the connection is
    /// closed (slowloris).
    #[arg(long, default_value = "32s", value_parser = parse_duration)]
    pub header_read_timeout: Duration,
    /// Time a connection may wait, with no request in flight, for its next request; past it
    /// the connection is closed.
    #[arg(long, default_value = "90s", value_parser = parse_duration)]
    pub idle_timeout: Duration,
    /// Time from a request's head to the end of its body; past it the read fails (400) and the
    /// connection is closed.
    #[arg(long, default_value = "30s", value_parser = parse_duration)]
    pub body_read_timeout: Duration,
    /// Connections open at once; more wait in the listen backlog until one closes. Keep it
    /// below the open-file limit (`ulimit -n`).
    #[arg(long, default_value_t = 512, value_parser = clap::value_parser!(u32).range(1..))]
    pub max_connections: u32,
    /// Requests other than writes running at once (0: no limit). With priority and fairness
    /// on, this plus `--max-mutating-requests-inflight` are the server's seats, shared among
    /// the priority levels (see `docs/flowcontrol.md`).
    #[arg(long, default_value_t = 400)]
    pub max_requests_inflight: u32,
    /// Writes running at once (0: no limit).
    #[arg(long, default_value_t = 200)]
    pub max_mutating_requests_inflight: u32,
    /// API Priority and Fairness: requests are classified by FlowSchema into priority levels
    /// and queued fairly per flow, 429 past the queues; `false` applies the two in-flight
    /// limits alone.
    #[arg(long, default_value_t = true, action = clap::ArgAction::Set)]
    pub enable_priority_and_fairness: bool,
    /// HTTP/2 streams open at once on one connection of the secure port; more are refused.
    /// 0: 100, as Kubernetes (kube-apiserver itself passes 1000).
    #[arg(long, default_value_t = 0)]
    pub http2_max_streams_per_connection: u32,
    /// Decoded size of an HTTP/2 request's header list, in bytes (Kubernetes'
    /// `MaxHeaderBytes`); a request past it gets 431.
    #[arg(long, default_value_t = 1 << 20, value_parser = clap::value_parser!(u32).range(1024..))]
    pub http2_max_header_list_size: u32,
    /// HTTP/2 flow-control window of one stream: request body bytes a client may send ahead
    /// (Kubernetes' `MaxUploadBufferPerStream`).
    #[arg(long, default_value_t = 256 * 1024, value_parser = window_size)]
    pub http2_stream_window: u32,
    /// HTTP/2 flow-control window of a connection, across its streams; 0: the stream window
    /// times the streams per connection (as Kubernetes).
    #[arg(long, default_value_t = 0, value_parser = clap::value_parser!(u32).range(..=i64::from(i32::MAX)))]
    pub http2_connection_window: u32,
}

/// An HTTP/2 window: 1 to 2^31-1 bytes (RFC 9113).
fn window_size(s: &str) -> std::result::Result<u32, String> {
    match s.parse::<u32>() {
        Ok(n) if (1..=i32::MAX.unsigned_abs()).contains(&n) => Ok(n),
        _ => Err(format!("{s:?} is not a window size (1 to {})", i32::MAX)),
    }
}

impl Default for ServeArgs {
    fn default() -> Self {
        let (limits, timeouts) = (ConnLimits::default(), Timeouts::default());
        Self {
            request_timeout: timeouts.request,
            header_read_timeout: limits.header_read_timeout,
            idle_timeout: limits.idle_timeout,
            body_read_timeout: timeouts.body_read,
            max_connections: u32::try_from(limits.max_connections).unwrap_or(u32::MAX),
            http2_max_streams_per_connection: 0,
            http2_max_header_list_size: limits.http2.max_header_list_size,
            http2_stream_window: limits.http2.stream_window,
            http2_connection_window: 0,
            max_requests_inflight: 400,
            max_mutating_requests_inflight: 200,
            enable_priority_and_fairness: true,
        }
    }
}

impl ServeArgs {
    /// The per-request deadlines.
    pub fn timeouts(&self) -> Timeouts {
        Timeouts {
            request: self.request_timeout,
            body_read: self.body_read_timeout,
        }
    }

    /// How the server is served with these bounds: plain HTTP, no authentication (add TLS
    /// and [`AuthArgs::build`] to [`Serving`] for the secure port).
    pub fn serving(&self) -> Serving {
        Serving {
            limits: self.conn_limits(),
            timeouts: self.timeouts(),
            overload: self.overload(),
            ..Serving::default()
        }
    }

    /// The overload limits: priority and fairness over both in-flight limits' seats (a
    /// request waits in its queue at most a quarter of `--request-timeout`), or, with it
    /// off, the two limits alone; no limit when both are 0.
    pub fn overload(&self) -> Overload {
        let (reads, mutating) = (
            self.max_requests_inflight,
            self.max_mutating_requests_inflight,
        );
        if reads == 0 && mutating == 0 {
            Overload::Off
        } else if self.enable_priority_and_fairness {
            Overload::PriorityAndFairness {
                seats: reads.saturating_add(mutating),
                queue_wait: self.request_timeout / 4,
            }
        } else {
            Overload::MaxInFlight {
                reads: reads as usize,
                mutating: mutating as usize,
            }
        }
    }

    /// The per-connection bounds.
    pub fn conn_limits(&self) -> ConnLimits {
        ConnLimits {
            max_connections: self.max_connections as usize,
            header_read_timeout: self.header_read_timeout,
            idle_timeout: self.idle_timeout,
            http2: self.http2_limits(),
        }
    }

    /// The HTTP/2 bounds: Kubernetes' defaults, with what the flags change.
    pub fn http2_limits(&self) -> Http2Limits {
        let streams = match self.http2_max_streams_per_connection {
            0 => Http2Limits::default().max_streams,
            n => n,
        };
        let mut limits = Http2Limits::with_max_streams(streams);
        limits.max_header_list_size = self.http2_max_header_list_size;
        limits.stream_window = self.http2_stream_window;
        limits.connection_window = match self.http2_connection_window {
            0 => Http2Limits::connection_window_for(self.http2_stream_window, streams),
            n => n,
        };
        limits
    }
}

/// `1h`, `5m`, `30s`, `250ms`, or a bare number of seconds.
pub fn parse_duration(s: &str) -> Result<Duration, String> {
    let s = s.trim();
    let split = s.find(|c: char| !c.is_ascii_digit()).unwrap_or(s.len());
    let (num, unit) = s.split_at(split);
    let n: u64 = num
        .parse()
        .map_err(|_| format!("invalid duration {s:?} (want e.g. 5m, 30s, 250ms)"))?;
    match unit {
        "" | "s" => Ok(Duration::from_secs(n)),
        "ms" => Ok(Duration::from_millis(n)),
        "m" => Ok(Duration::from_secs(n * 60)),
        "h" => Ok(Duration::from_secs(n * 3600)),
        _ => Err(format!(
            "invalid duration unit in {s:?} (want h, m, s or ms)"
        )),
    }
}

/// Why `--etcd-servers` is refused by a server built without the `etcd` feature.
const NO_ETCD: &str = "this server was built without conneg-apiserver's `etcd` feature (the etcd \
                       storage backend); rebuild with it, or use --storage";

/// An `--etcd-servers` URL, refused when the etcd backend is not built in.
fn etcd_server(url: &str) -> std::result::Result<String, String> {
    if cfg!(feature = "etcd") {
        Ok(url.to_owned())
    } else {
        Err(NO_ETCD.to_owned())
    }
}

impl Default for StorageArgs {
    fn default() -> Self {
        Self {
            kind: StorageKind::default(),
            data_dir: PathBuf::from("./data"),
            storage_media_type: StorageMediaType::default(),
            history: DEFAULT_HISTORY,
            history_bytes: DEFAULT_HISTORY_BYTES,
            watch_buffer: DEFAULT_WATCH_BUFFER,
            watch_buffer_bytes: DEFAULT_WATCH_BUFFER_BYTES,
            storage_prefix: None,
            etcd_servers: Vec::new(),
            etcd_prefix: DEFAULT_ETCD_PREFIX.to_owned(),
            etcd_compaction_interval: DEFAULT_COMPACTION_INTERVAL,
            etcd_request_timeout: DEFAULT_REQUEST_TIMEOUT,
            etcd_cafile: None,
            etcd_certfile: None,
            etcd_keyfile: None,
        }
    }
}

impl StorageArgs {
    /// The key layout of a server whose objects are stored under `group` (its API group):
    /// `<--etcd-prefix>/<group>` with etcd, `--storage-prefix` (or the same default) otherwise.
    pub fn keys(&self, group: &str) -> Keys {
        match &self.storage_prefix {
            Some(prefix) if self.etcd_servers.is_empty() => Keys::new(prefix),
            _ => Keys::new(&format!(
                "{}/{group}",
                self.etcd_prefix.trim_end_matches('/')
            )),
        }
    }

    /// Where objects live, for the startup log: the etcd endpoints, the data directory, or memory.
    pub fn location(&self) -> String {
        if !self.etcd_servers.is_empty() {
            format!("etcd {}", self.etcd_servers.join(","))
        } else {
            match self.kind {
                StorageKind::Embedded => format!("embedded {}", self.data_dir.display()),
                StorageKind::Memory => "memory".to_owned(),
            }
        }
    }

    /// The history the memory and embedded stores keep: `--history`, `--history-bytes`.
    pub fn history_limits(&self) -> History {
        History {
            revisions: self.history,
            bytes: self.history_bytes,
        }
    }

    /// How far one watcher may fall behind: `--watch-buffer` events, `--watch-buffer-bytes`.
    pub fn watch_limits(&self) -> WatchBuffer {
        WatchBuffer {
            events: self.watch_buffer,
            bytes: self.watch_buffer_bytes,
        }
    }

    /// `store` with its reads answered from a watch cache keeping `--history` and
    /// `--watch-buffer` like the store.
    fn cached(&self, store: Store, keys: &Keys) -> Store {
        let options = WatchCacheOptions {
            history: self.history_limits(),
            watch_buffer: self.watch_limits(),
            ..WatchCacheOptions::default()
        };
        Store::Cached(WatchCache::new(store, keys, options))
    }

    /// Open the configured store, for objects stored under `group` ([`StorageArgs::keys`]).
    pub async fn open(&self, group: &str) -> Result<OpenedStorage> {
        let keys = self.keys(group);
        let store = if !self.etcd_servers.is_empty() {
            self.open_etcd(&keys).await?
        } else {
            self.open_local(group).await?
        };
        Ok(OpenedStorage {
            store: self.cached(store, &keys),
            codec: StorageCodec::new(self.storage_media_type),
            keys,
        })
    }

    /// The etcd store of `--etcd-servers`.
    #[cfg(feature = "etcd")]
    async fn open_etcd(&self, keys: &Keys) -> Result<Store> {
        let mut options = EtcdOptions::new(self.etcd_servers.clone(), keys.prefix());
        options.history = self.history;
        options.compaction_interval = self.etcd_compaction_interval;
        options.request_timeout = self.etcd_request_timeout;
        let tls = EtcdTls {
            ca_file: self.etcd_cafile.clone(),
            cert_file: self.etcd_certfile.clone(),
            key_file: self.etcd_keyfile.clone(),
        };
        let https = self.etcd_servers.iter().any(|s| s.starts_with("https://"));
        options.tls = (https || tls != EtcdTls::default()).then_some(tls);
        Ok(Store::Etcd(EtcdStore::open(options).await?))
    }

    /// `--etcd-servers` without the etcd backend built in (set in code, not parsed).
    #[cfg(not(feature = "etcd"))]
    async fn open_etcd(&self, _keys: &Keys) -> Result<Store> {
        Err(crate::storage::StorageError::Backend(format!(
            "--etcd-servers: {NO_ETCD}"
        )))
    }

    /// The memory or embedded store of `--storage`.
    async fn open_local(&self, group: &str) -> Result<Store> {
        Ok(match self.kind {
            StorageKind::Memory => Store::Memory(MemoryStore::with_limits(
                self.history_limits(),
                self.watch_limits(),
            )),
            StorageKind::Embedded => Store::Embedded(
                EmbeddedStore::open_async(
                    self.data_dir
                        .join(crate::storage::embedded::file_name(group)),
                    EmbeddedOptions {
                        history: self.history_limits(),
                        watch_buffer: self.watch_limits(),
                    },
                )
                .await?,
            ),
        })
    }
}

#[cfg(test)]
mod tests {
    use clap::Parser as _;

    use super::StorageArgs;

    #[derive(clap::Parser)]
    struct Cli {
        #[command(flatten)]
        storage: StorageArgs,
    }

    const URL: &str = "http://127.0.0.1:2379";

    /// `--etcd-servers` parses with the etcd backend built in, and is refused naming the
    /// feature without it (`cargo test -p conneg-apiserver --no-default-features`).
    #[test]
    fn etcd_servers_needs_the_etcd_feature() {
        let parsed = Cli::try_parse_from(["server", "--etcd-servers", URL]);
        if cfg!(feature = "etcd") {
            assert_eq!(parsed.unwrap().storage.etcd_servers, [URL]);
        } else {
            let e = parsed.err().unwrap().to_string();
            assert!(
                e.contains("without conneg-apiserver's `etcd` feature"),
                "{e}"
            );
        }
    }

    /// Set in code rather than parsed, `etcd_servers` without the backend is an error at open,
    /// not a silent fallback to local storage.
    #[cfg(not(feature = "etcd"))]
    #[tokio::test]
    async fn opening_etcd_without_the_feature_is_an_error() {
        let args = StorageArgs {
            etcd_servers: vec![URL.to_owned()],
            ..StorageArgs::default()
        };
        let e = args.open("example.com").await.unwrap_err().to_string();
        assert!(
            e.contains("without conneg-apiserver's `etcd` feature"),
            "{e}"
        );
    }
}
