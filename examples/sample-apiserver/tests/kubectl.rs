//! kubectl (1.32) against the real binary: create, get (Table), get -o json, apply
//! --server-side, replace, get -w, delete, api-resources, explain — first as plain kubectl,
//! then with `KUBE_FEATURE_ClientsAllowCBOR=true KUBE_FEATURE_ClientsPreferCBOR=true`; each
//! over plain HTTP/1.1 and over HTTPS, where kubectl negotiates HTTP/2.
//!
//! Skipped (loudly) when kubectl is not on PATH; nothing else is skipped.

mod common;

use std::process::Stdio;

use common::kubectl::{Kubectl, setup, setup_secure};

const FLUNDER: &str = "apiVersion: wardle.example.com/v1alpha1
kind: Flunder
metadata:
  name: my-first-flunder
  labels:
    sample-label: \"true\"
";

const APPLIED: &str = "apiVersion: wardle.example.com/v1beta1
kind: Flunder
metadata:
  name: applied
spec:
  flunderReference: my-first-flunder
  referenceType: Flunder
";

fn scenario(test: &str, cbor: bool, secure: bool) {
    let started = if secure {
        setup_secure(test)
    } else {
        setup(test, &[])
    };
    let Some((dir, server)) = started else {
        return;
    };
    let k = Kubectl {
        server: &server,
        dir: dir.path(),
        cbor,
    };

    let out = k.run(&["api-resources"]);
    assert!(
        out.contains("flunders") && out.contains("fischers"),
        "{out}"
    );

    let file = dir.path().join("flunder.yaml");
    std::fs::write(&file, FLUNDER).unwrap();
    let out = k.run(&["create", "-f", file.to_str().unwrap()]);
    assert!(out.contains("my-first-flunder created"), "{out}");

    let out = k.run(&["get", "flunders"]);
    for col in [
        "NAME",
        "REFERENCE TYPE",
        "REFERENCE",
        "AGE",
        "my-first-flunder",
    ] {
        assert!(out.contains(col), "missing {col:?} in:\n{out}");
    }
    let out = k.run(&["get", "flunders", "my-first-flunder", "-o", "json"]);
    let obj: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(obj["apiVersion"], "wardle.example.com/v1beta1");
    assert_eq!(obj["metadata"]["labels"]["sample-label"], "true");

    let applied = dir.path().join("applied.yaml");
    std::fs::write(&applied, APPLIED).unwrap();
    let out = k.run(&["apply", "--server-side", "-f", applied.to_str().unwrap()]);
    assert!(out.contains("serverside-applied"), "{out}");
    let out = k.run(&["apply", "--server-side", "-f", applied.to_str().unwrap()]);
    assert!(out.contains("serverside-applied"), "{out}");
    // Another manager changing kubectl's fields conflicts, until it forces.
    let theirs = APPLIED.replace(
        "flunderReference: my-first-flunder",
        "flunderReference: other",
    );
    let out = k
        .cmd(&["apply", "--server-side", "--field-manager=other", "-f", "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .and_then(|mut c| {
            use std::io::Write;
            c.stdin
                .take()
                .expect("stdin")
                .write_all(theirs.as_bytes())?;
            c.wait_with_output()
        })
        .expect("kubectl apply");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "no conflict: {stderr}");
    assert!(
        stderr.contains("Apply failed with") && stderr.contains("conflict with \"kubectl\""),
        "{stderr}"
    );
    let out = k.run_stdin(
        &[
            "apply",
            "--server-side",
            "--field-manager=other",
            "--force-conflicts",
            "-f",
            "-",
        ],
        &theirs,
    );
    assert!(out.contains("serverside-applied"), "{out}");
    let managers = k.run(&[
        "get",
        "flunder",
        "applied",
        "--show-managed-fields",
        "-o",
        "jsonpath={.metadata.managedFields[*].manager}",
    ]);
    assert!(managers.contains("other"), "{managers}");

    // replace: get it, change a label, put it back.
    let yaml = k.run(&["get", "flunder", "applied", "-o", "yaml"]);
    let changed = yaml.replace(
        "name: applied",
        "name: applied\n  labels:\n    replaced: \"yes\"",
    );
    let out = k.run_stdin(&["replace", "-f", "-"], &changed);
    assert!(out.contains("applied replaced"), "{out}");
    let out = k.run(&[
        "get",
        "flunder",
        "applied",
        "-o",
        "jsonpath={.metadata.labels.replaced}",
    ]);
    assert_eq!(out, "yes");

    // get -w: an event line for the changed object.
    let seen = k.watch_until_modified("flunder", "applied");
    assert!(seen.contains("applied"), "kubectl get -w printed: {seen:?}");

    let out = k.run(&["explain", "flunders"]);
    assert!(out.contains("KIND:") && out.contains("Flunder"), "{out}");
    // The enum KEP: explain lists the values the declaration's enum publishes.
    let out = k.run(&["explain", "flunders.spec.referenceType"]);
    assert!(
        out.contains("ENUM:") && out.contains("    Fischer") && out.contains("    Flunder"),
        "{out}"
    );

    // Validation errors reach kubectl as API errors, with the declared rule's cause.
    let stderr = k.fail_stdin(
        &["create", "-f", "-"],
        "apiVersion: wardle.example.com/v1beta1\nkind: Flunder\nmetadata:\n  name: bad\nspec:\n  fischerReference: x\n",
    );
    assert!(
        stderr.contains(r#"spec.fischerReference: Invalid value: "object": cannot be set if referenceType is not Fischer"#),
        "{stderr}"
    );
    // An unknown enum value: kube-apiserver's Unsupported value.
    let stderr = k.fail_stdin(
        &["create", "-f", "-"],
        "apiVersion: wardle.example.com/v1beta1\nkind: Flunder\nmetadata:\n  name: bad\nspec:\n  referenceType: Bogus\n",
    );
    assert!(
        stderr.contains(r#"spec.referenceType: Unsupported value: "Bogus": supported values: "Fischer", "Flunder""#),
        "{stderr}"
    );

    if cbor {
        // With both gates kubectl's raw client negotiates CBOR.
        let out = k
            .cmd(&[
                "get",
                "--raw",
                "/apis/wardle.example.com/v1beta1/namespaces/default/flunders/applied",
            ])
            .output()
            .unwrap();
        assert!(out.status.success());
        assert_eq!(&out.stdout[..3], &[0xd9, 0xd9, 0xf7], "expected CBOR");
        let metrics = k.run(&["get", "--raw", "/metrics"]);
        assert!(
            metrics.contains("response_content_type=\"application/cbor\""),
            "{metrics}"
        );
    }

    let out = k.run(&["delete", "flunder", "applied", "my-first-flunder"]);
    assert!(out.contains("deleted"), "{out}");
    let out = k.run(&["get", "flunders"]);
    assert!(!out.contains("applied"), "{out}");

    // Over HTTPS every request of kubectl, watches included, was an HTTP/2 stream.
    let metrics = k.run(&["get", "--raw", "/metrics"]);
    let http2 = metrics.contains("apiserver_requests_by_protocol_total{protocol=\"HTTP/2.0\"}");
    let http1 = metrics.contains("apiserver_requests_by_protocol_total{protocol=\"HTTP/1.1\"}");
    assert_eq!((http2, http1), (secure, !secure), "{metrics}");
}

#[test]
fn kubectl_json() {
    scenario("kubectl_json", false, false);
}

#[test]
fn kubectl_with_cbor_gates() {
    scenario("kubectl_with_cbor_gates", true, false);
}

#[test]
fn kubectl_json_over_http2() {
    scenario("kubectl_json_over_http2", false, true);
}

#[test]
fn kubectl_with_cbor_gates_over_http2() {
    scenario("kubectl_with_cbor_gates_over_http2", true, true);
}

/// kubectl with the CBOR gates against a `--no-cbor` server: everything still works, in JSON.
#[test]
fn kubectl_cbor_gates_against_no_cbor_server() {
    let Some((dir, server)) = setup("kubectl_cbor_gates_against_no_cbor_server", &["--no-cbor"])
    else {
        return;
    };
    let k = Kubectl {
        server: &server,
        dir: dir.path(),
        cbor: true,
    };
    let file = dir.path().join("flunder.yaml");
    std::fs::write(&file, FLUNDER).unwrap();
    assert!(
        k.run(&["create", "-f", file.to_str().unwrap()])
            .contains("created")
    );
    let applied = dir.path().join("applied.yaml");
    std::fs::write(&applied, APPLIED).unwrap();
    assert!(
        k.run(&["apply", "--server-side", "-f", applied.to_str().unwrap()])
            .contains("serverside-applied")
    );
    assert!(k.run(&["get", "flunders"]).contains("applied"));
    let raw = k.run(&[
        "get",
        "--raw",
        "/apis/wardle.example.com/v1beta1/namespaces/default/flunders/applied",
    ]);
    assert!(
        raw.starts_with('{'),
        "expected JSON from a --no-cbor server: {raw}"
    );
    let metrics = server.get("/metrics", "*/*").text();
    assert!(
        !metrics.contains("response_content_type=\"application/cbor\""),
        "{metrics}"
    );
}

/// `kubectl create -f` of a Namespace, `get ns` (Table: NAME STATUS AGE), `delete ns` (which
/// waits for the namespace to be gone) and what deleting it did to the flunder inside.
/// (`kubectl create namespace x` sends protobuf, which this server does not speak: 415.)
#[test]
fn kubectl_namespaces() {
    let Some((dir, server)) = setup("kubectl_namespaces", &["--storage", "memory"]) else {
        return;
    };
    let k = Kubectl {
        server: &server,
        dir: dir.path(),
        cbor: false,
    };
    let created = k.run_stdin(
        &["create", "-f", "-"],
        "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: x\n",
    );
    assert!(created.contains("namespace/x created"), "{created}");
    let table = k.run(&["get", "ns"]);
    let header: Vec<&str> = table.lines().next().unwrap().split_whitespace().collect();
    assert_eq!(header, ["NAME", "STATUS", "AGE"]);
    assert!(
        table
            .lines()
            .any(|l| l.split_whitespace().take(2).eq(["x", "Active"])),
        "{table}"
    );
    // The status subresource: kubectl reads and patches it.
    let phase = k.run(&[
        "get",
        "ns",
        "x",
        "--subresource=status",
        "-o",
        "jsonpath={.status.phase}",
    ]);
    assert_eq!(phase, "Active");
    let out = k.run(&[
        "patch",
        "ns",
        "x",
        "--subresource=status",
        "--type=merge",
        "-p",
        r#"{"status":{"conditions":[{"type":"Example","status":"True"}]},"spec":{"finalizers":[]}}"#,
    ]);
    assert!(out.contains("patched"), "{out}");
    let got = k.run(&[
        "get",
        "ns",
        "x",
        "-o",
        "jsonpath={.status.conditions[0].type} {.spec.finalizers}",
    ]);
    assert_eq!(got, r#"Example ["kubernetes"]"#);
    k.run_stdin(&["create", "-n", "x", "-f", "-"], FLUNDER);
    assert!(
        k.run(&["delete", "ns", "x"])
            .contains("namespace \"x\" deleted")
    );
    let out = k.cmd(&["get", "ns", "x"]).output().unwrap();
    assert!(!out.status.success());
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("namespaces \"x\" not found"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let left = k.run(&["get", "flunders", "-A", "-o", "name"]);
    assert_eq!(left.trim(), "", "{left}");
}

/// The priority and fairness configuration as kubectl reads it (the built-in objects, with
/// kubectl's columns), and a change made with kubectl.
#[test]
fn kubectl_flowcontrol() {
    let Some((dir, server)) = setup("kubectl_flowcontrol", &["--storage", "memory"]) else {
        return;
    };
    let k = Kubectl {
        server: &server,
        dir: dir.path(),
        cbor: false,
    };
    let table = k.run(&["get", "flowschemas,prioritylevelconfigurations"]);
    for row in [
        [
            "flowschema.flowcontrol.apiserver.k8s.io/global-default",
            "global-default",
            "9900",
            "ByUser",
        ],
        [
            "flowschema.flowcontrol.apiserver.k8s.io/exempt",
            "exempt",
            "1",
            "<none>",
        ],
        [
            "prioritylevelconfiguration.flowcontrol.apiserver.k8s.io/global-default",
            "Limited",
            "20",
            "128",
        ],
        [
            "prioritylevelconfiguration.flowcontrol.apiserver.k8s.io/catch-all",
            "Limited",
            "5",
            "<none>",
        ],
    ] {
        assert!(
            table.lines().any(|l| l.split_whitespace().take(4).eq(row)),
            "{row:?} in\n{table}"
        );
    }
    let out = k.run(&[
        "patch",
        "prioritylevelconfiguration",
        "global-default",
        "--type=merge",
        "-p",
        r#"{"spec":{"limited":{"limitResponse":{"queuing":{"queueLengthLimit":100}}}}}"#,
    ]);
    assert!(out.contains("patched"), "{out}");
    let got = k.run(&[
        "get",
        "prioritylevelconfiguration",
        "global-default",
        "-o",
        "jsonpath={.spec.limited.limitResponse.queuing.queueLengthLimit}",
    ]);
    assert_eq!(got, "100");
}

/// Finalizers as kubectl drives them, in JSON and with the CBOR gates: `delete --wait=false`
/// leaves the object marked, a patch that removes the last finalizer deletes it, and
/// `--cascade=orphan` adds the `orphan` finalizer.
#[test]
fn kubectl_finalizers() {
    for cbor in [false, true] {
        let Some((dir, server)) = setup("kubectl_finalizers", &["--storage", "memory"]) else {
            return;
        };
        let k = Kubectl {
            server: &server,
            dir: dir.path(),
            cbor,
        };
        let held = APPLIED.replace(
            "name: applied",
            "name: held\n  finalizers: [example.com/hold]",
        );
        k.run_stdin(&["create", "-f", "-"], &held);
        let out = k.run(&["delete", "flunder", "held", "--wait=false"]);
        assert!(out.contains("\"held\" deleted"), "{out}");
        let marked = k.run(&[
            "get",
            "flunder",
            "held",
            "-o",
            "jsonpath={.metadata.deletionTimestamp}",
        ]);
        assert!(!marked.trim().is_empty(), "cbor={cbor}: not marked");
        let out = k.run(&[
            "patch",
            "flunder",
            "held",
            "--type=merge",
            "-p",
            r#"{"metadata":{"finalizers":null}}"#,
        ]);
        assert!(out.contains("patched"), "{out}");
        let out = k.cmd(&["get", "flunder", "held"]).output().unwrap();
        assert!(!out.status.success(), "cbor={cbor}: still there");

        k.run_stdin(&["create", "-f", "-"], APPLIED);
        k.run(&[
            "delete",
            "flunder",
            "applied",
            "--cascade=orphan",
            "--wait=false",
        ]);
        let finalizers = k.run(&[
            "get",
            "flunder",
            "applied",
            "-o",
            "jsonpath={.metadata.finalizers}",
        ]);
        assert_eq!(finalizers.trim(), r#"["orphan"]"#, "cbor={cbor}");
    }
}

/// `(manager, operation, fieldsV1)` of each `managedFields` entry of flunder `name`, sorted,
/// as `kubectl get --show-managed-fields` prints them.
fn managed_fields(k: &Kubectl<'_>, name: &str) -> Vec<(String, String, serde_json::Value)> {
    let out = k.run(&[
        "get",
        "flunder",
        name,
        "--show-managed-fields",
        "-o",
        "json",
    ]);
    let obj: serde_json::Value = serde_json::from_str(&out).unwrap();
    let mut entries: Vec<_> = obj["metadata"]["managedFields"]
        .as_array()
        .unwrap_or_else(|| panic!("no managedFields in {out}"))
        .iter()
        .map(|e| {
            let s = |f: &str| e[f].as_str().unwrap_or_default().to_owned();
            (s("manager"), s("operation"), e["fieldsV1"].clone())
        })
        .collect();
    entries.sort_by(|a, b| (&a.0, &a.1).cmp(&(&b.0, &b.1)));
    entries
}

/// `kubectl apply` (client-side), then `kubectl apply --server-side` of the same file: kubectl
/// migrates what `kubectl-client-side-apply` owned to `kubectl`, so a later server-side apply
/// without a label removes it. In JSON and with the CBOR gates.
#[test]
fn kubectl_client_side_then_server_side_apply() {
    for cbor in [false, true] {
        let Some((dir, server)) = setup(
            "kubectl_client_side_then_server_side_apply",
            &["--storage", "memory"],
        ) else {
            return;
        };
        let k = Kubectl {
            server: &server,
            dir: dir.path(),
            cbor,
        };
        let config = APPLIED.replace(
            "name: applied",
            "name: applied\n  labels:\n    a: \"1\"\n    b: \"2\"",
        );
        let out = k.run_stdin(&["apply", "-f", "-"], &config);
        assert!(out.contains("applied created"), "cbor={cbor}: {out}");
        let csa = managed_fields(&k, "applied");
        assert_eq!(csa.len(), 1, "cbor={cbor}: {csa:?}");
        assert_eq!(
            (csa[0].0.as_str(), csa[0].1.as_str()),
            ("kubectl-client-side-apply", "Update"),
            "cbor={cbor}"
        );

        let out = k.run_stdin(&["apply", "--server-side", "-f", "-"], &config);
        assert!(out.contains("serverside-applied"), "cbor={cbor}: {out}");
        let spec = serde_json::json!({"f:flunderReference": {}, "f:referenceType": {}});
        let last_applied = serde_json::json!({"f:metadata": {"f:annotations": {
            "f:kubectl.kubernetes.io/last-applied-configuration": {}
        }}});
        let owned = |labels: serde_json::Value| {
            vec![
                (
                    "kubectl".to_owned(),
                    "Apply".to_owned(),
                    serde_json::json!({"f:metadata": {"f:labels": labels}, "f:spec": spec}),
                ),
                (
                    "kubectl-last-applied".to_owned(),
                    "Apply".to_owned(),
                    last_applied.clone(),
                ),
            ]
        };
        assert_eq!(
            managed_fields(&k, "applied"),
            owned(serde_json::json!({"f:a": {}, "f:b": {}})),
            "cbor={cbor}"
        );

        let without_b = config.replace("\n    b: \"2\"", "");
        let out = k.run_stdin(&["apply", "--server-side", "-f", "-"], &without_b);
        assert!(out.contains("serverside-applied"), "cbor={cbor}: {out}");
        let labels = k.run(&[
            "get",
            "flunder",
            "applied",
            "-o",
            "jsonpath={.metadata.labels}",
        ]);
        assert_eq!(labels, r#"{"a":"1"}"#, "cbor={cbor}");
        assert_eq!(
            managed_fields(&k, "applied"),
            owned(serde_json::json!({"f:a": {}})),
            "cbor={cbor}"
        );
        // Without --show-managed-fields kubectl leaves them out.
        let yaml = k.run(&["get", "flunder", "applied", "-o", "yaml"]);
        assert!(!yaml.contains("managedFields"), "cbor={cbor}: {yaml}");
    }
}
