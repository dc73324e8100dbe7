//! The stress corpus: a `TranslationList` of 400 Kubernetes-like custom resources whose text is
//! mostly not ASCII, generated here (deterministically, from a fixed seed) rather than kept as
//! data. Its strings mix ASCII words with words from every Unicode plane (2-, 3- and 4-byte
//! UTF-8, the unassigned planes 4-13, tags and private use), with C0 and C1 control characters
//! and the awkward specials (BOM, U+FFFD, line and paragraph separators, combining marks), and
//! come in every CBOR string head size (1, 2 and 3 bytes); map keys are non-ASCII too. Its
//! integers sit near both ends of `i64` and its floats need all 64 bits (none fits an `f32`, so
//! that every peer crate can read them: some refuse `f16` into `Value`).
//!
//! `tests/stress.rs` checks that every decoder compared in the benchmark reads it exactly as
//! serde_json reads its JSON form.

use super::{Condition, ListMeta, ObjectMeta, StringMap, Translation, TranslationList};
use super::{TranslationSpec, TranslationStatus};
use serde_json::Value;
use std::collections::BTreeMap;

/// Objects in the corpus.
pub const ITEMS: usize = 400;

/// SplitMix64: small, fast, and the same on every machine.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// A number in `0..n`.
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }

    fn pick<'a, T>(&mut self, xs: &'a [T]) -> &'a T {
        &xs[self.below(xs.len() as u64) as usize]
    }
}

/// Code point ranges words are drawn from, one script (or plane) per word.
const SCRIPTS: &[(u32, u32)] = &[
    (0x00c0, 0x017f),     // Latin-1 supplement and Latin Extended-A (2 bytes)
    (0x0391, 0x03c9),     // Greek
    (0x0410, 0x044f),     // Cyrillic
    (0x05d0, 0x05ea),     // Hebrew
    (0x0621, 0x064a),     // Arabic
    (0x0905, 0x0939),     // Devanagari (3 bytes)
    (0x3041, 0x3096),     // Hiragana
    (0x4e00, 0x9fff),     // CJK
    (0xac00, 0xd7a3),     // Hangul
    (0x1f300, 0x1f64f),   // emoji (plane 1, 4 bytes)
    (0x1d400, 0x1d7ff),   // mathematical alphanumerics (plane 1)
    (0x20000, 0x2a6df),   // CJK extension B (plane 2)
    (0x30000, 0x3134a),   // CJK extension G (plane 3)
    (0x40000, 0xdffff),   // planes 4-13: unassigned, still valid scalar values
    (0xe0020, 0xe007f),   // tags (plane 14)
    (0xf0000, 0xffffd),   // private use (plane 15)
    (0x100000, 0x10fffd), // private use (plane 16)
];

/// Characters that break fast paths: C0 and C1 controls, DEL, BOM, replacement character, line
/// and paragraph separators, zero-width space, a combining accent, a noncharacter.
const SPECIALS: &[char] = &[
    '\0', '\u{1}', '\t', '\n', '\r', '\u{1b}', '\u{1f}', '\u{7f}', '\u{80}', '\u{85}', '\u{9f}',
    '\u{feff}', '\u{fffd}', '\u{2028}', '\u{2029}', '\u{200b}', '\u{301}', '\u{ffff}', '"', '\\',
];

const ASCII_WORDS: &[&str] = &[
    "cluster",
    "replica",
    "node",
    "volume",
    "config",
    "ready",
    "pending",
    "v1",
    "api",
    "west",
    "primary",
    "backup",
    "retry",
    "timeout",
    "42",
    "2026-11-28T19:00:00Z",
];

fn word(r: &mut Rng, out: &mut String) {
    match r.below(10) {
        // About a third of the words are ASCII, as in real text that is not English.
        0..=2 => {
            let w: &&str = r.pick(ASCII_WORDS);
            out.push_str(w);
        }
        _ => {
            let &(lo, hi) = r.pick(SCRIPTS);
            for _ in 0..1 + r.below(7) {
                let c = lo + r.below((hi - lo + 1) as u64) as u32;
                out.push(char::from_u32(c).expect("no surrogates in SCRIPTS"));
            }
        }
    }
}

/// `min` to `min + spread - 1` words of mixed scripts, with a special character now and then.
fn text(r: &mut Rng, min: u64, spread: u64) -> String {
    let words = min + r.below(spread);
    let mut s = String::new();
    for i in 0..words {
        if i > 0 {
            s.push(if r.below(12) == 0 {
                *r.pick(SPECIALS)
            } else {
                ' '
            });
        }
        word(r, &mut s);
    }
    s
}

/// A map key: a prefix and a non-ASCII name (`example.com/名前`, `ключ-3`).
fn key(r: &mut Rng, i: usize) -> String {
    let prefixes = ["", "i18n.example.com/", "répertoire.example/", ""];
    let mut k = String::from(*r.pick(&prefixes));
    word(r, &mut k);
    k.push('-');
    k.push_str(&i.to_string());
    k
}

/// An integer near one end of `i64`, or a small one.
fn int(r: &mut Rng) -> i64 {
    match r.below(4) {
        0 => i64::MAX - r.below(1 << 20) as i64,
        1 => i64::MIN + r.below(1 << 20) as i64,
        2 => (r.next() >> 1) as i64 * if r.below(2) == 0 { 1 } else { -1 },
        _ => r.below(1000) as i64 - 500,
    }
}

/// A finite float that needs 64 bits (not exact as an `f32`), of any magnitude.
fn float(r: &mut Rng) -> f64 {
    loop {
        let mantissa = (r.next() >> 11) as f64 / (1u64 << 53) as f64;
        let exp = r.below(600) as i32 - 300;
        let f = mantissa * 10f64.powi(exp) * if r.below(2) == 0 { 1.0 } else { -1.0 };
        if f.is_finite() && f != 0.0 && (f as f32) as f64 != f {
            return f;
        }
    }
}

/// A free-form value: scalars, and arrays and maps of them one level down.
fn value(r: &mut Rng, depth: u32) -> Value {
    match r.below(if depth > 0 { 6 } else { 8 }) {
        0 | 1 => Value::String(text(r, 1, 6)),
        2 => int(r).into(),
        3 => float(r).into(),
        4 => Value::Bool(r.below(2) == 0),
        5 => Value::Null,
        6 => Value::Array((0..r.below(6)).map(|_| value(r, depth + 1)).collect()),
        _ => Value::Object(
            (0..r.below(5))
                .map(|i| (key(r, i as usize), value(r, depth + 1)))
                .collect(),
        ),
    }
}

/// `min` to `min + spread - 1` entries of up to `words` words each.
fn string_map(r: &mut Rng, min: u64, spread: u64, words: u64) -> StringMap {
    let n = min + r.below(spread);
    (0..n as usize)
        .map(|i| (key(r, i), text(r, 1, words)))
        .collect()
}

fn item(r: &mut Rng, i: usize) -> Translation {
    let locale = *r.pick(&[
        "ja-JP", "zh-Hans", "ru-RU", "ar-EG", "hi-IN", "ko-KR", "el-GR",
    ]);
    let metadata = ObjectMeta {
        name: Some(format!("doc-{i:04}-{locale}").to_lowercase()),
        namespace: Some("i18n".into()),
        uid: Some(format!("7c1e2a4f-0b3d-4e5f-8a9b-{i:012x}")),
        resource_version: Some((9_223_372_036_854_000_000u64 + i as u64).to_string()),
        generation: Some(i64::MAX - i as i64),
        creation_timestamp: Some(format!("2026-11-28T19:{:02}:{:02}Z", i / 60 % 60, i % 60)),
        labels: Some(string_map(r, 1, 4, 2)),
        annotations: Some(string_map(r, 1, 3, 12)),
        finalizers: vec![format!("i18n.example.com/{}", text(r, 1, 1))],
        ..Default::default()
    };
    let spec = TranslationSpec {
        locale: locale.into(),
        title: text(r, 2, 8),
        // Long enough for two- and three-byte string heads.
        body: text(r, 20, 160),
        keywords: (0..r.below(8)).map(|_| text(r, 1, 1)).collect(),
        messages: string_map(r, 2, 8, 10),
        revision: int(r),
        checksum: (i64::MAX - r.below(1 << 30) as i64) as u64,
        counters: (0..1 + r.below(6)).map(|_| int(r)).collect(),
        score: float(r),
        weights: (0..r.below(6)).map(|_| float(r)).collect(),
        extra: (0..r.below(6))
            .map(|i| (key(r, i as usize), value(r, 0)))
            .collect::<BTreeMap<_, _>>(),
    };
    let status = (r.below(4) != 0).then(|| TranslationStatus {
        observed_generation: i64::MIN + i as i64,
        reviewers: (0..r.below(4)).map(|_| text(r, 2, 1)).collect(),
        conditions: (0..1 + r.below(3))
            .map(|_| Condition {
                type_: text(r, 1, 1),
                status: r.pick(&["True", "False", "Unknown"]).to_string(),
                reason: text(r, 1, 1),
                message: text(r, 3, 30),
                last_transition_time: "2026-11-28T19:00:00Z".into(),
                observed_generation: (r.below(2) == 0).then(|| int(r)),
            })
            .collect(),
    });
    Translation {
        api_version: "i18n.example.com/v1".into(),
        kind: "Translation".into(),
        metadata,
        spec,
        status,
    }
}

/// The corpus, typed.
pub fn list() -> TranslationList {
    let mut r = Rng(0x5eed_4222);
    TranslationList {
        api_version: "i18n.example.com/v1".into(),
        kind: "TranslationList".into(),
        metadata: ListMeta {
            resource_version: Some("9223372036854775807".into()),
        },
        items: (0..ITEMS).map(|i| item(&mut r, i)).collect(),
    }
}

/// The corpus as a `Value`.
pub fn value_list() -> Value {
    serde_json::to_value(list()).expect("the corpus is JSON")
}
