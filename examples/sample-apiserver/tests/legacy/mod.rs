//! The hand-written validation of Flunders (reference §5) the server ran before its rules were
//! declared on the versioned types, kept here as the oracle of the equivalence test: it ran on
//! the internal object after conversion, on create only.

use conneg_apiserver::validation::FieldError;
use sample_apiserver::api::{ReferenceType, internal};

/// `ValidateFlunder`: the spec rules of reference §5 (first match of 1–5, then 6).
pub(crate) fn validate_flunder(flunder: &internal::Flunder) -> Vec<FieldError> {
    validate_flunder_spec(&flunder.spec, "spec")
}

/// `ValidateFlunderSpec` at `path`.
fn validate_flunder_spec(spec: &internal::FlunderSpec, path: &str) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let flunder_path = format!("{path}.flunderReference");
    let fischer_path = format!("{path}.fischerReference");
    let ty = spec.reference_type.as_ref().filter(|t| !t.is_empty());
    let is = |want: &ReferenceType| ty == Some(want);
    let flunder = &spec.flunder_reference;
    let fischer = &spec.fischer_reference;

    if !flunder.is_empty() && !fischer.is_empty() {
        errs.push(FieldError::invalid(
            &fischer_path,
            fischer,
            "cannot be set with flunderReference at the same time",
        ));
    } else if !flunder.is_empty() && !is(&ReferenceType::Flunder) {
        errs.push(FieldError::invalid(
            &flunder_path,
            flunder,
            "cannot be set if referenceType is not Flunder",
        ));
    } else if !fischer.is_empty() && !is(&ReferenceType::Fischer) {
        errs.push(FieldError::invalid(
            &fischer_path,
            fischer,
            "cannot be set if referenceType is not Fischer",
        ));
    } else if fischer.is_empty() && is(&ReferenceType::Fischer) {
        errs.push(FieldError::invalid(
            &fischer_path,
            fischer,
            "cannot be empty if referenceType is Fischer",
        ));
    } else if flunder.is_empty() && is(&ReferenceType::Flunder) {
        errs.push(FieldError::invalid(
            &flunder_path,
            flunder,
            "cannot be empty if referenceType is Flunder",
        ));
    }

    if let Some(t) = ty.filter(|t| !t.is_known()) {
        errs.push(FieldError::invalid(
            &format!("{path}.referenceType"),
            t.as_str(),
            "must be Flunder or Fischer",
        ));
    }
    errs
}
