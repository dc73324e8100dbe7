//! Server-side printing: `meta.k8s.io/v1` (or `v1beta1`) `Table` for `kubectl get`
//! (`Accept: application/json;as=Table;v=v1;g=meta.k8s.io`). JSON only, as Kubernetes.
//!
//! Columns: Name, then the type's own ([`Served::columns`]: a compiled kind's columns and
//! Age, a custom resource's printer columns). Rows carry the object as
//! `PartialObjectMetadata` (`includeObject=Metadata`, the default), the whole object
//! (`Object`) or nothing (`None`).

use conneg::{Conversion, Status};
use serde_json::{Value, json};

use super::{Params, Served, StatusError};
use crate::meta::{HasObjectMeta, ListMeta, Time};

/// Builds a Table of `items`.
pub(super) fn table<T: Served>(
    conv: &Conversion,
    q: &Params,
    items: Vec<T::K>,
    meta: ListMeta,
    f: &T::Facts,
) -> Result<Value, StatusError> {
    let include = q.get("includeObject").unwrap_or("Metadata");
    if !matches!(include, "None" | "Metadata" | "Object") {
        return Err(Status::bad_request(format!(
            "includeObject: Unsupported value: {include:?}: supported values: \"Metadata\", \"None\", \"Object\""
        )).into());
    }
    let api_version = format!("{}/{}", conv.group, conv.version);
    let now = Time::now();
    let rows: Vec<Value> = items
        .into_iter()
        .map(|k| row::<T>(k, include, &api_version, now, f))
        .collect::<Result<_, _>>()?;
    let mut t = json!({
        "kind": "Table",
        "apiVersion": api_version,
        "metadata": meta,
        "columnDefinitions": if q.flag("noHeaders") { Value::Null } else { columns::<T>(f) },
        "rows": rows,
    });
    if q.flag("noHeaders")
        && let Some(m) = t.as_object_mut()
    {
        m.remove("columnDefinitions");
    }
    Ok(t)
}

/// A one-row Table for a watch event (`headers`: include the column definitions, which
/// Kubernetes does on the first event only).
pub(super) fn event_table<T: Served>(
    conv: &Conversion,
    q: &Params,
    k: T::K,
    headers: bool,
    f: &T::Facts,
) -> Result<Value, StatusError> {
    let include = q.get("includeObject").unwrap_or("Metadata");
    let api_version = format!("{}/{}", conv.group, conv.version);
    let rv = k.meta().resource_version.clone();
    let row = row::<T>(k, include, &api_version, Time::now(), f)?;
    let mut t = json!({
        "kind": "Table",
        "apiVersion": api_version,
        "metadata": {"resourceVersion": rv},
        "rows": [row],
    });
    if headers {
        t["columnDefinitions"] = columns::<T>(f);
    }
    Ok(t)
}

/// One column definition (`metav1.TableColumnDefinition`).
pub(super) fn column(name: &str, ty: &str, format: &str, description: &str) -> Value {
    json!({"name": name, "type": ty, "format": format, "priority": 0, "description": description})
}

/// The Age column compiled kinds end with.
pub(super) fn age_column() -> Value {
    column(
        "Age",
        "date",
        "",
        "CreationTimestamp is a timestamp representing the server time when this object was created. It is not guaranteed to be set in happens-before order across separate operations. Clients may not set this value. It is represented in RFC3339 form and is in UTC.\n\nPopulated by the system. Read-only. Null for lists. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata",
    )
}

fn columns<T: Served>(f: &T::Facts) -> Value {
    let mut cols = vec![column(
        "Name",
        "string",
        "name",
        "Name must be unique within a namespace. Is required when creating resources, although some resources may allow a client to request the generation of an appropriate name automatically. Name is primarily intended for creation idempotence and configuration definition. Cannot be updated. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/names#names",
    )];
    cols.extend(T::columns(f));
    Value::Array(cols)
}

fn row<T: Served>(
    k: T::K,
    include: &str,
    api_version: &str,
    now: Time,
    f: &T::Facts,
) -> Result<Value, StatusError> {
    let meta = k.meta();
    let mut cells = vec![json!(meta.name)];
    cells.extend(T::cells(&k, f, now));
    let object = match include {
        "None" => Value::Null,
        "Object" => serde_json::to_value(T::from_kind(k.clone(), f))
            .map_err(|e| Status::internal_error(format!("encoding table row: {e}")))?,
        _ => json!({
            "kind": "PartialObjectMetadata",
            "apiVersion": api_version,
            "metadata": meta,
        }),
    };
    let mut row = json!({"cells": cells});
    if !object.is_null() {
        row["object"] = object;
    }
    Ok(row)
}

/// `duration.HumanDuration` of the time since `t` (`<unknown>` without one), as kubectl
/// prints ages.
pub(crate) fn age(t: Option<Time>, now: Time) -> String {
    let Some(t) = t else {
        return "<unknown>".into();
    };
    human_duration(now.unix_seconds - t.unix_seconds)
}

/// apimachinery's `duration.HumanDuration` for whole seconds.
pub(super) fn human_duration(secs: i64) -> String {
    if secs < 0 {
        return "<invalid>".into();
    }
    if secs < 120 {
        return format!("{secs}s");
    }
    let minutes = secs / 60;
    if minutes < 10 {
        let s = secs % 60;
        return if s == 0 {
            format!("{minutes}m")
        } else {
            format!("{minutes}m{s}s")
        };
    }
    if minutes < 180 {
        return format!("{minutes}m");
    }
    let hours = secs / 3600;
    if hours < 8 {
        let m = minutes % 60;
        return if m == 0 {
            format!("{hours}h")
        } else {
            format!("{hours}h{m}m")
        };
    }
    if hours < 48 {
        return format!("{hours}h");
    }
    if hours < 24 * 8 {
        let h = hours % 24;
        return if h == 0 {
            format!("{}d", hours / 24)
        } else {
            format!("{}d{h}h", hours / 24)
        };
    }
    if hours < 24 * 365 * 2 {
        return format!("{}d", hours / 24);
    }
    if hours < 24 * 365 * 8 {
        let dy = hours / 24 % 365;
        return if dy == 0 {
            format!("{}y", hours / 24 / 365)
        } else {
            format!("{}y{dy}d", hours / 24 / 365)
        };
    }
    format!("{}y", hours / 24 / 365)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn human_durations_match_apimachinery() {
        for (s, want) in [
            (5, "5s"),
            (119, "119s"),
            (125, "2m5s"),
            (600, "10m"),
            (3 * 3600 + 120, "3h2m"),
            (10 * 3600, "10h"),
            (3 * 86400 + 3600, "3d1h"),
            (30 * 86400, "30d"),
            (3 * 365 * 86400 + 86400, "3y1d"),
            (-1, "<invalid>"),
        ] {
            assert_eq!(human_duration(s), want, "{s}");
        }
    }
}
