//! The configuration as stored objects, when the server serves
//! `flowcontrol.apiserver.k8s.io/v1` (standalone): [`bootstrap`] creates the built-in
//! objects that are missing, and [`follow`] puts every change of the stored objects in force
//! in the [`Dispatcher`], as Kubernetes' configuration controller does.

use std::sync::Arc;
use std::time::Duration;

use conneg::Status;

use super::bootstrap as built_in;
use super::dispatcher::Dispatcher;
use super::objects::{
    FLOW_SCHEMAS, FLOWCONTROL_V1, FlowSchema, PRIORITY_LEVEL_CONFIGURATIONS,
    PriorityLevelConfiguration,
};
use crate::meta::Time;
use crate::names;
use crate::registry::{Object, Registry};
use crate::resource::ResourceInfo;
use crate::storage::Storage;

/// How long before a watch that ended is started again.
const REWATCH: Duration = Duration::from_secs(1);

async fn create_missing<K: Object>(
    registry: &Registry,
    res: &'static ResourceInfo,
    objects: Vec<K>,
) -> Result<(), Status> {
    for mut obj in objects {
        let name = obj.meta().name.clone();
        let key = registry.key(res, "", &name);
        if registry.get::<K>(res, &key, &name).await?.is_some() {
            continue;
        }
        let m = obj.meta_mut();
        m.uid = names::new_uid();
        m.creation_timestamp = Some(Time::now());
        m.generation = 1;
        if let Err(e) = registry.create(res, obj, false, false).await {
            // Another replica created it first, most likely; the next start tries again.
            tracing::warn!(%name, error = %Status::from(e), "flowcontrol: built-in object not created");
        }
    }
    Ok(())
}

/// Creates the mandatory and suggested objects that are not stored, when they are served.
///
/// # Errors
///
/// When storage fails.
pub(crate) async fn bootstrap(registry: &Registry) -> Result<(), Status> {
    if !registry.serves(FLOWCONTROL_V1) {
        return Ok(());
    }
    let mut levels = built_in::mandatory_priority_levels();
    levels.extend(built_in::suggested_priority_levels());
    create_missing(registry, &PRIORITY_LEVEL_CONFIGURATIONS, levels).await?;
    let mut schemas = built_in::mandatory_flow_schemas();
    schemas.extend(built_in::suggested_flow_schemas());
    create_missing(registry, &FLOW_SCHEMAS, schemas).await
}

/// Reads the stored objects and puts them in force.
async fn load(registry: &Registry, dispatcher: &Dispatcher) -> Result<(), Status> {
    let schemas: Vec<FlowSchema> = registry.list_all(&FLOW_SCHEMAS, None).await?;
    let levels: Vec<PriorityLevelConfiguration> = registry
        .list_all(&PRIORITY_LEVEL_CONFIGURATIONS, None)
        .await?;
    dispatcher.apply(schemas, levels);
    Ok(())
}

/// Puts the stored configuration in force now, then after every change, for as long as the
/// server runs (a task); nothing when the objects are not served.
pub(crate) async fn follow(registry: Registry, dispatcher: Arc<Dispatcher>) -> Result<(), Status> {
    if !registry.serves(FLOWCONTROL_V1) {
        return Ok(());
    }
    load(&registry, &dispatcher).await?;
    tokio::spawn(async move {
        loop {
            watch_once(&registry, &dispatcher).await;
            tokio::time::sleep(REWATCH).await;
        }
    });
    Ok(())
}

/// Watches both collections from the current revision, reloading on every event, until a
/// watch ends.
async fn watch_once(registry: &Registry, dispatcher: &Dispatcher) {
    let store = &registry.store;
    let Ok(from) = store.current_revision().await else {
        return;
    };
    let schemas = registry.keys.collection(&FLOW_SCHEMAS, None);
    let levels = registry
        .keys
        .collection(&PRIORITY_LEVEL_CONFIGURATIONS, None);
    let (Ok(mut schemas), Ok(mut levels)) = (
        store.watch(&schemas, from).await,
        store.watch(&levels, from).await,
    ) else {
        return;
    };
    // Whatever changed between the load and the watch.
    if let Err(e) = load(registry, dispatcher).await {
        tracing::warn!(error = %e, "flowcontrol: configuration not reloaded");
    }
    loop {
        let event = tokio::select! {
            e = schemas.next() => e,
            e = levels.next() => e,
        };
        if !matches!(event, Some(Ok(_))) {
            return;
        }
        if let Err(e) = load(registry, dispatcher).await {
            tracing::warn!(error = %e, "flowcontrol: configuration not reloaded");
        }
    }
}
