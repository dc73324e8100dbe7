//! The server `scripts/bench-layer` loads: one axum handler, echoing a Kubernetes-shaped
//! object. Port `BASE` is plain axum with `axum::Json` (no conneg); port `BASE+1` is the same
//! handler with `conneg::axum::Conneg` behind `NegotiateLayer::new()`, the standard profile
//! (JSON or CBOR with text strings, as the client's `Accept` and `Content-Type` say; unknown
//! fields ignored, as `axum::Json` does); port `BASE+2` is that layer in the Kubernetes
//! profile (CBOR byte strings, `fieldValidation=Warn`: unknown fields are collected for
//! `Warning` headers); port `BASE+3` is the Kubernetes profile with `FieldValidation::Ignore`.
//!
//! ```sh
//! cargo run --release -p axum-items --example bench-server -- 3100   # serve on 3100-3103
//! cargo run --release -p axum-items --example bench-server -- --payload json|cbor|cbor-text
//! ```

use std::collections::BTreeMap;

use axum::routing::post;
use axum::{Json, Router};
use conneg::axum::Conneg;
use conneg::{FieldValidation, NegotiateLayer, Profile};
use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Item {
    api_version: String,
    kind: String,
    metadata: Metadata,
    spec: Spec,
}

#[derive(Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Metadata {
    name: String,
    namespace: String,
    uid: String,
    resource_version: String,
    labels: BTreeMap<String, String>,
    annotations: BTreeMap<String, String>,
}

#[derive(Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Spec {
    replicas: i64,
    image: String,
    args: Vec<String>,
    ports: Vec<Port>,
    ratio: f64,
    paused: bool,
}

#[derive(Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Port {
    name: String,
    container_port: i64,
    protocol: String,
}

/// The request body every run sends (about 700 bytes of JSON).
fn payload() -> Item {
    let map = |pairs: &[(&str, &str)]| {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    };
    Item {
        api_version: "example.com/v1".into(),
        kind: "Item".into(),
        metadata: Metadata {
            name: "bench-item-0001".into(),
            namespace: "default".into(),
            uid: "6f1c3a52-8a4e-4f55-9d7a-0d5b0c2b7e11".into(),
            resource_version: "123456".into(),
            labels: map(&[
                ("app", "bench"),
                ("tier", "backend"),
                ("example.com/team", "api"),
            ]),
            annotations: map(&[("example.com/note", "a short annotation for the benchmark")]),
        },
        spec: Spec {
            replicas: 3,
            image: "registry.example.com/bench/server:v1.2.3".into(),
            args: vec![
                "--verbose".into(),
                "--port=8080".into(),
                "--workers=4".into(),
            ],
            ports: vec![
                Port {
                    name: "http".into(),
                    container_port: 8080,
                    protocol: "TCP".into(),
                },
                Port {
                    name: "metrics".into(),
                    container_port: 9090,
                    protocol: "TCP".into(),
                },
            ],
            ratio: 0.75,
            paused: false,
        },
    }
}

#[tokio::main]
async fn main() -> std::io::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if let [flag, format] = args.as_slice()
        && flag == "--payload"
    {
        use std::io::Write;
        let bytes = match format.as_str() {
            "cbor" => conneg_cbor::to_vec(&payload()).map_err(std::io::Error::other)?,
            "cbor-text" => conneg_cbor::EncodeOptions::deterministic()
                .string_encoding(conneg_cbor::StringEncoding::Text)
                .self_described(false)
                .to_vec(&payload())
                .map_err(std::io::Error::other)?,
            _ => serde_json::to_vec(&payload())?,
        };
        return std::io::stdout().write_all(&bytes);
    }
    let base: u16 = args.first().and_then(|p| p.parse().ok()).unwrap_or(3100);

    let plain = Router::new().route(
        "/items",
        post(|Json(item): Json<Item>| async { Json(item) }),
    );
    let conneg = |layer: NegotiateLayer| {
        Router::new()
            .route(
                "/items",
                post(|Conneg(item): Conneg<Item>| async { Conneg(item) }),
            )
            .layer(layer)
    };
    let standard = conneg(NegotiateLayer::new());
    let kubernetes = NegotiateLayer::new().profile(Profile::Kubernetes);
    let warn = conneg(kubernetes.clone());
    let ignore = conneg(kubernetes.field_validation(FieldValidation::Ignore));
    let listen = |port| tokio::net::TcpListener::bind(("127.0.0.1", port));
    let (a, b, c, d) = tokio::try_join!(
        listen(base),
        listen(base + 1),
        listen(base + 2),
        listen(base + 3)
    )?;
    println!(
        "axum::Json on {base}, standard on {}, kubernetes on {} (Ignore: {})",
        base + 1,
        base + 2,
        base + 3
    );
    tokio::try_join!(
        axum::serve(a, plain),
        axum::serve(b, standard),
        axum::serve(c, warn),
        axum::serve(d, ignore)
    )?;
    Ok(())
}
