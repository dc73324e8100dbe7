//! `apiextensions.k8s.io/v1` `CustomResourceDefinition` and its parts, written as Kubernetes'
//! v1 JSON writes them.
//!
//! Like the other types of this crate, every field reads `null` as empty. Fields Kubernetes
//! writes even when empty (no `omitempty` in its Go tags) are written here too: `spec.group`,
//! `names.plural`, `names.kind`, `served`, `storage`, `jsonPath`, `status.acceptedNames`. The
//! lists without `omitempty` (`spec.versions`, `status.conditions`, `status.storedVersions`,
//! `conversionReviewVersions`) are written as `null` when empty, as Go writes a nil slice: the
//! create response has `"conditions": null`.
//!
//! A version's `openAPIV3Schema` is a [`serde_json::Value`], kept as it was sent (unknown
//! keywords included); the structural-schema checks read it from there.

use serde::{Deserialize, Serialize, Serializer};
use serde_json::Value;

use crate::meta::{Time, null_as_default};
use crate::resource::{ResourceInfo, VERBS};

/// The API group, `apiextensions.k8s.io`.
pub const GROUP: &str = "apiextensions.k8s.io";

/// `customresourcedefinitions.apiextensions.k8s.io` (cluster-scoped, with a status
/// subresource).
pub const CUSTOM_RESOURCE_DEFINITIONS: ResourceInfo = ResourceInfo {
    group: GROUP,
    resource: "customresourcedefinitions",
    singular: "customresourcedefinition",
    kind: KIND,
    list_kind: "CustomResourceDefinitionList",
    namespaced: false,
    verbs: VERBS,
    short_names: &["crd", "crds"],
    categories: &["api-extensions"],
    status_subresource: true,
    scale_subresource: false,
};
/// The kind, `CustomResourceDefinition`.
pub const KIND: &str = "CustomResourceDefinition";

/// The `spec.scope` of a definition whose objects live in namespaces.
pub const NAMESPACE_SCOPED: &str = "Namespaced";
/// The `spec.scope` of a definition whose objects are cluster-wide.
pub const CLUSTER_SCOPED: &str = "Cluster";

/// `conversion.strategy: None`: only `apiVersion` changes between versions.
pub const NONE_CONVERTER: &str = "None";
/// `conversion.strategy: Webhook`: a ConversionReview webhook converts.
pub const WEBHOOK_CONVERTER: &str = "Webhook";

/// Condition type `Established`: the API is served (and in discovery).
pub const ESTABLISHED: &str = "Established";
/// Condition type `NamesAccepted`: the names do not conflict with other CRDs of the group.
pub const NAMES_ACCEPTED: &str = "NamesAccepted";
/// Condition type `NonStructuralSchema` (legacy CRDs only).
pub const NON_STRUCTURAL_SCHEMA: &str = "NonStructuralSchema";
/// Condition type `Terminating`: deletion has begun.
pub const TERMINATING: &str = "Terminating";
/// Condition type `KubernetesAPIApprovalPolicyConformant` (protected groups).
pub const KUBERNETES_API_APPROVAL_POLICY_CONFORMANT: &str = "KubernetesAPIApprovalPolicyConformant";

/// Condition status `True`.
pub const CONDITION_TRUE: &str = "True";
/// Condition status `False`.
pub const CONDITION_FALSE: &str = "False";
/// Condition status `Unknown`.
pub const CONDITION_UNKNOWN: &str = "Unknown";

/// The annotation a CRD in a protected group (`*.k8s.io`, `*.kubernetes.io`) must carry.
pub const API_APPROVED_ANNOTATION: &str = "api-approved.kubernetes.io";

/// The finalizer the CRD's deletion waits on while its custom resources are removed.
pub const CLEANUP_FINALIZER: &str = "customresourcecleanup.apiextensions.k8s.io";

/// A list Go would write as `null` when nil: empty is written as `null`.
fn null_if_empty<T: Serialize, S: Serializer>(v: &[T], s: S) -> Result<S::Ok, S::Error> {
    if v.is_empty() {
        s.serialize_none()
    } else {
        s.collect_seq(v)
    }
}

fn is_false(b: &bool) -> bool {
    !*b
}

fn is_zero_i32(n: &i32) -> bool {
    *n == 0
}

fn is_zero_i64(n: &i64) -> bool {
    *n == 0
}

/// `CustomResourceDefinition`: a kind served by this server from its definition, without
/// compiled code.
///
/// ```
/// use conneg_apiserver::apiextensions::types::CustomResourceDefinition;
///
/// let crd: CustomResourceDefinition = serde_json::from_value(serde_json::json!({
///     "apiVersion": "apiextensions.k8s.io/v1",
///     "kind": "CustomResourceDefinition",
///     "metadata": {"name": "crontabs.stable.example.com"},
///     "spec": {
///         "group": "stable.example.com",
///         "names": {"plural": "crontabs", "kind": "CronTab"},
///         "scope": "Namespaced",
///         "versions": [
///             {"name": "v1beta1", "served": true, "storage": false,
///              "schema": {"openAPIV3Schema": {"type": "object"}}},
///             {"name": "v1", "served": true, "storage": true,
///              "schema": {"openAPIV3Schema": {"type": "object"}}}
///         ]
///     }
/// })).unwrap();
/// assert_eq!(crd.storage_version(), Some("v1"));
/// assert_eq!(crd.served_versions().collect::<Vec<_>>(), ["v1beta1", "v1"]);
/// // Status is always written; empty conditions and storedVersions as `null`, as Go does.
/// let status = &serde_json::to_value(&crd).unwrap()["status"];
/// assert_eq!(status, &serde_json::json!({
///     "conditions": null,
///     "acceptedNames": {"plural": "", "kind": ""},
///     "storedVersions": null
/// }));
/// ```
#[crate::kind(
    version = "v1",
    resource = CUSTOM_RESOURCE_DEFINITIONS,
    defaults = set_defaults
)]
#[derive(Debug, Clone, Default, PartialEq, conneg_cbor::Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CustomResourceDefinition {
    /// What the definition asks for.
    #[serde(default, deserialize_with = "null_as_default")]
    pub spec: CustomResourceDefinitionSpec,
    /// What the server made of it (always written).
    #[serde(default, deserialize_with = "null_as_default")]
    pub status: CustomResourceDefinitionStatus,
}

/// `CustomResourceDefinitionSpec`.
#[derive(Debug, Clone, Default, PartialEq, conneg_cbor::Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CustomResourceDefinitionSpec {
    /// The API group of the custom resources (`stable.example.com`).
    #[serde(default, deserialize_with = "null_as_default")]
    pub group: String,
    /// The resource and kind names.
    #[serde(default, deserialize_with = "null_as_default")]
    pub names: CustomResourceDefinitionNames,
    /// `Namespaced` or `Cluster`.
    #[serde(default, deserialize_with = "null_as_default")]
    pub scope: String,
    /// The versions, each with its schema; exactly one is the storage version.
    #[serde(
        default,
        deserialize_with = "null_as_default",
        serialize_with = "null_if_empty"
    )]
    pub versions: Vec<CustomResourceDefinitionVersion>,
    /// How objects are converted between versions (defaulted to `None`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub conversion: Option<CustomResourceConversion>,
    /// Legacy: keep fields the schema does not know. v1 rejects `true` on create.
    #[serde(
        default,
        deserialize_with = "null_as_default",
        skip_serializing_if = "is_false"
    )]
    pub preserve_unknown_fields: bool,
}

/// `CustomResourceDefinitionNames` (in `spec.names` and `status.acceptedNames`).
#[derive(Debug, Clone, Default, PartialEq, Eq, conneg_cbor::Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CustomResourceDefinitionNames {
    /// The resource, in URLs (`crontabs`). Always written.
    #[serde(default, deserialize_with = "null_as_default")]
    pub plural: String,
    /// The singular name (`crontab`, defaulted from the kind).
    #[serde(
        default,
        deserialize_with = "null_as_default",
        skip_serializing_if = "String::is_empty"
    )]
    pub singular: String,
    /// Short names for kubectl (`ct`).
    #[serde(
        default,
        deserialize_with = "null_as_default",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub short_names: Vec<String>,
    /// The kind (`CronTab`). Always written.
    #[serde(default, deserialize_with = "null_as_default")]
    pub kind: String,
    /// The kind of lists (`CronTabList`, defaulted from the kind).
    #[serde(
        default,
        deserialize_with = "null_as_default",
        skip_serializing_if = "String::is_empty"
    )]
    pub list_kind: String,
    /// Categories for kubectl (`all`).
    #[serde(
        default,
        deserialize_with = "null_as_default",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub categories: Vec<String>,
}

/// `CustomResourceDefinitionVersion`.
#[derive(Debug, Clone, Default, PartialEq, conneg_cbor::Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CustomResourceDefinitionVersion {
    /// The version (`v1`), a DNS-1035 label.
    #[serde(default, deserialize_with = "null_as_default")]
    pub name: String,
    /// Whether the version is served over REST.
    #[serde(default, deserialize_with = "null_as_default")]
    pub served: bool,
    /// Whether objects are stored in this version (exactly one is).
    #[serde(default, deserialize_with = "null_as_default")]
    pub storage: bool,
    /// Whether requests to this version get a deprecation warning.
    #[serde(
        default,
        deserialize_with = "null_as_default",
        skip_serializing_if = "is_false"
    )]
    pub deprecated: bool,
    /// The warning text, instead of the default one (only with `deprecated`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deprecation_warning: Option<String>,
    /// The schema of the version's objects.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub schema: Option<CustomResourceValidation>,
    /// The `status` and `scale` subresources.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subresources: Option<CustomResourceSubresources>,
    /// Table columns besides `Name` (with none, an `Age` column).
    #[serde(
        default,
        deserialize_with = "null_as_default",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub additional_printer_columns: Vec<CustomResourceColumnDefinition>,
    /// Fields usable in field selectors besides `metadata.name` and `metadata.namespace`.
    #[serde(
        default,
        deserialize_with = "null_as_default",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub selectable_fields: Vec<SelectableField>,
}

/// `CustomResourceValidation`.
#[derive(Debug, Clone, Default, PartialEq, conneg_cbor::Serialize, Deserialize)]
pub struct CustomResourceValidation {
    /// The OpenAPI v3 schema, as sent (unknown keywords kept).
    #[serde(
        rename = "openAPIV3Schema",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub open_api_v3_schema: Option<Value>,
}

/// `CustomResourceSubresources`.
#[derive(Debug, Clone, Default, PartialEq, Eq, conneg_cbor::Serialize, Deserialize)]
pub struct CustomResourceSubresources {
    /// `status: {}` enables `/status`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<CustomResourceSubresourceStatus>,
    /// `/scale`, with the paths of the replica counts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scale: Option<CustomResourceSubresourceScale>,
}

/// `CustomResourceSubresourceStatus`: `{}`, its presence is what counts.
#[derive(Debug, Clone, Default, PartialEq, Eq, conneg_cbor::Serialize, Deserialize)]
pub struct CustomResourceSubresourceStatus {}

/// `CustomResourceSubresourceScale`.
#[derive(Debug, Clone, Default, PartialEq, Eq, conneg_cbor::Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CustomResourceSubresourceScale {
    /// `.spec.replicas`: where `Scale.spec.replicas` lives, under `.spec`.
    #[serde(default, deserialize_with = "null_as_default")]
    pub spec_replicas_path: String,
    /// `.status.replicas`: where `Scale.status.replicas` lives, under `.status`.
    #[serde(default, deserialize_with = "null_as_default")]
    pub status_replicas_path: String,
    /// Where `Scale.status.selector` (a string) lives, under `.spec` or `.status`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label_selector_path: Option<String>,
}

/// `CustomResourceColumnDefinition`: one Table column.
#[derive(Debug, Clone, Default, PartialEq, Eq, conneg_cbor::Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CustomResourceColumnDefinition {
    /// The header.
    #[serde(default, deserialize_with = "null_as_default")]
    pub name: String,
    /// `integer`, `number`, `string`, `boolean` or `date`.
    #[serde(rename = "type", default, deserialize_with = "null_as_default")]
    pub type_: String,
    /// An OpenAPI format (`int32`, `date-time`, ...).
    #[serde(
        default,
        deserialize_with = "null_as_default",
        skip_serializing_if = "String::is_empty"
    )]
    pub format: String,
    /// The description (default: one naming the path).
    #[serde(
        default,
        deserialize_with = "null_as_default",
        skip_serializing_if = "String::is_empty"
    )]
    pub description: String,
    /// 0 shows the column always; more only in wide output.
    #[serde(
        default,
        deserialize_with = "null_as_default",
        skip_serializing_if = "is_zero_i32"
    )]
    pub priority: i32,
    /// A simple JSONPath evaluated against each object (`.spec.replicas`).
    #[serde(rename = "jsonPath", default, deserialize_with = "null_as_default")]
    pub json_path: String,
}

/// `SelectableField`.
#[derive(Debug, Clone, Default, PartialEq, Eq, conneg_cbor::Serialize, Deserialize)]
pub struct SelectableField {
    /// A dot path to a string, integer or boolean field (`.spec.color`).
    #[serde(rename = "jsonPath", default, deserialize_with = "null_as_default")]
    pub json_path: String,
}

/// `CustomResourceConversion`.
#[derive(Debug, Clone, Default, PartialEq, Eq, conneg_cbor::Serialize, Deserialize)]
pub struct CustomResourceConversion {
    /// `None` or `Webhook`.
    #[serde(default, deserialize_with = "null_as_default")]
    pub strategy: String,
    /// The webhook, with strategy `Webhook`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub webhook: Option<WebhookConversion>,
}

/// `WebhookConversion`.
#[derive(Debug, Clone, Default, PartialEq, Eq, conneg_cbor::Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct WebhookConversion {
    /// How to reach the webhook.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_config: Option<WebhookClientConfig>,
    /// The `ConversionReview` versions the webhook understands, preferred first.
    #[serde(
        default,
        deserialize_with = "null_as_default",
        serialize_with = "null_if_empty"
    )]
    pub conversion_review_versions: Vec<String>,
}

/// `WebhookClientConfig`: exactly one of `url` and `service`.
#[derive(Debug, Clone, Default, PartialEq, Eq, conneg_cbor::Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct WebhookClientConfig {
    /// `https://host[:port][/path]`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// A Service in the cluster.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub service: Option<ServiceReference>,
    /// PEM CA bundle, base64 in JSON; kept here as the base64 text.
    #[serde(
        default,
        deserialize_with = "null_as_default",
        skip_serializing_if = "String::is_empty"
    )]
    pub ca_bundle: String,
}

/// `ServiceReference`.
#[derive(Debug, Clone, Default, PartialEq, Eq, conneg_cbor::Serialize, Deserialize)]
pub struct ServiceReference {
    /// The Service's namespace.
    #[serde(default, deserialize_with = "null_as_default")]
    pub namespace: String,
    /// The Service's name.
    #[serde(default, deserialize_with = "null_as_default")]
    pub name: String,
    /// The URL path.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    /// The port (defaulted to 443).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub port: Option<i32>,
}

/// `CustomResourceDefinitionStatus`.
#[derive(Debug, Clone, Default, PartialEq, conneg_cbor::Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CustomResourceDefinitionStatus {
    /// `NamesAccepted`, `Established`, `Terminating`, ... (`null` when empty).
    #[serde(
        default,
        deserialize_with = "null_as_default",
        serialize_with = "null_if_empty"
    )]
    pub conditions: Vec<CustomResourceDefinitionCondition>,
    /// The names actually served (always written).
    #[serde(default, deserialize_with = "null_as_default")]
    pub accepted_names: CustomResourceDefinitionNames,
    /// Every version objects were ever stored in; shrunk only through `/status`.
    #[serde(
        default,
        deserialize_with = "null_as_default",
        serialize_with = "null_if_empty"
    )]
    pub stored_versions: Vec<String>,
    /// The generation the status describes (behind `CRDObservedGenerationTracking`).
    #[serde(
        default,
        deserialize_with = "null_as_default",
        skip_serializing_if = "is_zero_i64"
    )]
    pub observed_generation: i64,
}

/// `CustomResourceDefinitionCondition`.
#[derive(Debug, Clone, Default, PartialEq, Eq, conneg_cbor::Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CustomResourceDefinitionCondition {
    /// `Established`, `NamesAccepted`, ...
    #[serde(rename = "type", default, deserialize_with = "null_as_default")]
    pub type_: String,
    /// `True`, `False` or `Unknown`.
    #[serde(default, deserialize_with = "null_as_default")]
    pub status: String,
    /// When `status` last changed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_transition_time: Option<Time>,
    /// A CamelCase reason (`NoConflicts`).
    #[serde(
        default,
        deserialize_with = "null_as_default",
        skip_serializing_if = "String::is_empty"
    )]
    pub reason: String,
    /// A human-readable message.
    #[serde(
        default,
        deserialize_with = "null_as_default",
        skip_serializing_if = "String::is_empty"
    )]
    pub message: String,
    /// The generation the condition describes.
    #[serde(
        default,
        deserialize_with = "null_as_default",
        skip_serializing_if = "is_zero_i64"
    )]
    pub observed_generation: i64,
}

impl CustomResourceDefinitionCondition {
    /// A condition without a transition time (set by [`CustomResourceDefinition::set_condition`]).
    pub fn new(type_: &str, status: &str, reason: &str, message: &str) -> Self {
        Self {
            type_: type_.to_owned(),
            status: status.to_owned(),
            reason: reason.to_owned(),
            message: message.to_owned(),
            ..Self::default()
        }
    }
}

impl CustomResourceDefinition {
    /// The version marked `storage: true` (the first, if validation has not yet rejected
    /// several).
    pub fn storage_version(&self) -> Option<&str> {
        self.spec
            .versions
            .iter()
            .find(|v| v.storage)
            .map(|v| v.name.as_str())
    }

    /// The versions marked `served: true`, in spec order.
    pub fn served_versions(&self) -> impl Iterator<Item = &str> {
        self.spec
            .versions
            .iter()
            .filter(|v| v.served)
            .map(|v| v.name.as_str())
    }

    /// The version called `name`.
    pub fn version(&self, name: &str) -> Option<&CustomResourceDefinitionVersion> {
        self.spec.versions.iter().find(|v| v.name == name)
    }

    /// Whether `scope` is `Namespaced`.
    pub fn namespaced(&self) -> bool {
        self.spec.scope == NAMESPACE_SCOPED
    }

    /// The condition of `type_`, if set (`FindCRDCondition`).
    pub fn condition(&self, type_: &str) -> Option<&CustomResourceDefinitionCondition> {
        self.status.conditions.iter().find(|c| c.type_ == type_)
    }

    /// Whether the condition of `type_` is present and `True`.
    pub fn condition_true(&self, type_: &str) -> bool {
        self.condition(type_)
            .is_some_and(|c| c.status == CONDITION_TRUE)
    }

    /// `SetCRDCondition` at `now`: adds the condition, or replaces status, reason and message
    /// of the one of the same type. `lastTransitionTime` becomes `now` only for a new
    /// condition, when `status` changes, or when it was unset.
    ///
    /// ```
    /// use conneg_apiserver::apiextensions::types::*;
    /// use conneg_apiserver::meta::Time;
    ///
    /// let mut crd = CustomResourceDefinition::default();
    /// let cond = |s| CustomResourceDefinitionCondition::new(ESTABLISHED, s, "Installing", "");
    /// crd.set_condition(cond(CONDITION_FALSE), Time::from_unix(10));
    /// crd.set_condition(cond(CONDITION_FALSE), Time::from_unix(20)); // no flip: time kept
    /// assert_eq!(crd.condition(ESTABLISHED).unwrap().last_transition_time, Some(Time::from_unix(10)));
    /// crd.set_condition(cond(CONDITION_TRUE), Time::from_unix(30));
    /// assert_eq!(crd.condition(ESTABLISHED).unwrap().last_transition_time, Some(Time::from_unix(30)));
    /// assert!(crd.condition_true(ESTABLISHED));
    /// ```
    pub fn set_condition(&mut self, mut condition: CustomResourceDefinitionCondition, now: Time) {
        let conditions = &mut self.status.conditions;
        match conditions.iter_mut().find(|c| c.type_ == condition.type_) {
            None => {
                condition.last_transition_time = Some(now);
                conditions.push(condition);
            }
            Some(existing) => {
                if existing.status != condition.status || existing.last_transition_time.is_none() {
                    existing.last_transition_time = Some(now);
                }
                existing.status = condition.status;
                existing.reason = condition.reason;
                existing.message = condition.message;
                existing.observed_generation = condition.observed_generation;
            }
        }
    }

    /// `RemoveCRDCondition`: drops the condition of `type_`.
    pub fn remove_condition(&mut self, type_: &str) {
        self.status.conditions.retain(|c| c.type_ != type_);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn sample() -> Value {
        json!({
            "kind": "CustomResourceDefinition",
            "apiVersion": "apiextensions.k8s.io/v1",
            "metadata": {"name": "crontabs.stable.example.com"},
            "spec": {
                "group": "stable.example.com",
                "names": {"plural": "crontabs", "singular": "crontab", "shortNames": ["ct"],
                          "kind": "CronTab", "listKind": "CronTabList", "categories": ["all"]},
                "scope": "Namespaced",
                "versions": [{
                    "name": "v1", "served": true, "storage": true,
                    "deprecated": true, "deprecationWarning": "old",
                    "schema": {"openAPIV3Schema": {"type": "object", "x-unknown-keyword": [1, {"a": null}],
                               "properties": {"spec": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}}}},
                    "subresources": {"status": {}, "scale": {"specReplicasPath": ".spec.replicas",
                                     "statusReplicasPath": ".status.replicas", "labelSelectorPath": ".status.selector"}},
                    "additionalPrinterColumns": [{"name": "Spec", "type": "string", "format": "byte",
                                                  "description": "d", "priority": 1, "jsonPath": ".spec.cronSpec"}],
                    "selectableFields": [{"jsonPath": ".spec.color"}]
                }],
                "conversion": {"strategy": "Webhook", "webhook": {
                    "clientConfig": {"service": {"namespace": "ns", "name": "svc", "path": "/convert", "port": 8443},
                                     "caBundle": "Zm9v"},
                    "conversionReviewVersions": ["v1", "v1beta1"]}}
            },
            "status": {
                "conditions": [{"type": "Established", "status": "True",
                                "lastTransitionTime": "2024-01-02T03:04:05Z", "reason": "InitialNamesAccepted",
                                "message": "the initial names have been accepted"}],
                "acceptedNames": {"plural": "crontabs", "kind": "CronTab"},
                "storedVersions": ["v1"]
            }
        })
    }

    #[test]
    fn round_trip_keeps_every_field() {
        let v = sample();
        let crd: CustomResourceDefinition = serde_json::from_value(v.clone()).unwrap();
        assert_eq!(serde_json::to_value(&crd).unwrap(), v);
        let schema = crd.spec.versions[0].schema.as_ref().unwrap();
        assert_eq!(
            schema.open_api_v3_schema.as_ref().unwrap()["x-unknown-keyword"],
            json!([1, {"a": null}])
        );
        assert_eq!(
            crd.spec.versions[0].additional_printer_columns[0].priority,
            1
        );
    }

    #[test]
    fn cbor_encodes_the_same_object() {
        let crd: CustomResourceDefinition = serde_json::from_value(sample()).unwrap();
        let bytes = conneg_cbor::to_vec(&crd).unwrap();
        let back = conneg_cbor::value_from_slice(&bytes).unwrap();
        assert_eq!(back, sample());
    }

    #[test]
    fn create_response_status_shape() {
        let mut crd = CustomResourceDefinition::default();
        crd.status.stored_versions = vec!["v1".into()];
        assert_eq!(
            serde_json::to_value(&crd).unwrap(),
            json!({"metadata": {},
                   "spec": {"group": "", "names": {"plural": "", "kind": ""}, "scope": "", "versions": null},
                   "status": {"conditions": null, "acceptedNames": {"plural": "", "kind": ""},
                              "storedVersions": ["v1"]}})
        );
    }

    #[test]
    fn nulls_read_as_empty() {
        let crd: CustomResourceDefinition = serde_json::from_value(json!({
            "metadata": null, "spec": {"group": null, "names": null, "versions": null, "conversion": null},
            "status": {"conditions": null, "storedVersions": null, "acceptedNames": null}
        }))
        .unwrap();
        assert_eq!(crd, CustomResourceDefinition::default());
    }

    #[test]
    fn versions_and_conditions() {
        let mut crd: CustomResourceDefinition = serde_json::from_value(sample()).unwrap();
        assert_eq!(crd.storage_version(), Some("v1"));
        assert!(crd.namespaced());
        assert!(crd.version("v1").is_some());
        assert!(crd.version("v2").is_none());
        crd.spec.versions[0].served = false;
        assert_eq!(crd.served_versions().count(), 0);
        crd.spec.versions[0].storage = false;
        assert_eq!(crd.storage_version(), None);

        assert!(crd.condition_true(ESTABLISHED));
        let t0 = crd.condition(ESTABLISHED).unwrap().last_transition_time;
        crd.set_condition(
            CustomResourceDefinitionCondition::new(ESTABLISHED, CONDITION_TRUE, "R", "m"),
            Time::from_unix(99),
        );
        let c = crd.condition(ESTABLISHED).unwrap();
        assert_eq!((c.reason.as_str(), c.message.as_str()), ("R", "m"));
        assert_eq!(c.last_transition_time, t0);
        crd.set_condition(
            CustomResourceDefinitionCondition::new(ESTABLISHED, CONDITION_FALSE, "", ""),
            Time::from_unix(99),
        );
        assert_eq!(
            crd.condition(ESTABLISHED).unwrap().last_transition_time,
            Some(Time::from_unix(99))
        );
        crd.remove_condition(ESTABLISHED);
        assert!(crd.condition(ESTABLISHED).is_none());
        assert!(!crd.condition_true(ESTABLISHED));
    }
}

/// v1 defaulting, run on every write before validation (`SetDefaults_CustomResourceDefinition`): `singular` is the kind in lower case,
/// `listKind` the kind plus `List`, `conversion` is `{strategy: None}`, a webhook Service's
/// port is 443, and `status.storedVersions` starts with the storage version; with the Service-port default of the webhook.
///
/// ```
/// use conneg_apiserver::apiextensions::types::*;
///
/// let mut crd = CustomResourceDefinition::default();
/// crd.spec.names.kind = "CronTab".into();
/// crd.spec.versions.push(CustomResourceDefinitionVersion {
///     name: "v1".into(), served: true, storage: true, ..Default::default()
/// });
/// set_defaults(&mut crd);
/// assert_eq!(crd.spec.names.singular, "crontab");
/// assert_eq!(crd.spec.names.list_kind, "CronTabList");
/// assert_eq!(crd.spec.conversion.unwrap().strategy, "None");
/// assert_eq!(crd.status.stored_versions, ["v1"]);
/// ```
pub fn set_defaults(crd: &mut CustomResourceDefinition) {
    let names = &mut crd.spec.names;
    if names.singular.is_empty() {
        names.singular = names.kind.to_lowercase();
    }
    if names.list_kind.is_empty() && !names.kind.is_empty() {
        names.list_kind = format!("{}List", names.kind);
    }
    let conversion = crd
        .spec
        .conversion
        .get_or_insert_with(|| CustomResourceConversion {
            strategy: NONE_CONVERTER.to_owned(),
            webhook: None,
        });
    if let Some(service) = conversion
        .webhook
        .as_mut()
        .and_then(|w| w.client_config.as_mut())
        .and_then(|c| c.service.as_mut())
    {
        service.port.get_or_insert(443);
    }
    if crd.status.stored_versions.is_empty()
        && let Some(v) = crd.spec.versions.iter().find(|v| v.storage)
    {
        crd.status.stored_versions.push(v.name.clone());
    }
}

#[cfg(test)]
mod defaulting {
    use super::*;

    #[test]
    fn fills_only_what_is_missing() {
        let mut crd = CustomResourceDefinition::default();
        set_defaults(&mut crd);
        // No kind: singular stays empty (lower case of ""), listKind is not made up.
        assert_eq!(crd.spec.names.singular, "");
        assert_eq!(crd.spec.names.list_kind, "");
        assert!(crd.status.stored_versions.is_empty());
        assert_eq!(crd.spec.conversion.as_ref().unwrap().strategy, "None");

        let mut crd = CustomResourceDefinition::default();
        crd.spec.names = CustomResourceDefinitionNames {
            kind: "CronTab".into(),
            singular: "ct1".into(),
            list_kind: "Tabs".into(),
            ..Default::default()
        };
        crd.spec.conversion = Some(CustomResourceConversion {
            strategy: "Webhook".into(),
            webhook: Some(WebhookConversion {
                client_config: Some(WebhookClientConfig {
                    service: Some(ServiceReference::default()),
                    ..Default::default()
                }),
                conversion_review_versions: vec![],
            }),
        });
        for (name, storage) in [("v1", false), ("v2", true)] {
            crd.spec.versions.push(CustomResourceDefinitionVersion {
                name: name.into(),
                storage,
                ..Default::default()
            });
        }
        crd.status.stored_versions = vec!["v0".into()];
        set_defaults(&mut crd);
        assert_eq!(crd.spec.names.singular, "ct1");
        assert_eq!(crd.spec.names.list_kind, "Tabs");
        let conversion = crd.spec.conversion.as_ref().unwrap();
        assert_eq!(conversion.strategy, "Webhook");
        let port = conversion.webhook.as_ref().unwrap().client_config.as_ref();
        assert_eq!(port.unwrap().service.as_ref().unwrap().port, Some(443));
        // storedVersions is seeded only when empty.
        assert_eq!(crd.status.stored_versions, ["v0"]);
        crd.status.stored_versions.clear();
        set_defaults(&mut crd);
        assert_eq!(crd.status.stored_versions, ["v2"]);
    }
}
