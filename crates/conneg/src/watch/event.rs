//! [`WatchEvent`] and its encoding: one event per item of the codec's stream form.

use std::fmt;

use bytes::Bytes;
use serde::de::{self, DeserializeOwned, IgnoredAny};
use serde::ser::SerializeStruct;
use serde::{Deserialize, Serialize};

use crate::cbor;
use crate::codec::{Codec, EncodeError};
use crate::profile::Profile;
use crate::status::Status;

/// The `type` of a watch event.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "UPPERCASE")]
pub enum EventType {
    /// `ADDED`: the object was created (or existed when the watch started).
    Added,
    /// `MODIFIED`: the object changed.
    Modified,
    /// `DELETED`: the object was deleted; `object` is its last state.
    Deleted,
    /// `BOOKMARK`: no change; `object` carries only the current `resourceVersion`.
    Bookmark,
    /// `ERROR`: `object` is a `Status`; the watch ends after it.
    Error,
}

impl EventType {
    /// The wire name: `ADDED`, `MODIFIED`, `DELETED`, `BOOKMARK` or `ERROR`.
    pub fn as_str(self) -> &'static str {
        match self {
            EventType::Added => "ADDED",
            EventType::Modified => "MODIFIED",
            EventType::Deleted => "DELETED",
            EventType::Bookmark => "BOOKMARK",
            EventType::Error => "ERROR",
        }
    }
}

impl fmt::Display for EventType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One watch event, `{"type": "ADDED", "object": {...}}` on the wire (Kubernetes'
/// `metav1.WatchEvent`; it has no `kind` or `apiVersion`). `ERROR` carries a [`Status`] instead
/// of a `T`.
///
/// ```
/// use conneg::watch::WatchEvent;
/// let e = WatchEvent::Added(serde_json::json!({"name": "a"}));
/// assert_eq!(serde_json::to_string(&e).unwrap(), r#"{"type":"ADDED","object":{"name":"a"}}"#);
/// ```
// API objects are typically as large as a `Status`; boxing it would only make `ERROR` events
// harder to build and match.
#[allow(clippy::large_enum_variant)]
#[derive(Clone, Debug, PartialEq)]
pub enum WatchEvent<T> {
    /// `ADDED`.
    Added(T),
    /// `MODIFIED`.
    Modified(T),
    /// `DELETED`.
    Deleted(T),
    /// `BOOKMARK`.
    Bookmark(T),
    /// `ERROR`, with the `Status` that explains it.
    Error(Status),
}

impl<T> WatchEvent<T> {
    /// A `type` and an object (use [`WatchEvent::Error`] for `ERROR`; `EventType::Error` with a
    /// `T` is not representable and gives `None`).
    pub fn new(kind: EventType, object: T) -> Option<Self> {
        Some(match kind {
            EventType::Added => WatchEvent::Added(object),
            EventType::Modified => WatchEvent::Modified(object),
            EventType::Deleted => WatchEvent::Deleted(object),
            EventType::Bookmark => WatchEvent::Bookmark(object),
            EventType::Error => return None,
        })
    }

    /// The event's `type`.
    pub fn event_type(&self) -> EventType {
        match self {
            WatchEvent::Added(_) => EventType::Added,
            WatchEvent::Modified(_) => EventType::Modified,
            WatchEvent::Deleted(_) => EventType::Deleted,
            WatchEvent::Bookmark(_) => EventType::Bookmark,
            WatchEvent::Error(_) => EventType::Error,
        }
    }

    /// The object, unless this is an `ERROR` event.
    pub fn object(&self) -> Option<&T> {
        match self {
            WatchEvent::Added(o)
            | WatchEvent::Modified(o)
            | WatchEvent::Deleted(o)
            | WatchEvent::Bookmark(o) => Some(o),
            WatchEvent::Error(_) => None,
        }
    }

    /// Consumes the event, returning the object unless this is an `ERROR` event.
    pub fn into_object(self) -> Option<T> {
        match self {
            WatchEvent::Added(o)
            | WatchEvent::Modified(o)
            | WatchEvent::Deleted(o)
            | WatchEvent::Bookmark(o) => Some(o),
            WatchEvent::Error(_) => None,
        }
    }

    /// Maps the object, keeping the `type` (and an `ERROR` event's `Status`).
    pub fn map<U>(self, f: impl FnOnce(T) -> U) -> WatchEvent<U> {
        match self {
            WatchEvent::Added(o) => WatchEvent::Added(f(o)),
            WatchEvent::Modified(o) => WatchEvent::Modified(f(o)),
            WatchEvent::Deleted(o) => WatchEvent::Deleted(f(o)),
            WatchEvent::Bookmark(o) => WatchEvent::Bookmark(f(o)),
            WatchEvent::Error(s) => WatchEvent::Error(s),
        }
    }
}

impl<T: Serialize> Serialize for WatchEvent<T> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut s = serializer.serialize_struct("WatchEvent", 2)?;
        s.serialize_field("type", self.event_type().as_str())?;
        match self {
            WatchEvent::Error(status) => s.serialize_field("object", status)?,
            WatchEvent::Added(o)
            | WatchEvent::Modified(o)
            | WatchEvent::Deleted(o)
            | WatchEvent::Bookmark(o) => s.serialize_field("object", o)?,
        }
        s.end()
    }
}

/// The wire shape with a known object type; `type` and `object` may come in either order.
#[derive(Deserialize)]
struct Wire<O> {
    #[serde(rename = "type")]
    kind: EventType,
    object: O,
}

/// Just the `type`, skipping the object.
#[derive(Deserialize)]
struct TypeOnly {
    #[serde(rename = "type")]
    kind: EventType,
    #[serde(rename = "object")]
    _object: IgnoredAny,
}

/// Decodes one complete event with `decode`: the object as a `T` first (the common case, one
/// pass), and only when that fails or the `type` is `ERROR`, the `type` alone and then the
/// object as a `Status`.
pub(crate) fn decode_event<T, E>(
    mut decode: impl FnMut(Target) -> Result<Decoded<T>, E>,
) -> Result<WatchEvent<T>, E> {
    let first = match decode(Target::Object) {
        Ok(Decoded::Object(kind, object)) => match WatchEvent::new(kind, object) {
            Some(event) => return Ok(event),
            None => None,
        },
        Ok(_) => None,
        Err(e) => Some(e),
    };
    match decode(Target::Type) {
        Ok(Decoded::Type(EventType::Error)) => match decode(Target::Status)? {
            Decoded::Status(status) => Ok(WatchEvent::Error(*status)),
            _ => unreachable!("Target::Status yields a Status"),
        },
        Ok(_) => match first {
            Some(e) => Err(e),
            None => unreachable!("a non-ERROR type decoded as an object above"),
        },
        Err(e) => Err(first.unwrap_or(e)),
    }
}

/// What [`decode_event`] asks its decoding closure for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Target {
    /// `{type, object: T}`.
    Object,
    /// `{type, object: _}`.
    Type,
    /// `{type, object: Status}`.
    Status,
}

/// What the decoding closure of [`decode_event`] produced.
pub(crate) enum Decoded<T> {
    Object(EventType, T),
    Type(EventType),
    Status(Box<Status>),
}

/// Runs `target` on a serde deserializer.
pub(crate) fn decode_with<'de, T, D>(target: Target, de: D) -> Result<Decoded<T>, D::Error>
where
    T: DeserializeOwned,
    D: serde::Deserializer<'de>,
{
    Ok(match target {
        Target::Object => {
            let w = Wire::<T>::deserialize(de)?;
            Decoded::Object(w.kind, w.object)
        }
        Target::Type => Decoded::Type(TypeOnly::deserialize(de)?.kind),
        Target::Status => Decoded::Status(Box::new(Wire::<Status>::deserialize(de)?.object)),
    })
}

impl<'de, T: DeserializeOwned> Deserialize<'de> for WatchEvent<T> {
    /// Deserializes through `serde_json::Value` (one intermediate tree): fine for tests and tools.
    /// The stream decoder (`conneg::client::WatchStream`) decodes straight from the bytes.
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let tree = serde_json::Value::deserialize(deserializer)?;
        decode_event(|target| decode_with(target, &tree)).map_err(de::Error::custom)
    }
}

/// The CBOR map head and keys of an event, up to the object, in `profile`'s form: Kubernetes'
/// `d9d9f7 a2 44"type" 4X"<TYPE>" 46"object"` (byte strings), or the standard `a2 64"type"
/// 6X"<TYPE>" 66"object"` (text strings, no tag).
fn cbor_event_head(
    profile: Profile,
    kind: EventType,
    out: &mut Vec<u8>,
) -> Result<(), EncodeError> {
    if profile == Profile::Kubernetes {
        out.extend_from_slice(&conneg_cbor::SELF_DESCRIBED_PREFIX);
    }
    out.push(0xa2);
    for key in ["type", kind.as_str(), "object"] {
        cbor::encode_nested(profile, out, key).map_err(EncodeError)?;
    }
    Ok(())
}

/// A JSON event up to its object: `{"type":"<TYPE>","object":`.
fn json_event_head(kind: EventType, out: &mut Vec<u8>) {
    out.extend_from_slice(b"{\"type\":\"");
    out.extend_from_slice(kind.as_str().as_bytes());
    out.extend_from_slice(b"\",\"object\":");
}

/// A JSON event after its object.
const JSON_EVENT_TAIL: &[u8] = b"}\n";

/// Appends one event whose object is encoded already: `document` is what
/// [`Negotiated::encode`](crate::Negotiated::encode) wrote for it in a decision of `codec`
/// and `profile`, kept from an earlier response, say. The bytes are those
/// [`encode_event_as`] writes for the object, without encoding it again: in either profile the
/// object is embedded as its document is. JSON and CBOR only: a custom codec's stream item is
/// not made of its document.
///
/// ```
/// use conneg::watch::{EventType, encode_event_as, encode_event_document};
/// use conneg::{Negotiator, Profile};
/// use http::{HeaderMap, Method, Uri};
///
/// let object = serde_json::json!({"metadata": {"name": "a"}});
/// for profile in [Profile::Kubernetes, Profile::Standard] {
///     for accept in ["application/json", "application/cbor"] {
///         let mut headers = HeaderMap::new();
///         headers.insert("accept", accept.parse().unwrap());
///         let n = Negotiator::new()
///             .profile(profile)
///             .negotiate(&Method::GET, &Uri::from_static("/x"), &headers, false)
///             .unwrap();
///         let document = n.encode(&object).unwrap();
///         let (codec, mut kept, mut fresh) = (n.response_codec(), Vec::new(), Vec::new());
///         encode_event_document(codec, profile, EventType::Added, &document, &mut kept)
///             .unwrap();
///         encode_event_as(codec, profile, EventType::Added, &object, &mut fresh).unwrap();
///         assert_eq!(kept, fresh, "{profile:?} {accept}");
///     }
/// }
/// ```
pub fn encode_event_document(
    codec: &Codec,
    profile: Profile,
    kind: EventType,
    document: &[u8],
    out: &mut Vec<u8>,
) -> Result<(), EncodeError> {
    let start = out.len();
    let result = match codec {
        Codec::Cbor => {
            cbor_event_head(profile, kind, out).map(|()| out.extend_from_slice(document))
        }
        Codec::Json => {
            json_event_head(kind, out);
            out.extend_from_slice(document);
            out.extend_from_slice(JSON_EVENT_TAIL);
            Ok(())
        }
        other => Err(EncodeError(format!(
            "{other:?} has no event form made of an object's document"
        ))),
    };
    if result.is_err() {
        out.truncate(start);
    }
    result
}

/// Appends one event in `codec`'s stream form to `out`, as [`Profile::Kubernetes`] writes it
/// (see [`encode_event_as`]).
pub fn encode_event<T: Serialize + ?Sized>(
    codec: &Codec,
    kind: EventType,
    object: &T,
    out: &mut Vec<u8>,
) -> Result<(), EncodeError> {
    encode_event_as(codec, Profile::Kubernetes, kind, object, out)
}

/// Appends one event in `codec`'s stream form, as `profile` writes it, to `out`.
///
/// * CBOR, [`Profile::Kubernetes`]: one self-described item, `d9d9f7 a2 "type" "<TYPE>"
///   "object" d9d9f7 <object>` with byte strings; the object carries its own `d9d9f7`, exactly
///   as Kubernetes writes it (the object is encoded by the non-stream serializer and embedded
///   verbatim as a `RawExtension`).
/// * CBOR, [`Profile::Standard`]: the map `{"type": "<TYPE>", "object": <object>}` with text
///   strings and no tag anywhere, one item of the CBOR Sequence (RFC 8742) per event.
/// * JSON (either profile): `{"type":"<TYPE>","object":<object>}` and a newline.
/// * A custom codec: the event as a value, through [`Codec::encode_stream_item`].
///
/// On error `out` is left as it was.
///
/// ```
/// use conneg::watch::{EventType, encode_event_as};
/// use conneg::{Codec, Profile};
///
/// let mut out = Vec::new();
/// encode_event_as(&Codec::Cbor, Profile::Standard, EventType::Added, &7, &mut out).unwrap();
/// assert_eq!(out, b"\xa2\x64type\x65ADDED\x66object\x07");
/// ```
pub fn encode_event_as<T: Serialize + ?Sized>(
    codec: &Codec,
    profile: Profile,
    kind: EventType,
    object: &T,
    out: &mut Vec<u8>,
) -> Result<(), EncodeError> {
    let start = out.len();
    let result = match codec {
        Codec::Cbor => cbor_event_head(profile, kind, out)
            .and_then(|()| Codec::Cbor.encode_as(profile, object, out)),
        Codec::Json => {
            json_event_head(kind, out);
            Codec::Json.encode(object, out).map(|()| {
                out.extend_from_slice(JSON_EVENT_TAIL);
            })
        }
        other => {
            #[derive(Serialize)]
            struct Event<'a, T: ?Sized> {
                #[serde(rename = "type")]
                kind: &'static str,
                object: &'a T,
            }
            other.encode_stream_item(
                &Event {
                    kind: kind.as_str(),
                    object,
                },
                out,
            )
        }
    };
    if result.is_err() {
        out.truncate(start);
    }
    result
}

impl<T: Serialize> WatchEvent<T> {
    /// Encodes the event in `codec`'s stream form, as [`Profile::Kubernetes`] writes it (see
    /// [`encode_event`]).
    pub fn encode(&self, codec: &Codec, out: &mut Vec<u8>) -> Result<(), EncodeError> {
        self.encode_as(codec, Profile::Kubernetes, out)
    }

    /// Encodes the event in `codec`'s stream form, as `profile` writes it (see
    /// [`encode_event_as`]). An `ERROR` event's object is its `Status` in either profile.
    pub fn encode_as(
        &self,
        codec: &Codec,
        profile: Profile,
        out: &mut Vec<u8>,
    ) -> Result<(), EncodeError> {
        match self {
            WatchEvent::Error(status) => {
                encode_event_as(codec, profile, EventType::Error, status, out)
            }
            WatchEvent::Added(o)
            | WatchEvent::Modified(o)
            | WatchEvent::Deleted(o)
            | WatchEvent::Bookmark(o) => encode_event_as(codec, profile, self.event_type(), o, out),
        }
    }

    /// Encodes the event into a fresh buffer, as [`Profile::Kubernetes`] writes it.
    pub fn to_bytes(&self, codec: &Codec) -> Result<Bytes, EncodeError> {
        self.to_bytes_as(codec, Profile::Kubernetes)
    }

    /// Encodes the event into a fresh buffer, as `profile` writes it.
    pub fn to_bytes_as(&self, codec: &Codec, profile: Profile) -> Result<Bytes, EncodeError> {
        let mut out = Vec::with_capacity(256);
        self.encode_as(codec, profile, &mut out)?;
        Ok(Bytes::from(out))
    }

    /// The event's bytes; or, if it cannot be encoded (a server bug), an `ERROR` event with a
    /// 500 `Status` that says why, after which the watch must end: for a stream of events
    /// encoded by the caller ([`WatchResponse::encoded`](super::WatchResponse::encoded)).
    ///
    /// ```
    /// use conneg::watch::WatchEvent;
    /// use conneg::{Codec, Profile};
    ///
    /// let event = WatchEvent::Added(serde_json::json!({"a": 1}));
    /// let bytes = event.to_bytes_or_error(&Codec::Json, Profile::Kubernetes).unwrap();
    /// assert_eq!(&bytes[..], b"{\"type\":\"ADDED\",\"object\":{\"a\":1}}\n");
    /// ```
    pub fn to_bytes_or_error(&self, codec: &Codec, profile: Profile) -> Result<Bytes, Bytes> {
        self.to_bytes_as(codec, profile).map_err(|err| {
            tracing::error!(%err, %codec, "watch event failed to encode");
            WatchEvent::<()>::Error(Status::internal_error(err))
                .to_bytes_as(codec, profile)
                .unwrap_or_default()
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn hex(b: &[u8]) -> String {
        b.iter().map(|b| format!("{b:02x}")).collect()
    }

    #[test]
    fn cbor_event_matches_kubernetes_bytes() {
        // §6: d9d9f7 a2 4474797065 454144444544 466f626a656374 d9d9f7 a2 446b696e64 ...
        #[derive(Serialize)]
        struct Cm {
            kind: &'static str,
            #[serde(rename = "apiVersion")]
            api_version: &'static str,
        }
        let bytes = WatchEvent::Added(Cm {
            kind: "ConfigMap",
            api_version: "v1",
        })
        .to_bytes(&Codec::Cbor)
        .unwrap();
        assert_eq!(
            hex(&bytes),
            "d9d9f7a24474797065454144444544466f626a656374d9d9f7a2446b696e6449436f6e6669674d61704a61706956657273696f6e427631"
        );
    }

    #[test]
    fn json_event_is_one_compact_line() {
        let bytes = WatchEvent::Deleted(json!({"a": [1, 2]}))
            .to_bytes(&Codec::Json)
            .unwrap();
        assert_eq!(
            &bytes[..],
            b"{\"type\":\"DELETED\",\"object\":{\"a\":[1,2]}}\n"
        );
    }

    #[test]
    fn error_event_carries_status_both_ways() {
        let status = Status::internal_error("boom");
        let e: WatchEvent<serde_json::Value> = WatchEvent::Error(status.clone());
        let text = serde_json::to_string(&e).unwrap();
        assert!(
            text.starts_with(r#"{"type":"ERROR","object":{"kind":"Status""#),
            "{text}"
        );
        let back: WatchEvent<serde_json::Value> = serde_json::from_str(&text).unwrap();
        assert_eq!(back, WatchEvent::Error(status));
    }

    #[test]
    fn deserialize_any_field_order_and_rejects_unknown_type() {
        let e: WatchEvent<u32> = serde_json::from_str(r#"{"object":7,"type":"MODIFIED"}"#).unwrap();
        assert_eq!(e, WatchEvent::Modified(7));
        assert!(
            serde_json::from_str::<WatchEvent<u32>>(r#"{"type":"CHANGED","object":7}"#).is_err()
        );
        assert!(serde_json::from_str::<WatchEvent<u32>>(r#"{"type":"ERROR","object":7}"#).is_err());
    }

    #[test]
    fn encode_error_leaves_buffer_untouched() {
        let mut out = b"keep".to_vec();
        let nan = WatchEvent::Added(f64::NAN);
        assert!(nan.encode(&Codec::Cbor, &mut out).is_err());
        assert_eq!(out, b"keep");
    }
}
