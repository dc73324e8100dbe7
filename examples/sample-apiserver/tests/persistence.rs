//! Restart persistence and mixed storage media types, through the real binary.

mod common;

use common::{Server, flunders, tempdir};
use conneg_apiserver::resource::ResourceInfo;
use conneg_apiserver::storage::keys::Keys;
use conneg_apiserver::storage::{EmbeddedOptions, EmbeddedStore, Storage};
use sample_apiserver::api::{FLUNDERS, GROUP};
use serde_json::json;

fn create(s: &Server, name: &str) {
    let r = s.post_json(
        &flunders("v1alpha1", "default"),
        &json!({"metadata": {"name": name}, "spec": {"reference": "r"}}).to_string(),
    );
    assert_eq!(r.code, 201, "{}", r.text());
}

fn read(s: &Server, name: &str) -> serde_json::Value {
    let r = s.get(
        &format!("{}/{name}", flunders("v1beta1", "default")),
        "application/json",
    );
    assert_eq!(r.code, 200, "{name}: {}", r.text());
    r.json()
}

/// The stored bytes of flunder `default/<name>`, read from the redb file.
fn stored(dir: &std::path::Path, name: &str) -> Vec<u8> {
    stored_object(dir, &FLUNDERS, name)
}

/// The stored bytes of the object `default/<name>` of `resource`, read from the redb file.
fn stored_object(dir: &std::path::Path, resource: &ResourceInfo, name: &str) -> Vec<u8> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    rt.block_on(async {
        let store = EmbeddedStore::open_async(dir.join("wardle.redb"), EmbeddedOptions::default())
            .await
            .expect("open the store the server left");
        let key = Keys::for_group(GROUP).object(resource, "default", name);
        store
            .get(&key)
            .await
            .unwrap()
            .expect("stored")
            .value
            .to_vec()
    })
}

#[test]
fn objects_survive_restart_across_storage_media_types() {
    let dir = tempdir();
    let data = dir.path().join("data");

    let mut s = Server::start(&data, &["--storage-media-type", "json"]);
    create(&s, "old");
    let uid = read(&s, "old")["metadata"]["uid"].clone();
    s.stop();
    assert_eq!(stored(&data, "old")[0], b'{', "JSON mode stores JSON");

    // Same data dir, CBOR mode: old JSON objects still read; new ones are CBOR.
    let mut s = Server::start(&data, &["--storage-media-type", "cbor"]);
    let old = read(&s, "old");
    assert_eq!(old["metadata"]["uid"], uid);
    assert_eq!(old["spec"]["flunderReference"], "r");
    create(&s, "new");
    assert_eq!(read(&s, "new")["spec"]["referenceType"], "Flunder");
    // Listing mixes both formats.
    let list = s
        .get(&flunders("v1beta1", "default"), "application/json")
        .json();
    assert_eq!(list["items"].as_array().unwrap().len(), 2);
    s.stop();
    assert_eq!(&stored(&data, "new")[..3], &[0xd9, 0xd9, 0xf7]);
    assert_eq!(stored(&data, "old")[0], b'{');

    // And once more, the default (cbor) mode.
    let s = Server::start(&data, &[]);
    assert_eq!(read(&s, "old")["metadata"]["uid"], uid);
    read(&s, "new");
}

const CRDS: &str = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions";
const CRONTABS: &str = "/apis/stable.example.com/v1/namespaces/default/crontabs";

/// What the CronTab definition stores its objects as (the server's keys for its plural).
const CRONTAB_RESOURCE: ResourceInfo = ResourceInfo::new(
    "stable.example.com",
    "crontabs",
    "crontab",
    "CronTab",
    "CronTabList",
    true,
);

/// Waits until the CronTab collection answers 200 (the definition is established and served).
fn until_served(s: &Server) {
    for _ in 0..200 {
        if s.get(CRONTABS, "application/json").code == 200 {
            return;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    panic!("crontabs never served");
}

fn create_crontab(s: &Server, name: &str, replicas: Option<i64>) {
    let mut spec = json!({"cronSpec": "* * * * */5", "image": name});
    if let Some(r) = replicas {
        spec["replicas"] = json!(r);
    }
    let r = s.post_json(
        CRONTABS,
        &json!({"apiVersion": "stable.example.com/v1", "kind": "CronTab",
                "metadata": {"name": name}, "spec": spec})
        .to_string(),
    );
    assert_eq!(r.code, 201, "{name}: {}", r.text());
}

fn patch_replicas(s: &Server, name: &str, replicas: i64) {
    let r = s.req(
        "PATCH",
        &format!("{CRONTABS}/{name}"),
        &[("Content-Type", "application/merge-patch+json")],
        json!({"spec": {"replicas": replicas}})
            .to_string()
            .as_bytes(),
    );
    assert_eq!(r.code, 200, "{name}: {}", r.text());
    assert_eq!(r.json()["spec"]["replicas"], replicas);
}

fn read_crontab(s: &Server, name: &str) -> serde_json::Value {
    let r = s.get(&format!("{CRONTABS}/{name}"), "application/json");
    assert_eq!(r.code, 200, "{name}: {}", r.text());
    r.json()
}

/// Custom resources across restarts and storage media types (KEP-4222's mixed storage): the
/// definition and CRs written as CBOR (the default), then JSON (`--storage-media-type json`),
/// then CBOR again; every object reads back after each restart, in whichever format it was
/// written, and a rewritten object takes the current format.
#[test]
fn custom_resources_survive_restart_across_storage_media_types() {
    let dir = tempdir();
    let data = dir.path().join("data");

    let mut s = Server::start(&data, &[]);
    let crd = json!({
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": "crontabs.stable.example.com"},
        "spec": {
            "group": "stable.example.com", "scope": "Namespaced",
            "names": {"plural": "crontabs", "singular": "crontab", "kind": "CronTab"},
            "versions": [{"name": "v1", "served": true, "storage": true,
                "schema": {"openAPIV3Schema": {"type": "object", "properties": {
                    "spec": {"type": "object", "properties": {
                        "cronSpec": {"type": "string"}, "image": {"type": "string"},
                        "replicas": {"type": "integer", "default": 1}}}}}}}]
        }
    });
    let r = s.post_json(CRDS, &crd.to_string());
    assert_eq!(r.code, 201, "{}", r.text());
    until_served(&s);
    create_crontab(&s, "cbor", None);
    create_crontab(&s, "rewritten", None);
    let uid = read_crontab(&s, "cbor")["metadata"]["uid"].clone();
    s.stop();
    assert_eq!(
        &stored_object(&data, &CRONTAB_RESOURCE, "cbor")[..3],
        &[0xd9, 0xd9, 0xf7],
        "the default stores CBOR"
    );

    // JSON mode: the definition and the CBOR object are read back; new objects are JSON.
    let mut s = Server::start(&data, &["--storage-media-type", "json"]);
    until_served(&s);
    let old = read_crontab(&s, "cbor");
    assert_eq!(old["metadata"]["uid"], uid);
    assert_eq!(
        old["spec"],
        json!({"cronSpec": "* * * * */5", "image": "cbor", "replicas": 1})
    );
    create_crontab(&s, "json", Some(2));
    // An object written as CBOR, rewritten now: JSON from here on.
    patch_replicas(&s, "rewritten", 4);
    s.stop();
    assert_eq!(stored_object(&data, &CRONTAB_RESOURCE, "json")[0], b'{');
    assert_eq!(
        stored_object(&data, &CRONTAB_RESOURCE, "rewritten")[0],
        b'{'
    );
    assert_eq!(
        &stored_object(&data, &CRONTAB_RESOURCE, "cbor")[..3],
        &[0xd9, 0xd9, 0xf7]
    );

    // CBOR again: every object, of either format, reads and lists; a JSON one rewritten
    // becomes CBOR.
    let mut s = Server::start(&data, &[]);
    until_served(&s);
    assert_eq!(read_crontab(&s, "cbor")["metadata"]["uid"], uid);
    assert_eq!(read_crontab(&s, "json")["spec"]["replicas"], 2);
    let list = s.get(CRONTABS, "application/json").json();
    let mut names: Vec<&str> = list["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["metadata"]["name"].as_str().unwrap())
        .collect();
    names.sort_unstable();
    assert_eq!(names, ["cbor", "json", "rewritten"]);
    assert_eq!(read_crontab(&s, "rewritten")["spec"]["replicas"], 4);
    patch_replicas(&s, "rewritten", 5);
    // CBOR responses of objects stored as JSON.
    let r = s.get(&format!("{CRONTABS}/json"), "application/cbor");
    assert_eq!(r.code, 200);
    assert_eq!(&r.body[..3], &[0xd9, 0xd9, 0xf7]);
    s.stop();
    assert_eq!(
        &stored_object(&data, &CRONTAB_RESOURCE, "rewritten")[..3],
        &[0xd9, 0xd9, 0xf7]
    );
    assert_eq!(stored_object(&data, &CRONTAB_RESOURCE, "json")[0], b'{');

    // And once more: the rewritten object's new value is what is read.
    let s = Server::start(&data, &[]);
    until_served(&s);
    assert_eq!(read_crontab(&s, "rewritten")["spec"]["replicas"], 5);
}
