//! Which [`FlowSchema`] a request falls under, and which flow of it: Kubernetes' rules. The
//! schemas are tried by `matchingPrecedence`, then name; the first whose rules match wins.
//! A rule matches when one of its subjects is the user and one of its resource (or
//! non-resource) rules covers what the request does.

use std::cmp::Ordering;

use super::objects::{
    BY_NAMESPACE, BY_USER, EVERY, FlowSchema, NonResourcePolicyRule, PolicyRulesWithSubjects,
    ResourcePolicyRule, Subject,
};
use crate::auth::{Attributes, UserInfo};

/// The order schemas are tried in: lower `matchingPrecedence` first, ties by name.
pub(crate) fn precedence(a: &FlowSchema, b: &FlowSchema) -> Ordering {
    a.spec
        .matching_precedence
        .cmp(&b.spec.matching_precedence)
        .then_with(|| a.metadata.name.cmp(&b.metadata.name))
}

/// Whether `schema` matches the request of `user` doing `attrs`.
pub(crate) fn matches(schema: &FlowSchema, user: &UserInfo, attrs: &Attributes) -> bool {
    schema
        .spec
        .rules
        .iter()
        .any(|r| rule_matches(r, user, attrs))
}

fn rule_matches(rule: &PolicyRulesWithSubjects, user: &UserInfo, attrs: &Attributes) -> bool {
    rule.subjects.iter().any(|s| subject_matches(s, user))
        && if attrs.resource_request {
            rule.resource_rules
                .iter()
                .any(|r| resource_matches(r, attrs))
        } else {
            rule.non_resource_rules
                .iter()
                .any(|r| non_resource_matches(r, attrs))
        }
}

fn subject_matches(subject: &Subject, user: &UserInfo) -> bool {
    match subject.kind.as_str() {
        "User" => subject
            .user
            .as_ref()
            .is_some_and(|u| u.name == EVERY || u.name == user.name),
        "Group" => subject
            .group
            .as_ref()
            .is_some_and(|g| g.name == EVERY || user.groups.contains(&g.name)),
        "ServiceAccount" => subject.service_account.as_ref().is_some_and(|sa| {
            let Some(rest) = user.name.strip_prefix("system:serviceaccount:") else {
                return false;
            };
            let Some((ns, name)) = rest.split_once(':') else {
                return false;
            };
            ns == sa.namespace && (sa.name == EVERY || sa.name == name)
        }),
        _ => false,
    }
}

fn has(list: &[String], value: &str) -> bool {
    list.iter().any(|v| v == EVERY || v == value)
}

fn resource_matches(rule: &ResourcePolicyRule, attrs: &Attributes) -> bool {
    let resource_ok = if attrs.subresource.is_empty() {
        has(&rule.resources, &attrs.resource)
    } else {
        rule.resources.iter().any(|r| {
            r == EVERY
                || r.split_once('/')
                    .is_some_and(|(res, sub)| res == attrs.resource && sub == attrs.subresource)
        })
    };
    let scope_ok = if attrs.namespace.is_empty() {
        rule.cluster_scope
    } else {
        has(&rule.namespaces, &attrs.namespace)
    };
    has(&rule.verbs, &attrs.verb)
        && has(&rule.api_groups, &attrs.api_group)
        && resource_ok
        && scope_ok
}

fn non_resource_matches(rule: &NonResourcePolicyRule, attrs: &Attributes) -> bool {
    has(&rule.verbs, &attrs.verb)
        && rule.non_resource_urls.iter().any(|u| {
            u == EVERY
                || *u == attrs.path
                || u.strip_suffix("/*").is_some_and(|prefix| {
                    attrs.path == prefix
                        || attrs
                            .path
                            .strip_prefix(prefix)
                            .is_some_and(|rest| rest.starts_with('/'))
                })
        })
}

/// The flow within `schema` of the request: the user name (`ByUser`), the namespace
/// (`ByNamespace`) or one flow for all.
pub(crate) fn distinguisher<'a>(
    schema: &FlowSchema,
    user: &'a UserInfo,
    attrs: &'a Attributes,
) -> &'a str {
    match schema
        .spec
        .distinguisher_method
        .as_ref()
        .map(|d| d.type_.as_str())
    {
        Some(BY_USER) => &user.name,
        Some(BY_NAMESPACE) => &attrs.namespace,
        _ => "",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::flowcontrol::bootstrap;
    use http::Method;

    fn user(name: &str, groups: &[&str]) -> UserInfo {
        UserInfo {
            name: name.into(),
            uid: String::new(),
            groups: groups.iter().map(|g| (*g).to_owned()).collect(),
        }
    }

    /// The name of the first matching schema, tried in precedence order.
    fn first(schemas: &mut [FlowSchema], u: &UserInfo, method: Method, path: &str) -> String {
        schemas.sort_by(precedence);
        let attrs = Attributes::from_request(&method, path, None);
        schemas
            .iter()
            .find(|s| matches(s, u, &attrs))
            .map(|s| s.metadata.name.clone())
            .unwrap_or_default()
    }

    fn builtin() -> Vec<FlowSchema> {
        let mut v = bootstrap::mandatory_flow_schemas();
        v.extend(bootstrap::suggested_flow_schemas());
        v
    }

    #[test]
    fn built_in_schemas_classify_as_kubernetes() {
        let mut s = builtin();
        let flunders = "/apis/wardle.example.com/v1beta1/namespaces/default/flunders";
        let alice = user("alice", &["system:authenticated"]);
        assert_eq!(
            first(&mut s, &alice, Method::GET, flunders),
            "global-default"
        );
        let admin = user("admin", &["system:masters", "system:authenticated"]);
        assert_eq!(first(&mut s, &admin, Method::GET, flunders), "exempt");
        let anon = UserInfo::anonymous();
        assert_eq!(first(&mut s, &anon, Method::GET, "/readyz"), "probes");
        assert_eq!(first(&mut s, &anon, Method::GET, "/apis"), "global-default");
        let sa = user(
            "system:serviceaccount:kube-system:foo",
            &["system:serviceaccounts", "system:authenticated"],
        );
        assert_eq!(
            first(
                &mut s,
                &sa,
                Method::PUT,
                "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/x"
            ),
            "system-leader-election"
        );
        assert_eq!(
            first(&mut s, &sa, Method::GET, flunders),
            "kube-system-service-accounts"
        );
        let other_sa = user(
            "system:serviceaccount:team:bot",
            &["system:serviceaccounts", "system:authenticated"],
        );
        assert_eq!(
            first(&mut s, &other_sa, Method::GET, flunders),
            "service-accounts"
        );
        let node = user("system:node:n1", &["system:nodes", "system:authenticated"]);
        assert_eq!(
            first(&mut s, &node, Method::PUT, "/api/v1/nodes/n1/status"),
            "system-node-high"
        );
        assert_eq!(first(&mut s, &node, Method::GET, flunders), "system-nodes");
        // Someone in no group at all falls through every schema.
        assert_eq!(first(&mut s, &user("x", &[]), Method::GET, flunders), "");
    }

    #[test]
    fn precedence_then_name_decides() {
        let mut s = builtin();
        let alice = user("alice", &["system:authenticated"]);
        let path = "/apis/wardle.example.com/v1beta1/namespaces/default/flunders";
        // A schema for alice below global-default's precedence wins...
        let mut mine = bootstrap::mandatory_flow_schemas().remove(1);
        mine.metadata.name = "zz-alice".into();
        mine.spec.matching_precedence = 1000;
        mine.spec.rules[0].subjects = vec![Subject {
            kind: "User".into(),
            user: Some(crate::flowcontrol::objects::Named {
                name: "alice".into(),
            }),
            ..Subject::default()
        }];
        s.push(mine.clone());
        assert_eq!(first(&mut s, &alice, Method::GET, path), "zz-alice");
        // ... at equal precedence the smaller name wins ...
        let mut twin = mine.clone();
        twin.metadata.name = "aa-alice".into();
        s.push(twin);
        assert_eq!(first(&mut s, &alice, Method::GET, path), "aa-alice");
        // ... and above global-default's it never matches first.
        for x in &mut s {
            if x.metadata.name.ends_with("-alice") {
                x.spec.matching_precedence = 9950;
            }
        }
        assert_eq!(first(&mut s, &alice, Method::GET, path), "global-default");
    }

    #[test]
    fn rules_read_scope_subresources_and_path_prefixes() {
        let rule = resource_rule_for(&["nodes/status"], &[], true);
        let attrs = Attributes::from_request(&Method::PUT, "/api/v1/nodes/n1/status", None);
        assert!(resource_matches(&rule, &attrs));
        let attrs = Attributes::from_request(&Method::PUT, "/api/v1/nodes/n1", None);
        assert!(
            !resource_matches(&rule, &attrs),
            "the object is not its subresource"
        );
        let ns_rule = resource_rule_for(&[EVERY], &["kube-system"], false);
        let attrs = Attributes::from_request(&Method::GET, "/api/v1/namespaces/default/pods", None);
        assert!(!resource_matches(&ns_rule, &attrs));
        let attrs = Attributes::from_request(&Method::GET, "/api/v1/nodes", None);
        assert!(
            !resource_matches(&ns_rule, &attrs),
            "cluster scope not asked for"
        );
        let nr = NonResourcePolicyRule {
            verbs: vec!["get".into()],
            non_resource_urls: vec!["/openapi/*".into()],
        };
        for (path, want) in [
            ("/openapi", true),
            ("/openapi/v3", true),
            ("/openapiX", false),
        ] {
            let attrs = Attributes::from_request(&Method::GET, path, None);
            assert_eq!(non_resource_matches(&nr, &attrs), want, "{path}");
        }
    }

    fn resource_rule_for(
        resources: &[&str],
        namespaces: &[&str],
        cluster: bool,
    ) -> ResourcePolicyRule {
        ResourcePolicyRule {
            verbs: vec![EVERY.into()],
            api_groups: vec![EVERY.into()],
            resources: resources.iter().map(|r| (*r).to_owned()).collect(),
            cluster_scope: cluster,
            namespaces: namespaces.iter().map(|r| (*r).to_owned()).collect(),
        }
    }
}
