//! What 415 answers taught, kept between runs: `$XDG_CACHE_HOME/conneg/fallback.json` (else
//! `~/.cache/conneg/fallback.json`), one entry per (server, method, resource) with an absolute
//! expiry, the way kubectl caches discovery. A missing, unreadable or corrupt file is an empty
//! cache; the file is replaced atomically (write, then rename) after merging with what other
//! runs wrote meanwhile.

use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use conneg::client::{FallbackMemory, Remembered, ResourceKey};
use serde::{Deserialize, Serialize};

/// How long a learnt fallback is trusted: a server upgraded to CBOR is tried again after this.
pub(crate) const TTL: Duration = Duration::from_secs(10 * 60);

#[derive(Serialize, Deserialize, Default)]
struct File {
    version: u32,
    entries: Vec<Entry>,
}

#[derive(Serialize, Deserialize, Clone, PartialEq)]
#[serde(rename_all = "camelCase")]
struct Entry {
    server: String,
    method: String,
    resource: String,
    content_type: String,
    /// Unix seconds.
    expires: u64,
}

/// The cache file, if a cache directory can be found.
pub(crate) fn path() -> Option<PathBuf> {
    let base = match std::env::var_os("XDG_CACHE_HOME").filter(|v| !v.is_empty()) {
        Some(dir) => PathBuf::from(dir),
        None => PathBuf::from(std::env::var_os("HOME").filter(|v| !v.is_empty())?).join(".cache"),
    };
    Some(base.join("conneg").join("fallback.json"))
}

fn unix(t: SystemTime) -> u64 {
    t.duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs())
}

fn read(path: &Path) -> Vec<Entry> {
    std::fs::read(path)
        .ok()
        .and_then(|b| serde_json::from_slice::<File>(&b).ok())
        .filter(|f| f.version == 1)
        .map(|f| f.entries)
        .unwrap_or_default()
}

fn live(entries: Vec<Entry>) -> impl Iterator<Item = Entry> {
    let now = unix(SystemTime::now());
    entries.into_iter().filter(move |e| e.expires > now)
}

/// Loads the live entries of `path` into `memory`.
pub(crate) fn load(path: &Path, memory: &FallbackMemory) {
    for e in live(read(path)) {
        memory.insert(
            ResourceKey {
                server: e.server,
                method: e.method,
                resource: e.resource,
            },
            Remembered {
                media_type: e.content_type,
                expires: Some(UNIX_EPOCH + Duration::from_secs(e.expires)),
            },
        );
    }
}

fn entries_of(memory: &FallbackMemory) -> Vec<Entry> {
    memory
        .entries()
        .into_iter()
        .map(|(k, r)| Entry {
            server: k.server,
            method: k.method,
            resource: k.resource,
            content_type: r.media_type,
            expires: r.expires.map_or(u64::MAX, unix),
        })
        .collect()
}

/// Writes `memory` to `path` if it holds anything the file does not, merged with the file's
/// live entries (this run's entries win).
pub(crate) fn save(path: &Path, memory: &FallbackMemory) -> std::io::Result<()> {
    let mine = entries_of(memory);
    let mut merged: Vec<Entry> = live(read(path)).collect();
    let before = merged.clone();
    for e in mine {
        let same =
            |o: &Entry| o.server == e.server && o.method == e.method && o.resource == e.resource;
        match merged.iter_mut().find(|o| same(o)) {
            Some(o) if o.content_type == e.content_type && o.expires >= e.expires => {}
            Some(o) => *o = e,
            None => merged.push(e),
        }
    }
    if merged == before && path.exists() {
        return Ok(());
    }
    if merged.is_empty() && !path.exists() {
        return Ok(());
    }
    let dir = path.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir)?;
    let tmp = dir.join(format!(".fallback.json.{}.tmp", std::process::id()));
    let body = serde_json::to_vec_pretty(&File {
        version: 1,
        entries: merged,
    })
    .map_err(std::io::Error::other)?;
    std::fs::write(&tmp, body)?;
    std::fs::rename(&tmp, path)
}

#[cfg(test)]
mod tests {
    use super::*;
    use http::Method;

    #[test]
    fn round_trip_merge_and_expiry() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("conneg/fallback.json");
        let key = |m: &Method| ResourceKey::new(m, &"http://h:1/apis/g/v1/x/n".parse().unwrap());

        // Nothing learnt: no file.
        save(&path, &FallbackMemory::with_ttl(TTL)).unwrap();
        assert!(!path.exists());

        let a = FallbackMemory::with_ttl(TTL);
        a.remember(key(&Method::POST), "application/json");
        save(&path, &a).unwrap();
        let b = FallbackMemory::with_ttl(TTL);
        b.remember(key(&Method::PATCH), "application/apply-patch+yaml");
        save(&path, &b).unwrap();

        let c = FallbackMemory::with_ttl(TTL);
        load(&path, &c);
        assert_eq!(
            c.get(&key(&Method::POST)).as_deref(),
            Some("application/json")
        );
        assert_eq!(
            c.get(&key(&Method::PATCH)).as_deref(),
            Some("application/apply-patch+yaml")
        );

        // Expired entries are not loaded.
        let mut f: File = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
        f.entries[0].expires = 1;
        std::fs::write(&path, serde_json::to_vec(&f).unwrap()).unwrap();
        let d = FallbackMemory::with_ttl(TTL);
        load(&path, &d);
        assert_eq!(d.entries().len(), 1);

        // A corrupt file is an empty cache.
        std::fs::write(&path, b"{nope").unwrap();
        let e = FallbackMemory::with_ttl(TTL);
        load(&path, &e);
        assert!(e.entries().is_empty());
    }
}
