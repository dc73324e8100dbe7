//! The OpenAPI schemas of the wardle types. They publish the `referenceType` enum (enum KEP)
//! and the Flunder validation rules as `x-kubernetes-validations` (CEL, as the
//! declarative-validation KEP publishes them; the server enforces them on create, in
//! [`crate::api::validation`]).

use serde_json::{Map, Value, json};

use crate::api::{ReferenceType, v1alpha1, v1beta1};
use conneg_apiserver::server::openapi::{Definitions, OpenApiInfo, OpenApiSchema, enum_schema};

/// How the documents name this server and its types.
pub const INFO: OpenApiInfo = OpenApiInfo {
    title: "Wardle",
    package: "io.k8s.sample-apiserver.pkg.apis.wardle",
};

/// Flunder, FlunderList, its spec (`spec`) and an empty status.
fn flunder(d: &mut Definitions<'_>, spec: Value) {
    let mut props = Map::new();
    props.insert(
        "spec".into(),
        d.property("FlunderSpec", json!({"default": {}})),
    );
    props.insert(
        "status".into(),
        d.property("FlunderStatus", json!({"default": {}})),
    );
    d.object(
        "Flunder",
        "Flunder is an example type with a spec and a status. Validation runs on create.",
        props,
    );
    d.list("FlunderList", "Flunder");
    d.insert("FlunderSpec", spec);
    d.insert(
        "FlunderStatus",
        json!({"type": "object", "description": "FlunderStatus is empty."}),
    );
}

fn reference_type(description: &str) -> Value {
    enum_schema(description, &ReferenceType::KNOWN)
}

/// The CEL rule every version publishes for `referenceType`.
fn known_reference_type() -> Value {
    json!({"rule": "!has(self.referenceType) || self.referenceType in ['Flunder', 'Fischer']",
           "message": "must be Flunder or Fischer", "fieldPath": ".referenceType",
           "reason": "FieldValueInvalid"})
}

impl OpenApiSchema for v1alpha1::Flunder {
    fn definitions(d: &mut Definitions<'_>) {
        let spec = json!({
            "type": "object",
            "description": "FlunderSpec is the specification of a Flunder.",
            "properties": {
                "reference": {"type": "string", "description": "A name of another flunder or fischer, depending on the reference type."},
                "referenceType": reference_type("The reference type, defaults to \"Flunder\" if reference is set."),
            },
            "x-kubernetes-validations": [
                known_reference_type(),
                {"rule": "!has(self.referenceType) || has(self.reference)",
                 "message": "reference cannot be empty if referenceType is set", "fieldPath": ".reference",
                 "reason": "FieldValueInvalid"},
            ],
        });
        flunder(d, spec);
    }
}

impl OpenApiSchema for v1beta1::Flunder {
    fn definitions(d: &mut Definitions<'_>) {
        let spec = json!({
            "type": "object",
            "description": "FlunderSpec is the specification of a Flunder.",
            "properties": {
                "flunderReference": {"type": "string", "description": "A name of another flunder, mutually exclusive to the FischerReference."},
                "fischerReference": {"type": "string", "description": "A name of a fischer, mutually exclusive to the FlunderReference."},
                "referenceType": reference_type("The reference type."),
            },
            "x-kubernetes-validations": [
                {"rule": "!(has(self.flunderReference) && has(self.fischerReference))",
                 "message": "cannot be set with flunderReference at the same time",
                 "fieldPath": ".fischerReference", "reason": "FieldValueInvalid"},
                {"rule": "!has(self.flunderReference) || (has(self.referenceType) && self.referenceType == 'Flunder')",
                 "message": "cannot be set if referenceType is not Flunder",
                 "fieldPath": ".flunderReference", "reason": "FieldValueInvalid"},
                {"rule": "!has(self.fischerReference) || (has(self.referenceType) && self.referenceType == 'Fischer')",
                 "message": "cannot be set if referenceType is not Fischer",
                 "fieldPath": ".fischerReference", "reason": "FieldValueInvalid"},
                {"rule": "!has(self.referenceType) || self.referenceType != 'Fischer' || has(self.fischerReference)",
                 "message": "cannot be empty if referenceType is Fischer",
                 "fieldPath": ".fischerReference", "reason": "FieldValueInvalid"},
                {"rule": "!has(self.referenceType) || self.referenceType != 'Flunder' || has(self.flunderReference)",
                 "message": "cannot be empty if referenceType is Flunder",
                 "fieldPath": ".flunderReference", "reason": "FieldValueInvalid"},
                known_reference_type(),
            ],
        });
        flunder(d, spec);
    }
}

impl OpenApiSchema for v1alpha1::Fischer {
    fn definitions(d: &mut Definitions<'_>) {
        let mut props = Map::new();
        props.insert(
            "disallowedFlunders".into(),
            json!({"type": "array", "description": "DisallowedFlunders holds a list of Flunder.Names that are disallowed.",
                   "items": {"type": "string", "default": ""}, "x-kubernetes-list-type": "atomic"}),
        );
        d.object(
            "Fischer",
            "Fischer names flunders that the BanFlunder admission plugin refuses to create.",
            props,
        );
        d.list("FischerList", "Fischer");
    }
}

#[cfg(test)]
mod tests {
    use conneg_apiserver::server::ServerOptions;
    use conneg_apiserver::server::openapi::{check_documents, document};

    use super::*;
    use crate::api::{V1ALPHA1, V1BETA1};

    #[test]
    fn documents_check_out_and_publish_the_enum_and_rules() {
        let endpoints = crate::server().endpoints(ServerOptions::default());
        check_documents(INFO, &endpoints).unwrap();
        for v in [V1ALPHA1, V1BETA1] {
            let doc = document(INFO, v, &endpoints);
            let name = format!("{}.{}.FlunderSpec", INFO.package, v.version());
            let spec = &doc["components"]["schemas"][&name];
            assert_eq!(
                spec["properties"]["referenceType"]["enum"],
                json!(["Fischer", "Flunder"])
            );
            assert!(
                !spec["x-kubernetes-validations"]
                    .as_array()
                    .unwrap()
                    .is_empty()
            );
        }
    }
}
