//! etcd over TLS with client certificates (`--etcd-cafile`, `--etcd-certfile`,
//! `--etcd-keyfile`): the store works with them and is refused without them.

use std::time::Duration;

use bytes::Bytes;
use conneg_apiserver::storage::{EtcdOptions, EtcdStore, EtcdTls, Storage};
use conneg_apiserver::testing::Etcd;

fn options(etcd: &Etcd, tls: Option<EtcdTls>) -> EtcdOptions {
    let mut o = EtcdOptions::new(vec![etcd.url()], "/registry/test");
    o.compaction_interval = Duration::ZERO;
    o.request_timeout = Duration::from_secs(5);
    o.tls = tls;
    o
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_store_over_tls_with_a_client_certificate() {
    let etcd = tokio::task::spawn_blocking(Etcd::start_tls).await.unwrap();
    assert!(etcd.url().starts_with("https://"));
    let store = EtcdStore::open(options(&etcd, Some(etcd.client_tls())))
        .await
        .expect("open the etcd store over TLS");
    let created = store
        .create("/registry/test/things/a", Bytes::from_static(b"one"))
        .await
        .unwrap();
    let got = store.get("/registry/test/things/a").await.unwrap().unwrap();
    assert_eq!(got.value, created.value);
    assert_eq!(etcd.value("/registry/test/things/a"), b"one");

    // Without the client certificate etcd refuses the connection; without the CA the
    // client refuses etcd's certificate. Either way: an error, not a hang.
    let ca_only = EtcdTls {
        cert_file: None,
        key_file: None,
        ..etcd.client_tls()
    };
    let no_client_cert = match EtcdStore::open(options(&etcd, Some(ca_only))).await {
        Err(e) => e.to_string(),
        Ok(s) => s
            .get("/registry/test/things/a")
            .await
            .unwrap_err()
            .to_string(),
    };
    assert!(!no_client_cert.is_empty());
    let no_ca = EtcdTls {
        ca_file: None,
        ..etcd.client_tls()
    };
    assert!(match EtcdStore::open(options(&etcd, Some(no_ca))).await {
        Err(_) => true,
        Ok(s) => s.get("/registry/test/things/a").await.is_err(),
    });
    // A certificate without its key is a clear error at once.
    let half = EtcdTls {
        key_file: None,
        ..etcd.client_tls()
    };
    let e = EtcdStore::open(options(&etcd, Some(half)))
        .await
        .err()
        .map(|e| e.to_string());
    assert!(
        e.as_deref().is_some_and(|e| e.contains("needs its key")),
        "{e:?}"
    );
}
