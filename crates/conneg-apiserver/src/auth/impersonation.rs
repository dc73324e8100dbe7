//! Impersonation: a user acting as another (`Impersonate-User`, `Impersonate-Group`,
//! `Impersonate-Uid`), allowed only where the authorizer lets the acting user `impersonate`
//! each of them, as Kubernetes' impersonation filter checks:
//!
//! * a user: verb `impersonate` on `users` (or, for `system:serviceaccount:<ns>:<name>`, on
//!   `serviceaccounts` named `<name>` in `<ns>`), core group;
//! * each group: `impersonate` on `groups`, core group;
//! * a uid: `impersonate` on `uids` in `authentication.k8s.io`.
//!
//! The request then runs as the impersonated user, who is `system:authenticated` unless
//! impersonating `system:anonymous`. `Impersonate-Extra-*` headers are refused (400): this
//! server keeps no extra user fields to carry them.

use http::HeaderMap;

use super::{Attributes, Authorizer, Decision, UserInfo, forbidden};

const USER: &str = "impersonate-user";
const GROUP: &str = "impersonate-group";
const UID: &str = "impersonate-uid";
const EXTRA_PREFIX: &str = "impersonate-extra-";

/// The user a request acts as: `user` itself without impersonation headers, the impersonated
/// user when `authorizer` allows every part of it, otherwise Kubernetes' 403 (or 400 for
/// headers that do not make sense).
///
/// ```
/// use conneg_apiserver::auth::{Authorizer, Mode, UserInfo, impersonate};
/// let mut headers = http::HeaderMap::new();
/// headers.insert("Impersonate-User", "bob".parse().unwrap());
/// let alice = UserInfo { name: "alice".into(), uid: String::new(), groups: vec![] };
/// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// let deny = Authorizer::new(vec![Mode::AlwaysDeny]);
/// let e = impersonate(&deny, alice.clone(), &headers).await.unwrap_err();
/// assert_eq!(e.code, 403);
/// let allow = Authorizer::new(vec![Mode::AlwaysAllow]);
/// assert_eq!(impersonate(&allow, alice, &headers).await.unwrap().name, "bob");
/// # });
/// ```
pub async fn impersonate(
    authorizer: &Authorizer,
    user: UserInfo,
    headers: &HeaderMap,
) -> Result<UserInfo, conneg::Status> {
    // The values of a header, or the name of one whose value is not text.
    let text = |name: &'static str| -> Result<Vec<String>, &'static str> {
        headers
            .get_all(name)
            .iter()
            .map(|v| v.to_str().map(str::to_owned).map_err(|_| name))
            .collect()
    };
    let not_text = |name| conneg::Status::bad_request(format!("{name}: not a valid header value"));
    let names = text(USER).map_err(not_text)?;
    let groups = text(GROUP).map_err(not_text)?;
    let uids = text(UID).map_err(not_text)?;
    if let Some(extra) = headers
        .keys()
        .find(|k| k.as_str().starts_with(EXTRA_PREFIX))
    {
        return Err(conneg::Status::bad_request(format!(
            "{extra}: impersonating extra user fields is not supported by this server"
        )));
    }
    if names.is_empty() {
        if groups.is_empty() && uids.is_empty() {
            return Ok(user);
        }
        return Err(conneg::Status::bad_request(
            "requested impersonation of groups or a uid without impersonating a user",
        ));
    }
    if names.len() > 1 || uids.len() > 1 {
        return Err(conneg::Status::bad_request(
            "only one user and one uid may be impersonated",
        ));
    }
    let name = names.into_iter().next().unwrap_or_default();
    let wanted = std::iter::once(user_attributes(&name))
        .chain(
            groups
                .iter()
                .map(|g| impersonate_attributes("", "groups", "", g)),
        )
        .chain(
            uids.iter()
                .map(|u| impersonate_attributes("authentication.k8s.io", "uids", "", u)),
        );
    for attributes in wanted {
        if let Decision::Deny(reason) = authorizer.authorize(&user, &attributes).await {
            return Err(forbidden(&user, &attributes, &reason));
        }
    }
    let mut groups = groups;
    let authenticated = if name == "system:anonymous" {
        "system:unauthenticated"
    } else {
        "system:authenticated"
    };
    if !groups.iter().any(|g| g == authenticated) {
        groups.push(authenticated.to_owned());
    }
    Ok(UserInfo {
        name,
        uid: uids.into_iter().next().unwrap_or_default(),
        groups,
    })
}

fn user_attributes(name: &str) -> Attributes {
    match name
        .strip_prefix("system:serviceaccount:")
        .and_then(|rest| rest.split_once(':'))
    {
        Some((namespace, sa)) => impersonate_attributes("", "serviceaccounts", namespace, sa),
        None => impersonate_attributes("", "users", "", name),
    }
}

fn impersonate_attributes(group: &str, resource: &str, namespace: &str, name: &str) -> Attributes {
    Attributes {
        verb: "impersonate".into(),
        resource_request: true,
        api_group: group.into(),
        resource: resource.into(),
        namespace: namespace.into(),
        name: name.into(),
        ..Attributes::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::auth::{Mode, Policy};

    fn alice() -> UserInfo {
        UserInfo {
            name: "alice".into(),
            uid: "1".into(),
            groups: vec!["system:authenticated".into()],
        }
    }

    fn headers(pairs: &[(&str, &str)]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for (k, v) in pairs {
            h.append(
                http::HeaderName::from_bytes(k.as_bytes()).unwrap(),
                v.parse().unwrap(),
            );
        }
        h
    }

    #[tokio::test]
    async fn each_part_is_authorized_with_kubernetes_attributes() {
        // alice may impersonate users, not groups.
        let policy = Policy::parse_file(
            r#"{"apiVersion":"abac.authorization.kubernetes.io/v1beta1","kind":"Policy","spec":{"user":"alice","apiGroup":"*","namespace":"*","resource":"users"}}"#,
        )
        .unwrap();
        let authz = Authorizer::new(vec![Mode::Abac(policy)]);
        let bob = impersonate(&authz, alice(), &headers(&[("Impersonate-User", "bob")]))
            .await
            .unwrap();
        assert_eq!(bob.name, "bob");
        assert_eq!(bob.groups, ["system:authenticated"]);
        let e = impersonate(
            &authz,
            alice(),
            &headers(&[("Impersonate-User", "bob"), ("Impersonate-Group", "admins")]),
        )
        .await
        .unwrap_err();
        assert_eq!(e.code, 403);
        assert_eq!(
            e.message,
            "groups \"admins\" is forbidden: User \"alice\" cannot impersonate resource \"groups\" in API group \"\" at the cluster scope"
        );
        let e = impersonate(
            &authz,
            alice(),
            &headers(&[("Impersonate-User", "system:serviceaccount:ns:robot")]),
        )
        .await
        .unwrap_err();
        assert_eq!(
            e.message,
            "serviceaccounts \"robot\" is forbidden: User \"alice\" cannot impersonate resource \"serviceaccounts\" in API group \"\" in the namespace \"ns\""
        );
    }

    #[tokio::test]
    async fn headers_that_make_no_sense_are_400() {
        let allow = Authorizer::new(vec![Mode::AlwaysAllow]);
        for h in [
            headers(&[("Impersonate-Group", "g")]),
            headers(&[("Impersonate-User", "a"), ("Impersonate-User", "b")]),
            headers(&[("Impersonate-User", "a"), ("Impersonate-Extra-Scopes", "x")]),
        ] {
            assert_eq!(
                impersonate(&allow, alice(), &h).await.unwrap_err().code,
                400
            );
        }
        assert_eq!(
            impersonate(&allow, alice(), &HeaderMap::new())
                .await
                .unwrap(),
            alice()
        );
        let anon = impersonate(
            &allow,
            alice(),
            &headers(&[("Impersonate-User", "system:anonymous")]),
        )
        .await
        .unwrap();
        assert_eq!(anon.groups, ["system:unauthenticated"]);
        let mut opaque = headers(&[("Impersonate-User", "a")]);
        opaque.append(GROUP, http::HeaderValue::from_bytes(b"\xffg").unwrap());
        let e = impersonate(&allow, alice(), &opaque).await.unwrap_err();
        assert_eq!(
            (e.code, e.message.as_str()),
            (400, "impersonate-group: not a valid header value")
        );
    }
}
