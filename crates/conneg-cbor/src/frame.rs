//! Where one CBOR item ends, for bytes that arrive in pieces: a walk over heads and lengths only
//! that stops where the bytes run out and carries on from there when more arrive, so an item
//! received in k chunks is walked once, not k times. [`SeqDecoder`](crate::SeqDecoder) decodes
//! (and validates) an item only once this walk has found its end.
//!
//! The walk knows nothing of the profile and little of well-formedness: whatever it does not
//! expect (a reserved head, a misplaced break, a chunk of the wrong type, limits exceeded) makes
//! it give up, and the caller falls back to the full scanner, which says exactly what is wrong.

use crate::head::{
    MAJOR_ARRAY, MAJOR_BYTES, MAJOR_MAP, MAJOR_SIMPLE, MAJOR_TAG, MAJOR_TEXT, read_head,
};
use crate::options::DecodeOptions;

/// What the walk found so far.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Framed {
    /// The item is complete and this many bytes long.
    Complete(usize),
    /// The bytes stop inside the item.
    Incomplete,
    /// Something the walk does not handle: ask the full scanner.
    GiveUp,
}

/// A container the walk is inside of.
#[derive(Clone, Copy, Debug)]
enum Open {
    /// Items still expected (a map's keys and values both count).
    Items(u64),
    /// An indefinite-length array or map: items until a break.
    UntilBreak,
    /// An indefinite-length string of this major type: chunks of it until a break.
    Chunks(u8),
}

/// The walk's state between pieces of one item.
#[derive(Default)]
pub(crate) struct Framer {
    /// Offset of the next head, from the item's first byte.
    pos: usize,
    open: Vec<Open>,
}

impl Framer {
    /// Forgets the item walked so far (call it when the caller moves to the next item).
    pub(crate) fn reset(&mut self) {
        self.pos = 0;
        self.open.clear();
    }

    /// Walks on over `item`, all bytes of the item received so far starting at its first byte
    /// (the same first byte on every call until [`reset`](Self::reset)).
    pub(crate) fn advance(&mut self, item: &[u8], opts: &DecodeOptions) -> Framed {
        loop {
            let mut p = self.pos;
            let h = match read_head(item, &mut p) {
                Ok(h) => h,
                Err(e) if e.is_eof() => return Framed::Incomplete,
                Err(_) => return Framed::GiveUp,
            };
            if let Some(Open::Chunks(major)) = self.open.last() {
                let chunk = h.major == *major && !h.indefinite();
                let brk = h.major == MAJOR_SIMPLE && h.indefinite();
                if !chunk && !brk {
                    return Framed::GiveUp;
                }
            }
            let done = match (h.major, h.indefinite()) {
                (MAJOR_BYTES | MAJOR_TEXT, false) => {
                    if h.arg > (item.len() - p) as u64 {
                        // Re-read the head when more bytes arrive: cheaper than remembering it.
                        return Framed::Incomplete;
                    }
                    p += h.arg as usize;
                    true
                }
                (MAJOR_BYTES | MAJOR_TEXT, true) => {
                    self.open.push(Open::Chunks(h.major));
                    false
                }
                (MAJOR_ARRAY | MAJOR_MAP, true) => {
                    self.open.push(Open::UntilBreak);
                    false
                }
                (MAJOR_ARRAY, false) if h.arg > opts.max_array_len => return Framed::GiveUp,
                (MAJOR_MAP, false) if h.arg > opts.max_map_pairs => return Framed::GiveUp,
                (MAJOR_ARRAY | MAJOR_MAP, false) => {
                    let items = match h.major {
                        MAJOR_MAP => h.arg.saturating_mul(2),
                        _ => h.arg,
                    };
                    if items > 0 {
                        self.open.push(Open::Items(items));
                    }
                    items == 0
                }
                // A tag's item is its content, the next head.
                (MAJOR_TAG, _) => false,
                // A break (0xff) ends the innermost indefinite-length container.
                (MAJOR_SIMPLE, true) => match self.open.pop() {
                    Some(Open::UntilBreak | Open::Chunks(_)) => true,
                    _ => return Framed::GiveUp,
                },
                _ => true,
            };
            if self.open.len() > opts.max_depth {
                return Framed::GiveUp;
            }
            self.pos = p;
            if done && self.item_done() {
                return Framed::Complete(self.pos);
            }
        }
    }

    /// One item finished at the current level: counts it, closing every container it
    /// completes. True when the whole (outermost) item is complete.
    fn item_done(&mut self) -> bool {
        loop {
            match self.open.last_mut() {
                None => return true,
                Some(Open::Items(n)) => {
                    *n -= 1;
                    if *n > 0 {
                        return false;
                    }
                    self.open.pop();
                }
                Some(Open::UntilBreak | Open::Chunks(_)) => return false,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn unhex(s: &str) -> Vec<u8> {
        let s: String = s.chars().filter(|c| !c.is_whitespace()).collect();
        (0..s.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
            .collect()
    }

    /// Feeds `item` one byte at a time: incomplete until the last byte, then complete.
    fn byte_by_byte(hex: &str) -> Framed {
        let item = unhex(hex);
        let mut f = Framer::default();
        let opts = DecodeOptions::default();
        for n in 0..item.len() {
            match f.advance(&item[..n], &opts) {
                Framed::Incomplete => {}
                other => return other,
            }
        }
        f.advance(&item, &opts)
    }

    #[test]
    fn finds_the_end_of_every_kind_of_item() {
        for hex in [
            "00",
            "1b 0000000000000001",
            "f9 3c00",
            "f6",
            "43 010203",
            "62 6869",
            "5f 41 01 42 0203 ff",
            "7f 61 61 ff",
            "80",
            "a0",
            "83 01 82 02 03 a1 61 61 f5",
            "9f 01 bf 61 61 9f ff ff ff",
            "d9d9f7 a2 41 61 01 41 62 c1 1a 00000001",
            "c0 74 323031332d30332d32315432303a30343a30305a",
        ] {
            let len = unhex(hex).len();
            assert_eq!(byte_by_byte(hex), Framed::Complete(len), "{hex}");
        }
    }

    #[test]
    fn stops_at_the_end_of_the_first_item() {
        let mut f = Framer::default();
        let opts = DecodeOptions::default();
        assert_eq!(
            f.advance(&unhex("82 01 02 03 04"), &opts),
            Framed::Complete(3)
        );
    }

    #[test]
    fn gives_up_on_what_the_full_scanner_must_judge() {
        for hex in [
            "1c",          // reserved additional information
            "ff",          // a break outside any indefinite container
            "81 ff",       // a break inside a definite array
            "5f 61 61 ff", // a text chunk inside an indefinite byte string
            "5f 5f ff ff", // an indefinite chunk inside an indefinite string
            "1f",          // an indefinite unsigned integer
        ] {
            assert_eq!(byte_by_byte(hex), Framed::GiveUp, "{hex}");
        }
    }

    #[test]
    fn gives_up_past_the_limits() {
        let opts = DecodeOptions::default().max_depth(2).max_array_len(3);
        let mut f = Framer::default();
        assert_eq!(f.advance(&unhex("84 01 02 03 04"), &opts), Framed::GiveUp);
        f.reset();
        assert_eq!(
            f.advance(&unhex("81 81 81 01"), &opts),
            Framed::GiveUp,
            "three levels with a limit of two"
        );
        f.reset();
        assert_eq!(f.advance(&unhex("81 81 01"), &opts), Framed::Complete(3));
    }
}
