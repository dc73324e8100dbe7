//! Authentication and authorization: static bearer tokens, anonymous requests, ABAC policies,
//! Kubernetes' 401 and 403 answers. (kubectl sends no credentials over plain HTTP, so the
//! kubectl flows wait for TLS serving.)

mod common;

use common::{Server, flunders, tempdir};
use serde_json::json;

const TOKENS: &str =
    "alice-token,alice,1\nbob-token,bob,2,\"writers\"\nroot-token,root,0,\"system:masters\"\n";

const POLICIES: &str = r#"{"apiVersion":"abac.authorization.kubernetes.io/v1beta1","kind":"Policy","spec":{"user":"alice","namespace":"*","resource":"*","apiGroup":"*","readonly":true}}
{"apiVersion":"abac.authorization.kubernetes.io/v1beta1","kind":"Policy","spec":{"group":"writers","namespace":"default","resource":"flunders","apiGroup":"wardle.example.com"}}
{"apiVersion":"abac.authorization.kubernetes.io/v1beta1","kind":"Policy","spec":{"user":"*","nonResourcePath":"*","readonly":true}}
"#;

/// A server with the token file and ABAC policy above, anonymous requests off.
fn secured(dir: &std::path::Path) -> Server {
    let tokens = dir.join("tokens.csv");
    let policy = dir.join("policy.jsonl");
    std::fs::write(&tokens, TOKENS).unwrap();
    std::fs::write(&policy, POLICIES).unwrap();
    Server::start(
        dir,
        &[
            "--storage",
            "memory",
            "--anonymous-auth=false",
            "--token-auth-file",
            tokens.to_str().unwrap(),
            "--authorization-mode",
            "ABAC",
            "--authorization-policy-file",
            policy.to_str().unwrap(),
        ],
    )
}

fn as_user(s: &Server, token: &str, method: &str, path: &str, body: &str) -> common::Resp {
    let auth = format!("Bearer {token}");
    s.req(
        method,
        path,
        &[
            ("Authorization", &auth),
            ("Content-Type", "application/json"),
        ],
        body.as_bytes(),
    )
}

#[test]
fn tokens_and_abac_policies_decide_with_kubernetes_answers() {
    let dir = tempdir();
    let s = secured(dir.path());
    let coll = flunders("v1beta1", "default");
    let obj = json!({"apiVersion": "wardle.example.com/v1beta1", "kind": "Flunder",
                     "metadata": {"name": "f1"}})
    .to_string();

    // No credential (anonymous off), a bad one: 401 Unauthorized.
    for r in [
        s.get(&coll, "application/json"),
        as_user(&s, "nope", "GET", &coll, ""),
    ] {
        assert_eq!(r.code, 401, "{}", r.text());
        assert_eq!(r.json()["reason"], "Unauthorized");
        assert_eq!(r.json()["message"], "Unauthorized");
    }

    // A refusal comes in the format the request accepts, like any other error.
    let r = s.req(
        "GET",
        &coll,
        &[
            ("Accept", "application/cbor"),
            ("Authorization", "Bearer nope"),
        ],
        b"",
    );
    assert_eq!(r.code, 401);
    assert_eq!(r.header("content-type"), Some("application/cbor"));
    let status: serde_json::Value = conneg_cbor::from_slice(&r.body).unwrap();
    assert_eq!(status["reason"], "Unauthorized");

    // alice reads but may not write.
    assert_eq!(as_user(&s, "alice-token", "GET", &coll, "").code, 200);
    let r = as_user(&s, "alice-token", "POST", &coll, &obj);
    assert_eq!(r.code, 403, "{}", r.text());
    let status = r.json();
    assert_eq!(status["reason"], "Forbidden");
    assert_eq!(
        status["message"],
        r#"flunders.wardle.example.com is forbidden: User "alice" cannot create resource "flunders" in API group "wardle.example.com" in the namespace "default""#
    );
    assert_eq!(status["details"]["group"], "wardle.example.com");
    assert_eq!(status["details"]["kind"], "flunders");

    // bob's group writes flunders in "default" only.
    let r = as_user(&s, "bob-token", "POST", &coll, &obj);
    assert_eq!(r.code, 201, "{}", r.text());
    let r = as_user(&s, "bob-token", "DELETE", &format!("{coll}/f1"), "");
    assert_eq!(r.code, 200, "{}", r.text());
    let r = as_user(
        &s,
        "bob-token",
        "DELETE",
        &format!("{}/f1", flunders("v1beta1", "other")),
        "",
    );
    assert_eq!(r.code, 403, "{}", r.text());
    assert!(r.json()["message"].as_str().unwrap().starts_with(
        r#"flunders.wardle.example.com "f1" is forbidden: User "bob" cannot delete resource "flunders""#
    ));

    // system:masters may do anything; any user may read non-resource paths (policy 3).
    let r = as_user(
        &s,
        "root-token",
        "POST",
        "/api/v1/namespaces",
        r#"{"metadata":{"name":"x"}}"#,
    );
    assert_eq!(r.code, 201, "{}", r.text());
    let metrics = as_user(&s, "alice-token", "GET", "/metrics", "");
    assert_eq!(metrics.code, 200);
    // Users are counted as Kubernetes counts them: a few labels, whatever the users.
    let text = metrics.text();
    assert!(
        text.lines()
            .any(|l| l.starts_with(r#"authenticated_user_requests{username="other"} "#)),
        "{text}"
    );
    assert!(!text.contains(r#"username="alice""#), "{text}");
    assert_eq!(as_user(&s, "alice-token", "GET", "/readyz", "").code, 200);
}

#[test]
fn without_flags_everyone_is_allowed_as_before() {
    let dir = tempdir();
    let s = Server::start(dir.path(), &["--storage", "memory"]);
    let r = s.post_json(
        &flunders("v1beta1", "default"),
        r#"{"apiVersion":"wardle.example.com/v1beta1","kind":"Flunder","metadata":{"name":"a"}}"#,
    );
    assert_eq!(r.code, 201, "{}", r.text());
}
