//! Decoding any input of at most 128 bytes allocates at most 16 KiB (Kubernetes'
//! FuzzDecodeAllocations bound), whatever lengths the input declares.
//!
//! A counting global allocator tallies the bytes each thread asks for (realloc growth included).

// The allocator trait is unsafe to implement; this impl only forwards to `System`.
#![allow(unsafe_code)]

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

mod common;
use common::{unhex, vectors};

struct Counting;

thread_local! {
    static ALLOCATED: Cell<usize> = const { Cell::new(0) };
}

fn count(n: usize) {
    let _ = ALLOCATED.try_with(|c| c.set(c.get() + n));
}

// SAFETY: every method forwards its arguments unchanged to the system allocator.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        count(layout.size());
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        count(layout.size());
        unsafe { System.alloc_zeroed(layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        count(new_size.saturating_sub(layout.size()));
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

const LIMIT: usize = 16 * 1024;

type Decoding<'a> = &'a dyn Fn(&[u8]);

/// The most bytes any of the decoders asks for while decoding `input` (results dropped after).
fn allocated_by(input: &[u8]) -> usize {
    let lax = conneg_cbor::DecodeOptions::new().unknown_fields(conneg_cbor::UnknownFields::Ignore);
    let decoders: [Decoding<'_>; 5] = [
        &|b| drop(conneg_cbor::from_slice::<serde_json::Value>(b)),
        &|b| drop(conneg_cbor::value_from_slice(b)),
        &|b| drop(lax.from_slice::<serde::de::IgnoredAny>(b)),
        // A typed target that trusts size hints at every level (serde's Vec visitor pre-allocates).
        &|b| drop(conneg_cbor::from_slice::<Tree>(b)),
        // The same through `Decode`, which pre-allocates by itself.
        &|b| drop(conneg_cbor::decode::<Tree>(b)),
    ];
    decoders
        .iter()
        .map(|decode| {
            let before = ALLOCATED.with(|c| c.get());
            decode(input);
            ALLOCATED.with(|c| c.get()) - before
        })
        .max()
        .expect("decoders")
}

#[derive(serde::Deserialize)]
#[allow(dead_code)]
struct Tree(Vec<Tree>);

impl conneg_cbor::Decode for Tree {
    fn decode(d: &mut conneg_cbor::Decoder<'_, '_>) -> Result<Self, conneg_cbor::UseSerde> {
        Vec::decode(d).map(Tree)
    }
}

/// A small fixed-seed xorshift generator, so the corpus is the same on every run.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

fn corpus() -> Vec<Vec<u8>> {
    let mut c = Vec::new();
    // Appendix A vectors, truncated at every length.
    for v in &vectors("rfc-appendix-a.json") {
        let b = unhex(v["hex"].as_str().unwrap());
        for i in 0..=b.len().min(128) {
            c.push(b[..i].to_vec());
        }
    }
    // Kubernetes' fuzz seed.
    c.push(b"\xa2\x4aapiVersion\x41x\x44kind\x41y".to_vec());
    // Adversarial declared lengths, alone and nested.
    for h in [
        "9b ffffffffffffffff",
        "9a 7fffffff",
        "5a ffffffff",
        "5b ffffffffffffffff",
        "7a ffffffff",
        "ba 001fffff",
        "bb ffffffffffffffff",
        "99 ffff",
        "b9 ffff",
    ] {
        let head = unhex(h);
        for reps in [1, 2, 8, 30] {
            let mut b = Vec::new();
            for _ in 0..reps {
                b.extend_from_slice(&head);
            }
            b.truncate(128);
            c.push(b);
        }
    }
    // Every level declaring many elements (a hint at each level must not multiply).
    for head in [[0x98u8, 0xff], [0xb8, 0xff], [0x99, 0xff]] {
        let mut b = Vec::new();
        while b.len() + 2 <= 128 {
            b.extend_from_slice(&head);
        }
        c.push(b.clone());
        let mut with_keys = Vec::new();
        while with_keys.len() + 4 <= 128 {
            with_keys.extend_from_slice(&[0xb8, 0xff, 0x41, b'k']);
        }
        c.push(with_keys);
    }
    // Deep nesting of every container kind.
    for b in [0x81u8, 0x9f, 0xa1, 0xbf, 0xc6, 0xd9] {
        c.push(vec![b; 128]);
    }
    let mut m = Vec::new();
    while m.len() + 3 <= 128 {
        m.extend_from_slice(&[0xa1, 0x41, b'a']);
    }
    c.push(m);
    // Many small strings and many keys.
    let mut s = vec![0x98, 60];
    s.extend(std::iter::repeat_n(0x40, 60));
    c.push(s);
    let mut k = vec![0xb8, 40];
    for i in 0..40u8 {
        k.extend_from_slice(&[0x41, i, 0xf6]);
    }
    k.truncate(128);
    c.push(k);
    // Random bytes, and random bytes behind plausible heads.
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    for _ in 0..20_000 {
        let len = (rng.next() % 129) as usize;
        let mut b: Vec<u8> = (0..len).map(|_| rng.next() as u8).collect();
        if len > 0 && rng.next().is_multiple_of(2) {
            b[0] = [0x9f, 0xbf, 0x98, 0xb8, 0x5f, 0x7f][(rng.next() % 6) as usize];
        }
        c.push(b);
    }
    c
}

#[test]
fn decoding_128_bytes_allocates_at_most_16_kib() {
    let corpus = corpus();
    let mut worst = (0, Vec::new());
    for input in &corpus {
        assert!(input.len() <= 128);
        let n = allocated_by(input);
        if n > worst.0 {
            worst = (n, input.clone());
        }
    }
    eprintln!("worst: {} bytes for {:02x?}", worst.0, worst.1);
    assert!(
        worst.0 <= LIMIT,
        "{} bytes allocated decoding {:02x?}",
        worst.0,
        worst.1
    );
}

#[test]
fn the_counter_counts() {
    // The bound is meaningful only if decoding that allocates is seen.
    let b = conneg_cbor::to_vec(&serde_json::json!({"a": ["x", "y"], "b": {"c": 1}})).unwrap();
    assert!(allocated_by(&b) > 0);
}
