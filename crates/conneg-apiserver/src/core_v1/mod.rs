//! Core `v1` (`/api/v1`): `Namespace` and `NamespaceList`, served when the server runs
//! standalone so that clients which expect a core group (kube-rs discovery, kubectl, the
//! Python client) find one. One version, so the type is its own internal form.

use serde::Deserialize;
use serde_json::json;

use crate::meta::null_as_default;
use crate::resource::{GroupVersion, ResourceInfo};

pub mod lifecycle;
mod strategy;
use crate::definitions::{Definitions, OpenApiSchema, enum_schema};

/// Core `v1` (`/api/v1`).
pub const CORE_V1: GroupVersion = GroupVersion::new("v1");

/// `namespaces` (cluster-scoped, with a status subresource).
pub const NAMESPACES: ResourceInfo = ResourceInfo {
    group: crate::resource::CORE_GROUP,
    resource: "namespaces",
    singular: "namespace",
    kind: "Namespace",
    list_kind: "NamespaceList",
    namespaced: false,
    verbs: &[
        "create", "delete", "get", "list", "patch", "update", "watch",
    ],
    short_names: &["ns"],
    categories: &[],
    status_subresource: true,
    scale_subresource: false,
};

/// The finalizer the namespace controller removes once a namespace is empty (`kubernetes`).
pub const FINALIZER_KUBERNETES: &str = "kubernetes";

/// The label every namespace carries with its own name (set by defaulting, as Kubernetes).
pub const NAME_LABEL: &str = "kubernetes.io/metadata.name";

/// `NamespacePhase`: `Active`.
pub const PHASE_ACTIVE: &str = "Active";
/// `NamespacePhase`: `Terminating` (deletion requested; contents are being removed).
pub const PHASE_TERMINATING: &str = "Terminating";

/// `NamespaceSpec`.
#[derive(Debug, Clone, Default, PartialEq, Eq, conneg_cbor::Serialize, Deserialize)]
pub struct NamespaceSpec {
    /// What must be done before the namespace is removed (`["kubernetes"]`).
    #[serde(
        default,
        deserialize_with = "null_as_default",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub finalizers: Vec<String>,
}

/// `NamespaceStatus`.
#[derive(Debug, Clone, Default, PartialEq, Eq, conneg_cbor::Serialize, Deserialize)]
pub struct NamespaceStatus {
    /// `Active` or `Terminating`.
    #[serde(
        default,
        deserialize_with = "null_as_default",
        skip_serializing_if = "String::is_empty"
    )]
    pub phase: String,
    /// What the namespace controller reports (`NamespaceDeletionContentFailure`, ...).
    #[serde(
        default,
        deserialize_with = "null_as_default",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub conditions: Vec<NamespaceCondition>,
}

/// `NamespaceCondition`.
#[derive(Debug, Clone, Default, PartialEq, Eq, conneg_cbor::Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct NamespaceCondition {
    /// The condition's type.
    #[serde(rename = "type")]
    pub type_: String,
    /// `True`, `False` or `Unknown`.
    pub status: String,
    /// When the status last changed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_transition_time: Option<crate::meta::Time>,
    /// A machine-readable reason.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub reason: String,
    /// A human-readable message.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub message: String,
}

/// `ValidateNamespaceStatusUpdate`: the phase follows the deletion mark.
pub fn validate_status(ns: &Namespace) -> Vec<crate::validation::FieldError> {
    use crate::validation::FieldError;
    let deleting = ns.metadata.deletion_timestamp.is_some();
    let (want, rule) = if deleting {
        (
            PHASE_TERMINATING,
            "may only be 'Terminating' if `deletionTimestamp` is not empty",
        )
    } else {
        (
            PHASE_ACTIVE,
            "may only be 'Active' if `deletionTimestamp` is empty",
        )
    };
    if ns.status.phase == want {
        Vec::new()
    } else {
        vec![FieldError::invalid("status.Phase", &ns.status.phase, rule)]
    }
}

/// `Namespace` (cluster-scoped).
#[crate::kind(version = "v1", resource = NAMESPACES, defaults = set_defaults)]
#[derive(Debug, Clone, Default, PartialEq, conneg_cbor::Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Namespace {
    /// Spec (always written).
    #[serde(default, deserialize_with = "null_as_default")]
    pub spec: NamespaceSpec,
    /// Status (always written).
    #[serde(default, deserialize_with = "null_as_default")]
    pub status: NamespaceStatus,
}

/// A list of namespaces, as `GET /api/v1/namespaces` answers (`kind: NamespaceList`).
pub type NamespaceList = crate::resource::List<Namespace>;

impl Namespace {
    /// Whether deletion has begun (phase `Terminating`).
    pub fn is_terminating(&self) -> bool {
        self.status.phase == PHASE_TERMINATING
    }
}

/// `SetDefaults_Namespace` and `SetDefaults_NamespaceStatus`: the name label, phase `Active`.
fn set_defaults(ns: &mut Namespace) {
    if !ns.metadata.name.is_empty() {
        ns.metadata
            .labels
            .insert(NAME_LABEL.to_owned(), ns.metadata.name.clone());
    }
    if ns.status.phase.is_empty() {
        PHASE_ACTIVE.clone_into(&mut ns.status.phase);
    }
}

impl OpenApiSchema for Namespace {
    fn definitions(d: &mut Definitions<'_>) {
        let mut props = serde_json::Map::new();
        props.insert(
            "spec".into(),
            d.property(
                "NamespaceSpec",
                json!({"default": {}, "description": "Spec defines the behavior of the Namespace."}),
            ),
        );
        props.insert(
            "status".into(),
            d.property(
                "NamespaceStatus",
                json!({"default": {}, "description": "Status describes the current status of a Namespace."}),
            ),
        );
        d.object("Namespace", "Namespace provides a scope for Names.", props);
        // A namespace's name is also a DNS-1123 label (`validate_namespace_name`).
        d.name_format("Namespace", "k8s-short-name");
        d.list("NamespaceList", "Namespace");
        d.insert(
            "NamespaceSpec",
            json!({"type": "object", "description": "NamespaceSpec describes the attributes on a Namespace.",
                   "properties": {"finalizers": {"type": "array", "description": "Finalizers is an opaque list of values that must be empty to permanently remove object from storage.",
                                                 "items": {"type": "string", "default": ""}, "x-kubernetes-list-type": "atomic"}}}),
        );
        d.insert(
            "NamespaceStatus",
            json!({"type": "object", "description": "NamespaceStatus is information about the current status of a Namespace.",
                   "properties": {"phase": enum_schema("Phase is the current lifecycle phase of the namespace.", &[PHASE_ACTIVE, PHASE_TERMINATING])}}),
        );
    }
}
