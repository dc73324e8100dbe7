//! kube-rs (the Rust Kubernetes client) against sample-apiserver.

use std::future::Future;
use std::time::Duration;

use conneg_tests::SampleServer;
use futures_util::{Stream, StreamExt};
use kube::api::{Api, DeleteParams, DynamicObject, ListParams, Patch, PatchParams, PostParams};
use kube::core::{ApiResource, GroupVersionKind, PartialObjectMeta};
use kube::runtime::watcher;
use serde_json::json;

/// The longest any one step may take: a failure is a failure, not a hang.
const STEP: Duration = Duration::from_secs(30);

/// `fut`, or a panic naming `what` if it does not finish within [`STEP`].
async fn bounded<T>(what: &str, fut: impl Future<Output = T>) -> T {
    tokio::time::timeout(STEP, fut)
        .await
        .unwrap_or_else(|_| panic!("timed out: {what}"))
}

/// A Flunder named `name` in `default`, labelled `a=1`.
fn flunder(name: &str) -> DynamicObject {
    serde_json::from_value(json!({
        "apiVersion": "wardle.example.com/v1beta1", "kind": "Flunder",
        "metadata": {"name": name, "labels": {"a": "1"}},
        "spec": {"flunderReference": "x", "referenceType": "Flunder"}
    }))
    .expect("a Flunder")
}

/// Reads `events` until `pick` returns something, failing on a watcher error or after
/// [`STEP`].
async fn next_matching<E, T, S>(
    what: &str,
    events: &mut S,
    mut pick: impl FnMut(E) -> Option<T>,
) -> T
where
    S: Stream<Item = Result<E, watcher::Error>> + Unpin,
{
    bounded(what, async {
        loop {
            let event = events
                .next()
                .await
                .unwrap_or_else(|| panic!("stream ended before {what}"))
                .unwrap_or_else(|e| panic!("watcher error before {what}: {e}"));
            if let Some(t) = pick(event) {
                return t;
            }
        }
    })
    .await
}

/// A kube-rs client for `server`, as a kubeconfig with only a server URL would give.
fn client(server: &SampleServer) -> kube::Client {
    let config = kube::Config::new(server.url().parse().expect("server URL"));
    kube::Client::try_from(config).expect("kube client")
}

/// wardle's Flunder, v1beta1.
fn flunder_resource() -> ApiResource {
    ApiResource::from_gvk(&GroupVersionKind::gvk(
        "wardle.example.com",
        "v1beta1",
        "Flunder",
    ))
}

fn flunders(client: kube::Client, ns: &str) -> Api<DynamicObject> {
    Api::namespaced_with(client, ns, &flunder_resource())
}

#[tokio::test]
async fn create_get_list_patch_delete() {
    let server = SampleServer::start(&[]);
    let api = flunders(client(&server), "default");
    let obj = flunder("k1");
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

/// `Api::list_metadata` asks for `as=PartialObjectMetadataList`.
#[tokio::test]
async fn list_metadata() {
    let server = SampleServer::start(&[]);
    let api = flunders(client(&server), "default");
    for name in ["m1", "m2"] {
        bounded("create", api.create(&PostParams::default(), &flunder(name)))
            .await
            .unwrap();
    }
    let list = bounded("list_metadata", api.list_metadata(&ListParams::default()))
        .await
        .unwrap();
    let names: Vec<_> = list
        .items
        .iter()
        .map(|p| p.metadata.name.clone().unwrap_or_default())
        .collect();
    assert_eq!(names, ["m1", "m2"]);
    assert_eq!(
        list.items[0].types.as_ref().map(|t| t.kind.as_str()),
        Some("PartialObjectMetadata")
    );
    assert!(list.metadata.resource_version.is_some());
}

/// A watcher over `Api<PartialObjectMeta<_>>` lists and watches with
/// `as=PartialObjectMetadata[List]`, and sees an object applied after it started.
#[tokio::test]
async fn metadata_watcher_sees_an_applied_object() {
    let server = SampleServer::start(&[]);
    let client = client(&server);
    let api = flunders(client.clone(), "default");
    let meta: Api<PartialObjectMeta<DynamicObject>> =
        Api::namespaced_with(client, "default", &flunder_resource());
    let mut events = watcher::watcher(meta, watcher::Config::default()).boxed();
    next_matching("InitDone", &mut events, |e| {
        matches!(e, watcher::Event::InitDone).then_some(())
    })
    .await;
    let applied = bounded(
        "apply",
        api.patch(
            "applied",
            &PatchParams::apply("conneg-tests"),
            &Patch::Apply(flunder("applied")),
        ),
    )
    .await
    .unwrap();
    let seen = next_matching("the applied object", &mut events, |e| match e {
        watcher::Event::Apply(p) => Some(p),
        _ => None,
    })
    .await;
    assert_eq!(seen.metadata.name.as_deref(), Some("applied"));
    assert_eq!(seen.metadata.uid, applied.metadata.uid);
}

/// `watcher` with streaming lists: a watch-list (`sendInitialEvents=true`), whose
/// initial-events-end bookmark is what ends `Init`; then live events on the same stream.
#[tokio::test]
async fn streaming_list_watcher_reaches_init_done_then_live_events() {
    let server = SampleServer::start(&[]);
    let api = flunders(client(&server), "default");
    bounded(
        "create",
        api.create(&PostParams::default(), &flunder("before")),
    )
    .await
    .unwrap();
    let config = watcher::Config::default().streaming_lists();
    let mut events = watcher::watcher(api.clone(), config).boxed();
    let mut initial = Vec::new();
    next_matching("InitDone", &mut events, |e| match e {
        watcher::Event::InitApply(o) => {
            initial.push(o.metadata.name.unwrap_or_default());
            None
        }
        watcher::Event::InitDone => Some(()),
        _ => None,
    })
    .await;
    assert_eq!(initial, ["before"]);
    bounded(
        "create",
        api.create(&PostParams::default(), &flunder("after")),
    )
    .await
    .unwrap();
    let live = next_matching("the live event", &mut events, |e| match e {
        watcher::Event::Apply(o) => Some(o),
        _ => None,
    })
    .await;
    assert_eq!(live.metadata.name.as_deref(), Some("after"));
}

/// What the finalizer controller saw.
#[derive(Default)]
struct Seen {
    applied: std::sync::atomic::AtomicUsize,
    cleaned: std::sync::atomic::AtomicUsize,
}

const FINALIZER: &str = "conneg.example.com/cleanup";

/// A kube-rs `Controller` whose reconciler guards each Flunder with `kube::runtime::finalizer`
/// (JSON patches with `test` operations, as Kubernetes' JSON patch applies them): the
/// finalizer is added, a DELETE keeps the object until the cleanup ran, and removing the
/// finalizer deletes it.
#[tokio::test]
async fn a_finalizer_controller_guards_deletion() {
    use std::convert::Infallible;
    use std::sync::Arc;
    use std::sync::atomic::Ordering;

    use kube::runtime::controller::{Action, Controller};
    use kube::runtime::finalizer::{self, Event};

    let server = SampleServer::start(&[]);
    let api = flunders(client(&server), "default");
    let seen = Arc::new(Seen::default());
    let controller =
        Controller::new_with(api.clone(), watcher::Config::default(), flunder_resource())
            .run(
                {
                    let api = api.clone();
                    move |obj: Arc<DynamicObject>, seen: Arc<Seen>| {
                        let api = api.clone();
                        async move {
                            finalizer::finalizer(&api, FINALIZER, obj, |event| async move {
                                let counter = match event {
                                    Event::Apply(_) => &seen.applied,
                                    Event::Cleanup(_) => &seen.cleaned,
                                };
                                counter.fetch_add(1, Ordering::SeqCst);
                                Ok::<_, Infallible>(Action::await_change())
                            })
                            .await
                        }
                    }
                },
                |_, _, _| Action::requeue(Duration::from_millis(100)),
                seen.clone(),
            )
            .for_each(|_| async {});
    let controller = tokio::spawn(controller);

    bounded(
        "create",
        api.create(&PostParams::default(), &flunder("guarded")),
    )
    .await
    .unwrap();
    bounded("the finalizer added and Apply reconciled", async {
        loop {
            let obj = api.get("guarded").await.unwrap();
            let has = obj
                .metadata
                .finalizers
                .iter()
                .flatten()
                .any(|f| f == FINALIZER);
            if has && seen.applied.load(Ordering::SeqCst) > 0 {
                break;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    })
    .await;

    let kept = bounded("delete", api.delete("guarded", &DeleteParams::default()))
        .await
        .unwrap();
    // Kept for its finalizer: the answer is the object, marked; or already gone, if the
    // controller was quicker than the answer.
    if let Some(obj) = kept.left() {
        assert!(obj.metadata.deletion_timestamp.is_some());
    }
    bounded("the cleanup, then the object gone", async {
        while api.get_opt("guarded").await.unwrap().is_some() {
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    })
    .await;
    assert_eq!(seen.cleaned.load(Ordering::SeqCst), 1);
    controller.abort();
}

/// `Patch::Apply` from two managers: kube-rs sees Kubernetes' 409 for a field the other owns,
/// and `.force()` takes it.
#[tokio::test]
async fn apply_conflicts_and_force() {
    let server = SampleServer::start(&[]);
    let api = flunders(client(&server), "default");
    let mut config = flunder("owned");
    bounded(
        "apply a",
        api.patch("owned", &PatchParams::apply("a"), &Patch::Apply(&config)),
    )
    .await
    .unwrap();
    config.data["spec"]["flunderReference"] = json!("changed");
    let err = bounded(
        "apply b",
        api.patch("owned", &PatchParams::apply("b"), &Patch::Apply(&config)),
    )
    .await
    .unwrap_err();
    match err {
        kube::Error::Api(s) => {
            assert_eq!(s.code, 409);
            assert_eq!(s.reason, "Conflict");
            assert_eq!(
                s.message,
                "Apply failed with 1 conflict: conflict with \"a\": .spec.flunderReference"
            );
        }
        other => panic!("{other}"),
    }
    let forced = bounded(
        "apply b, forced",
        api.patch(
            "owned",
            &PatchParams::apply("b").force(),
            &Patch::Apply(&config),
        ),
    )
    .await
    .unwrap();
    assert_eq!(forced.data["spec"]["flunderReference"], "changed");
    let managers: Vec<_> = forced
        .metadata
        .managed_fields
        .iter()
        .flatten()
        .filter_map(|m| m.manager.clone())
        .collect();
    assert!(managers.contains(&"b".to_owned()), "{managers:?}");
}

/// The CronTab definition (namespaced, short name `ct`, a status subresource, a default), as
/// k8s-openapi's typed `CustomResourceDefinition`: what the server answers must decode into it.
fn crontab_crd()
-> k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition {
    serde_json::from_value(json!({
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": "crontabs.stable.example.com"},
        "spec": {
            "group": "stable.example.com", "scope": "Namespaced",
            "names": {"plural": "crontabs", "singular": "crontab", "kind": "CronTab", "shortNames": ["ct"]},
            "versions": [{
                "name": "v1", "served": true, "storage": true,
                "subresources": {"status": {}},
                "schema": {"openAPIV3Schema": {"type": "object", "properties": {
                    "spec": {"type": "object", "properties": {
                        "cronSpec": {"type": "string"}, "image": {"type": "string"},
                        "replicas": {"type": "integer", "default": 1}}},
                    "status": {"type": "object", "properties": {"ready": {"type": "integer"}}}}}}
            }]
        }
    }))
    .expect("a CustomResourceDefinition")
}

/// A CronTab named `name`.
fn crontab(name: &str) -> DynamicObject {
    serde_json::from_value(json!({
        "apiVersion": "stable.example.com/v1", "kind": "CronTab",
        "metadata": {"name": name, "labels": {"a": "1"}},
        "spec": {"cronSpec": "* * * * */5", "image": "img"}
    }))
    .expect("a CronTab")
}

/// A custom resource through kube-rs: the definition created as a typed object and awaited
/// with `conditions::is_crd_established`; the CronTab found by discovery (plain and
/// aggregated); then `Api<DynamicObject>` creates (defaulted), gets, lists, patches, watches
/// and deletes; and deleting the definition removes the resource from discovery.
#[tokio::test]
async fn custom_resource_through_discovery_and_dynamic_api() {
    use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
    use kube::discovery::{Discovery, Scope};
    use kube::runtime::wait::{await_condition, conditions};

    let server = SampleServer::start(&[]);
    let client = client(&server);
    let crds: Api<CustomResourceDefinition> = Api::all(client.clone());
    let created = bounded(
        "create the definition",
        crds.create(&PostParams::default(), &crontab_crd()),
    )
    .await
    .unwrap();
    assert_eq!(
        created.metadata.name.as_deref(),
        Some("crontabs.stable.example.com")
    );
    let established = bounded(
        "Established",
        await_condition(
            crds.clone(),
            "crontabs.stable.example.com",
            conditions::is_crd_established(),
        ),
    )
    .await
    .unwrap()
    .expect("the definition");
    let status = established.status.expect("a status");
    assert_eq!(
        status.accepted_names.map(|n| n.kind).as_deref(),
        Some("CronTab")
    );
    assert_eq!(status.stored_versions, Some(vec!["v1".to_owned()]));

    let gvk = GroupVersionKind::gvk("stable.example.com", "v1", "CronTab");
    let discovery = bounded(
        "discovery",
        Discovery::new(client.clone())
            .filter(&["stable.example.com"])
            .run(),
    )
    .await
    .unwrap();
    let (ar, caps) = discovery.resolve_gvk(&gvk).expect("CronTab discovered");
    assert_eq!(ar.plural, "crontabs");
    assert_eq!(ar.api_version, "stable.example.com/v1");
    assert_eq!(caps.scope, Scope::Namespaced);
    assert!(caps.supports_operation(kube::discovery::verbs::WATCH));
    assert!(
        caps.subresources.iter().any(|(s, _)| s.plural == "status"),
        "{:?}",
        caps.subresources
    );
    let aggregated = bounded(
        "aggregated discovery",
        Discovery::new(client.clone())
            .filter(&["stable.example.com"])
            .run_aggregated(),
    )
    .await
    .unwrap();
    let (agg, _) = aggregated
        .resolve_gvk(&gvk)
        .expect("CronTab in aggregated discovery");
    assert_eq!(agg, ar);

    let api: Api<DynamicObject> = Api::namespaced_with(client.clone(), "default", &ar);
    let mut events = watcher::watcher(api.clone(), watcher::Config::default()).boxed();
    next_matching("InitDone", &mut events, |e| {
        matches!(e, watcher::Event::InitDone).then_some(())
    })
    .await;

    let c1 = bounded("create", api.create(&PostParams::default(), &crontab("c1")))
        .await
        .unwrap();
    assert_eq!(c1.data["spec"]["replicas"], 1, "defaulted: {:?}", c1.data);
    assert_eq!(c1.types.as_ref().map(|t| t.kind.as_str()), Some("CronTab"));
    let seen = next_matching("the created object", &mut events, |e| match e {
        watcher::Event::Apply(o) => Some(o),
        _ => None,
    })
    .await;
    assert_eq!(seen.metadata.uid, c1.metadata.uid);

    let got = bounded("get", api.get("c1")).await.unwrap();
    assert_eq!(got.metadata.uid, c1.metadata.uid);
    assert_eq!(got.data["spec"]["image"], "img");
    let mut unlabelled = crontab("c2");
    unlabelled.metadata.labels = None;
    bounded("create", api.create(&PostParams::default(), &unlabelled))
        .await
        .unwrap();
    let list = bounded("list", api.list(&ListParams::default().labels("a=1")))
        .await
        .unwrap();
    let names: Vec<_> = list
        .items
        .iter()
        .filter_map(|o| o.metadata.name.clone())
        .collect();
    assert_eq!(names, ["c1"]);
    let all = bounded("list", api.list(&ListParams::default()))
        .await
        .unwrap();
    assert_eq!(all.items.len(), 2);

    let patched = bounded(
        "patch",
        api.patch(
            "c1",
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"replicas": 3}})),
        ),
    )
    .await
    .unwrap();
    assert_eq!(patched.data["spec"]["replicas"], 3);
    assert_eq!(patched.metadata.generation, Some(2));
    let modified = next_matching("the patched object", &mut events, |e| match e {
        watcher::Event::Apply(o) if o.metadata.name.as_deref() == Some("c1") => Some(o),
        _ => None,
    })
    .await;
    assert_eq!(modified.data["spec"]["replicas"], 3);
    let status = bounded(
        "patch status",
        api.patch_status(
            "c1",
            &PatchParams::default(),
            &Patch::Merge(json!({"status": {"ready": 2}, "spec": {"replicas": 9}})),
        ),
    )
    .await
    .unwrap();
    assert_eq!(
        (
            &status.data["status"]["ready"],
            &status.data["spec"]["replicas"]
        ),
        (&json!(2), &json!(3))
    );
    let applied = bounded(
        "apply",
        api.patch(
            "c3",
            &PatchParams::apply("conneg-tests"),
            &Patch::Apply(crontab("c3")),
        ),
    )
    .await
    .unwrap();
    assert_eq!(applied.data["spec"]["replicas"], 1);

    bounded("delete", api.delete("c1", &DeleteParams::default()))
        .await
        .unwrap();
    let deleted = next_matching("the deletion", &mut events, |e| match e {
        watcher::Event::Delete(o) => Some(o),
        _ => None,
    })
    .await;
    assert_eq!(deleted.metadata.name.as_deref(), Some("c1"));
    let err = bounded("get", api.get("c1")).await.unwrap_err();
    assert!(
        matches!(&err, kube::Error::Api(s) if s.code == 404),
        "{err}"
    );

    // Deleting the definition deletes the objects and ends the resource.
    bounded(
        "delete the definition",
        crds.delete("crontabs.stable.example.com", &DeleteParams::default()),
    )
    .await
    .unwrap();
    bounded(
        "the definition gone",
        await_condition(
            crds.clone(),
            "crontabs.stable.example.com",
            conditions::is_deleted(&established.metadata.uid.clone().unwrap()),
        ),
    )
    .await
    .unwrap();
    bounded("the resource gone", async {
        while !matches!(api.list(&ListParams::default()).await, Err(kube::Error::Api(s)) if s.code == 404)
        {
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    })
    .await;
    let after = bounded("discovery", Discovery::new(client).run())
        .await
        .unwrap();
    assert!(after.resolve_gvk(&gvk).is_none());
    assert!(!after.has_group("stable.example.com"));
}
