//! The store's own history, the ground truth the checkers compare against: every change etcd
//! applied, read by `etcdctl watch` (etcd's own client, not ours) from before the first
//! client operation to a sentinel key written after the last. Revisions are global, so the
//! recording must hold every revision in between; a recording that cannot be completed fails
//! the run rather than weakening the checks.

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use base64::Engine as _;
use serde_json::Value;

use super::history::{EventKind, Obj};
use super::linearizability::Written;

/// One change to an object of the watched selection.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct StoreEvent {
    pub(crate) rev: u64,
    pub(crate) name: String,
    pub(crate) kind: EventKind,
    /// The write id (label `w`) of the object as written (for a delete: as it was).
    pub(crate) w: String,
}

/// The selection's history, in revision order, from an empty start.
#[derive(Clone, Debug, Default)]
pub(crate) struct StoreHistory {
    pub(crate) events: Vec<StoreEvent>,
}

impl StoreHistory {
    /// The objects at revision `rev`, by name.
    pub(crate) fn state_at(&self, rev: u64) -> BTreeMap<String, Obj> {
        let mut state = BTreeMap::new();
        for e in self.events.iter().take_while(|e| e.rev <= rev) {
            if e.kind == EventKind::Deleted {
                state.remove(&e.name);
            } else {
                let obj = Obj {
                    rv: e.rev,
                    w: e.w.clone(),
                };
                state.insert(e.name.clone(), obj);
            }
        }
        state
    }

    /// The objects at the end.
    pub(crate) fn final_state(&self) -> BTreeMap<String, Obj> {
        self.state_at(u64::MAX)
    }

    /// The first change after revision `rev`.
    pub(crate) fn after(&self, rev: u64) -> Option<&StoreEvent> {
        let i = self.events.partition_point(|e| e.rev <= rev);
        self.events.get(i)
    }

    /// Where each write id landed: `(name, revision)` of the put that carried it.
    pub(crate) fn written(&self) -> Written {
        self.events
            .iter()
            .filter(|e| e.kind != EventKind::Deleted)
            .map(|e| (e.w.clone(), (e.name.clone(), e.rev)))
            .collect()
    }

    /// The put at `rev` on `name`, if there is one.
    pub(crate) fn put_at(&self, name: &str, rev: u64) -> Option<&StoreEvent> {
        self.events
            .binary_search_by_key(&rev, |e| e.rev)
            .ok()
            .map(|i| &self.events[i])
            .filter(|e| e.name == name && e.kind != EventKind::Deleted)
    }

    /// The last revision of the selection (0 when nothing changed).
    pub(crate) fn last_rev(&self) -> u64 {
        self.events.last().map_or(0, |e| e.rev)
    }
}

/// A running `etcdctl watch --prefix /` from a revision on, started again from where it got
/// to when it stops making progress (its member died or froze under it).
pub(crate) struct StoreRecorder {
    /// The running etcdctl (replaced when it stalls).
    child: Mutex<Child>,
    endpoints: String,
    changes: Arc<Mutex<Vec<Change>>>,
    /// What etcdctl printed that was not a watch response.
    garbage: Arc<Mutex<Vec<String>>>,
    from: u64,
}

impl StoreRecorder {
    /// Watches every key under `/` from revision `from` on, through any of `endpoints`.
    pub(crate) fn start(endpoints: &str, from: u64) -> StoreRecorder {
        let changes: Arc<Mutex<Vec<Change>>> = Arc::default();
        let garbage: Arc<Mutex<Vec<String>>> = Arc::default();
        let child = spawn(endpoints, from, &changes, &garbage);
        StoreRecorder {
            child: Mutex::new(child),
            endpoints: endpoints.to_owned(),
            changes,
            garbage,
            from,
        }
    }

    /// The revision up to which every revision since the start was recorded.
    fn recorded(&self) -> u64 {
        let mut revs: Vec<u64> = self
            .changes
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .iter()
            .map(|c| c.rev)
            .collect();
        revs.sort_unstable();
        revs.dedup();
        let mut at = self.from - 1;
        for r in revs {
            if r == at + 1 {
                at = r;
            } else if r > at + 1 {
                break;
            }
        }
        at
    }

    /// Waits (up to `patience`) until every revision up to `rev` is recorded. A recording
    /// stalled for two seconds (its member died or froze under it) is restarted from where it
    /// got to; etcd still has that history, since only what was recorded is compacted.
    pub(crate) fn wait_for(&self, rev: u64, patience: Duration) -> Result<(), String> {
        let deadline = Instant::now() + patience;
        let mut last = (self.recorded(), Instant::now());
        while self.recorded() < rev {
            if let Some(g) = self
                .garbage
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .first()
            {
                return Err(format!("etcdctl printed {g:?}"));
            }
            if Instant::now() > deadline {
                return Err(format!(
                    "the etcdctl recorder did not reach revision {rev} \
                     (every revision up to {} recorded)",
                    self.recorded()
                ));
            }
            let now = self.recorded();
            if now != last.0 {
                last = (now, Instant::now());
            } else if last.1.elapsed() > Duration::from_secs(2) {
                let mut child = self.child.lock().unwrap_or_else(PoisonError::into_inner);
                stop(&mut child);
                *child = spawn(&self.endpoints, now + 1, &self.changes, &self.garbage);
                last = (now, Instant::now());
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        Ok(())
    }

    /// Waits until revision `sentinel_rev` (written after the last client operation) is
    /// recorded, then returns the history of the keys under `prefix` (names are what follows
    /// it).
    pub(crate) fn finish(
        self,
        sentinel_rev: u64,
        prefix: &str,
        patience: Duration,
    ) -> Result<StoreHistory, String> {
        self.wait_for(sentinel_rev, patience)?;
        stop(&mut self.child.lock().unwrap_or_else(PoisonError::into_inner));
        let mut changes =
            std::mem::take(&mut *self.changes.lock().unwrap_or_else(PoisonError::into_inner));
        // A restarted recording may repeat what the previous one printed.
        changes.sort_by(|a, b| (a.rev, &a.key).cmp(&(b.rev, &b.key)));
        changes.dedup_by(|a, b| (a.rev, &a.key) == (b.rev, &b.key));
        let events = changes
            .into_iter()
            .filter_map(|c| {
                let name = c.key.strip_prefix(prefix)?.to_owned();
                Some(StoreEvent {
                    rev: c.rev,
                    name,
                    kind: c.kind,
                    w: c.w,
                })
            })
            .collect();
        Ok(StoreHistory { events })
    }
}

impl Drop for StoreRecorder {
    fn drop(&mut self) {
        stop(self.child.get_mut().unwrap_or_else(PoisonError::into_inner));
    }
}

fn stop(child: &mut Child) {
    let _ = child.kill();
    let _ = child.wait();
}

/// `etcdctl watch` from `from`, its responses parsed into `changes` as they come.
fn spawn(
    endpoints: &str,
    from: u64,
    changes: &Arc<Mutex<Vec<Change>>>,
    garbage: &Arc<Mutex<Vec<String>>>,
) -> Child {
    let mut child = Command::new("etcdctl")
        .env("ETCDCTL_API", "3")
        .args(["--endpoints", endpoints, "watch", "--prefix", "/"])
        .arg(format!("--rev={from}"))
        .args(["--prev-kv", "-w", "json"])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn etcdctl watch");
    let stdout = child.stdout.take().expect("stdout");
    let (changes, garbage) = (Arc::clone(changes), Arc::clone(garbage));
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            match parse(&line) {
                Ok(mut c) => changes
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .append(&mut c),
                Err(e) => garbage
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .push(e),
            }
        }
    });
    child
}

/// One change as etcdctl printed it.
struct Change {
    rev: u64,
    key: String,
    kind: EventKind,
    w: String,
}

/// Parses one of etcdctl's `-w json` watch responses: `{"Events":[{"type":1?, "kv":{...},
/// "prev_kv":{...}}]}` with base64 keys and values (CBOR objects, or JSON ones).
fn parse(line: &str) -> Result<Vec<Change>, String> {
    let b64 = |v: &Value| {
        base64::engine::general_purpose::STANDARD
            .decode(v.as_str().unwrap_or(""))
            .map_err(|e| format!("etcdctl printed bad base64: {e}"))
    };
    let mut out = Vec::new();
    let resp: Value =
        serde_json::from_str(line).map_err(|e| format!("etcdctl printed {line:?}: {e}"))?;
    for ev in resp["Events"].as_array().into_iter().flatten() {
        let kv = &ev["kv"];
        let key = String::from_utf8_lossy(&b64(&kv["key"])?).into_owned();
        let rev = kv["mod_revision"].as_u64().unwrap_or(0);
        let deleted = ev["type"].as_u64() == Some(1);
        let (kind, value) = if deleted {
            (EventKind::Deleted, &ev["prev_kv"]["value"])
        } else if kv["create_revision"].as_u64() == Some(rev) {
            (EventKind::Added, &kv["value"])
        } else {
            (EventKind::Modified, &kv["value"])
        };
        let w = label_w(&b64(value)?);
        out.push(Change { rev, key, kind, w });
    }
    Ok(out)
}

/// The `w` label of a stored object ("" when it has none or is not an object).
fn label_w(value: &[u8]) -> String {
    let v = if value.first() == Some(&b'{') {
        serde_json::from_slice::<Value>(value).ok()
    } else {
        conneg_cbor::value_from_slice(value).ok()
    };
    v.and_then(|v| v["metadata"]["labels"]["w"].as_str().map(str::to_owned))
        .unwrap_or_default()
}
