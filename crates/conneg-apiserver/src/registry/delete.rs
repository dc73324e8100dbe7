//! The end of an object's life, written once for every kind, as Kubernetes' generic registry
//! store does it for kinds without graceful deletion (no `CheckGracefulDelete` strategy):
//!
//! * `DeleteOptions`, from a body in the request's codec or else from the query, validated as
//!   `ValidateDeleteOptions` does: `preconditions`, `gracePeriodSeconds` (accepted; these kinds
//!   have no grace period), `propagationPolicy`, the deprecated `orphanDependents`, `dryRun`;
//! * the garbage collector's finalizers: `Orphan` adds `orphan`, `Foreground` adds
//!   `foregroundDeletion`, `Background` removes both (nothing here collects garbage: the
//!   finalizers only hold the object until a client removes them);
//! * while an object has finalizers a DELETE only marks it (`deletionTimestamp`,
//!   `deletionGracePeriodSeconds: 0`, generation + 1) and keeps it; watchers see MODIFIED;
//! * an update that removes the last finalizer of a marked object deletes it; watchers see
//!   DELETED.
//!
//! The rules an update must follow once deletion started (no new finalizers, no change to the
//! deletion fields) are object-metadata validation, in `api::validation`.

use http::StatusCode;
use serde::Deserialize;

use super::backoff::ConflictBackoff;
use super::{Error, Object, Registry};
use crate::meta::{FINALIZER_FOREGROUND, FINALIZER_ORPHAN, ObjectMeta, Time, null_as_default};
use crate::resource::ResourceInfo;
use crate::validation::{BadValue, FieldError};

/// `metav1.DeleteOptions`.
#[derive(Debug, Default, Clone, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct DeleteOptions {
    /// Seconds before the object should be deleted; no effect on kinds without graceful
    /// deletion.
    #[serde(default)]
    pub(crate) grace_period_seconds: Option<i64>,
    /// Conditions the stored object must meet.
    #[serde(default)]
    pub(crate) preconditions: Option<Preconditions>,
    /// Deprecated form of `propagationPolicy`: `true` is `Orphan`, `false` is `Background`.
    #[serde(default)]
    pub(crate) orphan_dependents: Option<bool>,
    /// `Orphan`, `Background` or `Foreground`.
    #[serde(default)]
    pub(crate) propagation_policy: Option<String>,
    /// `["All"]`: decide and answer, change nothing.
    #[serde(default, deserialize_with = "null_as_default")]
    pub(crate) dry_run: Vec<String>,
}

/// `metav1.Preconditions`.
#[derive(Debug, Default, Clone, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Preconditions {
    /// The object's uid must be this.
    #[serde(default)]
    pub(crate) uid: Option<String>,
    /// The object's resourceVersion must be this.
    #[serde(default)]
    pub(crate) resource_version: Option<String>,
}

impl DeleteOptions {
    /// `ValidateDeleteOptions`: 422 `DeleteOptions.meta.k8s.io "" is invalid: ...`.
    pub(crate) fn validate(&self) -> Result<(), Error> {
        let mut errs = Vec::new();
        if let Some(policy) = &self.propagation_policy {
            if self.orphan_dependents.is_some() {
                errs.push(FieldError::invalid(
                    "propagationPolicy",
                    policy,
                    "orphanDependents and deletionPropagation cannot be both set",
                ));
            }
            if !matches!(policy.as_str(), "Foreground" | "Background" | "Orphan") {
                errs.push(FieldError::not_supported(
                    "propagationPolicy",
                    BadValue::String(policy.clone()),
                    &["Foreground", "Background", "Orphan", "nil"],
                ));
            }
        }
        if self.dry_run.iter().any(|v| v != "All") {
            errs.push(FieldError::not_supported(
                "dryRun",
                BadValue::Strings(self.dry_run.clone()),
                &["All"],
            ));
        }
        if errs.is_empty() {
            Ok(())
        } else {
            Err(Error::invalid_options("DeleteOptions", errs))
        }
    }

    /// Whether nothing may change (`dryRun: ["All"]`; other values were refused).
    pub(crate) fn dry_run(&self) -> bool {
        !self.dry_run.is_empty()
    }

    /// The answer's status: 202 Accepted for an object kept (finalizers pending) when the
    /// client asked for `orphanDependents: false`, 200 otherwise, as Kubernetes answers.
    pub(crate) fn status_code(&self, deleted: bool) -> StatusCode {
        if !deleted && self.orphan_dependents == Some(false) {
            StatusCode::ACCEPTED
        } else {
            StatusCode::OK
        }
    }

    /// `rest.BeforeDelete`'s precondition check, with its conflict messages.
    fn check_preconditions(
        &self,
        meta: &ObjectMeta,
        resource: &'static ResourceInfo,
    ) -> Result<(), Error> {
        let Some(p) = &self.preconditions else {
            return Ok(());
        };
        if let Some(uid) = p.uid.as_deref().filter(|u| *u != meta.uid) {
            return Err(Error::Precondition {
                resource,
                name: meta.name.clone(),
                message: format!(
                    "the UID in the precondition ({uid}) does not match the UID in record ({}). The object might have been deleted and then recreated",
                    meta.uid
                ),
            });
        }
        if let Some(rv) = p
            .resource_version
            .as_deref()
            .filter(|rv| *rv != meta.resource_version)
        {
            return Err(Error::Precondition {
                resource,
                name: meta.name.clone(),
                message: format!(
                    "the ResourceVersion in the precondition ({rv}) does not match the ResourceVersion in record ({}). The object might have been modified",
                    meta.resource_version
                ),
            });
        }
        Ok(())
    }

    /// `shouldOrphanDependents`: an explicit option wins, then the finalizers already set.
    fn orphans(&self, meta: &ObjectMeta) -> bool {
        if let Some(orphan) = self.orphan_dependents {
            return orphan;
        }
        match self.propagation_policy.as_deref() {
            Some("Orphan") => true,
            Some(_) => false,
            None => first_gc_finalizer(meta) == Some(FINALIZER_ORPHAN),
        }
    }

    /// `shouldDeleteDependents`: an explicit option wins, then the finalizers already set.
    fn foreground(&self, meta: &ObjectMeta) -> bool {
        if self.orphan_dependents.is_some() {
            return false;
        }
        match self.propagation_policy.as_deref() {
            Some(policy) => policy == "Foreground",
            None => first_gc_finalizer(meta) == Some(FINALIZER_FOREGROUND),
        }
    }
}

fn first_gc_finalizer(meta: &ObjectMeta) -> Option<&str> {
    meta.finalizers
        .iter()
        .map(String::as_str)
        .find(|f| *f == FINALIZER_ORPHAN || *f == FINALIZER_FOREGROUND)
}

/// What a DELETE does to the stored object.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Deletion {
    /// Remove it from storage.
    Now,
    /// Keep it with the metadata [`plan_delete`] changed: finalizers are pending.
    Keep,
}

/// Decides a DELETE of the object whose metadata is `meta` (as stored, resourceVersion
/// included) and changes `meta` as the deletion requires: preconditions (409), the garbage
/// collector's finalizers per the options (`deletionFinalizersForGarbageCollection`), then,
/// while finalizers remain, the deletion mark (`markAsDeleting`).
pub(crate) fn plan_delete(
    meta: &mut ObjectMeta,
    opts: &DeleteOptions,
    resource: &'static ResourceInfo,
    now: Time,
) -> Result<Deletion, Error> {
    opts.check_preconditions(meta, resource)?;
    let (orphan, foreground) = (opts.orphans(meta), opts.foreground(meta));
    let mut finalizers: Vec<String> = meta
        .finalizers
        .iter()
        .filter(|f| *f != FINALIZER_ORPHAN && *f != FINALIZER_FOREGROUND)
        .cloned()
        .collect();
    finalizers.extend(orphan.then(|| FINALIZER_ORPHAN.to_owned()));
    finalizers.extend(foreground.then(|| FINALIZER_FOREGROUND.to_owned()));
    // Kubernetes compares the two as sets and keeps the stored order when they are equal.
    let same_set = finalizers.iter().all(|f| meta.finalizers.contains(f))
        && meta.finalizers.iter().all(|f| finalizers.contains(f));
    if !same_set {
        meta.finalizers = finalizers;
    }
    if meta.finalizers.is_empty() {
        return Ok(Deletion::Now);
    }
    mark_deleting(meta, now);
    Ok(Deletion::Keep)
}

/// `markAsDeleting`: the deletion mark, set once (generation + 1 the first time).
fn mark_deleting(meta: &mut ObjectMeta, now: Time) {
    if meta.deletion_timestamp.is_none() && meta.generation > 0 {
        meta.generation += 1;
    }
    if meta.deletion_timestamp.is_none_or(|t| t > now) {
        meta.deletion_timestamp = Some(now);
    }
    meta.deletion_grace_period_seconds = Some(0);
}

/// Whether an update from `old` to `new` deletes the object (`shouldDeleteDuringUpdate`):
/// its deletion has started, it has no grace period left, and `new` has no finalizers, of
/// its metadata or of its kind ([`Object::finalizing`]).
pub(crate) fn deletes_on_update<K: Object>(new: &K, old: &K) -> bool {
    let (nm, om) = (new.meta(), old.meta());
    nm.finalizers.is_empty()
        && !new.finalizing()
        && om.deletion_timestamp.is_some()
        && om.deletion_grace_period_seconds.unwrap_or(0) == 0
}

/// What a DELETE did.
#[derive(Debug)]
pub(crate) struct Deleted<K> {
    /// The object: as it was before removal, or as kept.
    pub(crate) object: K,
    /// Whether it was removed from storage (or, in a dry run, would have been).
    pub(crate) deleted: bool,
}

impl Registry {
    /// Deletes the object at `key` with `opts` (the generic store's `Delete`): `None` when
    /// there is no such object. `check` runs on (a copy of) the stored object each time it is
    /// read, before anything changes (Kubernetes' `deleteValidation`: admission, for the
    /// endpoints). A lost compare-and-swap race is retried; only the client's preconditions
    /// conflict.
    pub(crate) async fn delete<K: Object, F>(
        &self,
        res: &'static ResourceInfo,
        key: &str,
        name: &str,
        opts: &DeleteOptions,
        check: impl Fn(K) -> F,
    ) -> Result<Option<Deleted<K>>, Error>
    where
        F: Future<Output = Result<(), Error>>,
    {
        let mut backoff = ConflictBackoff::default();
        loop {
            let Some((old, revision)) = self.get::<K>(res, key, name).await? else {
                return Ok(None);
            };
            check(old.clone()).await?;
            let mut kept = old.clone();
            let now = Time::now();
            let mut plan = plan_delete(kept.meta_mut(), opts, res, now)?;
            // A kind that finishes its own deletion (a namespace) is kept, marked, until it has.
            let finishes = kept.begin_delete()?;
            if finishes {
                mark_deleting(kept.meta_mut(), now);
                plan = Deletion::Keep;
            }
            match plan {
                Deletion::Keep => {
                    let written = if kept == old {
                        Some(old)
                    } else {
                        self.update(res, key, kept, &old, revision, opts.dry_run())
                            .await?
                    };
                    if let Some(object) = written {
                        if finishes && !opts.dry_run() {
                            // In a task of its own: a client that hangs up does not stop it.
                            tokio::spawn(K::finalize(self.clone(), object.clone()))
                                .await
                                .map_err(|e| {
                                    Error::Internal(format!("deletion task failed: {e}"))
                                })??;
                        }
                        return Ok(Some(Deleted {
                            object,
                            deleted: false,
                        }));
                    }
                }
                Deletion::Now => {
                    if let Some(object) =
                        self.remove(res, key, old, revision, opts.dry_run()).await?
                    {
                        return Ok(Some(Deleted {
                            object,
                            deleted: true,
                        }));
                    }
                }
            }
            backoff.wait().await;
        }
    }
}

#[cfg(test)]
mod tests {
    use conneg::Status;

    use super::*;

    /// A resource whose kind is `Namespace`, as the conflict messages below name it.
    static NAMESPACES: ResourceInfo = ResourceInfo::new(
        "",
        "namespaces",
        "namespace",
        "Namespace",
        "NamespaceList",
        false,
    );

    fn meta(finalizers: &[&str]) -> ObjectMeta {
        ObjectMeta {
            name: "a".into(),
            uid: "u1".into(),
            resource_version: "7".into(),
            generation: 1,
            finalizers: finalizers.iter().map(|f| (*f).to_owned()).collect(),
            ..Default::default()
        }
    }

    fn opts(policy: Option<&str>, orphan: Option<bool>) -> DeleteOptions {
        DeleteOptions {
            propagation_policy: policy.map(str::to_owned),
            orphan_dependents: orphan,
            ..Default::default()
        }
    }

    const NOW: Time = Time { unix_seconds: 100 };

    #[test]
    fn no_finalizers_deletes_now() {
        let mut m = meta(&[]);
        let plan = plan_delete(&mut m, &DeleteOptions::default(), &NAMESPACES, NOW).unwrap();
        assert_eq!(plan, Deletion::Now);
        assert_eq!(m, meta(&[]));
    }

    #[test]
    fn finalizers_mark_once() {
        let mut m = meta(&["x/y"]);
        let plan = plan_delete(&mut m, &DeleteOptions::default(), &NAMESPACES, NOW).unwrap();
        assert_eq!(plan, Deletion::Keep);
        assert_eq!(m.deletion_timestamp, Some(NOW));
        assert_eq!(m.deletion_grace_period_seconds, Some(0));
        assert_eq!(m.generation, 2);
        // A second DELETE, later, changes nothing.
        let before = m.clone();
        let later = Time { unix_seconds: 200 };
        let plan = plan_delete(&mut m, &DeleteOptions::default(), &NAMESPACES, later).unwrap();
        assert_eq!(plan, Deletion::Keep);
        assert_eq!(m, before);
    }

    #[test]
    fn propagation_sets_gc_finalizers() {
        type Case<'a> = (Option<&'a str>, Option<bool>, &'a [&'a str], &'a [&'a str]);
        let cases: [Case<'_>; 7] = [
            (Some("Orphan"), None, &[], &["orphan"]),
            (
                Some("Foreground"),
                None,
                &["x/y"],
                &["x/y", "foregroundDeletion"],
            ),
            (None, Some(true), &[], &["orphan"]),
            (Some("Background"), None, &["orphan", "x/y"], &["x/y"]),
            (None, Some(false), &["orphan"], &[]),
            // No option: the finalizer already there decides, and stays.
            (None, None, &["foregroundDeletion"], &["foregroundDeletion"]),
            (
                Some("Foreground"),
                None,
                &["orphan"],
                &["foregroundDeletion"],
            ),
        ];
        for (policy, orphan, before, after) in cases {
            let mut m = meta(before);
            let plan = plan_delete(&mut m, &opts(policy, orphan), &NAMESPACES, NOW).unwrap();
            assert_eq!(m.finalizers, after, "{policy:?} {orphan:?} {before:?}");
            let want = if after.is_empty() {
                Deletion::Now
            } else {
                Deletion::Keep
            };
            assert_eq!(plan, want, "{policy:?} {orphan:?} {before:?}");
        }
    }

    #[test]
    fn preconditions_conflict_with_kubernetes_messages() {
        let mut o = DeleteOptions {
            preconditions: Some(Preconditions {
                uid: Some("u2".into()),
                resource_version: None,
            }),
            ..Default::default()
        };
        let e = Status::from(plan_delete(&mut meta(&[]), &o, &NAMESPACES, NOW).unwrap_err());
        assert_eq!(e.code, 409);
        assert_eq!(
            e.message,
            "Operation cannot be fulfilled on Namespace \"a\": the UID in the precondition (u2) does not match the UID in record (u1). The object might have been deleted and then recreated"
        );
        o.preconditions = Some(Preconditions {
            uid: Some("u1".into()),
            resource_version: Some("6".into()),
        });
        let e = Status::from(plan_delete(&mut meta(&[]), &o, &NAMESPACES, NOW).unwrap_err());
        assert_eq!(
            e.message,
            "Operation cannot be fulfilled on Namespace \"a\": the ResourceVersion in the precondition (6) does not match the ResourceVersion in record (7). The object might have been modified"
        );
    }

    #[test]
    fn invalid_options_are_refused() {
        let e = Status::from(opts(Some("Orphan"), Some(true)).validate().unwrap_err());
        assert_eq!(
            e.message,
            "DeleteOptions.meta.k8s.io \"\" is invalid: propagationPolicy: Invalid value: \"Orphan\": orphanDependents and deletionPropagation cannot be both set"
        );
        let e = Status::from(opts(Some("Sideways"), None).validate().unwrap_err());
        assert_eq!(
            e.message,
            "DeleteOptions.meta.k8s.io \"\" is invalid: propagationPolicy: Unsupported value: \"Sideways\": supported values: \"Foreground\", \"Background\", \"Orphan\", \"nil\""
        );
        let o = DeleteOptions {
            dry_run: vec!["Some".into()],
            ..Default::default()
        };
        let e = Status::from(o.validate().unwrap_err());
        assert_eq!(
            e.message,
            "DeleteOptions.meta.k8s.io \"\" is invalid: dryRun: Unsupported value: []string{\"Some\"}: supported values: \"All\""
        );
    }
}
