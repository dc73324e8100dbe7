//! What the generic registry needs to serve the configuration objects: their validation
//! (as Kubernetes' `ValidateFlowSchema` and `ValidatePriorityLevelConfiguration`, for the
//! fields this server acts on), their columns (as `kubectl get` prints them) and their
//! OpenAPI schemas.

use serde_json::{Value, json};

use super::objects::{
    BY_NAMESPACE, BY_USER, EXEMPT, FlowSchema, LIMITED, PriorityLevelConfiguration, QUEUE, REJECT,
};
use crate::definitions::{Definitions, OpenApiSchema};
use crate::registry::{Column, ServedVersion, Strategy};
use crate::validation::{BadValue, FieldError};

fn one_of(path: &str, value: &str, allowed: &[&str], out: &mut Vec<FieldError>) {
    if !allowed.contains(&value) {
        out.push(FieldError::not_supported(
            path,
            BadValue::String(value.to_owned()),
            allowed,
        ));
    }
}

impl Strategy for FlowSchema {
    type Stored = FlowSchema;

    fn validate_create(&self) -> Vec<FieldError> {
        let mut out = Vec::new();
        let spec = &self.spec;
        if !(1..=10000).contains(&spec.matching_precedence) {
            out.push(FieldError::invalid_value(
                "spec.matchingPrecedence",
                BadValue::Int(i64::from(spec.matching_precedence)),
                "must be between 1 and 10000, inclusive",
            ));
        }
        if spec.priority_level_configuration.name.is_empty() {
            out.push(FieldError::required(
                "spec.priorityLevelConfiguration.name",
                "must reference a priority level",
            ));
        }
        if let Some(d) = &spec.distinguisher_method {
            one_of(
                "spec.distinguisherMethod.type",
                &d.type_,
                &[BY_USER, BY_NAMESPACE],
                &mut out,
            );
        }
        for (i, rule) in spec.rules.iter().enumerate() {
            if rule.subjects.is_empty() {
                out.push(FieldError::required(
                    &format!("spec.rules[{i}].subjects"),
                    "subjects must contain at least one value",
                ));
            }
            for (j, s) in rule.subjects.iter().enumerate() {
                let path = format!("spec.rules[{i}].subjects[{j}]");
                let named = match s.kind.as_str() {
                    "User" => s.user.is_some(),
                    "Group" => s.group.is_some(),
                    "ServiceAccount" => s.service_account.is_some(),
                    other => {
                        one_of(
                            &format!("{path}.kind"),
                            other,
                            &["Group", "ServiceAccount", "User"],
                            &mut out,
                        );
                        true
                    }
                };
                if !named {
                    out.push(FieldError::required(
                        &path,
                        &format!(
                            "{} is required when subject kind is '{}'",
                            s.kind.to_lowercase(),
                            s.kind
                        ),
                    ));
                }
            }
            if rule.resource_rules.is_empty() && rule.non_resource_rules.is_empty() {
                out.push(FieldError::required(
                    &format!("spec.rules[{i}]"),
                    "at least one of resourceRules and nonResourceRules has to be non-empty",
                ));
            }
        }
        out
    }

    fn versions() -> Vec<ServedVersion<Self>> {
        vec![ServedVersion::of::<FlowSchema>()]
    }

    fn same_spec(&self, other: &Self) -> bool {
        self.spec == other.spec
    }

    const COLUMNS: &'static [Column] = &[
        Column::new(
            "PriorityLevel",
            "string",
            "The priority level of the matched requests.",
        ),
        Column::new("MatchingPrecedence", "string", "Lower matches first."),
        Column::new(
            "DistinguisherMethod",
            "string",
            "How matched requests split into flows.",
        ),
        Column::new(
            "MissingPL",
            "string",
            "Whether the priority level does not exist.",
        ),
    ];

    fn cells(&self) -> Vec<Value> {
        let dangling = self
            .status
            .conditions
            .iter()
            .find(|c| c.type_ == "Dangling")
            .map_or("?", |c| c.status.as_str());
        vec![
            json!(self.spec.priority_level_configuration.name),
            json!(self.spec.matching_precedence.to_string()),
            json!(
                self.spec
                    .distinguisher_method
                    .as_ref()
                    .map_or("<none>", |d| d.type_.as_str())
            ),
            json!(dangling),
        ]
    }
}

impl Strategy for PriorityLevelConfiguration {
    type Stored = PriorityLevelConfiguration;

    fn validate_create(&self) -> Vec<FieldError> {
        let mut out = Vec::new();
        let spec = &self.spec;
        one_of("spec.type", &spec.type_, &[EXEMPT, LIMITED], &mut out);
        if spec.type_ == LIMITED {
            let Some(limited) = &spec.limited else {
                out.push(FieldError::required(
                    "spec.limited",
                    "must not be empty when type is Limited",
                ));
                return out;
            };
            if limited.nominal_concurrency_shares.is_some_and(|s| s < 0) {
                out.push(FieldError::invalid_value(
                    "spec.limited.nominalConcurrencyShares",
                    BadValue::Int(i64::from(limited.nominal_concurrency_shares.unwrap_or(0))),
                    "must be a non-negative integer",
                ));
            }
            let response = &limited.limit_response;
            one_of(
                "spec.limited.limitResponse.type",
                &response.type_,
                &[QUEUE, REJECT],
                &mut out,
            );
            if response.type_ == QUEUE {
                match &response.queuing {
                    None => out.push(FieldError::required(
                        "spec.limited.limitResponse.queuing",
                        "must not be empty if type is Queue",
                    )),
                    Some(q) => {
                        let p = "spec.limited.limitResponse.queuing";
                        if !(1..=512).contains(&q.queues) {
                            out.push(FieldError::invalid_value(
                                &format!("{p}.queues"),
                                BadValue::Int(i64::from(q.queues)),
                                "must be between 1 and 512, inclusive",
                            ));
                        }
                        if q.hand_size < 1 || q.hand_size > q.queues {
                            out.push(FieldError::invalid_value(
                                &format!("{p}.handSize"),
                                BadValue::Int(i64::from(q.hand_size)),
                                "must be positive and not greater than queues",
                            ));
                        }
                        if q.queue_length_limit < 1 {
                            out.push(FieldError::invalid_value(
                                &format!("{p}.queueLengthLimit"),
                                BadValue::Int(i64::from(q.queue_length_limit)),
                                "must be positive",
                            ));
                        }
                    }
                }
            }
        }
        out
    }

    fn versions() -> Vec<ServedVersion<Self>> {
        vec![ServedVersion::of::<PriorityLevelConfiguration>()]
    }

    fn same_spec(&self, other: &Self) -> bool {
        self.spec == other.spec
    }

    const COLUMNS: &'static [Column] = &[
        Column::new("Type", "string", "Exempt or Limited."),
        Column::new(
            "NominalConcurrencyShares",
            "string",
            "The level's share of the seats.",
        ),
        Column::new("Queues", "string", "Queues of the level."),
        Column::new("HandSize", "string", "Queues dealt to each flow."),
        Column::new("QueueLengthLimit", "string", "Requests one queue may hold."),
    ];

    fn cells(&self) -> Vec<Value> {
        let limited = self.spec.limited.as_ref();
        let queuing = limited.and_then(|l| l.limit_response.queuing.as_ref());
        let shares = limited
            .and_then(|l| l.nominal_concurrency_shares)
            .or_else(|| {
                self.spec
                    .exempt
                    .as_ref()
                    .and_then(|e| e.nominal_concurrency_shares)
            })
            .map_or("<none>".to_owned(), |s| s.to_string());
        let q = |f: fn(&super::objects::QueuingConfiguration) -> i32| {
            queuing.map_or("<none>".to_owned(), |q| f(q).to_string())
        };
        vec![
            json!(self.spec.type_),
            json!(shares),
            json!(q(|q| q.queues)),
            json!(q(|q| q.hand_size)),
            json!(q(|q| q.queue_length_limit)),
        ]
    }
}

/// A free-form object property: the server keeps the fields it knows.
fn free_form(description: &str) -> Value {
    json!({"type": "object", "description": description, "x-kubernetes-preserve-unknown-fields": true})
}

fn spec_and_status(spec: &str, status: &str) -> serde_json::Map<String, Value> {
    let mut props = serde_json::Map::new();
    props.insert("spec".into(), free_form(spec));
    props.insert("status".into(), free_form(status));
    props
}

impl OpenApiSchema for FlowSchema {
    fn definitions(d: &mut Definitions<'_>) {
        d.object(
            "FlowSchema",
            "FlowSchema defines the schema of a group of flows.",
            spec_and_status(
                "FlowSchemaSpec describes how the FlowSchema's specification looks like.",
                "FlowSchemaStatus represents the current state of a FlowSchema.",
            ),
        );
        d.list("FlowSchemaList", "FlowSchema");
    }
}

impl OpenApiSchema for PriorityLevelConfiguration {
    fn definitions(d: &mut Definitions<'_>) {
        d.object(
            "PriorityLevelConfiguration",
            "PriorityLevelConfiguration represents the configuration of a priority level.",
            spec_and_status(
                "PriorityLevelConfigurationSpec specifies the configuration of a priority level.",
                "PriorityLevelConfigurationStatus represents the current state of a priority level.",
            ),
        );
        d.list(
            "PriorityLevelConfigurationList",
            "PriorityLevelConfiguration",
        );
    }
}
