//! PUT and PATCH (every patch type, server-side apply included): the new object is the body,
//! the patched object or the applied one, then one write pipeline ([`commit`]) for all three.

use std::sync::Arc;

use conneg::{Status, StatusReason};
use http::StatusCode;
use serde_json::Value;

use super::body::{Expected, decode_body, decode_json, defaulted_kind, to_json};
use super::call::Call;
use super::create::create_object;
use super::request::{check_name, check_namespace};
use super::validate::{check_declared_update, valid};
use super::{Context, HResult, Served, StatusError, Target, admission, field_manager, respond};
use crate::meta::HasObjectMeta;
use crate::patch;
use crate::registry::backoff::ConflictBackoff;
use crate::registry::{self, Object};
use crate::resource::ResourceInfo;
use crate::storage::OPTIMISTIC_LOCK_MSG;
use crate::validation::{resource_version_required, validate_object_meta_update};

/// Carries server-managed metadata over from `old` and validates the change
/// (rest.BeforeUpdate; the fields the endpoint may not change were put back by
/// [`Target::reset_fields`]): uid and creationTimestamp are kept, generation moves on when the
/// spec changed, and a deletion once started cannot be undone or changed.
fn prepare_update<T: Served>(
    res: &'static ResourceInfo,
    (new, old): (&mut T::K, &T::K),
    f: &T::Facts,
) -> Result<(), registry::Error> {
    let same = T::same_spec(new, old, f);
    let om = old.meta();
    let nm = new.meta_mut();
    if nm.uid.is_empty() {
        nm.uid.clone_from(&om.uid);
    }
    nm.creation_timestamp = om.creation_timestamp;
    nm.generation = om.generation + i64::from(!same);
    if om.deletion_timestamp.is_some() {
        nm.deletion_timestamp = om.deletion_timestamp;
    }
    if nm.deletion_grace_period_seconds.is_none() {
        nm.deletion_grace_period_seconds = om.deletion_grace_period_seconds;
    }
    nm.self_link.clear();
    valid(
        res,
        new,
        validate_object_meta_update(new.meta(), old.meta()),
    )
}

/// 409 for a write whose resourceVersion is not the stored one.
pub(super) fn conflict(res: &ResourceInfo, name: &str) -> Status {
    Status::conflict(res.group, res.resource, name, OPTIMISTIC_LOCK_MSG)
}

pub(super) async fn update<T: Served>(c: Call<'_>, f: &T::Facts) -> HResult {
    let (st, t, q, n, ua) = (c.st, c.t, c.q, c.n, c.ua);
    let raw = conneg::read_body(c.body, n.body_limit()).await?;
    let obj = decode_body::<T>(&raw, n, &Expected::of::<T>(st, t, f))?;
    let (mut new, versioned) = defaulted_kind::<T>(obj, (t, n), f)?;
    let dry_run = q.dry_run()?;
    check_namespace(&mut new, t)?;
    check_name(&new, t)?;
    let rv = new.meta().resource_version.clone();
    if rv.is_empty() {
        return Err(
            resource_version_required(t.resource.group, t.resource.resource, t.name()).into(),
        );
    }
    let expected: i64 = rv.parse().map_err(|_| {
        Status::bad_request(format!(
            "metadata.resourceVersion: Invalid value: {}: must be an integer",
            Status::quote(&rv)
        ))
    })?;
    let key = t.key(&st.registry);
    let (old, revision) = st
        .registry
        .get::<T::K>(t.resource, &key, t.name())
        .await?
        .ok_or_else(|| t.not_found())?;
    if revision != expected {
        return Err(conflict(t.resource, t.name()).into());
    }
    let manager = field_manager::manager("UpdateOptions", q.get("fieldManager"), ua)?;
    let change = Change {
        new,
        versioned,
        old: &old,
        revision,
        key: &key,
        manager: Some(&manager),
        dry_run,
    };
    match commit::<T>(st, t, change, f).await? {
        Some(k) => Ok(respond(n, StatusCode::OK, &T::from_kind(k, f))),
        None => Err(conflict(t.resource, t.name()).into()),
    }
}

/// An update of `old`, stored at `revision`, to `new` (checked against the URL), as the
/// write pipeline takes it.
pub(super) struct Change<'a, K> {
    pub(super) new: K,
    /// `new` as the client's version, as JSON: what declarative validation checks.
    pub(super) versioned: Value,
    pub(super) old: &'a K,
    pub(super) revision: i64,
    pub(super) key: &'a str,
    /// The manager whose update `managedFields` records (`None`: an apply, which recorded
    /// its own).
    pub(super) manager: Option<&'a str>,
    pub(super) dry_run: bool,
}

/// The write pipeline of update, patch and apply, once the new object is known: what the
/// endpoint may not change is put back, `managedFields` recorded, server-managed metadata
/// carried over, the change validated and admitted, then written with one compare-and-swap.
/// `Ok(None)`: the stored object changed meanwhile (the caller answers 409 or retries).
pub(super) async fn commit<T: Served>(
    st: &Context,
    t: &Target,
    c: Change<'_, T::K>,
    f: &T::Facts,
) -> Result<Option<T::K>, StatusError> {
    let Change {
        mut new,
        versioned,
        old,
        revision,
        key,
        manager,
        dry_run,
    } = c;
    t.reset_fields(&mut new, old)?;
    let declared = T::declaration(st, t.version, t.resource, f);
    // The stored object in the request's version, converted once for managedFields and for
    // declarative validation, when either looks at it.
    let old_json = match (manager, declared) {
        (None, None) => None,
        _ => Some(field_manager::live_json::<T>(old, f)?),
    };
    if let (Some(manager), Some(old_json)) = (manager, &old_json) {
        let via = field_manager::Via::of::<T>(t, f, declared);
        field_manager::record_update::<T>(Some((old, old_json)), &mut new, manager, &via, f)?;
    }
    prepare_update::<T>(t.resource, (&mut new, old), f)?;
    if t.subresource() != "status" {
        valid(t.resource, &new, new.validate_update(old))?;
    }
    if let (Some(declared), Some(old_json)) = (declared, &old_json) {
        check_declared_update::<T>(declared, t, versioned, (&new, old_json), f)?;
    }
    admission::admit(
        st,
        admission::Request::update(t.resource, t.namespace(), &new, old),
    )
    .await?;
    Ok(st
        .registry
        .update(t.resource, key, new, old, revision, dry_run)
        .await?)
}

/// Kubernetes' error for an apply without `fieldManager`.
fn field_manager_required() -> Status {
    Status::failure(
        StatusCode::UNPROCESSABLE_ENTITY,
        StatusReason::Invalid,
        "PatchOptions.meta.k8s.io \"\" is invalid: fieldManager: Required value: is required for apply patch",
    )
    .with_details(conneg::StatusDetails {
        group: "meta.k8s.io".into(),
        kind: "PatchOptions".into(),
        causes: vec![conneg::StatusCause::new(
            "FieldValueRequired",
            "Required value: is required for apply patch",
            "fieldManager",
        )],
        ..Default::default()
    })
}

/// Runs `f` on the blocking pool, at most [`Context::blocking`](super::Context::blocking) at a time: parsing, patching
/// and decoding a patch cost time that grows with the body and the stored object, and on an
/// async worker they would stall every other request on it (`/readyz` included).
async fn off_worker<R: Send + 'static>(
    st: &Context,
    f: impl FnOnce() -> Result<R, StatusError> + Send + 'static,
) -> Result<R, StatusError> {
    let _permit = st
        .blocking
        .acquire()
        .await
        .map_err(|e| Status::internal_error(format!("blocking pool closed: {e}")))?;
    tokio::task::spawn_blocking(f)
        .await
        .map_err(|e| Status::internal_error(format!("patch task failed: {e}")))?
}

/// PATCH of every patch type: the patch read and parsed off the async workers, then, for the
/// current object, patched (or applied) and committed; a lost race is retried with the
/// object as it now is. An apply to an object that does not exist creates it.
pub(super) async fn patch<T: Served>(c: Call<'_>, f: &T::Facts) -> HResult {
    let (st, t, q, n, ua) = (c.st, c.t, c.q, c.n, c.ua);
    let body = c.body;
    let Some(kind) = n.patch_type().filter(|k| T::PATCH_TYPES.contains(k)) else {
        let accepted: Vec<&str> = T::PATCH_TYPES
            .iter()
            .filter(|p| st.cbor || !p.is_cbor())
            .map(|p| p.media_type())
            .collect();
        return Err(Status::unsupported_media_type(&accepted.join(", ")).into());
    };
    let raw = conneg::read_body(body, n.body_limit()).await?;
    let doc = Arc::new(off_worker(st, move || Ok(patch::parse(kind, &raw)?)).await?);
    if kind.is_apply() && q.get("fieldManager").is_none() {
        return Err(field_manager_required().into());
    }
    let dry_run = q.dry_run()?;
    let manager = field_manager::manager("PatchOptions", q.get("fieldManager"), ua)?;
    let force = q.flag("force");
    let key = t.key(&st.registry);
    let mut backoff = ConflictBackoff::default();
    loop {
        let current = st.registry.get::<T::K>(t.resource, &key, t.name()).await?;
        let Some((old, revision)) = current else {
            // Only an apply to the object itself creates it.
            if !kind.is_apply() || t.status {
                return Err(t.not_found().into());
            }
            // Server-side apply creates what does not exist.
            let (decoded, warnings) = {
                let (doc, n, manager) = (doc.clone(), n.clone(), manager.clone());
                let via =
                    field_manager::Via::of::<T>(t, f, T::declaration(st, t.version, t.resource, f));
                let expected = Expected::of::<T>(st, t, f);
                off_worker(st, move || {
                    field_manager::apply::<T>(None, &doc, (&manager, force), &via, (&n, &expected))
                })
                .await?
            };
            let (mut k, versioned) = defaulted_kind::<T>(decoded, (t, n), f)?;
            if k.meta().name.is_empty() {
                k.meta_mut().name = t.name().to_owned();
            }
            check_name(&k, t)?;
            let (code, out) = create_object::<T>(st, t, q, (k, versioned), f).await?;
            let mut resp = respond(n, code, &out);
            conneg::append_warnings(resp.headers_mut(), &warnings);
            return Ok(resp);
        };
        let (obj, warnings) = {
            let (doc, n, manager) = (doc.clone(), n.clone(), manager.clone());
            let expected = Expected::of::<T>(st, t, f);
            // The current object in the request's version, encoded here: the facts stay
            // on this side of the blocking pool.
            if kind.is_apply() {
                let via =
                    field_manager::Via::of::<T>(t, f, T::declaration(st, t.version, t.resource, f));
                let live = field_manager::Live::of::<T>(&old, f)?;
                off_worker(st, move || {
                    let options = (manager.as_str(), force);
                    field_manager::apply::<T>(Some(live), &doc, options, &via, (&n, &expected))
                })
                .await?
            } else {
                let current = to_json(&T::from_kind(old.clone(), f))?;
                off_worker(st, move || {
                    decode_json::<T>(&patch::apply(kind, current, &doc)?, &n, &expected)
                })
                .await?
            }
        };
        let (mut new, versioned) = defaulted_kind::<T>(obj, (t, n), f)?;
        check_namespace(&mut new, t)?;
        check_name(&new, t)?;
        // A resourceVersion in the patch is the client's precondition: a mismatch is 409.
        // Without one the current revision is used, and a lost race is retried until it
        // applies, as Kubernetes does.
        let current_rv = revision.to_string();
        let pinned =
            !new.meta().resource_version.is_empty() && new.meta().resource_version != current_rv;
        if pinned {
            return Err(conflict(t.resource, t.name()).into());
        }
        new.meta_mut().resource_version = current_rv;
        let change = Change {
            new,
            versioned,
            old: &old,
            revision,
            key: &key,
            manager: (!kind.is_apply()).then_some(manager.as_str()),
            dry_run,
        };
        if let Some(k) = commit::<T>(st, t, change, f).await? {
            let mut resp = respond(n, StatusCode::OK, &T::from_kind(k, f));
            conneg::append_warnings(resp.headers_mut(), &warnings);
            return Ok(resp);
        }
        backoff.wait().await;
    }
}
