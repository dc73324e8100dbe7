//! conneg's client layer (hyper-util transport) against the real binary, started normally and
//! with `--no-cbor`: what it sends is read back from the server's `/metrics`
//! (`apiserver_request_total` by verb, resource, code and request/response media type).

mod common;

use common::{Server, flunders, tempdir};
use conneg::client::{Client, ContentNegotiationLayer, Gates};
use conneg::watch::WatchEvent;
use futures_util::StreamExt;
use serde_json::{Value, json};

const V1B1: &str = "wardle.example.com/v1beta1";
const FISCHERS: &str = "/apis/wardle.example.com/v1alpha1/fischers";

/// One `apiserver_request_total` series.
#[derive(Debug)]
struct Series {
    verb: String,
    resource: String,
    code: u16,
    request_content_type: String,
    response_content_type: String,
    count: u64,
}

fn label(line: &str, name: &str) -> String {
    let key = format!("{name}=\"");
    let start = line.find(&key).map(|i| i + key.len()).unwrap_or(0);
    let end = line[start..].find('"').map(|i| start + i).unwrap_or(start);
    line[start..end].to_owned()
}

fn metrics(s: &Server) -> Vec<Series> {
    s.get("/metrics", "*/*")
        .text()
        .lines()
        .filter(|l| l.starts_with("apiserver_request_total{"))
        .map(|l| Series {
            verb: label(l, "verb"),
            resource: label(l, "resource"),
            code: label(l, "code").parse().unwrap(),
            request_content_type: label(l, "request_content_type"),
            response_content_type: label(l, "response_content_type"),
            count: l.rsplit(' ').next().unwrap().parse().unwrap(),
        })
        .collect()
}

fn count(s: &Server, f: impl Fn(&Series) -> bool) -> u64 {
    metrics(s).iter().filter(|x| f(x)).map(|x| x.count).sum()
}

fn flunder(name: &str) -> Value {
    json!({"apiVersion": V1B1, "kind": "Flunder", "metadata": {"name": name}})
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

#[test]
fn no_cbor_server_one_415_per_method_and_resource() {
    let dir = tempdir();
    let s = Server::start(dir.path(), &["--storage", "memory", "--no-cbor"]);
    let coll = flunders("v1beta1", "default");
    runtime().block_on(async {
        let client = Client::new(&s.url()).unwrap();
        const N: usize = 6;
        for i in 0..N {
            let created: Value = client
                .create(&coll, &flunder(&format!("f{i}")))
                .await
                .unwrap();
            assert_eq!(created["metadata"]["name"], format!("f{i}"));
        }
        // Exactly one 415, and N creates, all in JSON after the first attempt.
        assert_eq!(count(&s, |x| x.code == 415), 1, "{:?}", metrics(&s));
        assert_eq!(
            count(&s, |x| x.verb == "POST"
                && x.code == 201
                && x.request_content_type == "application/json"),
            N as u64
        );

        // Another resource, and another verb on the same one: CBOR is tried first again.
        let _: Value = client
            .create(FISCHERS, &json!({"metadata": {"name": "fi"}}))
            .await
            .unwrap();
        let mut obj: Value = client.get(&format!("{coll}/f0")).await.unwrap();
        obj["metadata"]["labels"] = json!({"x": "1"});
        let updated: Value = client.update(&format!("{coll}/f0"), &obj).await.unwrap();
        assert_eq!(updated["metadata"]["labels"]["x"], "1");
        let m = metrics(&s);
        let is_415 = |verb: &str, resource: &str| {
            m.iter().any(|x| {
                x.code == 415
                    && x.verb == verb
                    && x.resource == resource
                    && x.request_content_type == "application/cbor"
            })
        };
        assert!(is_415("POST", "fischers"), "{m:?}");
        assert!(is_415("PUT", "flunders"), "{m:?}");
        assert_eq!(count(&s, |x| x.code == 415), 3);

        // Apply: apply-patch+cbor refused (the 415 lists Accept-Patch), apply-patch+yaml next,
        // then straight to it.
        for i in 0..2 {
            let mut o = flunder("f1");
            o["metadata"]["labels"] = json!({"applied": i.to_string()});
            let v: Value = client
                .apply(&format!("{coll}/f1"), &o, "test", true)
                .await
                .unwrap();
            assert_eq!(v["metadata"]["labels"]["applied"], i.to_string());
        }
        assert_eq!(
            count(&s, |x| x.code == 415 && x.verb == "APPLY"),
            1,
            "{:?}",
            metrics(&s)
        );
        assert_eq!(
            count(&s, |x| x.code == 200
                && x.verb == "APPLY"
                && x.request_content_type == "application/apply-patch+yaml"),
            2
        );

        // Errors surface the server's Status.
        let err = client
            .get::<Value>(&format!("{coll}/nope"))
            .await
            .unwrap_err();
        let status = err.status().expect("a Status");
        assert_eq!(status.code, 404);
        assert_eq!(
            status.message,
            r#"flunders.wardle.example.com "nope" not found"#
        );
        let err = client.create(&coll, &flunder("f2")).await.unwrap_err();
        assert_eq!(err.status().map(|s| s.code), Some(409));
    });
}

#[test]
fn cbor_server_gets_cbor_both_ways() {
    let dir = tempdir();
    let s = Server::start(dir.path(), &["--storage", "memory"]);
    let coll = flunders("v1beta1", "default");
    runtime().block_on(async {
        let client = Client::new(&s.url()).unwrap();
        let reply = client
            .request::<Value>(
                http::Method::POST,
                &coll,
                conneg::client::ClientBody::object(&flunder("a")).unwrap(),
            )
            .await
            .unwrap();
        assert_eq!(reply.value["metadata"]["name"], "a");
        assert_eq!(reply.exchange.content_type, Some("application/cbor"));
        assert_eq!(
            reply.exchange.response_content_type.as_deref(),
            Some("application/cbor")
        );
        assert!(reply.exchange.fallback.is_none());
        let list: Value = client.list(&coll).await.unwrap();
        assert_eq!(list["items"][0]["metadata"]["name"], "a");
        let o = client
            .apply(&format!("{coll}/b"), &flunder("b"), "test", false)
            .await
            .unwrap();
        assert_eq!(o["metadata"]["name"], "b");
        // A Status of Success naming the object, as the generic registry answers.
        let gone: Value = client.delete(&format!("{coll}/a")).await.unwrap();
        assert_eq!(gone["details"]["name"], "a");
    });
    assert_eq!(count(&s, |x| x.code == 415), 0);
    assert_eq!(
        count(&s, |x| x.verb == "POST"
            && x.code == 201
            && x.request_content_type == "application/cbor"
            && x.response_content_type == "application/cbor"),
        1
    );
    assert_eq!(
        count(&s, |x| x.verb == "APPLY"
            && x.request_content_type == "application/apply-patch+cbor"),
        1
    );
}

#[test]
fn gates_decide_what_is_sent_and_accepted() {
    let dir = tempdir();
    let s = Server::start(dir.path(), &["--storage", "memory"]);
    let coll = flunders("v1beta1", "default");
    let rt = runtime();

    // Allow off: no CBOR sent and none received, for every verb.
    rt.block_on(async {
        let client = Client::builder(&s.url())
            .unwrap()
            .layer(ContentNegotiationLayer::new().gates(Gates::json_only()))
            .build();
        let mut o: Value = client.create(&coll, &flunder("j")).await.unwrap();
        o["metadata"]["labels"] = json!({"a": "b"});
        let _: Value = client.update(&format!("{coll}/j"), &o).await.unwrap();
        let _: Value = client
            .apply(&format!("{coll}/k"), &flunder("k"), "test", false)
            .await
            .unwrap();
        let _: Value = client.list(&coll).await.unwrap();
        let mut w = client.watch::<Value>(&coll).await.unwrap();
        assert!(matches!(w.next().await, Some(Ok(WatchEvent::Added(_)))));
    });
    let m = metrics(&s);
    let resources: Vec<&Series> = m.iter().filter(|x| x.resource == "flunders").collect();
    assert!(resources.len() >= 5, "{m:?}");
    assert!(
        resources
            .iter()
            .all(|x| !x.request_content_type.contains("cbor")
                && !x.response_content_type.contains("cbor")),
        "{resources:?}"
    );

    // Allow on, prefer off: JSON bodies, CBOR responses (as client-go's dynamic client).
    rt.block_on(async {
        let client = Client::builder(&s.url())
            .unwrap()
            .layer(ContentNegotiationLayer::new().gates(Gates::new().prefer_cbor(false)))
            .build();
        let _: Value = client.create(&coll, &flunder("p")).await.unwrap();
    });
    assert_eq!(
        count(&s, |x| x.verb == "POST"
            && x.code == 201
            && x.request_content_type == "application/json"
            && x.response_content_type == "application/cbor"),
        1,
        "{:?}",
        metrics(&s)
    );
    assert_eq!(count(&s, |x| x.request_content_type.contains("cbor")), 0);
}

#[test]
fn watch_streams_decode_in_both_formats() {
    for (args, content_type) in [
        (&["--storage", "memory"][..], "application/cbor-seq"),
        (
            &["--storage", "memory", "--no-cbor"][..],
            "application/json",
        ),
    ] {
        let dir = tempdir();
        let s = Server::start(dir.path(), args);
        let coll = flunders("v1beta1", "default");
        runtime().block_on(async {
            let client = Client::new(&s.url()).unwrap();
            let _: Value = client.create(&coll, &flunder("w1")).await.unwrap();
            let reply = client.watch_reply::<Value>(&coll).await.unwrap();
            assert_eq!(
                reply.exchange.response_content_type.as_deref(),
                Some(content_type)
            );
            let mut events = reply.value;
            let first = events.next().await.unwrap().unwrap();
            assert_eq!(first.object().unwrap()["metadata"]["name"], "w1");
            assert!(matches!(first, WatchEvent::Added(_)));
            // A live change arrives as the next event.
            let _: Value = client.create(&coll, &flunder("w2")).await.unwrap();
            let next = events.next().await.unwrap().unwrap();
            assert!(
                matches!(&next, WatchEvent::Added(o) if o["metadata"]["name"] == "w2"),
                "{next:?}"
            );
            let _: Value = client.delete(&format!("{coll}/w1")).await.unwrap();
            let next = events.next().await.unwrap().unwrap();
            assert!(
                matches!(&next, WatchEvent::Deleted(o) if o["metadata"]["name"] == "w1"),
                "{next:?}"
            );
        });
    }
}
