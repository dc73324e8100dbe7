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
