//! What a request costs, in seats of its priority level, as Kubernetes estimates it: one seat
//! for most requests; a LIST one seat per 100 objects it will read (from the collection's
//! last known count, or its `limit` when smaller), at most [`MAX_SEATS`]; a WATCH that
//! starts with the collection's current objects (`sendInitialEvents=true`, or no
//! `resourceVersion`) as a LIST of it, for as long as it takes to start, then no seat.

use crate::auth::Attributes;
use crate::registry::ObjectCounts;

/// Objects read per seat.
const OBJECTS_PER_SEAT: usize = 100;
/// The most seats one request may take (Kubernetes' `MaximumSeatsLimit`).
pub(crate) const MAX_SEATS: u32 = 10;

/// The cost of one request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct WorkEstimate {
    /// Seats taken while it runs.
    pub(crate) seats: u32,
    /// A watch: the seats are given back once its response starts.
    pub(crate) long_running: bool,
}

fn query_value<'a>(query: Option<&'a str>, name: &str) -> Option<&'a str> {
    query?
        .split('&')
        .filter_map(|p| p.split_once('=').or(Some((p, ""))))
        .find(|(k, _)| *k == name)
        .map(|(_, v)| v)
}

/// The estimate of the request doing `attrs` with `query`, with `counts` of the stored
/// collections, in a level whose requests may take at most `max_seats`.
pub(crate) fn estimate(
    attrs: &Attributes,
    query: Option<&str>,
    counts: &ObjectCounts,
    max_seats: u32,
) -> WorkEstimate {
    let list_seats = || {
        let stored = counts
            .get(&attrs.api_group, &attrs.resource, &attrs.namespace)
            .unwrap_or(0);
        let limit = query_value(query, "limit")
            .and_then(|l| l.parse::<usize>().ok())
            .filter(|l| *l > 0);
        let objects = limit.map_or(stored, |l| l.min(stored));
        let seats = objects.div_ceil(OBJECTS_PER_SEAT);
        u32::try_from(seats)
            .unwrap_or(u32::MAX)
            .clamp(1, MAX_SEATS.min(max_seats).max(1))
    };
    match attrs.verb.as_str() {
        "list" if attrs.resource_request => WorkEstimate {
            seats: list_seats(),
            long_running: false,
        },
        "watch" if attrs.resource_request => {
            let initial = query_value(query, "sendInitialEvents") == Some("true")
                || query_value(query, "resourceVersion").is_none_or(str::is_empty);
            WorkEstimate {
                seats: if initial { list_seats() } else { 1 },
                long_running: true,
            }
        }
        _ => WorkEstimate {
            seats: 1,
            long_running: false,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use http::Method;

    const FLUNDERS: &str = "/apis/wardle.example.com/v1beta1/namespaces/default/flunders";

    fn est(method: Method, path: &str, query: Option<&str>, counts: &ObjectCounts) -> WorkEstimate {
        let attrs = Attributes::from_request(&method, path, query);
        estimate(&attrs, query, counts, 49)
    }

    #[test]
    fn a_list_costs_by_object_count() {
        let counts = ObjectCounts::default();
        // Unknown count: the minimum.
        assert_eq!(est(Method::GET, FLUNDERS, None, &counts).seats, 1);
        counts.record("wardle.example.com", "flunders", Some("default"), 450);
        assert_eq!(est(Method::GET, FLUNDERS, None, &counts).seats, 5);
        assert_eq!(
            est(Method::GET, FLUNDERS, Some("limit=100"), &counts).seats,
            1
        );
        counts.record("wardle.example.com", "flunders", Some("default"), 2000);
        assert_eq!(est(Method::GET, FLUNDERS, None, &counts).seats, MAX_SEATS);
        // A GET, a write: one seat.
        assert_eq!(
            est(Method::GET, &format!("{FLUNDERS}/a"), None, &counts).seats,
            1
        );
        assert_eq!(est(Method::POST, FLUNDERS, None, &counts).seats, 1);
        // A namespace never listed on its own: the count of every namespace.
        counts.record("wardle.example.com", "flunders", None, 300);
        let other = FLUNDERS.replace("default", "other");
        assert_eq!(est(Method::GET, &other, None, &counts).seats, 3);
        // Never more than the level has.
        let attrs = Attributes::from_request(&Method::GET, FLUNDERS, None);
        assert_eq!(estimate(&attrs, None, &counts, 2).seats, 2);
    }

    #[test]
    fn a_watch_costs_its_initial_events_then_nothing() {
        let counts = ObjectCounts::default();
        counts.record("wardle.example.com", "flunders", Some("default"), 2000);
        let w = est(Method::GET, FLUNDERS, Some("watch=true"), &counts);
        assert_eq!(
            w,
            WorkEstimate {
                seats: MAX_SEATS,
                long_running: true
            }
        );
        let w = est(
            Method::GET,
            FLUNDERS,
            Some("watch=true&resourceVersion=12"),
            &counts,
        );
        assert_eq!(
            w,
            WorkEstimate {
                seats: 1,
                long_running: true
            }
        );
        let w = est(
            Method::GET,
            FLUNDERS,
            Some(
                "watch=true&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&resourceVersion=12",
            ),
            &counts,
        );
        assert_eq!(w.seats, MAX_SEATS);
    }
}
