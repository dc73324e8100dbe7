//! The history checks other than per-object linearizability and watches:
//!
//! * durability: every acknowledged create or update is in the store's history at the
//!   revision and with the content the client was given; no refused write is in it; the final
//!   reads through every replica equal the store's final state;
//! * freshness across objects: a consistent LIST is never older than a write acknowledged
//!   before it began (its resourceVersion is at least that write's);
//! * `resourceVersion=0` reads, which Kubernetes allows to be stale ("any" version): each
//!   object they return is one the store really held at that revision, written by a write
//!   invoked before the read completed (nothing invented, nothing from the future), and the
//!   LISTs one client makes through one replica never go back in resourceVersion.

use std::collections::HashMap;

use super::history::{Call, Obj, Op, Ret};
use super::store_history::StoreHistory;

/// Acknowledged writes present with their content, refused ones absent.
pub(crate) fn durability(ops: &[Op], store: &StoreHistory) -> Vec<String> {
    let written = store.written();
    let mut errors = Vec::new();
    for op in ops {
        let (Call::Create { w } | Call::Update { w, .. }) = &op.call else {
            continue;
        };
        let key = op.key.as_deref().unwrap_or_default();
        match &op.ret {
            Ret::Written(obj) => match store.put_at(key, obj.rv) {
                Some(e) if e.w == obj.w && obj.w == *w => {}
                found => errors.push(format!(
                    "acknowledged write {w} of {key} at {} is not in the store (found {found:?})",
                    obj.rv
                )),
            },
            Ret::Refused(code) => {
                if let Some(at) = written.get(w) {
                    errors.push(format!(
                        "refused ({code}) write {w} is in the store at {at:?}"
                    ));
                }
            }
            _ => {}
        }
    }
    errors
}

/// Final reads (one per replica and object, taken after the faults stopped) equal the
/// store's final state.
pub(crate) fn final_state(finals: &[Op], store: &StoreHistory) -> Vec<String> {
    let want = store.final_state();
    finals
        .iter()
        .filter_map(|op| {
            let key = op.key.as_deref()?;
            let expected = want.get(key);
            match &op.ret {
                Ret::Read(seen) if seen.as_ref() == expected => None,
                other => Some(format!(
                    "final read of {key} through replica {}: {other:?}, the store has {expected:?}",
                    op.replica
                )),
            }
        })
        .collect()
}

/// Consistent LISTs are at least as new as every write acknowledged before they began.
pub(crate) fn freshness(ops: &[Op]) -> Vec<String> {
    let mut acked: Vec<(u64, u64)> = ops
        .iter()
        .filter_map(|o| match &o.ret {
            Ret::Written(obj) => Some((o.complete, obj.rv)),
            _ => None,
        })
        .collect();
    acked.sort_unstable();
    // newest[i]: the highest revision among the first i acknowledgements.
    let newest: Vec<u64> = std::iter::once(0)
        .chain(acked.iter().scan(0, |m, &(_, rv)| {
            *m = (*m).max(rv);
            Some(*m)
        }))
        .collect();
    let mut errors = Vec::new();
    for op in ops {
        if let (Call::List { consistent: true }, Ret::Listed { rv, .. }) = (&op.call, &op.ret) {
            let before = acked.partition_point(|&(t, _)| t < op.invoke);
            if *rv < newest[before] {
                errors.push(format!(
                    "consistent list by client {} via replica {} at {rv} is older than the \
                     write acknowledged at {} before it began",
                    op.client, op.replica, newest[before]
                ));
            }
        }
    }
    errors
}

/// What `resourceVersion=0` reads promise: real objects, not from the future; per client and
/// replica, lists never go back.
pub(crate) fn any_version_reads(ops: &[Op], store: &StoreHistory) -> Vec<String> {
    let invoked: HashMap<&str, u64> = ops
        .iter()
        .filter_map(|o| match &o.call {
            Call::Create { w } | Call::Update { w, .. } => Some((w.as_str(), o.invoke)),
            _ => None,
        })
        .collect();
    let mut last_list: HashMap<(usize, usize), u64> = HashMap::new();
    let mut errors = Vec::new();
    let real = |op: &Op, name: &str, obj: &Obj, errors: &mut Vec<String>| {
        let existed = store.put_at(name, obj.rv).is_some_and(|e| e.w == obj.w);
        let in_time = invoked
            .get(obj.w.as_str())
            .is_some_and(|&t| t < op.complete);
        if !existed || !in_time {
            errors.push(format!(
                "resourceVersion=0 read by client {} via replica {} returned {name} {obj:?}, \
                 which the store never held (existed: {existed}, written in time: {in_time})",
                op.client, op.replica
            ));
        }
    };
    let mut by_time: Vec<&Op> = ops.iter().collect();
    by_time.sort_by_key(|o| o.invoke);
    for op in by_time {
        match (&op.call, &op.ret) {
            (Call::Get { consistent: false }, Ret::Read(Some(obj))) => {
                real(op, op.key.as_deref().unwrap_or_default(), obj, &mut errors);
            }
            (Call::List { consistent: false }, Ret::Listed { rv, items }) => {
                for (name, obj) in items {
                    real(op, name, obj, &mut errors);
                }
                let last = last_list.entry((op.client, op.replica)).or_default();
                if *rv < *last {
                    errors.push(format!(
                        "resourceVersion=0 lists by client {} via replica {} went back from \
                         {last} to {rv}",
                        op.client, op.replica
                    ));
                }
                *last = (*last).max(*rv);
            }
            _ => {}
        }
    }
    errors
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::super::history::EventKind;
    use super::super::store_history::StoreEvent;
    use super::*;

    fn obj(rv: u64, w: &str) -> Obj {
        Obj { rv, w: w.into() }
    }

    fn op(call: Call, ret: Ret, invoke: u64, complete: u64) -> Op {
        Op {
            client: 0,
            replica: 0,
            key: Some("a".into()),
            call,
            ret,
            invoke,
            complete,
        }
    }

    fn store() -> StoreHistory {
        StoreHistory {
            events: vec![StoreEvent {
                rev: 10,
                name: "a".into(),
                kind: EventKind::Added,
                w: "w1".into(),
            }],
        }
    }

    #[test]
    fn a_lost_acknowledged_write_is_caught() {
        let create = |w: &str, rv| op(Call::Create { w: w.into() }, Ret::Written(obj(rv, w)), 0, 5);
        assert!(durability(&[create("w1", 10)], &store()).is_empty());
        let e = durability(&[create("w1", 10), create("w2", 11)], &store());
        assert_eq!(e.len(), 1, "{e:?}");
        assert!(e[0].contains("w2"), "{e:?}");
    }

    #[test]
    fn a_refused_write_in_the_store_is_caught() {
        let refused = op(Call::Create { w: "w1".into() }, Ret::Refused(409), 0, 5);
        assert_eq!(durability(&[refused], &store()).len(), 1);
    }

    #[test]
    fn a_consistent_list_older_than_an_acknowledged_write_is_caught() {
        let write = op(
            Call::Create { w: "w1".into() },
            Ret::Written(obj(10, "w1")),
            0,
            5,
        );
        let list = |rv, invoke| {
            op(
                Call::List { consistent: true },
                Ret::Listed {
                    rv,
                    items: BTreeMap::new(),
                },
                invoke,
                invoke + 5,
            )
        };
        // Overlapping the write: may miss it. After it: may not.
        assert!(freshness(&[write.clone(), list(9, 3)]).is_empty());
        assert_eq!(freshness(&[write, list(9, 6)]).len(), 1);
    }

    #[test]
    fn any_version_reads_may_be_stale_but_not_invented_nor_go_back() {
        let write = op(
            Call::Create { w: "w1".into() },
            Ret::Written(obj(10, "w1")),
            0,
            5,
        );
        let list = |rv, items: Vec<Obj>, t| {
            op(
                Call::List { consistent: false },
                Ret::Listed {
                    rv,
                    items: items.into_iter().map(|o| ("a".to_owned(), o)).collect(),
                },
                t,
                t + 1,
            )
        };
        let ok = [
            write.clone(),
            list(9, vec![], 6),
            list(10, vec![obj(10, "w1")], 8),
        ];
        assert!(any_version_reads(&ok, &store()).is_empty());
        let back = [
            write.clone(),
            list(10, vec![obj(10, "w1")], 6),
            list(9, vec![], 8),
        ];
        assert_eq!(any_version_reads(&back, &store()).len(), 1);
        let invented = [write, list(11, vec![obj(11, "w9")], 6)];
        assert_eq!(any_version_reads(&invented, &store()).len(), 1);
    }
}
