//! The serde `Serializer`: writes straight into a `Vec<u8>`, with no intermediate tree.
//!
//! Deterministic mode sorts each map's entries by their encoded key bytes (RFC 8949 §4.2.1). The
//! serializer records where each entry starts in the output; when a map ends it checks whether the
//! entries are already in order (a derived struct whose fields are declared in order needs no
//! work) and only otherwise reorders them through a scratch buffer kept for the whole encode.
//! Equal keys are an error in deterministic mode. Structs take their order from a per-type
//! [`Plan`](crate::plan) instead of comparing keys, as long as their fields follow it; structs
//! whose `#[derive(conneg_cbor::Serialize)]` impl hands them out in canonical order (the
//! handshake is [`canonical_order`]) are only checked, key against key, and written straight out.

use crate::error::{Error, ErrorKind, Result};
use crate::head::{
    MAJOR_ARRAY, MAJOR_BYTES, MAJOR_MAP, MAJOR_TEXT, head_len, write_f64, write_head, write_i64,
    write_u64,
};
use crate::keys::display_key;
use crate::options::{EncodeOptions, StringEncoding};
use crate::plan::{Planned, Plans};
use serde::ser::{self, Serialize};

/// One map entry being written: where its key starts and ends in the output.
#[derive(Clone, Copy)]
struct Entry {
    /// The first 8 bytes of the encoded key, big-endian, zero-padded: comparing these orders
    /// most keys without looking further (equal prefixes fall back to the full bytes).
    prefix: u64,
    key_start: usize,
    key_end: usize,
    end: usize,
}

/// Packs the first 8 bytes of `k` (zero-padded) so that integer order is byte order.
#[inline]
fn prefix_of(k: &[u8]) -> u64 {
    let mut b = [0u8; 8];
    let n = k.len().min(8);
    b[..n].copy_from_slice(&k[..n]);
    u64::from_be_bytes(b)
}

/// A CBOR serializer appending to a `Vec<u8>`.
///
/// ```
/// use serde::Serialize;
/// let mut out = Vec::new();
/// let mut ser = conneg_cbor::Serializer::new(&mut out);
/// ("a", 1).serialize(&mut ser).unwrap();
/// assert_eq!(out, [0x82, 0x41, b'a', 0x01]);
/// ```
pub struct Serializer<'a> {
    out: &'a mut Vec<u8>,
    opts: EncodeOptions,
    /// Entries of every open map, innermost last.
    entries: Vec<Entry>,
    scratch: Vec<u8>,
    /// Field names of every struct being learned (see [`Order::Learning`]), innermost last.
    learn: Vec<&'static str>,
    plans: Plans,
}

impl<'a> Serializer<'a> {
    /// A deterministic serializer (no self-described prefix: that is the caller's choice, see
    /// [`EncodeOptions::encode_into`]).
    pub fn new(out: &'a mut Vec<u8>) -> Self {
        Self::with_options(out, EncodeOptions::default())
    }

    /// A serializer with the given options (`self_described` is ignored here).
    pub fn with_options(out: &'a mut Vec<u8>, opts: EncodeOptions) -> Self {
        let Pooled {
            entries,
            scratch,
            learn,
            plans,
        } = POOL
            .try_with(|p| p.borrow_mut().take())
            .ok()
            .flatten()
            .unwrap_or_default();
        Serializer {
            out,
            opts,
            entries,
            scratch,
            learn,
            plans,
        }
    }

    /// Appends an already-encoded item. A self-described prefix directly after another one (a
    /// raw item at the top level) is dropped: it means nothing twice.
    pub(crate) fn write_verbatim(&mut self, item: &[u8]) {
        let p = &crate::SELF_DESCRIBED_PREFIX;
        if self.out.ends_with(p) && item.starts_with(p) {
            self.out.extend_from_slice(&item[3..]);
        } else {
            self.out.extend_from_slice(item);
        }
    }

    #[inline]
    fn write_str(&mut self, s: &str) {
        self.write_name(s)
    }

    /// [`write_str`](Self::write_str) for a struct field's name, always inlined: in a derived
    /// impl the name is a literal, so its length is known and its copy is a few moves instead of
    /// a `memcpy` call.
    #[inline(always)]
    fn write_name(&mut self, s: &str) {
        let major = match self.opts.strings {
            StringEncoding::Bytes => MAJOR_BYTES,
            StringEncoding::Text => MAJOR_TEXT,
        };
        let n = s.len();
        self.out.reserve(9 + n);
        write_head(self.out, major, n as u64);
        self.out.extend_from_slice(s.as_bytes());
    }

    /// Starts a container: writes its head, or a one-byte placeholder when the length is unknown.
    #[inline]
    fn begin(&mut self, major: u8, len: Option<usize>) -> Container {
        let head_pos = self.out.len();
        match len {
            Some(n) => write_head(self.out, major, n as u64),
            None => self.out.push(major << 5),
        }
        Container {
            major,
            head_pos,
            head_size: self.out.len() - head_pos,
            declared: len,
            count: 0,
            entries_base: self.entries.len(),
            order: Order::Keys,
        }
    }

    /// Starts a struct (or struct variant) called `name`, offering a derived impl to hand out
    /// its fields in canonical order ([`canonical_order`]).
    #[inline]
    fn begin_struct(&mut self, name: &'static str, len: usize) -> Container {
        let mut c = self.begin(MAJOR_MAP, Some(len));
        if self.opts.sort {
            c.order = Order::Struct(name);
            CANONICAL_ORDER.set(name.as_ptr() as usize);
        }
        c
    }

    /// Ends a container: sorts map entries (deterministic mode) and fixes the head if the count
    /// differs from the declared length.
    fn finish(&mut self, c: &Container) -> Result<()> {
        // A struct whose keys ascended has nothing to put in order (and recorded no entries).
        if c.major == MAJOR_MAP && !matches!(c.order, Order::Ascending(_)) {
            if self.opts.sort && c.count > 1 {
                let end = self.out.len();
                if let Some(last) = self.entries[c.entries_base..].last_mut() {
                    last.end = end;
                }
                let data_start = c.head_pos + c.head_size;
                let r = match c.order {
                    Order::Planned(p) => {
                        self.place(p, c.entries_base, data_start);
                        Ok(())
                    }
                    _ => self.sort_entries(c.entries_base, data_start),
                };
                self.entries.truncate(c.entries_base);
                self.end_learning(c, r.is_ok());
                r?;
            } else {
                self.entries.truncate(c.entries_base);
                self.end_learning(c, true);
            }
        }
        if c.declared != Some(c.count as usize) {
            let n = c.count;
            if c.head_size == 1 && n < 24 {
                self.out[c.head_pos] = (c.major << 5) | n as u8;
            } else {
                let mut h = Vec::with_capacity(9);
                write_head(&mut h, c.major, n);
                debug_assert_eq!(h.len(), head_len(n));
                self.out.splice(c.head_pos..c.head_pos + c.head_size, h);
            }
        }
        Ok(())
    }

    fn key<'k>(&'k self, e: &Entry) -> &'k [u8] {
        &self.out[e.key_start..e.key_end]
    }

    #[inline]
    fn cmp_keys(out: &[u8], a: &Entry, b: &Entry) -> std::cmp::Ordering {
        a.prefix
            .cmp(&b.prefix)
            .then_with(|| out[a.key_start..a.key_end].cmp(&out[b.key_start..b.key_end]))
    }

    fn sort_entries(&mut self, base: usize, data_start: usize) -> Result<()> {
        let es = &self.entries[base..];
        let mut in_order = true;
        for w in es.windows(2) {
            match Self::cmp_keys(self.out, &w[0], &w[1]) {
                std::cmp::Ordering::Less => {}
                std::cmp::Ordering::Equal => return Err(self.dup(&w[0])),
                std::cmp::Ordering::Greater => {
                    in_order = false;
                    break;
                }
            }
        }
        if in_order {
            return Ok(());
        }
        let mut es = std::mem::take(&mut self.entries);
        {
            let out: &[u8] = self.out;
            es[base..].sort_unstable_by(|a, b| Self::cmp_keys(out, a, b));
        }
        let dup = es[base..]
            .windows(2)
            .find(|w| Self::cmp_keys(self.out, &w[0], &w[1]).is_eq())
            .map(|w| w[0]);
        if let Some(d) = dup {
            self.entries = es;
            return Err(self.dup(&d));
        }
        reorder(self.out, &mut self.scratch, data_start, &es[base..]);
        self.entries = es;
        Ok(())
    }

    /// Puts the entries from `base` of a struct that followed its plan in the order of their
    /// ranks (each entry's `prefix`).
    fn place(&mut self, p: Planned, base: usize, data_start: usize) {
        if !p.unsorted {
            return;
        }
        let es = &mut self.entries[base..];
        set_ends(es, self.out.len());
        let mut at = [0u8; crate::plan::MAX_FIELDS];
        for (i, e) in es.iter().enumerate() {
            at[e.prefix as usize] = i as u8;
        }
        let mut ranks = p.ranks;
        let sorted = std::iter::from_fn(|| {
            let r = ranks.trailing_zeros() as usize;
            ranks &= ranks.wrapping_sub(1);
            es.get(*at.get(r)? as usize)
        });
        reorder(self.out, &mut self.scratch, data_start, sorted);
    }

    /// Writes the key of a struct field, following the struct's plan while it can. Entries of a
    /// planned struct get their rank as `prefix` and no `key_end` or `end` (see [`set_ends`]).
    /// A struct in [`Order::Ascending`] records no entry at all while its keys keep ascending.
    #[inline(always)]
    fn struct_key(&mut self, c: &mut Container, key: &'static str) -> Result<()> {
        match &mut c.order {
            Order::Planned(p) => {
                if let Some(rank) = p.next(self.plans.get(p.plan), key) {
                    self.ranked_key(c, rank, key);
                    return Ok(());
                }
            }
            Order::Ascending(last) if ascends(last, key) => {
                *last = key;
                self.key_in_place(c, key);
                return Ok(());
            }
            // The first field of a struct whose derived impl took the offer (for any other, the
            // mark is cleared here, and the slow path looks for its plan).
            Order::Struct(_) if CANONICAL_ORDER.replace(0) == ACCEPTED => {
                c.order = Order::Ascending(key);
                self.key_in_place(c, key);
                return Ok(());
            }
            _ => {}
        }
        self.struct_key_slow(c, key)
    }

    /// Writes a struct field's key where it stands, with nothing recorded (fast mode, and
    /// ascending structs).
    #[inline(always)]
    fn key_in_place(&mut self, c: &mut Container, key: &'static str) {
        c.count += 1;
        self.write_name(key);
    }

    #[inline(always)]
    fn ranked_key(&mut self, c: &mut Container, rank: u64, key: &str) {
        let pos = self.out.len();
        self.entries.push(Entry {
            prefix: rank,
            key_start: pos,
            key_end: pos,
            end: pos,
        });
        c.count += 1;
        self.write_str(key);
    }

    /// [`struct_key`](Self::struct_key) for a struct's first field, a field the plan did not
    /// expect next, and structs without a plan.
    #[inline(never)]
    fn struct_key_slow(&mut self, c: &mut Container, key: &'static str) -> Result<()> {
        if let Order::Struct(name) = c.order {
            c.order = self.plan_for(name, key);
        }
        match &mut c.order {
            Order::Planned(p) => {
                let plan = self.plans.get(p.plan);
                if let Some(rank) = p.next(plan, key).or_else(|| p.seek(plan, key)) {
                    self.ranked_key(c, rank, key);
                    return Ok(());
                }
                self.leave_plan(c);
            }
            // `struct_key` found that the key does not ascend.
            Order::Ascending(_) => self.leave_ascending(c)?,
            _ => {}
        }
        if let Order::Learning { .. } = c.order {
            self.learn.push(key);
        }
        self.start_entry(c);
        self.write_str(key);
        self.end_key();
        Ok(())
    }

    /// Notes a struct field that the value skips (`skip_serializing_if`).
    #[inline]
    fn skip_key(&mut self, c: &mut Container, key: &'static str) {
        if let Order::Struct(name) = c.order {
            c.order = self.plan_for(name, key);
        }
        match &mut c.order {
            Order::Planned(p) => p.skip(self.plans.get(p.plan), key),
            Order::Learning { .. } => self.learn.push(key),
            _ => {}
        }
    }

    /// How a struct called `name` whose first field is `first` is ordered: ascending if its
    /// derived impl said so ([`canonical_order`]), else by its type's plan.
    fn plan_for(&self, name: &'static str, first: &'static str) -> Order {
        if CANONICAL_ORDER.replace(0) == ACCEPTED {
            return Order::Ascending("");
        }
        match self.plans.find(name, first) {
            Some(plan) => Order::Planned(Planned::new(plan)),
            None if self.plans.has_room() => Order::Learning {
                name,
                base: self.learn.len(),
            },
            None => Order::Keys,
        }
    }

    /// A struct whose keys ascended so far got one that does not (out of order, or repeated):
    /// finds the entries written so far, which were not recorded, by walking them, and goes on
    /// comparing keys.
    #[cold]
    fn leave_ascending(&mut self, c: &mut Container) -> Result<()> {
        let mut pos = c.head_pos + c.head_size;
        while pos < self.out.len() {
            let key_end = item_end(self.out, pos)?;
            let end = item_end(self.out, key_end)?;
            self.entries.push(Entry {
                prefix: prefix_of(&self.out[pos..key_end]),
                key_start: pos,
                key_end,
                end,
            });
            pos = end;
        }
        c.order = Order::Keys;
        Ok(())
    }

    /// A struct left its plan: gives its entries so far what key comparisons need.
    #[cold]
    fn leave_plan(&mut self, c: &mut Container) {
        if let Order::Planned(p) = c.order {
            let plan = self.plans.get(p.plan);
            let es = &mut self.entries[c.entries_base..];
            set_ends(es, self.out.len());
            for e in es {
                let n = plan.name_of_rank(e.prefix).len();
                e.key_end = e.key_start + head_len(n as u64) + n;
                e.prefix = prefix_of(&self.out[e.key_start..e.key_end]);
            }
        }
        c.order = Order::Keys;
    }

    /// Ends the learning of a struct's plan: keeps it if the struct was encoded (`ok`).
    fn end_learning(&mut self, c: &Container, ok: bool) {
        if let Order::Learning { name, base } = c.order {
            if ok {
                self.plans.learn(name, &self.learn[base..]);
            }
            self.learn.truncate(base);
        }
    }

    #[cold]
    fn dup(&self, e: &Entry) -> Error {
        let k = self.key(e);
        let mut p = 0;
        let name = match crate::head::read_head(k, &mut p) {
            Ok(_) => &k[p..],
            Err(_) => k,
        };
        Error::new(
            ErrorKind::DuplicateKey,
            format!("duplicate map key {} in encoded map", display_key(name)),
        )
    }

    #[inline]
    fn start_entry(&mut self, c: &mut Container) {
        let pos = self.out.len();
        if self.opts.sort {
            if c.count > 0
                && let Some(last) = self.entries.last_mut()
            {
                last.end = pos;
            }
            self.entries.push(Entry {
                prefix: 0,
                key_start: pos,
                key_end: pos,
                end: pos,
            });
        }
        c.count += 1;
    }

    #[inline]
    fn end_key(&mut self) {
        if self.opts.sort {
            let pos = self.out.len();
            if let Some(last) = self.entries.last_mut() {
                last.key_end = pos;
                last.prefix = prefix_of(&self.out[last.key_start..pos]);
            }
        }
    }
}

/// Sets the `end` of entries recorded without one: each ends where the next starts, the last at
/// `end`.
fn set_ends(es: &mut [Entry], end: usize) {
    let mut next = end;
    for e in es.iter_mut().rev() {
        e.end = next;
        next = e.key_start;
    }
}

/// Where the item written at `pos` of the output ends (raw items written verbatim included).
fn item_end(out: &[u8], pos: usize) -> Result<usize> {
    let unlimited = crate::options::DecodeOptions::default()
        .max_depth(usize::MAX)
        .max_array_len(u64::MAX)
        .max_map_pairs(u64::MAX);
    let (mut keys, mut sc) = (Default::default(), Default::default());
    crate::scan::scan_with(out, pos, 0, &unlimited, &mut keys, &mut sc, false)
}

/// Copies the entries of a map, in the order given, over the map's data from `data_start`.
fn reorder<'e>(
    out: &mut [u8],
    scratch: &mut Vec<u8>,
    data_start: usize,
    entries: impl IntoIterator<Item = &'e Entry>,
) {
    scratch.clear();
    for e in entries {
        scratch.extend_from_slice(&out[e.key_start..e.end]);
    }
    out[data_start..].copy_from_slice(scratch);
}

/// Largest sorting scratch buffer kept for the next encode on this thread (Kubernetes' encoder
/// pool likewise drops buffers over 3 MiB rather than keep them forever).
const POOL_MAX_SCRATCH: usize = 1 << 20;

/// What a serializer keeps for the next one on its thread.
#[derive(Default)]
struct Pooled {
    entries: Vec<Entry>,
    scratch: Vec<u8>,
    learn: Vec<&'static str>,
    plans: Plans,
}

thread_local! {
    /// Bookkeeping buffers and struct plans of the last serializer on this thread, so encodes in
    /// steady state do not allocate them again or learn the types again.
    static POOL: std::cell::RefCell<Option<Pooled>> = const { std::cell::RefCell::new(None) };

    /// The handshake between the deterministic serializer and a struct's derived
    /// `conneg_cbor::Serialize` impl: 0, or the address of the name of the struct the serializer
    /// just began (its offer), or [`ACCEPTED`] once the impl took the offer
    /// ([`canonical_order`]); the struct's first field reads and clears it.
    static CANONICAL_ORDER: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

/// [`CANONICAL_ORDER`] after a derived impl promised canonical order (no string lives at 1).
const ACCEPTED: usize = 1;

/// Whether the struct `name` being serialized should hand its fields out in canonical order:
/// true only right after conneg-cbor's deterministic serializer began a struct under this very
/// `name` (the same `'static` string, by address), which then expects the keys to ascend. Any
/// other serializer (serde_json, a fast conneg-cbor encode) never sees an offer meant for an
/// earlier struct: the mark is cleared. For `#[derive(conneg_cbor::Serialize)]`; the order is an
/// optimisation only (the serializer checks every key, and sorts whatever does not ascend).
#[doc(hidden)]
#[inline]
pub fn canonical_order(name: &'static str) -> bool {
    let offered = CANONICAL_ORDER.get() == name.as_ptr() as usize;
    CANONICAL_ORDER.set(if offered { ACCEPTED } else { 0 });
    offered
}

impl Serializer<'_> {
    /// Gives the bookkeeping buffers back for the next encode on this thread. (Not a `Drop`
    /// impl: that would make the borrow of the output last until the serializer goes out of
    /// scope, which serde_json's serializer does not do either.)
    pub(crate) fn recycle(self) {
        let Serializer {
            mut entries,
            mut scratch,
            mut learn,
            plans,
            ..
        } = self;
        if scratch.capacity() > POOL_MAX_SCRATCH {
            scratch = Vec::new();
        }
        entries.clear();
        scratch.clear();
        learn.clear();
        // A hand-written `Serialize` may have begun a struct without taking the flag.
        let _ = CANONICAL_ORDER.try_with(|f| f.set(0));
        let _ = POOL.try_with(|p| {
            if let Ok(mut p) = p.try_borrow_mut() {
                *p = Some(Pooled {
                    entries,
                    scratch,
                    learn,
                    plans,
                });
            }
        });
    }
}

/// Bookkeeping for one open array or map.
struct Container {
    major: u8,
    head_pos: usize,
    head_size: usize,
    declared: Option<usize>,
    count: u64,
    entries_base: usize,
    order: Order,
}

/// How a map's entries are put in order in deterministic mode.
#[derive(Clone, Copy)]
enum Order {
    /// By comparing their encoded keys (maps, and structs that left their plan).
    Keys,
    /// A struct before its first field, which picks its plan.
    Struct(&'static str),
    /// A struct of a type with no plan yet: by comparing keys, while its field names (skipped
    /// ones included) go to `learn[base..]` for the type's plan.
    Learning { name: &'static str, base: usize },
    /// A struct whose fields so far follow its plan.
    Planned(Planned),
    /// A struct whose derived impl hands its fields out in canonical order, with the last key
    /// so far: while each key sorts after the previous one, nothing is recorded.
    Ascending(&'static str),
}

/// Whether the encoded key `b` sorts after `a` (both string keys of the same major type: by
/// length, then bytes).
#[inline(always)]
fn ascends(a: &str, b: &str) -> bool {
    if a.len() != b.len() {
        return a.len() < b.len();
    }
    for (x, y) in a.bytes().zip(b.bytes()) {
        if x != y {
            return x < y;
        }
    }
    false
}

fn float_err(v: f64) -> Error {
    Error::new(
        ErrorKind::UnsupportedValue,
        if v.is_nan() {
            "cannot encode floating-point NaN"
        } else {
            "cannot encode floating-point infinity"
        },
    )
}

impl<'s, 'a> ser::Serializer for &'s mut Serializer<'a> {
    type Ok = ();
    type Error = Error;
    type SerializeSeq = Compound<'s, 'a>;
    type SerializeTuple = Compound<'s, 'a>;
    type SerializeTupleStruct = Compound<'s, 'a>;
    type SerializeTupleVariant = Compound<'s, 'a>;
    type SerializeMap = Compound<'s, 'a>;
    type SerializeStruct = Compound<'s, 'a>;
    type SerializeStructVariant = Compound<'s, 'a>;

    #[inline]
    fn serialize_bool(self, v: bool) -> Result<()> {
        self.out.push(if v { 0xf5 } else { 0xf4 });
        Ok(())
    }
    #[inline]
    fn serialize_i8(self, v: i8) -> Result<()> {
        self.serialize_i64(v as i64)
    }
    #[inline]
    fn serialize_i16(self, v: i16) -> Result<()> {
        self.serialize_i64(v as i64)
    }
    #[inline]
    fn serialize_i32(self, v: i32) -> Result<()> {
        self.serialize_i64(v as i64)
    }
    #[inline]
    fn serialize_i64(self, v: i64) -> Result<()> {
        write_i64(self.out, v);
        Ok(())
    }
    fn serialize_i128(self, v: i128) -> Result<()> {
        if let Ok(x) = i64::try_from(v) {
            self.serialize_i64(x)
        } else if let Ok(x) = u64::try_from(v) {
            self.serialize_u64(x)
        } else {
            Err(Error::new(
                ErrorKind::IntegerOverflow,
                format!("cannot encode integer {v}: outside the 64-bit range"),
            ))
        }
    }
    #[inline]
    fn serialize_u8(self, v: u8) -> Result<()> {
        self.serialize_u64(v as u64)
    }
    #[inline]
    fn serialize_u16(self, v: u16) -> Result<()> {
        self.serialize_u64(v as u64)
    }
    #[inline]
    fn serialize_u32(self, v: u32) -> Result<()> {
        self.serialize_u64(v as u64)
    }
    #[inline]
    fn serialize_u64(self, v: u64) -> Result<()> {
        write_u64(self.out, v);
        Ok(())
    }
    fn serialize_u128(self, v: u128) -> Result<()> {
        match u64::try_from(v) {
            Ok(x) => self.serialize_u64(x),
            Err(_) => Err(Error::new(
                ErrorKind::IntegerOverflow,
                format!("cannot encode integer {v}: outside the 64-bit range"),
            )),
        }
    }
    #[inline]
    fn serialize_f32(self, v: f32) -> Result<()> {
        self.serialize_f64(v as f64)
    }
    #[inline]
    fn serialize_f64(self, v: f64) -> Result<()> {
        if !v.is_finite() {
            return Err(float_err(v));
        }
        write_f64(self.out, v);
        Ok(())
    }
    fn serialize_char(self, v: char) -> Result<()> {
        self.write_str(v.encode_utf8(&mut [0; 4]));
        Ok(())
    }
    #[inline]
    fn serialize_str(self, v: &str) -> Result<()> {
        self.write_str(v);
        Ok(())
    }
    fn serialize_bytes(self, v: &[u8]) -> Result<()> {
        // Like Kubernetes' []byte: tag 22 (expected later encoding base64) + byte string.
        self.out.push(0xd6);
        write_head(self.out, MAJOR_BYTES, v.len() as u64);
        self.out.extend_from_slice(v);
        Ok(())
    }
    #[inline]
    fn serialize_none(self) -> Result<()> {
        self.out.push(0xf6);
        Ok(())
    }
    #[inline]
    fn serialize_some<T: ?Sized + Serialize>(self, value: &T) -> Result<()> {
        value.serialize(self)
    }
    fn serialize_unit(self) -> Result<()> {
        self.out.push(0xf6);
        Ok(())
    }
    fn serialize_unit_struct(self, _name: &'static str) -> Result<()> {
        self.serialize_unit()
    }
    fn serialize_unit_variant(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
    ) -> Result<()> {
        self.write_str(variant);
        Ok(())
    }
    fn serialize_newtype_struct<T: ?Sized + Serialize>(
        self,
        name: &'static str,
        value: &T,
    ) -> Result<()> {
        if name == crate::raw::TOKEN_CBOR || name == crate::raw::TOKEN_JSON {
            let bytes = value.serialize(ByteCapture)?;
            return crate::raw::write_raw(self, name, &bytes);
        }
        value.serialize(self)
    }
    fn serialize_newtype_variant<T: ?Sized + Serialize>(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
        value: &T,
    ) -> Result<()> {
        self.out.push(0xa1);
        self.write_str(variant);
        value.serialize(self)
    }
    fn serialize_seq(self, len: Option<usize>) -> Result<Compound<'s, 'a>> {
        let c = self.begin(MAJOR_ARRAY, len);
        Ok(Compound { ser: self, c })
    }
    fn serialize_tuple(self, len: usize) -> Result<Compound<'s, 'a>> {
        self.serialize_seq(Some(len))
    }
    fn serialize_tuple_struct(self, _name: &'static str, len: usize) -> Result<Compound<'s, 'a>> {
        self.serialize_seq(Some(len))
    }
    fn serialize_tuple_variant(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
        len: usize,
    ) -> Result<Compound<'s, 'a>> {
        self.out.push(0xa1);
        self.write_str(variant);
        let c = self.begin(MAJOR_ARRAY, Some(len));
        Ok(Compound { ser: self, c })
    }
    fn serialize_map(self, len: Option<usize>) -> Result<Compound<'s, 'a>> {
        let c = self.begin(MAJOR_MAP, len);
        Ok(Compound { ser: self, c })
    }
    fn serialize_struct(self, name: &'static str, len: usize) -> Result<Compound<'s, 'a>> {
        let c = self.begin_struct(name, len);
        Ok(Compound { ser: self, c })
    }
    fn serialize_struct_variant(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
        len: usize,
    ) -> Result<Compound<'s, 'a>> {
        self.out.push(0xa1);
        self.write_str(variant);
        let c = self.begin_struct(variant, len);
        Ok(Compound { ser: self, c })
    }

    fn is_human_readable(&self) -> bool {
        // Types keep the structure they have in JSON (Kubernetes' rule for CBOR).
        true
    }
}

/// An open array or map (struct, variant) being serialized.
pub struct Compound<'s, 'a> {
    ser: &'s mut Serializer<'a>,
    c: Container,
}

impl Compound<'_, '_> {
    #[inline]
    fn element<T: ?Sized + Serialize>(&mut self, value: &T) -> Result<()> {
        self.c.count += 1;
        value.serialize(&mut *self.ser)
    }

    #[inline(always)]
    fn field<T: ?Sized + Serialize>(&mut self, key: &'static str, value: &T) -> Result<()> {
        if self.ser.opts.sort {
            self.ser.struct_key(&mut self.c, key)?;
        } else {
            self.ser.key_in_place(&mut self.c, key);
        }
        value.serialize(&mut *self.ser)
    }

    fn end_container(self) -> Result<()> {
        self.ser.finish(&self.c)
    }
}

impl ser::SerializeSeq for Compound<'_, '_> {
    type Ok = ();
    type Error = Error;
    fn serialize_element<T: ?Sized + Serialize>(&mut self, value: &T) -> Result<()> {
        self.element(value)
    }
    fn end(self) -> Result<()> {
        self.end_container()
    }
}

impl ser::SerializeTuple for Compound<'_, '_> {
    type Ok = ();
    type Error = Error;
    fn serialize_element<T: ?Sized + Serialize>(&mut self, value: &T) -> Result<()> {
        self.element(value)
    }
    fn end(self) -> Result<()> {
        self.end_container()
    }
}

impl ser::SerializeTupleStruct for Compound<'_, '_> {
    type Ok = ();
    type Error = Error;
    fn serialize_field<T: ?Sized + Serialize>(&mut self, value: &T) -> Result<()> {
        self.element(value)
    }
    fn end(self) -> Result<()> {
        self.end_container()
    }
}

impl ser::SerializeTupleVariant for Compound<'_, '_> {
    type Ok = ();
    type Error = Error;
    fn serialize_field<T: ?Sized + Serialize>(&mut self, value: &T) -> Result<()> {
        self.element(value)
    }
    fn end(self) -> Result<()> {
        self.end_container()
    }
}

impl ser::SerializeMap for Compound<'_, '_> {
    type Ok = ();
    type Error = Error;
    fn serialize_key<T: ?Sized + Serialize>(&mut self, key: &T) -> Result<()> {
        self.ser.start_entry(&mut self.c);
        key.serialize(MapKeySerializer {
            ser: &mut *self.ser,
        })?;
        self.ser.end_key();
        Ok(())
    }
    fn serialize_value<T: ?Sized + Serialize>(&mut self, value: &T) -> Result<()> {
        value.serialize(&mut *self.ser)
    }
    fn end(self) -> Result<()> {
        self.end_container()
    }
}

impl ser::SerializeStruct for Compound<'_, '_> {
    type Ok = ();
    type Error = Error;
    #[inline(always)]
    fn serialize_field<T: ?Sized + Serialize>(
        &mut self,
        key: &'static str,
        value: &T,
    ) -> Result<()> {
        self.field(key, value)
    }
    fn skip_field(&mut self, key: &'static str) -> Result<()> {
        self.ser.skip_key(&mut self.c, key);
        Ok(())
    }
    fn end(self) -> Result<()> {
        self.end_container()
    }
}

impl ser::SerializeStructVariant for Compound<'_, '_> {
    type Ok = ();
    type Error = Error;
    fn serialize_field<T: ?Sized + Serialize>(
        &mut self,
        key: &'static str,
        value: &T,
    ) -> Result<()> {
        self.field(key, value)
    }
    fn skip_field(&mut self, key: &'static str) -> Result<()> {
        self.ser.skip_key(&mut self.c, key);
        Ok(())
    }
    fn end(self) -> Result<()> {
        self.end_container()
    }
}

/// Map keys must be strings (a `char`, `&str`, `String`, unit variant or newtype around one).
struct MapKeySerializer<'s, 'a> {
    ser: &'s mut Serializer<'a>,
}

fn key_error() -> Error {
    Error::new(ErrorKind::NonStringKey, "map keys must be strings")
}

impl ser::Serializer for MapKeySerializer<'_, '_> {
    type Ok = ();
    type Error = Error;
    type SerializeSeq = ser::Impossible<(), Error>;
    type SerializeTuple = ser::Impossible<(), Error>;
    type SerializeTupleStruct = ser::Impossible<(), Error>;
    type SerializeTupleVariant = ser::Impossible<(), Error>;
    type SerializeMap = ser::Impossible<(), Error>;
    type SerializeStruct = ser::Impossible<(), Error>;
    type SerializeStructVariant = ser::Impossible<(), Error>;

    #[inline]
    fn serialize_str(self, v: &str) -> Result<()> {
        self.ser.write_str(v);
        Ok(())
    }
    fn serialize_char(self, v: char) -> Result<()> {
        self.ser.write_str(v.encode_utf8(&mut [0; 4]));
        Ok(())
    }
    fn serialize_unit_variant(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
    ) -> Result<()> {
        self.ser.write_str(variant);
        Ok(())
    }
    fn serialize_newtype_struct<T: ?Sized + Serialize>(
        self,
        _name: &'static str,
        value: &T,
    ) -> Result<()> {
        value.serialize(self)
    }
    fn serialize_bool(self, _v: bool) -> Result<()> {
        Err(key_error())
    }
    fn serialize_i8(self, _v: i8) -> Result<()> {
        Err(key_error())
    }
    fn serialize_i16(self, _v: i16) -> Result<()> {
        Err(key_error())
    }
    fn serialize_i32(self, _v: i32) -> Result<()> {
        Err(key_error())
    }
    fn serialize_i64(self, _v: i64) -> Result<()> {
        Err(key_error())
    }
    fn serialize_u8(self, _v: u8) -> Result<()> {
        Err(key_error())
    }
    fn serialize_u16(self, _v: u16) -> Result<()> {
        Err(key_error())
    }
    fn serialize_u32(self, _v: u32) -> Result<()> {
        Err(key_error())
    }
    fn serialize_u64(self, _v: u64) -> Result<()> {
        Err(key_error())
    }
    fn serialize_f32(self, _v: f32) -> Result<()> {
        Err(key_error())
    }
    fn serialize_f64(self, _v: f64) -> Result<()> {
        Err(key_error())
    }
    fn serialize_bytes(self, _v: &[u8]) -> Result<()> {
        Err(key_error())
    }
    fn serialize_none(self) -> Result<()> {
        Err(key_error())
    }
    fn serialize_some<T: ?Sized + Serialize>(self, _value: &T) -> Result<()> {
        Err(key_error())
    }
    fn serialize_unit(self) -> Result<()> {
        Err(key_error())
    }
    fn serialize_unit_struct(self, _name: &'static str) -> Result<()> {
        Err(key_error())
    }
    fn serialize_newtype_variant<T: ?Sized + Serialize>(
        self,
        _name: &'static str,
        _index: u32,
        _variant: &'static str,
        _value: &T,
    ) -> Result<()> {
        Err(key_error())
    }
    fn serialize_seq(self, _len: Option<usize>) -> Result<Self::SerializeSeq> {
        Err(key_error())
    }
    fn serialize_tuple(self, _len: usize) -> Result<Self::SerializeTuple> {
        Err(key_error())
    }
    fn serialize_tuple_struct(
        self,
        _name: &'static str,
        _len: usize,
    ) -> Result<Self::SerializeTupleStruct> {
        Err(key_error())
    }
    fn serialize_tuple_variant(
        self,
        _name: &'static str,
        _index: u32,
        _variant: &'static str,
        _len: usize,
    ) -> Result<Self::SerializeTupleVariant> {
        Err(key_error())
    }
    fn serialize_map(self, _len: Option<usize>) -> Result<Self::SerializeMap> {
        Err(key_error())
    }
    fn serialize_struct(self, _name: &'static str, _len: usize) -> Result<Self::SerializeStruct> {
        Err(key_error())
    }
    fn serialize_struct_variant(
        self,
        _name: &'static str,
        _index: u32,
        _variant: &'static str,
        _len: usize,
    ) -> Result<Self::SerializeStructVariant> {
        Err(key_error())
    }
    fn is_human_readable(&self) -> bool {
        true
    }
}

/// Receives a raw item's bytes (see raw.rs); it is the one non-human-readable serializer, which
/// is how the raw value knows to hand over plain bytes.
struct ByteCapture;

fn capture_error() -> Error {
    Error::new(ErrorKind::Message, "raw value must serialize as bytes")
}

macro_rules! reject {
    ($($name:ident($($arg:ty),*) -> $ret:ty;)*) => {
        $(fn $name(self, $(_: $arg),*) -> Result<$ret> {
            Err(capture_error())
        })*
    };
}

impl ser::Serializer for ByteCapture {
    type Ok = Vec<u8>;
    type Error = Error;
    type SerializeSeq = ser::Impossible<Vec<u8>, Error>;
    type SerializeTuple = ser::Impossible<Vec<u8>, Error>;
    type SerializeTupleStruct = ser::Impossible<Vec<u8>, Error>;
    type SerializeTupleVariant = ser::Impossible<Vec<u8>, Error>;
    type SerializeMap = ser::Impossible<Vec<u8>, Error>;
    type SerializeStruct = ser::Impossible<Vec<u8>, Error>;
    type SerializeStructVariant = ser::Impossible<Vec<u8>, Error>;

    fn serialize_bytes(self, v: &[u8]) -> Result<Vec<u8>> {
        Ok(v.to_vec())
    }
    fn is_human_readable(&self) -> bool {
        false
    }
    reject! {
        serialize_bool(bool) -> Vec<u8>;
        serialize_i8(i8) -> Vec<u8>;
        serialize_i16(i16) -> Vec<u8>;
        serialize_i32(i32) -> Vec<u8>;
        serialize_i64(i64) -> Vec<u8>;
        serialize_u8(u8) -> Vec<u8>;
        serialize_u16(u16) -> Vec<u8>;
        serialize_u32(u32) -> Vec<u8>;
        serialize_u64(u64) -> Vec<u8>;
        serialize_f32(f32) -> Vec<u8>;
        serialize_f64(f64) -> Vec<u8>;
        serialize_char(char) -> Vec<u8>;
        serialize_str(&str) -> Vec<u8>;
        serialize_none() -> Vec<u8>;
        serialize_unit() -> Vec<u8>;
        serialize_unit_struct(&'static str) -> Vec<u8>;
        serialize_unit_variant(&'static str, u32, &'static str) -> Vec<u8>;
        serialize_seq(Option<usize>) -> Self::SerializeSeq;
        serialize_tuple(usize) -> Self::SerializeTuple;
        serialize_tuple_struct(&'static str, usize) -> Self::SerializeTupleStruct;
        serialize_tuple_variant(&'static str, u32, &'static str, usize) -> Self::SerializeTupleVariant;
        serialize_map(Option<usize>) -> Self::SerializeMap;
        serialize_struct(&'static str, usize) -> Self::SerializeStruct;
        serialize_struct_variant(&'static str, u32, &'static str, usize) -> Self::SerializeStructVariant;
    }
    fn serialize_some<T: ?Sized + Serialize>(self, _: &T) -> Result<Vec<u8>> {
        Err(capture_error())
    }
    fn serialize_newtype_struct<T: ?Sized + Serialize>(
        self,
        _: &'static str,
        _: &T,
    ) -> Result<Vec<u8>> {
        Err(capture_error())
    }
    fn serialize_newtype_variant<T: ?Sized + Serialize>(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: &T,
    ) -> Result<Vec<u8>> {
        Err(capture_error())
    }
}
