//! `apiextensions.k8s.io/v1`: CustomResourceDefinitions, the kinds a server serves from a
//! definition instead of compiled types. This layer holds what is checked and computed from
//! the definition alone, as Kubernetes' apiextensions-apiserver does it: the [`types`] (with their
//! v1 defaults), their `validation` (with Kubernetes' internal field paths, and the
//! naming controller's acceptance of names), the `jsonpath` of printer columns with the
//! Table cells made from it, and the structural `schema`: the rules a definition's
//! `openAPIV3Schema` must follow and what it does to custom resources (pruning unknown
//! fields, applying defaults). Value validation of custom resources (OpenAPI keywords and
//! CEL) is [`crate::declarative`]'s; serving them is `crate::customresource`'s.

pub(crate) mod jsonpath;
pub(crate) mod schema;
pub mod types;
pub(crate) mod validation;
pub(crate) mod version_order;
