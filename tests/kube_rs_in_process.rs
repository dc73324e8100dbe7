//! What envtest needs Go binaries (kube-apiserver, etcd) for, in one Rust process: a server
//! started in-process on a free port with a custom resource definition made by kube-rs'
//! `CustomResourceExt::crd()`, and a kube-rs `Controller` reconciling that resource against
//! it: the controller sees a created object and writes its status through `/status`.

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use conneg_apiserver::server::openapi::OpenApiInfo;
use conneg_apiserver::server::{ServerBuilder, ServerOptions};
use conneg_apiserver::storage::codec::{StorageCodec, StorageMediaType};
use conneg_apiserver::storage::keys::Keys;
use conneg_apiserver::storage::{MemoryStore, OpenedStorage, Store};
use conneg_apiserver::testing::InProcess;
use futures_util::StreamExt;
use kube::api::{Api, Patch, PatchParams, PostParams};
use kube::runtime::controller::{Action, Controller};
use kube::runtime::watcher;
use kube::{CustomResource, CustomResourceExt, ResourceExt};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// A widget: its wanted size, and the size the controller last saw.
#[derive(CustomResource, Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[kube(
    group = "example.com",
    version = "v1",
    kind = "Widget",
    namespaced,
    status = "WidgetStatus",
    printcolumn = r#"{"name": "Size", "type": "integer", "jsonPath": ".spec.size"}"#
)]
pub struct WidgetSpec {
    /// The wanted size.
    size: i64,
}

/// What the controller reports.
#[derive(Clone, Debug, Default, Serialize, Deserialize, JsonSchema)]
pub struct WidgetStatus {
    /// The size last reconciled.
    seen: i64,
}

async fn bounded<T>(what: &str, fut: impl Future<Output = T>) -> T {
    tokio::time::timeout(Duration::from_secs(60), fut)
        .await
        .unwrap_or_else(|_| panic!("{what}: no answer within a minute"))
}

#[derive(Debug)]
struct Never;
impl std::fmt::Display for Never {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("never")
    }
}
impl std::error::Error for Never {}

#[tokio::test]
async fn a_kube_rs_controller_reconciles_a_custom_resource_in_process() {
    let crd = serde_json::from_value(serde_json::to_value(Widget::crd()).unwrap()).unwrap();
    let storage = OpenedStorage {
        store: Store::Memory(MemoryStore::new()),
        codec: StorageCodec::new(StorageMediaType::Cbor),
        keys: Keys::for_group("example.com"),
    };
    let state = ServerBuilder::new(OpenApiInfo {
        title: "widgets",
        package: "com.example",
    })
    .custom_resource_definition(crd)
    .build(storage, ServerOptions::default());
    let server = InProcess::start(state).await;
    let client = kube::Client::try_from(kube::Config::new(server.url().parse().unwrap())).unwrap();
    let widgets: Api<Widget> = Api::namespaced(client.clone(), "default");

    let reconcile = |w: Arc<Widget>, api: Arc<Api<Widget>>| async move {
        let status = serde_json::json!({"status": {"seen": w.spec.size}});
        api.patch_status(
            &w.name_any(),
            &PatchParams::default(),
            &Patch::Merge(&status),
        )
        .await
        .map_err(|_| Never)?;
        Ok::<_, Never>(Action::await_change())
    };
    let controller = Controller::new(Api::<Widget>::all(client), watcher::Config::default())
        .run(
            reconcile,
            |_, _, _| Action::requeue(Duration::from_millis(100)),
            Arc::new(widgets.clone()),
        )
        .for_each(|_| async {});
    let controller = tokio::spawn(controller);

    let w = Widget::new("w", WidgetSpec { size: 3 });
    bounded("create", widgets.create(&PostParams::default(), &w))
        .await
        .unwrap();
    let seen = bounded("the controller's status", async {
        loop {
            let w = widgets.get("w").await.unwrap();
            if let Some(s) = w.status {
                return s.seen;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    })
    .await;
    assert_eq!(seen, 3);
    // A change of the spec is reconciled too.
    let patch = serde_json::json!({"spec": {"size": 5}});
    bounded(
        "patch",
        widgets.patch("w", &PatchParams::default(), &Patch::Merge(&patch)),
    )
    .await
    .unwrap();
    bounded("the new size seen", async {
        while widgets.get("w").await.unwrap().status.map(|s| s.seen) != Some(5) {
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    })
    .await;
    controller.abort();
}
