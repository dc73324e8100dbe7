//! The configuration a server starts with, as Kubernetes ships it: the mandatory objects
//! (`exempt` and `catch-all`, always in force) and the suggested ones (`system`,
//! `node-high`, `leader-election`, `workload-high`, `workload-low`, `global-default` and
//! their schemas, `probes` for the health paths). Shares, queues, hand sizes and queue
//! lengths are Kubernetes' (`flowcontrol.apiserver.k8s.io/v1`).

use super::objects::{
    BY_NAMESPACE, BY_USER, EVERY, EXEMPT, ExemptPriorityLevel, FlowDistinguisherMethod, FlowSchema,
    FlowSchemaSpec, LIMITED, LimitResponse, LimitedPriorityLevel, Named, NonResourcePolicyRule,
    PolicyRulesWithSubjects, PriorityLevelConfiguration, PriorityLevelReference, PriorityLevelSpec,
    QUEUE, QueuingConfiguration, REJECT, ResourcePolicyRule, ServiceAccountSubject, Subject,
};

/// The group of every authenticated user.
pub(crate) const AUTHENTICATED: &str = "system:authenticated";
/// The group of the anonymous user.
pub(crate) const UNAUTHENTICATED: &str = "system:unauthenticated";
const MASTERS: &str = "system:masters";
const NODES: &str = "system:nodes";
const SERVICE_ACCOUNTS: &str = "system:serviceaccounts";
const CONTROLLER_MANAGER: &str = "system:kube-controller-manager";
const SCHEDULER: &str = "system:kube-scheduler";
const KUBE_SYSTEM: &str = "kube-system";

fn exempt_level(name: &str) -> PriorityLevelConfiguration {
    let mut pl = PriorityLevelConfiguration::default();
    pl.metadata.name = name.to_owned();
    pl.spec = PriorityLevelSpec {
        type_: EXEMPT.to_owned(),
        limited: None,
        exempt: Some(ExemptPriorityLevel {
            nominal_concurrency_shares: Some(0),
            lendable_percent: Some(0),
        }),
    };
    pl
}

/// A limited level: `shares` of the server's seats, `lendable` percent of them lendable,
/// `queuing` (queues, hand size, queue length) or rejection past them.
fn limited_level(
    name: &str,
    shares: i32,
    lendable: i32,
    queuing: Option<(i32, i32, i32)>,
) -> PriorityLevelConfiguration {
    let mut pl = PriorityLevelConfiguration::default();
    pl.metadata.name = name.to_owned();
    let limit_response = match queuing {
        Some((queues, hand_size, queue_length_limit)) => LimitResponse {
            type_: QUEUE.to_owned(),
            queuing: Some(QueuingConfiguration {
                queues,
                hand_size,
                queue_length_limit,
            }),
        },
        None => LimitResponse {
            type_: REJECT.to_owned(),
            queuing: None,
        },
    };
    pl.spec = PriorityLevelSpec {
        type_: LIMITED.to_owned(),
        limited: Some(LimitedPriorityLevel {
            nominal_concurrency_shares: Some(shares),
            limit_response,
            lendable_percent: Some(lendable),
            borrowing_limit_percent: None,
        }),
        exempt: None,
    };
    pl
}

fn users(names: &[&str]) -> Vec<Subject> {
    names
        .iter()
        .map(|n| Subject {
            kind: "User".into(),
            user: Some(Named {
                name: (*n).to_owned(),
            }),
            ..Subject::default()
        })
        .collect()
}

fn groups(names: &[&str]) -> Vec<Subject> {
    names
        .iter()
        .map(|n| Subject {
            kind: "Group".into(),
            group: Some(Named {
                name: (*n).to_owned(),
            }),
            ..Subject::default()
        })
        .collect()
}

fn kube_system_service_account(name: &str) -> Subject {
    Subject {
        kind: "ServiceAccount".into(),
        service_account: Some(ServiceAccountSubject {
            namespace: KUBE_SYSTEM.to_owned(),
            name: name.to_owned(),
        }),
        ..Subject::default()
    }
}

fn strings(v: &[&str]) -> Vec<String> {
    v.iter().map(|s| (*s).to_owned()).collect()
}

fn resource_rule(
    verbs: &[&str],
    groups: &[&str],
    resources: &[&str],
    namespaces: &[&str],
    cluster_scope: bool,
) -> ResourcePolicyRule {
    ResourcePolicyRule {
        verbs: strings(verbs),
        api_groups: strings(groups),
        resources: strings(resources),
        cluster_scope,
        namespaces: strings(namespaces),
    }
}

/// Every request of `subjects`, resource or not.
fn everything(subjects: Vec<Subject>) -> PolicyRulesWithSubjects {
    PolicyRulesWithSubjects {
        subjects,
        resource_rules: vec![resource_rule(&[EVERY], &[EVERY], &[EVERY], &[EVERY], true)],
        non_resource_rules: vec![NonResourcePolicyRule {
            verbs: strings(&[EVERY]),
            non_resource_urls: strings(&[EVERY]),
        }],
    }
}

fn schema(
    name: &str,
    level: &str,
    precedence: i32,
    distinguisher: Option<&str>,
    rules: Vec<PolicyRulesWithSubjects>,
) -> FlowSchema {
    let mut fs = FlowSchema::default();
    fs.metadata.name = name.to_owned();
    fs.spec = FlowSchemaSpec {
        priority_level_configuration: PriorityLevelReference {
            name: level.to_owned(),
        },
        matching_precedence: precedence,
        distinguisher_method: distinguisher.map(|d| FlowDistinguisherMethod {
            type_: d.to_owned(),
        }),
        rules,
    };
    fs
}

/// The mandatory priority levels: `exempt` and `catch-all` (5 shares, rejects past them).
pub(crate) fn mandatory_priority_levels() -> Vec<PriorityLevelConfiguration> {
    vec![
        exempt_level("exempt"),
        limited_level("catch-all", 5, 0, None),
    ]
}

/// The mandatory flow schemas: `exempt` (group `system:masters`) and `catch-all` (everyone).
pub(crate) fn mandatory_flow_schemas() -> Vec<FlowSchema> {
    vec![
        schema(
            "exempt",
            "exempt",
            1,
            None,
            vec![everything(groups(&[MASTERS]))],
        ),
        schema(
            "catch-all",
            "catch-all",
            10000,
            Some(BY_USER),
            vec![everything(groups(&[UNAUTHENTICATED, AUTHENTICATED]))],
        ),
    ]
}

/// The suggested priority levels, created when missing.
pub(crate) fn suggested_priority_levels() -> Vec<PriorityLevelConfiguration> {
    vec![
        limited_level("system", 30, 33, Some((64, 6, 50))),
        limited_level("node-high", 40, 25, Some((64, 6, 50))),
        limited_level("leader-election", 10, 0, Some((16, 4, 50))),
        limited_level("workload-high", 40, 50, Some((128, 6, 50))),
        limited_level("workload-low", 100, 90, Some((128, 6, 50))),
        limited_level("global-default", 20, 50, Some((128, 6, 50))),
    ]
}

/// The suggested flow schemas, created when missing.
pub(crate) fn suggested_flow_schemas() -> Vec<FlowSchema> {
    let leader_subjects = {
        let mut s = users(&[CONTROLLER_MANAGER, SCHEDULER]);
        s.push(kube_system_service_account(EVERY));
        s
    };
    let get_create_update = &["get", "create", "update"];
    vec![
        schema(
            "probes",
            "exempt",
            2,
            None,
            vec![PolicyRulesWithSubjects {
                subjects: groups(&[UNAUTHENTICATED, AUTHENTICATED]),
                resource_rules: Vec::new(),
                non_resource_rules: vec![NonResourcePolicyRule {
                    verbs: strings(&["get"]),
                    non_resource_urls: strings(&["/healthz", "/readyz", "/livez"]),
                }],
            }],
        ),
        schema(
            "system-leader-election",
            "leader-election",
            100,
            Some(BY_USER),
            vec![PolicyRulesWithSubjects {
                subjects: leader_subjects,
                resource_rules: vec![
                    resource_rule(
                        get_create_update,
                        &[""],
                        &["endpoints", "configmaps"],
                        &[KUBE_SYSTEM],
                        false,
                    ),
                    resource_rule(
                        get_create_update,
                        &["coordination.k8s.io"],
                        &["leases"],
                        &[KUBE_SYSTEM],
                        false,
                    ),
                ],
                non_resource_rules: Vec::new(),
            }],
        ),
        schema(
            "endpoint-controller",
            "workload-high",
            150,
            Some(BY_USER),
            vec![PolicyRulesWithSubjects {
                subjects: {
                    let mut s = users(&[CONTROLLER_MANAGER]);
                    s.push(kube_system_service_account("endpoint-controller"));
                    s
                },
                resource_rules: vec![resource_rule(
                    &["get", "create", "update"],
                    &[""],
                    &["endpoints"],
                    &[EVERY],
                    false,
                )],
                non_resource_rules: Vec::new(),
            }],
        ),
        schema(
            "workload-leader-election",
            "leader-election",
            200,
            Some(BY_USER),
            vec![PolicyRulesWithSubjects {
                subjects: vec![kube_system_service_account(EVERY)],
                resource_rules: vec![
                    resource_rule(
                        get_create_update,
                        &[""],
                        &["endpoints", "configmaps"],
                        &[EVERY],
                        false,
                    ),
                    resource_rule(
                        get_create_update,
                        &["coordination.k8s.io"],
                        &["leases"],
                        &[EVERY],
                        false,
                    ),
                ],
                non_resource_rules: Vec::new(),
            }],
        ),
        schema(
            "system-node-high",
            "node-high",
            400,
            Some(BY_USER),
            vec![PolicyRulesWithSubjects {
                subjects: groups(&[NODES]),
                resource_rules: vec![
                    resource_rule(&[EVERY], &[""], &["nodes", "nodes/status"], &[], true),
                    resource_rule(
                        &[EVERY],
                        &["coordination.k8s.io"],
                        &["leases"],
                        &[EVERY],
                        false,
                    ),
                ],
                non_resource_rules: Vec::new(),
            }],
        ),
        schema(
            "system-nodes",
            "system",
            500,
            Some(BY_USER),
            vec![everything(groups(&[NODES]))],
        ),
        schema(
            "kube-controller-manager",
            "workload-high",
            800,
            Some(BY_NAMESPACE),
            vec![everything(users(&[CONTROLLER_MANAGER]))],
        ),
        schema(
            "kube-scheduler",
            "workload-high",
            800,
            Some(BY_NAMESPACE),
            vec![everything(users(&[SCHEDULER]))],
        ),
        schema(
            "kube-system-service-accounts",
            "workload-high",
            900,
            Some(BY_NAMESPACE),
            vec![everything(vec![kube_system_service_account(EVERY)])],
        ),
        schema(
            "service-accounts",
            "workload-low",
            9000,
            Some(BY_USER),
            vec![everything(groups(&[SERVICE_ACCOUNTS]))],
        ),
        schema(
            "global-default",
            "global-default",
            9900,
            Some(BY_USER),
            vec![everything(groups(&[UNAUTHENTICATED, AUTHENTICATED]))],
        ),
    ]
}
