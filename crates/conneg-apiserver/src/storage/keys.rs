//! Storage keys, laid out as Kubernetes does: `<prefix>/<resource>/<namespace>/<name>` and
//! `<prefix>/<resource>/<name>`, the prefix being `/registry/<group>` by default
//! ([`Keys::for_group`]).
//!
//! Names and namespaces never contain `/` (the HTTP layer validates them as Kubernetes path
//! segment names), so a collection prefix ending in `/` selects exactly its objects.

use std::sync::Arc;

use crate::resource::ResourceInfo;

/// Builds keys under a prefix; cloned with every request's context, so the prefix is shared.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Keys {
    prefix: Arc<str>,
}

impl Keys {
    /// Kubernetes' default layout for a server of `group`: under `/registry/<group>`.
    pub fn for_group(group: &str) -> Self {
        Self::new(&format!("/registry/{group}"))
    }

    /// Keys under `prefix` (a trailing `/` is removed).
    pub fn new(prefix: &str) -> Self {
        Self {
            prefix: Arc::from(prefix.trim_end_matches('/')),
        }
    }

    /// The prefix, without a trailing `/`.
    pub fn prefix(&self) -> &str {
        &self.prefix
    }

    /// The key of one object. `namespace` is ignored for cluster-scoped resources.
    pub fn object(&self, resource: &ResourceInfo, namespace: &str, name: &str) -> String {
        if resource.namespaced {
            format!("{}/{}/{namespace}/{name}", self.prefix, resource.resource)
        } else {
            format!("{}/{}/{name}", self.prefix, resource.resource)
        }
    }

    /// The prefix of a collection, ending in `/`: one namespace, or all (`None`, or any
    /// cluster-scoped resource).
    pub fn collection(&self, resource: &ResourceInfo, namespace: Option<&str>) -> String {
        match namespace {
            Some(ns) if resource.namespaced => {
                format!("{}/{}/{ns}/", self.prefix, resource.resource)
            }
            _ => format!("{}/{}/", self.prefix, resource.resource),
        }
    }

    /// Split an object key of `resource` into `(namespace, name)` (namespace empty for
    /// cluster-scoped).
    pub fn parse<'k>(&self, resource: &ResourceInfo, key: &'k str) -> Option<(&'k str, &'k str)> {
        let rest = key
            .strip_prefix(&*self.prefix)?
            .strip_prefix('/')?
            .strip_prefix(resource.resource)?
            .strip_prefix('/')?;
        if resource.namespaced {
            let (ns, name) = rest.split_once('/')?;
            (!name.contains('/')).then_some((ns, name))
        } else {
            (!rest.contains('/')).then_some(("", rest))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::resource::ResourceInfo;

    const FLUNDERS: ResourceInfo = ResourceInfo::new(
        "wardle.example.com",
        "flunders",
        "flunder",
        "Flunder",
        "FlunderList",
        true,
    );
    const FISCHERS: ResourceInfo = ResourceInfo::new(
        "wardle.example.com",
        "fischers",
        "fischer",
        "Fischer",
        "FischerList",
        false,
    );

    #[test]
    fn layout() {
        let k = Keys::for_group("wardle.example.com");
        assert_eq!(
            k.object(&FLUNDERS, "default", "a"),
            "/registry/wardle.example.com/flunders/default/a"
        );
        assert_eq!(
            k.object(&FISCHERS, "ignored", "f"),
            "/registry/wardle.example.com/fischers/f"
        );
        assert_eq!(
            k.collection(&FLUNDERS, Some("ns")),
            "/registry/wardle.example.com/flunders/ns/"
        );
        assert_eq!(
            k.collection(&FLUNDERS, None),
            "/registry/wardle.example.com/flunders/"
        );
        assert_eq!(
            k.collection(&FISCHERS, Some("ns")),
            "/registry/wardle.example.com/fischers/"
        );
        assert_eq!(
            k.parse(&FLUNDERS, "/registry/wardle.example.com/flunders/ns/a"),
            Some(("ns", "a"))
        );
        assert_eq!(
            k.parse(&FISCHERS, "/registry/wardle.example.com/fischers/f"),
            Some(("", "f"))
        );
        assert_eq!(
            k.parse(&FISCHERS, "/registry/wardle.example.com/flunders/f"),
            None
        );
    }
}
