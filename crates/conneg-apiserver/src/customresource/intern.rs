//! Names that live as long as the server: a served resource is a `&'static ResourceInfo`,
//! so the names of a definition installed at run time are kept for the life of the
//! process. Each distinct name and resource is kept once, however often its definition is
//! updated or created again; [`MAX_RESOURCES`] bounds how many distinct ones a server keeps.

use std::collections::HashSet;
use std::sync::{Mutex, PoisonError};

use crate::resource::ResourceInfo;

/// How many distinct resources (a definition's names, in one version, with its verbs and
/// subresources) a process keeps; beyond it, new ones are refused until a restart.
pub(super) const MAX_RESOURCES: usize = 10_000;

static STRINGS: Mutex<Option<HashSet<&'static str>>> = Mutex::new(None);
static LISTS: Mutex<Option<HashSet<&'static [&'static str]>>> = Mutex::new(None);
static RESOURCES: Mutex<Option<HashSet<&'static ResourceInfo>>> = Mutex::new(None);

/// `s`, kept for the life of the process (once).
pub(super) fn string(s: &str) -> &'static str {
    let mut set = STRINGS.lock().unwrap_or_else(PoisonError::into_inner);
    let set = set.get_or_insert_with(HashSet::new);
    if let Some(kept) = set.get(s) {
        return kept;
    }
    let kept: &'static str = Box::leak(s.to_owned().into_boxed_str());
    set.insert(kept);
    kept
}

/// `strings`, kept for the life of the process (once).
pub(super) fn strings(strings: &[String]) -> &'static [&'static str] {
    if strings.is_empty() {
        return &[];
    }
    let list: Vec<&'static str> = strings.iter().map(|s| string(s)).collect();
    let mut set = LISTS.lock().unwrap_or_else(PoisonError::into_inner);
    let set = set.get_or_insert_with(HashSet::new);
    if let Some(kept) = set.get(list.as_slice()) {
        return kept;
    }
    let kept: &'static [&'static str] = Box::leak(list.into_boxed_slice());
    set.insert(kept);
    kept
}

/// `r`, kept for the life of the process (once); `None` once [`MAX_RESOURCES`] distinct
/// resources are kept.
pub(super) fn resource(r: ResourceInfo) -> Option<&'static ResourceInfo> {
    let mut set = RESOURCES.lock().unwrap_or_else(PoisonError::into_inner);
    let set = set.get_or_insert_with(HashSet::new);
    if let Some(kept) = set.get(&r) {
        return Some(kept);
    }
    if set.len() >= MAX_RESOURCES {
        return None;
    }
    let kept: &'static ResourceInfo = Box::leak(Box::new(r));
    set.insert(kept);
    Some(kept)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn equal_names_are_kept_once() {
        let a = string("crontabs-intern-test");
        let b = string(&String::from("crontabs-intern-test"));
        assert!(std::ptr::eq(a, b));
        let list = || strings(&["ct".to_owned(), "crons".to_owned()]);
        assert!(std::ptr::eq(list(), list()));
        let r = || ResourceInfo::new("x.io", a, "crontab", "CronTab", "CronTabList", true);
        assert!(std::ptr::eq(resource(r()).unwrap(), resource(r()).unwrap()));
    }
}
