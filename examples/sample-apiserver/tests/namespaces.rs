//! Standalone mode: core v1 namespaces (discovery, OpenAPI, create/get/list/delete, Table),
//! NamespaceLifecycle on creates, cascade delete, and `--standalone=false`.

mod common;

use common::{Server, flunders, tempdir};
use serde_json::{Value, json};

const AGG: &str = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList";

fn server(args: &[&str]) -> (Server, tempfile::TempDir) {
    let dir = tempdir();
    let mut all = vec!["--storage", "memory"];
    all.extend_from_slice(args);
    let s = Server::start(dir.path(), &all);
    (s, dir)
}

fn create_flunder(s: &Server, ns: &str, name: &str) -> common::Resp {
    s.post_json(
        &flunders("v1beta1", ns),
        &json!({"metadata": {"name": name}}).to_string(),
    )
}

fn names(list: &Value) -> Vec<String> {
    list["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["metadata"]["name"].as_str().unwrap().to_owned())
        .collect()
}

#[test]
fn discovery_lists_core_v1_namespaces() {
    let (s, _d) = server(&[]);
    assert_eq!(
        s.get("/api", "application/json").json()["versions"],
        json!(["v1"])
    );
    let r = s.get("/api/v1", "application/json");
    assert_eq!(r.code, 200);
    let list = r.json();
    assert_eq!(list["kind"], "APIResourceList");
    assert_eq!(list["groupVersion"], "v1");
    let ns = &list["resources"][0];
    assert_eq!(ns["name"], "namespaces");
    assert_eq!(ns["kind"], "Namespace");
    assert_eq!(ns["namespaced"], false);
    assert_eq!(ns["shortNames"], json!(["ns"]));
    assert_eq!(
        ns["verbs"],
        json!([
            "create", "delete", "get", "list", "patch", "update", "watch"
        ])
    );

    let agg = s.get("/api", AGG).json();
    let core = &agg["items"][0];
    assert_eq!(core["metadata"]["name"], "");
    assert_eq!(core["versions"][0]["version"], "v1");
    let res = &core["versions"][0]["resources"][0];
    assert_eq!(res["resource"], "namespaces");
    assert_eq!(res["scope"], "Cluster");
    assert_eq!(
        res["responseKind"],
        json!({"group": "", "version": "v1", "kind": "Namespace"})
    );
    // /apis stays the named groups alone: the server's own, then custom resource
    // definitions' and priority and fairness's (served standalone).
    let agg = s.get("/apis", AGG).json();
    let names: Vec<&Value> = agg["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| &g["metadata"]["name"])
        .collect();
    assert_eq!(
        names,
        [
            &json!("wardle.example.com"),
            &json!("apiextensions.k8s.io"),
            &json!("flowcontrol.apiserver.k8s.io")
        ]
    );

    let index = s.get("/openapi/v3", "application/json").json();
    let url = index["paths"]["api/v1"]["serverRelativeURL"]
        .as_str()
        .unwrap()
        .to_owned();
    let doc = s.get(&url, "application/json").json();
    let schema = &doc["components"]["schemas"]["io.k8s.api.core.v1.Namespace"];
    assert_eq!(
        schema["x-kubernetes-group-version-kind"],
        json!([{"group": "", "kind": "Namespace", "version": "v1"}])
    );
    assert!(
        doc["paths"]["/api/v1/namespaces/{name}"]["patch"]["parameters"]
            .as_array()
            .unwrap()
            .iter()
            .any(|p| p["name"] == "fieldValidation")
    );
}

#[test]
fn system_namespaces_exist_and_new_ones_get_kubernetes_defaults() {
    let (s, _d) = server(&[]);
    let list = s.get("/api/v1/namespaces", "application/json").json();
    assert_eq!(list["kind"], "NamespaceList");
    assert_eq!(
        names(&list),
        ["default", "kube-node-lease", "kube-public", "kube-system"]
    );

    let r = s.post_json("/api/v1/namespaces", r#"{"metadata":{"name":"team"}}"#);
    assert_eq!(r.code, 201, "{}", r.text());
    let ns = r.json();
    assert_eq!(ns["kind"], "Namespace");
    assert_eq!(ns["apiVersion"], "v1");
    assert_eq!(ns["spec"]["finalizers"], json!(["kubernetes"]));
    assert_eq!(ns["status"]["phase"], "Active");
    assert_eq!(
        ns["metadata"]["labels"]["kubernetes.io/metadata.name"],
        "team"
    );
    assert_eq!(
        s.get("/api/v1/namespaces/team", "application/json").json()["metadata"]["uid"],
        ns["metadata"]["uid"]
    );

    // A namespace name is a DNS-1123 label.
    let r = s.post_json("/api/v1/namespaces", r#"{"metadata":{"name":"a.b"}}"#);
    assert_eq!(r.code, 422, "{}", r.text());

    let table = s
        .get(
            "/api/v1/namespaces/team",
            "application/json;as=Table;v=v1;g=meta.k8s.io",
        )
        .json();
    let cols: Vec<&str> = table["columnDefinitions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["name"].as_str().unwrap())
        .collect();
    assert_eq!(cols, ["Name", "Status", "Age"]);
    assert_eq!(table["rows"][0]["cells"][0], "team");
    assert_eq!(table["rows"][0]["cells"][1], "Active");

    // The system namespaces may not be deleted.
    let r = s.req("DELETE", "/api/v1/namespaces/default", &[], b"");
    assert_eq!(r.code, 403);
    assert_eq!(
        r.json()["message"],
        "namespaces \"default\" is forbidden: this namespace may not be deleted"
    );
}

#[test]
fn create_in_a_missing_namespace_is_404() {
    let (s, _d) = server(&[]);
    let r = create_flunder(&s, "nope", "f");
    assert_eq!(r.code, 404, "{}", r.text());
    let st = r.json();
    assert_eq!(st["reason"], "NotFound");
    assert_eq!(st["message"], "namespaces \"nope\" not found");
    assert_eq!(st["details"], json!({"name": "nope", "kind": "namespaces"}));
    // Nothing was stored.
    let all = s
        .get(
            "/apis/wardle.example.com/v1beta1/flunders",
            "application/json",
        )
        .json();
    assert!(names(&all).is_empty());
    assert_eq!(create_flunder(&s, "default", "f").code, 201);
}

#[test]
fn deleting_a_namespace_deletes_what_is_in_it() {
    let (s, _d) = server(&[]);
    s.create_namespace("doomed");
    s.create_namespace("kept");
    for (ns, name) in [("doomed", "a"), ("doomed", "b"), ("kept", "c")] {
        assert_eq!(create_flunder(&s, ns, name).code, 201);
    }
    let r = s.req("DELETE", "/api/v1/namespaces/doomed", &[], b"");
    assert_eq!(r.code, 200, "{}", r.text());
    // Kubernetes answers with the namespace, marked for deletion.
    let ns = r.json();
    assert_eq!(ns["kind"], "Namespace");
    assert_eq!(ns["status"]["phase"], "Terminating");
    assert!(ns["metadata"]["deletionTimestamp"].is_string());

    assert_eq!(
        s.get("/api/v1/namespaces/doomed", "application/json").code,
        404
    );
    let all = s
        .get(
            "/apis/wardle.example.com/v1beta1/flunders",
            "application/json",
        )
        .json();
    assert_eq!(names(&all), ["c"]);
    // The namespace is gone, so is the right to create in it.
    assert_eq!(create_flunder(&s, "doomed", "d").code, 404);
    // Namespaces have no deletecollection.
    assert_eq!(s.req("DELETE", "/api/v1/namespaces", &[], b"").code, 405);
}

#[test]
fn a_metadata_finalizer_holds_a_namespace_until_it_is_removed() {
    let (s, _d) = server(&[]);
    let r = s.post_json(
        "/api/v1/namespaces",
        &json!({"metadata": {"name": "held", "finalizers": ["example.com/hold"]}}).to_string(),
    );
    assert_eq!(r.code, 201, "{}", r.text());
    assert_eq!(create_flunder(&s, "held", "a").code, 201);
    let r = s.req("DELETE", "/api/v1/namespaces/held", &[], b"");
    assert_eq!(r.code, 200, "{}", r.text());
    // Its content is gone and its own finalizer too, but it stays, Terminating.
    let got = s.get("/api/v1/namespaces/held", "application/json");
    assert_eq!(got.code, 200);
    let ns = got.json();
    assert_eq!(ns["status"]["phase"], "Terminating");
    assert_eq!(ns["spec"]["finalizers"], Value::Null, "{ns}");
    assert_eq!(ns["metadata"]["finalizers"], json!(["example.com/hold"]));
    // Nothing new is created in it while it is Terminating.
    let r = create_flunder(&s, "held", "late");
    assert_eq!(r.code, 403, "{}", r.text());
    let st = r.json();
    assert_eq!(
        st["message"],
        "flunders.wardle.example.com \"late\" is forbidden: unable to create new content in namespace held because it is being terminated"
    );
    assert_eq!(st["details"]["causes"][0]["reason"], "NamespaceTerminating");
    assert_eq!(
        names(
            &s.get(&flunders("v1beta1", "held"), "application/json")
                .json()
        ),
        Vec::<String>::new()
    );
    // The update that removes the last finalizer deletes it.
    let r = s.req(
        "PATCH",
        "/api/v1/namespaces/held",
        &[("Content-Type", "application/merge-patch+json")],
        br#"{"metadata":{"finalizers":null}}"#,
    );
    assert_eq!(r.code, 200, "{}", r.text());
    assert_eq!(
        s.get("/api/v1/namespaces/held", "application/json").code,
        404
    );
}

#[test]
fn the_status_subresource_writes_the_status_alone() {
    let (s, _d) = server(&[]);
    s.create_namespace("st");
    let merge = |path: &str, body: &str| {
        s.req(
            "PATCH",
            path,
            &[("Content-Type", "application/merge-patch+json")],
            body.as_bytes(),
        )
    };
    let condition = json!({"type": "Example", "status": "True", "reason": "Tested"});
    // Through /status: the status changes, labels and spec do not.
    let r = merge(
        "/api/v1/namespaces/st/status?fieldManager=status-writer",
        &json!({"status": {"conditions": [condition]},
                "metadata": {"labels": {"x": "y"}},
                "spec": {"finalizers": []}})
        .to_string(),
    );
    assert_eq!(r.code, 200, "{}", r.text());
    let ns = r.json();
    assert_eq!(ns["status"]["conditions"], json!([condition]));
    assert_eq!(ns["metadata"]["labels"].get("x"), None, "{ns}");
    assert_eq!(ns["spec"]["finalizers"], json!(["kubernetes"]));
    let manager = ns["metadata"]["managedFields"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["manager"] == "status-writer")
        .cloned()
        .unwrap();
    assert_eq!(manager["subresource"], "status");
    assert_eq!(
        manager["fieldsV1"],
        json!({"f:status": {"f:conditions": {}}})
    );
    // Through the object itself: the status is left as it was, the labels change.
    let r = merge(
        "/api/v1/namespaces/st",
        &json!({"status": {"conditions": null}, "metadata": {"labels": {"x": "y"}}}).to_string(),
    );
    assert_eq!(r.code, 200, "{}", r.text());
    let ns = r.json();
    assert_eq!(ns["status"]["conditions"], json!([condition]));
    assert_eq!(ns["metadata"]["labels"]["x"], "y");
    // GET of /status is the object; the phase must follow the deletion mark.
    let got = s.get("/api/v1/namespaces/st/status", "application/json");
    assert_eq!(got.code, 200);
    assert_eq!(got.json()["metadata"]["name"], "st");
    let r = merge(
        "/api/v1/namespaces/st/status",
        r#"{"status":{"phase":"Terminating"}}"#,
    );
    assert_eq!(r.code, 422, "{}", r.text());
    assert_eq!(
        r.json()["message"],
        "Namespace \"st\" is invalid: status.Phase: Invalid value: \"Terminating\": may only be 'Active' if `deletionTimestamp` is empty"
    );
    // No other subresource; none on flunders; no DELETE of /status.
    assert_eq!(
        s.get("/api/v1/namespaces/st/finalize", "application/json")
            .code,
        404
    );
    s.create_namespace("other");
    assert_eq!(create_flunder(&s, "other", "f").code, 201);
    assert_eq!(
        s.get(
            &format!("{}/f/status", flunders("v1beta1", "other")),
            "application/json"
        )
        .code,
        404
    );
    assert_eq!(
        s.req("DELETE", "/api/v1/namespaces/st/status", &[], b"")
            .code,
        405
    );
    // Discovery lists it, in both forms.
    let list = s.get("/api/v1", "application/json").json();
    let status = list["resources"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["name"] == "namespaces/status")
        .cloned()
        .unwrap();
    assert_eq!(status["verbs"], json!(["get", "patch", "update"]));
    let agg = s.get("/api", AGG).json();
    assert_eq!(
        agg["items"][0]["versions"][0]["resources"][0]["subresources"][0]["subresource"],
        "status"
    );
}

#[test]
fn standalone_false_serves_no_core_group() {
    let (s, _d) = server(&["--standalone=false"]);
    assert_eq!(
        s.get("/api", "application/json").json()["versions"],
        json!([])
    );
    assert_eq!(s.get("/api/v1", "application/json").code, 404);
    assert_eq!(s.get("/api/v1/namespaces", "application/json").code, 404);
    assert_eq!(s.get("/api", AGG).json()["items"], json!([]));
    let index = s.get("/openapi/v3", "application/json").json();
    assert!(index["paths"].get("api/v1").is_none());
    assert_eq!(s.get("/openapi/v3/api/v1", "application/json").code, 404);
    // Any namespace will do, as behind an aggregator (kube-apiserver checks them).
    assert_eq!(create_flunder(&s, "anywhere", "f").code, 201);
}
