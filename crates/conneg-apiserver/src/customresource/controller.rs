//! The custom resource definition controller: it names and establishes each definition
//! (`acceptedNames`, `NamesAccepted`, `Established`), serves what the established ones
//! define (endpoints and catalog replaced while the server runs, no restart), and finishes
//! the deletion of a definition by removing its objects, then its cleanup finalizer.
//!
//! It reacts to every change of a definition in storage (so every replica over a shared
//! store serves the same), and looks again every [`RESYNC`] for what it waits on (objects
//! whose own finalizers hold up a definition's deletion).

use std::collections::HashMap;
use std::time::Duration;

use super::definition::CUSTOM_RESOURCE_DEFINITIONS as CRDS;
use super::{CustomResource, served};
use crate::apiextensions::types::{
    CLEANUP_FINALIZER, CONDITION_TRUE, CustomResourceDefinition, CustomResourceDefinitionCondition,
    CustomResourceDefinitionNames, CustomResourceDefinitionSpec, ESTABLISHED,
};
use crate::apiextensions::validation;
use crate::endpoints::{Context, Endpoint, catalog_of};
use crate::meta::{HasObjectMeta, Time};
use crate::registry::Error;
use crate::registry::delete::DeleteOptions;
use crate::resource::ResourceInfo;
use crate::storage::Storage;

/// How often the controller looks again without a change.
pub(crate) const RESYNC: Duration = Duration::from_secs(2);

/// What one definition serves, kept while it does not change: its endpoints keep their
/// facts (and their watches go on) until the definition's spec or names change.
struct Installed {
    /// What the endpoints were built from: the spec, the accepted names, whether the
    /// definition is being deleted.
    from: (
        CustomResourceDefinitionSpec,
        CustomResourceDefinitionNames,
        bool,
    ),
    endpoints: Vec<Endpoint>,
    /// Retires the endpoints (their watches end) when set.
    retire: tokio::sync::watch::Sender<bool>,
}

/// How long endpoints that are no longer served keep their watches: the events of the
/// last changes (a deleted definition's objects going) reach watchers first.
pub(crate) const RETIRE_AFTER: Duration = Duration::from_secs(1);

impl Drop for Installed {
    fn drop(&mut self) {
        let retire = self.retire.clone();
        match tokio::runtime::Handle::try_current() {
            Ok(rt) => drop(rt.spawn(async move {
                tokio::time::sleep(RETIRE_AFTER).await;
                retire.send_replace(true);
            })),
            Err(_) => drop(retire.send_replace(true)),
        }
    }
}

/// The controller of one server.
struct Controller {
    ctx: Context,
    /// The compiled endpoints.
    base: Vec<Endpoint>,
    /// What each served definition (by name) serves.
    installed: HashMap<String, Installed>,
}

/// Runs the controller for the server of `ctx`, whose compiled endpoints are `base`: one
/// pass now (so definitions in storage are served when this returns), then a task that
/// follows every change.
pub(crate) async fn start(ctx: Context, base: Vec<Endpoint>) {
    let mut c = Controller {
        ctx,
        base,
        installed: HashMap::new(),
    };
    if let Err(e) = c.reconcile().await {
        tracing::warn!(error = %e, "custom resource definitions: first pass failed");
    }
    tokio::spawn(async move {
        loop {
            c.follow().await;
            tokio::time::sleep(RESYNC).await;
        }
    });
}

impl Controller {
    /// Reconciles on every change of a definition (and every [`RESYNC`]) until the storage
    /// watch ends.
    async fn follow(&mut self) {
        let store = self.ctx.registry.store.clone();
        let Ok(from) = store.current_revision().await else {
            return;
        };
        let prefix = self.ctx.registry.keys.collection(&CRDS, None);
        let Ok(mut events) = store.watch(&prefix, from).await else {
            return;
        };
        loop {
            // A change, or a resync when none came; the end of the watch starts a new one.
            if let Ok(None | Some(Err(_))) = tokio::time::timeout(RESYNC, events.next()).await {
                return;
            }
            if let Err(e) = self.reconcile().await {
                tracing::warn!(error = %e, "custom resource definitions: reconcile failed");
            }
        }
    }

    /// One pass over every definition.
    async fn reconcile(&mut self) -> Result<(), Error> {
        let reg = self.ctx.registry.clone();
        let crds: Vec<CustomResourceDefinition> = reg.list_all(&CRDS, None).await?;
        let mut serving: Vec<Endpoint> = self.base.clone();
        // Objects are stored under their plural: a definition whose plural another served
        // resource already has (of any group) would share its keys, and is not served.
        let mut plurals: Vec<String> = self
            .base
            .iter()
            .map(|e| e.resource.resource.to_owned())
            .collect();
        let mut kept = HashMap::new();
        let mut rebuilt = false;
        for crd in &crds {
            let others: Vec<&CustomResourceDefinition> = crds
                .iter()
                .filter(|o| o.metadata.name != crd.metadata.name)
                .collect();
            let next = named(crd, &others);
            let crd = if next == *crd {
                crd.clone()
            } else {
                let key = reg.key(&CRDS, "", &crd.metadata.name);
                let rv = crd.metadata.resource_version.parse().unwrap_or(0);
                // A lost race is looked at again on the change that won it; meanwhile the
                // definition is served as it was.
                match reg.update(&CRDS, &key, next, crd, rv, false).await? {
                    Some(written) => written,
                    None => crd.clone(),
                }
            };
            if crd.metadata.deletion_timestamp.is_some()
                && let Err(e) = clean_up(&self.ctx, &crd).await
            {
                // Tried again on the next pass; the other definitions are served meanwhile.
                tracing::warn!(crd = %crd.metadata.name, error = %e, "cleanup failed");
            }
            let plural = &crd.status.accepted_names.plural;
            if !crd.condition_true(ESTABLISHED) {
                continue;
            }
            if plurals.contains(plural) {
                tracing::warn!(crd = %crd.metadata.name, "not served: its plural is another resource's");
                continue;
            }
            plurals.push(plural.clone());
            let from = (
                crd.spec.clone(),
                crd.status.accepted_names.clone(),
                crd.metadata.deletion_timestamp.is_some(),
            );
            let name = crd.metadata.name.clone();
            let installed = match self.installed.remove(&name) {
                Some(i) if i.from == from => i,
                _ => {
                    rebuilt = true;
                    let (retire, retired) = tokio::sync::watch::channel(false);
                    match served::endpoints(&crd, &retired) {
                        Ok(endpoints) => Installed {
                            from,
                            endpoints,
                            retire,
                        },
                        Err(e) => {
                            tracing::warn!(crd = %name, error = %e, "not served");
                            continue;
                        }
                    }
                }
            };
            serving.extend(installed.endpoints.iter().cloned());
            kept.insert(name, installed);
        }
        // What is no longer served is retired (dropped) once the new set is in place; an
        // unchanged set is not replaced (the OpenAPI documents stay built).
        let retired = std::mem::replace(&mut self.installed, kept);
        if rebuilt || !retired.is_empty() {
            let catalog = catalog_of(&serving);
            self.ctx.endpoints.update(|_| serving);
            reg.catalog.update(|_| catalog);
        }
        drop(retired);
        Ok(())
    }
}

/// `crd` with its accepted names and conditions (a single naming pass establishes at
/// once: there is no other replica to wait for in a shared store's order).
fn named(
    crd: &CustomResourceDefinition,
    others: &[&CustomResourceDefinition],
) -> CustomResourceDefinition {
    let mut next = crd.clone();
    let now = Time::now();
    let (names, accepted) = validation::accepted_names(crd, others);
    let established = if accepted.status == CONDITION_TRUE {
        CustomResourceDefinitionCondition::new(
            ESTABLISHED,
            CONDITION_TRUE,
            "InitialNamesAccepted",
            "the initial names have been accepted",
        )
    } else {
        validation::established_after_naming(crd, &accepted)
    };
    next.status.accepted_names = names;
    next.set_condition(accepted, now);
    next.set_condition(established, now);
    next
}

/// The resource `crd` stores its objects under.
fn stored_resource(crd: &CustomResourceDefinition) -> Option<&'static ResourceInfo> {
    let names = &crd.status.accepted_names;
    super::intern::resource(ResourceInfo::new(
        super::intern::string(&crd.spec.group),
        super::intern::string(&names.plural),
        super::intern::string(&names.singular),
        super::intern::string(&names.kind),
        super::intern::string(&names.list_kind),
        crd.namespaced(),
    ))
}

/// The deletion of `crd`: its objects are deleted (their own finalizers honoured); once
/// none is left, the cleanup finalizer goes, and with it the definition.
async fn clean_up(ctx: &Context, crd: &CustomResourceDefinition) -> Result<(), Error> {
    let reg = &ctx.registry;
    if !crd.status.accepted_names.plural.is_empty()
        && let Some(res) = stored_resource(crd)
    {
        let objects: Vec<CustomResource> = reg.list_all(res, None).await?;
        if !objects.is_empty() {
            for o in &objects {
                let (ns, name) = (&o.meta().namespace, &o.meta().name);
                let key = reg.key(res, ns, name);
                let opts = DeleteOptions::default();
                reg.delete::<CustomResource, _>(res, &key, name, &opts, |_| async { Ok(()) })
                    .await?;
            }
            if !reg.list_all::<CustomResource>(res, None).await?.is_empty() {
                return Ok(());
            }
        }
    }
    let mut next = crd.clone();
    next.metadata.finalizers.retain(|f| f != CLEANUP_FINALIZER);
    if next != *crd {
        let key = reg.key(&CRDS, "", &crd.metadata.name);
        let rv = crd.metadata.resource_version.parse().unwrap_or(0);
        reg.update(&CRDS, &key, next, crd, rv, false).await?;
    }
    Ok(())
}
