//! The parts of `k8s.io/apimachinery/pkg/apis/meta/v1` the wardle API needs.
//!
//! Serialization follows Go's `encoding/json` with the Kubernetes tags:
//! `omitempty` fields are left out when empty, struct-valued fields are always written, and every
//! field accepts `null` (Go decodes `null` into the zero value; `kubectl` sends
//! `"creationTimestamp": null` on every create). Unknown fields are ignored here; strict field
//! validation (`fieldValidation=Strict`) is the decoder's job, not the types'.

use std::collections::BTreeMap;
use std::fmt;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// Decode `null` (and absence, with `#[serde(default)]`) as the type's zero value, like Go.
pub fn null_as_default<'de, D, T>(d: D) -> Result<T, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de> + Default,
{
    Ok(Option::<T>::deserialize(d)?.unwrap_or_default())
}

fn none_or_empty<T>(v: &Option<Vec<T>>) -> bool {
    v.as_ref().is_none_or(Vec::is_empty)
}

pub(crate) fn is_zero_i64(v: &i64) -> bool {
    *v == 0
}

/// `apiVersion` and `kind`, inlined at the top of every object (`metav1.TypeMeta`).
#[derive(Debug, Clone, Default, PartialEq, Eq, conneg_cbor::Serialize, Deserialize)]
pub struct TypeMeta {
    /// The kind, e.g. `Flunder`.
    #[serde(
        default,
        deserialize_with = "null_as_default",
        skip_serializing_if = "String::is_empty"
    )]
    pub kind: String,
    /// `group/version` (or `v1` for the core group); empty when unknown.
    #[serde(
        rename = "apiVersion",
        default,
        deserialize_with = "null_as_default",
        skip_serializing_if = "String::is_empty"
    )]
    pub api_version: String,
}

/// A point in time with second precision, written as RFC 3339 in UTC (`metav1.Time`).
///
/// Go's zero time is `null` in JSON; here that is `Option<Time>::None`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Time {
    /// Seconds since the Unix epoch (negative before 1970).
    pub unix_seconds: i64,
}

impl Time {
    /// The current time, truncated to whole seconds.
    pub fn now() -> Self {
        let secs = match SystemTime::now().duration_since(UNIX_EPOCH) {
            Ok(d) => i64::try_from(d.as_secs()).unwrap_or(i64::MAX),
            Err(e) => -i64::try_from(e.duration().as_secs()).unwrap_or(i64::MAX),
        };
        Self { unix_seconds: secs }
    }

    /// A time from seconds since the Unix epoch.
    pub fn from_unix(unix_seconds: i64) -> Self {
        Self { unix_seconds }
    }

    /// The time as a [`SystemTime`].
    pub fn to_system_time(self) -> SystemTime {
        if self.unix_seconds >= 0 {
            UNIX_EPOCH + Duration::from_secs(self.unix_seconds.unsigned_abs())
        } else {
            UNIX_EPOCH - Duration::from_secs(self.unix_seconds.unsigned_abs())
        }
    }

    /// The time as Go's `time.Time.String` prints it in UTC (`2006-01-02 15:04:05 +0000 UTC`),
    /// which is how field errors show a `metav1.Time`.
    pub fn go_string(self) -> String {
        let rfc3339 = self.to_string();
        let (date, time) = rfc3339.split_once('T').unwrap_or((&rfc3339, ""));
        format!("{date} {} +0000 UTC", time.trim_end_matches('Z'))
    }

    /// Parse RFC 3339 (`2024-01-02T03:04:05Z`, `...05.123+01:00`); fractions are truncated.
    pub fn parse_rfc3339(s: &str) -> Option<Self> {
        let b = s.as_bytes();
        if b.len() < 20 {
            return None;
        }
        let num = |r: std::ops::Range<usize>| -> Option<i64> {
            let part = s.get(r)?;
            if !part.bytes().all(|c| c.is_ascii_digit()) {
                return None;
            }
            part.parse().ok()
        };
        let (year, month, day) = (num(0..4)?, num(5..7)?, num(8..10)?);
        let (hour, min, sec) = (num(11..13)?, num(14..16)?, num(17..19)?);
        if b[4] != b'-' || b[7] != b'-' || !matches!(b[10], b'T' | b't') {
            return None;
        }
        if b[13] != b':' || b[16] != b':' {
            return None;
        }
        if !(1..=12).contains(&month) || day < 1 || day > days_in_month(year, month) {
            return None;
        }
        if hour > 23 || min > 59 || sec > 60 {
            return None;
        }
        let mut i = 19;
        if b.get(i) == Some(&b'.') {
            i += 1;
            let start = i;
            while b.get(i).is_some_and(u8::is_ascii_digit) {
                i += 1;
            }
            if i == start {
                return None;
            }
        }
        let offset = match b.get(i)? {
            b'Z' | b'z' if i + 1 == b.len() => 0,
            sign @ (b'+' | b'-') if i + 6 == b.len() && b[i + 3] == b':' => {
                let h = num(i + 1..i + 3)?;
                let m = num(i + 4..i + 6)?;
                if h > 23 || m > 59 {
                    return None;
                }
                let off = h * 3600 + m * 60;
                if *sign == b'-' { -off } else { off }
            }
            _ => return None,
        };
        let days = days_from_civil(year, month, day);
        Some(Self {
            unix_seconds: days * 86400 + hour * 3600 + min * 60 + sec - offset,
        })
    }
}

fn is_leap(y: i64) -> bool {
    (y % 4 == 0 && y % 100 != 0) || y % 400 == 0
}

fn days_in_month(y: i64, m: i64) -> i64 {
    match m {
        2 if is_leap(y) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

// Howard Hinnant's civil calendar algorithms (public domain).
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146097 + doe - 719468
}

fn civil_from_days(z: i64) -> (i64, i64, i64) {
    let z = z + 719468;
    let era = z.div_euclid(146097);
    let doe = z - era * 146097;
    let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    (y, m, d)
}

impl fmt::Display for Time {
    /// RFC 3339 in UTC with second precision, as Go's `time.RFC3339` after `UTC()`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (y, fields) = self.fields();
        if !(0..=9999).contains(&y) {
            return write_padded(f, y, fields);
        }
        // Every write formats a few of these (timestamps, managedFields): digits written in
        // place cost a tenth of the padded integers of `write!`.
        let mut out = *b"0000-00-00T00:00:00Z";
        let mut put = |at: usize, v: i64, width: usize| {
            let mut v = v;
            for i in (at..at + width).rev() {
                out[i] = b'0' + (v % 10) as u8;
                v /= 10;
            }
        };
        put(0, y, 4);
        for (v, at) in fields.into_iter().zip([5, 8, 11, 14, 17]) {
            put(at, v, 2);
        }
        f.write_str(std::str::from_utf8(&out).map_err(|_| fmt::Error)?)
    }
}

impl Time {
    /// The year, then month, day, hours, minutes and seconds, in UTC.
    fn fields(self) -> (i64, [i64; 5]) {
        let days = self.unix_seconds.div_euclid(86400);
        let secs = self.unix_seconds.rem_euclid(86400);
        let (y, m, d) = civil_from_days(days);
        (y, [m, d, secs / 3600, secs / 60 % 60, secs % 60])
    }
}

/// A time's fields as padded integers: any year (four digits or more, or negative).
fn write_padded(f: &mut fmt::Formatter<'_>, y: i64, [m, d, h, min, s]: [i64; 5]) -> fmt::Result {
    write!(f, "{y:04}-{m:02}-{d:02}T{h:02}:{min:02}:{s:02}Z")
}

impl Serialize for Time {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for Time {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        Time::parse_rfc3339(&s)
            .ok_or_else(|| serde::de::Error::custom(format!("invalid RFC 3339 time {s:?}")))
    }
}

/// The finalizer the garbage collector handles by orphaning the object's dependents
/// (`metav1.FinalizerOrphanDependents`).
pub const FINALIZER_ORPHAN: &str = "orphan";
/// The finalizer the garbage collector handles by deleting the object's dependents first
/// (`metav1.FinalizerDeleteDependents`).
pub const FINALIZER_FOREGROUND: &str = "foregroundDeletion";

/// `metav1.OwnerReference`.
#[derive(Debug, Clone, Default, PartialEq, Eq, conneg_cbor::Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct OwnerReference {
    /// API version of the referent.
    #[serde(default, deserialize_with = "null_as_default")]
    pub api_version: String,
    /// Kind of the referent.
    #[serde(default, deserialize_with = "null_as_default")]
    pub kind: String,
    /// Name of the referent.
    #[serde(default, deserialize_with = "null_as_default")]
    pub name: String,
    /// UID of the referent.
    #[serde(default, deserialize_with = "null_as_default")]
    pub uid: String,
    /// Whether the referent is the managing controller.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub controller: Option<bool>,
    /// Whether the owner blocks deletion of this object (foreground deletion).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub block_owner_deletion: Option<bool>,
}

/// `metav1.ManagedFieldsEntry`; `fieldsV1` is kept as the raw JSON value it is.
#[derive(Debug, Clone, Default, PartialEq, conneg_cbor::Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ManagedFieldsEntry {
    /// The workflow managing these fields.
    #[serde(
        default,
        deserialize_with = "null_as_default",
        skip_serializing_if = "String::is_empty"
    )]
    pub manager: String,
    /// `Apply` or `Update`.
    #[serde(
        default,
        deserialize_with = "null_as_default",
        skip_serializing_if = "String::is_empty"
    )]
    pub operation: String,
    /// Version of the resource the field set applies to.
    #[serde(
        default,
        deserialize_with = "null_as_default",
        skip_serializing_if = "String::is_empty"
    )]
    pub api_version: String,
    /// When the entry was last changed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub time: Option<Time>,
    /// Format of `fieldsV1` (always `FieldsV1`).
    #[serde(
        default,
        deserialize_with = "null_as_default",
        skip_serializing_if = "String::is_empty"
    )]
    pub fields_type: String,
    /// The field set, as an opaque JSON object.
    #[serde(rename = "fieldsV1", default, skip_serializing_if = "Option::is_none")]
    pub fields_v1: Option<serde_json::Value>,
    /// The subresource the entry applies to, if any.
    #[serde(
        default,
        deserialize_with = "null_as_default",
        skip_serializing_if = "String::is_empty"
    )]
    pub subresource: String,
}

/// Names `metav1.ObjectMeta` in a declared type's schema ([`crate::declarative`]): what is
/// published for `metadata` is Kubernetes' own ObjectMeta schema, whatever this one says, and
/// metadata is validated by [`crate::validation::validate_object_meta`].
impl schemars::JsonSchema for ObjectMeta {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "ObjectMeta".into()
    }
    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({"type": "object"})
    }
}

/// `metav1.ObjectMeta`.
#[derive(Debug, Clone, Default, PartialEq, conneg_cbor::Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ObjectMeta {
    /// Unique name within the namespace.
    #[serde(
        default,
        deserialize_with = "null_as_default",
        skip_serializing_if = "String::is_empty"
    )]
    pub name: String,
    /// Prefix for a server-generated name, used when `name` is empty.
    #[serde(
        default,
        deserialize_with = "null_as_default",
        skip_serializing_if = "String::is_empty"
    )]
    pub generate_name: String,
    /// Namespace (empty for cluster-scoped objects).
    #[serde(
        default,
        deserialize_with = "null_as_default",
        skip_serializing_if = "String::is_empty"
    )]
    pub namespace: String,
    /// Deprecated; never set by this server, accepted for compatibility.
    #[serde(
        default,
        deserialize_with = "null_as_default",
        skip_serializing_if = "String::is_empty"
    )]
    pub self_link: String,
    /// Server-assigned unique identifier.
    #[serde(
        default,
        deserialize_with = "null_as_default",
        skip_serializing_if = "String::is_empty"
    )]
    pub uid: String,
    /// Opaque version (the storage's modification revision as decimal).
    #[serde(
        default,
        deserialize_with = "null_as_default",
        skip_serializing_if = "String::is_empty"
    )]
    pub resource_version: String,
    /// Generation of the desired state.
    #[serde(
        default,
        deserialize_with = "null_as_default",
        skip_serializing_if = "is_zero_i64"
    )]
    pub generation: i64,
    /// Creation time; `null`/absent until the server sets it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub creation_timestamp: Option<Time>,
    /// When graceful deletion started.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deletion_timestamp: Option<Time>,
    /// Grace period of a pending deletion.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deletion_grace_period_seconds: Option<i64>,
    /// Labels.
    #[serde(
        default,
        deserialize_with = "null_as_default",
        skip_serializing_if = "BTreeMap::is_empty"
    )]
    pub labels: BTreeMap<String, String>,
    /// Annotations (e.g. `kubectl.kubernetes.io/last-applied-configuration`).
    #[serde(
        default,
        deserialize_with = "null_as_default",
        skip_serializing_if = "BTreeMap::is_empty"
    )]
    pub annotations: BTreeMap<String, String>,
    /// Owners of this object.
    #[serde(
        default,
        deserialize_with = "null_as_default",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub owner_references: Vec<OwnerReference>,
    /// Finalizers that must be removed before deletion completes.
    #[serde(
        default,
        deserialize_with = "null_as_default",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub finalizers: Vec<String>,
    /// Server-side apply bookkeeping. `None` when absent or null; an
    /// empty list is kept apart, as a client's way to clear the entries.
    #[serde(default, skip_serializing_if = "none_or_empty")]
    pub managed_fields: Option<Vec<ManagedFieldsEntry>>,
}

/// `metav1.ListMeta`.
#[derive(Debug, Clone, Default, PartialEq, Eq, conneg_cbor::Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ListMeta {
    /// Deprecated; accepted, never set.
    #[serde(
        default,
        deserialize_with = "null_as_default",
        skip_serializing_if = "String::is_empty"
    )]
    pub self_link: String,
    /// The revision the list was read at.
    #[serde(
        default,
        deserialize_with = "null_as_default",
        skip_serializing_if = "String::is_empty"
    )]
    pub resource_version: String,
    /// Opaque token for the next page.
    #[serde(
        rename = "continue",
        default,
        deserialize_with = "null_as_default",
        skip_serializing_if = "String::is_empty"
    )]
    pub continue_: String,
    /// Items left after this page (an estimate when a selector is used).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub remaining_item_count: Option<i64>,
}

/// Access to the metadata of an object (Kubernetes' `metav1.Object`).
pub trait HasObjectMeta {
    /// The object's metadata.
    fn meta(&self) -> &ObjectMeta;
    /// The object's metadata, mutable.
    fn meta_mut(&mut self) -> &mut ObjectMeta;
}

/// Access to the metadata of a list (Kubernetes' `metav1.ListInterface`).
pub trait HasListMeta {
    /// The list's metadata.
    fn list_meta(&self) -> &ListMeta;
    /// The list's metadata, mutable.
    fn list_meta_mut(&mut self) -> &mut ListMeta;
}

/// Implements [`HasObjectMeta`] for an object type whose metadata live in a `metadata` field,
/// as every Kubernetes type's do: for internal types, as a served (versioned) type declared
/// with [`kind`](crate::kind) has it already.
///
/// ```
/// use conneg_apiserver::meta::{HasObjectMeta, ObjectMeta};
///
/// #[derive(Default)]
/// struct Widget { metadata: ObjectMeta }
/// conneg_apiserver::impl_meta!(Widget);
///
/// let mut w = Widget::default();
/// w.meta_mut().name = "w1".into();
/// assert_eq!(w.meta().name, "w1");
/// ```
#[macro_export]
macro_rules! impl_meta {
    ($obj:ty) => {
        impl $crate::meta::HasObjectMeta for $obj {
            fn meta(&self) -> &$crate::meta::ObjectMeta {
                &self.metadata
            }
            fn meta_mut(&mut self) -> &mut $crate::meta::ObjectMeta {
                &mut self.metadata
            }
        }
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Digits written in place read as the padded integers of `write!` would, from the
    /// first day of year 0 to the last of 9999, leap days and the ends of days included.
    #[test]
    fn times_are_written_as_padded_integers_would_be() {
        struct Padded(Time);
        impl fmt::Display for Padded {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                let (y, fields) = self.0.fields();
                write_padded(f, y, fields)
            }
        }
        let first = days_from_civil(0, 1, 1) * 86400;
        let last = days_from_civil(9999, 12, 31) * 86400 + 86399;
        let step = 86400 * 7 + 3599;
        for unix_seconds in (first..=last).step_by(step as usize).chain([
            first,
            last,
            951_782_400,
            951_868_799,
            0,
            -1,
        ]) {
            let t = Time { unix_seconds };
            assert_eq!(t.to_string(), Padded(t).to_string(), "{unix_seconds}");
        }
        assert_eq!(
            Time::parse_rfc3339("2024-02-29T23:59:58Z")
                .unwrap()
                .to_string(),
            "2024-02-29T23:59:58Z"
        );
        // Outside four digits, the padded form (as before).
        let after = Time {
            unix_seconds: last + 1,
        };
        assert_eq!(after.to_string(), "10000-01-01T00:00:00Z");
    }

    #[test]
    fn time_round_trips_rfc3339() {
        let t = Time::parse_rfc3339("2024-02-29T23:59:58Z").unwrap();
        assert_eq!(t.to_string(), "2024-02-29T23:59:58Z");
        assert_eq!(
            Time::parse_rfc3339("1970-01-01T01:00:00+01:00").unwrap(),
            Time::from_unix(0)
        );
        assert_eq!(
            Time::parse_rfc3339("1969-12-31T23:59:59.999Z")
                .unwrap()
                .unix_seconds,
            -1
        );
        assert_eq!(Time::from_unix(-1).to_string(), "1969-12-31T23:59:59Z");
        for bad in [
            "2024-02-30T00:00:00Z",
            "2024-01-01 00:00:00Z",
            "2024-01-01T00:00:00",
        ] {
            assert!(Time::parse_rfc3339(bad).is_none(), "{bad}");
        }
    }

    #[test]
    fn object_meta_accepts_what_kubectl_sends() {
        let json = r#"{"name":"a","namespace":"default","creationTimestamp":null,
            "labels":null,"annotations":{"kubectl.kubernetes.io/last-applied-configuration":"{}"},
            "unknownField":1,"generation":null,
            "managedFields":[{"manager":"kubectl","operation":"Apply","apiVersion":"v1",
              "time":"2024-01-01T00:00:00Z","fieldsType":"FieldsV1","fieldsV1":{"f:metadata":{}}}]}"#;
        let m: ObjectMeta = serde_json::from_str(json).unwrap();
        assert_eq!(m.name, "a");
        assert!(m.creation_timestamp.is_none());
        assert_eq!(
            m.managed_fields.as_ref().unwrap()[0].fields_v1,
            Some(serde_json::json!({"f:metadata":{}}))
        );
        let out = serde_json::to_value(&m).unwrap();
        assert_eq!(out["annotations"].as_object().unwrap().len(), 1);
        assert!(out.get("labels").is_none());
        assert!(out.get("generation").is_none());
        assert!(out.get("creationTimestamp").is_none());
    }

    #[test]
    fn empty_meta_is_empty_object() {
        assert_eq!(serde_json::to_string(&ObjectMeta::default()).unwrap(), "{}");
        assert_eq!(serde_json::to_string(&ListMeta::default()).unwrap(), "{}");
        let l = ListMeta {
            continue_: "x".into(),
            remaining_item_count: Some(0),
            ..Default::default()
        };
        assert_eq!(
            serde_json::to_string(&l).unwrap(),
            r#"{"continue":"x","remainingItemCount":0}"#
        );
    }
}
