//! The official Python client (`kubernetes` on PyPI, installed by scripts/install-test-deps):
//! its dynamic client discovers kinds through /api and /apis, so a kind-only lookup needs a
//! core group (it used to 404 on /api/v1); then create, list and watch a flunder, and find
//! core v1 Namespace. Flunder is served in two versions, so a lookup by kind alone matches
//! both (the client raises `ResourceNotUniqueError`, as it would against kube-apiserver for
//! any kind in two versions): `preferred=True` picks discovery's preferred one. And a custom
//! resource: its definition created, then its objects driven, through the same dynamic client.

mod common;

use common::{Server, python, tempdir};

const SCRIPT: &str = r#"
import sys
from kubernetes import client, dynamic

config = client.Configuration()
config.host = sys.argv[1]
dyn = dynamic.DynamicClient(client.ApiClient(config))

flunders = dyn.resources.get(kind="Flunder", preferred=True)
assert flunders.group_version == "wardle.example.com/v1beta1", flunders.group_version
flunders.create(namespace="default", body={
    "apiVersion": flunders.group_version, "kind": "Flunder",
    "metadata": {"name": "py"}, "spec": {},
})
names = [f.metadata.name for f in flunders.get(namespace="default").items]
assert names == ["py"], names
events = [(e["type"], e["object"].metadata.name)
          for e in flunders.watch(namespace="default", timeout=1)]
assert events == [("ADDED", "py")], events

namespaces = dyn.resources.get(api_version="v1", kind="Namespace")
assert not namespaces.namespaced
listed = [n.metadata.name for n in namespaces.get().items]
assert "default" in listed, listed
print("ok")
"#;

#[test]
fn dynamic_client_finds_flunder_and_namespace() {
    let dir = tempdir();
    let s = Server::start(dir.path(), &["--storage", "memory"]);
    assert_eq!(python(SCRIPT, &[&s.url()]).trim(), "ok");
}

/// The CronTab definition created through the dynamic client and waited on until Established;
/// then discovery finds the new kind (the client's discovery cache is refreshed on a miss):
/// `crontabs`, the resource the scripts below drive.
const CRD_PRELUDE: &str = r#"
import sys, time
from kubernetes import client, dynamic
from kubernetes.dynamic.exceptions import NotFoundError, ApiException

config = client.Configuration()
config.host = sys.argv[1]
dyn = dynamic.DynamicClient(client.ApiClient(config))

crds = dyn.resources.get(api_version="apiextensions.k8s.io/v1", kind="CustomResourceDefinition")
crds.create(body={
    "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
    "metadata": {"name": "crontabs.stable.example.com"},
    "spec": {
        "group": "stable.example.com", "scope": "Namespaced",
        "names": {"plural": "crontabs", "singular": "crontab", "kind": "CronTab", "shortNames": ["ct"]},
        "versions": [{
            "name": "v1", "served": True, "storage": True,
            "subresources": {"status": {}},
            "schema": {"openAPIV3Schema": {"type": "object", "properties": {
                "spec": {"type": "object", "properties": {
                    "cronSpec": {"type": "string"}, "image": {"type": "string"},
                    "replicas": {"type": "integer", "default": 1}}},
                "status": {"type": "object", "properties": {"ready": {"type": "integer"}}}}}},
        }],
    },
})
for _ in range(100):
    crd = crds.get(name="crontabs.stable.example.com")
    if any(c.type == "Established" and c.status == "True" for c in (crd.status.conditions or [])):
        break
    time.sleep(0.1)
else:
    raise AssertionError(f"never established: {crd.status}")

crontabs = dyn.resources.get(api_version="stable.example.com/v1", kind="CronTab")
assert crontabs.namespaced and crontabs.name == "crontabs", crontabs
assert crontabs.short_names == ["ct"], crontabs.short_names
"#;

/// After [`CRD_PRELUDE`]: create (defaulted), get, list (all and by label), a merge patch, the
/// status subresource, server-side apply, watch and delete.
const CRD_SCRIPT: &str = r#"

created = crontabs.create(namespace="default", body={
    "apiVersion": "stable.example.com/v1", "kind": "CronTab",
    "metadata": {"name": "py", "labels": {"a": "1"}},
    "spec": {"cronSpec": "* * * * */5", "image": "img"},
})
assert created.spec.replicas == 1, created.spec
got = crontabs.get(namespace="default", name="py")
assert got.metadata.uid == created.metadata.uid
crontabs.create(namespace="default", body={
    "apiVersion": "stable.example.com/v1", "kind": "CronTab",
    "metadata": {"name": "other"}, "spec": {"replicas": 4},
})
listed = crontabs.get(namespace="default")
assert listed.kind == "CronTabList", listed.kind
assert sorted(c.metadata.name for c in listed.items) == ["other", "py"], listed
selected = crontabs.get(namespace="default", label_selector="a=1")
assert [c.metadata.name for c in selected.items] == ["py"], selected

patched = crontabs.patch(namespace="default", name="py", body={"spec": {"image": "new"}},
                         content_type="application/merge-patch+json")
assert (patched.spec.image, patched.metadata.generation) == ("new", 2), patched

status = crontabs.status.patch(namespace="default", name="py", body={"status": {"ready": 1}},
                               content_type="application/merge-patch+json")
assert status.status.ready == 1, status

applied = crontabs.server_side_apply(namespace="default", field_manager="py", body={
    "apiVersion": "stable.example.com/v1", "kind": "CronTab",
    "metadata": {"name": "applied"}, "spec": {"image": "ssa"},
})
assert (applied.spec.image, applied.spec.replicas) == ("ssa", 1), applied

events = [(e["type"], e["object"].metadata.name)
          for e in crontabs.watch(namespace="default", timeout=1)]
assert sorted(events) == [("ADDED", "applied"), ("ADDED", "other"), ("ADDED", "py")], events

crontabs.delete(namespace="default", name="py")
try:
    crontabs.get(namespace="default", name="py")
    raise AssertionError("still there after delete")
except NotFoundError:
    pass
assert sorted(c.metadata.name for c in crontabs.get(namespace="default").items) == ["applied", "other"]
print("ok")
"#;

#[test]
fn dynamic_client_drives_a_custom_resource() {
    let dir = tempdir();
    let s = Server::start(dir.path(), &["--storage", "memory"]);
    let script = format!("{CRD_PRELUDE}{CRD_SCRIPT}");
    assert_eq!(python(&script, &[&s.url()]).trim(), "ok");
}

/// After [`CRD_PRELUDE`]: the dynamic client's default patch, a strategic merge patch, is
/// refused for a custom resource with 415, as kube-apiserver refuses it (custom resources have
/// no patch strategies); the object is unchanged.
const SMP_SCRIPT: &str = r#"
crontabs.create(namespace="default", body={
    "apiVersion": "stable.example.com/v1", "kind": "CronTab",
    "metadata": {"name": "py"}, "spec": {"image": "img"},
})
try:
    crontabs.patch(namespace="default", name="py", body={"spec": {"image": "smp"}})
    raise AssertionError("a strategic merge patch of a custom resource was accepted")
except ApiException as e:
    assert e.status == 415, (e.status, e.body)
    assert "application/strategic-merge-patch+json" not in e.body, e.body
assert crontabs.get(namespace="default", name="py").spec.image == "img"
print("ok")
"#;

// The Python client's default patch of a custom resource is a strategic merge patch, which
// a custom resource does not take: 415, as kube-apiserver answers (custom-resources.md §3.1).
#[test]
fn dynamic_client_strategic_merge_patch_of_a_custom_resource_is_refused() {
    let dir = tempdir();
    let s = Server::start(dir.path(), &["--storage", "memory"]);
    let script = format!("{CRD_PRELUDE}{SMP_SCRIPT}");
    assert_eq!(python(&script, &[&s.url()]).trim(), "ok");
}
