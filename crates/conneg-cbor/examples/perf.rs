//! Rough encode/decode timing against serde_json on Kubernetes-shaped objects:
//! `cargo run --release -p conneg-cbor --example perf`. `perf encode` times only the encode of
//! the benchmark's typed objects (see [`encode_k8s`]), `perf decode` their decode (see
//! [`decode_k8s`]); `perf profile WORKLOAD` loops one
//! operation for a profiler.

// The benchmark's typed Kubernetes objects, for the `*-k8s` workloads below.
#[path = "../benches/k8s/mod.rs"]
mod k8s;
// `PERF_ALLOC=count|bump` for `perf profile` (see the module).
#[path = "perf/alloc.rs"]
mod alloc;

#[global_allocator]
static ALLOC: alloc::PerfAlloc = alloc::PerfAlloc;

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::hint::black_box;
use std::time::{Duration, Instant};

#[derive(Serialize, Deserialize, Clone)]
#[serde(rename_all = "camelCase")]
struct Pod {
    api_version: String,
    kind: String,
    metadata: ObjectMeta,
    spec: PodSpec,
    status: PodStatus,
}

#[derive(Serialize, Deserialize, Clone)]
#[serde(rename_all = "camelCase")]
struct ObjectMeta {
    name: String,
    namespace: String,
    uid: String,
    resource_version: String,
    creation_timestamp: String,
    labels: BTreeMap<String, String>,
    annotations: BTreeMap<String, String>,
}

#[derive(Serialize, Deserialize, Clone)]
#[serde(rename_all = "camelCase")]
struct PodSpec {
    containers: Vec<Container>,
    restart_policy: String,
    termination_grace_period_seconds: i64,
    dns_policy: String,
    service_account_name: String,
    node_name: String,
}

#[derive(Serialize, Deserialize, Clone)]
#[serde(rename_all = "camelCase")]
struct Container {
    name: String,
    image: String,
    args: Vec<String>,
    ports: Vec<Port>,
    env: Vec<Env>,
    resources: Resources,
    image_pull_policy: String,
}

#[derive(Serialize, Deserialize, Clone)]
#[serde(rename_all = "camelCase")]
struct Port {
    name: String,
    container_port: i32,
    protocol: String,
}

#[derive(Serialize, Deserialize, Clone)]
struct Env {
    name: String,
    value: String,
}

#[derive(Serialize, Deserialize, Clone)]
struct Resources {
    limits: BTreeMap<String, String>,
    requests: BTreeMap<String, String>,
}

#[derive(Serialize, Deserialize, Clone)]
#[serde(rename_all = "camelCase")]
struct PodStatus {
    phase: String,
    #[serde(rename = "hostIP")]
    host_ip: String,
    #[serde(rename = "podIP")]
    pod_ip: String,
    start_time: String,
    conditions: Vec<Condition>,
}

#[derive(Serialize, Deserialize, Clone)]
#[serde(rename_all = "camelCase")]
struct Condition {
    #[serde(rename = "type")]
    type_: String,
    status: String,
    last_transition_time: String,
}

fn pod_json(i: usize) -> Value {
    json!({
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {
            "name": format!("web-{i}-7d4b9c8f6d-x2x9q"), "namespace": "default",
            "uid": "3f8a2c1e-5b7d-4e9f-a1c3-2d4e6f8a0b1c", "resourceVersion": "123456",
            "creationTimestamp": "2026-01-02T03:04:05Z",
            "labels": {"app": "web", "pod-template-hash": "7d4b9c8f6d", "tier": "frontend"},
            "annotations": {"kubectl.kubernetes.io/restartedAt": "2026-01-02T03:00:00Z"}
        },
        "spec": {
            "containers": [
                {"name": "web", "image": "nginx:1.27", "args": ["--port", "8080", "--verbose"],
                 "ports": [{"name": "http", "containerPort": 8080, "protocol": "TCP"}],
                 "env": [{"name": "MODE", "value": "production"}, {"name": "LOG_LEVEL", "value": "info"}],
                 "resources": {"limits": {"cpu": "500m", "memory": "256Mi"}, "requests": {"cpu": "100m", "memory": "128Mi"}},
                 "imagePullPolicy": "IfNotPresent"},
                {"name": "sidecar", "image": "envoy:1.30", "args": [],
                 "ports": [{"name": "admin", "containerPort": 9901, "protocol": "TCP"}],
                 "env": [], "resources": {"limits": {}, "requests": {"cpu": "50m"}},
                 "imagePullPolicy": "Always"}
            ],
            "restartPolicy": "Always", "terminationGracePeriodSeconds": 30,
            "dnsPolicy": "ClusterFirst", "serviceAccountName": "default", "nodeName": "node-1"
        },
        "status": {
            "phase": "Running", "hostIP": "10.0.0.1", "podIP": "10.244.1.7",
            "startTime": "2026-01-02T03:04:06Z",
            "conditions": [
                {"type": "Ready", "status": "True", "lastTransitionTime": "2026-01-02T03:04:10Z"},
                {"type": "PodScheduled", "status": "True", "lastTransitionTime": "2026-01-02T03:04:05Z"}
            ]
        }
    })
}

/// `v` as CBOR with text strings and no self-described tag: what the peer crates can read.
fn text_cbor(v: &Value) -> Vec<u8> {
    conneg_cbor::EncodeOptions::deterministic()
        .self_described(false)
        .string_encoding(conneg_cbor::StringEncoding::Text)
        .to_vec(v)
        .unwrap()
}

/// The best per-iteration time over one short batch.
fn batch(f: &mut dyn FnMut()) -> Duration {
    let mut n = 0u32;
    let start = Instant::now();
    while start.elapsed() < Duration::from_millis(20) {
        f();
        n += 1;
    }
    start.elapsed() / n
}

/// Times `a` and `b` in alternating batches and keeps each one's best, so a busy machine skews
/// both alike.
fn pair(a: &mut dyn FnMut(), b: &mut dyn FnMut()) -> (Duration, Duration) {
    for _ in 0..3 {
        a();
        b();
    }
    let (mut ba, mut bb) = (Duration::MAX, Duration::MAX);
    for _ in 0..25 {
        ba = ba.min(batch(a));
        bb = bb.min(batch(b));
    }
    (ba, bb)
}

fn row(name: &str, cbor: Duration, json: Duration) {
    println!(
        "{name:<32} cbor {:>10.1?}  json {:>10.1?}  speedup {:.2}x",
        cbor,
        json,
        json.as_secs_f64() / cbor.as_secs_f64()
    );
}

/// `perf encode`: deterministic and fast encode (`to_vec`, as the criterion benchmark does) of
/// the benchmark's typed Pod, custom resource and 1 MiB Pod list, each against serde_json's
/// encode of the same value in alternating batches in one process: on a shared machine this
/// holds steadier than timing whole processes, whose load comes and goes between runs. The
/// types derive `conneg_cbor::Serialize`; "det serde" is the same value with the types deriving
/// serde's `Serialize` (`k8s::serde_derived`).
fn encode_k8s() {
    fn rows<T: Serialize, U: Serialize>(name: &str, x: &T, twin: &U) {
        fn one(label: String, opts: conneg_cbor::EncodeOptions, x: &impl Serialize) {
            let (c, j) = pair(
                &mut || {
                    black_box(opts.to_vec(black_box(x)).unwrap());
                },
                &mut || {
                    black_box(serde_json::to_vec(black_box(x)).unwrap());
                },
            );
            row(&label, c, j);
        }
        let det = conneg_cbor::EncodeOptions::deterministic();
        assert_eq!(det.to_vec(x).unwrap(), det.to_vec(twin).unwrap());
        one(format!("encode det   k8s {name}"), det, x);
        one(format!("encode det serde k8s {name}"), det, twin);
        one(
            format!("encode fast  k8s {name}"),
            conneg_cbor::EncodeOptions::fast(),
            x,
        );
    }
    fn load<T: serde::de::DeserializeOwned, U: serde::de::DeserializeOwned>(v: Value) -> (T, U) {
        (
            serde_json::from_value(v.clone()).unwrap(),
            serde_json::from_value(v).unwrap(),
        )
    }
    let (pod, pod2): (k8s::Pod, k8s::serde_derived::Pod) = load(k8s::pod_value());
    let (cr, cr2): (k8s::PostgresCluster, k8s::serde_derived::PostgresCluster) =
        load(k8s::cr_value());
    let (list, list2): (k8s::PodList, k8s::serde_derived::PodList) =
        load(k8s::pod_list_value(1 << 20));
    rows("pod", &pod, &pod2);
    rows("custom resource", &cr, &cr2);
    rows("pod list 1MiB", &list, &list2);
}

/// `perf decode`: typed decode (`from_slice`, as the criterion benchmark does) of the
/// benchmark's Pod, custom resource and 1 MiB Pod list, each against serde_json's decode of the
/// same object in alternating batches, like `perf encode`, and the same for `value_from_slice`
/// against serde_json's decode into `Value`; then minicbor-serde and cbor4ii on the text-string
/// encoding of the same object (what they can read), typed and into `Value`, also against
/// serde_json; and `from_slice::<Value>`. Last the stress corpus (`k8s::stress`: non-ASCII text
/// in every plane, 400 objects), which `perf decode stress` times alone. The
/// "no parsing" row builds the typed object from a `serde_json::Value` of it: the part of typed
/// decode that serde's visitors and the allocator take whatever the format.
fn decode_k8s() {
    fn rows<T: Serialize + serde::de::DeserializeOwned + conneg_cbor::Decode>(name: &str, x: &T) {
        let json = serde_json::to_vec(x).unwrap();
        let cbor = conneg_cbor::to_vec(x).unwrap();
        let text = text_cbor(&serde_json::to_value(x).unwrap());
        let mut json_decode = || {
            black_box(serde_json::from_slice::<T>(black_box(&json)).unwrap());
        };
        let (c, j) = pair(
            &mut || {
                black_box(conneg_cbor::from_slice::<T>(black_box(&cbor)).unwrap());
            },
            &mut json_decode,
        );
        row(&format!("decode k8s {name}"), c, j);
        let (c, j) = pair(
            &mut || {
                black_box(conneg_cbor::decode::<T>(black_box(&cbor)).unwrap());
            },
            &mut json_decode,
        );
        row(&format!("decode k8s {name}, derived Decode"), c, j);
        // What is left without any parsing: serde's derived visitors building the same struct
        // from a `Value` (field matching, staging, allocation and copies of every string).
        let tree = serde_json::to_value(x).unwrap();
        let (c, j) = pair(
            &mut || {
                black_box(T::deserialize(black_box(&tree)).unwrap());
            },
            &mut json_decode,
        );
        row(&format!("  no parsing: from &Value, {name}"), c, j);
        let mut json_value = || {
            black_box(serde_json::from_slice::<Value>(black_box(&json)).unwrap());
        };
        let (c, j) = pair(
            &mut || {
                black_box(conneg_cbor::value_from_slice(black_box(&cbor)).unwrap());
            },
            &mut json_value,
        );
        row(&format!("decode value {name}"), c, j);
        let (c, j) = pair(
            &mut || {
                black_box(conneg_cbor::from_slice::<Value>(black_box(&cbor)).unwrap());
            },
            &mut json_value,
        );
        row(&format!("decode value {name}, from_slice"), c, j);
        peer_rows::<T>(name, &text, &mut json_decode, "");
        peer_rows::<Value>(name, &text, &mut json_value, "value ");
    }
    /// minicbor-serde and cbor4ii decoding `text` into `T`, each against `json_decode`.
    fn peer_rows<T: serde::de::DeserializeOwned>(
        name: &str,
        text: &[u8],
        json_decode: &mut dyn FnMut(),
        what: &str,
    ) {
        type Peer<T> = (&'static str, fn(&[u8]) -> Result<T, String>);
        let peers: [Peer<T>; 2] = [
            ("minicbor-serde", |b| {
                minicbor_serde::from_slice(b).map_err(|e| e.to_string())
            }),
            ("cbor4ii", |b| {
                cbor4ii::serde::from_slice(b).map_err(|e| e.to_string())
            }),
        ];
        for (peer, decode) in peers {
            if let Err(e) = decode(text) {
                println!("  {peer} {what}{name}: fails ({e}), not timed");
                continue;
            }
            let (c, j) = pair(
                &mut || {
                    black_box(decode(black_box(text)).unwrap());
                },
                json_decode,
            );
            row(&format!("  {peer} {what}{name}"), c, j);
        }
    }
    // `perf decode stress` times the stress corpus alone.
    let only_stress = std::env::args().nth(2).as_deref() == Some("stress");
    let stress = k8s::stress::list();
    if only_stress {
        return rows("stress corpus", &stress);
    }
    let pod: k8s::Pod = serde_json::from_value(k8s::pod_value()).unwrap();
    let cr: k8s::PostgresCluster = serde_json::from_value(k8s::cr_value()).unwrap();
    let list: k8s::PodList = serde_json::from_value(k8s::pod_list_value(1 << 20)).unwrap();
    rows("pod", &pod);
    rows("custom resource", &cr);
    rows("pod list 1MiB", &list);
    rows("stress corpus", &stress);
}

/// A decode into `$t` through serde, for `perf profile`: ours (`$who` empty), serde_json
/// (`json`), sonic-rs (`sonic`), minicbor-serde (`minicbor`), cbor4ii (`cbor4ii`) or ciborium
/// (`ciborium`), each on the input it reads. A
/// macro, so that the closures are `main`'s (the callgrind commands collect
/// `perf::main::{{closure}}` only).
macro_rules! serde_decode {
    ($t:ty, $who:expr, $cbor:expr, $json:expr, $text:expr) => {{
        let (cbor, json, text): (Vec<u8>, Vec<u8>, Vec<u8>) = ($cbor, $json, $text);
        let f: Box<dyn FnMut()> = match $who {
            "" => Box::new(move || {
                black_box(conneg_cbor::from_slice::<$t>(&cbor).unwrap());
            }),
            "json" => Box::new(move || {
                black_box(serde_json::from_slice::<$t>(&json).unwrap());
            }),
            "minicbor" => Box::new(move || {
                black_box(minicbor_serde::from_slice::<$t>(&text).unwrap());
            }),
            "cbor4ii" => Box::new(move || {
                black_box(cbor4ii::serde::from_slice::<$t>(&text).unwrap());
            }),
            "ciborium" => Box::new(move || {
                black_box(ciborium::from_reader::<$t, _>(&text[..]).unwrap());
            }),
            "sonic" => Box::new(move || {
                black_box(sonic_rs::from_slice::<$t>(&json).unwrap());
            }),
            who => panic!("unknown decoder {who}"),
        };
        f
    }};
}

/// `dec-OBJECT-REPR[-WHO]` for `perf profile` on the object whose typed mirror is `$t` and
/// whose `Value` is `$value`; `$rest` is `REPR[-WHO]`. A macro for the same reason as
/// [`serde_decode`].
macro_rules! k8s_decode {
    ($t:ty, $value:expr, $rest:expr) => {{
        let value: Value = $value;
        let typed: $t = serde_json::from_value(value.clone()).unwrap();
        let cbor = conneg_cbor::to_vec(&typed).unwrap();
        let json = serde_json::to_vec(&typed).unwrap();
        let text = text_cbor(&value);
        let f: Box<dyn FnMut()> = match $rest {
            "value-direct" => Box::new(move || {
                black_box(conneg_cbor::value_from_slice(&cbor).unwrap());
            }),
            "typed-derive" => Box::new(move || {
                black_box(conneg_cbor::decode::<$t>(&cbor).unwrap());
            }),
            w => match w.split_once('-').unwrap_or((w, "")) {
                ("value", who) => serde_decode!(Value, who, cbor, json, text),
                ("typed", who) => serde_decode!($t, who, cbor, json, text),
                _ => panic!("unknown workload {w}"),
            },
        };
        f
    }};
}

fn main() {
    match std::env::args().nth(1).as_deref() {
        Some("encode") => return encode_k8s(),
        Some("decode") => return decode_k8s(),
        _ => {}
    }
    let pod_v = pod_json(1);
    let list_v = json!({
        "apiVersion": "v1", "kind": "PodList", "metadata": {"resourceVersion": "1"},
        "items": (0..600).map(pod_json).collect::<Vec<_>>()
    });
    let pod_t: Pod = serde_json::from_value(pod_v.clone()).unwrap();
    let list_t: Vec<Pod> = (0..600)
        .map(|i| serde_json::from_value(pod_json(i)).unwrap())
        .collect();
    println!(
        "pod: json {} B, cbor {} B; list: json {} B, cbor {} B",
        serde_json::to_vec(&pod_v).unwrap().len(),
        conneg_cbor::to_vec(&pod_v).unwrap().len(),
        serde_json::to_vec(&list_v).unwrap().len(),
        conneg_cbor::to_vec(&list_v).unwrap().len()
    );

    let det = conneg_cbor::EncodeOptions::deterministic();
    let fast = conneg_cbor::EncodeOptions::fast();
    let mut buf = Vec::new();
    // `perf profile <what>`: loop one CBOR operation for a profiler.
    if let Some(what) = std::env::args().nth(2) {
        let cb_v = conneg_cbor::to_vec(&list_v).unwrap();
        let cb_t = conneg_cbor::to_vec(&list_t).unwrap();
        let d = Duration::from_secs(3);
        let mut f: Box<dyn FnMut()> = match what.as_str() {
            "enc-det-value" => Box::new(|| {
                buf.clear();
                det.encode_into(&mut buf, &list_v).unwrap()
            }),
            "enc-fast-value" => Box::new(|| {
                buf.clear();
                fast.encode_into(&mut buf, &list_v).unwrap()
            }),
            "enc-det-typed" => Box::new(|| {
                buf.clear();
                det.encode_into(&mut buf, &list_t).unwrap()
            }),
            "enc-fast-typed" => Box::new(|| {
                buf.clear();
                fast.encode_into(&mut buf, &list_t).unwrap()
            }),
            // serde_json encoding the same list, for instruction counts side by side.
            "enc-json-typed" => Box::new(|| {
                buf.clear();
                serde_json::to_writer(&mut buf, &list_t).unwrap()
            }),
            "dec-typed-pod" => {
                let one = conneg_cbor::to_vec(&pod_t).unwrap();
                Box::new(move || {
                    black_box(conneg_cbor::from_slice::<Pod>(&one).unwrap());
                })
            }
            "dec-ignored" => Box::new(|| {
                black_box(conneg_cbor::from_slice::<serde::de::IgnoredAny>(&cb_v).unwrap());
            }),
            "dec-value" => Box::new(|| {
                black_box(conneg_cbor::from_slice::<Value>(&cb_v).unwrap());
            }),
            // One Pod into `Value`: serde_json, conneg-cbor through serde and direct, the clone.
            "dec-pod-value-json"
            | "dec-pod-value"
            | "dec-pod-value-direct"
            | "dec-pod-value-clone" => {
                let cb = conneg_cbor::to_vec(&pod_v).unwrap();
                let js = serde_json::to_vec(&pod_v).unwrap();
                let pod = pod_v.clone();
                // The variant is chosen here, not in the timed closure.
                match what.as_str() {
                    "dec-pod-value-json" => Box::new(move || {
                        black_box(serde_json::from_slice::<Value>(&js).unwrap());
                    }),
                    "dec-pod-value" => Box::new(move || {
                        black_box(conneg_cbor::from_slice::<Value>(&cb).unwrap());
                    }),
                    "dec-pod-value-direct" => Box::new(move || {
                        black_box(conneg_cbor::value_from_slice(&cb).unwrap());
                    }),
                    _ => Box::new(move || {
                        black_box(pod.clone());
                    }),
                }
            }
            "dec-value-direct" => Box::new(|| {
                black_box(conneg_cbor::value_from_slice(&cb_v).unwrap());
            }),
            // Cloning the decoded tree (and dropping the clone): the floor of any decoder.
            "dec-value-clone" => {
                let v: Value = conneg_cbor::from_slice(&cb_v).unwrap();
                Box::new(move || {
                    black_box(v.clone());
                })
            }
            // The same list decoded by serde_json and by the peers (text strings, no tag), for
            // instruction counts side by side.
            "dec-value-json" => {
                let js = serde_json::to_vec(&list_v).unwrap();
                Box::new(move || {
                    black_box(serde_json::from_slice::<Value>(&js).unwrap());
                })
            }
            "dec-value-minicbor" => {
                let text = text_cbor(&list_v);
                Box::new(move || {
                    black_box(minicbor_serde::from_slice::<Value>(&text).unwrap());
                })
            }
            "dec-value-cbor4ii" => {
                let text = text_cbor(&list_v);
                Box::new(move || {
                    black_box(cbor4ii::serde::from_slice::<Value>(&text).unwrap());
                })
            }
            // The typed list decoded by serde_json and by the peers, likewise.
            "dec-typed-json" => {
                let js = serde_json::to_vec(&list_t).unwrap();
                Box::new(move || {
                    black_box(serde_json::from_slice::<Vec<Pod>>(&js).unwrap());
                })
            }
            "dec-typed-minicbor" => {
                let text = text_cbor(&list_v["items"]);
                Box::new(move || {
                    black_box(minicbor_serde::from_slice::<Vec<Pod>>(&text).unwrap());
                })
            }
            "dec-typed-cbor4ii" => {
                let text = text_cbor(&list_v["items"]);
                Box::new(move || {
                    black_box(cbor4ii::serde::from_slice::<Vec<Pod>>(&text).unwrap());
                })
            }
            // The benchmark's typed Pod (benches/k8s), encoded: `enc-det-pod-k8s` (the types
            // derive `conneg_cbor::Serialize`), `enc-det-serde-pod-k8s` (the same Pod with
            // serde's derive), `enc-fast-pod-k8s`, `enc-json-pod-k8s` (decoded: `dec-k8spod-*`
            // below).
            w if w.starts_with("enc-") && w.ends_with("-pod-k8s") => {
                let v = k8s::pod_value();
                let pod: k8s::Pod = serde_json::from_value(v.clone()).unwrap();
                let twin: k8s::serde_derived::Pod = serde_json::from_value(v).unwrap();
                match w {
                    "enc-det-pod-k8s" => Box::new(move || {
                        black_box(det.to_vec(&pod).unwrap());
                    }),
                    "enc-det-serde-pod-k8s" => Box::new(move || {
                        black_box(det.to_vec(&twin).unwrap());
                    }),
                    "enc-fast-pod-k8s" => Box::new(move || {
                        black_box(fast.to_vec(&pod).unwrap());
                    }),
                    _ => Box::new(move || {
                        black_box(serde_json::to_vec(&pod).unwrap());
                    }),
                }
            }
            // The benchmark's 1 MiB typed PodList (benches/k8s), encoded as criterion times it:
            // `enc-det-k8s`, `enc-fast-k8s`, `enc-json-k8s` (decoded: `dec-k8slist-*` below).
            w if w.starts_with("enc-") && w.ends_with("-k8s") => {
                let list: k8s::PodList =
                    serde_json::from_value(k8s::pod_list_value(1 << 20)).unwrap();
                match w {
                    "enc-det-k8s" => Box::new(move || {
                        black_box(det.to_vec(&list).unwrap());
                    }),
                    "enc-fast-k8s" => Box::new(move || {
                        black_box(fast.to_vec(&list).unwrap());
                    }),
                    _ => Box::new(move || {
                        black_box(serde_json::to_vec(&list).unwrap());
                    }),
                }
            }
            // The benchmark's objects (benches/k8s): `dec-OBJECT-REPR[-WHO]`, OBJECT `k8spod`,
            // `k8scr`, `k8slist` (1 MiB) or `stress` (the stress corpus, benches/k8s/stress.rs),
            // REPR `typed` or `value`; WHO empty (ours through serde), `direct`
            // (`value_from_slice`), `derive` (the derived `Decode`), `json`, `sonic` (sonic-rs, the
            // JSON), `minicbor`, `cbor4ii` or `ciborium` (on the text-string encoding), e.g.
            // `dec-k8spod-typed-cbor4ii`.
            w if matches!(
                w.split('-').nth(1),
                Some("k8spod" | "k8scr" | "k8slist" | "stress")
            ) =>
            {
                let (object, rest) = w["dec-".len()..].split_once('-').expect("dec-OBJECT-REPR");
                match object {
                    "k8spod" => k8s_decode!(k8s::Pod, k8s::pod_value(), rest),
                    "k8scr" => k8s_decode!(k8s::PostgresCluster, k8s::cr_value(), rest),
                    "k8slist" => k8s_decode!(k8s::PodList, k8s::pod_list_value(1 << 20), rest),
                    _ => k8s_decode!(k8s::TranslationList, k8s::stress::value_list(), rest),
                }
            }
            _ => Box::new(|| {
                black_box(conneg_cbor::from_slice::<Vec<Pod>>(&cb_t).unwrap());
            }),
        };
        // PERF_ITERS=n runs a fixed number of iterations (for `perf stat` instruction counts,
        // which a busy machine does not disturb).
        if let Some(n) = std::env::var("PERF_ITERS")
            .ok()
            .and_then(|n| n.parse::<u32>().ok())
        {
            alloc::iterations(n, &mut f);
            return;
        }
        let start = Instant::now();
        while start.elapsed() < d {
            f();
        }
        return;
    }
    let mut jbuf = Vec::new();
    for (name, v) in [("Value pod", &pod_v), ("Value list 1MiB", &list_v)] {
        for (mode, opts) in [("det ", det), ("fast", fast)] {
            let (c, j) = pair(
                &mut || {
                    buf.clear();
                    opts.encode_into(&mut buf, black_box(v)).unwrap();
                },
                &mut || {
                    jbuf.clear();
                    serde_json::to_writer(&mut jbuf, black_box(v)).unwrap();
                },
            );
            row(&format!("encode {mode} {name}"), c, j);
        }
        let jb = serde_json::to_vec(v).unwrap();
        let cb = conneg_cbor::to_vec(v).unwrap();
        let (c, j) = pair(
            &mut || {
                black_box(conneg_cbor::from_slice::<Value>(black_box(&cb)).unwrap());
            },
            &mut || {
                black_box(serde_json::from_slice::<Value>(black_box(&jb)).unwrap());
            },
        );
        row(&format!("decode      {name}"), c, j);
    }
    for (mode, opts) in [("det ", det), ("fast", fast)] {
        let (c, j) = pair(
            &mut || {
                buf.clear();
                opts.encode_into(&mut buf, black_box(&pod_t)).unwrap();
            },
            &mut || {
                jbuf.clear();
                serde_json::to_writer(&mut jbuf, black_box(&pod_t)).unwrap();
            },
        );
        row(&format!("encode {mode} typed pod"), c, j);
        let (c, j) = pair(
            &mut || {
                buf.clear();
                opts.encode_into(&mut buf, black_box(&list_t)).unwrap();
            },
            &mut || {
                jbuf.clear();
                serde_json::to_writer(&mut jbuf, black_box(&list_t)).unwrap();
            },
        );
        row(&format!("encode {mode} typed list"), c, j);
    }
    let jb = serde_json::to_vec(&pod_t).unwrap();
    let cb = conneg_cbor::to_vec(&pod_t).unwrap();
    let (c, j) = pair(
        &mut || {
            black_box(conneg_cbor::from_slice::<Pod>(black_box(&cb)).unwrap());
        },
        &mut || {
            black_box(serde_json::from_slice::<Pod>(black_box(&jb)).unwrap());
        },
    );
    row("decode      typed pod", c, j);
    let jb = serde_json::to_vec(&list_t).unwrap();
    let cb = conneg_cbor::to_vec(&list_t).unwrap();
    let (c, j) = pair(
        &mut || {
            black_box(conneg_cbor::from_slice::<Vec<Pod>>(black_box(&cb)).unwrap());
        },
        &mut || {
            black_box(serde_json::from_slice::<Vec<Pod>>(black_box(&jb)).unwrap());
        },
    );
    row("decode      typed list", c, j);
}
