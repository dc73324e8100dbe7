//! Canonical field order per struct type, learned once and cached (what Go's encoder computes
//! once per type with reflection).
//!
//! serde hands a struct's fields out one at a time, in declaration order, as `&'static str`s; a
//! derived `Serialize` also reports every field it skips (`skip_serializing_if`) through
//! `SerializeStruct::skip_field`. The first value of a type therefore shows the whole field list.
//! The serializer records it, and this cache keeps it with the rank of each field's encoded key,
//! keyed by the addresses of the struct's name and of its first field's name (both `'static`).
//! Later values of the type record only which ranks are present; when the struct ends, its
//! entries are placed in rank order without comparing a single key.
//!
//! A plan is only a guess about the next value: a hand-written `Serialize` may hand out other
//! fields, in another order, under the same name. The serializer checks every field against the
//! plan (the field must come later in the list than the previous one, which also rules out
//! duplicates) and falls back to comparing encoded keys for the rest of a struct that leaves it.
//! Whatever the plan says, the bytes are those of the fields sorted by their encoded keys.

/// Most fields a plan covers (one bit each in [`Planned::ranks`]).
pub(crate) const MAX_FIELDS: usize = 64;

/// Most plans a cache keeps: type names are `'static`, so a program has a bounded number of them
/// unless it leaks new ones at run time, which this bound makes harmless.
const MAX_PLANS: usize = 1024;

/// One struct type's fields.
pub(crate) struct Plan {
    /// Field names in the order the type hands them out, with the rank of each one's encoded key
    /// among them.
    fields: Box<[(&'static str, u8)]>,
}

impl Plan {
    /// The field name of rank `r`.
    pub(crate) fn name_of_rank(&self, r: u64) -> &'static str {
        let f = self.fields.iter().find(|f| f.1 as u64 == r);
        f.expect("a rank of the plan").0
    }
}

/// The state of a struct following a plan.
#[derive(Clone, Copy)]
pub(crate) struct Planned {
    pub(crate) plan: u32,
    /// Index in the plan's fields of the next field expected.
    cursor: u32,
    /// Bit `r` is set when the field of rank `r` is present.
    pub(crate) ranks: u64,
    /// Whether a field came after one of higher rank: the entries need reordering.
    pub(crate) unsorted: bool,
}

impl Planned {
    pub(crate) fn new(plan: u32) -> Self {
        Planned {
            plan,
            cursor: 0,
            ranks: 0,
            unsorted: false,
        }
    }

    /// Records `key` as present if it is the field the plan expects next, and returns its rank.
    #[inline(always)]
    pub(crate) fn next(&mut self, plan: &Plan, key: &'static str) -> Option<u64> {
        let &(name, rank) = plan.fields.get(self.cursor as usize)?;
        if !same_literal(name, key) {
            return None;
        }
        self.cursor += 1;
        let r = rank as u64;
        self.unsorted |= self.ranks >> r != 0;
        self.ranks |= 1 << r;
        Some(r)
    }

    /// [`next`](Self::next) for a key that is not the one expected: looks for it further on
    /// (fields skipped without a `skip_field` call) and compares contents as well as addresses.
    pub(crate) fn seek(&mut self, plan: &Plan, key: &'static str) -> Option<u64> {
        let rest = plan.fields.get(self.cursor as usize..)?;
        self.cursor += rest.iter().position(|f| f.0 == key)? as u32;
        self.next_unchecked(plan)
    }

    /// Moves past the field the plan expects next if it is `key`, which the value skips.
    #[inline]
    pub(crate) fn skip(&mut self, plan: &Plan, key: &'static str) {
        if plan
            .fields
            .get(self.cursor as usize)
            .is_some_and(|f| same_literal(f.0, key))
        {
            self.cursor += 1;
        }
    }

    fn next_unchecked(&mut self, plan: &Plan) -> Option<u64> {
        let name = plan.fields.get(self.cursor as usize)?.0;
        self.next(plan, name)
    }
}

/// Whether `a` and `b` are the same string literal (not just equal strings).
#[inline(always)]
fn same_literal(a: &str, b: &str) -> bool {
    std::ptr::eq(a.as_ptr(), b.as_ptr()) && a.len() == b.len()
}

/// One slot of the plans' open-addressing table; `name` 0 is empty.
#[derive(Clone, Copy, Default)]
struct Slot {
    name: usize,
    first: usize,
    plan: u32,
}

/// The plans of one thread, by (struct name, first field name) address.
#[derive(Default)]
pub(crate) struct Plans {
    /// A power of two in size, at most half full (empty before the first plan).
    slots: Vec<Slot>,
    plans: Vec<Plan>,
}

impl Plans {
    #[inline]
    fn slot(&self, name: usize, first: usize) -> usize {
        let h = (name.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ first)
            .wrapping_mul(0x51_7C_C1_B7_27_22_0A_95);
        (h >> 32) & (self.slots.len() - 1)
    }

    /// The plan of the struct `name` whose first field (present or skipped) is `first`.
    #[inline]
    pub(crate) fn find(&self, name: &'static str, first: &'static str) -> Option<u32> {
        if self.slots.is_empty() {
            return None;
        }
        let (name, first) = (name.as_ptr() as usize, first.as_ptr() as usize);
        let mut i = self.slot(name, first);
        loop {
            let s = self.slots[i];
            if s.name == name && s.first == first {
                return Some(s.plan);
            }
            if s.name == 0 {
                return None;
            }
            i = (i + 1) & (self.slots.len() - 1);
        }
    }

    #[inline(always)]
    pub(crate) fn get(&self, plan: u32) -> &Plan {
        &self.plans[plan as usize]
    }

    /// Whether there is room for another plan.
    #[inline]
    pub(crate) fn has_room(&self) -> bool {
        self.plans.len() < MAX_PLANS
    }

    /// Adds the plan of a struct whose fields were `names`, unless there are too many of them or
    /// a name repeats (the struct then keeps comparing keys).
    pub(crate) fn learn(&mut self, name: &'static str, names: &[&'static str]) {
        let Some(&first) = names.first() else { return };
        if names.len() > MAX_FIELDS || !self.has_room() || self.find(name, first).is_some() {
            return;
        }
        for (i, a) in names.iter().enumerate() {
            if names[i + 1..].contains(a) {
                return;
            }
        }
        let mut sorted: Vec<usize> = (0..names.len()).collect();
        // Every key is a string of the same major type, whose shortest-form head grows with its
        // length: encoded keys compare as (length, bytes).
        sorted.sort_unstable_by_key(|&i| (names[i].len(), names[i].as_bytes()));
        let mut fields: Vec<(&'static str, u8)> = names.iter().map(|&n| (n, 0)).collect();
        for (r, &i) in sorted.iter().enumerate() {
            fields[i].1 = r as u8;
        }
        self.plans.push(Plan {
            fields: fields.into(),
        });
        if self.plans.len() * 2 > self.slots.len() {
            let size = (self.slots.len() * 2).max(64);
            let old = std::mem::replace(&mut self.slots, vec![Slot::default(); size]);
            for s in old.into_iter().filter(|s| s.name != 0) {
                self.insert(s);
            }
        }
        self.insert(Slot {
            name: name.as_ptr() as usize,
            first: first.as_ptr() as usize,
            plan: self.plans.len() as u32 - 1,
        });
    }

    fn insert(&mut self, s: Slot) {
        let mut i = self.slot(s.name, s.first);
        while self.slots[i].name != 0 {
            i = (i + 1) & (self.slots.len() - 1);
        }
        self.slots[i] = s;
    }
}
