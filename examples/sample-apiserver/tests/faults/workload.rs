//! The clients: writers and readers through every replica, and one watcher per replica,
//! recording everything they invoke and see. Objects are a few names in one namespace, so
//! that operations on each contend; every write carries a unique id in label `w`, so that
//! the store's history tells which write made which revision.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

use serde_json::{Value, json};

use super::cluster::Addrs;
use super::history::{Call, EventKind, Obj, Op, Recorder, Ret, WatchLog, WatchRecord};
use super::http::{self, Failure, Item, WatchStream};
use super::rng::Rng;
use crate::common::{Resp, flunders};

/// The namespace the objects live in.
pub(crate) const NAMESPACE: &str = "default";
/// How long a client waits for an answer before counting the operation as unknown (the
/// replicas bound each etcd call by 2 s, per member tried).
const TIMEOUT: Duration = Duration::from_secs(10);

/// What every client thread shares.
#[derive(Clone)]
pub(crate) struct Ctx {
    pub(crate) rec: Recorder,
    pub(crate) addrs: Addrs,
    pub(crate) stop: Arc<AtomicBool>,
    /// The clients have stopped: watchers watch again with a long timeout, for bookmarks.
    pub(crate) quiet: Arc<AtomicBool>,
    pub(crate) keys: Vec<String>,
    /// A planted bug, to show the checkers catch it: a cache in front of every replica
    /// answers a consistent GET with the answer it gave for that object up to half a second
    /// before.
    pub(crate) stale_cache: Option<StaleCache>,
}

/// The planted stale cache: answers by replica and object name, with when they were given.
pub(crate) type StaleCache = Arc<std::sync::Mutex<HashMap<(usize, String), (u64, Ret)>>>;

fn collection() -> String {
    flunders("v1alpha1", NAMESPACE)
}

fn object(name: &str) -> String {
    format!("{}/{name}", collection())
}

/// `(name, {rv, w})` of an object in JSON.
fn obj_of(v: &Value) -> Option<(String, Obj)> {
    let m = &v["metadata"];
    let rv = m["resourceVersion"].as_str()?.parse().ok()?;
    let w = m["labels"]["w"].as_str().unwrap_or_default().to_owned();
    Some((m["name"].as_str()?.to_owned(), Obj { rv, w }))
}

fn list_of(v: &Value) -> Option<(u64, BTreeMap<String, Obj>)> {
    let rv = v["metadata"]["resourceVersion"].as_str()?.parse().ok()?;
    let items = v["items"]
        .as_array()?
        .iter()
        .map(obj_of)
        .collect::<Option<_>>()?;
    Some((rv, items))
}

/// What an answer means for the call.
fn interpret(call: &Call, resp: &Resp) -> Ret {
    let unknown = || Ret::Unknown(format!("{} {}", resp.code, resp.text()));
    let json = || serde_json::from_slice::<Value>(&resp.body).ok();
    match (call, resp.code) {
        (Call::Create { .. } | Call::Update { .. }, 200 | 201) => json()
            .and_then(|v| obj_of(&v))
            .map_or_else(unknown, |(_, o)| Ret::Written(o)),
        (Call::Delete, 200 | 202) => Ret::Deleted,
        (Call::Get { .. }, 200) => json()
            .and_then(|v| obj_of(&v))
            .map_or_else(unknown, |(_, o)| Ret::Read(Some(o))),
        (Call::Get { .. }, 404) => Ret::Read(None),
        (Call::List { .. }, 200) => json()
            .and_then(|v| list_of(&v))
            .map_or_else(unknown, |(rv, items)| Ret::Listed { rv, items }),
        (Call::Get { .. } | Call::List { .. }, _) => unknown(),
        (_, code @ 400..=499) => Ret::Refused(code),
        _ => unknown(),
    }
}

/// Invokes one operation through `replica` and records it; `None` when it was never sent
/// (the replica is down: nothing to record).
fn perform(
    ctx: &Ctx,
    client: usize,
    replica: usize,
    key: Option<&str>,
    call: Call,
    (method, path, body): (&str, String, Vec<u8>),
) -> Option<Ret> {
    let invoke = ctx.rec.now();
    let cached = match (&ctx.stale_cache, &call, key) {
        (Some(cache), Call::Get { consistent: true }, Some(k)) => {
            let cache = cache
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            cache
                .get(&(replica, k.to_owned()))
                .filter(|(at, _)| invoke - at < 500_000_000)
                .map(|(_, ret)| ret.clone())
        }
        _ => None,
    };
    let fresh = cached.is_none();
    let ret = match cached {
        Some(ret) => ret,
        None => match http::call(&ctx.addrs.get(replica), method, &path, &body, TIMEOUT) {
            Err(Failure::NotSent) => return None,
            Err(Failure::Unknown(e)) => Ret::Unknown(e),
            Ok(resp) => interpret(&call, &resp),
        },
    };
    let complete = ctx.rec.now();
    if let (Some(cache), Call::Get { consistent: true }, Some(k), Ret::Read(_), true) =
        (&ctx.stale_cache, &call, key, &ret, fresh)
    {
        let mut cache = cache
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        cache.insert((replica, k.to_owned()), (invoke, ret.clone()));
    }
    ctx.rec.push(Op {
        client,
        replica,
        key: key.map(str::to_owned),
        call,
        ret: ret.clone(),
        invoke,
        complete,
    });
    Some(ret)
}

fn body(name: &str, rv: Option<u64>, w: &str) -> Vec<u8> {
    let mut meta = json!({"name": name, "labels": {"w": w}});
    if let Some(rv) = rv {
        meta["resourceVersion"] = json!(rv.to_string());
    }
    json!({
        "apiVersion": "wardle.example.com/v1alpha1",
        "kind": "Flunder",
        "metadata": meta,
        "spec": {"reference": "r"},
    })
    .to_string()
    .into_bytes()
}

/// A consistent GET of `name` through `replica` (recorded), as a client does it.
pub(crate) fn get(ctx: &Ctx, client: usize, replica: usize, name: &str) -> Option<Ret> {
    let call = Call::Get { consistent: true };
    perform(
        ctx,
        client,
        replica,
        Some(name),
        call,
        ("GET", object(name), Vec::new()),
    )
}

/// One client: random operations through `replica` until told to stop.
pub(crate) fn client(ctx: &Ctx, id: usize, replica: usize, mut rng: Rng) {
    let mut known: HashMap<String, u64> = HashMap::new();
    let mut seq = 0u64;
    while !ctx.stop.load(Ordering::Relaxed) {
        let key = ctx.keys[rng.below(ctx.keys.len() as u64) as usize].clone();
        seq += 1;
        let w = format!("c{id}-{seq}");
        let dice = rng.below(100);
        let ret = match dice {
            0..15 => perform(
                ctx,
                id,
                replica,
                Some(&key),
                Call::Create { w: w.clone() },
                ("POST", collection(), body(&key, None, &w)),
            ),
            15..45 => {
                // CAS on what this client last saw (sometimes stale, to draw conflicts),
                // after reading it when it never did.
                if (!known.contains_key(&key) || rng.below(4) == 0)
                    && let Some(Ret::Read(Some(o))) = get(ctx, id, replica, &key)
                {
                    known.insert(key.clone(), o.rv);
                }
                let expect = known.get(&key).copied().unwrap_or(1);
                let call = Call::Update {
                    expect,
                    w: w.clone(),
                };
                let req = ("PUT", object(&key), body(&key, Some(expect), &w));
                perform(ctx, id, replica, Some(&key), call, req)
            }
            45..53 => perform(
                ctx,
                id,
                replica,
                Some(&key),
                Call::Delete,
                ("DELETE", object(&key), Vec::new()),
            ),
            53..70 => get(ctx, id, replica, &key),
            70..80 => perform(
                ctx,
                id,
                replica,
                Some(&key),
                Call::Get { consistent: false },
                (
                    "GET",
                    format!("{}?resourceVersion=0", object(&key)),
                    Vec::new(),
                ),
            ),
            _ => {
                let consistent = dice < 92;
                let path = if consistent {
                    collection()
                } else {
                    format!("{}?resourceVersion=0", collection())
                };
                perform(
                    ctx,
                    id,
                    replica,
                    None,
                    Call::List { consistent },
                    ("GET", path, Vec::new()),
                )
            }
        };
        match ret {
            None => std::thread::sleep(Duration::from_millis(200)),
            Some(Ret::Written(o) | Ret::Read(Some(o))) => {
                known.insert(key, o.rv);
            }
            Some(Ret::Deleted | Ret::Read(None)) => {
                known.remove(&key);
            }
            Some(_) => {}
        }
        std::thread::sleep(rng.millis(0, 15));
    }
}

/// One watcher through `replica`: lists (a LIST, or a watch-list whose initial events end
/// with a bookmark), watches, resumes from the last resourceVersion it saw, lists again after
/// a 410, until told to stop; `seen` is the resourceVersion up to which it has everything.
/// Once `ctx.quiet` is set it watches again with a long timeout, so that a quiet stream
/// shows its bookmarks.
pub(crate) fn watcher(
    ctx: &Ctx,
    id: usize,
    replica: usize,
    mut rng: Rng,
    seen: &AtomicU64,
) -> WatchLog {
    let mut log = WatchLog {
        replica,
        records: Vec::new(),
    };
    let mut pos = None;
    while !ctx.stop.load(Ordering::Relaxed) {
        let quiet = ctx.quiet.load(Ordering::Relaxed);
        let timeout = if quiet { 60 } else { 3 + rng.below(10) };
        let watch = format!(
            "{}?watch=true&allowWatchBookmarks=true&timeoutSeconds={timeout}",
            collection()
        );
        let opened = match pos {
            None if rng.below(2) == 0 => {
                if let Some(rv) = list(ctx, id, replica, &mut log) {
                    pos = Some(rv);
                    seen.store(rv, Ordering::Relaxed);
                }
                continue;
            }
            None => watch_list(ctx, id, replica, &watch, &mut log),
            Some(from) => {
                let path = format!("{watch}&resourceVersion={from}");
                WatchStream::open(&ctx.addrs.get(replica), &path)
                    .ok()
                    .map(|s| {
                        log.records.push(WatchRecord::Start { from });
                        (s, from)
                    })
            }
        };
        let Some((mut stream, from)) = opened else {
            std::thread::sleep(Duration::from_millis(200));
            continue;
        };
        pos = Some(from);
        seen.store(from, Ordering::Relaxed);
        loop {
            if ctx.quiet.load(Ordering::Relaxed) && !quiet {
                log.records
                    .push(WatchRecord::Ended("quiet: watching again".into()));
                break;
            }
            let Some(item) = stream.next() else {
                if ctx.stop.load(Ordering::Relaxed) {
                    break;
                }
                continue;
            };
            let record = record(item);
            match &record {
                WatchRecord::Event { obj, .. } => pos = Some(obj.rv),
                WatchRecord::Bookmark { rv } => pos = Some(*rv),
                WatchRecord::Gone => pos = None,
                _ => {}
            }
            if let Some(p) = pos {
                seen.store(p, Ordering::Relaxed);
            }
            let ended = matches!(record, WatchRecord::Gone | WatchRecord::Ended(_));
            log.records.push(record);
            if ended {
                std::thread::sleep(Duration::from_millis(50));
                break;
            }
        }
    }
    log
}

/// A consistent LIST (recorded as an operation and as the watcher's list); its
/// resourceVersion.
fn list(ctx: &Ctx, id: usize, replica: usize, log: &mut WatchLog) -> Option<u64> {
    let call = Call::List { consistent: true };
    match perform(
        ctx,
        id,
        replica,
        None,
        call,
        ("GET", collection(), Vec::new()),
    ) {
        Some(Ret::Listed { rv, items }) => {
            log.records.push(WatchRecord::Relist { rv, items });
            Some(rv)
        }
        _ => None,
    }
}

/// A watch-list (`sendInitialEvents=true`, no resourceVersion: consistent): the initial
/// ADDED events up to the bookmark that ends them are the watcher's list (recorded as a
/// consistent read too); the stream then goes on as a watch from the bookmark's version.
fn watch_list(
    ctx: &Ctx,
    id: usize,
    replica: usize,
    watch: &str,
    log: &mut WatchLog,
) -> Option<(WatchStream, u64)> {
    let path = format!("{watch}&sendInitialEvents=true&resourceVersionMatch=NotOlderThan");
    let invoke = ctx.rec.now();
    let mut stream = WatchStream::open(&ctx.addrs.get(replica), &path).ok()?;
    let mut items = BTreeMap::new();
    let rv = loop {
        match stream.next() {
            None if ctx.stop.load(Ordering::Relaxed) => return None,
            None => {}
            Some(Item::Event(v)) => match record(Item::Event(v.clone())) {
                WatchRecord::Event {
                    kind: EventKind::Added,
                    name,
                    obj,
                } => {
                    items.insert(name, obj);
                }
                WatchRecord::Bookmark { rv }
                    if v["object"]["metadata"]["annotations"]["k8s.io/initial-events-end"]
                        == "true" =>
                {
                    break rv;
                }
                // Anything else before the end of the initial events: no list; try again.
                _ => return None,
            },
            Some(_) => return None,
        }
    };
    ctx.rec.push(Op {
        client: id,
        replica,
        key: None,
        call: Call::List { consistent: true },
        ret: Ret::Listed {
            rv,
            items: items.clone(),
        },
        invoke,
        complete: ctx.rec.now(),
    });
    log.records.push(WatchRecord::Relist { rv, items });
    log.records.push(WatchRecord::Start { from: rv });
    Some((stream, rv))
}

/// What a stream item means for the watcher.
fn record(item: Item) -> WatchRecord {
    match item {
        Item::Event(v) => event(&v),
        Item::Status(410, _) => WatchRecord::Gone,
        Item::Status(code, text) => WatchRecord::Ended(format!("{code} {text}")),
        Item::End(why) => WatchRecord::Ended(why),
    }
}

/// A watch event as a record.
fn event(v: &Value) -> WatchRecord {
    let kind = match v["type"].as_str() {
        Some("ADDED") => EventKind::Added,
        Some("MODIFIED") => EventKind::Modified,
        Some("DELETED") => EventKind::Deleted,
        Some("BOOKMARK") => {
            return match v["object"]["metadata"]["resourceVersion"]
                .as_str()
                .and_then(|s| s.parse().ok())
            {
                Some(rv) => WatchRecord::Bookmark { rv },
                None => WatchRecord::Ended(format!("a bookmark without a resourceVersion: {v}")),
            };
        }
        _ if v["object"]["code"].as_u64() == Some(410) => return WatchRecord::Gone,
        _ => return WatchRecord::Ended(format!("event {v}")),
    };
    match obj_of(&v["object"]) {
        Some((name, obj)) => WatchRecord::Event { kind, name, obj },
        None => WatchRecord::Ended(format!("an event without an object: {v}")),
    }
}
