//! How many objects each collection holds, as last seen by a list that read it from the
//! start: the cheap count that request cost estimates use (Kubernetes keeps a periodically
//! refreshed count per resource for the same purpose). Bounded by the collections served.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

/// A collection: group, resource and namespace (`""`: every namespace).
type Collection = (String, String, String);

/// Object counts by collection; cheap to clone.
#[derive(Clone, Debug, Default)]
pub struct ObjectCounts(Arc<Mutex<HashMap<Collection, usize>>>);

/// At most this many collections are remembered (namespaces come and go); past it, new ones
/// are not recorded and estimates fall back on the count of every namespace.
const MAX_COLLECTIONS: usize = 4096;

impl ObjectCounts {
    /// Records that `count` objects of `group`/`resource` are stored in `namespace`.
    pub fn record(&self, group: &str, resource: &str, namespace: Option<&str>, count: usize) {
        let Ok(mut m) = self.0.lock() else { return };
        let key = (
            group.to_owned(),
            resource.to_owned(),
            namespace.unwrap_or("").to_owned(),
        );
        if m.len() < MAX_COLLECTIONS || m.contains_key(&key) {
            m.insert(key, count);
        }
    }

    /// The last count of `group`/`resource` in `namespace`, else in every namespace.
    pub fn get(&self, group: &str, resource: &str, namespace: &str) -> Option<usize> {
        let m = self.0.lock().ok()?;
        let key = |ns: &str| (group.to_owned(), resource.to_owned(), ns.to_owned());
        m.get(&key(namespace)).or_else(|| m.get(&key(""))).copied()
    }
}
