//! Typed mirrors of the benchmark objects (the shape of k8s.io/api core/v1 Pod and of a custom
//! resource), and the generated 1 MiB Pod list. Shared by the benchmarks, `perf` and
//! `tests/decode.rs`. Each type derives serde's `Deserialize` and `conneg_cbor::Decode`.
//! Optional fields are skipped when absent, like Go's `omitempty`, so that a typed round trip
//! gives back exactly the fixture JSON.

#![allow(dead_code, unreachable_pub, missing_docs)]

use serde::de::{self, Visitor};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use serde_json::Value;
use std::collections::BTreeMap;
use std::fmt;

pub type StringMap = BTreeMap<String, String>;

/// `k8s.io/apimachinery/pkg/util/intstr.IntOrString`: a JSON number or a JSON string.
#[derive(Clone, Debug, PartialEq)]
pub enum IntOrString {
    Int(i32),
    String(String),
}

impl Serialize for IntOrString {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            IntOrString::Int(i) => s.serialize_i32(*i),
            IntOrString::String(v) => s.serialize_str(v),
        }
    }
}

impl conneg_cbor::Decode for IntOrString {
    fn decode(d: &mut conneg_cbor::Decoder<'_, '_>) -> Result<Self, conneg_cbor::UseSerde> {
        d.serde()
    }
}

impl<'de> Deserialize<'de> for IntOrString {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = IntOrString;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("an int32 or a string")
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<IntOrString, E> {
                i32::try_from(v)
                    .map(IntOrString::Int)
                    .map_err(|_| E::custom("IntOrString out of int32 range"))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<IntOrString, E> {
                i32::try_from(v)
                    .map(IntOrString::Int)
                    .map_err(|_| E::custom("IntOrString out of int32 range"))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<IntOrString, E> {
                Ok(IntOrString::String(v.to_owned()))
            }
        }
        d.deserialize_any(V)
    }
}

/// The typed mirrors, defined once and instantiated twice: here with
/// `conneg_cbor::Serialize` (fields handed to the deterministic encoder in canonical order), in
/// [`serde_derived`] with serde's own derive (declaration order), so that both can be encoded
/// in one run.
macro_rules! k8s_types {
    ($serialize:path) => {
        #[derive($serialize, Deserialize, conneg_cbor::Decode, Clone, Debug, PartialEq)]
        #[serde(rename_all = "camelCase")]
        pub struct Pod {
            pub api_version: String,
            pub kind: String,
            pub metadata: ObjectMeta,
            pub spec: PodSpec,
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub status: Option<PodStatus>,
        }

        #[derive(
            $serialize, Deserialize, conneg_cbor::Decode, Clone, Debug, PartialEq, Default,
        )]
        #[serde(rename_all = "camelCase")]
        pub struct ObjectMeta {
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub name: Option<String>,
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub generate_name: Option<String>,
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub namespace: Option<String>,
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub uid: Option<String>,
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub resource_version: Option<String>,
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub generation: Option<i64>,
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub creation_timestamp: Option<String>,
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub labels: Option<StringMap>,
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub annotations: Option<StringMap>,
            #[serde(default, skip_serializing_if = "Vec::is_empty")]
            pub owner_references: Vec<OwnerReference>,
            #[serde(default, skip_serializing_if = "Vec::is_empty")]
            pub finalizers: Vec<String>,
        }

        #[derive($serialize, Deserialize, conneg_cbor::Decode, Clone, Debug, PartialEq)]
        #[serde(rename_all = "camelCase")]
        pub struct OwnerReference {
            pub api_version: String,
            pub kind: String,
            pub name: String,
            pub uid: String,
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub controller: Option<bool>,
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub block_owner_deletion: Option<bool>,
        }

        #[derive($serialize, Deserialize, conneg_cbor::Decode, Clone, Debug, PartialEq)]
        #[serde(rename_all = "camelCase")]
        pub struct PodSpec {
            #[serde(default, skip_serializing_if = "Vec::is_empty")]
            pub volumes: Vec<Volume>,
            pub containers: Vec<Container>,
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub restart_policy: Option<String>,
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub termination_grace_period_seconds: Option<i64>,
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub dns_policy: Option<String>,
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub node_selector: Option<StringMap>,
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub service_account_name: Option<String>,
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub service_account: Option<String>,
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub node_name: Option<String>,
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub security_context: Option<PodSecurityContext>,
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub scheduler_name: Option<String>,
            #[serde(default, skip_serializing_if = "Vec::is_empty")]
            pub tolerations: Vec<Toleration>,
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub priority: Option<i32>,
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub enable_service_links: Option<bool>,
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub preemption_policy: Option<String>,
        }

        #[derive($serialize, Deserialize, conneg_cbor::Decode, Clone, Debug, PartialEq)]
        #[serde(rename_all = "camelCase")]
        pub struct Volume {
            pub name: String,
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub config_map: Option<ConfigMapVolumeSource>,
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub empty_dir: Option<EmptyDirVolumeSource>,
        }

        #[derive($serialize, Deserialize, conneg_cbor::Decode, Clone, Debug, PartialEq)]
        #[serde(rename_all = "camelCase")]
        pub struct ConfigMapVolumeSource {
            pub name: String,
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub default_mode: Option<i32>,
        }

        #[derive($serialize, Deserialize, conneg_cbor::Decode, Clone, Debug, PartialEq)]
        #[serde(rename_all = "camelCase")]
        pub struct EmptyDirVolumeSource {
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub size_limit: Option<String>,
        }

        #[derive($serialize, Deserialize, conneg_cbor::Decode, Clone, Debug, PartialEq)]
        #[serde(rename_all = "camelCase")]
        pub struct Container {
            pub name: String,
            pub image: String,
            #[serde(default, skip_serializing_if = "Vec::is_empty")]
            pub command: Vec<String>,
            #[serde(default, skip_serializing_if = "Vec::is_empty")]
            pub args: Vec<String>,
            #[serde(default, skip_serializing_if = "Vec::is_empty")]
            pub ports: Vec<ContainerPort>,
            #[serde(default, skip_serializing_if = "Vec::is_empty")]
            pub env: Vec<EnvVar>,
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub resources: Option<ResourceRequirements>,
            #[serde(default, skip_serializing_if = "Vec::is_empty")]
            pub volume_mounts: Vec<VolumeMount>,
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub liveness_probe: Option<Probe>,
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub readiness_probe: Option<Probe>,
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub lifecycle: Option<Lifecycle>,
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub termination_message_path: Option<String>,
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub termination_message_policy: Option<String>,
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub image_pull_policy: Option<String>,
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub security_context: Option<SecurityContext>,
        }

        #[derive($serialize, Deserialize, conneg_cbor::Decode, Clone, Debug, PartialEq)]
        #[serde(rename_all = "camelCase")]
        pub struct ContainerPort {
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub name: Option<String>,
            pub container_port: i32,
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub protocol: Option<String>,
        }

        #[derive($serialize, Deserialize, conneg_cbor::Decode, Clone, Debug, PartialEq)]
        #[serde(rename_all = "camelCase")]
        pub struct EnvVar {
            pub name: String,
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub value: Option<String>,
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub value_from: Option<EnvVarSource>,
        }

        #[derive($serialize, Deserialize, conneg_cbor::Decode, Clone, Debug, PartialEq)]
        #[serde(rename_all = "camelCase")]
        pub struct EnvVarSource {
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub field_ref: Option<ObjectFieldSelector>,
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub resource_field_ref: Option<ResourceFieldSelector>,
        }

        #[derive($serialize, Deserialize, conneg_cbor::Decode, Clone, Debug, PartialEq)]
        #[serde(rename_all = "camelCase")]
        pub struct ObjectFieldSelector {
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub api_version: Option<String>,
            pub field_path: String,
        }

        #[derive($serialize, Deserialize, conneg_cbor::Decode, Clone, Debug, PartialEq)]
        #[serde(rename_all = "camelCase")]
        pub struct ResourceFieldSelector {
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub container_name: Option<String>,
            pub resource: String,
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub divisor: Option<String>,
        }

        #[derive($serialize, Deserialize, conneg_cbor::Decode, Clone, Debug, PartialEq)]
        #[serde(rename_all = "camelCase")]
        pub struct ResourceRequirements {
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub limits: Option<StringMap>,
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub requests: Option<StringMap>,
        }

        #[derive($serialize, Deserialize, conneg_cbor::Decode, Clone, Debug, PartialEq)]
        #[serde(rename_all = "camelCase")]
        pub struct VolumeMount {
            pub name: String,
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub read_only: Option<bool>,
            pub mount_path: String,
        }

        #[derive($serialize, Deserialize, conneg_cbor::Decode, Clone, Debug, PartialEq)]
        #[serde(rename_all = "camelCase")]
        pub struct Probe {
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub http_get: Option<HttpGetAction>,
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub initial_delay_seconds: Option<i32>,
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub timeout_seconds: Option<i32>,
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub period_seconds: Option<i32>,
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub success_threshold: Option<i32>,
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub failure_threshold: Option<i32>,
        }

        #[derive($serialize, Deserialize, conneg_cbor::Decode, Clone, Debug, PartialEq)]
        #[serde(rename_all = "camelCase")]
        pub struct HttpGetAction {
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub path: Option<String>,
            pub port: IntOrString,
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub scheme: Option<String>,
        }

        #[derive($serialize, Deserialize, conneg_cbor::Decode, Clone, Debug, PartialEq)]
        #[serde(rename_all = "camelCase")]
        pub struct Lifecycle {
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub pre_stop: Option<LifecycleHandler>,
        }

        #[derive($serialize, Deserialize, conneg_cbor::Decode, Clone, Debug, PartialEq)]
        #[serde(rename_all = "camelCase")]
        pub struct LifecycleHandler {
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub exec: Option<ExecAction>,
        }

        #[derive($serialize, Deserialize, conneg_cbor::Decode, Clone, Debug, PartialEq)]
        #[serde(rename_all = "camelCase")]
        pub struct ExecAction {
            #[serde(default)]
            pub command: Vec<String>,
        }

        #[derive($serialize, Deserialize, conneg_cbor::Decode, Clone, Debug, PartialEq)]
        #[serde(rename_all = "camelCase")]
        pub struct SecurityContext {
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub capabilities: Option<Capabilities>,
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub run_as_non_root: Option<bool>,
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub run_as_user: Option<i64>,
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub read_only_root_filesystem: Option<bool>,
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub allow_privilege_escalation: Option<bool>,
        }

        #[derive($serialize, Deserialize, conneg_cbor::Decode, Clone, Debug, PartialEq)]
        #[serde(rename_all = "camelCase")]
        pub struct Capabilities {
            #[serde(default, skip_serializing_if = "Vec::is_empty")]
            pub add: Vec<String>,
            #[serde(default, skip_serializing_if = "Vec::is_empty")]
            pub drop: Vec<String>,
        }

        #[derive($serialize, Deserialize, conneg_cbor::Decode, Clone, Debug, PartialEq)]
        #[serde(rename_all = "camelCase")]
        pub struct PodSecurityContext {
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub fs_group: Option<i64>,
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub seccomp_profile: Option<SeccompProfile>,
        }

        #[derive($serialize, Deserialize, conneg_cbor::Decode, Clone, Debug, PartialEq)]
        #[serde(rename_all = "camelCase")]
        pub struct SeccompProfile {
            #[serde(rename = "type")]
            pub type_: String,
        }

        #[derive($serialize, Deserialize, conneg_cbor::Decode, Clone, Debug, PartialEq)]
        #[serde(rename_all = "camelCase")]
        pub struct Toleration {
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub key: Option<String>,
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub operator: Option<String>,
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub effect: Option<String>,
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub toleration_seconds: Option<i64>,
        }

        #[derive($serialize, Deserialize, conneg_cbor::Decode, Clone, Debug, PartialEq)]
        #[serde(rename_all = "camelCase")]
        pub struct PodStatus {
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub phase: Option<String>,
            #[serde(default, skip_serializing_if = "Vec::is_empty")]
            pub conditions: Vec<PodCondition>,
            #[serde(rename = "hostIP", default, skip_serializing_if = "Option::is_none")]
            pub host_ip: Option<String>,
            #[serde(rename = "hostIPs", default, skip_serializing_if = "Vec::is_empty")]
            pub host_ips: Vec<PodIp>,
            #[serde(rename = "podIP", default, skip_serializing_if = "Option::is_none")]
            pub pod_ip: Option<String>,
            #[serde(rename = "podIPs", default, skip_serializing_if = "Vec::is_empty")]
            pub pod_ips: Vec<PodIp>,
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub start_time: Option<String>,
            #[serde(default, skip_serializing_if = "Vec::is_empty")]
            pub container_statuses: Vec<ContainerStatus>,
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub qos_class: Option<String>,
        }

        #[derive($serialize, Deserialize, conneg_cbor::Decode, Clone, Debug, PartialEq)]
        #[serde(rename_all = "camelCase")]
        pub struct PodCondition {
            #[serde(rename = "type")]
            pub type_: String,
            pub status: String,
            /// Always written, `null` when unset (metav1.Time without omitempty).
            #[serde(default)]
            pub last_probe_time: Option<String>,
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub last_transition_time: Option<String>,
        }

        #[derive($serialize, Deserialize, conneg_cbor::Decode, Clone, Debug, PartialEq)]
        pub struct PodIp {
            pub ip: String,
        }

        #[derive($serialize, Deserialize, conneg_cbor::Decode, Clone, Debug, PartialEq)]
        #[serde(rename_all = "camelCase")]
        pub struct ContainerStatus {
            pub name: String,
            #[serde(default)]
            pub state: ContainerState,
            #[serde(default)]
            pub last_state: ContainerState,
            pub ready: bool,
            pub restart_count: i32,
            pub image: String,
            #[serde(rename = "imageID")]
            pub image_id: String,
            #[serde(
                rename = "containerID",
                default,
                skip_serializing_if = "Option::is_none"
            )]
            pub container_id: Option<String>,
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub started: Option<bool>,
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub resources: Option<ResourceRequirements>,
        }

        #[derive(
            $serialize, Deserialize, conneg_cbor::Decode, Clone, Debug, PartialEq, Default,
        )]
        #[serde(rename_all = "camelCase")]
        pub struct ContainerState {
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub running: Option<ContainerStateRunning>,
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub terminated: Option<ContainerStateTerminated>,
        }

        #[derive($serialize, Deserialize, conneg_cbor::Decode, Clone, Debug, PartialEq)]
        #[serde(rename_all = "camelCase")]
        pub struct ContainerStateRunning {
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub started_at: Option<String>,
        }

        #[derive($serialize, Deserialize, conneg_cbor::Decode, Clone, Debug, PartialEq)]
        #[serde(rename_all = "camelCase")]
        pub struct ContainerStateTerminated {
            pub exit_code: i32,
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub reason: Option<String>,
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub started_at: Option<String>,
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub finished_at: Option<String>,
            #[serde(
                rename = "containerID",
                default,
                skip_serializing_if = "Option::is_none"
            )]
            pub container_id: Option<String>,
        }

        #[derive($serialize, Deserialize, conneg_cbor::Decode, Clone, Debug, PartialEq)]
        #[serde(rename_all = "camelCase")]
        pub struct PodList {
            pub api_version: String,
            pub kind: String,
            pub metadata: ListMeta,
            pub items: Vec<Pod>,
        }

        #[derive($serialize, Deserialize, conneg_cbor::Decode, Clone, Debug, PartialEq)]
        #[serde(rename_all = "camelCase")]
        pub struct ListMeta {
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub resource_version: Option<String>,
        }

        // ---- The custom resource (a PostgresCluster with a deeply nested spec). ----

        #[derive($serialize, Deserialize, conneg_cbor::Decode, Clone, Debug, PartialEq)]
        #[serde(rename_all = "camelCase")]
        pub struct PostgresCluster {
            pub api_version: String,
            pub kind: String,
            pub metadata: ObjectMeta,
            pub spec: PostgresSpec,
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub status: Option<PostgresStatus>,
        }

        #[derive($serialize, Deserialize, conneg_cbor::Decode, Clone, Debug, PartialEq)]
        #[serde(rename_all = "camelCase")]
        pub struct PostgresSpec {
            pub postgres_version: i32,
            pub replicas: i32,
            pub instances: Vec<InstanceSet>,
            /// Free-form server parameters (strings, integers, floats, booleans).
            #[serde(default)]
            pub parameters: BTreeMap<String, Value>,
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub backup: Option<Backup>,
            #[serde(default)]
            pub users: Vec<PgUser>,
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub monitoring: Option<Monitoring>,
            #[serde(default)]
            pub maintenance_windows: Vec<MaintenanceWindow>,
            #[serde(default)]
            pub paused: bool,
            /// Present and null: kept apart from absent.
            #[serde(default)]
            pub standby: Option<Value>,
        }

        #[derive($serialize, Deserialize, conneg_cbor::Decode, Clone, Debug, PartialEq)]
        #[serde(rename_all = "camelCase")]
        pub struct InstanceSet {
            pub name: String,
            pub replicas: i32,
            pub resources: ResourceRequirements,
            pub storage: Storage,
            pub affinity: Affinity,
        }

        #[derive($serialize, Deserialize, conneg_cbor::Decode, Clone, Debug, PartialEq)]
        #[serde(rename_all = "camelCase")]
        pub struct Storage {
            pub size: String,
            pub storage_class_name: String,
            pub iops: i64,
            #[serde(rename = "throughputMiBps")]
            pub throughput_mibps: f64,
        }

        #[derive($serialize, Deserialize, conneg_cbor::Decode, Clone, Debug, PartialEq)]
        #[serde(rename_all = "camelCase")]
        pub struct Affinity {
            pub zones: Vec<String>,
            pub anti_affinity: String,
        }

        #[derive($serialize, Deserialize, conneg_cbor::Decode, Clone, Debug, PartialEq)]
        #[serde(rename_all = "camelCase")]
        pub struct Backup {
            pub schedule: String,
            pub retention: Retention,
            pub destination: Destination,
            pub compression: Compression,
        }

        #[derive($serialize, Deserialize, conneg_cbor::Decode, Clone, Debug, PartialEq)]
        pub struct Retention {
            pub days: u32,
            pub weekly: u32,
            pub monthly: u32,
        }

        #[derive($serialize, Deserialize, conneg_cbor::Decode, Clone, Debug, PartialEq)]
        pub struct Destination {
            pub bucket: String,
            pub region: String,
            pub encryption: Encryption,
        }

        #[derive($serialize, Deserialize, conneg_cbor::Decode, Clone, Debug, PartialEq)]
        pub struct Encryption {
            #[serde(rename = "kmsKeyID")]
            pub kms_key_id: String,
        }

        #[derive($serialize, Deserialize, conneg_cbor::Decode, Clone, Debug, PartialEq)]
        pub struct Compression {
            pub algorithm: String,
            pub level: u8,
        }

        #[derive($serialize, Deserialize, conneg_cbor::Decode, Clone, Debug, PartialEq)]
        #[serde(rename_all = "camelCase")]
        pub struct PgUser {
            pub name: String,
            pub databases: Vec<String>,
            pub options: String,
            pub connection_limit: i32,
        }

        #[derive($serialize, Deserialize, conneg_cbor::Decode, Clone, Debug, PartialEq)]
        #[serde(rename_all = "camelCase")]
        pub struct Monitoring {
            pub enabled: bool,
            pub scrape_interval: String,
            pub sample_ratio: f64,
            pub exporters: Vec<Exporter>,
        }

        #[derive($serialize, Deserialize, conneg_cbor::Decode, Clone, Debug, PartialEq)]
        pub struct Exporter {
            pub name: String,
            pub port: u16,
        }

        #[derive($serialize, Deserialize, conneg_cbor::Decode, Clone, Debug, PartialEq)]
        #[serde(rename_all = "camelCase")]
        pub struct MaintenanceWindow {
            pub day: String,
            pub start: String,
            pub duration_minutes: u32,
        }

        #[derive($serialize, Deserialize, conneg_cbor::Decode, Clone, Debug, PartialEq)]
        #[serde(rename_all = "camelCase")]
        pub struct PostgresStatus {
            pub observed_generation: i64,
            pub phase: String,
            pub ready_replicas: i32,
            pub current_primary: String,
            pub lag_bytes: BTreeMap<String, u64>,
            pub last_successful_backup: BackupRecord,
            pub conditions: Vec<Condition>,
        }

        #[derive($serialize, Deserialize, conneg_cbor::Decode, Clone, Debug, PartialEq)]
        #[serde(rename_all = "camelCase")]
        pub struct BackupRecord {
            pub time: String,
            pub size_bytes: u64,
            pub duration_seconds: f64,
        }

        // ---- The stress corpus (`stress`): a custom resource full of non-ASCII text. ----

        #[derive($serialize, Deserialize, conneg_cbor::Decode, Clone, Debug, PartialEq)]
        #[serde(rename_all = "camelCase")]
        pub struct TranslationList {
            pub api_version: String,
            pub kind: String,
            pub metadata: ListMeta,
            pub items: Vec<Translation>,
        }

        #[derive($serialize, Deserialize, conneg_cbor::Decode, Clone, Debug, PartialEq)]
        #[serde(rename_all = "camelCase")]
        pub struct Translation {
            pub api_version: String,
            pub kind: String,
            pub metadata: ObjectMeta,
            pub spec: TranslationSpec,
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub status: Option<TranslationStatus>,
        }

        #[derive($serialize, Deserialize, conneg_cbor::Decode, Clone, Debug, PartialEq)]
        #[serde(rename_all = "camelCase")]
        pub struct TranslationSpec {
            pub locale: String,
            pub title: String,
            pub body: String,
            pub keywords: Vec<String>,
            pub messages: StringMap,
            pub revision: i64,
            pub checksum: u64,
            pub counters: Vec<i64>,
            pub score: f64,
            pub weights: Vec<f64>,
            /// Free-form: strings, integers, floats, booleans, null, arrays and maps.
            pub extra: BTreeMap<String, Value>,
        }

        #[derive($serialize, Deserialize, conneg_cbor::Decode, Clone, Debug, PartialEq)]
        #[serde(rename_all = "camelCase")]
        pub struct TranslationStatus {
            pub observed_generation: i64,
            pub reviewers: Vec<String>,
            pub conditions: Vec<Condition>,
        }

        /// metav1.Condition.
        #[derive($serialize, Deserialize, conneg_cbor::Decode, Clone, Debug, PartialEq)]
        #[serde(rename_all = "camelCase")]
        pub struct Condition {
            #[serde(rename = "type")]
            pub type_: String,
            pub status: String,
            pub reason: String,
            pub message: String,
            pub last_transition_time: String,
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub observed_generation: Option<i64>,
        }
    };
}

k8s_types!(conneg_cbor::Serialize);

/// The same types with `#[derive(serde::Serialize)]`.
pub mod serde_derived {
    use super::{BTreeMap, IntOrString, StringMap, Value};
    use serde::Deserialize;

    k8s_types!(serde::Serialize);
}

pub mod stress;

// ---- Fixtures. ----

pub const POD_JSON: &str = include_str!("../fixtures/pod.json");
pub const CR_JSON: &str = include_str!("../fixtures/cr.json");

pub fn pod_value() -> Value {
    serde_json::from_str(POD_JSON).expect("pod.json")
}

pub fn cr_value() -> Value {
    serde_json::from_str(CR_JSON).expect("cr.json")
}

/// A PodList of about `bytes` of compact JSON: copies of the fixture Pod, each with its own
/// name, uid, IPs, resource version and timestamps so that no two items are identical.
pub fn pod_list_value(bytes: usize) -> Value {
    let pod = pod_value();
    let one = serde_json::to_vec(&pod).unwrap().len();
    let n = bytes.div_ceil(one);
    let items: Vec<Value> = (0..n)
        .map(|i| {
            let mut p = pod.clone();
            let m = &mut p["metadata"];
            m["name"] = format!("web-frontend-7d9f8b6c5d-{i:05x}").into();
            m["uid"] = format!("9f2c1a3e-5b7d-4c8e-a1f0-{i:012x}").into();
            m["resourceVersion"] = (184_467_440 + i).to_string().into();
            m["creationTimestamp"] =
                format!("2026-11-19T08:{:02}:{:02}Z", i / 60 % 60, i % 60).into();
            p["status"]["podIP"] = format!("10.244.{}.{}", i / 250, i % 250 + 2).into();
            p["status"]["podIPs"][0]["ip"] = p["status"]["podIP"].clone();
            p["status"]["containerStatuses"][0]["restartCount"] = ((i % 7) as u64).into();
            p
        })
        .collect();
    serde_json::json!({
        "apiVersion": "v1",
        "kind": "PodList",
        "metadata": {"resourceVersion": "184470000"},
        "items": items,
    })
}
