//! A request's object: its `apiVersion`/`kind` checked against the URL's, its version's
//! defaults applied, converted to the internal kind; and a patched document decoded as the
//! versioned type.

use conneg::{Codec, FieldValidation, Negotiated, Status};
use serde_json::Value;

use super::{Served, Target};

/// The body's `apiVersion`/`kind`, when given, must be the URL's.
fn check_type_meta<T: Served>(obj: &T, t: &Target) -> Result<(), Status> {
    let (api_version, kind) = obj.type_meta();
    let want = t.version.api_version();
    if !api_version.is_empty() && api_version != want {
        return Err(Status::bad_request(format!(
            "the API version in the data ({api_version}) does not match the expected API version ({want})"
        )));
    }
    if !kind.is_empty() && kind != t.resource.kind {
        return Err(Status::bad_request(format!(
            "the kind in the data ({kind}) does not match the expected kind ({})",
            t.resource.kind
        )));
    }
    Ok(())
}

/// A decoded body as the internal kind: its `apiVersion`/`kind` checked against the URL's,
/// then the version's defaults, then the conversion. Also the defaulted object as JSON, what
/// declarative validation checks: the object in the request's version, before a lossy
/// conversion can drop a value its schema rejects.
///
/// Unknown fields the type's schema drops (a custom resource's) are refused under
/// `fieldValidation=Strict` and warned about under `Warn`, as Kubernetes does.
pub(super) fn defaulted_kind<T: Served>(
    mut obj: T,
    (t, n): (&Target, &Negotiated),
    f: &T::Facts,
) -> Result<(T::K, Value), Status> {
    check_type_meta(&obj, t)?;
    let unknown: Vec<String> = obj
        .apply_defaults(f)
        .iter()
        .map(|p| format!("unknown field {}", Status::quote(p)))
        .collect();
    if !unknown.is_empty() {
        match n.field_validation() {
            FieldValidation::Strict => {
                let kind = t.resource.kind;
                return Err(Status::bad_request(format!(
                    "{kind} in version {} cannot be handled as a {kind}: strict decoding error: {}",
                    Status::quote(t.version.version()),
                    unknown.join(", ")
                )));
            }
            FieldValidation::Warn => n.warn(unknown),
            FieldValidation::Ignore => {}
        }
    }
    let versioned = to_json(&obj)?;
    Ok((obj.into_kind(f), versioned))
}

pub(super) fn to_json<V: serde::Serialize>(v: &V) -> Result<Value, Status> {
    serde_json::to_value(v).map_err(|e| Status::internal_error(format!("encoding object: {e}")))
}

/// it with the warnings that validation produced.
pub(super) fn decode_json<T: Served>(
    doc: &Value,
    n: &Negotiated,
) -> Result<(T, Vec<String>), Status> {
    let bytes = serde_json::to_vec(doc)
        .map_err(|e| Status::internal_error(format!("encoding patched object: {e}")))?;
    let decoded = Codec::Json.decode::<T>(&bytes, n.field_validation())?;
    Ok((decoded.value, decoded.warnings))
}
