//! Objects (as JSON values) seen through a [`Schema`]: the set of fields a value sets, the
//! difference between two values, the merge of an applied configuration into an object, and
//! the removal of a set of fields. structured-merge-diff's `typed` package, on
//! `serde_json::Value`.
//!
//! Maps are granular unless the schema makes them atomic; lists follow [`ListType`]. Every
//! walk recurses once per level of the values it is given, which are bounded (typed objects,
//! patches under the patch depth limit).

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{Map, Value};

use super::fieldpath::{Path, PathElement, Set};
use super::schema::Schema;
use crate::declarative::ListType;

/// What changed between two values.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Comparison {
    /// Paths only the new value has.
    pub(crate) added: Set,
    /// Paths whose value changed.
    pub(crate) modified: Set,
    /// Paths only the old value has.
    pub(crate) removed: Set,
}

impl Comparison {
    /// Added or modified paths: what a writer of the new value takes.
    pub(crate) fn changed(&self) -> Set {
        self.added.union(&self.modified)
    }

    /// Without what the schema never tracks.
    fn untracked_removed(self, schema: &Schema) -> Self {
        Self {
            added: schema.untracked_removed(self.added),
            modified: schema.untracked_removed(self.modified),
            removed: schema.untracked_removed(self.removed),
        }
    }
}

/// The path element of a list item: its value for a set, its key fields for a map-list.
/// An item that has no key (or a list whose type does not fit its items) falls back to its
/// position.
fn item_element(list_type: &ListType, item: &Value, index: usize) -> PathElement {
    let by_index = || PathElement::Index(i64::try_from(index).unwrap_or(i64::MAX));
    match (list_type, item) {
        (ListType::Set, Value::Array(_) | Value::Object(_)) | (ListType::Atomic, _) => by_index(),
        (ListType::Set, v) => PathElement::Value(v.clone()),
        (ListType::Map(keys), Value::Object(m)) => {
            let mut fields: Vec<(String, Value)> = Vec::with_capacity(keys.len());
            for k in keys.iter() {
                match m.get(k.as_ref()) {
                    Some(v) => fields.push((k.to_string(), v.clone())),
                    None => return by_index(),
                }
            }
            fields.sort_by(|a, b| a.0.cmp(&b.0));
            PathElement::Key(fields)
        }
        (ListType::Map(_), _) => by_index(),
    }
}

/// The items of a non-atomic list by path element.
struct Items<'v> {
    /// The first occurrence of each element, in order.
    order: Vec<(PathElement, &'v Value)>,
    /// The same, by element.
    by_pe: BTreeMap<PathElement, &'v Value>,
    /// The elements seen more than once.
    duplicates: BTreeSet<PathElement>,
}

fn index_items<'v>(list_type: &ListType, items: &'v [Value]) -> Items<'v> {
    let mut out = Items {
        order: Vec::with_capacity(items.len()),
        by_pe: BTreeMap::new(),
        duplicates: BTreeSet::new(),
    };
    for (i, item) in items.iter().enumerate() {
        let pe = item_element(list_type, item, i);
        if out.by_pe.contains_key(&pe) {
            out.duplicates.insert(pe);
            continue;
        }
        out.by_pe.insert(pe.clone(), item);
        out.order.push((pe, item));
    }
    out
}

fn non_atomic_list<'v>(
    schema: &Schema,
    path: &[PathElement],
    v: &'v Value,
) -> Option<(ListType, &'v [Value])> {
    match (schema.list_type(path), v) {
        (ListType::Atomic, _) => None,
        (t, Value::Array(items)) => Some((t, items.as_slice())),
        _ => None,
    }
}

/// The fields `v` sets (structured-merge-diff's `ToFieldSet`): scalars, atomic lists and
/// maps, null and empty maps, list items, and every key of an element map.
pub fn to_field_set(schema: &Schema, v: &Value) -> Set {
    field_set_inner(schema, v, &mut Vec::new(), false).0
}

/// The same set where every field that has paths below it is also a member, except the
/// keys of element maps: `to_field_set` then [`Set::with_named_fields_as_members`], in one
/// walk (what pruning compares).
pub(crate) fn to_named_field_set(schema: &Schema, v: &Value) -> Set {
    field_set_inner(schema, v, &mut Vec::new(), true).0
}

/// The fields `v` (at `path`) sets below `path`, and whether `path` is itself one. Each
/// node is built where it is walked, bottom up: no path is looked up again from the root.
fn field_set_inner(schema: &Schema, v: &Value, path: &mut Path, named: bool) -> (Set, bool) {
    let mut out = Set::new();
    match v {
        Value::Object(m) if !schema.is_atomic_map(path) => {
            let element_map = schema.is_element_map(path);
            for (k, val) in m {
                path.push(PathElement::Field(k.clone()));
                let (below, member) = field_set_inner(schema, val, path, named);
                let pe = path.pop().expect("pushed above");
                let empty = val.is_null() || val.as_object().is_some_and(Map::is_empty);
                let member = member || empty || element_map || (named && !below.is_empty());
                out.add(pe, below, member);
            }
            (out, false)
        }
        Value::Array(_) => {
            let Some((t, items)) = non_atomic_list(schema, path, v) else {
                return (out, true);
            };
            let items = index_items(&t, items);
            for (pe, item) in items.order {
                let duplicated = items.duplicates.contains(&pe);
                path.push(pe);
                // A duplicated item is owned as a whole, not field by field.
                let below = if duplicated {
                    Set::new()
                } else {
                    field_set_inner(schema, item, path, named).0
                };
                let pe = path.pop().expect("pushed above");
                out.add(pe, below, true);
            }
            (out, false)
        }
        _ => (out, true),
    }
}

/// What changed from `old` to `new` (structured-merge-diff's `Compare`), without the
/// fields the schema never tracks.
pub(crate) fn compare(schema: &Schema, old: &Value, new: &Value) -> Comparison {
    let mut c = Comparison::default();
    compare_inner(schema, Some(old), Some(new), &mut Vec::new(), &mut c);
    c.untracked_removed(schema)
}

fn list_items(v: Option<&Value>) -> &[Value] {
    v.and_then(Value::as_array).map_or(&[][..], Vec::as_slice)
}

fn is_empty_container(v: Option<&Value>) -> bool {
    match v {
        None | Some(Value::Null) => true,
        Some(Value::Object(m)) => m.is_empty(),
        Some(Value::Array(a)) => a.is_empty(),
        Some(_) => false,
    }
}

fn compare_inner(
    schema: &Schema,
    old: Option<&Value>,
    new: Option<&Value>,
    path: &mut Path,
    c: &mut Comparison,
) {
    let both_empty = is_empty_container(old) && is_empty_container(new);
    let all = |f: &dyn Fn(&Value) -> bool| old.is_none_or(f) && new.is_none_or(f);
    let descended = if both_empty {
        false
    } else if all(&|v| v.is_object() && !schema.is_atomic_map(path)) {
        let (lm, rm) = (
            old.and_then(Value::as_object),
            new.and_then(Value::as_object),
        );
        let visit = |k: &String| {
            path.push(PathElement::Field(k.clone()));
            let (l, r) = (lm.and_then(|m| m.get(k)), rm.and_then(|m| m.get(k)));
            compare_inner(schema, l, r, path, c);
            path.pop();
        };
        // Each key once; the keys of one map alone (every field of a create) need no set.
        match (lm.filter(|m| !m.is_empty()), rm.filter(|m| !m.is_empty())) {
            (Some(l), Some(r)) => l
                .keys()
                .chain(r.keys())
                .collect::<BTreeSet<_>>()
                .into_iter()
                .for_each(visit),
            (Some(m), None) | (None, Some(m)) => m.keys().for_each(visit),
            (None, None) => {}
        }
        true
    } else if let Some(t) = all(&Value::is_array)
        .then(|| schema.list_type(path))
        .filter(|t| *t != ListType::Atomic)
    {
        // (The list type is looked up for lists only, not for every scalar.)
        let (l, r) = (
            index_items(&t, list_items(old)),
            index_items(&t, list_items(new)),
        );
        let pes: BTreeSet<&PathElement> = l.by_pe.keys().chain(r.by_pe.keys()).collect();
        for pe in pes {
            path.push(pe.clone());
            let (lv, rv) = (l.by_pe.get(pe).copied(), r.by_pe.get(pe).copied());
            compare_inner(schema, lv, rv, path, c);
            path.pop();
        }
        true
    } else {
        false
    };
    match (old, new) {
        (None, _) => c.added.insert(path),
        (_, None) => c.removed.insert(path),
        (Some(l), Some(r)) if !descended && l != r => c.modified.insert(path),
        _ => {}
    }
}

/// `config` merged into `live` (structured-merge-diff's `Merge`): maps field by field, sets
/// and map-lists item by item (live's order, the configuration's items in its own order),
/// anything else replaced by the configuration's value.
pub(crate) fn merge(schema: &Schema, live: &Value, config: &Value) -> Value {
    merge_inner(schema, Some(live), config, &mut Vec::new())
}

fn merge_inner(schema: &Schema, live: Option<&Value>, config: &Value, path: &mut Path) -> Value {
    match (live, config) {
        (Some(Value::Object(lm)), Value::Object(cm)) if !schema.is_atomic_map(path) => {
            let mut out = lm.clone();
            for (k, cv) in cm {
                path.push(PathElement::Field(k.clone()));
                let merged = merge_inner(schema, lm.get(k), cv, path);
                path.pop();
                out.insert(k.clone(), merged);
            }
            Value::Object(out)
        }
        (Some(l @ Value::Array(_)), Value::Array(_)) => {
            let (Some((t, litems)), Some((_, citems))) = (
                non_atomic_list(schema, path, l),
                non_atomic_list(schema, path, config),
            ) else {
                return config.clone();
            };
            let (l, c) = (index_items(&t, litems), index_items(&t, citems));
            let mut out = Vec::with_capacity(l.order.len() + c.order.len());
            let mut emitted = BTreeSet::new();
            let mut next = c.order.iter();
            let mut emit = |pe: &PathElement, cv: &Value, path: &mut Path, out: &mut Vec<Value>| {
                if emitted.insert(pe.clone()) {
                    path.push(pe.clone());
                    out.push(merge_inner(schema, l.by_pe.get(pe).copied(), cv, path));
                    path.pop();
                }
            };
            for (pe, lv) in &l.order {
                if !c.by_pe.contains_key(pe) {
                    out.push((*lv).clone());
                    continue;
                }
                // The configuration's items up to this one, in its order.
                for (cpe, cv) in next.by_ref() {
                    emit(cpe, cv, path, &mut out);
                    if cpe == pe {
                        break;
                    }
                }
            }
            for (cpe, cv) in next {
                emit(cpe, cv, path, &mut out);
            }
            Value::Array(out)
        }
        _ => config.clone(),
    }
}

/// `v` without the paths that are members of `set`; a map or list left empty becomes null
/// (structured-merge-diff's `RemoveItems`).
pub(crate) fn remove_items(schema: &Schema, v: &Value, set: &Set) -> Value {
    remove_inner(schema, v, set, &mut Vec::new())
}

fn remove_inner(schema: &Schema, v: &Value, set: &Set, path: &mut Path) -> Value {
    let emptied = |empty: bool, out: Value| if empty { Value::Null } else { out };
    match v {
        Value::Object(m) if !m.is_empty() && !schema.is_atomic_map(path) => {
            let mut out = Map::new();
            for (k, val) in m {
                let pe = PathElement::Field(k.clone());
                if set.has_member(&pe) {
                    continue;
                }
                let kept = match set.child(&pe) {
                    Some(sub) => {
                        path.push(pe);
                        let r = remove_inner(schema, val, sub, path);
                        path.pop();
                        r
                    }
                    None => val.clone(),
                };
                out.insert(k.clone(), kept);
            }
            emptied(out.is_empty(), Value::Object(out))
        }
        Value::Array(items) if !items.is_empty() => {
            let Some((t, _)) = non_atomic_list(schema, path, v) else {
                return v.clone();
            };
            let mut out = Vec::with_capacity(items.len());
            for (i, item) in items.iter().enumerate() {
                let pe = item_element(&t, item, i);
                if set.has_member(&pe) {
                    continue;
                }
                out.push(match set.child(&pe) {
                    Some(sub) => {
                        path.push(pe);
                        let r = remove_inner(schema, item, sub, path);
                        path.pop();
                        r
                    }
                    None => item.clone(),
                });
            }
            emptied(out.is_empty(), Value::Array(out))
        }
        _ => v.clone(),
    }
}

#[cfg(test)]
mod tests {
    use std::borrow::Cow;

    use serde_json::json;

    use super::*;
    use crate::apply::schema::ApplySchema;

    /// A set (`spec.tags`), a map-list keyed by `name` (`spec.ports`) and an atomic map
    /// (`spec.selector`), beside the metadata rules every object has.
    static SCHEMA: Schema = Schema::of(ApplySchema {
        lists: &[
            ("spec.tags", ListType::Set),
            (
                "spec.ports",
                ListType::Map(Cow::Borrowed(&[Cow::Borrowed("name")])),
            ),
        ],
        atomic_maps: &["spec.selector"],
    });

    #[test]
    fn named_field_sets_in_one_walk_are_the_field_sets_with_named_fields_as_members() {
        let objects = [
            json!({"apiVersion": "v1", "kind": "K", "metadata": {"name": "a"}}),
            json!({
                "metadata": {
                    "name": "a",
                    "labels": {"app": "x", "tier": ""},
                    "annotations": {},
                    "finalizers": ["f", "f"],
                    "ownerReferences": [{"uid": "u", "name": "o"}],
                },
                "spec": {
                    "tags": ["a", {"not": "scalar"}, "b"],
                    "ports": [{"name": "http", "port": 80}, {"port": 1}, {"name": "http"}],
                    "selector": {"a": {"b": 1}},
                    "empty": [],
                    "atomic": [1, 2],
                    "null": null,
                    "nested": {"deeper": {"x": 1}, "blank": {}},
                },
                "status": {"phase": "Ready"},
            }),
            json!("scalar"),
        ];
        for v in &objects {
            let walked_twice = to_field_set(&SCHEMA, v)
                .with_named_fields_as_members(&|p| SCHEMA.is_element_map(p));
            assert_eq!(to_named_field_set(&SCHEMA, v), walked_twice, "{v}");
        }
        // An empty set-list sets nothing, so the field holding it is not made a member.
        let empty_list = to_named_field_set(&SCHEMA, &json!({"spec": {"tags": []}}));
        assert!(empty_list.is_empty());
        let named = to_named_field_set(&SCHEMA, &json!({"spec": {"tags": ["a"]}}));
        assert_eq!(
            named.to_fields_v1(),
            json!({"f:spec": {".": {}, "f:tags": {".": {}, "v:\"a\"": {}}}})
        );
    }
}
