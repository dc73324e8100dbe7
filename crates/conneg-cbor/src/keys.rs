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

/// Keys of every open map, innermost last.
#[derive(Default)]
pub(crate) struct KeyTracker {
    keys: Vec<KeyRef>,
    /// `fingerprint` of each key in `keys` (0 for keys of maps checked by hash).
    fps: Vec<u64>,
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
        self.fps.clear();
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
        self.fps.truncate(m.base);
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
    pub(crate) fn insert(&mut self, m: &mut MapKeys, input: &[u8], key: KeyRef) -> bool {
        let kb = self.resolve(input, key);
        let n = self.keys.len() - m.base;
        if m.set.is_none() && n < LINEAR_MAX {
            // Compare a fingerprint (length and first bytes) before the contents.
            let fp = fingerprint(kb);
            let bit = bloom_bit(fp);
            if m.bloom & bit != 0 {
                for (i, &f) in self.fps[m.base..].iter().enumerate() {
                    if f == fp && self.resolve(input, self.keys[m.base + i]) == kb {
                        return false;
                    }
                }
            }
            m.bloom |= bit;
            self.keys.push(key);
            self.fps.push(fp);
            return true;
        }
        if self.hasher.is_none() {
            self.hasher = Some(RandomState::new());
        }
        let hasher = self.hasher.as_ref().expect("set above");
        let kb = self.resolve(input, key);
        if m.set.is_none() {
            let mut set = HashSet::with_capacity(n * 2);
            for &prev in &self.keys[m.base..] {
                set.insert(hasher.hash_one(self.resolve(input, prev)));
            }
            m.set = Some(set);
        }
        let h = hasher.hash_one(kb);
        let set = m.set.as_mut().expect("set built above");
        let fresh = set.insert(h);
        if !fresh {
            // A hash hit: confirm by content (collisions are possible, if unlikely).
            for &prev in &self.keys[m.base..] {
                if self.resolve(input, prev) == kb {
                    return false;
                }
            }
        }
        self.keys.push(key);
        self.fps.push(0);
        true
    }
}

/// The Bloom bit of a fingerprint: equal keys have equal fingerprints, hence equal bits.
#[inline]
fn bloom_bit(fp: u64) -> u64 {
    1u64 << (fp.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 58)
}

/// First eight bytes of a key (zero-padded) mixed with its length: a function of the key's bytes
/// only, so different fingerprints mean different keys. Keys of eight bytes or more take a
/// fixed-size load (no variable-length copy).
#[inline]
fn fingerprint(k: &[u8]) -> u64 {
    let mut b = [0u8; 8];
    if k.len() >= 8 {
        b.copy_from_slice(&k[..8]);
    } else {
        b[..k.len()].copy_from_slice(k);
    }
    u64::from_le_bytes(b) ^ (k.len() as u64).rotate_right(8)
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
