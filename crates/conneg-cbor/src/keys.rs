//! Duplicate map key detection.
//!
//! Keys are compared by content, whatever their major type (a byte-string key and a text-string
//! key with the same bytes are duplicates). Definite-length keys are recorded as ranges of the
//! input, so checking allocates nothing in steady state; indefinite-length keys are joined into
//! a shared arena. One tracker serves every open map: nested maps push above their parent's keys
//! and truncate back when they close. Small maps keep a 64-bit Bloom word of key fingerprints and
//! are scanned linearly only when a new key hits it; past
//! [`LINEAR_MAX`] keys a map switches to a set of keyed (SipHash) hashes, confirming any hit by
//! comparing contents.

use std::collections::HashSet;
use std::hash::{BuildHasher, RandomState};

const LINEAR_MAX: usize = 32;

/// Where a key's bytes are: in the input, or in the tracker's arena.
#[derive(Clone, Copy, Debug)]
pub(crate) struct KeyRef {
    pub(crate) start: usize,
    pub(crate) end: usize,
    pub(crate) arena: bool,
}

/// One recorded key: where its bytes are, and its `fingerprint` (0 for keys of maps checked by
/// hash).
#[derive(Clone, Copy)]
struct Entry {
    fp: u64,
    key: KeyRef,
}

/// Keys of every open map, innermost last.
#[derive(Default)]
pub(crate) struct KeyTracker {
    keys: Vec<Entry>,
    pub(crate) arena: Vec<u8>,
    hasher: Option<RandomState>,
}

/// One open map's share of the tracker.
#[derive(Debug)]
pub(crate) struct MapKeys {
    base: usize,
    arena_base: usize,
    /// One bit per key of the map (bit `bloom_bit` of its fingerprint): a key whose bit is clear
    /// is certainly new, so the linear scan runs only on a hit.
    bloom: u64,
    set: Option<HashSet<u64>>,
}

impl KeyTracker {
    /// Forgets every key, keeping the buffers.
    pub(crate) fn reset(&mut self) {
        self.keys.clear();
        self.arena.clear();
    }

    pub(crate) fn open(&self) -> MapKeys {
        MapKeys {
            base: self.keys.len(),
            arena_base: self.arena.len(),
            bloom: 0,
            set: None,
        }
    }

    pub(crate) fn close(&mut self, m: MapKeys) {
        self.keys.truncate(m.base);
        self.arena.truncate(m.arena_base);
    }

    #[inline]
    pub(crate) fn resolve<'a>(&'a self, input: &'a [u8], k: KeyRef) -> &'a [u8] {
        if k.arena {
            &self.arena[k.start..k.end]
        } else {
            &input[k.start..k.end]
        }
    }

    /// Records `key` in map `m`; returns false if the map already has a key with those bytes.
    /// (Inlined: a call costs about as much as the check itself.)
    #[inline(always)]
    pub(crate) fn insert(&mut self, m: &mut MapKeys, input: &[u8], key: KeyRef) -> bool {
        if m.set.is_some() || self.keys.len() - m.base >= LINEAR_MAX {
            return self.insert_hashed(m, input, key);
        }
        let fp = fingerprint(if key.arena { &self.arena } else { input }, key);
        let bit = bloom_bit(fp);
        if m.bloom & bit != 0 && self.seen_linear(m.base, input, key, fp) {
            return false;
        }
        m.bloom |= bit;
        self.keys.push(Entry { fp, key });
        true
    }

    /// Whether a key of the map starting at `base` has `key`'s fingerprint and bytes.
    fn seen_linear(&self, base: usize, input: &[u8], key: KeyRef, fp: u64) -> bool {
        let kb = self.resolve(input, key);
        self.keys[base..]
            .iter()
            .any(|e| e.fp == fp && key_eq(self.resolve(input, e.key), kb))
    }

    /// `insert` for maps of [`LINEAR_MAX`] keys or more: a set of keyed hashes, built from the
    /// keys so far on the first call.
    #[cold]
    fn insert_hashed(&mut self, m: &mut MapKeys, input: &[u8], key: KeyRef) -> bool {
        let hasher = self.hasher.get_or_insert_with(RandomState::new);
        let resolve = |k: KeyRef| {
            if k.arena {
                &self.arena[k.start..k.end]
            } else {
                &input[k.start..k.end]
            }
        };
        let set = m.set.get_or_insert_with(|| {
            let prev = &self.keys[m.base..];
            let mut set = HashSet::with_capacity(prev.len() * 2);
            set.extend(prev.iter().map(|e| hasher.hash_one(resolve(e.key))));
            set
        });
        let kb = resolve(key);
        if !set.insert(hasher.hash_one(kb)) {
            // A hash hit: confirm by content (collisions are possible, if unlikely).
            if self.keys[m.base..].iter().any(|e| resolve(e.key) == kb) {
                return false;
            }
        }
        self.keys.push(Entry { fp: 0, key });
        true
    }
}

/// The Bloom bit of a fingerprint: equal keys have equal fingerprints, hence equal bits.
#[inline]
fn bloom_bit(fp: u64) -> u64 {
    1u64 << (fp.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 58)
}

/// The first eight bytes of the key at `k` in `src` (zero-padded) mixed with its length: a
/// function of the key's bytes only, so different fingerprints mean different keys. One
/// fixed-size load, masked for keys shorter than eight bytes, unless the key ends within eight
/// bytes of the end of `src`.
#[inline]
fn fingerprint(src: &[u8], k: KeyRef) -> u64 {
    let len = k.end - k.start;
    let word = match src.get(k.start..k.start + 8) {
        Some(w) => u64::from_le_bytes(w.try_into().expect("8 bytes")),
        None => {
            let mut b = [0u8; 8];
            b[..len].copy_from_slice(&src[k.start..k.end]);
            u64::from_le_bytes(b)
        }
    };
    let word = if len < 8 {
        word & ((1u64 << (8 * len)) - 1)
    } else {
        word
    };
    word ^ (len as u64).rotate_right(8)
}

/// Renders a key for an error message: as a quoted string when it is UTF-8, as hex otherwise.
pub(crate) fn display_key(k: &[u8]) -> String {
    match std::str::from_utf8(k) {
        Ok(s) => format!("{s:?}"),
        Err(_) => format!(
            "h'{}'",
            k.iter().map(|b| format!("{b:02x}")).collect::<String>()
        ),
    }
}

/// `a == b` for short keys without a `memcmp` call: keys of up to 24 bytes are compared as at
/// most three (overlapping) words.
#[inline(always)]
pub(crate) fn key_eq(a: &[u8], b: &[u8]) -> bool {
    let n = a.len();
    if n != b.len() {
        return false;
    }
    if n >= 8 {
        if n > 24 {
            return a == b;
        }
        let w = |s: &[u8], i: usize| u64::from_le_bytes(s[i..i + 8].try_into().expect("8 bytes"));
        w(a, 0) == w(b, 0) && w(a, n - 8) == w(b, n - 8) && (n <= 16 || w(a, 8) == w(b, 8))
    } else if n >= 4 {
        let w = |s: &[u8], i: usize| u32::from_le_bytes(s[i..i + 4].try_into().expect("4 bytes"));
        w(a, 0) == w(b, 0) && w(a, n - 4) == w(b, n - 4)
    } else {
        n == 0 || (a[0] == b[0] && a[n / 2] == b[n / 2] && a[n - 1] == b[n - 1])
    }
}

#[cfg(test)]
mod tests {
    use super::key_eq;

    #[test]
    fn key_eq_is_slice_equality() {
        for n in 0..40usize {
            let a: Vec<u8> = (0..n as u8).map(|i| i.wrapping_mul(37) ^ 0x5a).collect();
            assert!(key_eq(&a, &a.clone()), "{n}");
            assert!(!key_eq(&a, &a[..n.saturating_sub(1)]) || n == 0, "{n}");
            for i in 0..n {
                for bit in [0x01, 0x80] {
                    let mut b = a.clone();
                    b[i] ^= bit;
                    assert!(!key_eq(&a, &b), "{n} {i} {bit}");
                    assert!(!key_eq(&b, &a), "{n} {i} {bit}");
                }
            }
        }
    }
}
