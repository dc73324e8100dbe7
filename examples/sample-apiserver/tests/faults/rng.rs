//! A small deterministic generator (SplitMix64): the same seed gives the same fault schedule
//! and the same choices of operations, so a failing run can be replayed.

/// SplitMix64 (Steele, Lea, Flood 2014).
#[derive(Clone)]
pub(crate) struct Rng(u64);

impl Rng {
    pub(crate) fn new(seed: u64) -> Rng {
        Rng(seed)
    }

    pub(crate) fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n` (`n > 0`).
    pub(crate) fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n
    }

    /// Uniform in `lo..hi` milliseconds.
    pub(crate) fn millis(&mut self, lo: u64, hi: u64) -> std::time::Duration {
        std::time::Duration::from_millis(lo + self.below(hi - lo))
    }

    /// An independent generator for a sub-task (a client thread), derived from this one.
    pub(crate) fn fork(&mut self) -> Rng {
        Rng(self.next_u64())
    }
}
