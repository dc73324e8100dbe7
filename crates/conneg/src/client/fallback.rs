//! Which request media type to send, and which to try next after a 415.
//!
//! Every request body belongs to a *family* of interchangeable media types, in the client's
//! order of preference (CBOR first):
//!
//! | body | family |
//! |---|---|
//! | object (POST, PUT, DELETE options) | `application/cbor`, `application/json` |
//! | server-side apply | `application/apply-patch+cbor`, `application/apply-patch+yaml` |
//! | strategic merge patch | `application/strategic-merge-patch+cbor`, `application/strategic-merge-patch+json` |
//! | JSON patch, merge patch | `application/json-patch+json` / `application/merge-patch+json` only |
//!
//! With `AllowCBOR` off the CBOR members are removed. The first choice is the remembered one
//! for the (method, resource), else CBOR if both gates are on, else the JSON member.
//!
//! After a 415 the 415's `Accept-Patch` (PATCH) or `Accept` header is read:
//! * **absent or empty** (Kubernetes today): the JSON member, unless that is what failed;
//! * **present**: the family member it gives the highest non-zero `q` (ties: the family order),
//!   other than the one that failed; if it names none, there is no retry and the 415 stands.

use bytes::Bytes;
use http::header::ACCEPT;
use http::{HeaderMap, Method};
use serde::Serialize;
use serde_json::Value;

use super::Error;
use super::gates::Gates;
use crate::codec::Codec;
use crate::headers::accept::Accept;
use crate::headers::media_type::MediaRange;
use crate::negotiate::rules::ACCEPT_PATCH;
use crate::patch::PatchType;

const OBJECT: &[&str] = &["application/cbor", "application/json"];
const APPLY: &[&str] = &[
    "application/apply-patch+cbor",
    "application/apply-patch+yaml",
];
const STRATEGIC: &[&str] = &[
    "application/strategic-merge-patch+cbor",
    "application/strategic-merge-patch+json",
];
const JSON_PATCH: &[&str] = &["application/json-patch+json"];
const MERGE_PATCH: &[&str] = &["application/merge-patch+json"];

/// A request body the client layer encodes itself, so that it can encode it again in another
/// media type after a 415.
///
/// It holds a `serde_json::Value` rather than bytes or a generic `T`: the layer is one
/// non-generic `tower::Service<Request<ClientBody>>`, a `Value` re-encodes into any codec
/// without type erasure or `Clone` bounds on user types, and building it from a typed value
/// ([`ClientBody::object`]) is one `serde_json::to_value`. The cost is one intermediate tree
/// per request body, small next to a round trip.
///
/// ```
/// use conneg::PatchType;
/// use conneg::client::ClientBody;
/// use serde_json::json;
///
/// let create = ClientBody::object(&json!({"metadata": {"name": "a"}})).unwrap();
/// assert_eq!(create.family(), ["application/cbor", "application/json"]);
/// let apply = ClientBody::apply(&json!({"metadata": {"name": "a"}})).unwrap();
/// assert_eq!(apply.family(), ["application/apply-patch+cbor", "application/apply-patch+yaml"]);
/// let merge = ClientBody::Patch(PatchType::MergePatch, json!({"spec": null}));
/// assert_eq!(merge.family(), ["application/merge-patch+json"]);
/// ```
#[derive(Clone, Debug, Default, PartialEq)]
pub enum ClientBody {
    /// No body (GET, most DELETEs, watch).
    #[default]
    Empty,
    /// An object: CBOR or JSON.
    Object(Value),
    /// A patch document of this type. Either apply type means "server-side apply, in
    /// whichever of CBOR and YAML (JSON) the gates and the server allow"; either strategic
    /// merge type likewise. JSON patch and merge patch are JSON only (KEP-4222).
    Patch(PatchType, Value),
}

impl ClientBody {
    /// An object body from any serializable value.
    pub fn object<T: Serialize + ?Sized>(value: &T) -> Result<Self, Error> {
        Ok(ClientBody::Object(to_value(value)?))
    }

    /// A server-side apply body from any serializable value.
    pub fn apply<T: Serialize + ?Sized>(value: &T) -> Result<Self, Error> {
        Ok(ClientBody::Patch(PatchType::ApplyCbor, to_value(value)?))
    }

    /// The value, unless the body is empty.
    pub fn value(&self) -> Option<&Value> {
        match self {
            ClientBody::Empty => None,
            ClientBody::Object(v) | ClientBody::Patch(_, v) => Some(v),
        }
    }

    /// The interchangeable media types for this body, preferred first (empty for no body).
    pub fn family(&self) -> &'static [&'static str] {
        match self {
            ClientBody::Empty => &[],
            ClientBody::Object(_) => OBJECT,
            ClientBody::Patch(p, _) => match p {
                PatchType::ApplyCbor | PatchType::ApplyYaml => APPLY,
                PatchType::StrategicMergePatch | PatchType::StrategicMergePatchCbor => STRATEGIC,
                PatchType::JsonPatch => JSON_PATCH,
                PatchType::MergePatch => MERGE_PATCH,
            },
        }
    }
}

fn to_value<T: Serialize + ?Sized>(value: &T) -> Result<Value, Error> {
    serde_json::to_value(value).map_err(|e| Error::Encode(e.to_string()))
}

/// Whether a request media type is a CBOR one.
pub(crate) fn is_cbor(media_type: &str) -> bool {
    media_type.ends_with("/cbor") || media_type.ends_with("+cbor")
}

/// The members the gates allow.
fn allowed(family: &'static [&'static str], gates: Gates) -> impl Iterator<Item = &'static str> {
    family
        .iter()
        .copied()
        .filter(move |m| gates.accepts_cbor() || !is_cbor(m))
}

/// The first media type to send: `remembered` if the gates allow it and it is in the family,
/// else CBOR when both gates are on, else the JSON member. The flag says whether the
/// remembered type was used.
pub(crate) fn first_choice(
    family: &'static [&'static str],
    gates: Gates,
    remembered: Option<&str>,
) -> Option<(&'static str, bool)> {
    if let Some(r) = remembered
        && let Some(m) = allowed(family, gates).find(|m| m.eq_ignore_ascii_case(r))
    {
        return Some((m, true));
    }
    let choice = if gates.sends_cbor() {
        allowed(family, gates).next()
    } else {
        allowed(family, gates).find(|m| !is_cbor(m))
    };
    choice.map(|m| (m, false))
}

/// What a 415 offers: `Accept-Patch` on PATCH when present, else `Accept`. `None` when the
/// header is absent or has no valid clause.
pub(crate) fn offered(method: &Method, headers: &HeaderMap) -> Option<String> {
    let pick = |name| {
        let values: Vec<&str> = headers
            .get_all(name)
            .iter()
            .filter_map(|v| v.to_str().ok())
            .collect();
        let joined = values.join(", ");
        (!Accept::from_value(&joined).is_empty()).then_some(joined)
    };
    if method == Method::PATCH
        && let Some(v) = pick(ACCEPT_PATCH)
    {
        return Some(v);
    }
    pick(ACCEPT)
}

/// The media type to retry with after `sent` got a 415 that offered `offered` (see the module
/// documentation), or `None` for no retry.
pub(crate) fn after_415(
    family: &'static [&'static str],
    gates: Gates,
    sent: &str,
    offered: Option<&str>,
) -> Option<&'static str> {
    let candidates = allowed(family, gates).filter(|m| !m.eq_ignore_ascii_case(sent));
    match offered {
        None => candidates.filter(|m| !is_cbor(m)).last(),
        Some(header) => {
            let accept = Accept::from_value(header);
            let mut best: Option<(&'static str, u16)> = None;
            for m in candidates {
                let Some(range) = MediaRange::parse(m) else {
                    continue;
                };
                let q = accept.quality(&range).millis();
                if q > 0 && best.is_none_or(|(_, bq)| q > bq) {
                    best = Some((m, q));
                }
            }
            best.map(|(m, _)| m)
        }
    }
}

/// Encodes `value` for `media_type`: CBOR for the CBOR members, JSON for the others (JSON is
/// valid YAML, so `application/apply-patch+yaml` gets JSON).
pub(crate) fn encode(media_type: &str, value: &Value) -> Result<Bytes, Error> {
    let codec = if is_cbor(media_type) {
        Codec::Cbor
    } else {
        Codec::Json
    };
    codec
        .to_bytes(value)
        .map_err(|e| Error::Encode(e.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use http::HeaderValue;

    #[test]
    fn first_choice_follows_gates_and_memory() {
        let both = Gates::new();
        let allow = Gates::new().prefer_cbor(false);
        assert_eq!(
            first_choice(OBJECT, both, None),
            Some(("application/cbor", false))
        );
        assert_eq!(
            first_choice(OBJECT, allow, None),
            Some(("application/json", false))
        );
        assert_eq!(
            first_choice(OBJECT, Gates::json_only(), None),
            Some(("application/json", false))
        );
        assert_eq!(
            first_choice(APPLY, both, None),
            Some(("application/apply-patch+cbor", false))
        );
        assert_eq!(
            first_choice(APPLY, Gates::json_only(), None),
            Some(("application/apply-patch+yaml", false))
        );
        assert_eq!(
            first_choice(OBJECT, both, Some("application/json")),
            Some(("application/json", true))
        );
        // A remembered CBOR choice is not used when the gates forbid CBOR.
        assert_eq!(
            first_choice(OBJECT, Gates::json_only(), Some("application/cbor")),
            Some(("application/json", false))
        );
        // ... and a remembered type from another family is ignored.
        assert_eq!(
            first_choice(APPLY, both, Some("application/json")),
            Some(("application/apply-patch+cbor", false))
        );
        assert_eq!(first_choice(&[], both, None), None);
    }

    #[test]
    fn retry_choice_reads_the_415() {
        let both = Gates::new();
        // Kubernetes: no Accept on the 415 -> JSON.
        assert_eq!(
            after_415(OBJECT, both, "application/cbor", None),
            Some("application/json")
        );
        assert_eq!(
            after_415(APPLY, both, "application/apply-patch+cbor", None),
            Some("application/apply-patch+yaml")
        );
        // JSON itself failed and nothing is offered: give up.
        assert_eq!(after_415(OBJECT, both, "application/json", None), None);
        // The server names what it takes.
        assert_eq!(
            after_415(OBJECT, both, "application/json", Some("application/cbor")),
            Some("application/cbor")
        );
        assert_eq!(
            after_415(
                APPLY,
                both,
                "application/apply-patch+cbor",
                Some(
                    "application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml"
                )
            ),
            Some("application/apply-patch+yaml")
        );
        // Offered, but nothing we can produce: no retry.
        assert_eq!(
            after_415(
                OBJECT,
                both,
                "application/cbor",
                Some("application/vnd.kubernetes.protobuf")
            ),
            None
        );
        // q=0 is a refusal.
        assert_eq!(
            after_415(
                OBJECT,
                both,
                "application/cbor",
                Some("application/json;q=0, */*;q=0")
            ),
            None
        );
        // Wildcards count.
        assert_eq!(
            after_415(OBJECT, both, "application/cbor", Some("*/*")),
            Some("application/json")
        );
        // Allow off: the only CBOR offer is not taken.
        assert_eq!(
            after_415(
                OBJECT,
                Gates::json_only(),
                "application/json",
                Some("application/cbor")
            ),
            None
        );
        // JSON and merge patches have no alternative.
        assert_eq!(
            after_415(MERGE_PATCH, both, "application/merge-patch+json", None),
            None
        );
    }

    #[test]
    fn offered_prefers_accept_patch_on_patch() {
        let mut h = HeaderMap::new();
        assert_eq!(offered(&Method::POST, &h), None);
        h.insert(ACCEPT, HeaderValue::from_static("application/json"));
        h.insert(
            ACCEPT_PATCH,
            HeaderValue::from_static("application/apply-patch+yaml"),
        );
        assert_eq!(
            offered(&Method::POST, &h).as_deref(),
            Some("application/json")
        );
        assert_eq!(
            offered(&Method::PATCH, &h).as_deref(),
            Some("application/apply-patch+yaml")
        );
        h.insert(ACCEPT, HeaderValue::from_static(" "));
        assert_eq!(offered(&Method::PUT, &h), None);
    }

    #[test]
    fn encodes_cbor_and_json_members() {
        let v = serde_json::json!({"a": 1});
        assert_eq!(&encode("application/json", &v).unwrap()[..], br#"{"a":1}"#);
        assert_eq!(
            &encode("application/apply-patch+yaml", &v).unwrap()[..],
            br#"{"a":1}"#
        );
        let cbor = encode("application/apply-patch+cbor", &v).unwrap();
        assert!(conneg_cbor::recognizes(&cbor));
    }
}
