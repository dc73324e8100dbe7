//! Stack room for the recursive decoders: [`guarded`] runs a step that recurses into a
//! container on the current stack while enough of it is left, and on a new segment otherwise.
//!
//! Asking `stacker` how much stack is left costs a thread-local lookup with a lazy start and a
//! call to read the stack pointer for every container, which is a measurable share of decoding
//! small ones (`scripts/bench-ab`: typed decode of the bench's custom resource and 1 MiB Pod list
//! 2% faster without it, `value_from_slice` of the Pod list about 10%). Instead, the lowest
//! address down to which this thread's current stack segment still leaves [`RED_ZONE`] bytes (its
//! "floor") is asked once and kept in a thread-local, and each container compares the address of
//! a local with it. On a new segment the floor is that segment's, and the previous one comes back
//! when the step returns or unwinds. Like `stacker`, this assumes a stack that grows downwards.
//!
//! A generic step (a serde visitor) runs under [`guarded_once`], compiled once behind a call. The
//! serde deserializer's `deserialize_struct` does better: it asks [`has_room`] first and, if
//! there is none, makes the same call again through [`make_room`], so a struct's visitor is
//! compiled once and inlined (typed decode of the bench's Pod 2.5% fewer instructions).

use std::cell::Cell;

/// Leave this much stack before recursing into a container; otherwise grow by [`STACK_GROW`].
const RED_ZONE: usize = 128 * 1024;
/// The size of each new stack segment.
const STACK_GROW: usize = 2 * 1024 * 1024;

thread_local! {
    /// The current segment's floor; 0 until the first slow check on this thread (and, on a
    /// platform where `stacker` cannot tell the stack's size, outside new segments: there every
    /// check on the thread's own stack is slow, and grows).
    static FLOOR: Cell<usize> = const { Cell::new(0) };
}

/// Approximately the stack pointer: the address of a local of the (inlined) caller's frame.
#[inline(always)]
fn here() -> usize {
    let marker = 0u8;
    std::hint::black_box(&marker) as *const u8 as usize
}

/// Runs `f`, which may recurse, with at least [`RED_ZONE`] bytes of stack left.
#[inline(always)]
pub(crate) fn guarded<R>(f: impl FnOnce() -> R) -> R {
    if has_room() {
        return f();
    }
    make_room(f)
}

/// [`guarded`] for a step that is generic code (a serde visitor): its code is compiled once, into
/// a function of its own that both ways of running the step call, instead of being inlined into
/// each. Inlined, every container type a serde decoder meets would carry two copies of its
/// visitor, one of them cold but interleaved with the hot code (the typed 1 MiB Pod list of the
/// benchmark decoded about 6% slower that way). Small non-generic steps are better off with
/// [`guarded`].
#[inline(always)]
pub(crate) fn guarded_once<R>(f: impl FnOnce() -> R) -> R {
    guarded(|| once(f))
}

/// The one compiled copy of a step run by [`guarded_once`].
#[inline(never)]
fn once<R>(f: impl FnOnce() -> R) -> R {
    f()
}

/// Whether this stack segment has [`RED_ZONE`] bytes left at the caller. `false` until the first
/// [`make_room`] on this thread.
#[inline(always)]
pub(crate) fn has_room() -> bool {
    let floor = FLOOR.get();
    floor != 0 && here() > floor
}

/// Runs `f` with at least [`RED_ZONE`] bytes of stack left, for a caller that found no room
/// (`!has_room()`, as `guarded` does when the cached floor says no or is not known yet): asks
/// `stacker`, caches the answer, and grows the stack if the red zone is reached. Inside `f`,
/// `has_room()` holds, so a caller may pass a call to itself as `f`: its code, visitor and all,
/// is then compiled once and inlined.
#[cold]
#[inline(never)]
pub(crate) fn make_room<R>(f: impl FnOnce() -> R) -> R {
    match stacker::remaining_stack() {
        Some(left) if left >= RED_ZONE => {
            FLOOR.set(here().saturating_sub(left) + RED_ZONE);
            f()
        }
        _ => stacker::grow(STACK_GROW, || {
            // Puts the previous segment's floor back however the step ends.
            struct Restore(usize);
            impl Drop for Restore {
                fn drop(&mut self) {
                    FLOOR.set(self.0);
                }
            }
            let _restore = Restore(FLOOR.get());
            // Where `stacker` cannot tell, the segment's own size does: `make_room`'s callers
            // rely on finding room in it.
            let left = stacker::remaining_stack().unwrap_or(STACK_GROW - RED_ZONE);
            FLOOR.set(here().saturating_sub(left) + RED_ZONE);
            f()
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::hint::black_box;

    /// On a 2 MiB thread, with this thread's own floor known, runs `f` and hands back the floor
    /// before and after.
    fn on_small_thread(f: fn(usize)) -> (usize, usize) {
        std::thread::Builder::new()
            .stack_size(2 << 20)
            .spawn(move || {
                guarded(|| ());
                let own = FLOOR.get();
                f(own);
                (own, FLOOR.get())
            })
            .unwrap()
            .join()
            .unwrap()
    }

    /// Recursion far deeper than the thread's stack allows (40,000 levels of about 4 KiB, 160
    /// MiB) goes on new segments, and the thread's own floor is in force again afterwards.
    #[test]
    fn deep_recursion_grows_the_stack() {
        fn down(n: u32) -> u32 {
            let pad = black_box([n as u8; 4096]);
            if n == 0 {
                return u32::from(pad[0]);
            }
            guarded(|| down(n - 1)) + 1
        }
        let (own, after) = on_small_thread(|_| assert_eq!(down(40_000), 40_000));
        assert_ne!(own, 0);
        assert_eq!(after, own);
    }

    /// A panic inside a new segment leaves the thread's own floor in place.
    #[test]
    fn unwinding_restores_the_floor() {
        fn down(own: usize) {
            let pad = black_box([0u8; 4096]);
            assert_eq!(FLOOR.get(), own, "a new segment: unwind from here");
            guarded(|| down(own));
            black_box(pad);
        }
        let (own, after) = on_small_thread(|own| {
            assert!(std::panic::catch_unwind(|| down(own)).is_err());
        });
        assert_eq!(after, own);
    }
}
