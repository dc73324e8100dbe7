//! The configuration objects of `flowcontrol.apiserver.k8s.io/v1`: a [`FlowSchema`] sorts
//! requests into flows of a [`PriorityLevelConfiguration`], which says how many seats of the
//! server's concurrency the level gets and what happens to requests past them (queue or
//! reject). Field names and meanings are Kubernetes'; one version, so each type is its own
//! internal form.

use serde::Deserialize;

use crate::meta::null_as_default;
use crate::resource::{GroupVersion, ResourceInfo, VERBS};

/// The API group.
pub(crate) const GROUP: &str = "flowcontrol.apiserver.k8s.io";
/// `flowcontrol.apiserver.k8s.io/v1`.
pub(crate) const FLOWCONTROL_V1: GroupVersion =
    GroupVersion::new("flowcontrol.apiserver.k8s.io/v1");

/// `flowschemas` (cluster-scoped).
pub(crate) const FLOW_SCHEMAS: ResourceInfo = ResourceInfo {
    group: GROUP,
    resource: "flowschemas",
    singular: "flowschema",
    kind: "FlowSchema",
    list_kind: "FlowSchemaList",
    namespaced: false,
    verbs: VERBS,
    short_names: &[],
    categories: &[],
    status_subresource: true,
    scale_subresource: false,
};

/// `prioritylevelconfigurations` (cluster-scoped).
pub(crate) const PRIORITY_LEVEL_CONFIGURATIONS: ResourceInfo = ResourceInfo {
    group: GROUP,
    resource: "prioritylevelconfigurations",
    singular: "prioritylevelconfiguration",
    kind: "PriorityLevelConfiguration",
    list_kind: "PriorityLevelConfigurationList",
    namespaced: false,
    verbs: VERBS,
    short_names: &[],
    categories: &[],
    status_subresource: true,
    scale_subresource: false,
};

/// `FlowDistinguisherMethod` type `ByUser`: one flow per user name.
pub(crate) const BY_USER: &str = "ByUser";
/// `FlowDistinguisherMethod` type `ByNamespace`: one flow per namespace.
pub(crate) const BY_NAMESPACE: &str = "ByNamespace";
/// `PriorityLevelEnablement` `Exempt`: never limited nor queued.
pub(crate) const EXEMPT: &str = "Exempt";
/// `PriorityLevelEnablement` `Limited`: a share of the server's concurrency.
pub(crate) const LIMITED: &str = "Limited";
/// `LimitResponseType` `Queue`.
pub(crate) const QUEUE: &str = "Queue";
/// `LimitResponseType` `Reject`.
pub(crate) const REJECT: &str = "Reject";
/// `*`: every verb, group, resource, namespace or name.
pub(crate) const EVERY: &str = "*";

/// `FlowSchema`: which requests it matches, in which priority level, split into which flows.
#[crate::kind(version = "v1", resource = FLOW_SCHEMAS)]
#[derive(Debug, Clone, Default, PartialEq, conneg_cbor::Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct FlowSchema {
    /// What the schema matches and where it sends it.
    #[serde(default, deserialize_with = "null_as_default")]
    pub(crate) spec: FlowSchemaSpec,
    /// Conditions (`Dangling` when the priority level does not exist).
    #[serde(default, deserialize_with = "null_as_default")]
    pub(crate) status: FlowControlStatus,
}

/// `FlowSchemaSpec`.
#[derive(Debug, Clone, Default, PartialEq, conneg_cbor::Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct FlowSchemaSpec {
    /// The priority level of the matched requests.
    #[serde(default, deserialize_with = "null_as_default")]
    pub(crate) priority_level_configuration: PriorityLevelReference,
    /// Lower matches first (1..=10000; ties go to the lexicographically smaller name).
    #[serde(default)]
    pub(crate) matching_precedence: i32,
    /// How matched requests split into flows (none: one flow).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) distinguisher_method: Option<FlowDistinguisherMethod>,
    /// A request matches when any rule does.
    #[serde(
        default,
        deserialize_with = "null_as_default",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub(crate) rules: Vec<PolicyRulesWithSubjects>,
}

/// `PriorityLevelConfigurationReference`.
#[derive(Debug, Clone, Default, PartialEq, conneg_cbor::Serialize, Deserialize)]
pub(crate) struct PriorityLevelReference {
    /// The priority level's name.
    #[serde(default, deserialize_with = "null_as_default")]
    pub(crate) name: String,
}

/// `FlowDistinguisherMethod`.
#[derive(Debug, Clone, Default, PartialEq, conneg_cbor::Serialize, Deserialize)]
pub(crate) struct FlowDistinguisherMethod {
    /// `ByUser` or `ByNamespace`.
    #[serde(rename = "type", default, deserialize_with = "null_as_default")]
    pub(crate) type_: String,
}

/// `PolicyRulesWithSubjects`: who (any subject) does what (any rule).
#[derive(Debug, Clone, Default, PartialEq, conneg_cbor::Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct PolicyRulesWithSubjects {
    /// The users, groups and service accounts this applies to.
    #[serde(default, deserialize_with = "null_as_default")]
    pub(crate) subjects: Vec<Subject>,
    /// Rules on resource requests.
    #[serde(
        default,
        deserialize_with = "null_as_default",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub(crate) resource_rules: Vec<ResourcePolicyRule>,
    /// Rules on other paths (`/healthz`, `/apis`...).
    #[serde(
        default,
        deserialize_with = "null_as_default",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub(crate) non_resource_rules: Vec<NonResourcePolicyRule>,
}

/// `Subject`: a user, a group or a service account, by `kind`.
#[derive(Debug, Clone, Default, PartialEq, conneg_cbor::Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Subject {
    /// `User`, `Group` or `ServiceAccount`.
    #[serde(default, deserialize_with = "null_as_default")]
    pub(crate) kind: String,
    /// For `User`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) user: Option<Named>,
    /// For `Group`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) group: Option<Named>,
    /// For `ServiceAccount`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) service_account: Option<ServiceAccountSubject>,
}

/// `UserSubject` and `GroupSubject`: a name, `*` for any.
#[derive(Debug, Clone, Default, PartialEq, conneg_cbor::Serialize, Deserialize)]
pub(crate) struct Named {
    /// The name.
    #[serde(default, deserialize_with = "null_as_default")]
    pub(crate) name: String,
}

/// `ServiceAccountSubject`.
#[derive(Debug, Clone, Default, PartialEq, conneg_cbor::Serialize, Deserialize)]
pub(crate) struct ServiceAccountSubject {
    /// The service account's namespace.
    #[serde(default, deserialize_with = "null_as_default")]
    pub(crate) namespace: String,
    /// Its name, `*` for any.
    #[serde(default, deserialize_with = "null_as_default")]
    pub(crate) name: String,
}

/// `ResourcePolicyRule`.
#[derive(Debug, Clone, Default, PartialEq, conneg_cbor::Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ResourcePolicyRule {
    /// Verbs (`*`: any).
    #[serde(default, deserialize_with = "null_as_default")]
    pub(crate) verbs: Vec<String>,
    /// API groups (`*`: any; `""`: core).
    #[serde(default, deserialize_with = "null_as_default")]
    pub(crate) api_groups: Vec<String>,
    /// Resources, `resource/subresource` for a subresource (`*`: any).
    #[serde(default, deserialize_with = "null_as_default")]
    pub(crate) resources: Vec<String>,
    /// Whether cluster-scoped requests match.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub(crate) cluster_scope: bool,
    /// Namespaces of namespaced requests (`*`: any).
    #[serde(
        default,
        deserialize_with = "null_as_default",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub(crate) namespaces: Vec<String>,
}

/// `NonResourcePolicyRule`.
#[derive(Debug, Clone, Default, PartialEq, conneg_cbor::Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct NonResourcePolicyRule {
    /// Verbs (`*`: any).
    #[serde(default, deserialize_with = "null_as_default")]
    pub(crate) verbs: Vec<String>,
    /// Paths; a trailing `/*` matches a prefix, `*` any path.
    #[serde(
        rename = "nonResourceURLs",
        default,
        deserialize_with = "null_as_default"
    )]
    pub(crate) non_resource_urls: Vec<String>,
}

/// `FlowSchemaStatus` and `PriorityLevelConfigurationStatus`: conditions.
#[derive(Debug, Clone, Default, PartialEq, conneg_cbor::Serialize, Deserialize)]
pub(crate) struct FlowControlStatus {
    /// The conditions.
    #[serde(
        default,
        deserialize_with = "null_as_default",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub(crate) conditions: Vec<FlowControlCondition>,
}

/// `FlowSchemaCondition` and `PriorityLevelConfigurationCondition`.
#[derive(Debug, Clone, Default, PartialEq, conneg_cbor::Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct FlowControlCondition {
    /// `Dangling` (a schema naming a missing level), ...
    #[serde(rename = "type")]
    pub(crate) type_: String,
    /// `True`, `False` or `Unknown`.
    pub(crate) status: String,
    /// When the status last changed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) last_transition_time: Option<crate::meta::Time>,
    /// A machine-readable reason.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub(crate) reason: String,
    /// A human-readable message.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub(crate) message: String,
}

/// `PriorityLevelConfiguration`: a share of the server's concurrency and what happens to the
/// requests past it.
#[crate::kind(version = "v1", resource = PRIORITY_LEVEL_CONFIGURATIONS)]
#[derive(Debug, Clone, Default, PartialEq, conneg_cbor::Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct PriorityLevelConfiguration {
    /// The level's limits.
    #[serde(default, deserialize_with = "null_as_default")]
    pub(crate) spec: PriorityLevelSpec,
    /// Conditions.
    #[serde(default, deserialize_with = "null_as_default")]
    pub(crate) status: FlowControlStatus,
}

/// `PriorityLevelConfigurationSpec`.
#[derive(Debug, Clone, Default, PartialEq, conneg_cbor::Serialize, Deserialize)]
pub(crate) struct PriorityLevelSpec {
    /// `Exempt` or `Limited`.
    #[serde(rename = "type", default, deserialize_with = "null_as_default")]
    pub(crate) type_: String,
    /// For `Limited`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) limited: Option<LimitedPriorityLevel>,
    /// For `Exempt`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) exempt: Option<ExemptPriorityLevel>,
}

/// `LimitedPriorityLevelConfiguration`.
#[derive(Debug, Clone, Default, PartialEq, conneg_cbor::Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct LimitedPriorityLevel {
    /// This level's part of the server's concurrency, against the sum over all levels
    /// (default 30).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) nominal_concurrency_shares: Option<i32>,
    /// What happens to requests that cannot run now.
    #[serde(default, deserialize_with = "null_as_default")]
    pub(crate) limit_response: LimitResponse,
    /// The part of the level's seats other levels may borrow (recorded, not applied here).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) lendable_percent: Option<i32>,
    /// How much more this level may borrow (recorded, not applied here).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) borrowing_limit_percent: Option<i32>,
}

/// `ExemptPriorityLevelConfiguration`.
#[derive(Debug, Clone, Default, PartialEq, conneg_cbor::Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ExemptPriorityLevel {
    /// Shares (0 by default).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) nominal_concurrency_shares: Option<i32>,
    /// Lendable part (0 by default).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) lendable_percent: Option<i32>,
}

/// `LimitResponse`.
#[derive(Debug, Clone, Default, PartialEq, conneg_cbor::Serialize, Deserialize)]
pub(crate) struct LimitResponse {
    /// `Queue` or `Reject`.
    #[serde(rename = "type", default, deserialize_with = "null_as_default")]
    pub(crate) type_: String,
    /// For `Queue`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) queuing: Option<QueuingConfiguration>,
}

/// `QueuingConfiguration`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, conneg_cbor::Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct QueuingConfiguration {
    /// Queues of the level (default 64).
    #[serde(default)]
    pub(crate) queues: i32,
    /// Queues dealt to each flow, the shortest taken (default 8).
    #[serde(default)]
    pub(crate) hand_size: i32,
    /// Requests one queue may hold (default 50).
    #[serde(default)]
    pub(crate) queue_length_limit: i32,
}
