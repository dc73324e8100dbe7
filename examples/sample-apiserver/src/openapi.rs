//! How the OpenAPI documents name this server and its types. The schemas themselves are the
//! types' declarations (`#[derive(JsonSchema)]` in [`crate::api`]): what the server publishes
//! is what it enforces.

use conneg_apiserver::server::openapi::OpenApiInfo;

/// How the documents name this server and its types.
pub const INFO: OpenApiInfo = OpenApiInfo {
    title: "Wardle",
    package: "io.k8s.sample-apiserver.pkg.apis.wardle",
};

#[cfg(test)]
mod tests {
    use conneg_apiserver::server::ServerOptions;
    use conneg_apiserver::server::openapi::{check_documents, document};
    use serde_json::json;

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
            let ty = &spec["properties"]["referenceType"];
            assert_eq!(ty["enum"], json!(["Fischer", "Flunder"]));
            let description = ty["description"].as_str().unwrap();
            assert!(
                description.ends_with("Possible enum values:\n - `\"Fischer\"`\n - `\"Flunder\"`"),
                "{description}"
            );
            assert!(spec.get("nullable").is_none() && ty.get("nullable").is_none());
            assert!(
                !spec["x-kubernetes-validations"]
                    .as_array()
                    .unwrap()
                    .is_empty()
            );
            let flunder =
                &doc["components"]["schemas"][&format!("{}.{}.Flunder", INFO.package, v.version())];
            assert_eq!(
                flunder["x-kubernetes-group-version-kind"][0]["kind"],
                "Flunder"
            );
            assert_eq!(
                flunder["properties"]["spec"]["allOf"][0]["$ref"],
                json!(format!("#/components/schemas/{name}"))
            );
        }
    }
}
