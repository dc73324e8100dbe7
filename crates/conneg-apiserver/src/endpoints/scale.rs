//! The `scale` subresource (`autoscaling/v1` `Scale`) of a kind that declares one (a custom
//! resource's definition does): GET reads the replicas from the object, PUT and PATCH write
//! `spec.replicas` back into it and go through the kind's whole update pipeline (its schema,
//! its rules, the generation), as Kubernetes' custom resource scale does.

use conneg::{PatchType, Status};
use http::{Method, StatusCode};
use serde_json::{Map, Value, json};

use super::body::{Expected, decode_json, defaulted_kind, to_json};
use super::call::Call;
use super::update::{Change, commit, conflict};
use super::{HResult, Served, StatusError, field_manager, resource_not_found, respond};
use crate::meta::HasObjectMeta;
use crate::patch;
use crate::registry;
use crate::validation::{BadValue, FieldError};

/// Where a kind's replicas are, as dot paths into the object (`.spec.replicas`,
/// `.status.replicas`, `.status.selector`; no selector path: `""`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScalePaths {
    /// The wanted replicas.
    pub(crate) spec_replicas: String,
    /// The replicas there are.
    pub(crate) status_replicas: String,
    /// The label selector (a string), or `""`.
    pub(crate) label_selector: String,
}

/// The value at the dot path `path` of `v`.
fn at<'a>(v: &'a Value, path: &str) -> Option<&'a Value> {
    path.trim_start_matches('.')
        .split('.')
        .try_fold(v, |v, k| v.get(k))
}

/// Sets the value at the dot path `path` of `v`, making the objects on the way.
fn set(v: &mut Value, path: &str, x: Value) {
    let mut keys = path.trim_start_matches('.').split('.').peekable();
    let mut cur = v;
    while let Some(k) = keys.next() {
        if !cur.is_object() {
            *cur = Value::Object(Map::new());
        }
        let Value::Object(m) = cur else {
            return;
        };
        if keys.peek().is_none() {
            m.insert(k.to_owned(), x);
            return;
        }
        cur = m
            .entry(k.to_owned())
            .or_insert_with(|| Value::Object(Map::new()));
    }
}

/// The `Scale` of `obj` (as JSON in the request's version).
fn scale_of(obj: &Value, paths: &ScalePaths) -> Result<Value, StatusError> {
    let replicas = at(obj, &paths.spec_replicas)
        .and_then(Value::as_i64)
        .ok_or_else(|| {
            Status::internal_error(format!(
                "the spec replicas field {} does not exist",
                Status::quote(&paths.spec_replicas)
            ))
        })?;
    let status = at(obj, &paths.status_replicas)
        .and_then(Value::as_i64)
        .unwrap_or(0);
    let selector = if paths.label_selector.is_empty() {
        ""
    } else {
        at(obj, &paths.label_selector)
            .and_then(Value::as_str)
            .unwrap_or_default()
    };
    let m = &obj["metadata"];
    let mut metadata = Map::new();
    for k in [
        "name",
        "namespace",
        "uid",
        "resourceVersion",
        "creationTimestamp",
    ] {
        if let Some(v) = m.get(k).filter(|v| !v.is_null()) {
            metadata.insert(k.to_owned(), v.clone());
        }
    }
    Ok(json!({
        "kind": "Scale",
        "apiVersion": "autoscaling/v1",
        "metadata": metadata,
        "spec": {"replicas": replicas},
        "status": {"replicas": status, "selector": selector},
    }))
}

/// GET, PUT and PATCH of `/scale`.
pub(super) async fn scale<T: Served>(c: Call<'_>, f: &T::Facts) -> HResult {
    let (st, t, q, n, ua) = (c.st, c.t, c.q, c.n, c.ua);
    let paths = T::scale(f).ok_or_else(resource_not_found)?;
    let key = t.key(&st.registry);
    let (old, revision) = st
        .registry
        .get::<T::K>(t.resource, &key, t.name())
        .await?
        .ok_or_else(|| t.not_found())?;
    let old_json = to_json(&T::from_kind(old.clone(), f))?;
    let current = scale_of(&old_json, paths)?;
    let wanted: Value = match c.method {
        Method::GET => return Ok(respond(n, StatusCode::OK, &current)),
        Method::PUT => n.decode_body::<Value, _>(c.body).await?.value,
        Method::PATCH => {
            // A Scale is patched as JSON: JSON and merge patches (as a custom resource).
            let supported = [PatchType::JsonPatch, PatchType::MergePatch];
            let kind = n
                .patch_type()
                .filter(|k| supported.contains(k))
                .ok_or_else(|| {
                    Status::unsupported_media_type(&supported.map(PatchType::media_type).join(", "))
                })?;
            let raw = conneg::read_body(c.body, n.body_limit()).await?;
            patch::apply(kind, current.clone(), &patch::parse(kind, &raw)?)?
        }
        m => return Ok(t.method_not_allowed(&m)),
    };
    let replicas = match wanted.pointer("/spec/replicas") {
        Some(Value::Number(r)) => r.as_i64(),
        None | Some(Value::Null) => {
            return Err(Status::bad_request(format!(
                "the spec replicas field {} cannot be empty",
                Status::quote(&paths.spec_replicas)
            ))
            .into());
        }
        Some(_) => None,
    }
    .ok_or_else(|| Status::bad_request("spec.replicas: must be an integer"))?;
    let res = t.resource;
    let check = |detail: &str| {
        let err = FieldError::invalid_value(&paths.spec_replicas, BadValue::Int(replicas), detail);
        registry::Error::invalid(res, t.name().to_owned(), vec![err])
    };
    if replicas < 0 {
        return Err(check("should be a non-negative integer").into());
    }
    if replicas > i64::from(i32::MAX) {
        return Err(check("should be less than or equal to 2147483647").into());
    }
    // The Scale's resourceVersion, when given, is the client's precondition.
    let pinned = wanted
        .pointer("/metadata/resourceVersion")
        .and_then(Value::as_str)
        .filter(|rv| !rv.is_empty());
    if pinned.is_some_and(|rv| rv != revision.to_string()) {
        return Err(conflict(res, t.name()).into());
    }
    let mut new_json = old_json;
    set(&mut new_json, &paths.spec_replicas, Value::from(replicas));
    let (decoded, _) = decode_json::<T>(&new_json, n, &Expected::of::<T>(st, t, f))?;
    let (mut new, versioned) = defaulted_kind::<T>(decoded, (t, n), f)?;
    new.meta_mut().resource_version = revision.to_string();
    let manager = field_manager::manager(
        if c.method == Method::PUT {
            "UpdateOptions"
        } else {
            "PatchOptions"
        },
        q.get("fieldManager"),
        ua,
    )?;
    let change = Change {
        new,
        versioned,
        old: &old,
        revision,
        key: &key,
        manager: Some(&manager),
        dry_run: q.dry_run()?,
    };
    let written = commit::<T>(st, t, change, f)
        .await?
        .ok_or_else(|| conflict(res, t.name()))?;
    let out = scale_of(&to_json(&T::from_kind(written, f))?, paths)?;
    Ok(respond(n, StatusCode::OK, &out))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn paths() -> ScalePaths {
        ScalePaths {
            spec_replicas: ".spec.replicas".into(),
            status_replicas: ".status.replicas".into(),
            label_selector: ".status.selector".into(),
        }
    }

    #[test]
    fn the_scale_of_an_object() {
        let obj = json!({"metadata": {"name": "a", "namespace": "n", "resourceVersion": "7"},
                         "spec": {"replicas": 3}, "status": {"replicas": 2, "selector": "app=a"}});
        let s = scale_of(&obj, &paths()).unwrap();
        assert_eq!(s["spec"], json!({"replicas": 3}));
        assert_eq!(s["status"], json!({"replicas": 2, "selector": "app=a"}));
        assert_eq!(
            s["metadata"],
            json!({"name": "a", "namespace": "n", "resourceVersion": "7"})
        );
        let e = scale_of(&json!({"spec": {}}), &paths()).unwrap_err();
        assert_eq!(
            e.message,
            r#"Internal error occurred: the spec replicas field ".spec.replicas" does not exist"#
        );
    }

    #[test]
    fn set_makes_the_way() {
        let mut v = json!({"spec": 1});
        set(&mut v, ".spec.replicas", json!(4));
        assert_eq!(v, json!({"spec": {"replicas": 4}}));
        assert_eq!(at(&v, ".spec.replicas"), Some(&json!(4)));
    }
}
