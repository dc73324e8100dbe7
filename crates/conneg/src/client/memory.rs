//! What 415 answers taught: the request media type that works, per server and
//! (method, resource).

use std::collections::HashMap;
use std::fmt;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, SystemTime};

use http::{Method, Uri};

/// A (server, method, resource) triple: the unit of the 415 fallback.
///
/// `resource` is the request path without its query and with the object name stripped, so that
/// every object of a collection shares one entry: `POST`, `PUT`, `PATCH` and `DELETE` on
/// `/apis/g/v1/namespaces/ns/flunders[/name]` all key on `/apis/g/v1/namespaces/ns/flunders`; a
/// subresource keeps its name with `*` for the object (`.../flunders/*/status`). Paths that are
/// not `/api/...` or `/apis/...` resource paths are kept whole.
///
/// ```
/// use conneg::client::ResourceKey;
/// use http::{Method, Uri};
///
/// let uri: Uri = "http://h:1/apis/g/v1/namespaces/ns/flunders/a?dryRun=All".parse().unwrap();
/// let key = ResourceKey::new(&Method::PUT, &uri);
/// assert_eq!(key.server, "http://h:1");
/// assert_eq!(key.resource, "/apis/g/v1/namespaces/ns/flunders");
/// assert_eq!(ResourceKey::collection("/api/v1/namespaces/ns/pods/p/status"), "/api/v1/namespaces/ns/pods/*/status");
/// assert_eq!(ResourceKey::collection("/api/v1/namespaces/ns"), "/api/v1/namespaces");
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ResourceKey {
    /// `scheme://authority`, empty for a relative URI.
    pub server: String,
    /// The request method.
    pub method: String,
    /// The collection path.
    pub resource: String,
}

impl ResourceKey {
    /// The key of a request.
    pub fn new(method: &Method, uri: &Uri) -> Self {
        let server = match (uri.scheme_str(), uri.authority()) {
            (Some(s), Some(a)) => format!("{s}://{}", a.as_str().to_ascii_lowercase()),
            (None, Some(a)) => a.as_str().to_ascii_lowercase(),
            _ => String::new(),
        };
        ResourceKey {
            server,
            method: method.as_str().to_owned(),
            resource: Self::collection(uri.path()),
        }
    }

    /// The collection path of a resource path (see the type's documentation).
    pub fn collection(path: &str) -> String {
        let segs: Vec<&str> = path.split('/').filter(|s| !s.is_empty()).collect();
        let prefix = match segs.first() {
            Some(&"api") => 2,
            Some(&"apis") => 3,
            _ => return path.to_owned(),
        };
        if segs.len() <= prefix {
            return path.to_owned();
        }
        let rest = &segs[prefix..];
        // `namespaces/NS/RESOURCE...`; `namespaces/NS` alone is the namespace object.
        let (scope, rest) = if rest[0] == "namespaces" && rest.len() >= 3 {
            (&rest[..2], &rest[2..])
        } else {
            (&rest[..0], rest)
        };
        let mut out: Vec<&str> = segs[..prefix].to_vec();
        out.extend_from_slice(scope);
        out.push(rest[0]);
        if rest.len() > 2 {
            out.push("*");
            out.extend_from_slice(&rest[2..]);
        }
        let mut s = String::with_capacity(path.len());
        for seg in out {
            s.push('/');
            s.push_str(seg);
        }
        s
    }
}

impl fmt::Display for ResourceKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {}{}", self.method, self.server, self.resource)
    }
}

/// One remembered choice.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Remembered {
    /// The request media type to use, e.g. `application/json` or `application/apply-patch+yaml`.
    pub media_type: String,
    /// When the entry stops applying (`None`: never).
    pub expires: Option<SystemTime>,
}

/// A shared, thread-safe map from [`ResourceKey`] to the request media type a 415 taught, with
/// an optional time to live. Clones share the same map; give one memory to several clients to
/// share what they learn.
///
/// ```
/// use std::time::Duration;
/// use conneg::client::{FallbackMemory, ResourceKey};
/// use http::Method;
///
/// let memory = FallbackMemory::with_ttl(Duration::from_secs(600));
/// let key = ResourceKey::new(&Method::POST, &"http://h/apis/g/v1/flunders".parse().unwrap());
/// memory.remember(key.clone(), "application/json");
/// assert_eq!(memory.get(&key).as_deref(), Some("application/json"));
/// memory.forget(&key);
/// assert_eq!(memory.get(&key), None);
/// ```
#[derive(Clone, Default)]
pub struct FallbackMemory {
    inner: Arc<Inner>,
}

#[derive(Default)]
struct Inner {
    ttl: Option<Duration>,
    entries: Mutex<HashMap<ResourceKey, Remembered>>,
}

impl fmt::Debug for FallbackMemory {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("FallbackMemory")
            .field("ttl", &self.inner.ttl)
            .field("entries", &self.lock().len())
            .finish()
    }
}

impl FallbackMemory {
    /// A memory whose entries never expire (for the life of the process, as client-go's flag).
    pub fn new() -> Self {
        Self::default()
    }

    /// A memory whose entries expire `ttl` after they were learnt, so that a server upgraded to
    /// CBOR is tried again.
    pub fn with_ttl(ttl: Duration) -> Self {
        FallbackMemory {
            inner: Arc::new(Inner {
                ttl: Some(ttl),
                entries: Mutex::default(),
            }),
        }
    }

    /// The time to live, if any.
    pub fn ttl(&self) -> Option<Duration> {
        self.inner.ttl
    }

    fn lock(&self) -> MutexGuard<'_, HashMap<ResourceKey, Remembered>> {
        // A panic while holding the lock cannot leave the map inconsistent (single inserts).
        self.inner
            .entries
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// The media type remembered for `key`, unless it expired (expired entries are dropped).
    pub fn get(&self, key: &ResourceKey) -> Option<String> {
        let mut map = self.lock();
        let entry = map.get(key)?;
        if entry.expires.is_some_and(|t| t <= SystemTime::now()) {
            map.remove(key);
            return None;
        }
        Some(entry.media_type.clone())
    }

    /// Remembers `media_type` for `key` (for the memory's time to live).
    pub fn remember(&self, key: ResourceKey, media_type: impl Into<String>) {
        let expires = self.inner.ttl.map(|ttl| SystemTime::now() + ttl);
        self.insert(
            key,
            Remembered {
                media_type: media_type.into(),
                expires,
            },
        );
    }

    /// Inserts an entry as is (e.g. loaded from a cache file); an already expired one is
    /// ignored.
    pub fn insert(&self, key: ResourceKey, entry: Remembered) {
        if entry.expires.is_some_and(|t| t <= SystemTime::now()) {
            return;
        }
        self.lock().insert(key, entry);
    }

    /// Forgets `key`.
    pub fn forget(&self, key: &ResourceKey) {
        self.lock().remove(key);
    }

    /// Forgets everything.
    pub fn clear(&self) {
        self.lock().clear();
    }

    /// The live entries, sorted by key (e.g. to save them).
    pub fn entries(&self) -> Vec<(ResourceKey, Remembered)> {
        let now = SystemTime::now();
        let mut map = self.lock();
        map.retain(|_, e| e.expires.is_none_or(|t| t > now));
        let mut v: Vec<_> = map.iter().map(|(k, e)| (k.clone(), e.clone())).collect();
        v.sort_by(|a, b| a.0.cmp(&b.0));
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn collection_paths() {
        for (path, want) in [
            (
                "/apis/g/v1/namespaces/ns/flunders",
                "/apis/g/v1/namespaces/ns/flunders",
            ),
            (
                "/apis/g/v1/namespaces/ns/flunders/a",
                "/apis/g/v1/namespaces/ns/flunders",
            ),
            (
                "/apis/g/v1/namespaces/ns/flunders/a/",
                "/apis/g/v1/namespaces/ns/flunders",
            ),
            ("/apis/g/v1/fischers/f", "/apis/g/v1/fischers"),
            (
                "/apis/g/v1/fischers/f/status",
                "/apis/g/v1/fischers/*/status",
            ),
            ("/api/v1/namespaces", "/api/v1/namespaces"),
            ("/api/v1/namespaces/ns", "/api/v1/namespaces"),
            (
                "/api/v1/namespaces/ns/finalize",
                "/api/v1/namespaces/ns/finalize",
            ),
            (
                "/api/v1/namespaces/ns/pods/p/log",
                "/api/v1/namespaces/ns/pods/*/log",
            ),
            ("/apis/g/v1", "/apis/g/v1"),
            ("/healthz", "/healthz"),
            ("/", "/"),
        ] {
            assert_eq!(ResourceKey::collection(path), want, "{path}");
        }
    }

    #[test]
    fn keys_separate_servers_and_methods() {
        let a = ResourceKey::new(&Method::POST, &"http://A:1/apis/g/v1/x".parse().unwrap());
        let b = ResourceKey::new(&Method::POST, &"http://a:1/apis/g/v1/x/n".parse().unwrap());
        let c = ResourceKey::new(&Method::PUT, &"http://a:1/apis/g/v1/x/n".parse().unwrap());
        let d = ResourceKey::new(&Method::POST, &"http://a:2/apis/g/v1/x".parse().unwrap());
        assert_eq!(a, b);
        assert_ne!(a, c);
        assert_ne!(a, d);
    }

    #[test]
    fn expired_entries_are_gone() {
        let m = FallbackMemory::with_ttl(Duration::from_secs(60));
        let key = ResourceKey::new(&Method::POST, &"/apis/g/v1/x".parse().unwrap());
        m.insert(
            key.clone(),
            Remembered {
                media_type: "application/json".into(),
                expires: Some(SystemTime::now() - Duration::from_secs(1)),
            },
        );
        assert_eq!(m.get(&key), None);
        m.remember(key.clone(), "application/json");
        let entries = m.entries();
        assert_eq!(entries.len(), 1);
        assert!(entries[0].1.expires.unwrap() > SystemTime::now());
        // Shared between clones.
        let other = m.clone();
        other.clear();
        assert_eq!(m.get(&key), None);
    }
}
