//! kube-rs (the Rust Kubernetes client) against sample-apiserver.

use conneg_tests::SampleServer;
use kube::api::{Api, DeleteParams, DynamicObject, ListParams, Patch, PatchParams, PostParams};
use kube::core::{ApiResource, GroupVersionKind};
use serde_json::json;

/// A kube-rs client for `server`, as a kubeconfig with only a server URL would give.
fn client(server: &SampleServer) -> kube::Client {
    let config = kube::Config::new(server.url().parse().expect("server URL"));
    kube::Client::try_from(config).expect("kube client")
}

fn flunders(client: kube::Client, ns: &str) -> Api<DynamicObject> {
    let gvk = GroupVersionKind::gvk("wardle.example.com", "v1beta1", "Flunder");
    Api::namespaced_with(client, ns, &ApiResource::from_gvk(&gvk))
}

#[tokio::test]
async fn create_get_list_patch_delete() {
    let server = SampleServer::start(&[]);
    let api = flunders(client(&server), "default");
    let obj: DynamicObject = serde_json::from_value(json!({
        "apiVersion": "wardle.example.com/v1beta1", "kind": "Flunder",
        "metadata": {"name": "k1", "labels": {"a": "1"}},
        "spec": {"flunderReference": "x", "referenceType": "Flunder"}
    }))
    .unwrap();
    let created = api.create(&PostParams::default(), &obj).await.unwrap();
    assert_eq!(created.metadata.name.as_deref(), Some("k1"));
    let got = api.get("k1").await.unwrap();
    assert_eq!(got.metadata.uid, created.metadata.uid);
    let list = api
        .list(&ListParams::default().labels("a=1"))
        .await
        .unwrap();
    assert_eq!(list.items.len(), 1);
    let patched = api
        .patch(
            "k1",
            &PatchParams::default(),
            &Patch::Merge(json!({"metadata": {"labels": {"b": "2"}}})),
        )
        .await
        .unwrap();
    assert_eq!(patched.metadata.labels.unwrap()["b"], "2");
    api.delete("k1", &DeleteParams::default()).await.unwrap();
    let err = api.get("k1").await.unwrap_err();
    assert!(
        matches!(&err, kube::Error::Api(s) if s.code == 404),
        "{err}"
    );
}

/// Unfiltered discovery needs a core group: it finds core v1 Namespace and the wardle kinds.
#[tokio::test]
async fn discovery_finds_core_namespaces_and_flunders() {
    let server = SampleServer::start(&[]);
    let discovery = kube::discovery::Discovery::new(client(&server))
        .run()
        .await
        .unwrap();
    let kinds: Vec<(String, String)> = discovery
        .groups()
        .flat_map(|g| g.recommended_resources())
        .map(|(ar, _)| (ar.group, ar.kind))
        .collect();
    assert!(
        kinds.contains(&(String::new(), "Namespace".into())),
        "{kinds:?}"
    );
    assert!(
        kinds.contains(&("wardle.example.com".into(), "Flunder".into())),
        "{kinds:?}"
    );
}

#[tokio::test]
async fn namespaces_create_get_list_delete() {
    use k8s_openapi::api::core::v1::Namespace;
    let server = SampleServer::start(&[]);
    let client = client(&server);
    let api: Api<Namespace> = Api::all(client.clone());
    let ns: Namespace = serde_json::from_value(json!({"metadata": {"name": "team"}})).unwrap();
    let created = api.create(&PostParams::default(), &ns).await.unwrap();
    assert_eq!(
        created.status.and_then(|s| s.phase).as_deref(),
        Some("Active")
    );
    assert_eq!(
        api.get("team").await.unwrap().metadata.uid,
        created.metadata.uid
    );
    let names: Vec<String> = api
        .list(&ListParams::default())
        .await
        .unwrap()
        .items
        .into_iter()
        .filter_map(|n| n.metadata.name)
        .collect();
    assert!(names.contains(&"team".to_owned()), "{names:?}");
    assert!(names.contains(&"default".to_owned()), "{names:?}");

    let obj: DynamicObject = serde_json::from_value(json!({
        "apiVersion": "wardle.example.com/v1beta1", "kind": "Flunder",
        "metadata": {"name": "f"}, "spec": {}
    }))
    .unwrap();
    flunders(client.clone(), "team")
        .create(&PostParams::default(), &obj)
        .await
        .unwrap();
    // Kubernetes answers a namespace DELETE with the namespace, Terminating.
    let deleted = api.delete("team", &DeleteParams::default()).await.unwrap();
    let terminating = deleted.left().expect("the namespace, not a Status");
    assert_eq!(
        terminating.status.and_then(|s| s.phase).as_deref(),
        Some("Terminating")
    );
    let err = api.get("team").await.unwrap_err();
    assert!(
        matches!(&err, kube::Error::Api(s) if s.code == 404),
        "{err}"
    );
    let list = flunders(client, "team")
        .list(&ListParams::default())
        .await
        .unwrap();
    assert!(list.items.is_empty());
}

#[tokio::test]
async fn flunder_in_a_missing_namespace_is_404() {
    let server = SampleServer::start(&[]);
    let obj: DynamicObject = serde_json::from_value(json!({
        "apiVersion": "wardle.example.com/v1beta1", "kind": "Flunder",
        "metadata": {"name": "f"}, "spec": {}
    }))
    .unwrap();
    let err = flunders(client(&server), "nope")
        .create(&PostParams::default(), &obj)
        .await
        .unwrap_err();
    match err {
        kube::Error::Api(s) => {
            assert_eq!(s.code, 404);
            assert_eq!(s.reason, "NotFound");
            assert_eq!(s.message, "namespaces \"nope\" not found");
        }
        other => panic!("{other}"),
    }
}
