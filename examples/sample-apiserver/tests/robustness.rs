//! No request may make the server fail: 1,500 seeded random requests (methods, paths, query
//! parameters, content types, `Accept` headers, and bodies that are random bytes, truncated or
//! mutated JSON and CBOR objects, wrong-typed fields, odd names and patches) must all get an
//! answer below 500, and the server must still be healthy afterwards.

mod common;

use common::{Resp, Server, flunders, tempdir};
use serde_json::{Value, json};

/// xorshift64*: reproducible without a dependency; the seed is in the failure message.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
    fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }
    fn chance(&mut self, percent: usize) -> bool {
        self.below(100) < percent
    }
}

fn good_flunder() -> Value {
    json!({
        "apiVersion": "wardle.example.com/v1beta1", "kind": "Flunder",
        "metadata": {"name": "a", "labels": {"x": "y"}},
        "spec": {"flunderReference": "b", "referenceType": "Flunder"}
    })
}

fn body(rng: &mut Rng) -> Vec<u8> {
    let mut g = good_flunder();
    match rng.below(10) {
        0 | 1 => (0..rng.below(64)).map(|_| rng.next() as u8).collect(),
        2 => {
            let b = g.to_string().into_bytes();
            b[..rng.below(b.len() + 1)].to_vec()
        }
        3 => {
            let b = conneg_cbor::to_vec(&g).unwrap();
            b[..rng.below(b.len() + 1)].to_vec()
        }
        4 => {
            g["spec"] = rng
                .pick(&[
                    json!([]),
                    json!(1),
                    json!("x"),
                    json!(null),
                    json!({"referenceType": 5}),
                    json!({"fischerReference": "f", "flunderReference": "g"}),
                    json!({"referenceType": "Fischer"}),
                ])
                .clone();
            g.to_string().into_bytes()
        }
        5 => {
            g["metadata"] = rng
                .pick(&[
                    json!([]),
                    json!(null),
                    json!({"name": ""}),
                    json!({"name": "UPPER"}),
                    json!({"name": "a".repeat(300)}),
                    json!({"generateName": "g-"}),
                    json!({"name": "a", "resourceVersion": "x"}),
                    json!({"name": "a", "uid": 5}),
                    json!({"name": "a", "namespace": "other"}),
                ])
                .clone();
            g.to_string().into_bytes()
        }
        6 => rng
            .pick(&[
                json!([{"op": "replace", "path": "/spec/flunderReference", "value": 1}]),
                json!([{"op": "bogus"}]),
                json!([{"op": "add", "path": "/metadata/labels/~2", "value": "v"}]),
                json!({"spec": null}),
                json!({"metadata": {"name": "other"}}),
                json!({"apiVersion": "v9", "kind": "Nope"}),
            ])
            .to_string()
            .into_bytes(),
        7 => {
            // A CBOR value of the wrong shape, or with a non-string key, or an invalid string.
            let bad: &[&[u8]] = &[
                b"\xd9\xd9\xf7\x81\xa0",
                b"\xd9\xd9\xf7\xa1\x01\x02",
                b"\xd9\xd9\xf7\xa1\x64kind\x42\xff\xfe",
                b"\xd9\xd9\xf7\xa1\x64spec\xf9\x7e\x00",
                b"\xd9\xd9\xf7\xbf\x64kind\x61\x61",
            ];
            rng.pick(bad).to_vec()
        }
        _ => g.to_string().into_bytes(),
    }
}

#[test]
fn random_requests_never_get_a_server_error() {
    let dir = tempdir();
    let s = Server::start(dir.path(), &["--storage", "memory"]);
    let beta = flunders("v1beta1", "default");
    let paths = [
        beta.clone(),
        format!("{beta}/a"),
        format!("{beta}/a/status"),
        format!("{beta}/%ff"),
        format!("{beta}/{}", "x".repeat(300)),
        flunders("v1alpha1", "default"),
        format!("{}/a", flunders("v1alpha1", "default")),
        flunders("v1beta1", &"n".repeat(70)),
        "/apis/wardle.example.com/v1beta1/flunders".to_owned(),
        "/apis/wardle.example.com/v1alpha1/fischers".to_owned(),
        "/apis/wardle.example.com/v1alpha1/fischers/f".to_owned(),
        "/apis".to_owned(),
        "/apis/wardle.example.com".to_owned(),
        "/openapi/v2".to_owned(),
        "/openapi/v3/apis/wardle.example.com/v1beta1".to_owned(),
        "/version".to_owned(),
        "/nothing/here".to_owned(),
    ];
    let queries = [
        "",
        "limit=-1",
        "limit=1&continue=garbage",
        "labelSelector=a%3D%3D%3Db",
        "labelSelector=a+in+(b,c",
        "fieldSelector=spec.x%3Dy",
        "fieldSelector=metadata.name%3D%3D",
        "dryRun=All",
        "dryRun=Bogus",
        "fieldManager=m",
        "force=true",
        "fieldValidation=Strict",
        "fieldValidation=Loud",
        "pretty=true",
        "resourceVersionMatch=Exact&resourceVersion=1",
        "resourceVersion=abc",
        "propagationPolicy=Foreground",
        "gracePeriodSeconds=-1",
    ];
    let content_types = [
        "application/json",
        "application/cbor",
        "application/merge-patch+json",
        "application/json-patch+json",
        "application/strategic-merge-patch+json",
        "application/apply-patch+yaml",
        "application/apply-patch+cbor",
        "application/yaml",
        "text/plain",
        "application/json; charset=latin1",
        "garbage/",
        "",
    ];
    let accepts = [
        "",
        "application/json",
        "application/cbor",
        "application/json;as=Table;g=meta.k8s.io;v=v1",
        "application/cbor;as=Table;v=v1;g=meta.k8s.io",
        "*/*",
        "text/html",
        "application/json;q=0",
        "application/cbor-seq",
        ";;;",
    ];
    let methods = [
        "GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS", "BREW",
    ];
    let seed = 0x5eed_2026_1121;
    let mut rng = Rng(seed);
    let mut ok = 0;
    let mut created = 0;
    for i in 0..1_500 {
        // Half the requests are well-formed around the Flunder collection, so that the odd
        // bodies and parameters reach the handlers, storage and watch hub.
        let sane = rng.chance(50);
        let method = if sane {
            *rng.pick(&["POST", "PUT", "PATCH", "GET", "DELETE"])
        } else {
            *rng.pick(&methods)
        };
        let query = *rng.pick(&queries);
        let path = if sane {
            &paths[usize::from(method != "POST")]
        } else {
            rng.pick(&paths)
        };
        let url = if query.is_empty() {
            path.clone()
        } else {
            format!("{path}?{query}")
        };
        let with_body = matches!(method, "POST" | "PUT" | "PATCH") || rng.chance(10);
        let payload = if with_body {
            body(&mut rng)
        } else {
            Vec::new()
        };
        let mut headers = Vec::new();
        let ct = match (sane, method) {
            (true, "PATCH") => *rng.pick(&content_types[2..7]),
            (true, _) if payload.starts_with(&conneg_cbor::SELF_DESCRIBED_PREFIX) => {
                "application/cbor"
            }
            (true, _) => "application/json",
            _ => *rng.pick(&content_types),
        };
        if !ct.is_empty() {
            headers.push(("Content-Type", ct));
        }
        let accept = if sane {
            *rng.pick(&accepts[..3])
        } else {
            *rng.pick(&accepts)
        };
        if !accept.is_empty() {
            headers.push(("Accept", accept));
        }
        let r: Resp = s.req(method, &url, &headers, &payload);
        assert!(
            r.code < 500,
            "request {i} (seed {seed:#x}): {method} {url} {headers:?} body {:?} -> {} {}",
            String::from_utf8_lossy(&payload),
            r.code,
            r.text()
        );
        ok += usize::from(r.code < 300);
        created += usize::from(r.code == 201);
    }
    // The mix reaches the handlers, not only the early rejections.
    assert!(
        ok >= 50 && created >= 10,
        "only {ok} of 1,500 requests succeeded, {created} created something"
    );
    let r = s.get("/readyz", "*/*");
    assert_eq!((r.code, r.text().as_str()), (200, "ok"));
}
