//! Watch streams against the store's history. A watcher lists, watches from the list's
//! resourceVersion, resumes from the last resourceVersion it saw when a stream ends, and
//! lists again after a 410. Following it record by record, each event must be exactly the
//! store's next change of the selection after the watcher's position: in strictly
//! increasing resourceVersion order, no duplicate, no gap, with the content the store has.
//! A bookmark may move the position only over revisions in which the selection did not
//! change (a bookmark ahead of what was delivered would let a client skip events). A list
//! must equal the store's state at its resourceVersion. A gap is allowed only as a 410
//! followed by a list, which the checker follows.

use super::history::{EventKind, WatchLog, WatchRecord};
use super::store_history::StoreHistory;

/// What one stream held.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct WatchStats {
    pub(crate) events: usize,
    pub(crate) bookmarks: usize,
    pub(crate) relists: usize,
    pub(crate) gone: usize,
    pub(crate) resumes: usize,
}

impl std::ops::AddAssign for WatchStats {
    fn add_assign(&mut self, o: WatchStats) {
        self.events += o.events;
        self.bookmarks += o.bookmarks;
        self.relists += o.relists;
        self.gone += o.gone;
        self.resumes += o.resumes;
    }
}

/// Checks one watcher's records; the error says which record broke what.
pub(crate) fn check(log: &WatchLog, store: &StoreHistory) -> Result<WatchStats, String> {
    let mut stats = WatchStats::default();
    // The resourceVersion up to which the watcher has seen everything, once it listed.
    let mut pos: Option<u64> = None;
    let mut must_relist = true;
    for (i, r) in log.records.iter().enumerate() {
        let fail = |what: String| {
            Err(format!(
                "watch on replica {}, record {i} ({r:?}): {what}",
                log.replica
            ))
        };
        match r {
            WatchRecord::Relist { rv, items } => {
                let want = store.state_at(*rv);
                if *items != want {
                    return fail(format!(
                        "the list differs from the store at {rv}: store has {want:?}"
                    ));
                }
                stats.relists += 1;
                pos = Some(*rv);
                must_relist = false;
            }
            _ if must_relist => return fail("records before a list".into()),
            WatchRecord::Start { from } => {
                if Some(*from) != pos {
                    return fail(format!("resumed from {from}, not from {pos:?}"));
                }
                stats.resumes += 1;
            }
            WatchRecord::Event { kind, name, obj } => {
                let at = pos.unwrap_or(0);
                let Some(want) = store.after(at) else {
                    return fail(format!("an event the store never made (after {at})"));
                };
                if obj.rv != want.rev || *name != want.name || *kind != want.kind {
                    let what = if obj.rv <= at {
                        "a duplicate or out of order"
                    } else if obj.rv > want.rev {
                        "a gap"
                    } else {
                        "a different change"
                    };
                    return fail(format!("{what}: the store's next change is {want:?}"));
                }
                if *kind != EventKind::Deleted && obj.w != want.w {
                    return fail(format!("content {} where the store has {}", obj.w, want.w));
                }
                stats.events += 1;
                pos = Some(obj.rv);
            }
            WatchRecord::Bookmark { rv } => {
                let at = pos.unwrap_or(0);
                if *rv < at {
                    return fail(format!("a bookmark behind the position {at}"));
                }
                if let Some(missed) = store.after(at).filter(|e| e.rev <= *rv) {
                    return fail(format!(
                        "a bookmark ahead of what was delivered: {missed:?}"
                    ));
                }
                stats.bookmarks += 1;
                pos = Some(*rv);
            }
            WatchRecord::Gone => {
                stats.gone += 1;
                must_relist = true;
            }
            WatchRecord::Ended(_) => {}
        }
    }
    Ok(stats)
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::super::history::Obj;
    use super::super::store_history::StoreEvent;
    use super::*;

    fn store() -> StoreHistory {
        let ev = |rev, name: &str, kind, w: &str| StoreEvent {
            rev,
            name: name.into(),
            kind,
            w: w.into(),
        };
        StoreHistory {
            events: vec![
                ev(10, "a", EventKind::Added, "w1"),
                ev(12, "b", EventKind::Added, "w2"),
                ev(13, "a", EventKind::Modified, "w3"),
                ev(20, "a", EventKind::Deleted, "w3"),
            ],
        }
    }

    fn event(kind: EventKind, name: &str, rv: u64, w: &str) -> WatchRecord {
        WatchRecord::Event {
            kind,
            name: name.into(),
            obj: Obj { rv, w: w.into() },
        }
    }

    fn log(records: Vec<WatchRecord>) -> WatchLog {
        WatchLog {
            replica: 0,
            records,
        }
    }

    fn empty_list(rv: u64) -> WatchRecord {
        WatchRecord::Relist {
            rv,
            items: BTreeMap::new(),
        }
    }

    fn whole() -> Vec<WatchRecord> {
        vec![
            empty_list(5),
            WatchRecord::Start { from: 5 },
            event(EventKind::Added, "a", 10, "w1"),
            event(EventKind::Added, "b", 12, "w2"),
            WatchRecord::Ended("timeout".into()),
            WatchRecord::Start { from: 12 },
            event(EventKind::Modified, "a", 13, "w3"),
            WatchRecord::Bookmark { rv: 15 },
            event(EventKind::Deleted, "a", 20, "w3"),
        ]
    }

    #[test]
    fn a_complete_stream_with_a_resume_and_a_bookmark_passes() {
        let s = check(&log(whole()), &store()).expect("complete");
        assert_eq!((s.events, s.bookmarks, s.resumes), (4, 1, 2));
    }

    #[test]
    fn a_gap_is_caught() {
        let mut r = whole();
        r.remove(2); // a's ADDED
        let e = check(&log(r), &store()).expect_err("gap");
        assert!(e.contains("a gap"), "{e}");
    }

    #[test]
    fn a_duplicate_is_caught() {
        let mut r = whole();
        r.insert(4, event(EventKind::Added, "b", 12, "w2"));
        let e = check(&log(r), &store()).expect_err("duplicate");
        assert!(e.contains("duplicate"), "{e}");
    }

    #[test]
    fn wrong_content_is_caught() {
        let mut r = whole();
        r[6] = event(EventKind::Modified, "a", 13, "w9");
        check(&log(r), &store()).expect_err("content");
    }

    #[test]
    fn a_bookmark_ahead_of_what_was_delivered_is_caught() {
        let mut r = whole();
        r.insert(3, WatchRecord::Bookmark { rv: 12 }); // before b's ADDED at 12
        let e = check(&log(r), &store()).expect_err("bookmark ahead");
        assert!(e.contains("bookmark ahead"), "{e}");
    }

    #[test]
    fn a_resume_from_elsewhere_than_the_last_seen_version_is_caught() {
        let mut r = whole();
        r[5] = WatchRecord::Start { from: 13 };
        check(&log(r), &store()).expect_err("resume");
    }

    #[test]
    fn a_410_and_a_relist_are_followed_and_the_list_is_checked() {
        let a13 = Obj {
            rv: 13,
            w: "w3".into(),
        };
        let b12 = Obj {
            rv: 12,
            w: "w2".into(),
        };
        let relist = |items: Vec<(&str, Obj)>| WatchRecord::Relist {
            rv: 15,
            items: items.into_iter().map(|(k, v)| (k.to_owned(), v)).collect(),
        };
        let good = vec![
            empty_list(5),
            WatchRecord::Start { from: 5 },
            event(EventKind::Added, "a", 10, "w1"),
            WatchRecord::Gone,
            relist(vec![("a", a13.clone()), ("b", b12.clone())]),
            WatchRecord::Start { from: 15 },
            event(EventKind::Deleted, "a", 20, "w3"),
        ];
        let s = check(&log(good.clone()), &store()).expect("a 410 and a relist");
        assert_eq!((s.gone, s.relists), (1, 2));
        // Skipping without a 410 is a gap.
        let mut skipped = good.clone();
        skipped.remove(3);
        skipped.remove(3);
        skipped.remove(3);
        check(&log(skipped), &store()).expect_err("gap");
        // A relist that misses an object is caught.
        let mut wrong = good;
        wrong[4] = relist(vec![("a", a13)]);
        let e = check(&log(wrong), &store()).expect_err("bad list");
        assert!(e.contains("differs"), "{e}");
    }
}
