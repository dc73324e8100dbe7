//! CBOR create/get/update/patch/watch driven by Python's cbor2 — an independent CBOR
//! implementation (installed by scripts/install-test-deps), as KEP-4222's test plan asks.

mod common;

use common::{Server, python, tempdir};

const SCRIPT: &str = r#"
import http.client, io, sys, cbor2
from collections.abc import Mapping

addr = sys.argv[1]
host, port = addr.split(":")
BASE = "/apis/wardle.example.com/v1beta1/namespaces/default/flunders"

def as_bytes(v):
    # client-go's apply encoding: strings as byte strings, no self-described tag.
    if isinstance(v, str): return v.encode()
    if isinstance(v, dict): return {as_bytes(k): as_bytes(x) for k, x in v.items()}
    if isinstance(v, list): return [as_bytes(x) for x in v]
    return v

def norm(v):
    if isinstance(v, cbor2.CBORTag) and v.tag == 55799: return norm(v.value)
    if isinstance(v, bytes): return v.decode()
    # cbor2 6 gives a frozendict (and may give tuples) for containers under a tag
    if isinstance(v, Mapping): return {norm(k): norm(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)): return [norm(x) for x in v]
    return v

def req(method, path, body=None, ctype="application/cbor", accept="application/cbor"):
    c = http.client.HTTPConnection(host, int(port), timeout=30)
    headers = {"Accept": accept}
    if body is not None: headers["Content-Type"] = ctype
    c.request(method, path, body=body, headers=headers)
    r = c.getresponse()
    data = r.read()
    return r.status, r.getheader("Content-Type"), data

def check(cond, msg):
    if not cond:
        print("FAIL:", msg); sys.exit(1)

# create (self-described CBOR, text strings as cbor2 writes them)
obj = {"apiVersion": "wardle.example.com/v1beta1", "kind": "Flunder",
       "metadata": {"name": "c1", "labels": {"a": "1"}},
       "spec": {"flunderReference": "x", "referenceType": "Flunder"}}
st, ct, data = req("POST", BASE, cbor2.dumps(cbor2.CBORTag(55799, obj)))
check(st == 201, f"create: {st} {data!r}")
check(ct == "application/cbor", f"create content-type {ct}")
check(data[:3] == b"\xd9\xd9\xf7", "response is self-described CBOR")
raw = cbor2.loads(data)
raw = raw.value if isinstance(raw, cbor2.CBORTag) else raw  # cbor2 may strip tag 55799 itself
check(isinstance(raw.get(b"kind"), bytes), "strings are byte strings, as Kubernetes writes them")
created = norm(raw)
check(created["spec"]["flunderReference"] == "x", created)
rv = created["metadata"]["resourceVersion"]

# get
st, ct, data = req("GET", BASE + "/c1")
check(st == 200 and norm(cbor2.loads(data))["metadata"]["uid"] == created["metadata"]["uid"], "get")

# update (PUT) with the resourceVersion, byte-string keys this time
created["metadata"]["labels"]["b"] = "2"
st, ct, data = req("PUT", BASE + "/c1", cbor2.dumps(as_bytes(created)))
check(st == 200, f"update: {st} {data!r}")
updated = norm(cbor2.loads(data))
check(updated["metadata"]["labels"] == {"a": "1", "b": "2"}, updated)
# the same (now stale) resourceVersion again: 409 as a CBOR Status
st, ct, data = req("PUT", BASE + "/c1", cbor2.dumps(as_bytes(created)))
status = norm(cbor2.loads(data))
check(st == 409 and status["reason"] == "Conflict" and status["code"] == 409, f"conflict {status}")

# server-side apply as client-go sends it: apply-patch+cbor, no tag, byte strings
apply = {"apiVersion": "wardle.example.com/v1beta1", "kind": "Flunder",
         "metadata": {"name": "c1", "labels": {"applied": "yes"}}}
st, ct, data = req("PATCH", BASE + "/c1?fieldManager=py", cbor2.dumps(as_bytes(apply)),
                   ctype="application/apply-patch+cbor")
check(st == 200, f"apply: {st} {data!r}")
check(norm(cbor2.loads(data))["metadata"]["labels"]["applied"] == "yes", "apply label")

# apply creates
apply["metadata"]["name"] = "c2"
st, ct, data = req("PATCH", BASE + "/c2?fieldManager=py", cbor2.dumps(as_bytes(apply)),
                   ctype="application/apply-patch+cbor")
check(st == 201, f"apply-create: {st} {data!r}")

# strategic merge patch in CBOR
st, ct, data = req("PATCH", BASE + "/c1", cbor2.dumps({"metadata": {"labels": {"a": None}}}),
                   ctype="application/strategic-merge-patch+cbor")
check(st == 200, f"smp: {st} {data!r}")
check("a" not in norm(cbor2.loads(data))["metadata"]["labels"], "smp removed label")

# validation error as a CBOR Status with causes
bad = {"metadata": {"name": "bad"}, "spec": {"flunderReference": "a", "fischerReference": "b"}}
st, ct, data = req("POST", BASE, cbor2.dumps(cbor2.CBORTag(55799, bad)))
status = norm(cbor2.loads(data))
check(st == 422 and status["details"]["causes"][0]["field"] == "spec.fischerReference", status)

# malformed CBOR: 400, never 500
st, ct, data = req("POST", BASE, b"\xd9\xd9\xf7\xa1\x61")
check(st == 400, f"malformed: {st}")

# watch: a CBOR Sequence of self-described events, objects tagged too
st, ct, data = req("GET", BASE + "?watch=true&timeoutSeconds=1")
check(st == 200 and ct == "application/cbor-seq", f"watch {st} {ct}")
dec = cbor2.CBORDecoder(io.BytesIO(data))
events = []
while dec.fp.tell() < len(data):
    events.append(norm(dec.decode()))
names = sorted(e["object"]["metadata"]["name"] for e in events)
check([e["type"] for e in events] == ["ADDED", "ADDED"] and names == ["c1", "c2"], events)
print("ok")
"#;

#[test]
fn cbor_round_trips_with_python_cbor2() {
    let dir = tempdir();
    let s = Server::start(dir.path(), &[]);
    let out = python(SCRIPT, &[&s.addr]);
    assert_eq!(out.trim(), "ok");
    // The server saw CBOR both ways.
    let m = s.get("/metrics", "*/*").text();
    assert!(
        m.contains("request_content_type=\"application/apply-patch+cbor\""),
        "{m}"
    );
    assert!(
        m.contains("response_content_type=\"application/cbor-seq\""),
        "{m}"
    );
}
