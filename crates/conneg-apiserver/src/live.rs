//! A value that every request reads and that changes while the server runs ([`Live`]):
//! what is served, once custom resource definitions can add and remove resources.

use std::sync::{Arc, PoisonError, RwLock};

/// A shared value, replaced as a whole: readers get the current one and keep it as long as
/// they need it, unaffected by a replacement meanwhile; cheap to clone.
#[derive(Debug, Default)]
pub(crate) struct Live<T>(Arc<RwLock<Arc<T>>>);

impl<T> Clone for Live<T> {
    fn clone(&self) -> Self {
        Self(self.0.clone())
    }
}

impl<T> Live<T> {
    /// Starts with `value`.
    pub(crate) fn new(value: T) -> Self {
        Self(Arc::new(RwLock::new(Arc::new(value))))
    }

    /// The current value.
    pub(crate) fn get(&self) -> Arc<T> {
        self.0
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// Replaces the value with `f` of the current one, as one step: two updates never
    /// lose each other's change.
    pub(crate) fn update(&self, f: impl FnOnce(&T) -> T) {
        let mut guard = self.0.write().unwrap_or_else(PoisonError::into_inner);
        let next = f(&guard);
        *guard = Arc::new(next);
    }
}

/// The examples of this file's documentation, run as tests: the module is private to the
/// crate, so rustdoc does not run them.
#[cfg(test)]
mod examples {
    #[test]
    fn live() {
        use crate::live::Live;

        let served = Live::new(vec!["flunders"]);
        let before = served.get();
        served.update(|v| v.iter().copied().chain(["crontabs"]).collect());
        assert_eq!(*before, ["flunders"]);
        assert_eq!(*served.get(), ["flunders", "crontabs"]);
    }
}
