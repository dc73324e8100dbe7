//! GET of one object and of a collection (list), in the version of the URL, or as a Table
//! or metadata only.

use axum::response::IntoResponse;
use conneg::{Negotiated, Status};
use http::StatusCode;

use super::encoded::served_by;
use super::{
    Context, HResult, Params, Served, StatusError, Target, list_body, list_options, respond,
    transform,
};
use crate::registry::{ListRequest, Object, Page, storage_status};
use crate::resource::ResourceInfo;
use crate::selector::Selectors;
use crate::storage::{KeyValue, Storage, StorageError};

pub(super) async fn get<T: Served>(
    st: &Context,
    t: &Target,
    q: &Params,
    n: &Negotiated,
    f: &T::Facts,
) -> HResult {
    let kv = st
        .registry
        .get_stored(t.resource, &t.key(&st.registry), t.name())
        .await?
        .ok_or_else(|| t.not_found())?;
    let decode = || st.registry.decode::<T::K>(t.resource, &kv);
    if let Some(conv) = n.conversion() {
        let shaped = transform::object::<T>(conv, q, t, decode()?, f)?;
        return Ok(respond(n, StatusCode::OK, &shaped));
    }
    let make = || Ok::<_, StatusError>(T::from_kind(decode()?, f));
    match st.encoded.form(n, &kv, served_by::<T>(f), make) {
        Some(form) => Ok(n
            .encoded_response(StatusCode::OK, form?.document())
            .into_response()),
        None => Ok(respond(n, StatusCode::OK, &make()?)),
    }
}

/// The revision a list (or the initial state of a watch) is read at, per `resourceVersion`
/// and `resourceVersionMatch` (`None`: the current revision), once validated by
/// [`list_options::ListOptions::parse`].
pub(super) async fn list_revision(
    st: &Context,
    res: &'static ResourceInfo,
    q: &Params,
) -> Result<Option<i64>, StatusError> {
    let Some(rv) = q.get("resourceVersion") else {
        return Ok(None);
    };
    let rv: i64 = rv.parse().map_err(|_| {
        Status::bad_request(format!(
            "invalid resource version {}: must be a non-negative integer",
            Status::quote(rv)
        ))
    })?;
    if rv == 0 {
        return Ok(None);
    }
    // Any other match was refused by `list_options::ListOptions::parse`.
    if q.get("resourceVersionMatch") == Some("Exact") {
        return Ok(Some(rv));
    }
    // NotOlderThan: serve the current state, if the store has reached `rv`.
    let current = st
        .registry
        .store
        .current_revision()
        .await
        .map_err(|e| storage_status(e, res, ""))?;
    if rv > current {
        return Err(Status::timeout(
            StorageError::FutureRevision {
                requested: rv,
                current,
            }
            .to_string(),
            1,
        )
        .into());
    }
    Ok(None)
}

pub(super) async fn list<T: Served>(
    st: &Context,
    t: &Target,
    q: &Params,
    n: &Negotiated,
    f: &T::Facts,
) -> HResult {
    list_options::ListOptions::parse(q)?;
    let sel = q.selectors()?;
    let page = stored_page::<T::K>(st, t, q, &sel).await?;
    if let Some(conv) = n.conversion() {
        let items = decode_all::<T::K>(st, t, &page.items)?;
        let shaped = transform::list::<T>(conv, q, t, (items, page.meta), f)?;
        return Ok(respond(n, StatusCode::OK, &shaped));
    }
    let count = page.items.len();
    let empty = T::list(page.meta.clone(), Vec::new(), f);
    let Some(envelope) = list_body::Envelope::new(n, &empty, count)? else {
        let items = decode_all::<T::K>(st, t, &page.items)?;
        let items = items.into_iter().map(|k| T::from_kind(k, f)).collect();
        return Ok(respond(n, StatusCode::OK, &T::list(page.meta, items, f)));
    };
    // Each stored object is sent as the body reaches it: its kept encoded form, or decoded,
    // converted and encoded (and kept for the next response).
    let (registry, res, facts, n2) = (st.registry.clone(), t.resource, f.clone(), n.clone());
    let (encoded, served) = (st.encoded.clone(), served_by::<T>(f));
    let mut stored = page.items.into_iter();
    let items: list_body::Items = Box::new(move |out| {
        let kv = stored.next()?;
        let make =
            || Ok::<_, list_body::ItemError>(T::from_kind(registry.decode(res, &kv)?, &facts));
        Some(match encoded.form(&n2, &kv, served, make) {
            Some(form) => form.map(|f| Some(f.separated_item(&n2))),
            None => make().and_then(|item| Ok(n2.encode_item(&item, out).map(|()| None)?)),
        })
    });
    envelope.respond(n, items)
}

/// Stored objects decoded.
fn decode_all<K: Object>(
    st: &Context,
    t: &Target,
    stored: &[KeyValue],
) -> Result<Vec<K>, StatusError> {
    Ok(stored
        .iter()
        .map(|kv| st.registry.decode(t.resource, kv))
        .collect::<Result<_, _>>()?)
}

/// One page of the target collection, per the request's selectors, `limit`, `continue` and
/// `resourceVersion`.
pub(super) async fn page<K: Object>(
    st: &Context,
    t: &Target,
    q: &Params,
    sel: &Selectors,
) -> Result<Page<K>, StatusError> {
    let page = stored_page::<K>(st, t, q, sel).await?;
    Ok(Page {
        items: decode_all(st, t, &page.items)?,
        meta: page.meta,
    })
}

/// [`page`] as stored ([`Registry::list_stored`](crate::registry::Registry::list_stored)).
async fn stored_page<K: Object>(
    st: &Context,
    t: &Target,
    q: &Params,
    sel: &Selectors,
) -> Result<Page<KeyValue>, StatusError> {
    let limit = match q.get("limit") {
        None => None,
        Some(l) => {
            let l: i64 = l
                .parse()
                .map_err(|_| Status::bad_request(format!("invalid limit {}", Status::quote(l))))?;
            usize::try_from(l).ok().filter(|l| *l > 0)
        }
    };
    let continue_token = q.get("continue");
    if continue_token.is_some() && q.get("resourceVersion").is_some_and(|rv| rv != "0") {
        return Err(Status::bad_request(
            "specifying resource version is not allowed when using continue",
        )
        .into());
    }
    let revision = match continue_token {
        Some(_) => None,
        None => list_revision(st, t.resource, q).await?,
    };
    let req = ListRequest {
        limit,
        continue_token,
        revision,
    };
    Ok(st
        .registry
        .list_stored::<K>(t.resource, t.namespace.as_deref(), req, sel)
        .await?)
}
