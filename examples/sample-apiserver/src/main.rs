//! `sample-apiserver`: the wardle.example.com API server.
//!
//! Opens the storage (`--storage embedded|memory`, `--data-dir`, `--storage-media-type`),
//! builds the wardle server ([`sample_apiserver::server`]) and serves plain HTTP on
//! `--listen` until SIGINT or SIGTERM, then drains connections and exits. The bound address is
//! printed on stdout (`listening on http://127.0.0.1:PORT`), so `--listen 127.0.0.1:0` works.

use std::io::Write as _;
use std::net::SocketAddr;

use clap::Parser;
use conneg_apiserver::config::{AuthArgs, SecureServingArgs, ServeArgs, StorageArgs};
use conneg_apiserver::server::{ServerOptions, Serving};
use conneg_apiserver::storage::Storage;
use sample_apiserver::api::GROUP;

/// mimalloc rather than the system allocator: see the workspace's Cargo.toml.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// A Kubernetes-style API server for wardle.example.com.
#[derive(Debug, Parser)]
#[command(name = "sample-apiserver", version)]
struct Cli {
    /// Address to serve plain HTTP on (port 0: any free port; the bound address is printed).
    #[arg(long, default_value = "127.0.0.1:8080")]
    listen: SocketAddr,
    /// Serve JSON only: CBOR bodies get 415 and CBOR is never chosen for responses.
    #[arg(long)]
    no_cbor: bool,
    /// Serve core v1 namespaces (and refuse creates in a namespace that does not exist or is
    /// being deleted), for use without an aggregator. `--standalone=false` behind
    /// kube-apiserver's aggregator, which serves namespaces itself.
    #[arg(long, default_value_t = true, num_args = 0..=1, default_missing_value = "true", action = clap::ArgAction::Set)]
    standalone: bool,
    /// The bytes objects' encoded responses may take in memory, kept so that a GET or LIST
    /// sends an unchanged object without decoding and encoding it again; 0 keeps none.
    #[arg(long, default_value_t = conneg_apiserver::server::DEFAULT_ENCODED_CACHE)]
    encoded_cache_bytes: u64,
    #[command(flatten)]
    storage: StorageArgs,
    #[command(flatten)]
    serve: ServeArgs,
    #[command(flatten)]
    secure: SecureServingArgs,
    #[command(flatten)]
    auth: AuthArgs,
}

/// Why the server will not serve plain HTTP on `addr`, if it will not: only loopback
/// addresses may go without TLS.
fn refuse_plain_http(addr: SocketAddr) -> Option<String> {
    (!addr.ip().is_loopback()).then(|| {
        format!(
            "refusing to serve plain HTTP on {addr}, which is not a loopback address: anyone who \
             reaches it could read and write everything. Serve HTTPS with --secure-port (and \
             --tls-cert-file/--tls-private-key-file, or a self-signed certificate kept in \
             --cert-dir), authenticate (--client-ca-file, --token-auth-file, \
             --anonymous-auth=false) and authorize (--authorization-mode)"
        )
    })
}

async fn shutdown_signal() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let term = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let term = std::future::pending::<()>();
    tokio::select! {
        () = ctrl_c => {},
        () = term => {},
    }
    tracing::info!("shutting down");
}

#[tokio::main]
async fn main() -> std::process::ExitCode {
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info")),
        )
        .with_writer(std::io::stderr)
        .init();
    let cli = Cli::parse();
    // Serving flags first: a server that may not start should not open its storage.
    let tls = match cli.secure.acceptor(cli.auth.client_ca_files()) {
        Ok(tls) => tls,
        Err(e) => {
            tracing::error!("{e}");
            return std::process::ExitCode::FAILURE;
        }
    };
    let (want, scheme) = match cli.secure.secure_port {
        Some(port) => (SocketAddr::new(cli.secure.bind_address, port), "https"),
        None => (cli.listen, "http"),
    };
    if tls.is_none()
        && let Some(why) = refuse_plain_http(want)
    {
        tracing::error!("{why}");
        return std::process::ExitCode::FAILURE;
    }
    let opened = match cli.storage.open(GROUP).await {
        Ok(o) => o,
        Err(e) => {
            tracing::error!("cannot open storage: {e}");
            return std::process::ExitCode::FAILURE;
        }
    };
    let revision = match opened.store.current_revision().await {
        Ok(r) => r,
        Err(e) => {
            tracing::error!("storage unusable: {e}");
            return std::process::ExitCode::FAILURE;
        }
    };
    tracing::info!(
        storage = %cli.storage.location(),
        media_type = %opened.codec.media_type,
        revision,
        cbor = !cli.no_cbor,
        standalone = cli.standalone,
        "storage ready"
    );
    let state = sample_apiserver::server().build(
        opened,
        ServerOptions {
            cbor: !cli.no_cbor,
            standalone: cli.standalone,
            encoded_cache: cli.encoded_cache_bytes,
        },
    );
    let auth = match cli.auth.build(state.codecs(), state.metrics.clone()) {
        Ok(auth) => std::sync::Arc::new(auth),
        Err(e) => {
            tracing::error!("{e}");
            return std::process::ExitCode::FAILURE;
        }
    };
    let listener = match tokio::net::TcpListener::bind(want).await {
        Ok(l) => l,
        Err(e) => {
            tracing::error!("cannot listen on {want}: {e}");
            return std::process::ExitCode::FAILURE;
        }
    };
    let addr = listener.local_addr().unwrap_or(want);
    {
        let mut out = std::io::stdout().lock();
        let _ = writeln!(out, "listening on {scheme}://{addr}");
        let _ = out.flush();
    }
    tracing::info!(%addr, scheme, "serving");
    let serving = Serving {
        tls,
        auth: Some(auth),
        ..cli.serve.serving()
    };
    if let Err(e) = state.serve(listener, serving, shutdown_signal()).await {
        tracing::error!("server error: {e}");
        return std::process::ExitCode::FAILURE;
    }
    std::process::ExitCode::SUCCESS
}
