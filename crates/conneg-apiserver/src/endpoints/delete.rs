//! DELETE of one object and of a collection (deletecollection): the options from the body or
//! the query, then the registry's delete, which admits the stored object first.

use axum::response::Response;
use conneg::{Codec, FieldValidation, Negotiated, Status};
use http::StatusCode;

use super::call::Call;
use super::read::page;
use super::{Context, HResult, Params, Served, StatusError, Target, admission, respond};
use crate::meta::{HasObjectMeta, ObjectMeta};
use crate::registry::delete::DeleteOptions;
use crate::registry::{self, Object};
use crate::resource::ResourceInfo;

/// The admission of a DELETE, run on the stored object each time the registry reads it.
async fn admit_delete<K: Object>(st: &Context, t: &Target, old: K) -> Result<(), registry::Error> {
    admission::admit(st, admission::Request::delete(t.resource, &old))
        .await
        .map_err(registry::Error::refused)
}

pub(super) async fn delete<T: Served>(c: Call<'_>, f: &T::Facts) -> HResult {
    let (st, t, q, n) = (c.st, c.t, c.q, c.n);
    let body = c.body;
    let raw = conneg::read_body(body, n.body_limit()).await?;
    let opts = delete_options(&raw, n.request_codec(), q)?;
    let out = st
        .registry
        .delete::<T::K, _>(t.resource, &t.key(&st.registry), t.name(), &opts, |old| {
            admit_delete(st, t, old)
        })
        .await?
        .ok_or_else(|| t.not_found())?;
    let code = opts.status_code(out.deleted);
    if !out.deleted || <T::K as Object>::RETURN_DELETED_OBJECT {
        return Ok(respond(n, code, &T::from_kind(out.object, f)));
    }
    Ok(deleted_status(n, code, t.resource, out.object.meta()))
}

/// The answer to a DELETE that removed the object, for a kind that does not return it
/// ([`Object::RETURN_DELETED_OBJECT`]): a `Status` of `Success` naming it (the details' `kind`
/// is the resource, as Kubernetes writes it). An object kept for its finalizers is answered
/// with itself.
fn deleted_status(
    n: &Negotiated,
    code: StatusCode,
    res: &ResourceInfo,
    meta: &ObjectMeta,
) -> Response {
    let status = Status {
        code: 0,
        ..Status::success().with_details(conneg::StatusDetails {
            name: meta.name.clone(),
            group: res.group.to_owned(),
            kind: res.resource.to_owned(),
            uid: meta.uid.clone(),
            ..Default::default()
        })
    };
    respond(n, code, &status)
}

pub(super) async fn delete_collection<T: Served>(c: Call<'_>, f: &T::Facts) -> HResult {
    let (st, t, q, n) = (c.st, c.t, c.q, c.n);
    let body = c.body;
    let raw = conneg::read_body(body, n.body_limit()).await?;
    let opts = delete_options(&raw, n.request_codec(), q)?;
    let sel = q.selectors()?;
    let page = page::<T::K>(st, t, &Params::default(), &sel).await?;
    // Each object is deleted as a DELETE of it would; one gone meanwhile is skipped. The
    // answer lists the objects as they were listed, as Kubernetes answers.
    for k in &page.items {
        let (namespace, name) = (&k.meta().namespace, &k.meta().name);
        let key = st.registry.key(t.resource, namespace, name);
        st.registry
            .delete::<T::K, _>(t.resource, &key, name, &opts, |old| {
                admit_delete(st, t, old)
            })
            .await?;
    }
    let items = page.items.into_iter().map(|k| T::from_kind(k, f)).collect();
    let list = T::list(page.meta, items, f);
    Ok(respond(n, StatusCode::OK, &list))
}

/// The options of a DELETE: from the body when there is one (in `codec`, JSON when the
/// request named none), otherwise from the query, as Kubernetes reads them (never both).
/// Invalid options are refused as `ValidateDeleteOptions` refuses them.
fn delete_options(
    raw: &[u8],
    codec: Option<&Codec>,
    q: &Params,
) -> Result<DeleteOptions, StatusError> {
    let opts = if raw.iter().all(u8::is_ascii_whitespace) {
        options_from_query(q)?
    } else {
        // DeleteOptions has fields this server does not read (kind, apiVersion, ...): no
        // warnings about them.
        codec
            .unwrap_or(&Codec::Json)
            .decode(raw, FieldValidation::Ignore)?
            .value
    };
    opts.validate()?;
    Ok(opts)
}

fn options_from_query(q: &Params) -> Result<DeleteOptions, StatusError> {
    let grace_period_seconds = q
        .get("gracePeriodSeconds")
        .map(|v| {
            v.parse::<i64>().map_err(|_| {
                StatusError::from(Status::bad_request(format!(
                    "strconv.ParseInt: parsing {}: invalid syntax",
                    Status::quote(v)
                )))
            })
        })
        .transpose()?;
    let orphan_dependents = q.option("orphanDependents");
    Ok(DeleteOptions {
        grace_period_seconds,
        preconditions: None,
        orphan_dependents,
        propagation_policy: q.get("propagationPolicy").map(str::to_owned),
        dry_run: q.get("dryRun").map(str::to_owned).into_iter().collect(),
    })
}
