//! Namespaces when the server runs standalone (`--standalone`, the default): what
//! kube-apiserver's NamespaceLifecycle admission plugin, namespace controller and bootstrap
//! do for the core `v1` Namespace kind ([`crate::core_v1`]).
//!
//! * Creating a namespaced object needs its namespace: 404 `namespaces "x" not found` when it
//!   does not exist, 403 `... unable to create new content in namespace x because it is being
//!   terminated` while it is being deleted.
//! * DELETE of a namespace marks it `Terminating` (with `deletionTimestamp`) and answers with
//!   it, as Kubernetes does; [`finalize`] then deletes every object in it (at once, whatever
//!   their finalizers: nothing here would ever remove them) and the namespace itself, unless
//!   finalizers of its metadata hold it (then the update that removes the last one does). The request waits for that to finish (in a task of its own, so a client that
//!   hangs up does not stop it), so a namespace is gone when its DELETE returns; one left
//!   `Terminating` by a crash is finished at the next start ([`bootstrap`]).
//! * `default`, `kube-system`, `kube-public` and `kube-node-lease` exist from the start; the
//!   first three may not be deleted.

use std::collections::HashMap;
use std::sync::{Mutex, PoisonError};

use conneg::Status;
use foldhash::quality::RandomState;
use futures_util::future::BoxFuture;

use serde::Deserialize;

use super::{CORE_V1, NAMESPACES, Namespace, NamespaceStatus, PHASE_TERMINATING};
use crate::endpoints::admission::{Operation, Plugin, Request};
use crate::meta::{HasObjectMeta, Time, null_as_default};
use crate::names;
use crate::registry::backoff::ConflictBackoff;
use crate::registry::{Error, Registry, Strategy, storage_status};
use crate::resource::{ResourceInfo, Versioned};
use crate::storage::codec::decode_value;
use crate::storage::{KeyValue, ListOptions, Storage, StorageError};

/// The namespaces Kubernetes creates at start.
pub const SYSTEM_NAMESPACES: [&str; 4] =
    ["default", "kube-system", "kube-public", "kube-node-lease"];

/// The namespaces that may not be deleted.
const IMMORTAL_NAMESPACES: [&str; 3] = ["default", "kube-system", "kube-public"];

/// NamespaceLifecycle on DELETE of a namespace: the system namespaces stay.
pub fn admit_delete(name: &str) -> Result<(), Error> {
    if IMMORTAL_NAMESPACES.contains(&name) {
        return Err(Error::Forbidden {
            resource: &NAMESPACES,
            name: name.to_owned(),
            message: "this namespace may not be deleted".to_owned(),
        });
    }
    Ok(())
}

/// The NamespaceLifecycle admission plugin, first in the chain of a standalone server: a
/// namespaced object is created only in a namespace that exists and is not terminating.
/// (Deleting a system namespace is refused by the namespace strategy, [`admit_delete`].)
///
/// The namespace is read as every other read is (a consistent read, through the watch
/// cache); its phase is remembered by the revision it was read at, so that a create in a
/// namespace unchanged since is not slowed by decoding it again.
#[derive(Debug, Default)]
pub struct NamespaceLifecycle {
    /// Each namespace's key: the revision it was read at, and whether it was terminating.
    /// At most [`PHASES_KEPT`] namespaces; past them, the memo starts again.
    phases: Mutex<HashMap<String, (i64, bool), RandomState>>,
}

/// How many namespaces' phases [`NamespaceLifecycle`] remembers at most.
const PHASES_KEPT: usize = 1024;

impl Plugin for NamespaceLifecycle {
    fn name(&self) -> &'static str {
        "NamespaceLifecycle"
    }

    fn admit<'a>(
        &'a self,
        registry: &'a Registry,
        req: Request<'a>,
    ) -> BoxFuture<'a, Result<(), Status>> {
        Box::pin(async move {
            if req.operation != Operation::Create {
                return Ok(());
            }
            self.admit_create(registry, req.resource, req.namespace, req.name)
                .await
        })
    }
}

/// What the check reads of a stored namespace: its status, the rest skipped as it is decoded
/// (a create pays for no copy of the namespace's metadata).
#[derive(Deserialize)]
struct StoredPhase {
    #[serde(default, deserialize_with = "null_as_default")]
    status: NamespaceStatus,
}

impl NamespaceLifecycle {
    /// On create of an object of `resource` named `name` in `namespace`: the namespace must
    /// exist and not be terminating. Nothing is checked when namespaces are not served
    /// (behind an aggregator, kube-apiserver checks).
    async fn admit_create(
        &self,
        registry: &Registry,
        resource: &ResourceInfo,
        namespace: &str,
        name: &str,
    ) -> Result<(), Status> {
        if !resource.namespaced || !registry.serves(CORE_V1) {
            return Ok(());
        }
        let key = registry.key(&NAMESPACES, "", namespace);
        let kv = registry
            .get_stored(&NAMESPACES, &key, namespace)
            .await?
            .ok_or_else(|| Status::not_found(NAMESPACES.group, NAMESPACES.resource, namespace))?;
        let terminating = self
            .terminating(key, &kv)
            .map_err(|e| storage_status(e, &NAMESPACES, namespace))?;
        if terminating {
            return Err(refused_while_terminating(resource, namespace, name));
        }
        Ok(())
    }

    /// Whether the namespace stored as `kv` at `key` is terminating: remembered when it was
    /// read at the same revision, read from its status otherwise.
    fn terminating(&self, key: String, kv: &KeyValue) -> Result<bool, StorageError> {
        let phases = || self.phases.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(&(revision, terminating)) = phases().get(&key)
            && revision == kv.mod_revision
        {
            return Ok(terminating);
        }
        let ns: StoredPhase = decode_value(&kv.value)?;
        let terminating = ns.status.phase == PHASE_TERMINATING;
        let mut phases = phases();
        if phases.len() >= PHASES_KEPT && !phases.contains_key(&key) {
            phases.clear();
        }
        phases.insert(key, (kv.mod_revision, terminating));
        Ok(terminating)
    }
}

/// The refusal of a create of an object of `resource` named `name` in `namespace`, which is
/// terminating.
fn refused_while_terminating(resource: &ResourceInfo, namespace: &str, name: &str) -> Status {
    let mut err = Status::forbidden(
        resource.group,
        resource.resource,
        name,
        &format!(
            "unable to create new content in namespace {namespace} because it is being terminated"
        ),
    );
    if let Some(d) = err.details.as_mut() {
        d.causes.push(conneg::StatusCause::new(
            "NamespaceTerminating",
            format!("namespace {namespace} is being terminated"),
            "metadata.namespace",
        ));
    }
    err
}

/// The namespace controller's work for one namespace being deleted: delete every object of
/// every namespaced resource in it, until a pass finds none (a create admitted just before
/// the namespace turned `Terminating` may land after the first pass), then the namespace.
pub async fn finalize(registry: Registry, name: String) -> Result<(), Error> {
    // Each namespaced resource once, though served in several versions.
    let mut resources: Vec<&ResourceInfo> = Vec::new();
    let catalog = registry.catalog.get();
    for r in catalog.versions().flat_map(|v| catalog.resources(v)) {
        if r.namespaced && !resources.iter().any(|seen| seen == r) {
            resources.push(r);
        }
    }
    loop {
        let mut found = 0;
        for res in &resources {
            let prefix = registry.keys.collection(res, Some(&name));
            let page = registry
                .store
                .list(&prefix, ListOptions::default())
                .await
                .map_err(|e| Error::storage(e, res, ""))?;
            for kv in &page.items {
                found += 1;
                match registry.store.delete(&kv.key, None).await {
                    Ok(_) | Err(StorageError::NotFound { .. }) => {}
                    Err(e) => return Err(Error::storage(e, res, "")),
                }
            }
        }
        if found == 0 {
            break;
        }
    }
    // The namespace's own finalizer goes; the namespace with it, unless finalizers of its
    // metadata remain (then the update that removes the last one deletes it).
    let key = registry.key(&NAMESPACES, "", &name);
    let mut backoff = ConflictBackoff::default();
    loop {
        let Some((old, revision)) = registry.get::<Namespace>(&NAMESPACES, &key, &name).await?
        else {
            return Ok(());
        };
        let mut new = old.clone();
        new.spec.finalizers.clear();
        if registry
            .update(&NAMESPACES, &key, new, &old, revision, false)
            .await?
            .is_some()
        {
            return Ok(());
        }
        backoff.wait().await;
    }
}

/// At start, when namespaces are served: creates the system namespaces that do not exist
/// and finishes the deletion of any namespace left `Terminating`.
pub async fn bootstrap(registry: &Registry) -> Result<(), Status> {
    if !registry.serves(CORE_V1) {
        return Ok(());
    }
    for name in SYSTEM_NAMESPACES {
        let mut ns = Namespace::default();
        ns.metadata.name = name.to_owned();
        ns.apply_defaults();
        ns.prepare_for_create();
        let m = ns.meta_mut();
        m.uid = names::new_uid();
        m.creation_timestamp = Some(Time::now());
        m.generation = 1;
        let bytes = registry
            .codec
            .encode(&mut ns)
            .map_err(|e| storage_status(e, &NAMESPACES, name))?;
        match registry
            .store
            .create(&registry.keys.object(&NAMESPACES, "", name), bytes)
            .await
        {
            Ok(_) | Err(StorageError::AlreadyExists { .. }) => {}
            Err(e) => return Err(storage_status(e, &NAMESPACES, name)),
        }
    }
    for ns in registry.list_all::<Namespace>(&NAMESPACES, None).await? {
        if ns.is_terminating() {
            tracing::info!(namespace = %ns.metadata.name, "finishing the deletion of a namespace");
            finalize(registry.clone(), ns.metadata.name).await?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::meta::ObjectMeta;
    use crate::registry::delete::{DeleteOptions, deletes_on_update, plan_delete};

    const NOW: Time = Time { unix_seconds: 100 };

    /// The metadata of a namespace with `finalizers` in its metadata.
    fn meta(finalizers: &[&str]) -> ObjectMeta {
        let finalizers = finalizers.iter().map(|f| (*f).to_owned()).collect();
        ObjectMeta {
            name: "a".into(),
            finalizers,
            ..Default::default()
        }
    }

    /// An object whose kind has no finalization of its own (a namespace without the
    /// `kubernetes` finalizer).
    fn plain(metadata: ObjectMeta) -> Namespace {
        Namespace {
            metadata,
            ..Default::default()
        }
    }

    #[test]
    fn update_deletes_only_a_marked_object_without_finalizers() {
        let mut old = plain(meta(&["x/y"]));
        let bare = plain(meta(&[]));
        assert!(!deletes_on_update(&bare, &old));
        plan_delete(
            &mut old.metadata,
            &DeleteOptions::default(),
            &NAMESPACES,
            NOW,
        )
        .unwrap();
        assert!(deletes_on_update(&bare, &old));
        assert!(!deletes_on_update(&plain(meta(&["x/y"])), &old));
    }

    #[test]
    fn a_namespace_stays_while_its_own_finalizer_does() {
        let mut old = Namespace {
            metadata: meta(&["x/y"]),
            ..Default::default()
        };
        old.spec.finalizers = vec!["kubernetes".into()];
        plan_delete(
            &mut old.metadata,
            &DeleteOptions::default(),
            &NAMESPACES,
            NOW,
        )
        .unwrap();
        let mut new = old.clone();
        new.metadata.finalizers.clear();
        assert!(!deletes_on_update(&new, &old));
        new.spec.finalizers.clear();
        assert!(deletes_on_update(&new, &old));
    }

    #[test]
    fn system_namespaces_but_kube_node_lease_are_immortal() {
        for name in IMMORTAL_NAMESPACES {
            let err = Status::from(admit_delete(name).unwrap_err());
            assert_eq!(err.code, 403);
            assert_eq!(
                err.message,
                format!("namespaces \"{name}\" is forbidden: this namespace may not be deleted")
            );
        }
        assert!(admit_delete("kube-node-lease").is_ok());
        assert!(admit_delete("x").is_ok());
    }
}
