//! Deep nesting (Kubernetes allows 10000 levels) must not overflow a small (2 MiB) thread stack,
//! decoding into `serde_json::Value` (through serde or `value_from_slice`), into a recursive
//! struct, or skipping with `IgnoredAny`.

use conneg_cbor::ErrorKind;
use serde::Deserialize;
use serde::de::IgnoredAny;
use serde_json::Value;

fn nested_arrays(depth: usize) -> Vec<u8> {
    let mut b = vec![0x81; depth - 1];
    b.push(0x80);
    b
}

fn nested_maps(depth: usize) -> Vec<u8> {
    let mut b = Vec::with_capacity(depth * 3);
    for _ in 0..depth - 1 {
        b.extend_from_slice(&[0xa1, 0x41, b'a']);
    }
    b.push(0xa0);
    b
}

fn nested_indefinite(depth: usize) -> Vec<u8> {
    let mut b = vec![0x9f; depth];
    b.extend(std::iter::repeat_n(0xff, depth));
    b
}

fn on_small_stack<F: FnOnce() + Send + 'static>(f: F) {
    std::thread::Builder::new()
        .stack_size(2 << 20)
        .spawn(f)
        .unwrap()
        .join()
        .unwrap();
}

#[test]
fn ten_thousand_levels_on_a_2_mib_stack() {
    on_small_stack(|| {
        for input in [
            nested_arrays(10_000),
            nested_maps(10_000),
            nested_indefinite(10_000),
        ] {
            conneg_cbor::from_slice::<IgnoredAny>(&input).unwrap();
            let v: Value = conneg_cbor::from_slice(&input).unwrap();
            let direct = conneg_cbor::value_from_slice(&input).unwrap();
            // Dropping a 10000-deep Value recurses in serde_json; do it without blowing the stack.
            let mut stack = vec![v, direct];
            while let Some(v) = stack.pop() {
                match v {
                    Value::Array(a) => stack.extend(a),
                    Value::Object(o) => stack.extend(o.into_iter().map(|(_, v)| v)),
                    _ => {}
                }
            }
        }
    });
}

#[test]
fn one_level_more_is_a_depth_error_not_a_crash() {
    on_small_stack(|| {
        for input in [
            nested_arrays(10_001),
            nested_maps(10_001),
            nested_indefinite(10_001),
        ] {
            for e in [
                conneg_cbor::from_slice::<IgnoredAny>(&input).unwrap_err(),
                conneg_cbor::from_slice::<Value>(&input).unwrap_err(),
                conneg_cbor::value_from_slice(&input).unwrap_err(),
            ] {
                assert_eq!(e.kind(), ErrorKind::DepthLimit);
            }
        }
        // Even with the limit lifted, a million levels do not overflow the stack.
        let input = nested_arrays(1_000_000);
        let opts = conneg_cbor::DecodeOptions::new().max_depth(usize::MAX);
        opts.from_slice::<IgnoredAny>(&input).unwrap();
        let deep = opts.value_from_slice(&input).unwrap();
        // (Too deep to drop: serde_json's drop recurses.)
        std::mem::forget(deep);
        // Tags count as levels too.
        let mut tags = vec![0xc6; 10_001];
        tags.push(0x01);
        let e = conneg_cbor::from_slice::<Value>(&tags).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::DepthLimit);
    });
}

/// A struct that nests through itself: each level is a `deserialize_struct` call, whose stack
/// check is the only one on the way down (and, through `decode`, a derived `Decode` that gives
/// up to serde when the stack runs low).
#[derive(Deserialize, conneg_cbor::Decode)]
struct Node {
    a: Option<Box<Node>>,
}

impl Node {
    fn depth(&self) -> usize {
        let mut n = 1;
        let mut at = self;
        while let Some(next) = &at.a {
            n += 1;
            at = next;
        }
        n
    }
}

impl Drop for Node {
    /// Iteratively: the derived drop recurses once per level.
    fn drop(&mut self) {
        let mut next = self.a.take();
        while let Some(mut n) = next {
            next = n.a.take();
        }
    }
}

/// `levels` maps, each `{"a": <the next>}`, the innermost `{"a": null}`.
fn nested_nodes(levels: usize) -> Vec<u8> {
    let mut b = Vec::with_capacity(levels * 3 + 1);
    for _ in 0..levels {
        b.extend_from_slice(&[0xa1, 0x61, b'a']);
    }
    b.push(0xf6);
    b
}

#[test]
fn a_recursive_struct_nests_as_deep_as_a_value() {
    on_small_stack(|| {
        let opts = conneg_cbor::DecodeOptions::new();
        let lifted = opts.max_depth(usize::MAX);
        type Decoding = fn(&conneg_cbor::DecodeOptions, &[u8]) -> conneg_cbor::Result<Node>;
        let decoders: [Decoding; 2] = [|o, b| o.from_slice(b), |o, b| o.decode(b)];
        for decode in decoders {
            assert_eq!(
                decode(&opts, &nested_nodes(10_000)).unwrap().depth(),
                10_000
            );
            let e = decode(&opts, &nested_nodes(10_001)).err().unwrap();
            assert_eq!(e.kind(), ErrorKind::DepthLimit);
            // With the limit lifted, a million levels go on new stack segments.
            let n = decode(&lifted, &nested_nodes(1_000_000)).unwrap();
            assert_eq!(n.depth(), 1_000_000);
        }
    });
}
