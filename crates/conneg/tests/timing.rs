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
