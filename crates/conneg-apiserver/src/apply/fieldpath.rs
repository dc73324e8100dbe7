//! Field paths and field sets, as structured-merge-diff defines them, and their `FieldsV1`
//! form (the `fieldsV1` of a `managedFields` entry).
//!
//! A [`Path`] is a list of [`PathElement`]s: a map field (`f:name`), an item of a list keyed by
//! some of its fields (`k:{"uid":"…"}`), an item of a set (`v:"value"`), or a list index
//! (`i:3`). A [`Set`] is a tree of paths: each node has *members* (paths that end there) and
//! *children* (paths that go on). `FieldsV1` writes a node as a JSON object whose keys are the
//! serialized elements, members as `{}`, and a child that is also a member with a `"."` key.

use std::cmp::Ordering;
use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

use serde_json::{Map, Value};

/// How deep a `FieldsV1` document may nest. The objects it describes are bounded by the
/// patch depth limit; a deeper document is refused rather than walked.
const MAX_DEPTH: usize = 128;

/// One step of a [`Path`].
#[derive(Debug, Clone)]
pub enum PathElement {
    /// A field of a map (`f:<name>`).
    Field(String),
    /// An item of an associative list, by its key fields sorted by name (`k:{…}`).
    Key(Vec<(String, Value)>),
    /// An item of a set (`v:<json>`).
    Value(Value),
    /// An item of a list by position (`i:<n>`).
    Index(i64),
}

/// A path from the root of an object.
pub type Path = Vec<PathElement>;

impl PathElement {
    fn rank(&self) -> u8 {
        match self {
            PathElement::Field(_) => 0,
            PathElement::Key(_) => 1,
            PathElement::Value(_) => 2,
            PathElement::Index(_) => 3,
        }
    }

    /// The element in its `FieldsV1` form (`f:spec`, `k:{"uid":"u"}`, `v:"a"`, `i:0`).
    pub fn to_fields_v1_key(&self) -> String {
        match self {
            // Most elements, on every write: joined, not formatted.
            PathElement::Field(name) => ["f:", name].concat(),
            PathElement::Key(fields) => {
                let map: Map<String, Value> = fields.iter().cloned().collect();
                format!("k:{}", Value::Object(map))
            }
            PathElement::Value(v) => format!("v:{v}"),
            PathElement::Index(i) => format!("i:{i}"),
        }
    }

    /// Parses a `FieldsV1` key: a type letter, `:`, the element. `Ok(None)` for a type letter
    /// this format does not know, which structured-merge-diff skips; a key without the
    /// letter and colon is an error, as there.
    pub(crate) fn from_fields_v1_key(key: &str) -> Result<Option<Self>, String> {
        let bad = |e: &dyn fmt::Display| format!("parsing key as path element: {key:?}: {e}");
        let (prefix, rest) = match key.char_indices().nth(1) {
            Some((1, ':')) => (&key[..1], &key[2..]),
            Some(_) => return Err(bad(&"missing colon")),
            None => return Err(bad(&"key must be 2 characters long")),
        };
        Ok(Some(match prefix {
            "f" => PathElement::Field(rest.to_owned()),
            "v" => PathElement::Value(serde_json::from_str(rest).map_err(|e| bad(&e))?),
            "i" => PathElement::Index(rest.parse().map_err(|e| bad(&e))?),
            "k" => match serde_json::from_str::<Value>(rest).map_err(|e| bad(&e))? {
                Value::Object(m) if !m.is_empty() => PathElement::Key(m.into_iter().collect()),
                _ => return Err(bad(&"a key must be a non-empty JSON object")),
            },
            _ => return Ok(None),
        }))
    }
}

/// structured-merge-diff's total order of values: numbers, strings, booleans, lists, maps,
/// then null.
fn compare_values(a: &Value, b: &Value) -> Ordering {
    fn rank(v: &Value) -> u8 {
        match v {
            Value::Number(_) => 0,
            Value::String(_) => 1,
            Value::Bool(_) => 2,
            Value::Array(_) => 3,
            Value::Object(_) => 4,
            Value::Null => 5,
        }
    }
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => match (x.as_i64(), y.as_i64()) {
            (Some(x), Some(y)) => x.cmp(&y),
            _ => {
                let (x, y) = (x.as_f64().unwrap_or(0.0), y.as_f64().unwrap_or(0.0));
                x.total_cmp(&y)
            }
        },
        (Value::String(x), Value::String(y)) => x.cmp(y),
        (Value::Bool(x), Value::Bool(y)) => x.cmp(y),
        (Value::Array(x), Value::Array(y)) => x
            .iter()
            .zip(y)
            .map(|(x, y)| compare_values(x, y))
            .find(|o| o.is_ne())
            .unwrap_or_else(|| x.len().cmp(&y.len())),
        (Value::Object(x), Value::Object(y)) => x
            .iter()
            .zip(y)
            .map(|((kx, vx), (ky, vy))| kx.cmp(ky).then_with(|| compare_values(vx, vy)))
            .find(|o| o.is_ne())
            .unwrap_or_else(|| x.len().cmp(&y.len())),
        _ => rank(a).cmp(&rank(b)),
    }
}

impl Ord for PathElement {
    fn cmp(&self, other: &Self) -> Ordering {
        match (self, other) {
            (PathElement::Field(a), PathElement::Field(b)) => a.cmp(b),
            (PathElement::Key(a), PathElement::Key(b)) => a
                .iter()
                .zip(b)
                .map(|((na, va), (nb, vb))| na.cmp(nb).then_with(|| compare_values(va, vb)))
                .find(|o| o.is_ne())
                .unwrap_or_else(|| a.len().cmp(&b.len())),
            (PathElement::Value(a), PathElement::Value(b)) => compare_values(a, b),
            (PathElement::Index(a), PathElement::Index(b)) => a.cmp(b),
            _ => self.rank().cmp(&other.rank()),
        }
    }
}

impl PartialOrd for PathElement {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl PartialEq for PathElement {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other).is_eq()
    }
}

impl Eq for PathElement {}

impl fmt::Display for PathElement {
    /// The form of conflict messages: `.name`, `[uid="u"]`, `[="v"]`, `[3]`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PathElement::Field(name) => write!(f, ".{name}"),
            PathElement::Key(fields) => {
                f.write_str("[")?;
                for (i, (name, v)) in fields.iter().enumerate() {
                    if i > 0 {
                        f.write_str(",")?;
                    }
                    write!(f, "{name}={v}")?;
                }
                f.write_str("]")
            }
            PathElement::Value(v) => write!(f, "[={v}]"),
            PathElement::Index(i) => write!(f, "[{i}]"),
        }
    }
}

/// A path as conflict messages print it: `.spec.flunderReference`.
pub(crate) fn path_string(path: &[PathElement]) -> String {
    path.iter().map(ToString::to_string).collect()
}

/// A set of paths, as a tree.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Set {
    members: BTreeSet<PathElement>,
    children: BTreeMap<PathElement, Set>,
}

impl Set {
    /// The empty set.
    pub(crate) fn new() -> Self {
        Self::default()
    }

    /// Whether the set holds no path.
    pub(crate) fn is_empty(&self) -> bool {
        self.members.is_empty() && self.children.is_empty()
    }

    /// Adds `path` (the empty path is not a member of anything and is ignored).
    pub(crate) fn insert(&mut self, path: &[PathElement]) {
        let Some((last, parents)) = path.split_last() else {
            return;
        };
        // Elements are copied only where they are new: most paths share their parents.
        let mut node = self;
        for pe in parents {
            if !node.children.contains_key(pe) {
                node.children.insert(pe.clone(), Set::default());
            }
            node = node.children.get_mut(pe).expect("inserted above");
        }
        if !node.members.contains(last) {
            node.members.insert(last.clone());
        }
    }

    /// Adds `pe` at this level: as a member when `member`, with the paths `below` it.
    pub(crate) fn add(&mut self, pe: PathElement, below: Set, member: bool) {
        match (member, below.is_empty()) {
            (true, true) => {
                self.members.insert(pe);
            }
            (true, false) => {
                self.members.insert(pe.clone());
                self.children.insert(pe, below);
            }
            (false, false) => {
                self.children.insert(pe, below);
            }
            (false, true) => {}
        }
    }

    /// The paths under `pe`, without it (structured-merge-diff's `WithPrefix`).
    pub(crate) fn child(&self, pe: &PathElement) -> Option<&Set> {
        self.children.get(pe)
    }

    /// Whether `pe` is a member at this level.
    pub(crate) fn has_member(&self, pe: &PathElement) -> bool {
        self.members.contains(pe)
    }

    /// Every path in either set.
    pub(crate) fn union(&self, other: &Set) -> Set {
        let mut out = self.clone();
        out.members.extend(other.members.iter().cloned());
        for (pe, child) in &other.children {
            let merged = match out.children.get(pe) {
                Some(mine) => mine.union(child),
                None => child.clone(),
            };
            out.children.insert(pe.clone(), merged);
        }
        out
    }

    /// The paths in both sets.
    pub(crate) fn intersection(&self, other: &Set) -> Set {
        let mut out = Set::new();
        out.members = self.members.intersection(&other.members).cloned().collect();
        for (pe, child) in &self.children {
            if let Some(theirs) = other.children.get(pe) {
                out.put_child(pe, child.intersection(theirs));
            }
        }
        out
    }

    /// The paths in `self` that are not in `other`.
    pub(crate) fn difference(&self, other: &Set) -> Set {
        let mut out = self.clone();
        out.subtract(other, false);
        out
    }

    /// Takes `other`'s paths out of `self` in place (and, when `recursive`, every path below
    /// a member of `other`), dropping the nodes left empty: the set operations without a
    /// copy of what stays.
    pub(crate) fn subtract(&mut self, other: &Set, recursive: bool) {
        self.members.retain(|pe| !other.members.contains(pe));
        self.children.retain(|pe, child| {
            if recursive && other.members.contains(pe) {
                return false;
            }
            if let Some(theirs) = other.children.get(pe) {
                child.subtract(theirs, recursive);
            }
            !child.is_empty()
        });
    }

    /// The same set where every field that has paths below it is also a member, except
    /// the fields of maps `is_element_map` names (their keys are data, not a schema's
    /// fields): structured-merge-diff's `EnsureNamedFieldsAreMembers`, with "named field"
    /// read as "not a key of an element map".
    pub(crate) fn with_named_fields_as_members(
        &self,
        is_element_map: &dyn Fn(&[PathElement]) -> bool,
    ) -> Set {
        let mut prefix = Vec::new();
        self.named_fields_inner(&mut prefix, is_element_map)
    }

    fn named_fields_inner(
        &self,
        prefix: &mut Path,
        is_element_map: &dyn Fn(&[PathElement]) -> bool,
    ) -> Set {
        let mut out = Set {
            members: self.members.clone(),
            children: BTreeMap::new(),
        };
        let named = !is_element_map(prefix);
        for (pe, child) in &self.children {
            if named && matches!(pe, PathElement::Field(_)) {
                out.members.insert(pe.clone());
            }
            prefix.push(pe.clone());
            out.children
                .insert(pe.clone(), child.named_fields_inner(prefix, is_element_map));
            prefix.pop();
        }
        out
    }

    fn put_child(&mut self, pe: &PathElement, child: Set) {
        if !child.is_empty() {
            self.children.insert(pe.clone(), child);
        }
    }

    /// Every member path, members of a node before the paths below it (the order
    /// structured-merge-diff iterates in).
    pub fn paths(&self) -> Vec<Path> {
        let mut out = Vec::new();
        let mut prefix = Vec::new();
        self.paths_inner(&mut prefix, &mut out);
        out
    }

    fn paths_inner(&self, prefix: &mut Path, out: &mut Vec<Path>) {
        for pe in &self.members {
            let mut p = prefix.clone();
            p.push(pe.clone());
            out.push(p);
        }
        for (pe, child) in &self.children {
            prefix.push(pe.clone());
            child.paths_inner(prefix, out);
            prefix.pop();
        }
    }

    /// The set in `FieldsV1` form.
    pub(crate) fn to_fields_v1(&self) -> Value {
        let mut map = Map::new();
        for pe in self
            .members
            .iter()
            .filter(|pe| !self.children.contains_key(pe))
        {
            map.insert(pe.to_fields_v1_key(), Value::Object(Map::new()));
        }
        for (pe, child) in &self.children {
            let mut inner = match child.to_fields_v1() {
                Value::Object(m) => m,
                _ => Map::new(),
            };
            if self.members.contains(pe) {
                inner.insert(".".into(), Value::Object(Map::new()));
            }
            map.insert(pe.to_fields_v1_key(), Value::Object(inner));
        }
        Value::Object(map)
    }

    /// Reads a `FieldsV1` document. Keys with an unknown prefix are skipped, as
    /// structured-merge-diff does; anything else malformed is an error.
    pub(crate) fn from_fields_v1(v: &Value) -> Result<Set, String> {
        let Value::Object(map) = v else {
            return Err("FieldsV1 must be a JSON object".into());
        };
        Self::from_map(map, 0).map(|(set, _)| set)
    }

    /// The set a node holds, and whether the node is itself a member.
    fn from_map(map: &Map<String, Value>, depth: usize) -> Result<(Set, bool), String> {
        if depth > MAX_DEPTH {
            return Err(format!("FieldsV1 nested more than {MAX_DEPTH} levels deep"));
        }
        let mut set = Set::new();
        let mut member = false;
        for (key, v) in map {
            if key == "." {
                member = true;
                continue;
            }
            let Some(pe) = PathElement::from_fields_v1_key(key)? else {
                continue;
            };
            let Value::Object(inner) = v else {
                return Err(format!("the value of {key:?} must be a JSON object"));
            };
            let (child, child_member) = Self::from_map(inner, depth + 1)?;
            set.add(pe, child, child_member);
        }
        // A node with nothing (known) below it is a member.
        let member = member || set.is_empty();
        Ok((set, member))
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use proptest::prelude::*;
    use serde_json::json;

    use super::*;

    fn f(name: &str) -> PathElement {
        PathElement::Field(name.into())
    }

    /// A key element, its fields sorted by name as the element requires.
    fn key(fields: &[(&str, Value)]) -> PathElement {
        let mut fields: Vec<(String, Value)> = fields
            .iter()
            .map(|(n, v)| ((*n).into(), v.clone()))
            .collect();
        fields.sort_by(|a, b| a.0.cmp(&b.0));
        PathElement::Key(fields)
    }

    fn set_of(paths: &[Path]) -> Set {
        let mut s = Set::new();
        for p in paths {
            s.insert(p);
        }
        s
    }

    /// `a` without `b`, where a member of `b` also takes away every path below it
    /// (structured-merge-diff's `RecursiveDifference`, which the server does in place).
    fn recursive_difference(a: &Set, b: &Set) -> Set {
        let mut out = a.clone();
        out.subtract(b, true);
        out
    }

    /// The paths a set lists, checking it lists none twice.
    fn listed(s: &Set) -> BTreeSet<Path> {
        let paths = s.paths();
        let out: BTreeSet<Path> = paths.iter().cloned().collect();
        assert_eq!(out.len(), paths.len(), "a path listed twice: {paths:?}");
        out
    }

    #[test]
    fn fields_v1_is_written_and_read_as_kubernetes_does() {
        let owner = key(&[("uid", json!("u1"))]);
        let port = key(&[("protocol", json!("TCP")), ("containerPort", json!(80))]);
        let s = set_of(&[
            vec![f("metadata"), f("ownerReferences")],
            vec![f("metadata"), f("ownerReferences"), owner.clone()],
            vec![f("metadata"), f("ownerReferences"), owner, f("uid")],
            vec![
                f("metadata"),
                f("finalizers"),
                PathElement::Value(json!("x")),
            ],
            vec![f("spec"), f("ports"), port.clone(), f("name")],
            vec![f("spec"), f("args"), PathElement::Index(0)],
        ]);
        let want = concat!(
            r#"{"f:metadata":{"f:finalizers":{"v:\"x\"":{}},"#,
            r#""f:ownerReferences":{".":{},"k:{\"uid\":\"u1\"}":{".":{},"f:uid":{}}}},"#,
            r#""f:spec":{"f:args":{"i:0":{}},"#,
            r#""f:ports":{"k:{\"containerPort\":80,\"protocol\":\"TCP\"}":{"f:name":{}}}}}"#
        );
        assert_eq!(serde_json::to_string(&s.to_fields_v1()).unwrap(), want);
        let read = Set::from_fields_v1(&serde_json::from_str(want).unwrap()).unwrap();
        assert_eq!(read, s);
        assert!(listed(&read).contains(&vec![f("spec"), f("ports"), port, f("name")]));
    }

    #[test]
    fn reading_fields_v1_skips_unknown_prefixes_and_refuses_malformed_documents() {
        let read = |v: Value| Set::from_fields_v1(&v);
        assert_eq!(
            read(json!({"f:a": {}, "x:future": {"f:b": {}}})).unwrap(),
            set_of(&[vec![f("a")]])
        );
        // A node with only unknown keys below it is a member.
        assert_eq!(
            read(json!({"f:a": {"x:y": {}}})).unwrap(),
            set_of(&[vec![f("a")]])
        );
        for bad in [
            json!([]),
            json!({"f:a": 1}),
            json!({"k:{}": {}}),
            json!({"k:[1]": {}}),
            json!({"k:{\"a\":": {}}),
            json!({"v:nope": {}}),
            json!({"i:x": {}}),
            json!({"nocolon": {}}),
            json!({"fx:a": {}}),
            json!({"f": {}}),
            json!({"": {}}),
        ] {
            assert!(read(bad.clone()).is_err(), "{bad} was read");
        }
        let nested = |levels| (0..levels).fold(json!({}), |inner, _| json!({"f:a": inner}));
        assert_eq!(read(nested(MAX_DEPTH)).unwrap().paths()[0].len(), MAX_DEPTH);
        assert!(
            read(nested(MAX_DEPTH + 1))
                .unwrap_err()
                .contains("nested more than")
        );
    }

    #[test]
    fn paths_print_as_conflict_messages_do() {
        let path = [
            f("spec"),
            f("containers"),
            key(&[("name", json!("nginx")), ("port", json!(80))]),
            f("args"),
            PathElement::Index(3),
        ];
        assert_eq!(
            path_string(&path),
            r#".spec.containers[name="nginx",port=80].args[3]"#
        );
        assert_eq!(
            path_string(&[
                f("metadata"),
                f("finalizers"),
                PathElement::Value(json!("x"))
            ]),
            r#".metadata.finalizers[="x"]"#
        );
    }

    #[test]
    fn values_are_ordered_as_structured_merge_diff_orders_them() {
        let ordered = [
            json!(-1),
            json!(0.5),
            json!(2),
            json!(""),
            json!("a"),
            json!(false),
            json!(true),
            json!([1]),
            json!([1, 0]),
            json!({"a": 1}),
            json!(null),
        ];
        for (i, a) in ordered.iter().enumerate() {
            for (j, b) in ordered.iter().enumerate() {
                assert_eq!(compare_values(a, b), i.cmp(&j), "{a} against {b}");
            }
        }
    }

    fn scalar() -> impl Strategy<Value = Value> {
        prop_oneof![
            (-3i64..300).prop_map(Value::from),
            prop::sample::select(vec![0.5, -2.25]).prop_map(Value::from),
            "[ab\"\\\\é:.{}]{0,3}".prop_map(Value::from),
            any::<bool>().prop_map(Value::from),
            Just(Value::Null),
        ]
    }

    fn element() -> impl Strategy<Value = PathElement> {
        prop_oneof![
            "[ab.:]{0,2}".prop_map(PathElement::Field),
            (scalar(), prop::option::of(scalar())).prop_map(|(a, b)| {
                let mut fields = vec![("name".to_owned(), a)];
                fields.extend(b.map(|b| ("id".to_owned(), b)));
                fields.sort_by(|x, y| x.0.cmp(&y.0));
                PathElement::Key(fields)
            }),
            scalar().prop_map(PathElement::Value),
            (0i64..3).prop_map(PathElement::Index),
        ]
    }

    /// Up to a dozen paths of one to four elements, from small alphabets so that sets share
    /// prefixes and members.
    fn paths() -> impl Strategy<Value = Vec<Path>> {
        prop::collection::vec(prop::collection::vec(element(), 1..5), 0..12)
    }

    proptest! {
        #[test]
        fn fields_v1_round_trips(ps in paths()) {
            let s = set_of(&ps);
            let text = serde_json::to_string(&s.to_fields_v1()).unwrap();
            let read = Set::from_fields_v1(&serde_json::from_str(&text).unwrap()).unwrap();
            prop_assert_eq!(&read, &s);
            prop_assert_eq!(listed(&read), ps.into_iter().collect::<BTreeSet<_>>());
        }

        #[test]
        fn operations_are_those_of_sets_of_paths(a in paths(), b in paths()) {
            let (sa, sb) = (set_of(&a), set_of(&b));
            let (ma, mb): (BTreeSet<Path>, BTreeSet<Path>) =
                (a.into_iter().collect(), b.into_iter().collect());
            prop_assert_eq!(listed(&sa.union(&sb)), &ma | &mb);
            prop_assert_eq!(listed(&sa.intersection(&sb)), &ma & &mb);
            prop_assert_eq!(listed(&sa.difference(&sb)), &ma - &mb);
            // A member of b takes away everything below it too.
            let under_b = |p: &Path| (1..=p.len()).any(|n| mb.contains(&p[..n]));
            let recursive: BTreeSet<Path> = ma.iter().filter(|p| !under_b(p)).cloned().collect();
            prop_assert_eq!(listed(&recursive_difference(&sa, &sb)), recursive);
            prop_assert_eq!(sa.is_empty(), ma.is_empty());
        }

        #[test]
        fn operations_obey_the_laws_of_sets(a in paths(), b in paths(), c in paths()) {
            let (a, b, c) = (set_of(&a), set_of(&b), set_of(&c));
            prop_assert_eq!(a.union(&b), b.union(&a));
            prop_assert_eq!(a.intersection(&b), b.intersection(&a));
            prop_assert_eq!(a.union(&b).union(&c), a.union(&b.union(&c)));
            prop_assert_eq!(a.intersection(&b).intersection(&c), a.intersection(&b.intersection(&c)));
            prop_assert_eq!(a.union(&a), a.clone());
            prop_assert_eq!(a.intersection(&a), a.clone());
            prop_assert!(a.difference(&a).is_empty());
            prop_assert!(a.difference(&b).intersection(&b).is_empty());
            // (a ∪ b) ∖ b ⊆ a
            prop_assert_eq!(a.union(&b).difference(&b).union(&a), a.clone());
            prop_assert_eq!(a.difference(&b).union(&a.intersection(&b)), a.clone());
            prop_assert_eq!(
                a.intersection(&b.union(&c)),
                a.intersection(&b).union(&a.intersection(&c))
            );
            // What the recursive difference keeps, the plain one keeps too.
            prop_assert_eq!(recursive_difference(&a, &b).union(&a.difference(&b)), a.difference(&b));
        }

        #[test]
        fn named_fields_become_members_outside_element_maps(ps in paths()) {
            // Below a field named "a", keys are data.
            let element_map = |p: &[PathElement]| p.last() == Some(&f("a"));
            let got = listed(&set_of(&ps).with_named_fields_as_members(&element_map));
            let mut want: BTreeSet<Path> = ps.iter().cloned().collect();
            for p in &ps {
                for n in 1..p.len() {
                    if matches!(p[n - 1], PathElement::Field(_)) && !element_map(&p[..n - 1]) {
                        want.insert(p[..n].to_vec());
                    }
                }
            }
            prop_assert_eq!(got, want);
        }
    }
}
