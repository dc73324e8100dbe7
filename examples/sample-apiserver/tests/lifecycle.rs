//! Object lifecycle over HTTP, in JSON and in CBOR: finalizers and the deletion mark, delete
//! options (body and query), deletion when the last finalizer goes, generation, and
//! ownerReferences validation.

mod common;

use common::{Server, flunders, tempdir};
use serde_json::{Value, json};

fn memory_server() -> (Server, tempfile::TempDir) {
    let dir = tempdir();
    let s = Server::start(dir.path(), &["--storage", "memory"]);
    (s, dir)
}

/// One wire format for request bodies and answers.
#[derive(Debug, Clone, Copy)]
enum Format {
    Json,
    Cbor,
}

const FORMATS: [Format; 2] = [Format::Json, Format::Cbor];

/// A client speaking one format to the v1beta1 Flunders of `default`.
struct Client<'a> {
    s: &'a Server,
    f: Format,
}

impl Client<'_> {
    fn media_type(&self) -> &'static str {
        match self.f {
            Format::Json => "application/json",
            Format::Cbor => "application/cbor",
        }
    }

    /// `method` on `path` (relative to the collection: "" or "/name", then `?query`), with
    /// `body` encoded in the format (`content_type` overrides it for patches); returns the
    /// code and the decoded answer.
    fn call_as(
        &self,
        method: &str,
        path: &str,
        content_type: Option<&str>,
        body: Option<&Value>,
    ) -> (u16, Value) {
        let bytes = match (body, self.f, content_type) {
            (None, ..) => Vec::new(),
            (Some(b), Format::Json, _) | (Some(b), Format::Cbor, Some(_)) => {
                serde_json::to_vec(b).unwrap()
            }
            (Some(b), Format::Cbor, None) => conneg_cbor::to_vec(b).unwrap(),
        };
        let ct = content_type.unwrap_or(self.media_type());
        let mut headers = vec![("Accept", self.media_type())];
        if body.is_some() {
            headers.push(("Content-Type", ct));
        }
        let url = format!("{}{path}", flunders("v1beta1", "default"));
        let r = self.s.req(method, &url, &headers, &bytes);
        let value: Result<Value, String> = match self.f {
            Format::Json => serde_json::from_slice(&r.body).map_err(|e| e.to_string()),
            Format::Cbor => conneg_cbor::from_slice(&r.body).map_err(|e| e.to_string()),
        };
        let value = value.unwrap_or_else(|e| panic!("{method} {path}: {} {e}", r.text()));
        (r.code, value)
    }

    fn call(&self, method: &str, path: &str, body: Option<&Value>) -> (u16, Value) {
        self.call_as(method, path, None, body)
    }

    fn create(&self, name: &str, meta: Value) -> Value {
        let mut m = meta;
        m["name"] = json!(name);
        let (code, obj) = self.call(
            "POST",
            "",
            Some(&json!({"metadata": m, "spec": {"flunderReference": "x", "referenceType": "Flunder"}})),
        );
        assert_eq!(code, 201, "{obj}");
        obj
    }

    fn get(&self, name: &str) -> (u16, Value) {
        self.call("GET", &format!("/{name}"), None)
    }

    fn delete(&self, name: &str, opts: Option<&Value>) -> (u16, Value) {
        self.call("DELETE", &format!("/{name}"), opts)
    }

    fn merge_patch(&self, name: &str, patch: &Value) -> (u16, Value) {
        self.call_as(
            "PATCH",
            &format!("/{name}"),
            Some("application/merge-patch+json"),
            Some(patch),
        )
    }

    /// The events after `rv` for `name` (history replayed, then the watch times out).
    fn events_after(&self, name: &str, rv: &Value) -> Vec<(String, Value)> {
        let rv = rv.as_str().unwrap();
        let r = self.s.req(
            "GET",
            &format!(
                "{}?watch=true&timeoutSeconds=1&resourceVersion={rv}&fieldSelector=metadata.name%3D{name}",
                flunders("v1beta1", "default")
            ),
            &[("Accept", "application/json")],
            b"",
        );
        assert_eq!(r.code, 200, "{}", r.text());
        r.text()
            .lines()
            .map(|l| {
                let e: Value = serde_json::from_str(l).unwrap();
                (e["type"].as_str().unwrap().to_owned(), e["object"].clone())
            })
            .collect()
    }
}

fn message(v: &Value) -> &str {
    v["message"].as_str().unwrap_or_default()
}

#[test]
fn finalizers_hold_the_object_until_an_update_removes_them() {
    let (s, _d) = memory_server();
    for f in FORMATS {
        let c = Client { s: &s, f };
        let created = c.create("held", json!({"finalizers": ["example.com/cleanup"]}));
        assert_eq!(created["metadata"]["generation"], 1, "{f:?}");

        // DELETE marks the object and keeps it.
        let (code, marked) = c.delete("held", None);
        assert_eq!(code, 200, "{f:?} {marked}");
        let m = &marked["metadata"];
        assert!(m["deletionTimestamp"].is_string(), "{f:?} {marked}");
        assert_eq!(m["deletionGracePeriodSeconds"], 0, "{f:?}");
        assert_eq!(m["generation"], 2, "{f:?}");
        assert_eq!(m["finalizers"], json!(["example.com/cleanup"]), "{f:?}");
        let (code, got) = c.get("held");
        assert_eq!(code, 200, "{f:?}");
        assert_eq!(got["metadata"]["deletionTimestamp"], m["deletionTimestamp"]);

        // A second DELETE changes nothing and answers the object again.
        let (code, again) = c.delete("held", None);
        assert_eq!(code, 200, "{f:?}");
        assert_eq!(again, marked, "{f:?}");

        // No finalizer can be added once deletion started; the deletion fields stay.
        let mut more = got.clone();
        more["metadata"]["finalizers"] = json!(["example.com/cleanup", "x"]);
        let (code, err) = c.call("PUT", "/held", Some(&more));
        assert_eq!(code, 422, "{f:?} {err}");
        assert_eq!(
            message(&err),
            "Flunder.wardle.example.com \"held\" is invalid: metadata.finalizers: Forbidden: no new finalizers can be added if the object is being deleted, found new finalizers []string{\"x\"}"
        );
        let mut grace = got.clone();
        grace["metadata"]["deletionGracePeriodSeconds"] = json!(30);
        let (code, err) = c.call("PUT", "/held", Some(&grace));
        assert_eq!(code, 422, "{f:?} {err}");
        assert_eq!(
            message(&err),
            "Flunder.wardle.example.com \"held\" is invalid: metadata.deletionGracePeriodSeconds: Invalid value: 30: field is immutable"
        );
        // An update that leaves the deletion fields out keeps them.
        let mut labelled = got.clone();
        let meta = labelled["metadata"].as_object_mut().unwrap();
        meta.remove("deletionTimestamp");
        meta.remove("deletionGracePeriodSeconds");
        labelled["metadata"]["labels"] = json!({"a": "b"});
        let (code, updated) = c.call("PUT", "/held", Some(&labelled));
        assert_eq!(code, 200, "{f:?} {updated}");
        assert_eq!(
            updated["metadata"]["deletionTimestamp"],
            m["deletionTimestamp"]
        );

        // Removing the last finalizer deletes it; the answer is the object as it was.
        let (code, last) = c.merge_patch("held", &json!({"metadata": {"finalizers": null}}));
        assert_eq!(code, 200, "{f:?} {last}");
        assert_eq!(
            last["metadata"]["finalizers"],
            json!(["example.com/cleanup"])
        );
        assert_eq!(c.get("held").0, 404, "{f:?}");

        // Watchers saw the mark, the label, and the deletion; nothing for the refused
        // updates or the second DELETE.
        let events = c.events_after("held", &created["metadata"]["resourceVersion"]);
        let types: Vec<&str> = events.iter().map(|(t, _)| t.as_str()).collect();
        assert_eq!(types, ["MODIFIED", "MODIFIED", "DELETED"], "{f:?}");
        assert_eq!(
            events[2].1["metadata"]["resourceVersion"],
            last["metadata"]["resourceVersion"]
        );
    }
}

#[test]
fn put_removing_the_last_finalizer_deletes() {
    let (s, _d) = memory_server();
    for f in FORMATS {
        let c = Client { s: &s, f };
        c.create(
            "put",
            json!({"finalizers": ["example.com/a", "example.com/b"]}),
        );
        let (_, marked) = c.delete("put", None);
        let mut one = marked.clone();
        one["metadata"]["finalizers"] = json!(["example.com/b"]);
        let (code, kept) = c.call("PUT", "/put", Some(&one));
        assert_eq!(code, 200, "{f:?} {kept}");
        assert_eq!(c.get("put").0, 200, "{f:?}: one finalizer left");
        let mut none = kept.clone();
        none["metadata"]["finalizers"] = json!([]);
        let (code, _) = c.call("PUT", "/put", Some(&none));
        assert_eq!(code, 200, "{f:?}");
        assert_eq!(c.get("put").0, 404, "{f:?}");
    }
}

#[test]
fn delete_options_in_the_body() {
    let (s, _d) = memory_server();
    for f in FORMATS {
        let c = Client { s: &s, f };
        let obj = c.create("opts", json!({}));
        let (uid, rv) = (&obj["metadata"]["uid"], &obj["metadata"]["resourceVersion"]);

        // Preconditions.
        let (code, err) = c.delete("opts", Some(&json!({"preconditions": {"uid": "other"}})));
        assert_eq!(code, 409, "{f:?}");
        assert_eq!(
            message(&err),
            format!(
                "Operation cannot be fulfilled on Flunder.wardle.example.com \"opts\": the UID in the precondition (other) does not match the UID in record ({}). The object might have been deleted and then recreated",
                uid.as_str().unwrap()
            )
        );
        assert_eq!(err["reason"], "Conflict");
        let (code, err) = c.delete(
            "opts",
            Some(&json!({"preconditions": {"uid": uid, "resourceVersion": "1"}})),
        );
        assert_eq!(code, 409, "{f:?}");
        assert_eq!(
            message(&err),
            format!(
                "Operation cannot be fulfilled on Flunder.wardle.example.com \"opts\": the ResourceVersion in the precondition (1) does not match the ResourceVersion in record ({}). The object might have been modified",
                rv.as_str().unwrap()
            )
        );

        // Invalid options.
        for (opts, want) in [
            (
                json!({"propagationPolicy": "Sideways"}),
                "DeleteOptions.meta.k8s.io \"\" is invalid: propagationPolicy: Unsupported value: \"Sideways\": supported values: \"Foreground\", \"Background\", \"Orphan\", \"nil\"",
            ),
            (
                json!({"propagationPolicy": "Orphan", "orphanDependents": true}),
                "DeleteOptions.meta.k8s.io \"\" is invalid: propagationPolicy: Invalid value: \"Orphan\": orphanDependents and deletionPropagation cannot be both set",
            ),
            (
                json!({"dryRun": ["Some"]}),
                "DeleteOptions.meta.k8s.io \"\" is invalid: dryRun: Unsupported value: []string{\"Some\"}: supported values: \"All\"",
            ),
        ] {
            let (code, err) = c.delete("opts", Some(&opts));
            assert_eq!(code, 422, "{f:?} {opts}");
            assert_eq!(message(&err), want, "{f:?}");
        }

        // dryRun: the answer is what would happen; nothing changes.
        let (code, would) = c.delete(
            "opts",
            Some(&json!({"dryRun": ["All"], "propagationPolicy": "Orphan"})),
        );
        assert_eq!(code, 200, "{f:?}");
        assert_eq!(would["metadata"]["finalizers"], json!(["orphan"]));
        assert!(would["metadata"]["deletionTimestamp"].is_string());
        let (_, got) = c.get("opts");
        assert_eq!(got, obj, "{f:?}: dry run changed the object");

        // Orphan: the orphan finalizer holds the object.
        let (code, kept) = c.delete(
            "opts",
            Some(&json!({"kind": "DeleteOptions", "apiVersion": "v1", "propagationPolicy": "Orphan", "gracePeriodSeconds": 0, "preconditions": {"uid": uid}})),
        );
        assert_eq!(code, 200, "{f:?} {kept}");
        assert_eq!(kept["metadata"]["finalizers"], json!(["orphan"]));
        assert_eq!(c.get("opts").0, 200);
        // Background on an object held only by the orphan finalizer removes it, and it.
        let (code, gone) = c.delete("opts", Some(&json!({"propagationPolicy": "Background"})));
        assert_eq!(code, 200, "{f:?}");
        // Removed, so the answer is a Status of Success naming it, as the generic registry's.
        assert_eq!(gone["kind"], "Status", "{f:?} {gone}");
        assert_eq!(gone["status"], "Success", "{f:?} {gone}");
        assert_eq!(gone["details"]["uid"], *uid);
        assert_eq!(c.get("opts").0, 404, "{f:?}");

        // Foreground adds foregroundDeletion; orphanDependents=false answers 202 when kept.
        c.create("fg", json!({"finalizers": ["example.com/f"]}));
        let (code, kept) = c.delete("fg", Some(&json!({"orphanDependents": false})));
        assert_eq!(code, 202, "{f:?} {kept}");
        assert_eq!(kept["metadata"]["finalizers"], json!(["example.com/f"]));
        let (code, kept) = c.delete("fg", Some(&json!({"propagationPolicy": "Foreground"})));
        assert_eq!(code, 200, "{f:?}");
        assert_eq!(
            kept["metadata"]["finalizers"],
            json!(["example.com/f", "foregroundDeletion"])
        );
        // The deprecated orphanDependents=true swaps it for orphan.
        let (_, kept) = c.delete("fg", Some(&json!({"orphanDependents": true})));
        assert_eq!(
            kept["metadata"]["finalizers"],
            json!(["example.com/f", "orphan"])
        );
        let (code, _) = c.merge_patch("fg", &json!({"metadata": {"finalizers": []}}));
        assert_eq!(code, 200, "{f:?}");
        assert_eq!(c.get("fg").0, 404, "{f:?}");
    }
}

#[test]
fn delete_options_in_the_query() {
    let (s, _d) = memory_server();
    let c = Client {
        s: &s,
        f: Format::Json,
    };
    c.create("q", json!({}));
    for (query, code, want) in [
        (
            "gracePeriodSeconds=soon",
            400,
            "strconv.ParseInt: parsing \"soon\": invalid syntax",
        ),
        (
            "propagationPolicy=Sideways",
            422,
            "DeleteOptions.meta.k8s.io \"\" is invalid: propagationPolicy: Unsupported value: \"Sideways\": supported values: \"Foreground\", \"Background\", \"Orphan\", \"nil\"",
        ),
    ] {
        let (got, err) = c.delete(&format!("q?{query}"), None);
        assert_eq!(got, code, "{query}");
        assert_eq!(message(&err), want);
    }
    let (code, would) = c.delete("q?dryRun=All&propagationPolicy=Foreground", None);
    assert_eq!(code, 200);
    assert_eq!(
        would["metadata"]["finalizers"],
        json!(["foregroundDeletion"])
    );
    assert_eq!(c.get("q").1["metadata"].get("finalizers"), None);
    // A boolean option is converted as apimachinery converts it: anything but `0` and
    // `false` is true (no ParseBool error).
    for (flag, finalizers) in [("maybe", json!(["orphan"])), ("FALSE", Value::Null)] {
        let (code, would) = c.delete(&format!("q?dryRun=All&orphanDependents={flag}"), None);
        assert_eq!(code, 200, "{flag}");
        assert_eq!(would["metadata"]["finalizers"], finalizers, "{flag}");
    }
    let (code, kept) = c.delete("q?gracePeriodSeconds=-1&propagationPolicy=Orphan", None);
    assert_eq!(code, 200);
    assert_eq!(kept["metadata"]["finalizers"], json!(["orphan"]));
    assert_eq!(kept["metadata"]["deletionGracePeriodSeconds"], 0);
    // With a body, the query is not read (as Kubernetes): Background removes it.
    let (code, _) = c.delete(
        "q?propagationPolicy=Orphan",
        Some(&json!({"propagationPolicy": "Background"})),
    );
    assert_eq!(code, 200);
    assert_eq!(c.get("q").0, 404);
}

#[test]
fn deletecollection_marks_held_objects_and_removes_the_rest() {
    let (s, _d) = memory_server();
    for f in FORMATS {
        let c = Client { s: &s, f };
        let set = format!("{f:?}").to_lowercase();
        c.create(
            &format!("{set}-held"),
            json!({"labels": {"set": set}, "finalizers": ["example.com/f"]}),
        );
        c.create(&format!("{set}-free"), json!({"labels": {"set": set}}));
        let (code, list) = c.call("DELETE", &format!("?labelSelector=set%3D{set}"), None);
        assert_eq!(code, 200, "{f:?} {list}");
        assert_eq!(list["items"].as_array().unwrap().len(), 2);
        assert_eq!(c.get(&format!("{set}-free")).0, 404, "{f:?}");
        let (code, held) = c.get(&format!("{set}-held"));
        assert_eq!(code, 200, "{f:?}");
        assert!(held["metadata"]["deletionTimestamp"].is_string());
        // Options apply to each object: Orphan holds the rest too.
        c.create(&format!("{set}-other"), json!({"labels": {"set": set}}));
        let (code, _) = c.call(
            "DELETE",
            &format!("?labelSelector=set%3D{set}"),
            Some(&json!({"propagationPolicy": "Orphan"})),
        );
        assert_eq!(code, 200, "{f:?}");
        let (_, other) = c.get(&format!("{set}-other"));
        assert_eq!(other["metadata"]["finalizers"], json!(["orphan"]), "{f:?}");
    }
}

#[test]
fn generation_moves_on_spec_changes_and_deletion_only() {
    let (s, _d) = memory_server();
    for f in FORMATS {
        let c = Client { s: &s, f };
        let name = format!("gen-{f:?}").to_lowercase();
        let obj = c.create(&name, json!({"finalizers": ["example.com/f"]}));
        assert_eq!(obj["metadata"]["generation"], 1);
        let (_, o) = c.merge_patch(&name, &json!({"metadata": {"labels": {"a": "b"}}}));
        assert_eq!(o["metadata"]["generation"], 1, "{f:?}: metadata only");
        let (_, o) = c.merge_patch(&name, &json!({"metadata": {"generation": 7}}));
        assert_eq!(o["metadata"]["generation"], 1, "{f:?}: not the client's");
        let (_, o) = c.merge_patch(&name, &json!({"spec": {"flunderReference": "y"}}));
        assert_eq!(o["metadata"]["generation"], 2, "{f:?}: spec");
        let (_, o) = c.delete(&name, None);
        assert_eq!(o["metadata"]["generation"], 3, "{f:?}: deletion started");
        let (_, o) = c.delete(&name, None);
        assert_eq!(o["metadata"]["generation"], 3, "{f:?}: once");
        c.merge_patch(&name, &json!({"metadata": {"finalizers": null}}));
    }
}

#[test]
fn owner_references_are_validated() {
    let (s, _d) = memory_server();
    for f in FORMATS {
        let c = Client { s: &s, f };
        let post = |meta: Value| {
            c.call(
                "POST",
                "",
                Some(&json!({"metadata": meta, "spec": {"flunderReference": "x", "referenceType": "Flunder"}})),
            )
        };
        let (code, err) = post(
            json!({"name": "o1", "ownerReferences": [{"apiVersion": "a/b/c", "kind": "", "name": "", "uid": ""}]}),
        );
        assert_eq!(code, 422, "{f:?} {err}");
        assert_eq!(
            message(&err),
            "Flunder.wardle.example.com \"o1\" is invalid: [metadata.ownerReferences.apiVersion: Invalid value: \"a/b/c\": version must not be empty, metadata.ownerReferences.kind: Invalid value: \"\": must not be empty, metadata.ownerReferences.name: Invalid value: \"\": must not be empty, metadata.ownerReferences.uid: Invalid value: \"\": must not be empty]"
        );
        let owner = |kind: &str, name: &str| json!({"apiVersion": "v1", "kind": kind, "name": name, "uid": "u", "controller": true});
        let (code, err) =
            post(json!({"name": "o2", "ownerReferences": [owner("A", "a"), owner("B", "b")]}));
        assert_eq!(code, 422, "{f:?} {err}");
        assert!(
            message(&err).contains("metadata.ownerReferences: Invalid value: ")
                && message(&err).ends_with(
                    "Only one reference can have Controller set to true. Found \"true\" in references for A/a and B/b"
                ),
            "{err}"
        );
        let (code, err) =
            post(json!({"name": "o3", "finalizers": ["orphan", "foregroundDeletion"]}));
        assert_eq!(code, 422, "{f:?} {err}");
        assert_eq!(
            message(&err),
            "Flunder.wardle.example.com \"o3\" is invalid: metadata.finalizers: Invalid value: []string{\"orphan\", \"foregroundDeletion\"}: finalizer orphan and foregroundDeletion cannot be both set"
        );
        let name = format!("o4-{f:?}").to_lowercase();
        let (code, ok) = post(json!({"name": name, "ownerReferences": [owner("A", "a")]}));
        assert_eq!(code, 201, "{f:?} {ok}");
        // Updates are held to the same rules.
        let (code, _) = c.merge_patch(
            &name,
            &json!({"metadata": {"ownerReferences": [owner("A", "a"), owner("B", "b")]}}),
        );
        assert_eq!(code, 422, "{f:?}");
    }
}
