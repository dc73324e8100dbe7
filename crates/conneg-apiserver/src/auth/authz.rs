//! Authorization: may this user do this? `--authorization-mode` with `AlwaysAllow`,
//! `AlwaysDeny`, `ABAC` (`--authorization-policy-file`, Kubernetes' format) and `Webhook`
//! (a `SubjectAccessReview`, [`super::AccessWebhook`]), tried in
//! order; the group `system:masters` is always allowed, and so are the always-allowed paths.

use serde_json::Value;

use super::{Attributes, UserInfo};

/// One authorization mode.
#[derive(Clone, Debug)]
pub enum Mode {
    /// Allows everything.
    AlwaysAllow,
    /// Denies everything.
    AlwaysDeny,
    /// Allows what one of the policies allows; has no opinion otherwise.
    Abac(Vec<Policy>),
    /// Asks a `SubjectAccessReview` webhook (allowed, denied, or no opinion).
    Webhook(std::sync::Arc<super::AccessWebhook>),
}

/// An authorizer's answer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Decision {
    /// Allowed.
    Allow,
    /// Denied, with a reason (may be empty).
    Deny(String),
}

/// The modes in order, and the paths every user may read.
#[derive(Clone, Debug)]
pub struct Authorizer {
    modes: Vec<Mode>,
    always_allow_paths: Vec<String>,
}

impl Authorizer {
    /// The modes, tried in order (the first that allows or denies decides; none: denied), with
    /// Kubernetes' default always-allowed paths (`/healthz`, `/readyz`, `/livez`).
    pub fn new(modes: Vec<Mode>) -> Authorizer {
        Authorizer {
            modes,
            always_allow_paths: ["/healthz", "/readyz", "/livez"].map(String::from).to_vec(),
        }
    }

    /// Replaces the always-allowed paths (`--authorization-always-allow-paths`; a trailing `*`
    /// matches a prefix).
    pub fn always_allow_paths(mut self, paths: Vec<String>) -> Authorizer {
        self.always_allow_paths = paths;
        self
    }

    /// Decides a request.
    pub async fn authorize(&self, user: &UserInfo, a: &Attributes) -> Decision {
        if user.groups.iter().any(|g| g == "system:masters") {
            return Decision::Allow;
        }
        if !a.resource_request
            && self
                .always_allow_paths
                .iter()
                .any(|p| path_matches(p, &a.path))
        {
            return Decision::Allow;
        }
        for mode in &self.modes {
            match mode {
                Mode::AlwaysAllow => return Decision::Allow,
                Mode::AlwaysDeny => return Decision::Deny(String::new()),
                Mode::Abac(policies) => {
                    if policies.iter().any(|p| p.matches(user, a)) {
                        return Decision::Allow;
                    }
                }
                Mode::Webhook(hook) => {
                    if let Some(decision) = hook.review(user, a).await {
                        return decision;
                    }
                }
            }
        }
        Decision::Deny(String::new())
    }
}

/// One ABAC policy: a line of a policy file, `{"apiVersion":
/// "abac.authorization.kubernetes.io/v1beta1", "kind": "Policy", "spec": {...}}`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Policy {
    user: String,
    group: String,
    readonly: bool,
    api_group: String,
    resource: String,
    namespace: String,
    non_resource_path: String,
}

impl Policy {
    /// The policies of a policy file (one JSON object per line; blank lines and `#` comments
    /// skipped). A line that is not a policy is an error naming it.
    ///
    /// ```
    /// use conneg_apiserver::auth::{Attributes, Policy, UserInfo};
    /// let p = Policy::parse_file(r#"{"apiVersion":"abac.authorization.kubernetes.io/v1beta1","kind":"Policy","spec":{"user":"alice","namespace":"*","resource":"*","apiGroup":"*","readonly":true}}"#).unwrap();
    /// let alice = UserInfo { name: "alice".into(), ..UserInfo::default() };
    /// let list = Attributes::from_request(&http::Method::GET, "/apis/g/v1/namespaces/n/things", None);
    /// let create = Attributes::from_request(&http::Method::POST, "/apis/g/v1/namespaces/n/things", None);
    /// assert!(p[0].matches(&alice, &list));
    /// assert!(!p[0].matches(&alice, &create));
    /// ```
    pub fn parse_file(text: &str) -> Result<Vec<Policy>, String> {
        let mut out = Vec::new();
        for (n, line) in text.lines().enumerate() {
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let bad = |why: &str| format!("policy file line {}: {why}", n + 1);
            let v: Value = serde_json::from_str(line).map_err(|e| bad(&e.to_string()))?;
            let spec = match (v.get("kind"), v.get("spec")) {
                (Some(kind), Some(spec)) if kind == "Policy" => spec,
                _ => return Err(bad("not a Policy with a spec")),
            };
            let field = |name: &str| -> Result<String, String> {
                match spec.get(name) {
                    None => Ok(String::new()),
                    Some(Value::String(s)) => Ok(s.clone()),
                    Some(_) => Err(bad(&format!("spec.{name} must be a string"))),
                }
            };
            out.push(Policy {
                user: field("user")?,
                group: field("group")?,
                readonly: spec
                    .get("readonly")
                    .and_then(Value::as_bool)
                    .unwrap_or(false),
                api_group: field("apiGroup")?,
                resource: field("resource")?,
                namespace: field("namespace")?,
                non_resource_path: field("nonResourcePath")?,
            });
        }
        Ok(out)
    }

    /// Whether this policy allows the request, as Kubernetes' ABAC authorizer decides it.
    pub fn matches(&self, user: &UserInfo, a: &Attributes) -> bool {
        self.subject_matches(user)
            && (a.is_read_only() || !self.readonly)
            && (self.resource_matches(a) || self.non_resource_matches(a))
    }

    fn subject_matches(&self, user: &UserInfo) -> bool {
        let mut matched = false;
        if !self.user.is_empty() {
            if self.user != "*" && self.user != user.name {
                return false;
            }
            matched = true;
        }
        if !self.group.is_empty() {
            if self.group != "*" && !user.groups.contains(&self.group) {
                return false;
            }
            matched = true;
        }
        matched
    }

    fn resource_matches(&self, a: &Attributes) -> bool {
        let star = |p: &str, v: &str| p == "*" || p == v;
        a.resource_request
            && star(&self.namespace, &a.namespace)
            && star(&self.resource, &a.resource)
            && star(&self.api_group, &a.api_group)
    }

    fn non_resource_matches(&self, a: &Attributes) -> bool {
        !a.resource_request && path_matches(&self.non_resource_path, &a.path)
    }
}

/// `*`, the path itself, or a prefix ending in `*`.
fn path_matches(pattern: &str, path: &str) -> bool {
    pattern == "*"
        || pattern == path
        || pattern
            .strip_suffix('*')
            .is_some_and(|prefix| path.starts_with(prefix))
}

/// Kubernetes' words for a denial (`responsewriters.Forbidden`), as a `Status`.
pub fn forbidden(user: &UserInfo, a: &Attributes, reason: &str) -> conneg::Status {
    let q = conneg::Status::quote;
    let mut why = if !a.resource_request {
        format!(
            "User {} cannot {} path {}",
            q(&user.name),
            a.verb,
            q(&a.path)
        )
    } else {
        let resource = if a.subresource.is_empty() {
            a.resource.clone()
        } else {
            format!("{}/{}", a.resource, a.subresource)
        };
        let scope = if a.namespace.is_empty() {
            "at the cluster scope".to_owned()
        } else {
            format!("in the namespace {}", q(&a.namespace))
        };
        format!(
            "User {} cannot {} resource {} in API group {} {scope}",
            q(&user.name),
            a.verb,
            q(&resource),
            q(&a.api_group)
        )
    };
    if !reason.is_empty() {
        why = format!("{why}: {reason}");
    }
    let resource = if a.resource_request {
        a.resource.as_str()
    } else {
        ""
    };
    conneg::Status::forbidden(&a.api_group, resource, &a.name, &why)
}

#[cfg(test)]
mod tests {
    use super::*;
    use http::Method;

    fn user(name: &str, groups: &[&str]) -> UserInfo {
        UserInfo {
            name: name.into(),
            uid: String::new(),
            groups: groups.iter().map(|g| g.to_string()).collect(),
        }
    }

    const POLICIES: &str = r#"
# alice reads everything; bob writes flunders in "default"; the group ops reads /metrics
{"apiVersion":"abac.authorization.kubernetes.io/v1beta1","kind":"Policy","spec":{"user":"alice","namespace":"*","resource":"*","apiGroup":"*","readonly":true}}
{"apiVersion":"abac.authorization.kubernetes.io/v1beta1","kind":"Policy","spec":{"user":"bob","namespace":"default","resource":"flunders","apiGroup":"wardle.example.com"}}
{"apiVersion":"abac.authorization.kubernetes.io/v1beta1","kind":"Policy","spec":{"group":"ops","nonResourcePath":"/metrics*","readonly":true}}
"#;

    #[tokio::test]
    async fn abac_as_kubernetes_decides() {
        let z = Authorizer::new(vec![Mode::Abac(Policy::parse_file(POLICIES).unwrap())]);
        let req = |m: Method, p: &str| Attributes::from_request(&m, p, None);
        let coll = "/apis/wardle.example.com/v1beta1/namespaces/default/flunders";
        let (alice, bob, carol) = (
            user("alice", &[]),
            user("bob", &[]),
            user("carol", &["ops"]),
        );
        assert_eq!(
            z.authorize(&alice, &req(Method::GET, coll)).await,
            Decision::Allow
        );
        assert_ne!(
            z.authorize(&alice, &req(Method::POST, coll)).await,
            Decision::Allow
        );
        assert_eq!(
            z.authorize(&bob, &req(Method::POST, coll)).await,
            Decision::Allow
        );
        let other_ns = "/apis/wardle.example.com/v1beta1/namespaces/x/flunders";
        assert_ne!(
            z.authorize(&bob, &req(Method::POST, other_ns)).await,
            Decision::Allow
        );
        assert_eq!(
            z.authorize(&carol, &req(Method::GET, "/metrics")).await,
            Decision::Allow
        );
        assert_ne!(
            z.authorize(&carol, &req(Method::GET, coll)).await,
            Decision::Allow
        );
        // Health is always allowed; system:masters always.
        assert_eq!(
            z.authorize(&carol, &req(Method::GET, "/readyz")).await,
            Decision::Allow
        );
        assert_eq!(
            z.authorize(
                &user("root", &["system:masters"]),
                &req(Method::DELETE, coll)
            )
            .await,
            Decision::Allow
        );
        assert!(Policy::parse_file("{\"kind\":\"Policy\"}").is_err());
        assert!(Policy::parse_file("not json").is_err());
    }

    #[tokio::test]
    async fn modes_in_order() {
        let a = Attributes::from_request(&Method::GET, "/apis/g/v1/things", None);
        let u = user("u", &[]);
        assert_eq!(
            Authorizer::new(vec![Mode::AlwaysAllow, Mode::AlwaysDeny])
                .authorize(&u, &a)
                .await,
            Decision::Allow
        );
        assert_ne!(
            Authorizer::new(vec![Mode::AlwaysDeny, Mode::AlwaysAllow])
                .authorize(&u, &a)
                .await,
            Decision::Allow
        );
        assert_ne!(
            Authorizer::new(vec![]).authorize(&u, &a).await,
            Decision::Allow
        );
    }

    #[tokio::test]
    async fn denials_in_kubernetes_words() {
        let bob = user("bob", &[]);
        let a = Attributes::from_request(
            &Method::POST,
            "/apis/wardle.example.com/v1beta1/namespaces/default/flunders",
            None,
        );
        let s = forbidden(&bob, &a, "");
        assert_eq!(s.code(), 403);
        assert_eq!(
            s.message,
            r#"flunders.wardle.example.com is forbidden: User "bob" cannot create resource "flunders" in API group "wardle.example.com" in the namespace "default""#
        );
        let a = Attributes::from_request(
            &Method::GET,
            "/apis/wardle.example.com/v1beta1/fischers/f",
            None,
        );
        assert_eq!(
            forbidden(&bob, &a, "no").message,
            r#"fischers.wardle.example.com "f" is forbidden: User "bob" cannot get resource "fischers" in API group "wardle.example.com" at the cluster scope: no"#
        );
        let a = Attributes::from_request(&Method::GET, "/metrics", None);
        assert_eq!(
            forbidden(&bob, &a, "").message,
            r#"forbidden: User "bob" cannot get path "/metrics""#
        );
    }
}
