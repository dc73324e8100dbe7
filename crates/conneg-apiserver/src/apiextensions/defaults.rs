//! v1 defaulting of a `CustomResourceDefinition`, run on every write before validation:
//! `singular` is the kind in lower case, `listKind` the kind plus `List`, `conversion` is
//! `{strategy: None}`, a webhook Service's port is 443, and `status.storedVersions` starts
//! with the storage version.

use super::types::{CustomResourceConversion, CustomResourceDefinition, NONE_CONVERTER};

/// `SetDefaults_CustomResourceDefinition`, with the Service-port default of the webhook.
///
/// ```
/// use conneg_apiserver::apiextensions::{defaults::set_defaults, types::*};
///
/// let mut crd = CustomResourceDefinition::default();
/// crd.spec.names.kind = "CronTab".into();
/// crd.spec.versions.push(CustomResourceDefinitionVersion {
///     name: "v1".into(), served: true, storage: true, ..Default::default()
/// });
/// set_defaults(&mut crd);
/// assert_eq!(crd.spec.names.singular, "crontab");
/// assert_eq!(crd.spec.names.list_kind, "CronTabList");
/// assert_eq!(crd.spec.conversion.unwrap().strategy, "None");
/// assert_eq!(crd.status.stored_versions, ["v1"]);
/// ```
pub fn set_defaults(crd: &mut CustomResourceDefinition) {
    let names = &mut crd.spec.names;
    if names.singular.is_empty() {
        names.singular = names.kind.to_lowercase();
    }
    if names.list_kind.is_empty() && !names.kind.is_empty() {
        names.list_kind = format!("{}List", names.kind);
    }
    let conversion = crd
        .spec
        .conversion
        .get_or_insert_with(|| CustomResourceConversion {
            strategy: NONE_CONVERTER.to_owned(),
            webhook: None,
        });
    if let Some(service) = conversion
        .webhook
        .as_mut()
        .and_then(|w| w.client_config.as_mut())
        .and_then(|c| c.service.as_mut())
    {
        service.port.get_or_insert(443);
    }
    if crd.status.stored_versions.is_empty()
        && let Some(v) = crd.spec.versions.iter().find(|v| v.storage)
    {
        crd.status.stored_versions.push(v.name.clone());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::apiextensions::types::*;

    #[test]
    fn fills_only_what_is_missing() {
        let mut crd = CustomResourceDefinition::default();
        set_defaults(&mut crd);
        // No kind: singular stays empty (lower case of ""), listKind is not made up.
        assert_eq!(crd.spec.names.singular, "");
        assert_eq!(crd.spec.names.list_kind, "");
        assert!(crd.status.stored_versions.is_empty());
        assert_eq!(crd.spec.conversion.as_ref().unwrap().strategy, "None");

        let mut crd = CustomResourceDefinition::default();
        crd.spec.names = CustomResourceDefinitionNames {
            kind: "CronTab".into(),
            singular: "ct1".into(),
            list_kind: "Tabs".into(),
            ..Default::default()
        };
        crd.spec.conversion = Some(CustomResourceConversion {
            strategy: "Webhook".into(),
            webhook: Some(WebhookConversion {
                client_config: Some(WebhookClientConfig {
                    service: Some(ServiceReference::default()),
                    ..Default::default()
                }),
                conversion_review_versions: vec![],
            }),
        });
        for (name, storage) in [("v1", false), ("v2", true)] {
            crd.spec.versions.push(CustomResourceDefinitionVersion {
                name: name.into(),
                storage,
                ..Default::default()
            });
        }
        crd.status.stored_versions = vec!["v0".into()];
        set_defaults(&mut crd);
        assert_eq!(crd.spec.names.singular, "ct1");
        assert_eq!(crd.spec.names.list_kind, "Tabs");
        let conversion = crd.spec.conversion.as_ref().unwrap();
        assert_eq!(conversion.strategy, "Webhook");
        let port = conversion.webhook.as_ref().unwrap().client_config.as_ref();
        assert_eq!(port.unwrap().service.as_ref().unwrap().port, Some(443));
        // storedVersions is seeded only when empty.
        assert_eq!(crd.status.stored_versions, ["v0"]);
        crd.status.stored_versions.clear();
        set_defaults(&mut crd);
        assert_eq!(crd.status.stored_versions, ["v2"]);
    }
}
