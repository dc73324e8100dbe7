//! The smallest API server on `conneg_apiserver`: one namespaced kind, `Widget`
//! (`widgets.example.com/v1`), served with every verb (create, get, list, watch, update,
//! patch and server-side apply, delete) in JSON and CBOR, with discovery and OpenAPI for
//! kubectl. Copy it and change the types.
//!
//! ```sh
//! cargo run -p minimal-apiserver -- --storage memory
//! kubectl --server http://127.0.0.1:8080 get widgets
//! ```

use clap::Parser;
use conneg_apiserver::prelude::*;
use serde::Deserialize;
use serde_json::{Value, json};

/// A widget: a size and a color.
// Declared once: its group, version and kind, and so its resource (`widgets`, listed as
// `WidgetList`, namespaced). The attribute adds the `kind`, `apiVersion` and `metadata` fields
// and the traits of a served type; one version, so the type is its own internal form.
// The schema and the rules are derived (`JsonSchema`, doc comments are descriptions): the
// server publishes them in its OpenAPI documents and enforces them on every write
// (`conneg_apiserver::declarative`).
// `conneg_cbor::Serialize` is serde's `Serialize` that also hands the storage encoder (sorted
// CBOR) the fields already in order.
#[conneg_apiserver::kind(
    group = "widgets.example.com",
    version = "v1",
    kind = "Widget",
    namespaced
)]
#[derive(Debug, Clone, Default, PartialEq, conneg_cbor::Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
// Widget names are DNS-1123 labels (the name-format rule), declared as a CEL rule on the object.
#[schemars(extend("x-kubernetes-validations" = [
    {"rule": "!format.dns1123Label().validate(self.metadata.name).hasValue()",
     "messageExpression": "format.dns1123Label().validate(self.metadata.name).value().join(', ')",
     "fieldPath": ".metadata.name"}]))]
struct Widget {
    #[serde(default)]
    spec: WidgetSpec,
}

/// What a widget should be.
#[derive(Debug, Clone, Default, PartialEq, conneg_cbor::Serialize, Deserialize, JsonSchema)]
#[schemars(extend("x-kubernetes-validations" = [
    {"rule": "!has(self.color) || self.color != 'black' || self.size <= 10",
     "message": "black widgets are at most 10 big", "fieldPath": ".size"}]))]
struct WidgetSpec {
    /// How big.
    #[serde(default)]
    #[schemars(range(min = 0, max = 100))]
    size: i64,
    /// Its color.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    #[schemars(length(max = 32))]
    color: String,
}

/// What the generic registry needs to know of widgets.
impl Strategy for Widget {
    type Stored = Widget;

    const COLUMNS: &'static [Column] = &[Column::new("Size", "integer", "How big the widget is.")];
    fn cells(&self) -> Vec<Value> {
        vec![json!(self.spec.size)]
    }
}

#[derive(Debug, Parser)]
struct Cli {
    /// Loopback address to serve plain HTTP on (port 0: any free port). Anyone who reaches
    /// it may read and write everything: see sample-apiserver for TLS and authentication.
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
    if !cli.listen.ip().is_loopback() {
        return Err(format!("refusing to serve plain HTTP on {}", cli.listen).into());
    }
    let storage = cli.storage.open(Widget::RESOURCE.group).await?;
    let info = OpenApiInfo {
        title: "Widgets",
        package: "com.example.widgets",
    };
    let state = ServerBuilder::new(info)
        .serve::<Widget>()
        .build(storage, ServerOptions::default());
    let listener = tokio::net::TcpListener::bind(cli.listen).await?;
    println!("listening on http://{}", listener.local_addr()?);
    // Bounded connections, header and body reads and requests (one slow client cannot stall
    // the server); core v1 namespaces with `default` and friends (standalone, the default).
    state
        .serve(listener, cli.serve.serving(), std::future::pending())
        .await?;
    Ok(())
}
