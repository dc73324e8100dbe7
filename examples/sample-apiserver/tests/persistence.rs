//! Restart persistence and mixed storage media types, through the real binary.

mod common;

use common::{Server, flunders, tempdir};
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
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    rt.block_on(async {
        let store = EmbeddedStore::open_async(dir.join("wardle.redb"), EmbeddedOptions::default())
            .await
            .expect("open the store the server left");
        let key = Keys::for_group(GROUP).object(&FLUNDERS, "default", name);
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
