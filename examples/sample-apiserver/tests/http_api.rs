//! End-to-end tests over raw HTTP against the real binary (memory storage unless said).

mod common;

use common::{Server, flunders, tempdir};
use serde_json::{Value, json};

fn memory_server() -> (Server, tempfile::TempDir) {
    let dir = tempdir();
    let s = Server::start(dir.path(), &["--storage", "memory"]);
    (s, dir)
}

/// POSTs a JSON body to the v1beta1 Flunder collection of `default`, with `query` (`?…` or "").
fn post_flunder(s: &Server, query: &str, body: &str) -> common::Resp {
    s.req(
        "POST",
        &format!("{}{query}", flunders("v1beta1", "default")),
        &[("Content-Type", "application/json")],
        body.as_bytes(),
    )
}

const V1A1: &str = "wardle.example.com/v1alpha1";
const V1B1: &str = "wardle.example.com/v1beta1";

#[test]
fn discovery_legacy_and_aggregated() {
    let (s, _d) = memory_server();
    let r = s.get("/api", "application/json");
    assert_eq!(r.code, 200);
    assert_eq!(r.json()["kind"], "APIVersions");
    assert_eq!(r.json()["versions"], json!(["v1"]));

    let r = s.get("/apis", "application/json");
    let g = &r.json()["groups"][0];
    assert_eq!(g["name"], "wardle.example.com");
    assert_eq!(g["versions"][0]["version"], "v1beta1");
    assert_eq!(g["versions"][1]["version"], "v1alpha1");
    assert_eq!(g["preferredVersion"]["version"], "v1beta1");

    let r = s.get("/apis/wardle.example.com/v1alpha1", "application/json");
    let names: Vec<&str> = r.json()["resources"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["name"].as_str().unwrap().to_owned().leak() as &str)
        .collect();
    assert_eq!(names, ["fischers", "flunders"]);
    assert_eq!(r.json()["resources"][0]["namespaced"], false);
    assert_eq!(r.json()["resources"][1]["singularName"], "flunder");

    let agg =
        "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json";
    for path in ["/apis", "/api"] {
        let r = s.get(path, agg);
        assert_eq!(r.code, 200);
        assert_eq!(
            r.header("content-type"),
            Some("application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList")
        );
        assert_eq!(r.json()["kind"], "APIGroupDiscoveryList");
    }
    let r = s.get("/apis", agg);
    let v = &r.json()["items"][0]["versions"];
    assert_eq!(v[0]["version"], "v1beta1");
    assert_eq!(v[1]["resources"][0]["scope"], "Cluster");

    // CBOR discovery.
    let r = s.get("/apis", "application/cbor");
    assert_eq!(r.header("content-type"), Some("application/cbor"));
    assert_eq!(&r.body[..3], &[0xd9, 0xd9, 0xf7]);

    let r = s.get("/version", "application/json");
    assert!(
        r.json()["gitVersion"]
            .as_str()
            .unwrap()
            .starts_with("v1.32.0-conneg")
    );
    for p in [
        "/healthz",
        "/livez",
        "/readyz",
        "/healthz/ping",
        "/readyz/storage-memory",
    ] {
        let r = s.get(p, "*/*");
        assert_eq!((r.code, r.text().as_str()), (200, "ok"), "{p}");
    }
    // The storage check is named after the backend; `etcd` only for etcd.
    assert!(
        s.get("/healthz?verbose", "*/*")
            .text()
            .contains("[+]storage-memory ok")
    );
    assert_eq!(s.get("/readyz/etcd", "*/*").code, 404);
}

#[test]
fn openapi_v3_index_documents_and_cbor_accept() {
    let (s, _d) = memory_server();
    let idx = s.get("/openapi/v3", "application/json").json();
    for v in ["v1alpha1", "v1beta1"] {
        let url = idx["paths"][format!("apis/wardle.example.com/{v}")]["serverRelativeURL"]
            .as_str()
            .unwrap()
            .to_owned();
        assert!(url.contains("?hash="));
        // kubectl with the CBOR gates asks this way and reads JSON.
        let r = s.get(&url, "application/cbor, */*");
        assert_eq!(r.code, 200);
        assert_eq!(r.header("content-type"), Some("application/json"));
        let doc = r.json();
        let schemas = doc["components"]["schemas"].as_object().unwrap();
        let spec = &schemas[&format!("io.k8s.sample-apiserver.pkg.apis.wardle.{v}.FlunderSpec")];
        assert_eq!(
            spec["properties"]["referenceType"]["enum"],
            json!(["Fischer", "Flunder"])
        );
        assert!(spec["x-kubernetes-validations"].as_array().unwrap().len() >= 2);
        let p = format!("/apis/wardle.example.com/{v}/namespaces/{{namespace}}/flunders/{{name}}");
        let patch = &doc["paths"][&p]["patch"];
        assert_eq!(patch["x-kubernetes-group-version-kind"]["kind"], "Flunder");
        assert!(
            patch["parameters"]
                .as_array()
                .unwrap()
                .iter()
                .any(|p| p["name"] == "fieldValidation")
        );
    }
    assert_eq!(
        s.get("/openapi/v2", "application/json").json()["swagger"],
        "2.0"
    );
    assert_eq!(
        s.get("/openapi/v3/apis/wardle.example.com/v9", "*/*").code,
        404
    );
}

#[test]
fn crud_conversion_and_server_metadata() {
    let (s, _d) = memory_server();
    // Create in v1alpha1 (defaulting: referenceType Flunder), read in v1beta1.
    let r = s.post_json(
        &flunders("v1alpha1", "default"),
        &json!({"apiVersion": V1A1, "kind": "Flunder", "metadata": {"name": "a", "labels": {"x": "1"}},
                "spec": {"reference": "other"}})
        .to_string(),
    );
    assert_eq!(r.code, 201, "{}", r.text());
    let created = r.json();
    assert_eq!(created["spec"]["referenceType"], "Flunder");
    assert_eq!(created["metadata"]["namespace"], "default");
    assert_eq!(created["metadata"]["generation"], 1);
    assert!(created["metadata"]["uid"].as_str().unwrap().len() == 36);
    assert!(created["metadata"]["creationTimestamp"].is_string());
    let rv = created["metadata"]["resourceVersion"]
        .as_str()
        .unwrap()
        .to_owned();

    let b = s
        .get(
            &format!("{}/a", flunders("v1beta1", "default")),
            "application/json",
        )
        .json();
    assert_eq!(b["apiVersion"], V1B1);
    assert_eq!(
        b["spec"],
        json!({"flunderReference": "other", "referenceType": "Flunder"})
    );
    assert_eq!(b["metadata"]["uid"], created["metadata"]["uid"]);

    // Create in v1beta1 with a fischer reference, read in v1alpha1.
    let r = s.post_json(
        &flunders("v1beta1", "default"),
        &json!({"apiVersion": V1B1, "kind": "Flunder", "metadata": {"generateName": "gen-"},
                "spec": {"fischerReference": "f", "referenceType": "Fischer"}})
        .to_string(),
    );
    assert_eq!(r.code, 201, "{}", r.text());
    let name = r.json()["metadata"]["name"].as_str().unwrap().to_owned();
    assert!(name.starts_with("gen-") && name.len() == 9);
    let a = s
        .get(
            &format!("{}/{name}", flunders("v1alpha1", "default")),
            "application/json",
        )
        .json();
    assert_eq!(
        a["spec"],
        json!({"reference": "f", "referenceType": "Fischer"})
    );

    // Update: stale resourceVersion is a conflict; missing one is 422; a spec change bumps
    // the generation; uid and creationTimestamp are kept.
    let path = format!("{}/a", flunders("v1beta1", "default"));
    let mut obj = b.clone();
    obj["spec"]["flunderReference"] = json!("changed");
    let put = |o: &Value| {
        s.req(
            "PUT",
            &path,
            &[("Content-Type", "application/json")],
            o.to_string().as_bytes(),
        )
    };
    let r = put(&obj);
    assert_eq!(r.code, 200, "{}", r.text());
    let updated = r.json();
    assert_eq!(updated["metadata"]["generation"], 2);
    assert_eq!(updated["metadata"]["uid"], created["metadata"]["uid"]);
    assert_eq!(
        updated["metadata"]["creationTimestamp"],
        created["metadata"]["creationTimestamp"]
    );
    assert_ne!(updated["metadata"]["resourceVersion"], json!(rv));
    let r = put(&obj); // the old resourceVersion again
    assert_eq!(r.code, 409);
    assert_eq!(r.json()["reason"], "Conflict");
    assert!(
        r.json()["message"]
            .as_str()
            .unwrap()
            .contains("the object has been modified")
    );
    let mut norv = obj.clone();
    norv["metadata"]
        .as_object_mut()
        .unwrap()
        .remove("resourceVersion");
    let r = put(&norv);
    assert_eq!(r.code, 422);
    assert_eq!(
        r.json()["details"]["causes"][0]["field"],
        "metadata.resourceVersion"
    );
    // A metadata-only change keeps the generation.
    let mut lab = updated.clone();
    lab["metadata"]["labels"]["y"] = json!("2");
    let r = put(&lab);
    assert_eq!(r.json()["metadata"]["generation"], 2);

    // Get of a missing object, and delete returns a Status naming it (the generic registry's
    // answer; its details' kind is the resource).
    let r = s.get(
        &format!("{}/nope", flunders("v1beta1", "default")),
        "application/json",
    );
    assert_eq!(r.code, 404);
    assert_eq!(r.json()["reason"], "NotFound");
    let uid = s.get(&path, "application/json").json()["metadata"]["uid"].clone();
    let r = s.req("DELETE", &path, &[], b"");
    assert_eq!(r.code, 200);
    assert_eq!(r.json()["kind"], "Status");
    assert_eq!(r.json()["status"], "Success");
    assert_eq!(
        r.json()["details"],
        json!({"name": "a", "group": "wardle.example.com", "kind": "flunders", "uid": uid})
    );
    assert_eq!(s.req("DELETE", &path, &[], b"").code, 404);
}

#[test]
fn validation_admission_and_status_errors() {
    let (s, _d) = memory_server();
    let r = s.post_json(
        &flunders("v1beta1", "default"),
        &json!({"apiVersion": V1B1, "kind": "Flunder", "metadata": {"name": "bad"},
                "spec": {"flunderReference": "a", "fischerReference": "b"}})
        .to_string(),
    );
    assert_eq!(r.code, 422);
    let st = r.json();
    assert_eq!(st["kind"], "Status");
    assert_eq!(st["reason"], "Invalid");
    assert_eq!(st["details"]["causes"][0]["field"], "spec.fischerReference");
    assert_eq!(st["details"]["causes"][0]["reason"], "FieldValueInvalid");

    // BanFlunder.
    let r = s.post_json(
        "/apis/wardle.example.com/v1alpha1/fischers",
        &json!({"apiVersion": V1A1, "kind": "Fischer", "metadata": {"name": "f"},
                "disallowedFlunders": ["banned"]})
        .to_string(),
    );
    assert_eq!(r.code, 201, "{}", r.text());
    let r = s.post_json(
        &flunders("v1beta1", "default"),
        &json!({"apiVersion": V1B1, "kind": "Flunder", "metadata": {"name": "banned"}}).to_string(),
    );
    assert_eq!(r.code, 403);
    assert_eq!(
        r.json()["message"],
        "flunders.wardle.example.com \"banned\" is forbidden: this name may not be used, please change the resource name"
    );
    // The same error in CBOR.
    let r = s.req(
        "POST",
        &flunders("v1beta1", "default"),
        &[
            ("Content-Type", "application/json"),
            ("Accept", "application/cbor"),
        ],
        json!({"metadata": {"name": "banned"}})
            .to_string()
            .as_bytes(),
    );
    assert_eq!(r.code, 403);
    assert_eq!(r.header("content-type"), Some("application/cbor"));
    assert_eq!(&r.body[..3], &[0xd9, 0xd9, 0xf7]);

    // Mismatches are 400.
    let r = s.post_json(
        &flunders("v1alpha1", "default"),
        &json!({"apiVersion": V1B1, "kind": "Flunder", "metadata": {"name": "x"}}).to_string(),
    );
    assert_eq!(r.code, 400);
    let r = s.post_json(
        &flunders("v1beta1", "default"),
        &json!({"metadata": {"name": "x", "namespace": "other"}}).to_string(),
    );
    assert_eq!(r.code, 400);
    let r = s.post_json(
        &flunders("v1beta1", "default"),
        &json!({"metadata": {}}).to_string(),
    );
    assert_eq!(r.code, 422);
    // Duplicate name.
    let body = json!({"metadata": {"name": "dup"}}).to_string();
    assert_eq!(
        s.post_json(&flunders("v1beta1", "default"), &body).code,
        201
    );
    let r = s.post_json(&flunders("v1beta1", "default"), &body);
    assert_eq!(r.code, 409);
    assert_eq!(r.json()["reason"], "AlreadyExists");
}

#[test]
fn duplicate_json_fields_follow_field_validation() {
    let (s, _d) = memory_server();
    // `metadata.name` twice: Kubernetes keeps the last value unless asked to be strict.
    let body = |n: &str| {
        format!(
            r#"{{"apiVersion":"{V1B1}","kind":"Flunder","metadata":{{"name":"x","name":"{n}"}},"spec":{{}}}}"#
        )
    };
    let post = |q: &str, n: &str| post_flunder(&s, q, &body(n));
    let r = post("?fieldValidation=Strict", "s");
    assert_eq!(r.code, 400);
    assert_eq!(
        r.json()["message"],
        "strict decoding error: duplicate field \"metadata.name\""
    );
    let r = post("", "w");
    assert_eq!(r.code, 201);
    assert_eq!(r.json()["metadata"]["name"], "w");
    assert_eq!(
        r.header("warning"),
        Some(r#"299 - "duplicate field \"metadata.name\"""#)
    );
    let r = post("?fieldValidation=Ignore", "i");
    assert_eq!(r.code, 201);
    assert_eq!(r.json()["metadata"]["name"], "i");
    assert!(r.header("warning").is_none());
}

#[test]
fn field_validation_strict_warn_ignore() {
    let (s, _d) = memory_server();
    let body = |n: &str| {
        json!({"apiVersion": V1B1, "kind": "Flunder", "metadata": {"name": n}, "spec": {"foo": 1}})
            .to_string()
    };
    let post = |q: &str, n: &str| post_flunder(&s, q, &body(n));
    let r = post("?fieldValidation=Strict", "s");
    assert_eq!(r.code, 400);
    assert_eq!(
        r.json()["message"],
        "strict decoding error: unknown field \"spec.foo\""
    );
    let r = post("", "w");
    assert_eq!(r.code, 201);
    assert_eq!(
        r.header("warning"),
        Some(r#"299 - "unknown field \"spec.foo\"""#)
    );
    let r = post("?fieldValidation=Warn", "w2");
    assert_eq!(r.code, 201);
    assert!(r.header("warning").is_some());
    let r = post("?fieldValidation=Ignore", "i");
    assert_eq!(r.code, 201);
    assert!(r.header("warning").is_none());
    assert_eq!(post("?fieldValidation=Loud", "l").code, 400);
    // Strict also applies to the result of a patch.
    let r = s.req(
        "PATCH",
        &format!(
            "{}/i?fieldValidation=Strict",
            flunders("v1beta1", "default")
        ),
        &[("Content-Type", "application/merge-patch+json")],
        br#"{"spec":{"bar":2}}"#,
    );
    assert_eq!(r.code, 400, "{}", r.text());
}

#[test]
fn negotiation_errors_come_from_the_layer() {
    let (s, _d) = memory_server();
    let r = s.get(&flunders("v1beta1", "default"), "text/html");
    assert_eq!(r.code, 406);
    assert_eq!(r.json()["reason"], "NotAcceptable");
    let r = s.req(
        "POST",
        &flunders("v1beta1", "default"),
        &[
            ("Content-Type", "text/plain"),
            ("Accept", "application/json"),
        ],
        b"x",
    );
    assert_eq!(r.code, 415);
    assert_eq!(r.json()["reason"], "UnsupportedMediaType");
    assert!(r.header("accept").unwrap().contains("application/cbor"));
    let r = s.req(
        "PATCH",
        &format!("{}/x", flunders("v1beta1", "default")),
        &[("Content-Type", "application/json")],
        b"{}",
    );
    assert_eq!(r.code, 415);
    assert!(
        r.header("accept-patch")
            .unwrap()
            .contains("application/apply-patch+cbor")
    );
    // Table is JSON only: asking for it in CBOR falls through to the next clause.
    let r = s.get(
        &flunders("v1beta1", "default"),
        "application/cbor;as=Table;v=v1;g=meta.k8s.io, application/json",
    );
    assert_eq!(r.code, 200);
    assert_eq!(r.json()["kind"], "FlunderList");
}

#[test]
fn no_cbor_mode_serves_json_only() {
    let dir = tempdir();
    let s = Server::start(dir.path(), &["--storage", "memory", "--no-cbor"]);
    let r = s.req(
        "POST",
        &flunders("v1beta1", "default"),
        &[
            ("Content-Type", "application/cbor"),
            ("Accept", "application/cbor, */*"),
        ],
        &[0xd9, 0xd9, 0xf7, 0xa0],
    );
    assert_eq!(r.code, 415);
    assert_eq!(r.header("content-type"), Some("application/json"));
    assert_eq!(r.json()["reason"], "UnsupportedMediaType");
    let r = s.get(&flunders("v1beta1", "default"), "application/cbor, */*");
    assert_eq!(r.code, 200);
    assert_eq!(r.header("content-type"), Some("application/json"));
    assert_eq!(
        s.get(&flunders("v1beta1", "default"), "application/cbor")
            .code,
        406
    );
}

#[test]
fn list_paging_selectors_and_table() {
    let (s, _d) = memory_server();
    s.create_namespace("a");
    s.create_namespace("b");
    for (ns, name, env) in [
        ("a", "f1", "prod"),
        ("a", "f2", "dev"),
        ("a", "f3", "prod"),
        ("b", "f4", "prod"),
        ("b", "f5", "dev"),
    ] {
        let r = s.post_json(
            &flunders("v1beta1", ns),
            &json!({"metadata": {"name": name, "labels": {"env": env}}}).to_string(),
        );
        assert_eq!(r.code, 201);
    }
    let names = |v: &Value| -> Vec<String> {
        v["items"]
            .as_array()
            .unwrap()
            .iter()
            .map(|i| i["metadata"]["name"].as_str().unwrap().to_owned())
            .collect()
    };
    let all = s
        .get(
            "/apis/wardle.example.com/v1beta1/flunders",
            "application/json",
        )
        .json();
    assert_eq!(names(&all), ["f1", "f2", "f3", "f4", "f5"]);
    assert_eq!(all["kind"], "FlunderList");

    // Paging through everything with limit=2 and a label selector.
    let mut got = Vec::new();
    let mut cont = String::new();
    loop {
        let mut p =
            "/apis/wardle.example.com/v1beta1/flunders?limit=2&labelSelector=env%3Dprod".to_owned();
        if !cont.is_empty() {
            p.push_str(&format!("&continue={cont}"));
        }
        let page = s.get(&p, "application/json").json();
        assert!(page["items"].as_array().unwrap().len() <= 2);
        got.extend(names(&page));
        match page["metadata"]["continue"].as_str() {
            Some(c) if !c.is_empty() => cont = c.to_owned(),
            _ => break,
        }
    }
    assert_eq!(got, ["f1", "f3", "f4"]);
    let page = s
        .get(
            &format!("{}?limit=1", flunders("v1beta1", "a")),
            "application/json",
        )
        .json();
    assert_eq!(page["metadata"]["remainingItemCount"], 2);

    let r = s.get(
        "/apis/wardle.example.com/v1beta1/flunders?fieldSelector=metadata.namespace%3Db",
        "application/json",
    );
    assert_eq!(names(&r.json()), ["f4", "f5"]);
    assert_eq!(
        s.get(
            "/apis/wardle.example.com/v1beta1/flunders?fieldSelector=spec.x%3D1",
            "application/json"
        )
        .code,
        400
    );
    assert_eq!(
        s.get(
            "/apis/wardle.example.com/v1beta1/flunders?continue=zzz",
            "application/json"
        )
        .code,
        400
    );
    // Future resourceVersion: 504 with retry.
    let r = s.get(
        "/apis/wardle.example.com/v1beta1/flunders?resourceVersion=999999",
        "application/json",
    );
    assert_eq!(r.code, 504);

    // Table.
    let t = s
        .get(
            &flunders("v1beta1", "a"),
            "application/json;as=Table;v=v1;g=meta.k8s.io,application/json",
        )
        .json();
    assert_eq!(t["kind"], "Table");
    assert_eq!(t["apiVersion"], "meta.k8s.io/v1");
    let cols: Vec<&str> = t["columnDefinitions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["name"].as_str().unwrap())
        .collect();
    assert_eq!(cols, ["Name", "Reference Type", "Reference", "Age"]);
    assert_eq!(t["rows"][0]["object"]["kind"], "PartialObjectMetadata");
    assert_eq!(t["rows"][0]["cells"][0], "f1");
    let t = s
        .get(
            "/apis/wardle.example.com/v1alpha1/fischers",
            "application/json;as=Table;v=v1beta1;g=meta.k8s.io",
        )
        .json();
    assert_eq!(t["apiVersion"], "meta.k8s.io/v1beta1");
    assert_eq!(t["columnDefinitions"][1]["name"], "Disallowed Flunders");

    // deletecollection with a label selector.
    let r = s.req(
        "DELETE",
        &format!("{}?labelSelector=env%3Ddev", flunders("v1beta1", "a")),
        &[],
        b"",
    );
    assert_eq!(r.code, 200);
    assert_eq!(names(&r.json()), ["f2"]);
    assert_eq!(
        names(&s.get(&flunders("v1beta1", "a"), "application/json").json()),
        ["f1", "f3"]
    );
}

#[test]
fn patch_types() {
    let (s, _d) = memory_server();
    let coll = flunders("v1beta1", "default");
    assert_eq!(
        s.post_json(
            &coll,
            &json!({"metadata": {"name": "p", "labels": {"a": "1"}}}).to_string()
        )
        .code,
        201
    );
    let path = format!("{coll}/p");
    let patch = |ct: &str, q: &str, body: &str| {
        s.req(
            "PATCH",
            &format!("{path}{q}"),
            &[("Content-Type", ct)],
            body.as_bytes(),
        )
    };
    let r = patch(
        "application/merge-patch+json",
        "",
        r#"{"metadata":{"labels":{"a":null,"b":"2"}},"spec":{"flunderReference":"x","referenceType":"Flunder"}}"#,
    );
    assert_eq!(r.code, 200, "{}", r.text());
    assert_eq!(r.json()["metadata"]["labels"], json!({"b": "2"}));
    assert_eq!(r.json()["metadata"]["generation"], 2);
    let r = patch(
        "application/json-patch+json",
        "",
        r#"[{"op":"replace","path":"/spec/flunderReference","value":"y"}]"#,
    );
    assert_eq!(r.json()["spec"]["flunderReference"], "y");
    let r = patch(
        "application/json-patch+json",
        "",
        r#"[{"op":"test","path":"/spec/flunderReference","value":"nope"}]"#,
    );
    assert_eq!(r.code, 422);
    let r = patch(
        "application/strategic-merge-patch+json",
        "",
        r#"{"metadata":{"labels":{"$patch":"replace","c":"3"}}}"#,
    );
    assert_eq!(r.json()["metadata"]["labels"], json!({"c": "3"}));
    // Apply (YAML) needs a fieldManager; it may create.
    let yaml = "apiVersion: wardle.example.com/v1beta1\nkind: Flunder\nmetadata:\n  name: p\n  labels:\n    d: '4'\n";
    assert_eq!(patch("application/apply-patch+yaml", "", yaml).code, 422);
    let r = patch("application/apply-patch+yaml", "?fieldManager=test", yaml);
    assert_eq!(r.code, 200, "{}", r.text());
    assert_eq!(r.json()["metadata"]["labels"]["d"], "4");
    let r = s.req(
        "PATCH",
        &format!("{coll}/new?fieldManager=test"),
        &[("Content-Type", "application/apply-patch+yaml")],
        b"apiVersion: wardle.example.com/v1beta1\nkind: Flunder\nmetadata:\n  name: new\n",
    );
    assert_eq!(r.code, 201, "{}", r.text());
    // Merge patch of a missing object is 404; a stale resourceVersion in a patch is 409.
    let r = s.req(
        "PATCH",
        &format!("{coll}/missing"),
        &[("Content-Type", "application/merge-patch+json")],
        b"{}",
    );
    assert_eq!(r.code, 404);
    let r = patch(
        "application/merge-patch+json",
        "",
        r#"{"metadata":{"resourceVersion":"1"}}"#,
    );
    assert_eq!(r.code, 409);
    // Garbage bodies are 400, never 500.
    for (ct, body) in [
        ("application/merge-patch+json", "{"),
        ("application/json-patch+json", "{}"),
        ("application/apply-patch+yaml", "a: [\n"),
        ("application/apply-patch+cbor", "\u{ff}"),
        (
            "application/strategic-merge-patch+json",
            r#"{"$patch":"bogus"}"#,
        ),
    ] {
        let r = patch(ct, "?fieldManager=x", body);
        assert!(
            (400..500).contains(&r.code),
            "{ct}: {} {}",
            r.code,
            r.text()
        );
    }
}

#[test]
fn watch_events_selectors_and_expiry() {
    let dir = tempdir();
    let s = Server::start(dir.path(), &["--storage", "memory", "--history", "3"]);
    let coll = flunders("v1beta1", "default");
    let r = s.post_json(
        &coll,
        &json!({"metadata": {"name": "w1", "labels": {"k": "v"}}}).to_string(),
    );
    let rv = r.json()["metadata"]["resourceVersion"]
        .as_str()
        .unwrap()
        .to_owned();
    let addr = s.addr.clone();
    let path =
        format!("{coll}?watch=true&resourceVersion={rv}&timeoutSeconds=2&labelSelector=k%3Dv");
    let watcher = std::thread::spawn(move || {
        common::request(&addr, "GET", &path, &[("Accept", "application/json")], b"")
    });
    std::thread::sleep(std::time::Duration::from_millis(300));
    s.post_json(
        &coll,
        &json!({"metadata": {"name": "w2", "labels": {"k": "v"}}}).to_string(),
    );
    s.post_json(&coll, &json!({"metadata": {"name": "other"}}).to_string());
    s.req(
        "PATCH",
        &format!("{coll}/w1"),
        &[("Content-Type", "application/merge-patch+json")],
        br#"{"metadata":{"labels":{"k":null}}}"#,
    );
    let r = watcher.join().unwrap();
    assert_eq!(r.code, 200);
    let events: Vec<Value> = r
        .text()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let seen: Vec<(String, String)> = events
        .iter()
        .map(|e| {
            (
                e["type"].as_str().unwrap().to_owned(),
                e["object"]["metadata"]["name"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    // w2 added; "other" filtered out; w1 stopped matching: DELETED.
    assert_eq!(
        seen,
        [
            ("ADDED".into(), "w2".into()),
            ("DELETED".into(), "w1".into())
        ]
    );

    // Without resourceVersion: the current state first.
    let r = s.req(
        "GET",
        &format!("{coll}?watch=1&timeoutSeconds=1"),
        &[("Accept", "application/json")],
        b"",
    );
    let first: Value = serde_json::from_str(r.text().lines().next().unwrap()).unwrap();
    assert_eq!(first["type"], "ADDED");

    // Too old: 410 Expired (history is 3 revisions).
    for i in 0..5 {
        s.post_json(
            &coll,
            &json!({"metadata": {"name": format!("x{i}")}}).to_string(),
        );
    }
    let r = s.req(
        "GET",
        &format!("{coll}?watch=true&resourceVersion=2"),
        &[("Accept", "application/json")],
        b"",
    );
    assert_eq!(r.code, 410);
    assert_eq!(r.json()["reason"], "Expired");

    // CBOR watch: a CBOR Sequence.
    let r = s.req(
        "GET",
        &format!("{coll}?watch=true&timeoutSeconds=1"),
        &[("Accept", "application/cbor")],
        b"",
    );
    assert_eq!(r.header("content-type"), Some("application/cbor-seq"));
    assert_eq!(&r.body[..3], &[0xd9, 0xd9, 0xf7]);

    // Asking for the sequence type by name: the same stream, event by event.
    let r = s.req(
        "GET",
        &format!("{coll}?watch=true&timeoutSeconds=1"),
        &[("Accept", "application/cbor-seq")],
        b"",
    );
    assert_eq!(r.code, 200, "{}", r.text());
    assert_eq!(r.header("content-type"), Some("application/cbor-seq"));
    let mut decoder =
        conneg::client::WatchDecoder::<Value>::new(conneg::client::StreamFormat::CborSeq);
    decoder.push(&r.body);
    let first = decoder.next_event().unwrap().expect("an event");
    assert!(matches!(first, conneg::WatchEvent::Added(_)), "{first:?}");
}

#[test]
fn metrics_count_media_types() {
    let (s, _d) = memory_server();
    s.get(&flunders("v1beta1", "default"), "application/cbor");
    s.get(&flunders("v1beta1", "default"), "text/html");
    let m = s.get("/metrics", "*/*").text();
    assert!(m.contains(r#"apiserver_request_total{verb="LIST",group="wardle.example.com",version="v1beta1",resource="flunders",code="200",request_content_type="",response_content_type="application/cbor"} 1"#), "{m}");
    assert!(m.contains(r#"verb="LIST",group="wardle.example.com",version="v1beta1",resource="flunders",code="406""#), "{m}");
}

/// The embedded store's commits are counted in `/metrics` (what a group commit gathers is
/// writes over commits); the memory store has none to count.
#[test]
fn metrics_count_the_embedded_stores_commits() {
    let commits = |s: &Server| -> u64 {
        let m = s.get("/metrics", "*/*").text();
        let line = m
            .lines()
            .find(|l| l.starts_with("conneg_storage_commits_total "))
            .unwrap_or_else(|| panic!("no commits counted: {m}"));
        line.rsplit(' ').next().unwrap().parse().unwrap()
    };
    let dir = tempdir();
    let s = Server::start(dir.path(), &[]);
    let before = commits(&s);
    for i in 0..3 {
        let body = json!({"metadata": {"name": format!("c{i}")}}).to_string();
        assert_eq!(post_flunder(&s, "", &body).code, 201);
    }
    // At least one commit each (the server may write on its own meanwhile: controllers).
    let after = commits(&s);
    assert!(
        after >= before + 3,
        "{before} -> {after} commits for 3 sequential creates"
    );
    let (memory, _d) = memory_server();
    let m = memory.get("/metrics", "*/*").text();
    assert!(!m.contains("conneg_storage_commits_total"), "{m}");
}

#[test]
fn hostile_input_never_500s() {
    let (s, _d) = memory_server();
    let coll = flunders("v1beta1", "default");
    type Case<'a> = (&'a str, String, Vec<(&'a str, &'a str)>, Vec<u8>);
    let mut cases: Vec<Case<'_>> = vec![
        (
            "GET",
            "/apis/wardle.example.com/v1beta1/namespaces/%ff/flunders".into(),
            vec![],
            vec![],
        ),
        (
            "GET",
            "/apis/wardle.example.com/v9/flunders".into(),
            vec![],
            vec![],
        ),
        (
            "GET",
            "/apis/wardle.example.com/v1beta1/fischers".into(),
            vec![],
            vec![],
        ),
        (
            "GET",
            "/apis/wardle.example.com/v1alpha1/namespaces/a/fischers".into(),
            vec![],
            vec![],
        ),
        ("GET", format!("{coll}?limit=abc"), vec![], vec![]),
        (
            "GET",
            format!("{coll}?labelSelector=a%20in%20("),
            vec![],
            vec![],
        ),
        (
            "GET",
            format!("{coll}?resourceVersion=-5&watch=true"),
            vec![],
            vec![],
        ),
        ("GET", format!("{coll}?resourceVersion=x"), vec![], vec![]),
        (
            "GET",
            format!("{coll}?timeoutSeconds=x&watch=1"),
            vec![],
            vec![],
        ),
        (
            "POST",
            coll.clone(),
            vec![("Content-Type", "application/json")],
            b"[1,2".to_vec(),
        ),
        (
            "POST",
            coll.clone(),
            vec![("Content-Type", "application/json")],
            b"null".to_vec(),
        ),
        (
            "POST",
            coll.clone(),
            vec![("Content-Type", "application/json")],
            br#"{"metadata":{"name":"../x"}}"#.to_vec(),
        ),
        (
            "POST",
            coll.clone(),
            vec![("Content-Type", "application/json")],
            br#"{"metadata":{"name":"a","creationTimestamp":"bogus"}}"#.to_vec(),
        ),
        (
            "POST",
            coll.clone(),
            vec![("Content-Type", "application/cbor")],
            vec![0xd9, 0xd9, 0xf7, 0xff],
        ),
        (
            "POST",
            coll.clone(),
            vec![("Content-Type", "application/cbor")],
            vec![0x9f; 64],
        ),
        (
            "PUT",
            format!("{coll}/x"),
            vec![("Content-Type", "application/json")],
            br#"{"metadata":{"name":"x","resourceVersion":"abc"}}"#.to_vec(),
        ),
        ("PUT", coll.clone(), vec![], vec![]),
        (
            "DELETE",
            format!("{coll}/x"),
            vec![("Content-Type", "application/json")],
            b"{bad".to_vec(),
        ),
        (
            "POST",
            "/apis/wardle.example.com/v1beta1/flunders".into(),
            vec![("Content-Type", "application/json")],
            b"{}".to_vec(),
        ),
    ];
    // A 5000-deep CBOR apply patch (conneg-cbor decodes 10000 levels).
    let mut deep = [0xa1u8, 0x41, b'a'].repeat(5000);
    deep.push(0x01);
    cases.push((
        "PATCH",
        format!("{coll}/x?fieldManager=t"),
        vec![("Content-Type", "application/apply-patch+cbor")],
        deep,
    ));
    for (m, p, h, b) in cases {
        let r = s.req(m, &p, &h, &b);
        assert!(
            (400..500).contains(&r.code),
            "{m} {p}: {} {}",
            r.code,
            r.text()
        );
    }
    assert_eq!(s.get("/healthz", "*/*").code, 200);
}

#[test]
fn dry_run_preconditions_and_table_watch() {
    let (s, _d) = memory_server();
    let coll = flunders("v1beta1", "default");
    // dryRun=All: the answer is the object, nothing is stored.
    let r = s.post_json(
        &format!("{coll}?dryRun=All"),
        &json!({"metadata": {"name": "dry"}}).to_string(),
    );
    assert_eq!(r.code, 201, "{}", r.text());
    assert_eq!(r.json()["metadata"]["name"], "dry");
    assert_eq!(s.get(&format!("{coll}/dry"), "application/json").code, 404);
    assert_eq!(s.post_json(&format!("{coll}?dryRun=Some"), "{}").code, 400);

    // Delete preconditions.
    let r = s.post_json(&coll, &json!({"metadata": {"name": "pre"}}).to_string());
    let uid = r.json()["metadata"]["uid"].as_str().unwrap().to_owned();
    let del = |body: Value| {
        s.req(
            "DELETE",
            &format!("{coll}/pre"),
            &[("Content-Type", "application/json")],
            body.to_string().as_bytes(),
        )
    };
    let r = del(json!({"preconditions": {"uid": "other"}}));
    assert_eq!(r.code, 409);
    assert!(
        r.json()["message"]
            .as_str()
            .unwrap()
            .contains("the UID in the precondition (other) does not match")
    );
    let r = del(json!({"preconditions": {"uid": uid}, "propagationPolicy": "Background"}));
    assert_eq!(r.code, 200);
    assert!(
        r.header("warning").is_none(),
        "DeleteOptions fields are not warned about"
    );

    // A watch asking for Table gets one-row Tables, column definitions on the first only.
    s.post_json(&coll, &json!({"metadata": {"name": "t1"}}).to_string());
    s.post_json(&coll, &json!({"metadata": {"name": "t2"}}).to_string());
    let r = s.req(
        "GET",
        &format!("{coll}?watch=true&timeoutSeconds=1"),
        &[("Accept", "application/json;as=Table;v=v1;g=meta.k8s.io")],
        b"",
    );
    assert_eq!(r.code, 200);
    let events: Vec<Value> = r
        .text()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(events.len(), 2);
    assert_eq!(events[0]["object"]["kind"], "Table");
    assert!(events[0]["object"]["columnDefinitions"].is_array());
    assert!(events[1]["object"].get("columnDefinitions").is_none());
    assert_eq!(events[1]["object"]["rows"][0]["cells"][0], "t2");
}

/// Watches that start now without selectors share one hub: live events reach all of them,
/// each sees only its namespace (or object), in its own codec.
#[test]
fn shared_watches_get_live_events() {
    let (s, _d) = memory_server();
    s.create_namespace("a");
    s.create_namespace("b");
    let coll_a = flunders("v1beta1", "a");
    let coll_b = flunders("v1beta1", "b");
    s.post_json(
        &coll_a,
        &json!({"metadata": {"name": "before"}}).to_string(),
    );
    let start = |path: String, accept: &'static str| {
        let addr = s.addr.clone();
        std::thread::spawn(move || common::request(&addr, "GET", &path, &[("Accept", accept)], b""))
    };
    let all = start(
        "/apis/wardle.example.com/v1beta1/flunders?watch=true&timeoutSeconds=2".into(),
        "application/json",
    );
    let only_a = start(
        format!("{coll_a}?watch=true&timeoutSeconds=2"),
        "application/json",
    );
    let one = start(
        format!("{coll_a}/later?watch=true&timeoutSeconds=2"),
        "application/json",
    );
    let cbor = start(
        format!("{coll_b}?watch=true&timeoutSeconds=2"),
        "application/cbor",
    );
    std::thread::sleep(std::time::Duration::from_millis(500));
    s.post_json(&coll_a, &json!({"metadata": {"name": "later"}}).to_string());
    s.post_json(&coll_b, &json!({"metadata": {"name": "other"}}).to_string());
    s.req("DELETE", &format!("{coll_a}/later"), &[], b"");
    let events = |r: common::Resp| -> Vec<(String, String)> {
        r.text()
            .lines()
            .map(|l| {
                let e: Value = serde_json::from_str(l).unwrap();
                (
                    e["type"].as_str().unwrap().to_owned(),
                    e["object"]["metadata"]["name"].as_str().unwrap().to_owned(),
                )
            })
            .collect()
    };
    let ev = |t: &str, n: &str| (t.to_owned(), n.to_owned());
    assert_eq!(
        events(all.join().unwrap()),
        [
            ev("ADDED", "before"),
            ev("ADDED", "later"),
            ev("ADDED", "other"),
            ev("DELETED", "later")
        ]
    );
    assert_eq!(
        events(only_a.join().unwrap()),
        [
            ev("ADDED", "before"),
            ev("ADDED", "later"),
            ev("DELETED", "later")
        ]
    );
    assert_eq!(
        events(one.join().unwrap()),
        [ev("ADDED", "later"), ev("DELETED", "later")]
    );
    let r = cbor.join().unwrap();
    assert_eq!(r.header("content-type"), Some("application/cbor-seq"));
    assert!(
        r.body.windows(5).any(|w| w == b"other"),
        "CBOR watcher saw the new object"
    );
    assert!(
        !r.body.windows(6).any(|w| w == b"before"),
        "and only its namespace"
    );
}

/// `allowWatchBookmarks=true`: after 10 s without events a BOOKMARK carries the revision.
#[test]
fn watch_bookmarks_after_quiet() {
    let (s, _d) = memory_server();
    let coll = flunders("v1beta1", "default");
    let r = s.post_json(&coll, &json!({"metadata": {"name": "b"}}).to_string());
    let rv = r.json()["metadata"]["resourceVersion"]
        .as_str()
        .unwrap()
        .to_owned();
    let r = s.req(
        "GET",
        &format!(
            "{coll}?watch=true&allowWatchBookmarks=true&resourceVersion={rv}&timeoutSeconds=12"
        ),
        &[("Accept", "application/json")],
        b"",
    );
    assert_eq!(r.code, 200);
    let first: Value = serde_json::from_str(r.text().lines().next().expect("an event")).unwrap();
    assert_eq!(first["type"], "BOOKMARK");
    assert_eq!(first["object"]["kind"], "Flunder");
    assert_eq!(first["object"]["metadata"]["resourceVersion"], json!(rv));
}
