//! `sample-apiserver`: the wardle.example.com API server.
//!
//! Phase 1: opens the configured storage and reports its state. The HTTP layer (on conneg)
//! comes next.

use clap::Parser;
use sample_apiserver::config::StorageArgs;
use sample_apiserver::storage::Storage;

/// A Kubernetes-style API server for wardle.example.com.
#[derive(Debug, Parser)]
#[command(name = "sample-apiserver", version)]
struct Cli {
    #[command(flatten)]
    storage: StorageArgs,
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
    let opened = match cli.storage.open().await {
        Ok(o) => o,
        Err(e) => {
            tracing::error!("cannot open storage: {e}");
            return std::process::ExitCode::FAILURE;
        }
    };
    match opened.store.current_revision().await {
        Ok(rev) => {
            tracing::info!(
                backend = ?cli.storage.kind,
                media_type = %opened.codec.media_type,
                revision = rev,
                "storage ready; the HTTP server is not wired up yet"
            );
            std::process::ExitCode::SUCCESS
        }
        Err(e) => {
            tracing::error!("storage unusable: {e}");
            std::process::ExitCode::FAILURE
        }
    }
}
