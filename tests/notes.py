"""Drives examples/axum-notes (conneg's standard profile) as a non-Rust client would:
http.client for requests, cbor2 as a generic CBOR decoder. Run by tests/notes.rs with the
server's port; exits non-zero on the first failed check.
"""
import http.client
import json
import sys

import cbor2

PORT = int(sys.argv[1])
CHECKS = 0


def request(method, path, body=None, headers=None):
    conn = http.client.HTTPConnection("127.0.0.1", PORT, timeout=30)
    conn.request(method, path, body=body, headers=headers or {})
    resp = conn.getresponse()
    data = resp.read()
    conn.close()
    return resp.status, resp.headers, data


def stream(path, accept):
    """Opens a streamed response and leaves it open: (connection, response)."""
    conn = http.client.HTTPConnection("127.0.0.1", PORT, timeout=30)
    conn.request("GET", path, headers={"Accept": accept})
    return conn, conn.getresponse()


class Tape:
    """A file-like reader that keeps what was read, to check the raw bytes cbor2 decoded."""

    def __init__(self, f):
        self.f = f
        self.seen = bytearray()

    def readable(self):
        return True

    def seekable(self):
        return False

    def read(self, n=-1):
        data = self.f.read(n)
        self.seen += data
        return data


def check(cond, what, *context):
    global CHECKS
    if not cond:
        print("FAILED:", what, *context, file=sys.stderr)
        sys.exit(1)
    CHECKS += 1


def no_byte_strings(value, path="$"):
    """Every string a generic client sees must be a text string (keys included)."""
    if isinstance(value, bytes):
        check(False, f"byte string at {path}", value)
    if isinstance(value, dict):
        for k, v in value.items():
            check(isinstance(k, str), f"key {k!r} at {path} is not text")
            no_byte_strings(v, f"{path}.{k}")
    if isinstance(value, list):
        for i, v in enumerate(value):
            no_byte_strings(v, f"{path}[{i}]")


def decode(headers, data):
    ctype = headers.get("Content-Type")
    if ctype in ("application/json", "application/problem+json"):
        return json.loads(data)
    if ctype == "application/cbor":
        check(data[:3] != b"\xd9\xd9\xf7", "no self-described tag in the standard profile")
        value = cbor2.loads(data)
        no_byte_strings(value)
        return value
    check(False, "unexpected content type", ctype)


REASONS = {400: "Bad Request", 404: "Not Found", 405: "Method Not Allowed",
           406: "Not Acceptable", 413: "Payload Too Large", 415: "Unsupported Media Type",
           422: "Unprocessable Entity"}


def problem(result, status, cbor=False, detail=None):
    """An RFC 9457 problem with `status`, in JSON (application/problem+json) or CBOR."""
    got, headers, data = result
    check(got == status, f"status {got} != {status}", data)
    want = "application/cbor" if cbor else "application/problem+json"
    check(headers.get("Content-Type") == want, "problem content type", headers.get("Content-Type"))
    check("Accept" in headers.get_all("Vary", []), "Vary: Accept on errors", headers)
    p = decode(headers, data)
    check(set(p) <= {"type", "title", "status", "detail", "instance"}, "problem members", p)
    check(p["type"] == "about:blank", "type", p)
    check(p["title"] == REASONS[status], "title is the reason phrase", p)
    check(p["status"] == status, "status member", p)
    if detail is not None:
        check(detail in p.get("detail", ""), f"detail mentions {detail!r}", p)
    return headers, p


JSON = {"Content-Type": "application/json", "Accept": "application/json"}
CBOR = {"Content-Type": "application/cbor", "Accept": "application/cbor"}

# --- the service working -------------------------------------------------------------------
status, headers, data = request("POST", "/notes", json.dumps({"title": "milk"}), JSON)
check(status == 201, "create in JSON", status, data)
check(json.loads(data) == {"id": 1, "title": "milk", "done": False}, "created note", data)
check(headers.get("Vary") == "Accept", "Vary: Accept", headers)

status, headers, data = request("POST", "/notes", cbor2.dumps({"title": "eggs"}), CBOR)
check(status == 201, "create in CBOR", status, data)
check(decode(headers, data) == {"id": 2, "title": "eggs", "done": False}, "created in CBOR", data)

# The list is streamed item by item (StreamingList): in CBOR a plain map, text strings, no tag.
status, headers, data = request("GET", "/notes", headers={"Accept": "application/cbor"})
check(status == 200, "list in CBOR", status)
listed = decode(headers, data)
check(set(listed) == {"metadata", "items"}, "list members", listed)
check([n["title"] for n in listed["items"]] == ["milk", "eggs"], "listed", data)
check(listed["metadata"] == {"total": 2}, "list metadata", listed)

status, headers, data = request("GET", "/notes?limit=1", headers={"Accept": "application/json"})
listed = json.loads(data)
check(status == 200 and len(listed["items"]) == 1, "limit", data)
check(listed["metadata"] == {"total": 2}, "total whatever the limit", data)

status, headers, data = request("GET", "/notes", headers={"Accept": "application/yaml"})
check(status == 200 and b"- done: false" in data and b"total: 2" in data, "YAML list", data)

status, headers, data = request("GET", "/notes/1", headers={"Accept": "application/yaml"})
check(status == 200 and headers.get("Content-Type") == "application/yaml", "YAML", headers)
check(b"title: milk" in data, "YAML body", data)

status, headers, data = request("POST", "/notes", b"title: bread\n",
                                {"Content-Type": "application/yaml"})
check(status == 201 and json.loads(data)["title"] == "bread", "create in YAML", status, data)

status, headers, data = request("PATCH", "/notes/1", json.dumps({"done": True}),
                                {"Content-Type": "application/merge-patch+json"})
check(status == 200 and json.loads(data) == {"id": 1, "title": "milk", "done": True},
      "merge patch", status, data)

status, headers, data = request("DELETE", "/notes/3")
check(status == 204, "delete", status, data)

# --- a stream of changes -------------------------------------------------------------------
# CBOR: a CBOR Sequence of {"type", "object"} maps, text strings and no tags, which cbor2
# reads item by item; JSON: one event per line. Each starts with the current notes as ADDED.
cbor_conn, cbor_resp = stream("/notes/events", "application/cbor")
check(cbor_resp.status == 200, "watch in CBOR", cbor_resp.status)
check(cbor_resp.headers.get("Content-Type") == "application/cbor-seq", "CBOR Sequence",
      cbor_resp.headers)
tape = Tape(cbor_resp)
events = cbor2.CBORDecoder(tape)
json_conn, json_resp = stream("/notes/events", "application/json")
check(json_resp.headers.get("Content-Type") == "application/json", "JSON lines", json_resp.headers)


def next_events():
    cbor_event = events.decode()
    no_byte_strings(cbor_event)
    json_event = json.loads(json_resp.readline())
    check(cbor_event == json_event, "the same event in CBOR and JSON", cbor_event, json_event)
    return cbor_event


milk = {"id": 1, "title": "milk", "done": True}
check(next_events() == {"type": "ADDED", "object": milk}, "initial note 1")
check(next_events()["object"]["title"] == "eggs", "initial note 2")
status, _, data = request("POST", "/notes", json.dumps({"title": "jam"}), JSON)
jam = json.loads(data)
check(next_events() == {"type": "ADDED", "object": jam}, "a create is ADDED", jam)
request("PATCH", f"/notes/{jam['id']}", json.dumps({"done": True}),
        {"Content-Type": "application/merge-patch+json"})
check(next_events() == {"type": "MODIFIED", "object": dict(jam, done=True)}, "a patch is MODIFIED")
request("DELETE", f"/notes/{jam['id']}")
check(next_events() == {"type": "DELETED", "object": dict(jam, done=True)}, "a delete is DELETED")
check(b"\xd9\xd9\xf7" not in tape.seen, "no self-described tag in the stream", bytes(tape.seen))
check(tape.seen[0] == 0xa2, "each event a plain two-member map", bytes(tape.seen[:8]))
cbor_conn.close()
json_conn.close()
status, headers, data = request("GET", "/notes/events?timeout=1",
                                headers={"Accept": "application/json"})
check(status == 200 and len(data.splitlines()) == 2, "the watch ends at its timeout", data)

# Kubernetes' query parameters mean nothing here: no strict decoding, no watch, no pretty.
status, headers, data = request("POST", "/notes?fieldValidation=Strict&pretty=true",
                                json.dumps({"title": "tea", "colour": "green"}), JSON)
check(status == 201, "unknown fields ignored whatever the query", status, data)
check("Warning" not in headers, "no Warning header", headers)
check(b"\n" not in data, "not indented", data)
status, headers, data = request("GET", "/notes?watch=true", headers={"Accept": "application/json"})
check(status == 200 and headers.get("Content-Type") == "application/json", "watch=true", headers)
check("items" in json.loads(data), "watch=true is a plain list", data)

# --- every error a problem ---------------------------------------------------------------
problem(request("GET", "/notes/99"), 404, detail="note 99 does not exist")
problem(request("GET", "/notes/99", headers={"Accept": "application/cbor"}), 404, cbor=True)
status, headers, data = request("GET", "/notes/99", headers={"Accept": "application/yaml"})
check(status == 404 and headers.get("Content-Type") == "application/yaml", "YAML 404", headers)
check(b"status: 404" in data, "YAML problem", data)
status, headers, data = request("GET", "/notes/events", headers={"Accept": "application/yaml"})
check(status == 406 and headers.get("Content-Type") == "application/yaml", "YAML cannot stream",
      status, headers)
check(b"status: 406" in data and b"title: Not Acceptable" in data, "406 YAML problem", data)

# axum's Path and Query rejections, the router's 404 and 405.
problem(request("GET", "/notes/abc"), 400, detail="Cannot parse")
problem(request("GET", "/notes/abc", headers={"Accept": "application/cbor"}), 400, cbor=True)
problem(request("GET", "/notes?limit=many"), 400, detail="limit")
problem(request("GET", "/nowhere"), 404, detail="/nowhere")
headers, _ = problem(request("PUT", "/notes"), 405)
check(headers.get("Allow") == "GET,HEAD,POST", "Allow on 405", headers.get("Allow"))
headers, _ = problem(request("POST", "/notes/1", headers={"Accept": "application/cbor"}), 405,
                     cbor=True)
check(headers.get("Allow") == "GET,HEAD,PATCH,DELETE", "Allow on 405", headers.get("Allow"))

# The layer's own errors.
_, p = problem(request("GET", "/notes", headers={"Accept": "text/html"}), 406,
               detail="application/json, application/cbor, application/yaml")
status, headers, data = request("GET", "/notes", headers={"Accept": "text/html"})
check(b"\n" not in data, "406 is compact JSON", data)
headers, _ = problem(request("POST", "/notes", b"milk", {"Content-Type": "text/plain"}), 415)
check(headers.get("Accept") == "application/json, application/cbor, application/yaml",
      "Accept on 415", headers)
for ctype in ("application/json", "application/json-patch+json"):
    headers, _ = problem(request("PATCH", "/notes/1", b"{}", {"Content-Type": ctype}), 415)
    check(headers.get("Accept-Patch") == "application/merge-patch+json", "Accept-Patch", headers)
problem(request("POST", "/notes", b"{" + b" " * 70000 + b"}", JSON), 413)

# Undecodable bodies say what is wrong and where.
problem(request("POST", "/notes", json.dumps({"title": 5}), JSON), 400, detail="at .title")
problem(request("POST", "/notes", json.dumps({"title": "x"}), CBOR), 400, cbor=True,
        detail="the body is not CBOR; it looks like JSON")
problem(request("POST", "/notes", cbor2.dumps({"title": "x"}), {"Content-Type": "application/json"}),
        400, detail="the body is not JSON; it looks like CBOR")
problem(request("PATCH", "/notes/1", b"{", {"Content-Type": "application/merge-patch+json"}), 400,
        detail="invalid merge patch")
problem(request("POST", "/notes", json.dumps({"title": " "}), JSON), 422,
        detail="title must not be empty")

print(f"checked {CHECKS} things")
