//! `metadata.managedFields`: who owns which fields, and how applies and updates move that
//! ownership (structured-merge-diff's `merge.Updater`, with the bookkeeping Kubernetes' field
//! manager adds around it: untracked fields, times, manager identities).

use std::borrow::Cow;
use std::collections::BTreeMap;

use serde_json::Value;

use super::fieldpath::{Path, Set, path_string};
use super::schema::Schema;
use super::typed::{Comparison, compare, merge, remove_items, to_field_set, to_named_field_set};
use crate::meta::{ManagedFieldsEntry, Time};

/// What a manager did: apply a configuration, or write the object some other way.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Operation {
    /// Server-side apply.
    Apply,
    /// Create, update, or a patch that is not an apply.
    Update,
}

impl Operation {
    fn as_str(self) -> &'static str {
        match self {
            Operation::Apply => "Apply",
            Operation::Update => "Update",
        }
    }
}

/// Who a `managedFields` entry belongs to. An applier is the same manager whatever version
/// it applies in; an updater is a different one per version (Kubernetes'
/// `BuildManagerIdentifier`).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct ManagerId {
    /// The manager's name (`fieldManager`, or the User-Agent's product).
    pub(crate) manager: String,
    /// How it wrote.
    pub(crate) operation: Operation,
    /// The version it wrote in, for updaters; empty for appliers.
    pub(crate) api_version: String,
    /// The subresource it wrote through, if any.
    pub(crate) subresource: String,
}

impl ManagerId {
    /// The identity of `manager` doing `operation` in `api_version`.
    pub fn new(manager: &str, operation: Operation, api_version: &str) -> Self {
        Self {
            manager: manager.to_owned(),
            operation,
            api_version: match operation {
                Operation::Apply => String::new(),
                Operation::Update => api_version.to_owned(),
            },
            subresource: String::new(),
        }
    }

    /// The manager as conflict messages name it: `"mgr"`, and for an updater
    /// `"mgr" using wardle.example.com/v1alpha1`.
    pub(crate) fn describe(&self) -> String {
        let mut s = format!("{:?}", self.manager);
        if !self.subresource.is_empty() {
            s.push_str(&format!(" with subresource {:?}", self.subresource));
        }
        if self.operation == Operation::Update {
            s.push_str(&format!(" using {}", self.api_version));
        }
        s
    }
}

/// One manager's fields.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Managed {
    /// The version the paths are in.
    pub(crate) api_version: String,
    /// When the manager last changed the object.
    pub(crate) time: Option<Time>,
    /// The fields it owns.
    pub(crate) set: Set,
}

/// Every manager of an object.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ManagedFields(pub(crate) BTreeMap<ManagerId, Managed>);

/// Whether a client's `managedFields` asks for them to be cleared: an empty list, or a list
/// of one empty entry (Kubernetes' `isResetManagedFields`). An absent list keeps them.
pub(crate) fn is_reset(entries: Option<&[ManagedFieldsEntry]>) -> bool {
    match entries {
        None => false,
        Some([]) => true,
        Some([one]) => *one == ManagedFieldsEntry::default(),
        Some(_) => false,
    }
}

impl ManagedFields {
    /// Reads `managedFields` entries; the messages are Kubernetes'.
    pub(crate) fn decode(entries: &[ManagedFieldsEntry]) -> Result<Self, String> {
        let mut out = BTreeMap::new();
        for (i, e) in entries.iter().enumerate() {
            let operation = match e.operation.as_str() {
                "Apply" => Operation::Apply,
                "Update" => Operation::Update,
                _ => return Err("operation must be `Apply` or `Update`".into()),
            };
            if e.api_version.is_empty() {
                return Err("apiVersion must not be empty".into());
            }
            match e.fields_type.as_str() {
                "FieldsV1" => {}
                "" => return Err(format!("missing fieldsType in managed fields entry {i}")),
                other => {
                    return Err(format!(
                        "invalid fieldsType {other:?} in managed fields entry {i}"
                    ));
                }
            }
            let set = match &e.fields_v1 {
                Some(v) => Set::from_fields_v1(v)
                    .map_err(|err| format!("error decoding versioned set: {err}"))?,
                None => Set::new(),
            };
            let mut id = ManagerId::new(&e.manager, operation, &e.api_version);
            id.subresource.clone_from(&e.subresource);
            out.insert(
                id,
                Managed {
                    api_version: e.api_version.clone(),
                    time: e.time,
                    set,
                },
            );
        }
        Ok(Self(out))
    }

    /// The entries as Kubernetes writes them: appliers first, then by time, manager, version
    /// and subresource; managers that own nothing are left out.
    pub(crate) fn encode(&self) -> Vec<ManagedFieldsEntry> {
        let mut out: Vec<ManagedFieldsEntry> = self
            .0
            .iter()
            .filter(|(_, m)| !m.set.is_empty())
            .map(|(id, m)| ManagedFieldsEntry {
                manager: id.manager.clone(),
                operation: id.operation.as_str().into(),
                api_version: m.api_version.clone(),
                time: m.time,
                fields_type: "FieldsV1".into(),
                fields_v1: Some(m.set.to_fields_v1()),
                subresource: id.subresource.clone(),
            })
            .collect();
        out.sort_by(|p, q| {
            let secs = |e: &ManagedFieldsEntry| e.time.map_or(0, |t| t.unix_seconds);
            p.operation
                .cmp(&q.operation)
                .then_with(|| secs(p).cmp(&secs(q)))
                .then_with(|| p.manager.cmp(&q.manager))
                .then_with(|| p.api_version.cmp(&q.api_version))
                .then_with(|| p.subresource.cmp(&q.subresource))
        });
        out
    }

    fn drop_empty(&mut self) {
        self.0.retain(|_, m| !m.set.is_empty());
    }
}

/// Object conversion between the versions managers recorded their fields in.
pub trait Converter {
    /// `obj`, an object in `from` (`group/version`), in `to`; `None` when either version is
    /// not served (a manager recorded in such a version is forgotten, as Kubernetes does).
    fn convert(&self, obj: &Value, from: &str, to: &str) -> Option<Value>;
}

/// A field another manager owns that a request would change.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Conflict {
    /// The owner.
    pub(crate) manager: ManagerId,
    /// The field, in the owner's version.
    pub(crate) path: Path,
}

impl Conflict {
    /// `.spec.flunderReference`.
    pub(crate) fn field(&self) -> String {
        path_string(&self.path)
    }
}

/// Kubernetes' message for an apply that conflicts:
/// `Apply failed with 1 conflict: conflict with "mgr-a": .spec.flunderReference`, and for
/// several, one line per manager then one per field.
pub(crate) fn conflict_message(conflicts: &[Conflict]) -> String {
    if let [one] = conflicts {
        return format!(
            "Apply failed with 1 conflict: conflict with {}: {}",
            one.manager.describe(),
            one.field()
        );
    }
    let mut by_manager: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for c in conflicts {
        by_manager
            .entry(c.manager.describe())
            .or_default()
            .push(c.field());
    }
    let mut lines = Vec::new();
    for (manager, fields) in by_manager {
        lines.push(format!("conflicts with {manager}:"));
        lines.extend(fields.into_iter().map(|f| format!("- {f}")));
    }
    format!(
        "Apply failed with {} conflicts: {}",
        conflicts.len(),
        lines.join("\n")
    )
}

/// Applies and updates on objects of one kind, in JSON, in the request's version.
pub struct Updater<'a> {
    /// The kind's schema.
    pub schema: &'a Schema,
    /// Conversion between its versions.
    pub converter: &'a dyn Converter,
    /// The request's version (`group/version`): the version of every object given.
    pub version: &'a str,
    /// The time recorded for a manager that changes the object.
    pub now: Time,
}

impl Updater<'_> {
    /// `obj` in `to`: itself, not a copy, when it is already there.
    fn convert<'v>(&self, obj: &'v Value, from: &str, to: &str) -> Option<Cow<'v, Value>> {
        if from == to {
            return Some(Cow::Borrowed(obj));
        }
        self.converter.convert(obj, from, to).map(Cow::Owned)
    }

    /// Server-side apply of `config` by `me` onto `live`: the merged object, with fields
    /// `me` applied before and no longer applies removed unless someone else owns them.
    /// `managers` becomes what the object records. Fields other managers own that the
    /// apply would change are conflicts, unless `force` takes them.
    pub fn apply(
        &self,
        live: &Value,
        config: &Value,
        managers: &mut ManagedFields,
        me: &ManagerId,
        force: bool,
    ) -> Result<Value, Vec<Conflict>> {
        let merged = merge(self.schema, live, config);
        let last = managers.0.remove(me);
        let applied = to_field_set(self.schema, config);
        // Reset subtrees (status) are not applied; the server's own fields are owned while
        // the apply runs, so pruning keeps them, and are left out of what is recorded.
        let applied = self.schema.without_reset(applied);
        managers.0.insert(
            me.clone(),
            Managed {
                api_version: self.version.to_owned(),
                time: last.as_ref().and_then(|m| m.time),
                set: applied.clone(),
            },
        );
        let new = match &last {
            Some(last) if !last.set.is_empty() => self.prune(&merged, managers, last),
            _ => merged,
        };
        self.take_changes(live, &new, managers, Some(me), force)?;
        let recorded = self.schema.untracked_removed(applied);
        if let Some(m) = managers.0.get_mut(me) {
            m.set = recorded;
            if new != *live {
                m.time = Some(self.now);
            }
        }
        managers.drop_empty();
        Ok(new)
    }

    /// A write that is not an apply, from `live` to `new`, by `me`: `me` takes every field it
    /// changed, from whoever owned it.
    pub fn update(&self, live: &Value, new: &Value, managers: &mut ManagedFields, me: &ManagerId) {
        let Ok(cmp) = self.take_changes(live, new, managers, None, true) else {
            return;
        };
        let changed = cmp.changed();
        if changed.is_empty() {
            return;
        }
        let set = match managers.0.remove(me) {
            Some(prev) => changed.union(&prev.set),
            None => changed,
        };
        managers.0.insert(
            me.clone(),
            Managed {
                api_version: self.version.to_owned(),
                time: Some(self.now),
                set,
            },
        );
    }

    /// Checks the change from `old` to `new` against every manager but `me`, each in its own
    /// version: without `force`, a changed field someone owns is a conflict; with it, they
    /// lose it. Removed fields are lost by everyone.
    fn take_changes(
        &self,
        old: &Value,
        new: &Value,
        managers: &mut ManagedFields,
        me: Option<&ManagerId>,
        force: bool,
    ) -> Result<Comparison, Vec<Conflict>> {
        let here = compare(self.schema, old, new);
        // The comparison in each other version a manager records, converted once.
        let mut by_version: BTreeMap<&str, Option<Comparison>> = BTreeMap::new();
        let mut conflicts = Vec::new();
        let mut losses = Vec::new();
        let mut forgotten = Vec::new();
        for (id, m) in &managers.0 {
            if Some(id) == me {
                continue;
            }
            let cmp = if m.api_version == self.version {
                Some(&here)
            } else {
                by_version
                    .entry(&m.api_version)
                    .or_insert_with(|| {
                        let o = self.convert(old, self.version, &m.api_version)?;
                        let n = self.convert(new, self.version, &m.api_version)?;
                        Some(compare(self.schema, &o, &n))
                    })
                    .as_ref()
            };
            let Some(cmp) = cmp else {
                forgotten.push(id.clone());
                continue;
            };
            let taken = m.set.intersection(&cmp.changed());
            conflicts.extend(taken.paths().into_iter().map(|path| Conflict {
                manager: id.clone(),
                path,
            }));
            let lost = taken.union(&cmp.removed);
            if !lost.is_empty() {
                losses.push((id.clone(), lost));
            }
        }
        if !force && !conflicts.is_empty() {
            conflicts.sort_by(|a, b| a.manager.cmp(&b.manager));
            return Err(conflicts);
        }
        for id in forgotten {
            managers.0.remove(&id);
        }
        for (id, lost) in losses {
            if let Some(m) = managers.0.get_mut(&id) {
                m.set = m.set.difference(&lost);
            }
        }
        managers.drop_empty();
        Ok(here)
    }

    /// `merged` without the fields in `last` (what the applier applied before) that no
    /// manager owns now, each manager's fields seen in its own version.
    fn prune(&self, merged: &Value, managers: &ManagedFields, last: &Managed) -> Value {
        let named = |s: &Set| s.with_named_fields_as_members(&|p| self.schema.is_element_map(p));
        let fields = |v: &Value| to_named_field_set(self.schema, v);
        let lv = last.api_version.as_str();
        let Some(merged_lv) = self.convert(merged, self.version, lv) else {
            return merged.clone();
        };
        // The merged object's fields in the last version: walked once, used twice.
        let merged_fields = fields(&merged_lv);
        let last_set = named(&last.set);
        let mut owned: BTreeMap<&str, Set> = BTreeMap::new();
        for m in managers.0.values() {
            let at = owned.entry(m.api_version.as_str()).or_default();
            *at = at.union(&m.set);
        }
        // Remove everything applied last time, then add back what someone owns, version by
        // version (the last version first).
        let mut pruned = remove_items(self.schema, &merged_lv, &last_set);
        let mut at = lv;
        let order = owned
            .get_key_value(lv)
            .into_iter()
            .chain(owned.iter().filter(|(v, _)| **v != lv));
        for (version, set) in order {
            let Some(m) = self.convert(&merged_lv, lv, version) else {
                continue;
            };
            let gone = {
                let Some(p) = self.convert(&pruned, at, version) else {
                    continue;
                };
                let kept = fields(&p).union(&named(set));
                if *version == lv {
                    merged_fields.difference(&kept)
                } else {
                    fields(&m).difference(&kept)
                }
            };
            pruned = remove_items(self.schema, &m, &gone);
            at = version;
        }
        // Items that went with a removed parent come back unless they were applied last
        // time themselves.
        let Some(p) = self.convert(&pruned, at, lv) else {
            return merged.clone();
        };
        let dangling = merged_fields
            .difference(&fields(&p))
            .intersection(&last_set);
        let out = remove_items(self.schema, &merged_lv, &dangling);
        match self.convert(&out, lv, self.version) {
            Some(Cow::Owned(converted)) => converted,
            Some(Cow::Borrowed(_)) => out,
            None => merged.clone(),
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;
    use std::borrow::Cow;

    use super::*;
    use crate::apply::schema::ApplySchema;
    use crate::declarative::ListType;

    /// A kind with a list of maps keyed by two fields (`+listType=map`,
    /// `+listMapKey=containerPort`, `+listMapKey=protocol`) and a set (`+listType=set`), beside
    /// the metadata lists every object has: `finalizers` (a set) and `ownerReferences` (a map
    /// keyed by `uid` whose items are atomic, `+structType=atomic`).
    static SCHEMA: Schema = Schema::of(ApplySchema {
        lists: &[
            (
                "spec.ports",
                ListType::Map(Cow::Borrowed(&[
                    Cow::Borrowed("containerPort"),
                    Cow::Borrowed("protocol"),
                ])),
            ),
            ("spec.tags", ListType::Set),
        ],
        atomic_maps: &[],
    });

    const VERSION: &str = "wardle.example.com/v1beta1";

    /// A kind served in one version.
    struct OneVersion;

    impl Converter for OneVersion {
        fn convert(&self, _: &Value, _: &str, _: &str) -> Option<Value> {
            None
        }
    }

    fn updater() -> Updater<'static> {
        Updater {
            schema: &SCHEMA,
            converter: &OneVersion,
            version: VERSION,
            now: Time {
                unix_seconds: 1_700_000_000,
            },
        }
    }

    /// An object; without `spec` when it is null.
    fn object(metadata: Value, spec: Value) -> Value {
        let mut o = json!({"apiVersion": VERSION, "kind": "Flunder", "metadata": metadata});
        if !spec.is_null() {
            o["spec"] = spec;
        }
        o
    }

    fn owner(uid: &str, name: &str) -> Value {
        json!({"apiVersion": "v1", "kind": "ConfigMap", "name": name, "uid": uid})
    }

    fn port(number: u16, name: &str) -> Value {
        json!({"containerPort": number, "protocol": "TCP", "name": name})
    }

    /// The object a creator wrote, and its managers.
    fn created() -> (Value, ManagedFields) {
        let mut reference = owner("u1", "cm");
        reference["blockOwnerDeletion"] = json!(true);
        let new = object(
            json!({"name": "x", "finalizers": ["example.com/a"], "ownerReferences": [reference]}),
            json!({"ports": [port(80, "http")], "tags": ["b", "a"]}),
        );
        let mut managers = ManagedFields::default();
        let creator = ManagerId::new("creator", Operation::Update, VERSION);
        let live = object(json!({"name": "x"}), Value::Null);
        updater().update(&live, &new, &mut managers, &creator);
        (new, managers)
    }

    fn entries(managers: &ManagedFields) -> Value {
        serde_json::to_value(managers.encode()).unwrap()
    }

    fn entry(manager: &str, operation: &str, fields: Value) -> Value {
        json!({
            "manager": manager,
            "operation": operation,
            "apiVersion": VERSION,
            "time": "2023-11-14T22:13:20Z",
            "fieldsType": "FieldsV1",
            "fieldsV1": fields,
        })
    }

    /// What the creator owns, as Kubernetes records an `Update`: every list, map and item it
    /// added is itself a member (`"."`); an owner reference is owned whole.
    fn creator_fields() -> Value {
        json!({
            "f:metadata": {
                "f:finalizers": {".": {}, "v:\"example.com/a\"": {}},
                "f:ownerReferences": {".": {}, "k:{\"uid\":\"u1\"}": {}},
            },
            "f:spec": {
                ".": {},
                "f:ports": {
                    ".": {},
                    "k:{\"containerPort\":80,\"protocol\":\"TCP\"}": {
                        ".": {}, "f:containerPort": {}, "f:name": {}, "f:protocol": {},
                    },
                },
                "f:tags": {".": {}, "v:\"a\"": {}, "v:\"b\"": {}},
            },
        })
    }

    #[test]
    fn an_update_records_associative_lists_as_kubernetes_does() {
        let (_, managers) = created();
        assert_eq!(
            entries(&managers),
            json!([entry("creator", "Update", creator_fields())])
        );
    }

    #[test]
    fn an_apply_owns_the_items_it_applies_and_merges_them_with_the_others() {
        let (live, mut managers) = created();
        let config = object(
            json!({"name": "x", "finalizers": ["example.com/b"], "ownerReferences": [owner("u2", "other")]}),
            json!({"ports": [port(443, "https")], "tags": ["c"]}),
        );
        let applier = ManagerId::new("applier", Operation::Apply, VERSION);
        let merged = updater()
            .apply(&live, &config, &mut managers, &applier, false)
            .unwrap();
        assert_eq!(
            merged["metadata"]["finalizers"],
            json!(["example.com/a", "example.com/b"])
        );
        assert_eq!(
            merged["metadata"]["ownerReferences"],
            json!([live["metadata"]["ownerReferences"][0], owner("u2", "other")])
        );
        assert_eq!(
            merged["spec"],
            json!({"ports": [port(80, "http"), port(443, "https")], "tags": ["b", "a", "c"]})
        );
        // Appliers come first; no "." where the applier only added to what was there.
        let applied = json!({
            "f:metadata": {
                "f:finalizers": {"v:\"example.com/b\"": {}},
                "f:ownerReferences": {"k:{\"uid\":\"u2\"}": {}},
            },
            "f:spec": {
                "f:ports": {
                    "k:{\"containerPort\":443,\"protocol\":\"TCP\"}": {
                        ".": {}, "f:containerPort": {}, "f:name": {}, "f:protocol": {},
                    },
                },
                "f:tags": {"v:\"c\"": {}},
            },
        });
        assert_eq!(
            entries(&managers),
            json!([
                entry("applier", "Apply", applied),
                entry("creator", "Update", creator_fields()),
            ])
        );
    }

    #[test]
    fn an_owner_reference_is_one_field_taken_whole_by_force() {
        let (live, mut managers) = created();
        let renamed = owner("u1", "renamed");
        let config = object(
            json!({"name": "x", "ownerReferences": [renamed]}),
            Value::Null,
        );
        let applier = ManagerId::new("applier", Operation::Apply, VERSION);
        let conflicts = updater()
            .apply(&live, &config, &mut managers.clone(), &applier, false)
            .unwrap_err();
        assert_eq!(
            conflict_message(&conflicts),
            "Apply failed with 1 conflict: conflict with \"creator\" using \
             wardle.example.com/v1beta1: .metadata.ownerReferences[uid=\"u1\"]"
        );
        let merged = updater()
            .apply(&live, &config, &mut managers, &applier, true)
            .unwrap();
        // The applied item replaces the one there (its blockOwnerDeletion goes with it).
        assert_eq!(merged["metadata"]["ownerReferences"], json!([renamed]));
        // The creator keeps the list, not the item.
        let creator = &entries(&managers)[1]["fieldsV1"]["f:metadata"];
        assert_eq!(creator["f:ownerReferences"], json!({}));
    }
}
