//! One served version of a custom resource definition ([`CustomVersion`]): what the generic
//! endpoints need to serve [`CustomResource`] objects in it, taken from the definition at
//! run time where a compiled kind has constants.

use std::sync::Arc;

use conneg::PatchType;
use futures_util::future::BoxFuture;
use serde_json::{Map, Value, json};

use super::CustomResource;
use crate::apiextensions::jsonpath::{JsonPath, cell, default_column_description};
use crate::apiextensions::schema::{Structural, apply_defaults, prune};
use crate::apply::schema::Schema;
use crate::declarative::Validator;
use crate::endpoints::{Context, ScalePaths, Sealed, Served, age};
use crate::meta::{ListMeta, Time};
use crate::resource::{GroupVersion, List, ResourceInfo};

/// A printer column (`additionalPrinterColumns[i]`), its path parsed.
#[derive(Debug, Clone)]
pub(crate) struct PrinterColumn {
    /// The column definition as a Table publishes it.
    pub(crate) definition: Value,
    /// The column's type (`string`, `integer`, `number`, `boolean`, `date`).
    pub(crate) ty: String,
    /// Where the value is.
    pub(crate) path: JsonPath,
}

impl PrinterColumn {
    /// The column `name` of type `ty` (with `format`, `description`, `priority`) at `path`.
    pub(crate) fn new(
        (name, ty, format): (&str, &str, &str),
        description: &str,
        priority: i32,
        path: JsonPath,
        json_path: &str,
    ) -> Self {
        let description = if description.is_empty() {
            default_column_description(json_path)
        } else {
            description.to_owned()
        };
        Self {
            definition: json!({
                "name": name, "type": ty, "format": format,
                "description": description, "priority": priority,
            }),
            ty: ty.to_owned(),
            path,
        }
    }

    /// The Age column a definition without columns gets.
    pub(crate) fn age() -> Self {
        let path = ".metadata.creationTimestamp";
        let parsed = JsonPath::parse(path).expect("a constant path parses");
        Self::new(("Age", "date", ""), "", 0, parsed, path)
    }
}

/// One served version of a custom resource: its resource and version, the storage version
/// objects are written in, the schemas that prune and default them, the declaration that
/// validates them, the printer columns.
#[derive(Debug)]
pub(crate) struct CustomVersion {
    /// The resource (its names as accepted).
    pub(crate) resource: &'static ResourceInfo,
    /// This version.
    pub(crate) version: GroupVersion,
    /// The storage version.
    pub(crate) storage: GroupVersion,
    /// This version's structural schema (`None`: no schema, nothing pruned).
    pub(crate) schema: Option<Structural>,
    /// The storage version's structural schema.
    pub(crate) storage_schema: Option<Structural>,
    /// This version's compiled declaration (value validations, CEL rules).
    pub(crate) validator: Option<Arc<Validator>>,
    /// Table columns after Name.
    pub(crate) columns: Vec<PrinterColumn>,
    /// Turns `true` when the definition no longer serves this version as it is.
    pub(crate) retired: tokio::sync::watch::Receiver<bool>,
    /// Where the `scale` subresource finds the replicas, when there is one.
    pub(crate) scale: Option<ScalePaths>,
    /// The warning of a deprecated version.
    pub(crate) warning: Option<String>,
    /// Whether the definition is being deleted (creates are refused).
    pub(crate) terminating: bool,
    /// This version's generation among every version served in this process
    /// ([`Served::forms`]): objects' encoded responses made under other facts are not reused.
    pub(crate) forms: u64,
}

/// A generation no [`CustomVersion`] of this process had ([`CustomVersion::forms`]).
pub(super) fn next_forms() -> u64 {
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
    NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
}

/// The facts of one served custom resource version.
pub(super) type Facts = Arc<CustomVersion>;

/// Prunes the top-level fields of `cr` to `schema` and applies its defaults; the paths of
/// the unknown fields dropped.
fn coerce(cr: &mut CustomResource, schema: Option<&Structural>) -> Vec<String> {
    let Some(schema) = schema else {
        return Vec::new();
    };
    let mut v = Value::Object(std::mem::take(&mut cr.fields));
    let unknown = prune(&mut v, schema, true);
    apply_defaults(&mut v, schema);
    if let Value::Object(m) = v {
        cr.fields = m;
    }
    unknown
}

impl Sealed for CustomResource {}

impl Served for CustomResource {
    type K = CustomResource;
    type Facts = Facts;
    type List = List<CustomResource>;
    const PATCH_TYPES: &'static [PatchType] = PatchType::custom_resource();

    /// To the storage version (conversion `None`: only `apiVersion` changes), pruned to its
    /// schema.
    fn into_kind(mut self, f: &Facts) -> CustomResource {
        self.set_type_meta(f.storage.api_version(), f.resource.kind);
        coerce(&mut self, f.storage_schema.as_ref());
        self
    }
    /// To this version, pruned to its schema and defaulted (Kubernetes' read path: defaults
    /// show before they are stored).
    fn forms(f: &Facts) -> u64 {
        f.forms
    }
    fn from_kind(mut k: CustomResource, f: &Facts) -> Self {
        k.set_type_meta(f.version.api_version(), f.resource.kind);
        coerce(&mut k, f.schema.as_ref());
        k
    }
    fn apply_defaults(&mut self, f: &Facts) -> Vec<String> {
        coerce(self, f.schema.as_ref())
    }
    fn type_meta(&self) -> (&str, &str) {
        (self.api_version(), self.kind())
    }
    fn list(metadata: ListMeta, items: Vec<Self>, f: &Facts) -> List<CustomResource> {
        List {
            kind: f.resource.list_kind.to_owned(),
            api_version: f.version.api_version().to_owned(),
            metadata,
            items,
        }
    }
    fn declaration<'a>(
        _st: &'a Context,
        _version: GroupVersion,
        _resource: &ResourceInfo,
        f: &'a Facts,
    ) -> Option<&'a Arc<Validator>> {
        f.validator.as_ref()
    }
    fn columns(f: &Facts) -> Vec<Value> {
        f.columns.iter().map(|c| c.definition.clone()).collect()
    }
    fn cells(k: &CustomResource, f: &Facts, now: Time) -> Vec<Value> {
        let Ok(obj) = k.to_json() else {
            return vec![Value::Null; f.columns.len()];
        };
        f.columns
            .iter()
            .map(|c| {
                let v = cell(&c.ty, c.path.first(&obj));
                match (c.ty.as_str(), &v) {
                    ("date", Value::String(s)) => Value::String(match Time::parse_rfc3339(s) {
                        Some(t) => age(Some(t), now),
                        None => "<invalid>".into(),
                    }),
                    _ => v,
                }
            })
            .collect()
    }
    fn retired(f: &Facts) -> BoxFuture<'static, ()> {
        let mut retired = f.retired.clone();
        Box::pin(async move {
            // A dropped sender (the controller gone) retires it too.
            let _ = retired.wait_for(|r| *r).await;
        })
    }
    fn same_spec(a: &CustomResource, b: &CustomResource, f: &Facts) -> bool {
        a.same_spec(b, f.resource.status_subresource)
    }
    fn warning(f: &Facts) -> Option<&str> {
        f.warning.as_deref()
    }
    fn terminating(f: &Facts) -> bool {
        f.terminating
    }
    fn scale(f: &Facts) -> Option<&ScalePaths> {
        f.scale.as_ref()
    }
    fn apply_schema(_f: &Facts) -> Schema {
        Schema::OBJECT
    }
    /// Conversion `None`: the same object with its `apiVersion` rewritten.
    fn convert(obj: &Value, _from: &str, to: &str) -> Option<Value> {
        let mut out: Map<String, Value> = obj.as_object()?.clone();
        out.insert("apiVersion".into(), Value::String(to.to_owned()));
        Some(Value::Object(out))
    }
}
