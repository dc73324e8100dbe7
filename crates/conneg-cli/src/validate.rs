//! `conneg validate [--server URL | --openapi FILE...] FILE...`: the server's declarative
//! validation (KEP-4153), run before sending. Each object is checked against the schema its
//! server publishes for its apiVersion and kind (`x-kubernetes-group-version-kind` in the
//! group-version's OpenAPI v3 document), compiled with the validator the server itself runs
//! ([`conneg_apiserver::declarative::Validator`]), so the causes printed are those a create
//! would get in its 422, worded as kube-apiserver words them, one per line:
//! `Flunder.wardle.example.com "x" is invalid: spec.fischerReference: Invalid value: ...`.
//!
//! Inputs are YAML (multi-document), JSON (one value or a stream; an array is a list of
//! objects) or Kubernetes-profile CBOR (one item or a sequence, self-described or not), told
//! apart by their content. A list (`kind: List`, or `<Kind>List`, with `items`) is validated
//! item by item.
//!
//! Exit status: 0 when every object is valid (nothing printed), 1 when any is invalid (its
//! causes on stdout), 2 when the command cannot answer: usage, an unreadable or undecodable
//! input, a failed fetch, a kind the document does not describe, a schema that does not
//! compile. Then stdout stays empty and stderr has one line `error: <file>: ...`.
//!
//! Metadata is checked against what the document publishes of it: the name rule of the kind
//! (`metadata.name` a `k8s-long-name`, a DNS-1123 subdomain, as the server checks it, with its
//! messages). What is not checked: the rest of the server's metadata rules, defaulting
//! (the schema carries none; a server that defaults in code, as the sample's v1alpha1 does,
//! validates the defaulted object), and what only the server can know (admission, conflicts).

use std::collections::HashMap;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use clap::Args;
use conneg::client::{Client, ClientBody, ContentNegotiationLayer, Gates};
use conneg_apiserver::declarative::Validator;
use conneg_apiserver::validation;
use serde::Deserialize;
use serde_json::{Map, Value};

/// The most bytes read from one input file, or from one server response.
const MAX_INPUT: u64 = 64 << 20;

/// How deep an object may nest (as the server's YAML and patch decoding allows).
const MAX_DEPTH: usize = 100;

/// How long one request to the server may take.
const FETCH_TIMEOUT: Duration = Duration::from_secs(60);

/// The validate subcommand's arguments.
#[derive(Args)]
pub(crate) struct ValidateArgs {
    #[command(flatten)]
    schemas: SchemaSource,
    /// Objects to validate: YAML (`---`-separated documents), JSON or CBOR, told apart by
    /// content; `-` for stdin.
    #[arg(value_name = "FILE|-", required = true)]
    files: Vec<PathBuf>,
}

/// Where the schemas come from: exactly one of the two.
#[derive(Args)]
#[group(required = true, multiple = false)]
struct SchemaSource {
    /// Fetch the schemas from this server's /openapi/v3 (http://host:port), one document per
    /// group-version of the objects.
    #[arg(long, value_name = "URL")]
    server: Option<String>,
    /// An OpenAPI v3 document (JSON, e.g. saved from /openapi/v3/apis/GROUP/VERSION); may be
    /// given once per group-version.
    #[arg(long, value_name = "FILE")]
    openapi: Vec<PathBuf>,
}

/// Runs `conneg validate`.
pub(crate) fn main(args: ValidateArgs) -> ExitCode {
    match run(args) {
        Ok(report) => {
            let mut stdout = std::io::stdout().lock();
            let written = stdout
                .write_all(report.out.as_bytes())
                .and_then(|()| stdout.flush());
            match written {
                Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => {
                    crate::fail_with(&format!("cannot write output: {}", crate::io_msg(&e)), 2)
                }
                _ if report.invalid => ExitCode::from(1),
                _ => ExitCode::SUCCESS,
            }
        }
        Err(msg) => crate::fail_with(&msg, 2),
    }
}

/// What a run found: the causes, one per line, and whether there were any.
struct Report {
    out: String,
    invalid: bool,
}

fn run(args: ValidateArgs) -> Result<Report, String> {
    let mut source = match args.schemas.server {
        Some(url) => Schemas::Server(Box::new(Server::new(&url)?)),
        None => Schemas::Files(
            args.schemas
                .openapi
                .iter()
                .map(|p| Document::from_file(p))
                .collect::<Result<_, _>>()?,
        ),
    };
    // Everything is read and decoded before anything is fetched.
    let mut objects = Vec::new();
    let mut stdin_read = false;
    for file in &args.files {
        let (label, bytes) = if file.as_os_str() == "-" {
            if std::mem::replace(&mut stdin_read, true) {
                return Err("stdin (-) given more than once".into());
            }
            (
                "stdin".to_owned(),
                read_capped(std::io::stdin().lock(), "stdin")?,
            )
        } else {
            let label = file.display().to_string();
            let f = std::fs::File::open(file)
                .map_err(|e| format!("cannot read {label}: {}", crate::io_msg(&e)))?;
            (label.clone(), read_capped(f, &label)?)
        };
        let docs = decode(&bytes).map_err(|e| format!("{label}: {e}"))?;
        if docs.is_empty() {
            return Err(format!("{label}: no objects"));
        }
        let many = docs.len() > 1;
        for (i, doc) in docs.into_iter().enumerate() {
            let at = if many {
                format!("{label}, document {}", i + 1)
            } else {
                label.clone()
            };
            flatten(doc, at, None, &mut objects)?;
        }
    }

    let mut validators: HashMap<(usize, String), Validator> = HashMap::new();
    let mut report = Report {
        out: String::new(),
        invalid: false,
    };
    for obj in objects {
        let (doc, schema) = source.find(&obj)?;
        let key = (doc, schema);
        if !validators.contains_key(&key) {
            let document = source.document(doc);
            // Metadata too: the name rule a server publishes (`metadata.name`'s format).
            let v = Validator::compile(&document.schemas, &key.1)
                .map(Validator::with_metadata)
                .map_err(|e| {
                    format!(
                        "{}: the schema of {} in {} does not compile: {e}",
                        obj.at, obj.kind, document.origin
                    )
                })?;
            validators.insert(key.clone(), v);
        }
        let errs = validators[&key].validate(&obj.value, None);
        if errs.is_empty() {
            continue;
        }
        report.invalid = true;
        let name = obj.name();
        for e in errs {
            // kube-apiserver's 422 message with this one cause: `<Kind>.<group> "<name>" is
            // invalid: <field>: <detail>`.
            let status = validation::invalid(&obj.group, &obj.kind, name, &[e]);
            report.out.push_str(&one_line(&status.message));
            report.out.push('\n');
        }
    }
    Ok(report)
}

/// `s` with control characters escaped, so that each cause is one line.
fn one_line(s: &str) -> String {
    s.chars()
        .map(|c| {
            if c.is_control() {
                c.escape_default().to_string()
            } else {
                c.to_string()
            }
        })
        .collect()
}

/// Reads at most [`MAX_INPUT`] bytes; more is an error.
fn read_capped(r: impl Read, label: &str) -> Result<Vec<u8>, String> {
    read_limited(r, label, MAX_INPUT)
}

fn read_limited(r: impl Read, label: &str, limit: u64) -> Result<Vec<u8>, String> {
    let mut buf = Vec::new();
    r.take(limit + 1)
        .read_to_end(&mut buf)
        .map_err(|e| format!("cannot read {label}: {}", crate::io_msg(&e)))?;
    if buf.len() as u64 > limit {
        return Err(format!(
            "{label}: larger than {}, the most this command reads",
            size(limit)
        ));
    }
    Ok(buf)
}

/// `64 MiB`, or `5 bytes`.
fn size(n: u64) -> String {
    if n >= 1 << 20 && n.is_multiple_of(1 << 20) {
        format!("{} MiB", n >> 20)
    } else {
        format!("{n} bytes")
    }
}

/// The documents of one input: CBOR when it starts with the self-describe tag or is not
/// UTF-8, JSON when it starts with `{` or `[`, YAML otherwise. Each document is an object
/// (a JSON array: each of its items).
fn decode(bytes: &[u8]) -> Result<Vec<Value>, String> {
    let docs = if bytes.starts_with(&[0xd9, 0xd9, 0xf7]) || std::str::from_utf8(bytes).is_err() {
        decode_cbor(bytes)?
    } else {
        let text = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
        match text.iter().find(|b| !b.is_ascii_whitespace()) {
            Some(b'{' | b'[') => decode_json(text)?,
            _ => decode_yaml(bytes)?,
        }
    };
    for (i, d) in docs.iter().enumerate() {
        let which = if docs.len() > 1 {
            format!("document {}", i + 1)
        } else {
            "the document".to_owned()
        };
        if !d.is_object() {
            return Err(format!("{which} is not an object ({})", type_name(d)));
        }
        if depth(d) > MAX_DEPTH {
            return Err(format!(
                "{which} is nested more than {MAX_DEPTH} levels deep"
            ));
        }
    }
    Ok(docs)
}

fn type_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// The nesting depth of a value, without recursion.
fn depth(v: &Value) -> usize {
    let mut max = 0;
    let mut stack = vec![(v, 1usize)];
    while let Some((v, d)) = stack.pop() {
        max = max.max(d);
        match v {
            Value::Array(a) => stack.extend(a.iter().map(|x| (x, d + 1))),
            Value::Object(m) => stack.extend(m.values().map(|x| (x, d + 1))),
            _ => {}
        }
    }
    max
}

/// A CBOR item or sequence, in Kubernetes' strict profile.
fn decode_cbor(bytes: &[u8]) -> Result<Vec<Value>, String> {
    // Tags (the self-describe tag) count as levels too.
    let opts = conneg_cbor::DecodeOptions::new().max_depth(MAX_DEPTH + 2);
    let mut de = conneg_cbor::Deserializer::with_options(bytes, opts);
    let mut out = Vec::new();
    while de.position() < bytes.len() {
        let v = Value::deserialize(&mut de).map_err(|e| {
            let e = crate::decode_error(&e, None);
            if out.is_empty() {
                format!("invalid CBOR: {e}")
            } else {
                format!("invalid CBOR (item {}): {e}", out.len() + 1)
            }
        })?;
        out.push(v);
    }
    Ok(out)
}

/// A JSON value or a stream of them; an array stands for its items.
fn decode_json(text: &[u8]) -> Result<Vec<Value>, String> {
    let mut out = Vec::new();
    for (i, v) in serde_json::Deserializer::from_slice(text)
        .into_iter::<Value>()
        .enumerate()
    {
        match v.map_err(|e| format!("invalid JSON (value {}): {e}", i + 1))? {
            Value::Array(items) => out.extend(items),
            other => out.push(other),
        }
    }
    Ok(out)
}

/// `---`-separated YAML documents, split as Kubernetes' YAML reader splits them (a line
/// starting with `---`, followed by nothing but a comment), each decoded as the server decodes
/// an apply patch (UTF-8, nesting checked before parsing, no duplicate or non-string keys).
/// Empty documents are skipped.
fn decode_yaml(bytes: &[u8]) -> Result<Vec<Value>, String> {
    let mut out = Vec::new();
    let mut n = 0;
    for chunk in split_yaml(bytes)? {
        let blank = chunk.split(|&b| b == b'\n').all(|line| {
            let t = line.trim_ascii();
            t.is_empty() || t.starts_with(b"#") || t == b"..."
        });
        if blank {
            continue;
        }
        // Documents are numbered as they are reported later: empty ones do not count.
        n += 1;
        let which = format!("document {n}");
        let v = match conneg_apiserver::parse_patch(conneg::PatchType::ApplyYaml, chunk) {
            Ok(v) => v,
            Err(conneg_apiserver::PatchError::NotAnObject) => {
                return Err(format!("{which} is not an object"));
            }
            Err(e) => {
                let m = e.to_string();
                let m = m.strip_prefix("error decoding YAML: ").unwrap_or(&m);
                let m = m.replace("the patch is nested", "it is nested");
                return Err(format!("invalid YAML ({which}): {m}"));
            }
        };
        out.push(v);
    }
    Ok(out)
}

/// The documents of a YAML stream (k8s.io/apimachinery's `YAMLReader`).
fn split_yaml(bytes: &[u8]) -> Result<Vec<&[u8]>, String> {
    let mut docs = Vec::new();
    let mut start = 0;
    let mut pos = 0;
    let mut line_no = 0;
    while pos < bytes.len() {
        let end = bytes[pos..]
            .iter()
            .position(|&b| b == b'\n')
            .map_or(bytes.len(), |i| pos + i + 1);
        line_no += 1;
        let line = &bytes[pos..end];
        if let Some(rest) = line.strip_prefix(b"---") {
            let rest = rest.trim_ascii();
            if !rest.is_empty() && !rest.starts_with(b"#") {
                return Err(format!(
                    "invalid YAML: line {line_no}: only a comment may follow the document separator ---"
                ));
            }
            docs.push(&bytes[start..pos]);
            start = end;
        }
        pos = end;
    }
    docs.push(&bytes[start..]);
    Ok(docs)
}

/// One object to validate.
struct Object {
    /// Where it came from, for error messages: `file, document 2, items[0]`.
    at: String,
    group: String,
    version: String,
    kind: String,
    value: Value,
}

impl Object {
    /// The name the server would report: `metadata.name`, else `metadata.generateName`.
    fn name(&self) -> &str {
        ["/metadata/name", "/metadata/generateName"]
            .iter()
            .filter_map(|p| self.value.pointer(p).and_then(Value::as_str))
            .find(|n| !n.is_empty())
            .unwrap_or_default()
    }

    fn api_version(&self) -> String {
        if self.group.is_empty() {
            self.version.clone()
        } else {
            format!("{}/{}", self.group, self.version)
        }
    }
}

/// Adds `v` to `out`, or its items if it is a list (`kind: List` or `<Kind>List` with an
/// `items` array). Items without apiVersion and kind take the list's (minus `List`).
fn flatten(
    mut v: Value,
    at: String,
    inherited: Option<(&str, &str)>,
    out: &mut Vec<Object>,
) -> Result<(), String> {
    let Some(obj) = v.as_object_mut() else {
        return Err(format!("{at}: not an object ({})", type_name(&v)));
    };
    if let Some((api_version, kind)) = inherited {
        for (field, value) in [("apiVersion", api_version), ("kind", kind)] {
            if obj.get(field).is_none_or(|v| v.as_str() == Some("")) && !value.is_empty() {
                obj.insert(field.to_owned(), Value::String(value.to_owned()));
            }
        }
    }
    let text = |o: &Map<String, Value>, field: &str| -> Result<String, String> {
        match o.get(field) {
            Some(Value::String(s)) if !s.is_empty() => Ok(s.clone()),
            None | Some(Value::String(_)) => Err(format!("{at}: the object has no {field}")),
            Some(other) => Err(format!(
                "{at}: {field} is {}, not a string",
                type_name(other)
            )),
        }
    };
    let api_version = text(obj, "apiVersion")?;
    let kind = text(obj, "kind")?;
    if kind.ends_with("List")
        && let Some(Value::Array(items)) = obj.remove("items")
    {
        let item_kind = kind.strip_suffix("List").unwrap_or_default();
        let item_api_version = if item_kind.is_empty() {
            ""
        } else {
            &api_version
        };
        for (i, item) in items.into_iter().enumerate() {
            flatten(
                item,
                format!("{at}, items[{i}]"),
                Some((item_api_version, item_kind)),
                out,
            )?;
        }
        return Ok(());
    }
    let (group, version) = match api_version.split_once('/') {
        None => (String::new(), api_version.clone()),
        Some((g, v)) if !g.is_empty() && !v.is_empty() && !v.contains('/') => {
            (g.to_owned(), v.to_owned())
        }
        Some(_) => {
            return Err(format!(
                "{at}: apiVersion {} is not GROUP/VERSION or VERSION",
                conneg::Status::quote(&api_version)
            ));
        }
    };
    out.push(Object {
        at,
        group,
        version,
        kind,
        value: v,
    });
    Ok(())
}

/// An OpenAPI v3 document's schemas, indexed by group-version-kind.
struct Document {
    /// Where it came from (a file or a URL), for messages.
    origin: String,
    schemas: Map<String, Value>,
    /// (group, version, kind) → schema name; the first in name order when several claim it.
    by_gvk: HashMap<(String, String, String), String>,
}

impl Document {
    fn new(origin: String, doc: Value) -> Result<Self, String> {
        let Value::Object(mut doc) = doc else {
            return Err(format!(
                "{origin}: not an OpenAPI v3 document (not an object)"
            ));
        };
        let Some(Value::Object(schemas)) = doc
            .remove("components")
            .and_then(|mut c| c.get_mut("schemas").map(Value::take))
        else {
            return Err(format!(
                "{origin}: not an OpenAPI v3 document (no components.schemas)"
            ));
        };
        let mut by_gvk = HashMap::new();
        for (name, schema) in &schemas {
            let gvks = match schema.get("x-kubernetes-group-version-kind") {
                Some(Value::Array(a)) => a.iter().collect(),
                Some(one @ Value::Object(_)) => vec![one],
                _ => continue,
            };
            for gvk in gvks {
                let field = |f: &str| gvk.get(f).and_then(Value::as_str).map(str::to_owned);
                if let (Some(g), Some(v), Some(k)) =
                    (field("group"), field("version"), field("kind"))
                {
                    by_gvk.entry((g, v, k)).or_insert_with(|| name.clone());
                }
            }
        }
        Ok(Document {
            origin,
            schemas,
            by_gvk,
        })
    }

    fn from_file(path: &Path) -> Result<Self, String> {
        let label = path.display().to_string();
        let f = std::fs::File::open(path)
            .map_err(|e| format!("cannot read {label}: {}", crate::io_msg(&e)))?;
        let bytes = read_capped(f, &label)?;
        let doc: Value =
            serde_json::from_slice(&bytes).map_err(|e| format!("{label}: invalid JSON: {e}"))?;
        Document::new(label, doc)
    }

    fn schema_of(&self, o: &Object) -> Option<&String> {
        self.by_gvk
            .get(&(o.group.clone(), o.version.clone(), o.kind.clone()))
    }
}

/// Where the schemas come from.
enum Schemas {
    /// Documents given with --openapi, searched in order.
    Files(Vec<Document>),
    /// A server, fetched from as group-versions come up.
    Server(Box<Server>),
}

impl Schemas {
    /// The document (an index into this source's documents) and the name of the schema of
    /// `o`'s kind.
    fn find(&mut self, o: &Object) -> Result<(usize, String), String> {
        let no_match = || {
            format!(
                "{}: no matches for kind {} in version {}",
                o.at,
                conneg::Status::quote(&o.kind),
                conneg::Status::quote(&o.api_version())
            )
        };
        match self {
            Schemas::Files(docs) => docs
                .iter()
                .enumerate()
                .find_map(|(i, d)| d.schema_of(o).map(|s| (i, s.clone())))
                .ok_or_else(|| {
                    let names: Vec<&str> = docs.iter().map(|d| d.origin.as_str()).collect();
                    format!("{} (in {})", no_match(), names.join(", "))
                }),
            Schemas::Server(server) => {
                let Some(i) = server.document(o)? else {
                    return Err(format!(
                        "{}: the server publishes no OpenAPI for this version",
                        no_match()
                    ));
                };
                let d = &server.docs[i];
                d.schema_of(o)
                    .map(|s| (i, s.clone()))
                    .ok_or_else(|| format!("{} (in {})", no_match(), d.origin))
            }
        }
    }

    fn document(&self, i: usize) -> &Document {
        match self {
            Schemas::Files(docs) => &docs[i],
            Schemas::Server(s) => &s.docs[i],
        }
    }
}

/// A server's OpenAPI v3 documents, fetched once each.
struct Server {
    runtime: tokio::runtime::Runtime,
    client: Client,
    /// `/openapi/v3`'s `paths`, once fetched.
    index: Option<Map<String, Value>>,
    docs: Vec<Document>,
    /// Index path (`apis/<group>/<version>`, `api/v1`) → its document in `docs`, or `None`
    /// when the server publishes none.
    loaded: HashMap<String, Option<usize>>,
}

impl Server {
    fn new(url: &str) -> Result<Self, String> {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| format!("cannot start the runtime: {e}"))?;
        // OpenAPI documents are JSON: no CBOR to negotiate.
        let client = Client::builder(url)
            .map_err(|e| e.to_string())?
            .layer(ContentNegotiationLayer::new().gates(Gates::json_only()))
            .build();
        Ok(Server {
            runtime,
            client,
            index: None,
            docs: Vec::new(),
            loaded: HashMap::new(),
        })
    }

    /// The document of `o`'s group-version, fetched on first use; `None` when the server's
    /// index lists none.
    fn document(&mut self, o: &Object) -> Result<Option<usize>, String> {
        let key = if o.group.is_empty() {
            format!("api/{}", o.version)
        } else {
            format!("apis/{}/{}", o.group, o.version)
        };
        if let Some(i) = self.loaded.get(&key) {
            return Ok(*i);
        }
        if self.index.is_none() {
            let index = self.get("/openapi/v3")?;
            let Some(Value::Object(paths)) = index.get("paths") else {
                return Err(format!(
                    "{}/openapi/v3: not an OpenAPI v3 index (no paths)",
                    self.client.server()
                ));
            };
            self.index = Some(paths.clone());
        }
        let url = self
            .index
            .as_ref()
            .and_then(|paths| paths.get(&key))
            .map(|entry| {
                entry
                    .get("serverRelativeURL")
                    .and_then(Value::as_str)
                    .filter(|u| u.starts_with('/'))
                    .map(str::to_owned)
                    .ok_or_else(|| {
                        format!(
                            "{}/openapi/v3: the entry of {key} has no serverRelativeURL",
                            self.client.server()
                        )
                    })
            })
            .transpose()?;
        let found = match url {
            None => None,
            Some(url) => {
                let doc = self.get(&url)?;
                let origin = format!("{}{url}", self.client.server());
                self.docs.push(Document::new(origin, doc)?);
                Some(self.docs.len() - 1)
            }
        };
        self.loaded.insert(key, found);
        Ok(found)
    }

    /// GETs `path` as JSON, its body at most [`MAX_INPUT`] bytes, within [`FETCH_TIMEOUT`].
    fn get(&self, path: &str) -> Result<Value, String> {
        let url = format!("{}{path}", self.client.server());
        let fetch = async { tokio::time::timeout(FETCH_TIMEOUT, fetch(&self.client, path)).await };
        match self.runtime.block_on(fetch) {
            Ok(r) => r.map_err(|e| format!("cannot fetch {url}: {e}")),
            Err(_) => Err(format!(
                "cannot fetch {url}: no answer within {} s",
                FETCH_TIMEOUT.as_secs()
            )),
        }
    }
}

async fn fetch(client: &Client, path: &str) -> Result<Value, String> {
    use http_body_util::BodyExt;

    let mut req = http::Request::new(ClientBody::Empty);
    *req.uri_mut() = client.uri(path).map_err(|e| e.to_string())?;
    let res = client.send(req).await.map_err(|e| e.to_string())?;
    let (parts, body) = res.into_parts();
    let bytes = http_body_util::Limited::new(body, MAX_INPUT as usize)
        .collect()
        .await
        .map_err(|e| {
            if e.is::<http_body_util::LengthLimitError>() {
                format!(
                    "the response is larger than {}, the most this command reads",
                    size(MAX_INPUT)
                )
            } else {
                format!("reading the response: {e}")
            }
        })?
        .to_bytes();
    let content_type = parts
        .headers
        .get(http::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok());
    if !parts.status.is_success() {
        let status = conneg::client::decode_response_body::<conneg::Status>(content_type, &bytes)
            .ok()
            .filter(|s| s.kind == "Status" && !s.message.is_empty());
        return Err(match status {
            Some(s) => format!("{} ({})", s.message, parts.status),
            None => format!("the server answered {}", parts.status),
        });
    }
    conneg::client::decode_response_body::<Value>(content_type, &bytes).map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn formats_are_told_apart_by_content() {
        let obj = json!({"apiVersion": "v1", "kind": "X", "metadata": {"name": "a"}});
        // JSON: a value, a stream, an array of objects.
        assert_eq!(
            decode(obj.to_string().as_bytes()).unwrap(),
            vec![obj.clone()]
        );
        let stream = format!(" {obj}\n{obj}");
        assert_eq!(decode(stream.as_bytes()).unwrap().len(), 2);
        assert_eq!(
            decode(format!("[{obj},{obj}]").as_bytes()).unwrap().len(),
            2
        );
        // CBOR: self-described or not, one item or a sequence.
        let cbor = conneg_cbor::to_vec(&obj).unwrap();
        assert_eq!(&cbor[..3], &[0xd9, 0xd9, 0xf7]);
        assert_eq!(decode(&cbor).unwrap(), vec![obj.clone()]);
        let mut two = cbor[3..].to_vec();
        two.extend_from_slice(&cbor);
        assert_eq!(decode(&two).unwrap(), [obj.clone(), obj.clone()]);
        // YAML: documents split on `---` lines, empty ones skipped.
        let yaml = "---\n# nothing\n---\napiVersion: v1\nkind: X\nmetadata:\n  name: a\n--- # c\nkind: X\napiVersion: v1\nmetadata: {name: a}\n...\n";
        assert_eq!(decode(yaml.as_bytes()).unwrap(), [obj.clone(), obj]);
    }

    #[test]
    fn what_is_not_an_object_is_refused() {
        assert_eq!(
            decode(b"hello\n").unwrap_err(),
            "document 1 is not an object"
        );
        assert_eq!(
            decode(b"[1]").unwrap_err(),
            "the document is not an object (a number)"
        );
        assert!(decode(b"a: b\n--- x\n").unwrap_err().contains("line 2"));
        assert_eq!(
            decode(b"---\n# empty\n---\na: b\n---\n[]\n").unwrap_err(),
            "document 2 is not an object"
        );
        assert!(decode(b"a: 1\na: 2\n").unwrap_err().contains("duplicate"));
        assert!(decode(b"{\"a\":").unwrap_err().starts_with("invalid JSON"));
        assert!(
            decode(&[0xa1, 0x61])
                .unwrap_err()
                .starts_with("invalid CBOR")
        );
        let deep = format!("a: {}{}\n", "[".repeat(200), "]".repeat(200));
        assert!(decode(deep.as_bytes()).unwrap_err().contains("nested"));
        let deep = format!("{}{}", "[".repeat(150), "]".repeat(150));
        assert!(decode(deep.as_bytes()).is_err());
        let mut deep = vec![0xa1, 0x61, b'a'];
        for _ in 0..120 {
            deep.extend_from_slice(&[0xa1, 0x61, b'a']);
        }
        deep.push(0x01);
        assert!(decode(&deep).unwrap_err().contains("depth"));
    }

    #[test]
    fn lists_are_flattened() {
        let mut out = Vec::new();
        let list = json!({"apiVersion": "g/v1", "kind": "XList", "items": [
            {"metadata": {"name": "a"}},
            {"apiVersion": "v1", "kind": "List", "items": [{"apiVersion": "v1", "kind": "Y"}]},
        ]});
        flatten(list, "f".into(), None, &mut out).unwrap();
        let got: Vec<(&str, &str, &str, &str)> = out
            .iter()
            .map(|o| {
                (
                    o.at.as_str(),
                    o.group.as_str(),
                    o.version.as_str(),
                    o.kind.as_str(),
                )
            })
            .collect();
        assert_eq!(
            got,
            [
                ("f, items[0]", "g", "v1", "X"),
                ("f, items[1], items[0]", "", "v1", "Y")
            ]
        );
        assert_eq!(out[0].name(), "a");
        let err = flatten(
            json!({"apiVersion": "v1", "kind": "List", "items": [{"kind": "Y"}]}),
            "f".into(),
            None,
            &mut Vec::new(),
        )
        .unwrap_err();
        assert_eq!(err, "f, items[0]: the object has no apiVersion");
        let err = flatten(
            json!({"apiVersion": "a/b/c", "kind": "Y"}),
            "f".into(),
            None,
            &mut Vec::new(),
        )
        .unwrap_err();
        assert!(err.contains("not GROUP/VERSION"), "{err}");
    }

    #[test]
    fn reads_are_capped() {
        assert_eq!(read_limited(&b"12345"[..], "x", 5).unwrap(), b"12345");
        assert_eq!(
            read_limited(&b"123456"[..], "x", 5).unwrap_err(),
            "x: larger than 5 bytes, the most this command reads"
        );
    }
}
