//! The options of a list or watch request (`metav1.ListOptions`), defaulted and validated as
//! Kubernetes does with the WatchList feature on, and what they ask of a watch (KEP-3157,
//! "watch-list": the current state as `ADDED` events, then a bookmark marking its end).
//!
//! Kind-agnostic: nothing here knows which resource is listed.
//!
//! * Defaults (apimachinery's `SetListOptionsDefaults`): a watch with neither
//!   `sendInitialEvents` nor `resourceVersionMatch`, starting at `resourceVersion` `""` or
//!   `"0"`, is a watch-list (`sendInitialEvents=true`, `resourceVersionMatch=NotOlderThan`);
//!   that is what such a watch always did here (the current state first).
//! * Validation (`ValidateListOptions`): a forbidden combination is a 422 `Invalid` Status
//!   for `ListOptions.meta.k8s.io ""`, one cause per rule broken, worded as apimachinery.
//! * The end-of-initial-events bookmark is sent only with `allowWatchBookmarks=true`, as the
//!   watch cache does; apimachinery does not require it (that would break clients that got
//!   initial events with `resourceVersion=0` before watch-list existed).

use serde_json::{Value, json};

use super::{Params, StatusError};
use crate::registry;
use crate::validation::{BadValue, FieldError};

/// The annotation on the bookmark that ends a watch's initial events.
pub(super) const INITIAL_EVENTS_END: &str = "k8s.io/initial-events-end";

const EXACT: &str = "Exact";
const NOT_OLDER_THAN: &str = "NotOlderThan";
const RV_MATCH: &str = "resourceVersionMatch";
const SEND_INITIAL_EVENTS: &str = "sendInitialEvents";

/// The list options this server reads from the query.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct ListOptions<'q> {
    /// `watch`.
    pub(crate) watch: bool,
    /// `resourceVersion` (`None`: absent or empty).
    pub(crate) resource_version: Option<&'q str>,
    /// `resourceVersionMatch` (`None`: absent or empty).
    pub(crate) resource_version_match: Option<&'q str>,
    /// `sendInitialEvents` (`None`: absent).
    pub(crate) send_initial_events: Option<bool>,
    /// `allowWatchBookmarks`.
    pub(crate) allow_watch_bookmarks: bool,
    /// `continue`.
    pub(crate) continue_token: Option<&'q str>,
}

impl<'q> ListOptions<'q> {
    /// Reads the options from the query, applies the defaults and validates them: 422
    /// `Invalid` for a combination Kubernetes refuses.
    pub(super) fn parse(q: &'q Params) -> Result<Self, StatusError> {
        let mut opts = ListOptions {
            watch: q.flag("watch"),
            resource_version: q.get("resourceVersion"),
            resource_version_match: q.get(RV_MATCH),
            send_initial_events: q.option(SEND_INITIAL_EVENTS),
            allow_watch_bookmarks: q.flag("allowWatchBookmarks"),
            continue_token: q.get("continue"),
        };
        opts.set_defaults();
        let errs = opts.errors();
        if errs.is_empty() {
            Ok(opts)
        } else {
            Err(registry::Error::invalid_options("ListOptions", errs).into())
        }
    }

    /// `SetListOptionsDefaults` with the WatchList feature on.
    fn set_defaults(&mut self) {
        let legacy = matches!(self.resource_version, None | Some("0"));
        if self.watch
            && legacy
            && self.send_initial_events.is_none()
            && self.resource_version_match.is_none()
        {
            self.send_initial_events = Some(true);
            self.resource_version_match = Some(NOT_OLDER_THAN);
        }
    }

    /// `ValidateListOptions` with the WatchList feature on, in its order.
    fn errors(&self) -> Vec<FieldError> {
        let mut errs = Vec::new();
        let rv_match = self.resource_version_match;
        if self.watch {
            if self.send_initial_events.is_some() && rv_match != Some(NOT_OLDER_THAN) {
                errs.push(FieldError::forbidden(
                    RV_MATCH,
                    "sendInitialEvents requires setting resourceVersionMatch to NotOlderThan",
                ));
            }
            if let Some(m) = rv_match {
                if self.send_initial_events.is_none() {
                    errs.push(FieldError::forbidden(
                        RV_MATCH,
                        "resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided",
                    ));
                }
                if m != NOT_OLDER_THAN {
                    errs.push(FieldError::not_supported(
                        RV_MATCH,
                        BadValue::String(m.to_owned()),
                        &[NOT_OLDER_THAN],
                    ));
                }
                if self.continue_token.is_some() {
                    errs.push(forbidden_with_continue());
                }
            }
            return errs;
        }
        if let Some(m) = rv_match {
            if self.resource_version.is_none() {
                errs.push(FieldError::forbidden(
                    RV_MATCH,
                    "resourceVersionMatch is forbidden unless resourceVersion is provided",
                ));
            }
            if self.continue_token.is_some() {
                errs.push(forbidden_with_continue());
            }
            if m != EXACT && m != NOT_OLDER_THAN {
                errs.push(FieldError::not_supported(
                    RV_MATCH,
                    BadValue::String(m.to_owned()),
                    &[EXACT, NOT_OLDER_THAN, ""],
                ));
            }
            if m == EXACT && self.resource_version == Some("0") {
                errs.push(FieldError::forbidden(
                    RV_MATCH,
                    "resourceVersionMatch \"exact\" is forbidden for resourceVersion \"0\"",
                ));
            }
        }
        if self.send_initial_events.is_some() {
            errs.push(FieldError::forbidden(
                SEND_INITIAL_EVENTS,
                "sendInitialEvents is forbidden for list",
            ));
        }
        errs
    }

    /// Whether a watch starts with the current state, as `ADDED` events.
    pub(super) fn sends_initial_events(&self) -> bool {
        self.send_initial_events == Some(true)
    }

    /// Whether a watch marks the end of its initial events with a bookmark
    /// ([`initial_events_end`]).
    pub(super) fn marks_initial_events_end(&self) -> bool {
        self.sends_initial_events() && self.allow_watch_bookmarks
    }
}

fn forbidden_with_continue() -> FieldError {
    FieldError::forbidden(
        RV_MATCH,
        "resourceVersionMatch is forbidden when continue is provided",
    )
}

/// A `BOOKMARK` object: only `apiVersion`, `kind` and `metadata.resourceVersion`.
pub(super) fn bookmark(api_version: &str, kind: &str, revision: i64) -> Value {
    json!({
        "kind": kind,
        "apiVersion": api_version,
        "metadata": {"resourceVersion": revision.to_string()},
    })
}

/// The bookmark that ends a watch's initial events: [`bookmark`] at the revision the initial
/// state was read at, annotated [`INITIAL_EVENTS_END`]` = "true"`.
pub(super) fn initial_events_end(api_version: &str, kind: &str, revision: i64) -> Value {
    let mut b = bookmark(api_version, kind, revision);
    b["metadata"]["annotations"] = json!({ INITIAL_EVENTS_END: "true" });
    b
}

#[cfg(test)]
mod tests {
    use super::*;

    fn errs(pairs: &[(&str, &str)]) -> Vec<String> {
        let q = Params(
            pairs
                .iter()
                .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
                .collect(),
        );
        match ListOptions::parse(&q) {
            Ok(_) => Vec::new(),
            Err(s) => vec![s.message.clone()],
        }
    }

    const INVALID: &str = "ListOptions.meta.k8s.io \"\" is invalid: ";

    #[test]
    fn watch_list_combinations_follow_apimachinery() {
        let watch_list = [
            ("watch", "1"),
            ("sendInitialEvents", "true"),
            ("resourceVersionMatch", "NotOlderThan"),
        ];
        assert!(errs(&watch_list).is_empty());
        assert!(errs(&[("watch", "1")]).is_empty());
        assert!(errs(&[("watch", "1"), ("resourceVersion", "7")]).is_empty());
        assert_eq!(
            errs(&[("watch", "1"), ("resourceVersionMatch", "NotOlderThan")]),
            [format!(
                "{INVALID}resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided"
            )]
        );
        assert_eq!(
            errs(&[("watch", "1"), ("sendInitialEvents", "false")]),
            [format!(
                "{INVALID}resourceVersionMatch: Forbidden: sendInitialEvents requires setting resourceVersionMatch to NotOlderThan"
            )]
        );
        assert_eq!(
            errs(&[
                ("watch", "1"),
                ("sendInitialEvents", "true"),
                ("resourceVersionMatch", "Exact")
            ]),
            [format!(
                "{INVALID}[resourceVersionMatch: Forbidden: sendInitialEvents requires setting resourceVersionMatch to NotOlderThan, resourceVersionMatch: Unsupported value: \"Exact\": supported values: \"NotOlderThan\"]"
            )]
        );
        let mut with_continue = watch_list.to_vec();
        with_continue.push(("continue", "x"));
        assert_eq!(
            errs(&with_continue),
            [format!(
                "{INVALID}resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden when continue is provided"
            )]
        );
    }

    #[test]
    fn list_combinations_follow_apimachinery() {
        assert_eq!(
            errs(&[("sendInitialEvents", "true")]),
            [format!(
                "{INVALID}sendInitialEvents: Forbidden: sendInitialEvents is forbidden for list"
            )]
        );
        assert_eq!(
            errs(&[("resourceVersionMatch", "NotOlderThan")]),
            [format!(
                "{INVALID}resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided"
            )]
        );
        assert_eq!(
            errs(&[("resourceVersion", "0"), ("resourceVersionMatch", "Exact")]),
            [format!(
                "{INVALID}resourceVersionMatch: Forbidden: resourceVersionMatch \"exact\" is forbidden for resourceVersion \"0\""
            )]
        );
        assert_eq!(
            errs(&[("resourceVersion", "1"), ("resourceVersionMatch", "foo")]),
            [format!(
                "{INVALID}resourceVersionMatch: Unsupported value: \"foo\": supported values: \"Exact\", \"NotOlderThan\", \"\""
            )]
        );
    }

    #[test]
    fn legacy_watches_from_now_are_watch_lists() {
        let q = Params(
            [("watch".to_owned(), "true".to_owned())]
                .into_iter()
                .collect(),
        );
        let opts = ListOptions::parse(&q).unwrap();
        assert!(opts.sends_initial_events());
        assert!(!opts.marks_initial_events_end());
        let q = Params(
            [("watch", "true"), ("resourceVersion", "5")]
                .into_iter()
                .map(|(k, v)| (k.to_owned(), v.to_owned()))
                .collect(),
        );
        assert!(!ListOptions::parse(&q).unwrap().sends_initial_events());
    }

    #[test]
    fn bookmark_ending_initial_events_is_annotated() {
        let b = initial_events_end("g/v1", "K", 12);
        assert_eq!(
            b,
            json!({"kind": "K", "apiVersion": "g/v1", "metadata": {
                "resourceVersion": "12",
                "annotations": {"k8s.io/initial-events-end": "true"},
            }})
        );
    }
}
