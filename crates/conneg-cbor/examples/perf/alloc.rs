//! The perf example's allocator, chosen by `PERF_ALLOC` for `perf profile` runs:
//!
//! * unset: the system allocator (glibc's malloc), untouched;
//! * `count`: the system allocator, counting calls, bytes asked for and the peak of live bytes
//!   of each iteration;
//! * `bump`: a bump allocator over one region faulted in before the first iteration and reset
//!   after each one: an allocation is a pointer bump and a free does nothing, so every
//!   iteration sees the same fresh heap whatever ran before it (glibc's speed depends on its
//!   free lists, its consolidation and its trimming: on the heap's history).
//!
//! In both modes an iteration's allocations must be dropped by its end (the decoded value is),
//! and blocks that live on (the deserializer's thread-local buffers) must come from a first
//! iteration run on the system allocator, which [`iterations`] does.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicU8, AtomicUsize, Ordering::Relaxed};
use std::time::{Duration, Instant};

const SYSTEM: u8 = 0;
const COUNT: u8 = 1;
const BUMP: u8 = 2;

static MODE: AtomicU8 = AtomicU8::new(SYSTEM);
static CALLS: AtomicUsize = AtomicUsize::new(0);
static BYTES: AtomicUsize = AtomicUsize::new(0);
static LIVE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);
/// The bump region: `[START, END)`, next free byte at `NEXT`.
static START: AtomicUsize = AtomicUsize::new(0);
static END: AtomicUsize = AtomicUsize::new(0);
static NEXT: AtomicUsize = AtomicUsize::new(0);

pub(crate) struct PerfAlloc;

fn in_region(p: *mut u8) -> bool {
    (START.load(Relaxed)..END.load(Relaxed)).contains(&(p as usize))
}

fn count(size: usize) {
    CALLS.fetch_add(1, Relaxed);
    BYTES.fetch_add(size, Relaxed);
    let live = LIVE.fetch_add(size, Relaxed) + size;
    PEAK.fetch_max(live, Relaxed);
}

fn bump(layout: Layout) -> *mut u8 {
    let at = NEXT.load(Relaxed).next_multiple_of(layout.align());
    let end = at + layout.size();
    assert!(end <= END.load(Relaxed), "PERF_BUMP_MB is too small");
    NEXT.store(end, Relaxed);
    at as *mut u8
}

// SAFETY: every block handed out is either the system allocator's (released to it) or a fresh,
// suitably aligned range of the bump region that no other live block overlaps (the region is
// reset only between iterations, when the iteration's blocks are gone).
#[allow(unsafe_code)]
unsafe impl GlobalAlloc for PerfAlloc {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        match MODE.load(Relaxed) {
            SYSTEM => unsafe { System.alloc(layout) },
            COUNT => {
                count(layout.size());
                unsafe { System.alloc(layout) }
            }
            _ => {
                count(layout.size());
                bump(layout)
            }
        }
    }

    unsafe fn dealloc(&self, p: *mut u8, layout: Layout) {
        if MODE.load(Relaxed) != SYSTEM {
            LIVE.fetch_sub(layout.size().min(LIVE.load(Relaxed)), Relaxed);
        }
        if !in_region(p) {
            unsafe { System.dealloc(p, layout) }
        }
    }

    unsafe fn realloc(&self, p: *mut u8, layout: Layout, new: usize) -> *mut u8 {
        let mode = MODE.load(Relaxed);
        if mode != SYSTEM {
            count(new);
            LIVE.fetch_sub(layout.size().min(LIVE.load(Relaxed)), Relaxed);
        }
        if !in_region(p) {
            // Blocks from before the iteration stay the system allocator's.
            return unsafe { System.realloc(p, layout, new) };
        }
        // The last block grows in place; any other moves.
        if p as usize + layout.size() == NEXT.load(Relaxed) && p as usize + new <= END.load(Relaxed)
        {
            NEXT.store(p as usize + new, Relaxed);
            return p;
        }
        let q = bump(Layout::from_size_align(new, layout.align()).expect("layout"));
        unsafe { std::ptr::copy_nonoverlapping(p, q, layout.size().min(new)) };
        q
    }
}

/// Runs `f` `n` times under the allocator `PERF_ALLOC` names (after one iteration on the system
/// allocator) and, in `count` and `bump` modes, prints per iteration: the median time, calls to
/// `alloc` and `realloc`, the bytes they asked for and the peak of live bytes.
pub(crate) fn iterations(n: u32, f: &mut dyn FnMut()) {
    let mode = match std::env::var("PERF_ALLOC").as_deref() {
        Ok("count") => COUNT,
        Ok("bump") => BUMP,
        Ok(other) if !other.is_empty() => panic!("PERF_ALLOC is count or bump, not {other}"),
        _ => SYSTEM,
    };
    if mode == SYSTEM {
        for _ in 0..n {
            f();
        }
        return;
    }
    if n == 0 {
        return;
    }
    f();
    if mode == BUMP {
        let mb: usize = std::env::var("PERF_BUMP_MB")
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or(256);
        // Faulted in now (written, page by page), so that no iteration pays for it.
        let region = vec![1u8; mb << 20].leak();
        START.store(region.as_ptr() as usize, Relaxed);
        END.store(region.as_ptr() as usize + region.len(), Relaxed);
    }
    let mut times = Vec::with_capacity(n as usize);
    let (mut calls, mut bytes, mut peak) = (0, 0, 0);
    for _ in 0..n {
        NEXT.store(START.load(Relaxed), Relaxed);
        CALLS.store(0, Relaxed);
        BYTES.store(0, Relaxed);
        LIVE.store(0, Relaxed);
        PEAK.store(0, Relaxed);
        let t = Instant::now();
        MODE.store(mode, Relaxed);
        f();
        MODE.store(SYSTEM, Relaxed);
        times.push(t.elapsed());
        (calls, bytes, peak) = (CALLS.load(Relaxed), BYTES.load(Relaxed), PEAK.load(Relaxed));
    }
    times.sort();
    let median: Duration = times[times.len() / 2];
    eprintln!(
        "alloc {}: median {median:.1?} per iteration ({n}), {calls} allocations, {bytes} bytes asked, peak live {peak} bytes",
        if mode == BUMP { "bump" } else { "count" },
    );
}
