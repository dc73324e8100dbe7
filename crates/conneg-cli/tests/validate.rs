//! `conneg validate` against the sample API server (run in-process, as in `client.rs`): what
//! the command prints for an object is what the server's 422 says when the object is sent,
//! online (`--server`) and offline (`--openapi` with the documents saved from the server).

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use clap::Parser;
use conneg::Status;
use conneg::client::{Client, ClientBody, ContentNegotiationLayer, Error, Gates};
use conneg_apiserver::config::StorageArgs;
use conneg_apiserver::server::{ServerOptions, router};
use http::Method;
use serde_json::{Value, json};

const BETA: &str = "wardle.example.com/v1beta1";
const ALPHA: &str = "wardle.example.com/v1alpha1";

struct TestServer {
    url: String,
    runtime: tokio::runtime::Runtime,
}

#[derive(Parser)]
struct Storage {
    #[command(flatten)]
    storage: StorageArgs,
}

fn start() -> TestServer {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    let addr = runtime.block_on(async {
        let args = Storage::try_parse_from(["test", "--storage", "memory"]).unwrap();
        let opened = args
            .storage
            .open(sample_apiserver::api::GROUP)
            .await
            .unwrap();
        let options = ServerOptions {
            cbor: true,
            standalone: false,
            ..Default::default()
        };
        let app = router(sample_apiserver::server().build(opened, options));
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
        addr
    });
    TestServer {
        url: format!("http://{addr}"),
        runtime,
    }
}

impl TestServer {
    fn request(&self, method: Method, path: &str, body: ClientBody) -> Result<Value, Error> {
        self.runtime.block_on(async {
            let client = Client::builder(&self.url)
                .unwrap()
                .layer(ContentNegotiationLayer::new().gates(Gates::json_only()))
                .build();
            client
                .request::<Value>(method, path, body)
                .await
                .map(|r| r.value)
        })
    }

    /// POSTs `obj` to its collection: `Ok` when created, else the server's Status.
    fn create(&self, obj: &Value) -> Result<Value, Box<Status>> {
        let path = format!(
            "/apis/{}/namespaces/default/flunders",
            obj["apiVersion"].as_str().unwrap()
        );
        self.request(Method::POST, &path, ClientBody::Object(obj.clone()))
            .map_err(|e| match e {
                Error::Status(s) => s,
                other => panic!("POST {path}: {other}"),
            })
    }

    fn get(&self, path: &str) -> Value {
        self.request(Method::GET, path, ClientBody::Empty)
            .unwrap_or_else(|e| panic!("GET {path}: {e}"))
    }
}

fn flunder(api_version: &str, name: &str, spec: Value) -> Value {
    json!({"apiVersion": api_version, "kind": "Flunder", "metadata": {"name": name}, "spec": spec})
}

/// The invalid Flunders of the issue.
fn invalid_flunders() -> Vec<Value> {
    vec![
        flunder(
            BETA,
            "both",
            json!({"flunderReference": "a", "fischerReference": "b", "referenceType": "Flunder"}),
        ),
        flunder(BETA, "untyped", json!({"fischerReference": "b"})),
        flunder(
            BETA,
            "bogus",
            json!({"flunderReference": "a", "referenceType": "Bogus"}),
        ),
        flunder(ALPHA, "fischer", json!({"referenceType": "Fischer"})),
        // Names the kind's published name rule refuses, as the server's metadata checks do.
        flunder(
            BETA,
            "Bad_Name",
            json!({"flunderReference": "a", "referenceType": "Flunder"}),
        ),
        flunder(ALPHA, &"n".repeat(254), json!({"reference": "a"})),
    ]
}

fn valid_flunders() -> Vec<Value> {
    vec![
        flunder(
            BETA,
            "fine",
            json!({"flunderReference": "a", "referenceType": "Flunder"}),
        ),
        // v1alpha1 defaults the type from the reference.
        flunder(ALPHA, "defaulted", json!({"reference": "a"})),
    ]
}

/// The lines `conneg validate` should print for `obj`: one per cause of the server's 422 for
/// it, each as the server's message would be with that cause alone. Empty when the server
/// creates it.
fn expected_lines(s: &TestServer, obj: &Value) -> String {
    let status = match s.create(obj) {
        Ok(_) => return String::new(),
        Err(status) => status,
    };
    assert_eq!(status.code, 422, "{status:?}");
    let name = obj["metadata"]["name"].as_str().unwrap();
    let prefix = format!("Flunder.wardle.example.com \"{name}\" is invalid: ");
    assert!(status.message.starts_with(&prefix), "{}", status.message);
    let causes = status.details.expect("details").causes;
    assert!(!causes.is_empty());
    causes
        .iter()
        .map(|c| {
            assert!(!c.field.is_empty(), "{c:?}");
            format!("{prefix}{}: {}\n", c.field, c.message)
        })
        .collect()
}

/// Runs `conneg validate args...` with `stdin`.
fn validate(args: &[&str], stdin: &[u8]) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_conneg"))
        .arg("validate")
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(stdin).unwrap();
    child.wait_with_output().unwrap()
}

fn text(b: &[u8]) -> String {
    String::from_utf8(b.to_vec()).unwrap()
}

/// The exit code and stdout of a run that did answer (0 or 1, nothing on stderr).
fn answer(out: &Output) -> (i32, String) {
    assert!(out.stderr.is_empty(), "stderr: {}", text(&out.stderr));
    (out.status.code().unwrap(), text(&out.stdout))
}

/// A run that could not answer: exit 2, nothing on stdout, one `error: ` line on stderr.
fn error(out: &Output) -> String {
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    assert!(out.stdout.is_empty(), "stdout: {}", text(&out.stdout));
    assert!(stderr.starts_with("error: "), "{stderr}");
    assert_eq!(stderr.matches('\n').count(), 1, "{stderr}");
    stderr
}

fn write(dir: &Path, name: &str, bytes: impl AsRef<[u8]>) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, bytes).unwrap();
    p
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// The group-version documents of the server, saved in `dir`, as `--openapi` arguments.
fn save_documents(server: &TestServer, dir: &Path) -> Vec<String> {
    let index = server.get("/openapi/v3");
    let mut args = Vec::new();
    for gv in [
        "apis/wardle.example.com/v1beta1",
        "apis/wardle.example.com/v1alpha1",
    ] {
        let url = index["paths"][gv]["serverRelativeURL"].as_str().unwrap();
        let doc = server.get(url);
        let file = write(
            dir,
            &format!("{}.json", gv.replace('/', "_")),
            doc.to_string(),
        );
        args.push("--openapi".to_owned());
        args.push(s(&file).to_owned());
    }
    args
}

#[test]
fn server_answers_as_its_422s() {
    let server = start();
    let dir = tempfile::tempdir().unwrap();
    let mut all_files = Vec::new();
    let mut all_expected = String::new();
    for (i, obj) in invalid_flunders().iter().enumerate() {
        let file = write(dir.path(), &format!("bad{i}.json"), obj.to_string());
        // Validated before it is sent, so that the object is not there yet either way.
        let out = validate(&["--server", &server.url, s(&file)], b"");
        let expected = expected_lines(&server, obj);
        assert!(!expected.is_empty(), "the server accepted {obj}");
        assert_eq!(answer(&out), (1, expected.clone()), "{obj}");
        all_files.push(file);
        all_expected.push_str(&expected);
    }
    // The wording, pinned for one cause of each kind of check (CEL rule; enum).
    assert!(all_expected.starts_with(
        "Flunder.wardle.example.com \"both\" is invalid: spec.fischerReference: Invalid value: \"object\": cannot be set with flunderReference at the same time\n"
    ), "{all_expected}");
    assert!(all_expected.contains(
        "Flunder.wardle.example.com \"bogus\" is invalid: spec.referenceType: Unsupported value: \"Bogus\": supported values: \"Fischer\", \"Flunder\"\n"
    ), "{all_expected}");
    assert!(all_expected.contains(
        "Flunder.wardle.example.com \"Bad_Name\" is invalid: metadata.name: Invalid value: \"Bad_Name\": a lowercase RFC 1123 subdomain must consist of"
    ), "{all_expected}");

    for (i, obj) in valid_flunders().into_iter().enumerate() {
        let file = write(dir.path(), &format!("good{i}.json"), obj.to_string());
        let out = validate(&["--server", &server.url, s(&file)], b"");
        assert_eq!(answer(&out), (0, String::new()), "{obj}");
        server
            .create(&obj)
            .expect("the server accepts what validate accepts");
        all_files.push(file);
    }

    // All at once: the causes in file order, exit 1.
    let mut args = vec!["--server", &server.url];
    args.extend(all_files.iter().map(|f| s(f)));
    assert_eq!(answer(&validate(&args, b"")), (1, all_expected));
}

#[test]
fn saved_documents_answer_the_same_offline() {
    let server = start();
    let dir = tempfile::tempdir().unwrap();
    let openapi = save_documents(&server, dir.path());
    let mut cases = Vec::new();
    for (i, obj) in invalid_flunders()
        .into_iter()
        .chain(valid_flunders())
        .enumerate()
    {
        let file = write(dir.path(), &format!("o{i}.json"), obj.to_string());
        let online = answer(&validate(&["--server", &server.url, s(&file)], b""));
        let expected = expected_lines(&server, &obj);
        assert_eq!(online.1, expected);
        cases.push((file, online));
    }
    drop(server);

    for (file, online) in &cases {
        let mut args: Vec<&str> = openapi.iter().map(String::as_str).collect();
        args.push(s(file));
        assert_eq!(&answer(&validate(&args, b"")), online, "{}", file.display());
    }
    assert!(cases.iter().filter(|(_, (code, _))| *code == 1).count() == 6);
    assert!(cases.iter().filter(|(_, (code, _))| *code == 0).count() == 2);
}

#[test]
fn yaml_json_cbor_stdin_and_lists() {
    let server = start();
    let dir = tempfile::tempdir().unwrap();
    let url = server.url.clone();
    let bad = invalid_flunders();
    let lines: Vec<String> = bad.iter().map(|o| expected_lines(&server, o)).collect();

    // YAML, several documents (an empty one, comments, flow and block style).
    let yaml = "---\n# the first is empty\n---\napiVersion: wardle.example.com/v1beta1\nkind: Flunder\nmetadata:\n  name: both\nspec:\n  flunderReference: a\n  fischerReference: b\n  referenceType: Flunder\n--- # valid\n{apiVersion: wardle.example.com/v1beta1, kind: Flunder, metadata: {name: ok}, spec: {}}\n---\napiVersion: wardle.example.com/v1alpha1\nkind: Flunder\nmetadata:\n  name: fischer\nspec:\n  referenceType: Fischer\n";
    let f = write(dir.path(), "many.yaml", yaml);
    let out = validate(&["--server", &url, s(&f)], b"");
    assert_eq!(answer(&out), (1, format!("{}{}", lines[0], lines[3])));

    // The same from stdin.
    let out = validate(&["--server", &url, "-"], yaml.as_bytes());
    assert_eq!(answer(&out), (1, format!("{}{}", lines[0], lines[3])));

    // JSON: a v1 List, and a stream of two objects.
    let list = json!({"apiVersion": "v1", "kind": "List", "items": [bad[1], valid_flunders()[0]]});
    let f = write(dir.path(), "list.json", list.to_string());
    assert_eq!(
        answer(&validate(&["--server", &url, s(&f)], b"")),
        (1, lines[1].clone())
    );
    let f = write(
        dir.path(),
        "stream.json",
        format!("{}\n{}\n", bad[2], bad[1]),
    );
    assert_eq!(
        answer(&validate(&["--server", &url, s(&f)], b"")),
        (1, format!("{}{}", lines[2], lines[1]))
    );

    // A FlunderList in YAML: its items take its apiVersion and kind.
    let yaml = "apiVersion: wardle.example.com/v1alpha1\nkind: FlunderList\nmetadata: {}\nitems:\n- metadata: {name: fischer}\n  spec: {referenceType: Fischer}\n- metadata: {name: fine}\n  spec: {reference: x}\n";
    let f = write(dir.path(), "list.yaml", yaml);
    assert_eq!(
        answer(&validate(&["--server", &url, s(&f)], b"")),
        (1, lines[3].clone())
    );

    // CBOR: self-described, and a plain sequence of two items from stdin.
    let cbor = conneg_cbor::to_vec(&bad[0]).unwrap();
    assert_eq!(&cbor[..3], &[0xd9, 0xd9, 0xf7]);
    let f = write(dir.path(), "one.cbor", &cbor);
    assert_eq!(
        answer(&validate(&["--server", &url, s(&f)], b"")),
        (1, lines[0].clone())
    );
    let mut seq = conneg_cbor::to_vec(&bad[3]).unwrap()[3..].to_vec();
    seq.extend(&conneg_cbor::to_vec(&valid_flunders()[1]).unwrap()[3..]);
    assert_eq!(
        answer(&validate(&["--server", &url, "-"], &seq)),
        (1, lines[3].clone())
    );

    // Valid in every format: exit 0, nothing printed.
    let good = valid_flunders();
    let f = write(
        dir.path(),
        "good.yaml",
        "apiVersion: wardle.example.com/v1beta1\nkind: Flunder\nmetadata: {name: g}\nspec: {flunderReference: a, referenceType: Flunder}\n",
    );
    let c = write(
        dir.path(),
        "good.cbor",
        conneg_cbor::to_vec(&good[1]).unwrap(),
    );
    let j = write(dir.path(), "good.json", good[0].to_string());
    assert_eq!(
        answer(&validate(&["--server", &url, s(&f), s(&c), s(&j)], b"")),
        (0, String::new())
    );
}

#[test]
fn errors_exit_2_with_a_message() {
    let server = start();
    let dir = tempfile::tempdir().unwrap();
    let url = server.url.clone();
    let good = write(dir.path(), "good.json", valid_flunders()[0].to_string());
    let bad = write(dir.path(), "bad.json", invalid_flunders()[0].to_string());

    // Not an object.
    let f = write(dir.path(), "scalar.yaml", "just a string\n");
    let e = error(&validate(&["--server", &url, s(&f)], b""));
    assert!(
        e.contains("scalar.yaml: document 1 is not an object"),
        "{e}"
    );
    let f = write(dir.path(), "numbers.json", "[1, 2]");
    let e = error(&validate(&["--server", &url, s(&f)], b""));
    assert!(
        e.contains("numbers.json: document 1 is not an object (a number)"),
        "{e}"
    );
    // Undecodable.
    let f = write(dir.path(), "junk.bin", [0xff, 0x00, 0x01]);
    let e = error(&validate(&["--server", &url, s(&f)], b""));
    assert!(e.contains("junk.bin: invalid CBOR"), "{e}");
    // No apiVersion.
    let e = error(&validate(&["--server", &url, "-"], b"kind: Flunder\n"));
    assert!(e.contains("stdin: the object has no apiVersion"), "{e}");

    // An unknown kind in a known group-version, and an unknown group-version.
    let f = write(
        dir.path(),
        "kind.yaml",
        "apiVersion: wardle.example.com/v1beta1\nkind: Flounder\nmetadata: {name: x}\n",
    );
    let e = error(&validate(&["--server", &url, s(&f)], b""));
    assert!(
        e.contains(
            "kind.yaml: no matches for kind \"Flounder\" in version \"wardle.example.com/v1beta1\""
        ),
        "{e}"
    );
    let f2 = write(
        dir.path(),
        "gv.yaml",
        "apiVersion: nowhere.example.com/v1\nkind: Flunder\nmetadata: {name: x}\n",
    );
    let e = error(&validate(&["--server", &url, s(&f2)], b""));
    assert!(
        e.contains("the server publishes no OpenAPI for this version"),
        "{e}"
    );
    // Offline, too.
    let openapi = save_documents(&server, dir.path());
    let mut args: Vec<&str> = openapi.iter().map(String::as_str).collect();
    args.push(s(&f));
    let e = error(&validate(&args, b""));
    assert!(e.contains("no matches for kind \"Flounder\""), "{e}");

    // A missing file; an error after an invalid object still leaves stdout empty.
    let missing = dir.path().join("missing.yaml");
    let e = error(&validate(&["--server", &url, s(&bad), s(&missing)], b""));
    assert!(
        e.contains("cannot read") && e.contains("missing.yaml"),
        "{e}"
    );

    // Usage: neither --server nor --openapi, both, no file.
    for args in [
        vec![s(&good)],
        vec!["--server", &url, "--openapi", s(&good), s(&good)],
        vec!["--server", &url],
    ] {
        let out = validate(&args, b"");
        assert_eq!(out.status.code(), Some(2), "{args:?}: {out:?}");
        assert!(out.stdout.is_empty());
        assert!(text(&out.stderr).contains("Usage"), "{}", text(&out.stderr));
    }

    // A server that cannot be reached; a document that is not OpenAPI.
    drop(server);
    let e = error(&validate(&["--server", &url, s(&good)], b""));
    assert!(e.contains("cannot fetch"), "{e}");
    let e = error(&validate(&["--openapi", s(&good), s(&good)], b""));
    assert!(e.contains("not an OpenAPI v3 document"), "{e}");

    // A schema that does not compile: a rule that does not parse.
    let doc = json!({"openapi": "3.0.0", "components": {"schemas": {"x.Widget": {
        "type": "object",
        "x-kubernetes-group-version-kind": [{"group": "example.com", "version": "v1", "kind": "Widget"}],
        "x-kubernetes-validations": [{"rule": "self.size >", "message": "m"}],
        "properties": {"size": {"type": "integer"}},
    }}}});
    let d = write(dir.path(), "widget.json", doc.to_string());
    let w = write(
        dir.path(),
        "w.yaml",
        "apiVersion: example.com/v1\nkind: Widget\nsize: 1\n",
    );
    let e = error(&validate(&["--openapi", s(&d), s(&w)], b""));
    assert!(
        e.contains("w.yaml: the schema of Widget") && e.contains("does not compile"),
        "{e}"
    );
}
