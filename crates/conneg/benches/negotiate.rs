//! `Negotiator::negotiate` for the `Accept` headers real clients send (criterion).
//!
//! ```text
//! cargo bench -p conneg --bench negotiate
//! ```
//!
//! * kubectl with CBOR enabled: `application/cbor, */*` (a GET);
//! * client-go's dynamic client with `ClientsAllowCBOR`:
//!   `application/json;q=0.9,application/cbor;q=1`, on a POST with a CBOR body;
//! * a browser's navigation `Accept` (nothing for it but `*/*;q=0.8`: JSON);
//! * no `Accept` at all (the floor);
//! * a PATCH with `application/apply-patch+cbor` (kubectl server-side apply).
//!
//! The figure is the whole per-request decision the layer makes before the handler runs
//! (both headers parsed, codec selected, the `Negotiated` built); the layer adds one request
//! extension insert on top.
//!
//! Two groups: `negotiate` is criterion's usual wall-clock time; `negotiate-cpu` is the time
//! the benchmark thread actually spent on a CPU (Linux `/proc/thread-self/schedstat`), which
//! stays meaningful on a machine shared with other work, where wall-clock time also counts
//! the time the thread waited for a core. It is read at scheduler-tick granularity, so that
//! group takes 10 long samples of equal size.

// criterion_main! writes an undocumented `main`.
#![allow(missing_docs)]

use std::hint::black_box;
use std::time::Duration;

use conneg::{Negotiator, PatchType};
use criterion::{Criterion, SamplingMode, criterion_group, criterion_main};
use http::{HeaderMap, HeaderValue, Method, Uri, header};

const URI: &str = "/apis/wardle.example.com/v1alpha1/namespaces/default/flunders";

struct Case {
    name: &'static str,
    method: Method,
    accept: Option<&'static str>,
    content_type: Option<&'static str>,
}

fn cases() -> Vec<Case> {
    let case = |name, method, accept, content_type| Case {
        name,
        method,
        accept,
        content_type,
    };
    vec![
        case("kubectl", Method::GET, Some("application/cbor, */*"), None),
        case(
            "dynamic-client",
            Method::POST,
            Some("application/json;q=0.9,application/cbor;q=1"),
            Some("application/cbor"),
        ),
        case(
            "browser",
            Method::GET,
            Some(
                "text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,image/apng,*/*;q=0.8,application/signed-exchange;v=b3;q=0.7",
            ),
            None,
        ),
        case("no-accept", Method::GET, None, None),
        case(
            "apply-patch-cbor",
            Method::PATCH,
            Some("application/cbor, */*"),
            Some("application/apply-patch+cbor"),
        ),
    ]
}

fn negotiate(c: &mut Criterion) {
    let negotiator = Negotiator::new()
        .profile(conneg::Profile::Kubernetes)
        .patch_types([
            PatchType::JsonPatch,
            PatchType::MergePatch,
            PatchType::ApplyCbor,
        ]);
    let uri = Uri::from_static(URI);
    let on_cpu = thread_cpu_time().is_some();
    for (group_name, cpu_time) in [("negotiate", false), ("negotiate-cpu", true)] {
        if cpu_time && !on_cpu {
            continue;
        }
        let mut group = c.benchmark_group(group_name);
        if cpu_time {
            // The kernel updates a thread's CPU time at scheduler ticks (1-4 ms): a few long
            // samples of equal size keep that granularity under 1%.
            group
                .sampling_mode(SamplingMode::Flat)
                .sample_size(10)
                .measurement_time(Duration::from_secs(5));
        }
        for case in cases() {
            let mut headers = HeaderMap::new();
            if let Some(accept) = case.accept {
                headers.insert(header::ACCEPT, HeaderValue::from_static(accept));
            }
            if let Some(ct) = case.content_type {
                headers.insert(header::CONTENT_TYPE, HeaderValue::from_static(ct));
                headers.insert(header::CONTENT_LENGTH, HeaderValue::from_static("700"));
            }
            let has_body = case.content_type.is_some();
            let run = || {
                negotiator.negotiate(
                    black_box(&case.method),
                    black_box(&uri),
                    black_box(&headers),
                    has_body,
                )
            };
            // Every case must succeed: a rejection is a different (slower) path.
            assert!(run().is_ok(), "{}", case.name);
            group.bench_function(case.name, |b| {
                if cpu_time {
                    b.iter_custom(|iters| {
                        let start = thread_cpu_time().unwrap_or_default();
                        for _ in 0..iters {
                            let _ = black_box(run());
                        }
                        thread_cpu_time().unwrap_or_default().saturating_sub(start)
                    })
                } else {
                    b.iter(run)
                }
            });
        }
        group.finish();
    }
}

/// Time this thread has spent running on a CPU (first field of Linux's schedstat, in ns).
fn thread_cpu_time() -> Option<Duration> {
    let stat = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    let ns = stat.split_whitespace().next()?.parse().ok()?;
    Some(Duration::from_nanos(ns))
}

criterion_group!(benches, negotiate);
criterion_main!(benches);
