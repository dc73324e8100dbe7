//! The official Python client (`kubernetes` on PyPI, installed by scripts/install-test-deps):
//! its dynamic client discovers kinds through /api and /apis, so a kind-only lookup needs a
//! core group (it used to 404 on /api/v1); then create, list and watch a flunder, and find
//! core v1 Namespace. Flunder is served in two versions, so a lookup by kind alone matches
//! both (the client raises `ResourceNotUniqueError`, as it would against kube-apiserver for
//! any kind in two versions): `preferred=True` picks discovery's preferred one.

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
