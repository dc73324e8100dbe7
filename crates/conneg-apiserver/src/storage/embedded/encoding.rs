//! How the embedded store writes its records: a `log` entry (an event: kind, key, value,
//! revisions, and the previous key-value) and, in stores written before the log held every
//! live value, a `kv` value (`create_revision | mod_revision | value`, read once to migrate).

use bytes::Bytes;

use super::corrupt;
use crate::storage::{Event, EventKind, KeyValue, Result, Revision};

/// A `kv` value of the former layout.
pub(super) fn decode_kv_value(key: &str, raw: &[u8]) -> Result<KeyValue> {
    if raw.len() < 16 {
        return Err(corrupt("short kv value"));
    }
    let (c, rest) = raw.split_at(8);
    let (m, value) = rest.split_at(8);
    Ok(KeyValue {
        key: key.to_owned(),
        value: Bytes::copy_from_slice(value),
        create_revision: i64::from_le_bytes(c.try_into().map_err(|_| corrupt("revision"))?),
        mod_revision: i64::from_le_bytes(m.try_into().map_err(|_| corrupt("revision"))?),
    })
}

fn put_bytes(out: &mut Vec<u8>, b: &[u8]) {
    out.extend_from_slice(&(b.len() as u64).to_le_bytes());
    out.extend_from_slice(b);
}

fn put_kv(out: &mut Vec<u8>, kv: &KeyValue) {
    put_bytes(out, kv.key.as_bytes());
    out.extend_from_slice(&kv.create_revision.to_le_bytes());
    out.extend_from_slice(&kv.mod_revision.to_le_bytes());
    put_bytes(out, &kv.value);
}

/// A `log` entry.
pub(super) fn encode_event(ev: &Event) -> Vec<u8> {
    let mut out = Vec::with_capacity(64 + ev.kv.value.len());
    out.push(match ev.kind {
        EventKind::Added => 1,
        EventKind::Modified => 2,
        EventKind::Deleted => 3,
    });
    put_kv(&mut out, &ev.kv);
    match &ev.prev {
        Some(prev) => {
            out.push(1);
            put_kv(&mut out, prev);
        }
        None => out.push(0),
    }
    out
}

struct Reader<'a>(&'a [u8]);

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8]> {
        if self.0.len() < n {
            return Err(corrupt("truncated event"));
        }
        let (a, b) = self.0.split_at(n);
        self.0 = b;
        Ok(a)
    }
    fn u8(&mut self) -> Result<u8> {
        Ok(self.take(1)?[0])
    }
    fn i64(&mut self) -> Result<i64> {
        let b = self.take(8)?;
        Ok(i64::from_le_bytes(
            b.try_into().map_err(|_| corrupt("int"))?,
        ))
    }
    fn bytes(&mut self) -> Result<&'a [u8]> {
        let n = usize::try_from(self.i64()?).map_err(|_| corrupt("length"))?;
        self.take(n)
    }
    fn kind(&mut self) -> Result<EventKind> {
        Ok(match self.u8()? {
            1 => EventKind::Added,
            2 => EventKind::Modified,
            3 => EventKind::Deleted,
            _ => return Err(corrupt("event kind")),
        })
    }
    fn head(&mut self) -> Result<Head<'a>> {
        let kind = self.kind()?;
        let key = std::str::from_utf8(self.bytes()?).map_err(|_| corrupt("key utf-8"))?;
        let create_revision = self.i64()?;
        let mod_revision = self.i64()?;
        Ok(Head {
            kind,
            key,
            create_revision,
            mod_revision,
        })
    }
    fn kv(&mut self) -> Result<KeyValue> {
        let key = std::str::from_utf8(self.bytes()?).map_err(|_| corrupt("key utf-8"))?;
        let create_revision = self.i64()?;
        let mod_revision = self.i64()?;
        let value = Bytes::copy_from_slice(self.bytes()?);
        Ok(KeyValue {
            key: key.to_owned(),
            value,
            create_revision,
            mod_revision,
        })
    }
}

/// A `log` entry.
pub(super) fn decode_event(raw: &[u8]) -> Result<Event> {
    let mut r = Reader(raw);
    let kind = r.kind()?;
    let kv = r.kv()?;
    let prev = match r.u8()? {
        0 => None,
        1 => Some(r.kv()?),
        _ => return Err(corrupt("event prev flag")),
    };
    if !r.0.is_empty() {
        return Err(corrupt("trailing event bytes"));
    }
    Ok(Event { kind, kv, prev })
}

/// What an entry says of its key, its value left unread: what rebuilding the index and
/// compacting need.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Head<'a> {
    pub(super) kind: EventKind,
    pub(super) key: &'a str,
    pub(super) create_revision: Revision,
    pub(super) mod_revision: Revision,
}

/// The head of a `log` entry.
pub(super) fn event_head(raw: &[u8]) -> Result<Head<'_>> {
    Reader(raw).head()
}

/// The key-value a `log` entry wrote (its previous value left unread): the value of a live
/// key, whose entry the index points at. `Err` when the entry wrote no value of `key`.
pub(super) fn written_value(raw: &[u8], key: &str) -> Result<KeyValue> {
    let mut r = Reader(raw);
    if r.kind()? == EventKind::Deleted {
        return Err(corrupt("a live key points at a deletion"));
    }
    let kv = r.kv()?;
    if kv.key != key {
        return Err(corrupt("a key points at another key's entry"));
    }
    Ok(kv)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kv(k: &str, v: &'static [u8], c: Revision, m: Revision) -> KeyValue {
        KeyValue {
            key: k.into(),
            value: Bytes::from_static(v),
            create_revision: c,
            mod_revision: m,
        }
    }

    #[test]
    fn event_encoding_round_trips() {
        for ev in [
            Event {
                kind: EventKind::Added,
                kv: kv("/a", b"x", 2, 2),
                prev: None,
            },
            Event {
                kind: EventKind::Deleted,
                kv: kv("/a", b"", 2, 4),
                prev: Some(kv("/a", b"\xd9\xd9\xf7\xa0", 2, 3)),
            },
        ] {
            assert_eq!(decode_event(&encode_event(&ev)).unwrap(), ev);
        }
        assert!(decode_event(&[1, 0]).is_err());
        assert!(decode_kv_value("k", &[0; 15]).is_err());
    }

    #[test]
    fn heads_and_written_values_read_only_what_they_need() {
        let modified = Event {
            kind: EventKind::Modified,
            kv: kv("/a", b"new", 2, 5),
            prev: Some(kv("/a", b"old", 2, 3)),
        };
        let raw = encode_event(&modified);
        assert_eq!(
            event_head(&raw).unwrap(),
            Head {
                kind: EventKind::Modified,
                key: "/a",
                create_revision: 2,
                mod_revision: 5
            }
        );
        assert_eq!(written_value(&raw, "/a").unwrap(), modified.kv);
        assert!(written_value(&raw, "/b").is_err(), "another key's entry");
        let deleted = Event {
            kind: EventKind::Deleted,
            kv: kv("/a", b"", 2, 6),
            prev: Some(kv("/a", b"new", 2, 5)),
        };
        assert!(written_value(&encode_event(&deleted), "/a").is_err());
        assert!(event_head(&raw[..10]).is_err(), "truncated");
    }
}
