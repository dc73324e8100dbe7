//! Custom resources through kubectl (1.32) against the real binary: a CronTab
//! CustomResourceDefinition (namespaced, short name `ct`, a status subresource, printer
//! columns, a structural schema with a default, a pattern and a CEL rule) applied, waited on
//! until Established; its objects created, listed with the printer columns and by short name,
//! refused by the schema, applied client-side, server-side applied by two managers, patched
//! through `/status`, watched (`get -w`); then the definition deleted, and with it the objects and the resource. First as plain
//! kubectl, then with `KUBE_FEATURE_ClientsAllowCBOR=true KUBE_FEATURE_ClientsPreferCBOR=true`.
//!
//! Skipped (loudly) when kubectl is not on PATH. Ignored, each for a server bug named at it:
//! `kubectl explain` (no OpenAPI for custom resources), kubectl's default (strategic merge)
//! patch (accepted, not 415), and the kube-openapi wording of schema messages.

mod common;

use std::time::{Duration, Instant};

use common::kubectl::{Kubectl, setup};
use common::{Server, tempdir};

/// The CronTab definition of Kubernetes' documentation, with a default, a pattern, a CEL rule,
/// status and scale subresources and printer columns.
const CRD: &str = r#"apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: crontabs.stable.example.com
spec:
  group: stable.example.com
  scope: Namespaced
  names:
    plural: crontabs
    singular: crontab
    kind: CronTab
    shortNames: [ct]
  versions:
  - name: v1
    served: true
    storage: true
    subresources:
      status: {}
      scale:
        specReplicasPath: .spec.replicas
        statusReplicasPath: .status.ready
    additionalPrinterColumns:
    - name: Spec
      type: string
      jsonPath: .spec.cronSpec
    - name: Replicas
      type: integer
      jsonPath: .spec.replicas
    - name: Age
      type: date
      jsonPath: .metadata.creationTimestamp
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            x-kubernetes-validations:
            - rule: self.replicas <= 10
              message: at most 10 replicas
            properties:
              cronSpec:
                type: string
                pattern: '^(\d+|\*)(/\d+)?(\s+(\d+|\*)(/\d+)?){4}$'
              image:
                type: string
              replicas:
                type: integer
                default: 1
                minimum: 0
          status:
            type: object
            properties:
              ready:
                type: integer
"#;

const CR: &str = "apiVersion: stable.example.com/v1
kind: CronTab
metadata:
  name: my-new-cron-object
spec:
  cronSpec: \"* * * * */5\"
  image: my-awesome-cron-image
";

/// The CronTab applied server-side by two managers.
const APPLIED: &str = "apiVersion: stable.example.com/v1
kind: CronTab
metadata:
  name: applied
spec:
  cronSpec: \"*/10 * * * *\"
  image: mine
  replicas: 2
";

const CR_PATH: &str = "/apis/stable.example.com/v1/namespaces/default/crontabs/my-new-cron-object";

/// The lines of a `kubectl get` table, split into cells on runs of two or more spaces (cells
/// such as `* * * * */5` contain single spaces).
fn table(out: &str) -> Vec<Vec<String>> {
    out.lines()
        .map(|l| {
            l.split("  ")
                .map(str::trim)
                .filter(|c| !c.is_empty())
                .map(str::to_owned)
                .collect()
        })
        .collect()
}

/// `kubectl apply` of the CronTab definition, then `kubectl wait` until it is Established.
fn install_crd(k: &Kubectl<'_>) {
    let out = k.run_stdin(&["apply", "-f", "-"], CRD);
    assert!(out.contains("crontabs.stable.example.com"), "{out}");
    k.run(&[
        "wait",
        "--for",
        "condition=established",
        "--timeout=30s",
        "crd/crontabs.stable.example.com",
    ]);
}

fn scenario(test: &str, cbor: bool) {
    let Some((dir, server)) = setup(test, &[]) else {
        return;
    };
    let k = Kubectl {
        server: &server,
        dir: dir.path(),
        cbor,
    };

    // Not served before its definition.
    let stderr = k.fail_stdin(&["get", "crontabs"], "");
    assert!(
        stderr.contains(r#"the server doesn't have a resource type "crontabs""#),
        "{stderr}"
    );

    let crd_file = dir.path().join("crd.yaml");
    std::fs::write(&crd_file, CRD).unwrap();
    let out = k.run(&["apply", "-f", crd_file.to_str().unwrap()]);
    assert_eq!(
        out.trim(),
        "customresourcedefinition.apiextensions.k8s.io/crontabs.stable.example.com created"
    );
    let out = k.run(&[
        "wait",
        "--for",
        "condition=established",
        "--timeout=30s",
        "crd/crontabs.stable.example.com",
    ]);
    assert_eq!(
        out.trim(),
        "customresourcedefinition.apiextensions.k8s.io/crontabs.stable.example.com condition met"
    );
    let accepted = k.run(&[
        "get",
        "crd",
        "crontabs.stable.example.com",
        "-o",
        "jsonpath={.status.acceptedNames.kind} {.status.acceptedNames.shortNames} {.status.storedVersions}",
    ]);
    assert_eq!(accepted, r#"CronTab ["ct"] ["v1"]"#);
    // Applying the same file again changes nothing.
    let out = k.run(&["apply", "-f", crd_file.to_str().unwrap()]);
    assert_eq!(
        out.trim(),
        "customresourcedefinition.apiextensions.k8s.io/crontabs.stable.example.com unchanged"
    );
    // Discovery: kubectl finds the new resource (its cache was filled before it existed).
    let out = k.run(&["api-resources", "--api-group=stable.example.com"]);
    let rows = table(&out);
    assert_eq!(
        rows.get(1).map(Vec::as_slice),
        Some(&["crontabs", "ct", "stable.example.com/v1", "true", "CronTab"].map(String::from)[..]),
        "{out}"
    );

    let cr_file = dir.path().join("cr.yaml");
    std::fs::write(&cr_file, CR).unwrap();
    let out = k.run(&["create", "-f", cr_file.to_str().unwrap()]);
    assert_eq!(
        out.trim(),
        "crontab.stable.example.com/my-new-cron-object created"
    );

    // The printer columns, the default applied (replicas 1).
    let out = k.run(&["get", "crontabs"]);
    let rows = table(&out);
    assert_eq!(rows[0], ["NAME", "SPEC", "REPLICAS", "AGE"], "{out}");
    assert_eq!(rows.len(), 2, "{out}");
    assert_eq!(
        rows[1][..3],
        ["my-new-cron-object", "* * * * */5", "1"],
        "{out}"
    );
    assert!(rows[1][3].ends_with('s'), "an age in seconds: {out}");
    // By short name, and by singular.
    let out = k.run(&["get", "ct", "-o", "name"]);
    assert_eq!(out.trim(), "crontab.stable.example.com/my-new-cron-object");
    let out = k.run(&[
        "get",
        "crontab",
        "my-new-cron-object",
        "-o",
        "jsonpath={.apiVersion} {.kind} {.spec.replicas} {.spec.image} {.metadata.generation}",
    ]);
    assert_eq!(
        out,
        "stable.example.com/v1 CronTab 1 my-awesome-cron-image 1"
    );

    // The schema refuses: its pattern, its CEL rule, its minimum, with their messages (kubectl
    // prints the causes after `The CronTab "bad" is invalid: `). The exact kube-openapi
    // wording is `schema_messages_word_the_path_in_body_as_kubernetes_does`' business.
    let bad = CR.replace("my-new-cron-object", "bad");
    let stderr = k.fail_stdin(&["create", "-f", "-"], &bad.replace("* * * * */5", "nope"));
    assert!(
        stderr.contains(r#"The CronTab "bad" is invalid: spec.cronSpec: Invalid value: "nope": "#)
            && stderr.contains(r#"should match '^(\d+|\*)(/\d+)?(\s+(\d+|\*)(/\d+)?){4}$'"#),
        "{stderr}"
    );
    let stderr = k.fail_stdin(&["create", "-f", "-"], &format!("{bad}  replicas: 11\n"));
    assert!(
        stderr.contains(
            r#"The CronTab "bad" is invalid: spec: Invalid value: "object": at most 10 replicas"#
        ),
        "{stderr}"
    );
    let stderr = k.fail_stdin(&["create", "-f", "-"], &format!("{bad}  replicas: -1\n"));
    assert!(
        stderr.contains(r#"The CronTab "bad" is invalid: spec.replicas: Invalid value: -1: "#)
            && stderr.contains("should be greater than or equal to 0"),
        "{stderr}"
    );
    // kubectl's default --validate=strict: an unknown field is refused by the server.
    let stderr = k.fail_stdin(&["create", "-f", "-"], &format!("{bad}  bogus: 1\n"));
    assert!(stderr.contains(r#"unknown field "spec.bogus""#), "{stderr}");
    let out = k.run(&["get", "ct", "-o", "name"]);
    assert_eq!(
        out.trim(),
        "crontab.stable.example.com/my-new-cron-object",
        "nothing refused was stored"
    );

    // Client-side apply: created, then changed (kubectl sends a merge patch for a kind it has
    // no patch strategies for).
    let csa = "apiVersion: stable.example.com/v1\nkind: CronTab\nmetadata:\n  name: csa\nspec:\n  image: one\n";
    let out = k.run_stdin(&["apply", "-f", "-"], csa);
    assert_eq!(out.trim(), "crontab.stable.example.com/csa created");
    let out = k.run_stdin(&["apply", "-f", "-"], &csa.replace("one", "two"));
    assert_eq!(out.trim(), "crontab.stable.example.com/csa configured");
    let got = k.run(&[
        "get",
        "ct",
        "csa",
        "-o",
        "jsonpath={.spec.image} {.spec.replicas}",
    ]);
    assert_eq!(got, "two 1");
    k.run(&["delete", "ct", "csa"]);

    // Server-side apply by two managers: a conflict on the other's field, until forced.
    let out = k.run_stdin(&["apply", "--server-side", "-f", "-"], APPLIED);
    assert_eq!(
        out.trim(),
        "crontab.stable.example.com/applied serverside-applied"
    );
    let theirs = APPLIED.replace("image: mine", "image: theirs");
    let stderr = k.fail_stdin(
        &["apply", "--server-side", "--field-manager=other", "-f", "-"],
        &theirs,
    );
    assert!(
        stderr.contains("Apply failed with 1 conflict: conflict with \"kubectl\": .spec.image"),
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
    assert_eq!(
        out.trim(),
        "crontab.stable.example.com/applied serverside-applied"
    );
    let got = k.run(&[
        "get",
        "ct",
        "applied",
        "-o",
        "jsonpath={.spec.image} {.spec.replicas}",
    ]);
    assert_eq!(got, "theirs 2");
    let managers = k.run(&[
        "get",
        "ct",
        "applied",
        "--show-managed-fields",
        "-o",
        "jsonpath={.metadata.managedFields[*].manager}",
    ]);
    let mut managers: Vec<&str> = managers.split_whitespace().collect();
    managers.sort_unstable();
    assert_eq!(managers, ["kubectl", "other"]);

    // The status subresource: a merge patch writes the status and nothing else.
    let out = k.run(&[
        "patch",
        "ct",
        "my-new-cron-object",
        "--subresource=status",
        "--type=merge",
        "-p",
        r#"{"status":{"ready":2},"spec":{"image":"ignored"}}"#,
    ]);
    assert_eq!(
        out.trim(),
        "crontab.stable.example.com/my-new-cron-object patched"
    );
    let got = k.run(&[
        "get",
        "ct",
        "my-new-cron-object",
        "-o",
        "jsonpath={.status.ready} {.spec.image} {.metadata.generation}",
    ]);
    assert_eq!(got, "2 my-awesome-cron-image 1");
    let got = k.run(&[
        "get",
        "ct",
        "my-new-cron-object",
        "--subresource=status",
        "-o",
        "jsonpath={.status.ready}",
    ]);
    assert_eq!(got, "2");
    // And the main resource does not write the status.
    k.run(&[
        "patch",
        "ct",
        "my-new-cron-object",
        "--type=merge",
        "-p",
        r#"{"status":{"ready":9},"spec":{"replicas":3}}"#,
    ]);
    let got = k.run(&[
        "get",
        "ct",
        "my-new-cron-object",
        "-o",
        "jsonpath={.status.ready} {.spec.replicas} {.metadata.generation}",
    ]);
    assert_eq!(got, "2 3 2");

    // get -w: the watch's events, printed with the printer columns.
    let seen = k.watch_until_modified("ct", "my-new-cron-object");
    let rows = table(&seen);
    let modified = ["MODIFIED", "my-new-cron-object", "* * * * */5", "3"].map(String::from);
    assert_eq!(
        rows.first().and_then(|r| r.get(..4)),
        Some(&["EVENT", "NAME", "SPEC", "REPLICAS"].map(String::from)[..]),
        "kubectl get -w printed: {seen:?}"
    );
    assert!(
        rows.iter().any(|r| r.get(..4) == Some(&modified[..])),
        "kubectl get -w printed: {seen:?}"
    );

    // kubectl scale goes through /scale; the scaled object is validated by its schema.
    // kubectl 1.32's scale client asks for `application/cbor, */*` under the CBOR gates but
    // decodes only JSON (`yaml: invalid trailing UTF-8 octet`), against kube-apiserver too:
    // it runs without the gates.
    let plain = Kubectl {
        server: k.server,
        dir: k.dir,
        cbor: false,
    };
    let out = plain.run(&["scale", "ct", "my-new-cron-object", "--replicas=5"]);
    assert_eq!(
        out.trim(),
        "crontab.stable.example.com/my-new-cron-object scaled"
    );
    let got = plain.run(&[
        "get",
        "ct",
        "my-new-cron-object",
        "-o",
        "jsonpath={.spec.replicas}",
    ]);
    assert_eq!(got, "5");
    let err = plain.fail_stdin(&["scale", "ct", "my-new-cron-object", "--replicas=11"], "");
    assert!(err.contains("at most 10 replicas"), "{err}");

    if cbor {
        // With both gates kubectl's raw client negotiates CBOR for a custom resource too.
        let out = k.cmd(&["get", "--raw", CR_PATH]).output().unwrap();
        assert!(out.status.success());
        assert_eq!(&out.stdout[..3], &[0xd9, 0xd9, 0xf7], "expected CBOR");
        let metrics = server.get("/metrics", "*/*").text();
        assert!(
            metrics.contains("response_content_type=\"application/cbor\""),
            "{metrics}"
        );
    }

    // Deleting the definition (kubectl waits for it to be gone) removes its objects and the
    // resource.
    let out = k.run(&["delete", "crd", "crontabs.stable.example.com"]);
    assert_eq!(
        out.trim(),
        "customresourcedefinition.apiextensions.k8s.io \"crontabs.stable.example.com\" deleted"
    );
    let stderr = k.fail_stdin(&["get", "crd", "crontabs.stable.example.com"], "");
    assert!(
        stderr.contains(r#"customresourcedefinitions.apiextensions.k8s.io "crontabs.stable.example.com" not found"#),
        "{stderr}"
    );
    // The endpoints go with the definition (kubectl's discovery cache may lag: ask directly).
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let r = server.get(CR_PATH, "application/json");
        if r.code == 404 {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "still served after the definition went: {} {}",
            r.code,
            r.text()
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    // kubectl: no such resource type, or (its discovery cache not yet refreshed) a 404.
    let stderr = k.fail_stdin(&["get", "crontabs"], "");
    assert!(
        stderr.contains(r#"the server doesn't have a resource type "crontabs""#)
            || stderr.contains(r#"Unable to list "stable.example.com/v1, Resource=crontabs": the server could not find the requested resource"#),
        "{stderr}"
    );
    // Recreated, the definition serves an empty collection: the objects were deleted, not
    // just hidden.
    k.run(&["apply", "-f", crd_file.to_str().unwrap()]);
    k.run(&[
        "wait",
        "--for",
        "condition=established",
        "--timeout=30s",
        "crd/crontabs.stable.example.com",
    ]);
    let out = k.run(&["get", "crontabs", "-A", "-o", "name"]);
    assert_eq!(out.trim(), "", "objects outlived their definition");
}

#[test]
fn kubectl_custom_resources_json() {
    scenario("kubectl_custom_resources_json", false);
}

#[test]
fn kubectl_custom_resources_with_cbor_gates() {
    scenario("kubectl_custom_resources_with_cbor_gates", true);
}

/// The causes of a CR refused by its schema's value validations, worded as kube-apiserver words
/// them (kube-openapi's messages repeat the path, `<path> in body ...`, and a type error
/// names the JSON type seen; custom-resources.md §4). Plain HTTP: the words are the server's.
#[test]
fn schema_messages_word_the_path_in_body_as_kubernetes_does() {
    let dir = tempdir();
    let server = Server::start(&dir.path().join("data"), &["--storage", "memory"]);
    let crd: serde_json::Value = serde_norway::from_str(CRD).expect("the CRD as YAML");
    let r = server.post_json(
        "/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
        &crd.to_string(),
    );
    assert_eq!(r.code, 201, "{}", r.text());
    let crontabs = "/apis/stable.example.com/v1/namespaces/default/crontabs";
    let deadline = Instant::now() + Duration::from_secs(10);
    while server.get(crontabs, "application/json").code != 200 {
        assert!(Instant::now() < deadline, "never served");
        std::thread::sleep(Duration::from_millis(50));
    }
    let causes = |spec: serde_json::Value| {
        let r = server.post_json(
            crontabs,
            &serde_json::json!({"apiVersion": "stable.example.com/v1", "kind": "CronTab",
                "metadata": {"name": "bad"}, "spec": spec})
            .to_string(),
        );
        assert_eq!(r.code, 422, "{}", r.text());
        let mut causes: Vec<String> = r.json()["details"]["causes"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| {
                format!(
                    "{}: {}",
                    c["field"].as_str().unwrap(),
                    c["message"].as_str().unwrap()
                )
            })
            .collect();
        causes.sort();
        causes
    };
    assert_eq!(
        causes(serde_json::json!({"cronSpec": "nope"})),
        [
            r#"spec.cronSpec: Invalid value: "nope": spec.cronSpec in body should match '^(\d+|\*)(/\d+)?(\s+(\d+|\*)(/\d+)?){4}$'"#
        ]
    );
    assert_eq!(
        causes(serde_json::json!({"replicas": -1})),
        [
            "spec.replicas: Invalid value: -1: spec.replicas in body should be greater than or equal to 0"
        ]
    );
    // A type error names the JSON type seen, as the value and after the detail; it blocks
    // the CEL rules.
    assert_eq!(
        causes(serde_json::json!({"replicas": "x"})),
        [
            r#"<nil>: Invalid value: "null": some validation rules were not checked because the object was invalid; correct the existing errors to complete validation"#,
            r#"spec.replicas: Invalid value: "string": spec.replicas in body must be of type integer: "string""#,
        ]
    );
}

// `kubectl explain` finds the kind in /openapi/v3 by its group-version-kind: the server
// publishes each established definition's structural schema there (custom-resources.md §6).
#[test]
fn kubectl_explain_custom_resource() {
    let Some((dir, server)) = setup("kubectl_explain_custom_resource", &[]) else {
        return;
    };
    let k = Kubectl {
        server: &server,
        dir: dir.path(),
        cbor: false,
    };
    install_crd(&k);
    let out = k.run(&["explain", "crontabs"]);
    assert!(
        out.contains("KIND:")
            && out.contains("CronTab")
            && out.contains("VERSION:")
            && out.contains("v1"),
        "{out}"
    );
    let out = k.run(&["explain", "crontabs.spec.replicas"]);
    assert!(out.contains("FIELD: replicas <integer>"), "{out}");
}

// `kubectl patch ct x -p '{"spec":{"image":"smp"}}'` sends a strategic merge patch, which a
// custom resource does not take: 415 UnsupportedMediaType listing the types it does
// (custom-resources.md §3.1), and the object is left as it was.
#[test]
fn kubectl_default_patch_of_custom_resource_is_refused() {
    let Some((dir, server)) = setup("kubectl_default_patch_of_custom_resource_is_refused", &[])
    else {
        return;
    };
    let k = Kubectl {
        server: &server,
        dir: dir.path(),
        cbor: false,
    };
    install_crd(&k);
    k.run_stdin(&["create", "-f", "-"], CR);
    let stderr = k.fail_stdin(
        &[
            "patch",
            "ct",
            "my-new-cron-object",
            "-p",
            r#"{"spec":{"image":"smp"}}"#,
        ],
        "",
    );
    // kubectl names the patch type the server refused, then the server's 415 message.
    assert!(
        stderr.contains("application/strategic-merge-patch+json is not supported by stable.example.com/v1, Kind=CronTab")
            && stderr.contains("the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml"),
        "{stderr}"
    );
    let image = k.run(&[
        "get",
        "ct",
        "my-new-cron-object",
        "-o",
        "jsonpath={.spec.image}",
    ]);
    assert_eq!(image, "my-awesome-cron-image");
}
