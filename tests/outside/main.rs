//! An inventory server written outside the workspace, as a user of the published crate would
//! write it: one kind, the prelude, and `AppState::serve`. `tests/outside.rs` builds it as a
//! crate of its own (only conneg-apiserver's public API in reach) and drives it over HTTP.

use clap::Parser;
use conneg_apiserver::prelude::*;
use serde::{Deserialize, Serialize};

/// A stocked item: `items` in `inventory.example.com/v1`, namespaced, declared once.
#[kind(group = "inventory.example.com", version = "v1", kind = "Item", namespaced)]
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
struct Item {
    #[serde(default)]
    spec: ItemSpec,
}

/// How many, of what.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
struct ItemSpec {
    /// Stock keeping unit.
    #[serde(default)]
    #[schemars(length(max = 16))]
    sku: String,
    /// How many are in stock.
    #[serde(default)]
    #[schemars(range(min = 0))]
    count: i64,
}

impl Strategy for Item {
    type Stored = Item;
}

#[derive(Debug, Parser)]
struct Cli {
    #[arg(long, default_value = "127.0.0.1:8080")]
    listen: std::net::SocketAddr,
    #[command(flatten)]
    storage: StorageArgs,
    #[command(flatten)]
    serve: ServeArgs,
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let cli = Cli::parse();
    let info = OpenApiInfo {
        title: "Inventory",
        package: "com.example.inventory",
    };
    let state = ServerBuilder::new(info)
        .serve::<Item>()
        .build(cli.storage.open(Item::RESOURCE.group).await?, ServerOptions::default());
    let listener = tokio::net::TcpListener::bind(cli.listen).await?;
    println!("listening on http://{}", listener.local_addr()?);
    state
        .serve(listener, cli.serve.serving(), std::future::pending())
        .await?;
    Ok(())
}
