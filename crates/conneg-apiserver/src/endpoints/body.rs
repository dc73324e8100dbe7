//! A request's object: decoded as the versioned type (a body the type refuses explained by
//! the version's declared schema), its `apiVersion`/`kind` checked against the URL's, its
//! version's defaults applied, converted to the internal kind; and a patched document
//! decoded as the versioned type.

use std::sync::Arc;

use conneg::{Codec, DecodeErrorKind, Decoded, FieldValidation, Negotiated, Status};
use serde_json::Value;

use super::{Context, Served, StatusError, Target};
use crate::declarative::Validator;
use crate::registry;
use crate::resource::{GroupVersion, ResourceInfo};
use crate::validation::FieldErrorType;

/// What a body is decoded for: the URL's version and resource, and the version's declared
/// schema, which explains a body the type refuses ([`decode_as`]). Owned, so that a patch
/// decoded off the async workers can take it along.
#[derive(Clone)]
pub(super) struct Expected {
    version: GroupVersion,
    resource: &'static ResourceInfo,
    declared: Option<Arc<Validator>>,
}

impl Expected {
    /// What `t` expects of a body of `T` with `f`.
    pub(super) fn of<T: Served>(st: &Context, t: &Target, f: &T::Facts) -> Self {
        Self {
            version: t.version,
            resource: t.resource,
            declared: T::declaration(st, t.version, t.resource, f).cloned(),
        }
    }
}

/// The body's `apiVersion`/`kind`, when given, must be the URL's.
fn check_type_meta(
    (api_version, kind): (&str, &str),
    (version, resource): (GroupVersion, &ResourceInfo),
) -> Result<(), StatusError> {
    let want = version.api_version();
    if !api_version.is_empty() && api_version != want {
        return Err(Status::bad_request(format!(
            "the API version in the data ({api_version}) does not match the expected API version ({want})"
        )).into());
    }
    if !kind.is_empty() && kind != resource.kind {
        return Err(Status::bad_request(format!(
            "the kind in the data ({kind}) does not match the expected kind ({})",
            resource.kind
        ))
        .into());
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
) -> Result<(T::K, Value), StatusError> {
    check_type_meta(obj.type_meta(), (t.version, t.resource))?;
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
                ))
                .into());
            }
            FieldValidation::Warn => n.warn(unknown),
            FieldValidation::Ignore => {}
        }
    }
    let versioned = to_json(&obj)?;
    Ok((obj.into_kind(f), versioned))
}

/// `v` as JSON (an object its own type cannot encode is a bug in a kind: 500).
pub(super) fn to_json<V: serde::Serialize>(v: &V) -> Result<Value, Unencodable> {
    serde_json::to_value(v).map_err(Unencodable)
}

/// An object its type could not encode as JSON.
#[derive(Debug)]
pub(crate) struct Unencodable(serde_json::Error);

impl From<Unencodable> for Status {
    fn from(Unencodable(e): Unencodable) -> Status {
        Status::internal_error(format!("encoding object: {e}"))
    }
}

/// A patched document decoded as `T` under the request's field validation (see
/// [`decode_as`]), with the warnings that validation produced.
pub(super) fn decode_json<T: Served>(
    doc: &Value,
    n: &Negotiated,
    expected: &Expected,
) -> Result<(T, Vec<String>), StatusError> {
    decode_written::<T>(&written(doc)?, n, expected)
}

/// A patched document written out as JSON, to be decoded ([`decode_written`]).
pub(super) fn written(doc: &Value) -> Result<Vec<u8>, StatusError> {
    serde_json::to_vec(doc)
        .map_err(|e| Status::internal_error(format!("encoding patched object: {e}")).into())
}

/// A patched document, as [`written`], decoded as [`decode_json`] does.
pub(super) fn decode_written<T: Served>(
    bytes: &[u8],
    n: &Negotiated,
    expected: &Expected,
) -> Result<(T, Vec<String>), StatusError> {
    let decoded = decode_as::<T>(&Codec::Json, bytes, n.field_validation(), expected)?;
    Ok((decoded.value, decoded.warnings))
}

/// A create's or update's body, read with the request's codec, as `T` (see [`decode_as`]);
/// `Warn` warnings are recorded for the response.
pub(super) fn decode_body<T: Served>(
    bytes: &[u8],
    n: &Negotiated,
    expected: &Expected,
) -> Result<T, StatusError> {
    let codec = n.request_codec().unwrap_or(&Codec::Json);
    let decoded = decode_as::<T>(codec, bytes, n.field_validation(), expected)?;
    n.warn(decoded.warnings);
    Ok(decoded.value)
}

/// `bytes` decoded as `T`. A body the type refuses for its shape (a required field missing,
/// a value outside an enum) is checked against the version's `declared` schema, the engine
/// that checks every write and every custom resource: what the schema refuses is a 422
/// naming each field (`spec.sku: Required value`, `Unsupported value`), as kube-apiserver
/// answers for its own kinds. A value of the wrong type, what the schema does not explain,
/// and a body refused only for `fieldValidation=Strict` (unknown or duplicate fields, which
/// Kubernetes refuses before validating) keep the codec's 400, as Go's decoder refuses them.
fn decode_as<T: Served>(
    codec: &Codec,
    bytes: &[u8],
    fv: FieldValidation,
    expected: &Expected,
) -> Result<Decoded<T>, StatusError> {
    let e = match codec.decode::<T>(bytes, fv) {
        Ok(decoded) => return Ok(decoded),
        Err(e) => e,
    };
    let strict = e.kind() == DecodeErrorKind::Strict;
    let refused = Status::from(e);
    let Some(validator) = expected.declared.as_ref().filter(|_| !strict) else {
        return Err(refused.into());
    };
    // What is no object at all is no object of the kind: the codec's 400 says so.
    let Ok(Decoded {
        value: raw @ Value::Object(_),
        ..
    }) = codec.decode::<Value>(bytes, FieldValidation::Ignore)
    else {
        return Err(refused.into());
    };
    let text = |k: &str| raw.get(k).and_then(Value::as_str).unwrap_or_default();
    let r = expected.resource;
    check_type_meta((text("apiVersion"), text("kind")), (expected.version, r))?;
    let errs = validator.validate(&raw, None);
    // A value of the wrong type is refused by Go's decoder too, before any validation: 400
    // there as here. Only what decodes in Go (a missing field, any string for an enum) is
    // left to validation, whose 422 names each field.
    let type_error = errs
        .iter()
        .any(|e| e.error_type == FieldErrorType::TypeInvalid);
    if errs.is_empty() || type_error {
        return Err(refused.into());
    }
    let name = raw
        .pointer("/metadata/name")
        .and_then(Value::as_str)
        .unwrap_or_default();
    Err(registry::Error::invalid(r, name.to_owned(), errs).into())
}
