//! The benchmark's stress corpus (`benches/k8s/stress.rs`: non-ASCII text from every Unicode
//! plane, control characters, integers near the ends of `i64`, 64-bit floats) decodes to the
//! same thing through every decoder the benchmark compares: ours (serde path, `Value` path,
//! derived `Decode`; Kubernetes bytes and text strings) and the peers, each against serde_json's
//! decode of the corpus's JSON form. The corpus must also hold what it promises, so that the
//! benchmark measures what it says.

use conneg_cbor::EncodeOptions;
use serde_json::Value;

#[path = "../benches/k8s/mod.rs"]
mod k8s;

use k8s::{Translation, TranslationList};

fn text_cbor<T: serde::Serialize>(x: &T) -> Vec<u8> {
    EncodeOptions::deterministic()
        .self_described(false)
        .string_encoding(conneg_cbor::StringEncoding::Text)
        .to_vec(x)
        .unwrap()
}

#[test]
fn the_corpus_holds_what_it_promises() {
    let list = k8s::stress::list();
    assert_eq!(list.items.len(), k8s::stress::ITEMS);
    let json = serde_json::to_string(&list).unwrap();
    let mut planes = [0usize; 17];
    let (mut c0, mut del, mut c1, mut ascii, mut all) = (0, 0, 0, 0, 0);
    for c in json.chars() {
        planes[(c as u32 >> 16) as usize] += 1;
        c0 += usize::from((c as u32) < 0x20);
        del += usize::from(c == '\u{7f}');
        c1 += usize::from(('\u{80}'..='\u{9f}').contains(&c));
        ascii += usize::from(c.is_ascii());
        all += 1;
    }
    assert!(planes.iter().all(|&n| n > 0), "every plane: {planes:?}");
    // serde_json escapes C0 controls in its output, so count them in the strings instead.
    assert_eq!(c0, 0);
    assert!(json.contains("\\u0000") && json.contains("\\n") && json.contains("\\u001b"));
    assert!(del > 0 && c1 > 0, "DEL and C1 controls");
    assert!(ascii < all, "non-ASCII text");
    // Keys too, and integers near both ends of i64.
    let v: Value = serde_json::from_str(&json).unwrap();
    let labels = v["items"][0]["metadata"]["labels"].as_object().unwrap();
    assert!(labels.keys().any(|k| !k.is_ascii()), "{labels:?}");
    let ints: Vec<i64> = list
        .items
        .iter()
        .flat_map(|t| t.spec.counters.clone())
        .collect();
    assert!(ints.iter().any(|&i| i > i64::MAX - (1 << 20)));
    assert!(ints.iter().any(|&i| i < i64::MIN + (1 << 20)));
    // Every float needs 64 bits, and strings come with 1-, 2- and 3-byte heads.
    for t in &list.items {
        for f in t.spec.weights.iter().chain([&t.spec.score]) {
            assert_ne!((*f as f32) as f64, *f);
        }
    }
    let lens: Vec<usize> = list.items.iter().map(|t| t.spec.body.len()).collect();
    assert!(lens.iter().any(|&n| n < 24) || list.items.iter().any(|t| t.spec.locale.len() < 24));
    assert!(lens.iter().any(|&n| (24..256).contains(&n)));
    assert!(lens.iter().any(|&n| n >= 256));
}

#[test]
fn every_decoder_reads_the_corpus_as_serde_json_reads_its_json() {
    let list = k8s::stress::list();
    let json = serde_json::to_vec(&list).unwrap();
    let want_value: Value = serde_json::from_slice(&json).unwrap();
    let want_typed: TranslationList = serde_json::from_slice(&json).unwrap();
    assert_eq!(want_typed, list, "the typed corpus survives JSON");
    assert_eq!(want_value, serde_json::to_value(&list).unwrap());

    let cbor = conneg_cbor::to_vec(&list).unwrap();
    let text = text_cbor(&list);
    assert_eq!(
        cbor,
        conneg_cbor::to_vec(&want_value).unwrap(),
        "typed vs Value CBOR"
    );
    for (name, b) in [("kubernetes bytes", &cbor), ("text strings", &text)] {
        assert_eq!(
            conneg_cbor::value_from_slice(b).unwrap(),
            want_value,
            "{name}"
        );
        assert_eq!(
            conneg_cbor::from_slice::<Value>(b).unwrap(),
            want_value,
            "{name}"
        );
        assert_eq!(
            conneg_cbor::from_slice::<TranslationList>(b).unwrap(),
            want_typed,
            "{name}"
        );
        assert_eq!(
            conneg_cbor::decode::<TranslationList>(b).unwrap(),
            want_typed,
            "{name}"
        );
    }
    // The peers, on the bytes they can read.
    peers_read(&text, &want_value);
    peers_read(&text, &want_typed);
}

/// minicbor-serde, cbor4ii and ciborium each decode `text` to `want`.
fn peers_read<T: serde::de::DeserializeOwned + PartialEq + std::fmt::Debug>(text: &[u8], want: &T) {
    assert_eq!(
        &minicbor_serde::from_slice::<T>(text).unwrap(),
        want,
        "minicbor-serde"
    );
    assert_eq!(
        &cbor4ii::serde::from_slice::<T>(text).unwrap(),
        want,
        "cbor4ii"
    );
    assert_eq!(
        &ciborium::from_reader::<T, _>(text).unwrap(),
        want,
        "ciborium"
    );
}

/// Item by item, so that a difference names the object it is in.
#[test]
fn each_object_decodes_alone() {
    for (i, t) in k8s::stress::list().items.iter().enumerate() {
        let json = serde_json::to_vec(t).unwrap();
        let want: Value = serde_json::from_slice(&json).unwrap();
        let cbor = conneg_cbor::to_vec(t).unwrap();
        assert_eq!(
            conneg_cbor::value_from_slice(&cbor).unwrap(),
            want,
            "item {i}"
        );
        assert_eq!(
            conneg_cbor::from_slice::<Translation>(&cbor).unwrap(),
            *t,
            "item {i}"
        );
    }
}

/// The profile still refuses invalid UTF-8 inside the corpus's non-ASCII strings: in strings of
/// one object (a key, a value of a typed field, a free-form value; short and long), each byte of
/// a multi-byte character replaced by `A` (an orphaned continuation byte, or a lead byte without
/// its continuation) is an `InvalidUtf8` error through every path.
#[test]
fn broken_utf8_in_the_corpus_is_refused() {
    let t = &k8s::stress::list().items[3];
    let strings: Vec<&str> = [t.spec.title.as_str(), t.spec.body.as_str()]
        .into_iter()
        .chain(
            t.spec
                .messages
                .iter()
                .flat_map(|(k, v)| [k.as_str(), v.as_str()]),
        )
        .chain(t.spec.extra.keys().map(String::as_str))
        .filter(|s| !s.is_ascii())
        .collect();
    assert!(strings.len() >= 4, "{strings:?}");
    for cbor in [conneg_cbor::to_vec(t).unwrap(), text_cbor(t)] {
        for s in &strings {
            let at = cbor
                .windows(s.len())
                .position(|w| w == s.as_bytes())
                .expect("the string is in the encoding");
            let multi = (0..s.len()).filter(|&j| s.as_bytes()[j] >= 0x80).take(48);
            for j in multi {
                let mut b = cbor.clone();
                b[at + j] = b'A';
                let kinds = [
                    conneg_cbor::value_from_slice(&b).map(drop),
                    conneg_cbor::from_slice::<Value>(&b).map(drop),
                    conneg_cbor::from_slice::<Translation>(&b).map(drop),
                    conneg_cbor::decode::<Translation>(&b).map(drop),
                ]
                .map(|r| r.map_err(|e| e.kind()));
                assert!(
                    kinds
                        .iter()
                        .all(|k| *k == Err(conneg_cbor::ErrorKind::InvalidUtf8)),
                    "{s:?} byte {j}: {kinds:?}"
                );
            }
        }
    }
}

/// Strings validated together (a valid stretch of text spanning several strings and the heads
/// between them): every sequence of three strings, valid or not, ASCII or not, short or long,
/// with text and byte string heads, in an array and as map keys and values, decodes as when
/// each string is validated alone.
#[test]
fn strings_validated_together_answer_as_alone() {
    let long = "日本語 \u{1F600} текст ".repeat(6);
    let pool: [&[u8]; 11] = [
        b"a",
        b"plain ascii",
        "é".as_bytes(),
        "日本".as_bytes(),
        "ab\u{1F600}".as_bytes(),
        long.as_bytes(),
        b"\xc3",
        b"\xe3\x81",
        b"\x80",
        b"ok\xff",
        b"\xe6\x97\xa5\xe6",
    ];
    let head = |out: &mut Vec<u8>, major: u8, n: usize| {
        if n < 24 {
            out.push(major << 5 | n as u8);
        } else {
            out.extend_from_slice(&[major << 5 | 24, n as u8]);
        }
    };
    for a in 0..pool.len() {
        for b in 0..pool.len() {
            for c in 0..pool.len() {
                let items = [pool[a], pool[b], pool[c]];
                let valid = items.iter().all(|s| std::str::from_utf8(s).is_ok());
                for major in [2u8, 3] {
                    let mut arr = vec![0x83];
                    for s in items {
                        head(&mut arr, major, s.len());
                        arr.extend_from_slice(s);
                    }
                    let kinds = |b: &[u8]| {
                        [
                            conneg_cbor::value_from_slice(b).map(drop),
                            conneg_cbor::from_slice::<Value>(b).map(drop),
                            conneg_cbor::from_slice::<Vec<String>>(b).map(drop),
                            conneg_cbor::decode::<Vec<String>>(b).map(drop),
                        ]
                        .map(|r| r.map_err(|e| e.kind()))
                    };
                    let want = if valid {
                        Ok(())
                    } else {
                        Err(conneg_cbor::ErrorKind::InvalidUtf8)
                    };
                    assert!(
                        kinds(&arr).iter().all(|k| *k == want),
                        "{arr:02x?}: {:?}",
                        kinds(&arr)
                    );
                    if valid {
                        let want: Vec<String> = items
                            .iter()
                            .map(|s| std::str::from_utf8(s).unwrap().into())
                            .collect();
                        assert_eq!(conneg_cbor::from_slice::<Vec<String>>(&arr).unwrap(), want);
                        assert_eq!(
                            conneg_cbor::value_from_slice(&arr).unwrap(),
                            serde_json::json!(want)
                        );
                    }
                    // A map: the first string a key, then a value, then the last as a key of a
                    // second entry whose value is the integer 1.
                    let mut map = vec![0xa2];
                    for s in items {
                        head(&mut map, major, s.len());
                        map.extend_from_slice(s);
                    }
                    map.push(0x01);
                    let distinct = items[0] != items[2];
                    let got = [
                        conneg_cbor::value_from_slice(&map).map(drop),
                        conneg_cbor::from_slice::<Value>(&map).map(drop),
                        conneg_cbor::from_slice::<std::collections::BTreeMap<String, Value>>(&map)
                            .map(drop),
                    ]
                    .map(|r| r.map_err(|e| e.kind()));
                    let want = if !valid {
                        Err(conneg_cbor::ErrorKind::InvalidUtf8)
                    } else if !distinct {
                        Err(conneg_cbor::ErrorKind::DuplicateKey)
                    } else {
                        Ok(())
                    };
                    // Which error comes first when a key repeats and a later string is broken
                    // is the decoder's order; the invalid cases only need to fail.
                    if valid || distinct {
                        assert!(got.iter().all(|k| *k == want), "{map:02x?}: {got:?}");
                    } else {
                        assert!(got.iter().all(Result::is_err), "{map:02x?}: {got:?}");
                    }
                }
            }
        }
    }
}
