//! Request attributes: what an authorizer decides on, read from the request as Kubernetes'
//! `RequestInfoFactory` reads it.

use http::Method;

/// Who is asking: the authenticated user.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct UserInfo {
    /// The user name (`system:anonymous` for an anonymous request).
    pub name: String,
    /// A unique id, if the authenticator knows one.
    pub uid: String,
    /// The groups the user is in (`system:authenticated` is added to every authenticated
    /// user, `system:unauthenticated` to the anonymous one).
    pub groups: Vec<String>,
}

impl UserInfo {
    /// The anonymous user, as Kubernetes names it.
    pub fn anonymous() -> UserInfo {
        UserInfo {
            name: "system:anonymous".into(),
            uid: String::new(),
            groups: vec!["system:unauthenticated".into()],
        }
    }
}

/// What a request does, in Kubernetes' terms (`authorizer.Attributes`).
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct Attributes {
    /// The Kubernetes verb: `get`, `list`, `watch`, `create`, `update`, `patch`, `delete`,
    /// `deletecollection` for resources; the lower-case HTTP method for other paths.
    pub verb: String,
    /// Whether this is a request for an API resource (else a path such as `/healthz`).
    pub resource_request: bool,
    /// The API group (`""` for the core group).
    pub api_group: String,
    /// The API version.
    pub api_version: String,
    /// The resource (`flunders`).
    pub resource: String,
    /// The subresource (`status`), if any.
    pub subresource: String,
    /// The namespace (`""` for cluster-scoped requests).
    pub namespace: String,
    /// The object name (`""` for collections).
    pub name: String,
    /// The request path.
    pub path: String,
}

impl Attributes {
    /// Reads the attributes of a request from its method, path and query.
    ///
    /// ```
    /// use conneg_apiserver::auth::Attributes;
    /// use http::Method;
    ///
    /// let a = Attributes::from_request(
    ///     &Method::GET,
    ///     "/apis/wardle.example.com/v1beta1/namespaces/default/flunders",
    ///     Some("watch=true"),
    /// );
    /// assert_eq!((a.verb.as_str(), a.resource.as_str(), a.namespace.as_str()), ("watch", "flunders", "default"));
    /// let a = Attributes::from_request(&Method::GET, "/readyz", None);
    /// assert!(!a.resource_request);
    /// ```
    pub fn from_request(method: &Method, path: &str, query: Option<&str>) -> Attributes {
        let non_resource = || Attributes {
            verb: method.as_str().to_ascii_lowercase(),
            path: path.to_owned(),
            ..Attributes::default()
        };
        let segments: Vec<&str> = path.trim_matches('/').split('/').collect();
        let (group, version, mut rest) = match segments.as_slice() {
            ["api", version, rest @ ..] => ("", *version, rest),
            ["apis", group, version, rest @ ..] => (*group, *version, rest),
            _ => return non_resource(),
        };
        if rest.is_empty() {
            // Discovery of a group version is not a resource request.
            return non_resource();
        }
        let mut watch_path = false;
        if rest.first() == Some(&"watch") {
            watch_path = true;
            rest = &rest[1..];
        }
        let mut namespace = "";
        if rest.first() == Some(&"namespaces") && rest.len() >= 2 {
            namespace = rest[1];
            if rest.len() > 2 {
                rest = &rest[2..];
            }
        }
        let resource = rest.first().copied().unwrap_or_default();
        let name = rest.get(1).copied().unwrap_or_default();
        let subresource = rest.get(2).copied().unwrap_or_default();
        // `?watch` as Kubernetes reads its options: `?watch=null` is a watch.
        let watch = watch_path || conneg::option_flag(query, "watch");
        let verb = match *method {
            Method::GET | Method::HEAD if watch => "watch",
            Method::GET | Method::HEAD if name.is_empty() => "list",
            Method::GET | Method::HEAD => "get",
            Method::POST => "create",
            Method::PUT => "update",
            Method::PATCH => "patch",
            Method::DELETE if name.is_empty() => "deletecollection",
            Method::DELETE => "delete",
            _ => return non_resource(),
        };
        Attributes {
            verb: verb.into(),
            resource_request: true,
            api_group: group.into(),
            api_version: version.into(),
            resource: resource.into(),
            subresource: subresource.into(),
            namespace: namespace.into(),
            name: name.into(),
            path: path.to_owned(),
        }
    }

    /// Whether the verb only reads.
    pub fn is_read_only(&self) -> bool {
        matches!(self.verb.as_str(), "get" | "list" | "watch")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn attrs(
        method: Method,
        path: &str,
        query: Option<&str>,
    ) -> (String, String, String, String, String, String) {
        let a = Attributes::from_request(&method, path, query);
        (
            a.verb,
            a.api_group,
            a.resource,
            a.subresource,
            a.namespace,
            a.name,
        )
    }

    fn t(
        v: &str,
        g: &str,
        r: &str,
        s: &str,
        ns: &str,
        n: &str,
    ) -> (String, String, String, String, String, String) {
        (v.into(), g.into(), r.into(), s.into(), ns.into(), n.into())
    }

    #[test]
    fn as_kubernetes_reads_them() {
        let w = "/apis/wardle.example.com/v1beta1";
        assert_eq!(
            attrs(Method::GET, &format!("{w}/namespaces/ns/flunders"), None),
            t("list", "wardle.example.com", "flunders", "", "ns", "")
        );
        assert_eq!(
            attrs(Method::GET, &format!("{w}/namespaces/ns/flunders/a"), None),
            t("get", "wardle.example.com", "flunders", "", "ns", "a")
        );
        assert_eq!(
            attrs(Method::GET, &format!("{w}/flunders"), Some("watch=1")),
            t("watch", "wardle.example.com", "flunders", "", "", "")
        );
        // Authorized as what it is served as: any value but `0` and `false` watches.
        for (q, verb) in [
            ("watch=null", "watch"),
            ("watch", "watch"),
            ("watch=False", "list"),
        ] {
            assert_eq!(
                attrs(Method::GET, &format!("{w}/flunders"), Some(q)).0,
                verb,
                "{q}"
            );
        }
        assert_eq!(
            attrs(
                Method::GET,
                &format!("{w}/watch/namespaces/ns/flunders"),
                None
            ),
            t("watch", "wardle.example.com", "flunders", "", "ns", "")
        );
        assert_eq!(
            attrs(Method::POST, &format!("{w}/namespaces/ns/flunders"), None),
            t("create", "wardle.example.com", "flunders", "", "ns", "")
        );
        assert_eq!(
            attrs(
                Method::PUT,
                &format!("{w}/namespaces/ns/flunders/a/status"),
                None
            ),
            t(
                "update",
                "wardle.example.com",
                "flunders",
                "status",
                "ns",
                "a"
            )
        );
        assert_eq!(
            attrs(Method::PATCH, &format!("{w}/fischers/f"), None),
            t("patch", "wardle.example.com", "fischers", "", "", "f")
        );
        assert_eq!(
            attrs(Method::DELETE, &format!("{w}/namespaces/ns/flunders"), None),
            t(
                "deletecollection",
                "wardle.example.com",
                "flunders",
                "",
                "ns",
                ""
            )
        );
        assert_eq!(
            attrs(
                Method::DELETE,
                &format!("{w}/namespaces/ns/flunders/a"),
                None
            ),
            t("delete", "wardle.example.com", "flunders", "", "ns", "a")
        );
        // A namespace is its own namespace; the core group is "".
        assert_eq!(
            attrs(Method::GET, "/api/v1/namespaces/ns", None),
            t("get", "", "namespaces", "", "ns", "ns")
        );
        assert_eq!(
            attrs(Method::GET, "/api/v1/namespaces", None),
            t("list", "", "namespaces", "", "", "")
        );
        // Not resources: discovery, health, metrics, OpenAPI.
        for p in [
            "/apis",
            "/apis/wardle.example.com",
            "/apis/wardle.example.com/v1beta1",
            "/api",
            "/readyz",
            "/metrics",
            "/openapi/v2",
        ] {
            let a = Attributes::from_request(&Method::GET, p, None);
            assert!(!a.resource_request, "{p}");
            assert_eq!((a.verb.as_str(), a.path.as_str()), ("get", p));
        }
    }
}
