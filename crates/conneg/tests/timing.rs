//! A rough, criterion-free timing of negotiation (the real benchmarks live elsewhere).
//! Run: `cargo test -p conneg --release --test timing -- --ignored --nocapture`.

use std::hint::black_box;
use std::time::Instant;

use conneg::Negotiator;
use http::{HeaderMap, HeaderValue, Method, Uri, header};

fn time(label: &str, accept: &'static str, content_type: Option<&'static str>) {
    let negotiator = Negotiator::new();
    let mut headers = HeaderMap::new();
    headers.insert(header::ACCEPT, HeaderValue::from_static(accept));
    if let Some(ct) = content_type {
        headers.insert(header::CONTENT_TYPE, HeaderValue::from_static(ct));
    }
    let uri = Uri::from_static("/apis/wardle.example.com/v1alpha1/namespaces/default/flunders");
    let method = if content_type.is_some() {
        Method::POST
    } else {
        Method::GET
    };
    let n = 200_000;
    for _ in 0..n / 10 {
        black_box(
            negotiator
                .negotiate(&method, &uri, &headers, content_type.is_some())
                .is_ok(),
        );
    }
    let start = Instant::now();
    for _ in 0..n {
        black_box(
            negotiator
                .negotiate(
                    black_box(&method),
                    &uri,
                    black_box(&headers),
                    content_type.is_some(),
                )
                .is_ok(),
        );
    }
    let ns = start.elapsed().as_nanos() as f64 / f64::from(n);
    println!("{label:<40} {ns:>8.1} ns/negotiation");
}

#[test]
#[ignore = "timing, run in release with --nocapture"]
fn negotiation_timing() {
    time(
        "GET, kubectl `application/cbor, */*`",
        "application/cbor, */*",
        None,
    );
    time(
        "GET, dynamic client q-values",
        "application/json;q=0.9,application/cbor;q=1",
        None,
    );
    time(
        "GET, Table then JSON",
        "application/json;as=Table;v=v1;g=meta.k8s.io,application/json",
        None,
    );
    time(
        "POST, JSON body, `application/json, */*`",
        "application/json, */*",
        Some("application/json"),
    );
    time(
        "GET, browser Accept",
        "text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,*/*;q=0.8",
        None,
    );
}

#[test]
#[ignore = "timing, run in release with --nocapture"]
fn selection_parts_timing() {
    use conneg::Codecs;
    use conneg::accept::Accept;
    let codecs = Codecs::new();
    let mut headers = HeaderMap::new();
    headers.insert(
        header::ACCEPT,
        HeaderValue::from_static("application/cbor, */*"),
    );
    let n = 200_000u32;
    let start = Instant::now();
    for _ in 0..n {
        black_box(Accept::from_headers(black_box(&headers)).clauses().count());
    }
    println!(
        "parse clauses: {:.1} ns",
        start.elapsed().as_nanos() as f64 / f64::from(n)
    );
    let start = Instant::now();
    for _ in 0..n {
        black_box(
            codecs
                .select(&Accept::from_headers(black_box(&headers)))
                .is_some(),
        );
    }
    println!(
        "select: {:.1} ns",
        start.elapsed().as_nanos() as f64 / f64::from(n)
    );
    let start = Instant::now();
    for _ in 0..n {
        black_box(
            codecs
                .select(&Accept::from_value(black_box("application/cbor, */*")))
                .is_some(),
        );
    }
    println!(
        "select from str: {:.1} ns",
        start.elapsed().as_nanos() as f64 / f64::from(n)
    );
}

#[test]
#[ignore = "timing, run in release with --nocapture"]
fn decode_field_validation_timing() {
    use conneg::{Codec, FieldValidation};
    use serde::{Deserialize, Serialize};

    #[derive(Serialize, Deserialize)]
    #[serde(rename_all = "camelCase")]
    struct Meta {
        name: String,
        namespace: String,
        uid: String,
        resource_version: String,
        labels: std::collections::BTreeMap<String, String>,
    }
    #[derive(Serialize, Deserialize)]
    struct Spec {
        reference: String,
        replicas: u32,
        ports: Vec<u16>,
    }
    #[derive(Serialize, Deserialize)]
    #[serde(rename_all = "camelCase")]
    struct Flunder {
        api_version: String,
        kind: String,
        metadata: Meta,
        spec: Spec,
    }
    let value = Flunder {
        api_version: "wardle.example.com/v1alpha1".into(),
        kind: "Flunder".into(),
        metadata: Meta {
            name: "my-flunder".into(),
            namespace: "default".into(),
            uid: "5f7e2d2a-2c55-4f7d-9a57-3b0f1e4c9d21".into(),
            resource_version: "12345".into(),
            labels: [
                ("app".to_owned(), "demo".to_owned()),
                ("tier".to_owned(), "backend".to_owned()),
            ]
            .into(),
        },
        spec: Spec {
            reference: "my-fischer".into(),
            replicas: 3,
            ports: vec![80, 443],
        },
    };
    for codec in [Codec::Json, Codec::Cbor] {
        let bytes = codec.to_bytes(&value).unwrap();
        for fv in [
            FieldValidation::Ignore,
            FieldValidation::Warn,
            FieldValidation::Strict,
        ] {
            let n = 50_000u32;
            let start = Instant::now();
            for _ in 0..n {
                black_box(codec.decode::<Flunder>(black_box(&bytes), fv).unwrap());
            }
            let ns = start.elapsed().as_nanos() as f64 / f64::from(n);
            println!("decode {codec} {fv:?}: {ns:.0} ns ({} bytes)", bytes.len());
        }
    }
}
