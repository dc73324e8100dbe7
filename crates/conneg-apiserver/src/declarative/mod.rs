//! Declarative validation (KEP-4153): the rules of an API are declared once, on its versioned
//! Rust types, and that one declaration is the published OpenAPI schema, the server's
//! validation and the list semantics of server-side apply.
//!
//! A versioned type derives [`JsonSchema`] (schemars) and states its rules with schemars'
//! attributes, which read like the KEP's markers:
//!
//! | rule | attribute |
//! |---|---|
//! | length of a string | `#[schemars(length(min = 1, max = 63))]` |
//! | items of a list | `#[schemars(length(min = 1, max = 16))]` on the list |
//! | properties of a map | `#[schemars(extend("minProperties" = 1, "maxProperties" = 16))]` |
//! | minimum / maximum | `#[schemars(range(min = 0, max = 10))]`, `extend("exclusiveMinimum" = true)` |
//! | format | `#[schemars(extend("format" = "dns1123label"))]` (also `dns1123subdomain`, `dns1035label`, `k8s-short-name`, `k8s-long-name`, `uuid`) |
//! | pattern | `#[schemars(regex(pattern = r"^[a-z]+$"))]` |
//! | required | a field without `#[serde(default)]` (schemars marks it required; a body without it is a 422 `Required value`, not serde's 400) |
//! | enum | the type's schema lists its values (`enum`); the published description gets the enum KEP's "Possible enum values" |
//! | list type | `#[schemars(extend("x-kubernetes-list-type" = "map", "x-kubernetes-list-map-keys" = ["name"]))]` |
//! | CEL | `#[schemars(extend("x-kubernetes-validations" = [{"rule": "...", "message": "...", "fieldPath": ".x", "reason": "FieldValueForbidden"}]))]`, with `messageExpression` and transition rules on `oldSelf` |
//!
//! The library publishes the derived schema in `/openapi/v3` and `/openapi/v2` (see
//! [`crate::server::openapi`]) and compiles the same JSON into a [`Validator`] for each served
//! version. Every create, update and patch is validated on the versioned object of the
//! request's version, after the kind's own preparation, as kube-apiserver validates a custom
//! resource: value validations first, then the CEL rules under Kubernetes' cost limits
//! ([`cost`]), with ratcheting on update (a value unchanged from the old object is not checked
//! again, so an object stored under older rules can still be updated elsewhere). The same
//! validator runs in `conneg validate` against a server's published document, so a client
//! gets the server's answer before it sends.
//!
//! ```
//! use conneg_apiserver::declarative::{JsonSchema, Validator, published};
//! use serde::{Deserialize, Serialize};
//! use serde_json::json;
//!
//! /// A widget.
//! #[derive(Serialize, Deserialize, JsonSchema)]
//! #[serde(rename_all = "camelCase")]
//! #[schemars(extend("x-kubernetes-validations" = [
//!     {"rule": "self.minSize <= self.maxSize", "message": "minSize may not exceed maxSize"}]))]
//! struct WidgetSpec {
//!     /// The smallest size.
//!     #[schemars(range(min = 0))]
//!     min_size: i64,
//!     /// The largest size.
//!     max_size: i64,
//! }
//!
//! let schemas = published::<WidgetSpec>(|name| format!("example.v1.{name}"));
//! let root = schemas["example.v1.WidgetSpec"].clone();
//! assert_eq!(root["properties"]["minSize"]["minimum"], json!(0));
//! let v = Validator::compile(&schemas, "example.v1.WidgetSpec").unwrap();
//! let errs = v.validate(&json!({"minSize": 3, "maxSize": 2}), None);
//! assert_eq!(errs[0].to_string(), r#": Invalid value: "object": minSize may not exceed maxSize"#);
//! ```

mod budget;
pub mod cost;
mod formats;
mod list_type;
mod rule;
mod schema;
mod validator;
mod validators;

pub use list_type::ListType;
pub(crate) use schema::describe_enum;
pub use schema::published;
pub use schemars::JsonSchema;
pub use validator::{DeclarationError, Validator};
pub use validators::Validators;
