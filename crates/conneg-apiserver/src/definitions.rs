//! The OpenAPI definitions a versioned type publishes ([`OpenApiSchema`]): its object and
//! list schemas as Kubernetes writes them, from its declaration or written by hand with the
//! [`Definitions`] helpers. The server puts them in its documents (`server::openapi`).

use serde_json::{Map, Value, json};

use crate::declarative::{JsonSchema, describe_enum, published};
use crate::resource::{CORE_GROUP, GroupVersion, VersionedObject};

/// The package of metav1's schemas.
pub(crate) const META: &str = "io.k8s.apimachinery.pkg.apis.meta.v1";

/// The OpenAPI definitions a versioned type publishes: its object and list schemas and the
/// schemas they reference.
///
/// A type that derives [`JsonSchema`] has it: its declaration ([`crate::declarative`]) is
/// what it publishes. Types whose schemas Kubernetes publishes by hand (core `v1`'s) write
/// theirs with the `Definitions` helpers.
pub trait OpenApiSchema {
    /// Adds the type's schemas to `defs`, the definitions of the type's version.
    fn definitions(defs: &mut Definitions<'_>);
}

impl<T: JsonSchema + VersionedObject> OpenApiSchema for T {
    fn definitions(defs: &mut Definitions<'_>) {
        defs.declared::<T>();
    }
}

/// The `components/schemas` of one group-version's document, being written.
#[derive(Debug)]
pub struct Definitions<'a> {
    version: GroupVersion,
    package: &'static str,
    map: &'a mut Map<String, Value>,
}

impl<'a> Definitions<'a> {
    /// The definitions of `version`, written into `map`, types named in `package`.
    pub(crate) fn new(
        version: GroupVersion,
        package: &'static str,
        map: &'a mut Map<String, Value>,
    ) -> Self {
        Self {
            version,
            package,
            map,
        }
    }

    /// The schema name of the type `name` of this version
    /// (`io.k8s.sample-apiserver.pkg.apis.wardle.v1beta1.Flunder`).
    pub(crate) fn model(&self, name: &str) -> String {
        model(self.package, self.version, name)
    }

    /// A property that is the type `name` of this version, with `extra` fields
    /// (`description`, `default`) beside the reference.
    pub(crate) fn property(&self, name: &str, extra: Value) -> Value {
        all_of(&self.model(name), extra)
    }

    /// Adds the schema of the kind `kind`: `apiVersion`, `kind`, `metadata` and `props`,
    /// with its group-version-kind.
    pub(crate) fn object(&mut self, kind: &str, description: &str, props: Map<String, Value>) {
        let schema = object_schema(self.version, kind, description, props);
        self.insert(kind, schema);
    }

    /// Publishes a stricter rule for the names of the kind `kind` (added before) than every
    /// kind's `k8s-long-name`: `format` (`k8s-short-name` for namespaces).
    pub(crate) fn name_format(&mut self, kind: &str, format: &str) {
        let model = self.model(kind);
        if let Some(props) = self
            .map
            .get_mut(&model)
            .and_then(|s| s.pointer_mut("/properties/metadata/properties"))
        {
            props["name"] = name_rule(format);
        }
    }

    /// Adds the schema of the list kind `list_kind` of `item_kind` objects.
    pub(crate) fn list(&mut self, list_kind: &str, item_kind: &str) {
        let schema = list_schema(self.package, self.version, list_kind, item_kind);
        self.insert(list_kind, schema);
    }

    /// Copies the fields `keys` of `from`, when it has them, into the schema of the type
    /// `name` of this version (added before).
    pub(crate) fn extend(&mut self, name: &str, from: &Value, keys: &[&str]) {
        let model = self.model(name);
        if let Some(Value::Object(m)) = self.map.get_mut(&model) {
            for k in keys {
                if let Some(v) = from.get(*k) {
                    m.insert((*k).to_owned(), v.clone());
                }
            }
        }
    }

    /// Adds the schema of the type `name` of this version.
    pub(crate) fn insert(&mut self, name: &str, schema: Value) {
        let model = self.model(name);
        self.map.insert(model, schema);
    }

    /// Adds the schemas of the declared kind `T` ([`crate::declarative::published`]), its
    /// list's and those of the types it uses. `T`'s `apiVersion`, `kind` and `metadata` are
    /// published as Kubernetes publishes them, whatever `T` declares for them.
    pub(crate) fn declared<T: JsonSchema + VersionedObject>(&mut self) {
        let (package, version) = (self.package, self.version);
        let kind = T::KIND;
        let mut schemas = published::<T>(|name| model(package, version, name));
        let mut root = schemas
            .remove(&self.model(&T::schema_name()))
            .unwrap_or_default();
        let mut props = match root.get_mut("properties").map(Value::take) {
            Some(Value::Object(p)) => p,
            _ => Map::new(),
        };
        for standard in ["apiVersion", "kind", "metadata"] {
            props.remove(standard);
        }
        schemas.remove(&self.model("ObjectMeta"));
        let description = root["description"].as_str().unwrap_or_default().to_owned();
        let mut object = object_schema(version, kind, &description, props);
        for extra in ["x-kubernetes-validations", "required"] {
            if let Some(v) = root.get_mut(extra).map(Value::take) {
                object[extra] = v;
            }
        }
        self.map.extend(schemas);
        self.insert(kind, object);
        self.list(T::RESOURCE.list_kind, kind);
    }
}

/// The schema of a string enum (enum KEP): `enum` with the values, sorted, and the
/// description followed by "Possible enum values", as Kubernetes publishes one.
pub(crate) fn enum_schema(description: &str, values: &[&str]) -> Value {
    let mut schema = json!({"type": "string", "description": description, "enum": values});
    if let Value::Object(m) = &mut schema {
        describe_enum(m);
    }
    schema
}

pub(crate) fn r(name: &str) -> Value {
    json!({"$ref": format!("#/components/schemas/{name}")})
}

pub(crate) fn all_of(name: &str, extra: Value) -> Value {
    let mut v = json!({"allOf": [r(name)]});
    if let (Value::Object(m), Value::Object(e)) = (&mut v, extra) {
        m.extend(e);
    }
    v
}

pub(crate) fn gvk(v: GroupVersion, kind: &str) -> Value {
    json!([{"group": v.group(), "kind": kind, "version": v.version()}])
}

/// The schema name of a type: `<package>.<version>.<name>`, or `io.k8s.api.core.v1.<name>`
/// in the core group, as Kubernetes names them.
pub(crate) fn model(package: &str, v: GroupVersion, name: &str) -> String {
    let package = match v.group() {
        CORE_GROUP => "io.k8s.api.core",
        _ => package,
    };
    format!("{package}.{}.{name}", v.version())
}

/// The rule of a kind's `metadata.name`, published on its object schema so that a client can
/// check a name before sending: a `k8s-long-name` (a DNS-1123 subdomain of at most 253
/// characters, what the registry checks of every kind:
/// [`crate::validation::validate_object_meta`]). Kubernetes publishes no name rule; this is
/// how a custom resource definition would restrict it (a root schema may restrict
/// `metadata.name`).
fn name_rule(format: &str) -> Value {
    json!({"type": "string", "format": format,
           "description": "Name must be unique within a namespace. Is required when creating resources, although some resources may allow a client to request the generation of an appropriate name automatically. Cannot be updated."})
}

/// A kind's object schema: apiVersion, kind, metadata (with the [`name_rule`]) and `props`.
pub(crate) fn object_schema(
    v: GroupVersion,
    kind: &str,
    desc: &str,
    mut props: Map<String, Value>,
) -> Value {
    let mut p = Map::new();
    p.insert("apiVersion".into(), json!({"type": "string", "description": "APIVersion defines the versioned schema of this representation of an object. Servers should convert recognized schemas to the latest internal value, and may reject unrecognized values. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#resources"}));
    p.insert("kind".into(), json!({"type": "string", "description": "Kind is a string value representing the REST resource this object represents. Servers may infer this from the endpoint the client submits requests to. Cannot be updated. In CamelCase. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#types-kinds"}));
    p.insert(
        "metadata".into(),
        all_of(
            &format!("{META}.ObjectMeta"),
            json!({"default": {}, "description": "Standard object's metadata.",
                   "properties": {"name": name_rule("k8s-long-name")}}),
        ),
    );
    p.append(&mut props);
    json!({"type": "object", "description": desc, "properties": p, "x-kubernetes-group-version-kind": gvk(v, kind)})
}

/// A list kind's schema.
pub(crate) fn list_schema(package: &str, v: GroupVersion, kind: &str, item: &str) -> Value {
    json!({
        "type": "object",
        "description": format!("{kind} is a list of {item} objects."),
        "required": ["items"],
        "properties": {
            "apiVersion": {"type": "string", "description": "APIVersion defines the versioned schema of this representation of an object."},
            "kind": {"type": "string", "description": "Kind is a string value representing the REST resource this object represents."},
            "metadata": all_of(&format!("{META}.ListMeta"), json!({"default": {}})),
            "items": {"type": "array", "items": all_of(&model(package, v, item), json!({"default": {}}))},
        },
        "x-kubernetes-group-version-kind": gvk(v, kind),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn enums_are_sorted_and_described() {
        let s = enum_schema("The kind.", &["b", "a"]);
        assert_eq!(s["enum"], json!(["a", "b"]));
        assert_eq!(
            s["description"],
            "The kind.\n\nPossible enum values:\n - `\"a\"`\n - `\"b\"`"
        );
    }
}
