//! POST: the create pipeline, shared with the apply that creates an object.

use conneg::Status;
use http::StatusCode;
use serde_json::Value;

use super::body::{Expected, decode_body, defaulted_kind};
use super::call::Call;
use super::request::check_namespace;
use super::validate::{declared_errors, valid};
use super::{
    Context, HResult, Params, Served, StatusError, Target, admission, field_manager, respond,
};
use crate::meta::{HasObjectMeta, Time};
use crate::names;
use crate::registry::{Object, status};
use crate::validation::validate_object_meta;

pub(super) async fn create<T: Served>(c: Call<'_>, f: &T::Facts) -> HResult {
    let (st, t, q, n, ua) = (c.st, c.t, c.q, c.n, c.ua);
    let raw = conneg::read_body(c.body, n.body_limit()).await?;
    let obj = decode_body::<T>(&raw, n, &Expected::of::<T>(st, t, f))?;
    // The type is checked before the manager is recorded, which rewrites it.
    let (mut k, versioned) = defaulted_kind::<T>(obj, (t, n), f)?;
    let manager = field_manager::manager("CreateOptions", q.get("fieldManager"), ua)?;
    let via = field_manager::Via::of::<T>(t, f, T::declaration(st, t.version, t.resource, f));
    field_manager::record_update::<T>(None, &mut k, &manager, &via, f)?;
    let (code, out) = create_object::<T>(st, t, q, (k, versioned), f).await?;
    Ok(respond(n, code, &out))
}

/// The create pipeline, shared by POST and apply-creates.
pub(super) async fn create_object<T: Served>(
    st: &Context,
    t: &Target,
    q: &Params,
    (mut k, mut versioned): (T::K, Value),
    f: &T::Facts,
) -> Result<(StatusCode, T), StatusError> {
    let dry_run = q.dry_run()?;
    if T::terminating(f) {
        return Err(Status::forbidden(
            t.resource.group,
            t.resource.resource,
            &k.meta().name,
            "create not allowed while custom resource definition is terminating",
        )
        .into());
    }
    check_namespace(&mut k, t)?;
    {
        // Server-managed metadata (rest.BeforeCreate).
        let m = k.meta_mut();
        m.resource_version.clear();
        m.self_link.clear();
        m.uid = names::new_uid();
        m.creation_timestamp = Some(Time::now());
        m.generation = 1;
        m.deletion_timestamp = None;
        m.deletion_grace_period_seconds = None;
    }
    let resource = t.resource;
    if resource.status_subresource {
        status::clear_status(&mut k)?;
    }
    k.prepare_for_create();
    // Admission sees the name as requested (empty when generated).
    admission::admit(
        st,
        admission::Request::create(t.resource, t.namespace(), &k.meta().name, &k),
    )
    .await?;
    let generated = k.meta().name.is_empty() && !k.meta().generate_name.is_empty();
    if generated {
        let name = names::generate_name(&k.meta().generate_name);
        // Rules on `metadata.name` see the name the object gets.
        if let Some(Value::Object(m)) = versioned.get_mut("metadata") {
            m.insert("name".into(), Value::String(name.clone()));
        }
        k.meta_mut().name = name;
    }
    let mut errs = k.validate_create();
    errs.extend(declared_errors(
        T::declaration(st, t.version, t.resource, f),
        &versioned,
    ));
    errs.extend(validate_object_meta(k.meta(), resource.namespaced));
    valid(t.resource, &k, errs)?;
    let created = st.registry.create(resource, k, generated, dry_run).await?;
    Ok((StatusCode::CREATED, T::from_kind(created, f)))
}
