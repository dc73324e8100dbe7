//! The client subcommands: `get`, `create`, `apply`, `delete`, `watch` against a server, with
//! CBOR preferred, per-(method, resource) 415 fallback (conneg::client), and what a 415
//! taught kept between runs (see `cache`).

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{Args, Subcommand};
use conneg::client::{
    Client, ClientBody, ContentNegotiationLayer, ENV_ALLOW_CBOR, ENV_PREFER_CBOR, Error, Exchange,
    FallbackMemory, Gates,
};
use conneg::parse_bool;
use conneg::watch::WatchEvent;
use futures_util::StreamExt;
use http::Method;
use serde::Deserialize;
use serde_json::Value;

use crate::cache;

/// Options every client subcommand takes.
#[derive(Args)]
pub(crate) struct Common {
    /// The server, e.g. http://127.0.0.1:8080.
    #[arg(long, value_name = "URL")]
    server: String,
    #[command(flatten)]
    format: Format,
    /// Report on stderr the request and response media types and any 415 fallback.
    #[arg(short, long)]
    verbose: bool,
    /// Neither read nor write the fallback cache.
    #[arg(long)]
    no_cache: bool,
    /// The resource path, e.g. /apis/wardle.example.com/v1beta1/namespaces/default/flunders.
    #[arg(value_name = "PATH")]
    path: String,
}

/// The gates, overriding KUBE_FEATURE_ClientsAllowCBOR / KUBE_FEATURE_ClientsPreferCBOR
/// (which default to on).
#[derive(Args)]
#[group(multiple = false)]
struct Format {
    /// JSON only: never send or accept CBOR (ClientsAllowCBOR off).
    #[arg(long)]
    json: bool,
    /// Accept CBOR responses but send JSON bodies (ClientsAllowCBOR on, ClientsPreferCBOR off).
    #[arg(long)]
    cbor: bool,
    /// Send CBOR bodies and prefer CBOR responses, falling back on 415 (both gates on; the
    /// default).
    #[arg(long)]
    prefer_cbor: bool,
}

impl Format {
    fn gates(&self) -> Gates {
        if self.json {
            Gates::json_only()
        } else if self.cbor {
            Gates::new().prefer_cbor(false)
        } else if self.prefer_cbor {
            Gates::new()
        } else {
            // conneg logs invalid values through `tracing`, which this command does not print.
            for name in [ENV_ALLOW_CBOR, ENV_PREFER_CBOR] {
                if let Some(value) = std::env::var_os(name) {
                    let value = value.to_string_lossy();
                    if parse_bool(&value).is_none() {
                        eprintln!("conneg: warning: ignoring {name}={value:?}: not a boolean");
                    }
                }
            }
            Gates::from_env()
        }
    }
}

/// Input objects for create and apply.
#[derive(Args)]
pub(crate) struct Objects {
    /// A file holding one JSON or CBOR object or a stream of them (a JSON stream, or a CBOR
    /// sequence), a directory of such files (read in name order), or `-` for stdin.
    #[arg(
        short = 'f',
        long = "filename",
        value_name = "FILE|DIR|-",
        required = true
    )]
    file: PathBuf,
}

/// The client subcommands.
#[derive(Subcommand)]
pub(crate) enum ClientCmd {
    /// GET an object (object path) or list a collection (collection path); print it as JSON.
    Get {
        #[command(flatten)]
        common: Common,
    },
    /// POST each object of -f to a collection path; print what the server created, one per
    /// line.
    Create {
        #[command(flatten)]
        common: Common,
        #[command(flatten)]
        objects: Objects,
    },
    /// Server-side apply of -f to an object path (several objects: PATH is their collection and
    /// each goes to PATH/metadata.name); print the results.
    Apply {
        #[command(flatten)]
        common: Common,
        #[command(flatten)]
        objects: Objects,
        /// The field manager.
        #[arg(long, default_value = "conneg")]
        field_manager: String,
        /// Take over fields other managers own.
        #[arg(long)]
        force: bool,
    },
    /// DELETE an object path; print what the server returned.
    Delete {
        #[command(flatten)]
        common: Common,
    },
    /// Watch a collection path; print one JSON event per line as they come.
    Watch {
        #[command(flatten)]
        common: Common,
        /// Ask the server to end the watch after this many seconds (timeoutSeconds).
        #[arg(long, value_name = "SECONDS")]
        timeout: Option<u64>,
    },
}

enum Action {
    Get,
    Create(Objects),
    Apply {
        objects: Objects,
        field_manager: String,
        force: bool,
    },
    Delete,
    Watch {
        timeout: Option<u64>,
    },
}

/// Runs a client subcommand.
pub(crate) fn main(cmd: ClientCmd) -> ExitCode {
    let (common, action) = match cmd {
        ClientCmd::Get { common } => (common, Action::Get),
        ClientCmd::Create { common, objects } => (common, Action::Create(objects)),
        ClientCmd::Apply {
            common,
            objects,
            field_manager,
            force,
        } => (
            common,
            Action::Apply {
                objects,
                field_manager,
                force,
            },
        ),
        ClientCmd::Delete { common } => (common, Action::Delete),
        ClientCmd::Watch { common, timeout } => (common, Action::Watch { timeout }),
    };
    run(common, action)
}

/// Runs a client subcommand: results on stdout as JSON, one per line; errors as one
/// `error: ...` line on stderr and exit status 1.
fn run(common: Common, action: Action) -> ExitCode {
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(r) => r,
        Err(e) => return crate::fail(&format!("cannot start the runtime: {e}")),
    };
    let cache_path = if common.no_cache { None } else { cache::path() };
    let memory = FallbackMemory::with_ttl(cache::TTL);
    if let Some(p) = &cache_path {
        cache::load(p, &memory);
    }
    let result = runtime.block_on(execute(&common, action, memory.clone()));
    if let Some(p) = &cache_path
        && let Err(e) = cache::save(p, &memory)
        && common.verbose
    {
        eprintln!(
            "conneg: cannot write the fallback cache {}: {e}",
            p.display()
        );
    }
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(msg) => crate::fail(&msg),
    }
}

async fn execute(common: &Common, action: Action, memory: FallbackMemory) -> Result<(), String> {
    let gates = common.format.gates();
    let client = Client::builder(&common.server)
        .map_err(|e| e.to_string())?
        .layer(ContentNegotiationLayer::new().gates(gates).memory(memory))
        .build();
    if common.verbose {
        eprintln!("conneg: gates {gates}");
    }
    let path = common.path.as_str();
    match action {
        Action::Get => {
            let v = call(common, &client, Method::GET, path, ClientBody::Empty).await?;
            print(&v)?;
        }
        Action::Delete => {
            let v = call(common, &client, Method::DELETE, path, ClientBody::Empty).await?;
            print(&v)?;
        }
        Action::Create(objects) => {
            for obj in read_objects(&objects.file)? {
                let body = ClientBody::Object(obj);
                let v = call(common, &client, Method::POST, path, body).await?;
                print(&v)?;
            }
        }
        Action::Apply {
            objects,
            field_manager,
            force,
        } => {
            let objs = read_objects(&objects.file)?;
            let many = objs.len() > 1;
            for obj in objs {
                // One object: PATH is its path. Several: PATH is their collection.
                let target = if many {
                    let name = obj
                        .pointer("/metadata/name")
                        .and_then(Value::as_str)
                        .filter(|n| !n.is_empty())
                        .ok_or("applying several objects needs metadata.name in each")?;
                    format!("{}/{name}", path.trim_end_matches('/'))
                } else {
                    path.to_owned()
                };
                let target = apply_query(&target, &field_manager, force);
                let body = ClientBody::apply(&obj).map_err(|e| e.to_string())?;
                let v = call(common, &client, Method::PATCH, &target, body).await?;
                print(&v)?;
            }
        }
        Action::Watch { timeout } => {
            let path = match timeout {
                Some(t) => with_query(path, &format!("timeoutSeconds={t}")),
                None => path.to_owned(),
            };
            let reply = client
                .watch_reply::<Value>(&path)
                .await
                .map_err(|e| error_text(&e))?;
            if common.verbose {
                report(&reply.exchange);
            }
            let mut events = reply.value;
            while let Some(event) = events.next().await {
                let event = event.map_err(|e| format!("watch failed: {e}"))?;
                if let WatchEvent::Error(status) = &event {
                    return Err(status.message.clone());
                }
                print(&serde_json::to_value(&event).map_err(|e| e.to_string())?)?;
            }
        }
    }
    Ok(())
}

async fn call(
    common: &Common,
    client: &Client,
    method: Method,
    path: &str,
    body: ClientBody,
) -> Result<Value, String> {
    match client.request::<Value>(method, path, body).await {
        Ok(reply) => {
            if common.verbose {
                report(&reply.exchange);
            }
            Ok(reply.value)
        }
        Err(e) => Err(error_text(&e)),
    }
}

fn error_text(e: &Error) -> String {
    e.to_string()
}

/// The `-v` report: what was sent, any fallback, what came back.
fn report(x: &Exchange) {
    let key = &x.key;
    let resource = format!("{} {}{}", key.method, key.server, key.resource);
    if x.remembered {
        let first = x
            .fallback
            .as_ref()
            .map_or(x.content_type.unwrap_or(""), |f| f.from.as_str());
        eprintln!("conneg: using {first} for {resource}, learnt from an earlier 415 (cached)");
    }
    match &x.fallback {
        Some(f) => {
            let offered = match &f.offered {
                Some(o) => format!("the 415 offered {o}"),
                None => "the 415 had no Accept header".to_owned(),
            };
            eprintln!(
                "conneg: request {} Content-Type: {}, Accept: {}",
                key.method,
                f.from,
                x.accept.as_deref().unwrap_or("")
            );
            eprintln!(
                "conneg: 415 Unsupported Media Type for {}; {offered}; retried once as {} (remembered for {resource})",
                f.from, f.to
            );
            eprintln!("conneg: request {} Content-Type: {}", key.method, f.to);
        }
        None => eprintln!(
            "conneg: request {} Content-Type: {}, Accept: {}",
            key.method,
            x.content_type.unwrap_or("(no body)"),
            x.accept.as_deref().unwrap_or("")
        ),
    }
    eprintln!(
        "conneg: response {} Content-Type: {}",
        x.status.as_u16(),
        x.response_content_type.as_deref().unwrap_or("(none)")
    );
}

/// Prints compact JSON, one value per line, flushed at once (watch output is read live).
fn print(v: &Value) -> Result<(), String> {
    let mut line = serde_json::to_vec(v).map_err(|e| e.to_string())?;
    line.push(b'\n');
    let mut stdout = std::io::stdout().lock();
    match stdout.write_all(&line).and_then(|()| stdout.flush()) {
        Ok(()) => Ok(()),
        // `conneg watch ... | head -1`: a closed pipe ends the command quietly.
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => std::process::exit(0),
        Err(e) => Err(format!("cannot write output: {}", crate::io_msg(&e))),
    }
}

fn with_query(path: &str, param: &str) -> String {
    let sep = if path.contains('?') { '&' } else { '?' };
    format!("{path}{sep}{param}")
}

fn apply_query(path: &str, field_manager: &str, force: bool) -> String {
    let mut encoded = String::new();
    for b in field_manager.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~') {
            encoded.push(b as char);
        } else {
            encoded.push_str(&format!("%{b:02X}"));
        }
    }
    let mut p = with_query(path, &format!("fieldManager={encoded}"));
    if force {
        p.push_str("&force=true");
    }
    p
}

/// The objects of `-f`: a file, a directory of files (name order, not recursive, hidden files
/// skipped), or stdin.
fn read_objects(file: &Path) -> Result<Vec<Value>, String> {
    if file.as_os_str() == "-" {
        let mut buf = Vec::new();
        std::io::Read::read_to_end(&mut std::io::stdin().lock(), &mut buf)
            .map_err(|e| format!("cannot read stdin: {}", crate::io_msg(&e)))?;
        return parse_objects(&buf).map_err(|e| format!("stdin: {e}"));
    }
    let meta = std::fs::metadata(file)
        .map_err(|e| format!("cannot read {}: {}", file.display(), crate::io_msg(&e)))?;
    let files = if meta.is_dir() {
        let mut files: Vec<PathBuf> = std::fs::read_dir(file)
            .map_err(|e| format!("cannot read {}: {}", file.display(), crate::io_msg(&e)))?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.is_file())
            .filter(|p| {
                p.file_name()
                    .and_then(|n| n.to_str())
                    .is_some_and(|n| !n.starts_with('.'))
            })
            .collect();
        files.sort();
        files
    } else {
        vec![file.to_owned()]
    };
    let mut objects = Vec::new();
    for f in files {
        let bytes = std::fs::read(&f)
            .map_err(|e| format!("cannot read {}: {}", f.display(), crate::io_msg(&e)))?;
        objects.extend(parse_objects(&bytes).map_err(|e| format!("{}: {e}", f.display()))?);
    }
    if objects.is_empty() {
        return Err(format!("no objects in {}", file.display()));
    }
    Ok(objects)
}

/// One JSON or CBOR object or a stream of them. JSON starts with `{` (after whitespace);
/// anything else is read as CBOR (a sequence of self-described or plain items).
fn parse_objects(bytes: &[u8]) -> Result<Vec<Value>, String> {
    let first = bytes.iter().find(|b| !b.is_ascii_whitespace());
    let values: Vec<Value> = match first {
        None => Vec::new(),
        Some(b'{') | Some(b'[') => serde_json::Deserializer::from_slice(bytes)
            .into_iter::<Value>()
            .enumerate()
            .map(|(i, v)| v.map_err(|e| format!("invalid JSON (item {i}): {e}")))
            .collect::<Result<_, _>>()?,
        Some(_) => {
            let mut de = conneg_cbor::Deserializer::from_slice(bytes);
            let mut out = Vec::new();
            while de.position() < bytes.len() {
                let v = Value::deserialize(&mut de)
                    .map_err(|e| format!("invalid CBOR (item {}): {e}", out.len()))?;
                out.push(v);
            }
            out
        }
    };
    // A JSON array is a list of objects.
    let mut objects = Vec::with_capacity(values.len());
    for v in values {
        match v {
            Value::Array(items) => objects.extend(items),
            other => objects.push(other),
        }
    }
    if let Some(i) = objects.iter().position(|o| !o.is_object()) {
        return Err(format!("item {i} is not an object"));
    }
    Ok(objects)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn objects_from_json_and_cbor_streams() {
        let v = parse_objects(b" {\"a\":1}\n{\"b\":2} [{\"c\":3}]").unwrap();
        assert_eq!(v.len(), 3);
        let mut cbor = conneg_cbor::to_vec(&serde_json::json!({"a": 1})).unwrap();
        cbor.extend(conneg_cbor::to_vec(&serde_json::json!({"b": 2})).unwrap());
        let v = parse_objects(&cbor).unwrap();
        assert_eq!(
            v,
            [serde_json::json!({"a": 1}), serde_json::json!({"b": 2})]
        );
        assert!(parse_objects(b"{\"a\":").is_err());
        assert!(parse_objects(b"[1]").unwrap_err().contains("not an object"));
        assert!(parse_objects(&cbor[..cbor.len() - 1]).is_err());
        assert_eq!(
            apply_query("/x", "a b", true),
            "/x?fieldManager=a%20b&force=true"
        );
    }
}
