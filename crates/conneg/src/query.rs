//! The few query parameters negotiation reads (`fieldValidation`, `pretty`, `watch`), read as
//! Kubernetes reads them.

/// The raw value of query parameter `name` (the first one), `""` for a bare `name`; no
/// percent-decoding: the names and values conneg reads are plain tokens.
pub(crate) fn param<'q>(query: Option<&'q str>, name: &str) -> Option<&'q str> {
    query?.split('&').find_map(|pair| {
        let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
        (k == name).then_some(v)
    })
}

/// Go's `strconv.ParseBool`, which Kubernetes uses for boolean query parameters and feature
/// gates: `1 t T TRUE true True` and `0 f F FALSE false False`, nothing else (no trimming, no
/// other casings).
///
/// ```
/// use conneg::parse_bool;
/// assert_eq!(parse_bool("True"), Some(true));
/// assert_eq!(parse_bool("F"), Some(false));
/// assert_eq!(parse_bool("yes"), None);
/// assert_eq!(parse_bool("tRUE"), None);
/// ```
pub fn parse_bool(s: &str) -> Option<bool> {
    match s {
        "1" | "t" | "T" | "TRUE" | "true" | "True" => Some(true),
        "0" | "f" | "F" | "FALSE" | "false" | "False" => Some(false),
        _ => None,
    }
}

/// Whether query parameter `name` is present and true (`?pretty=1`, `?watch=true`).
pub(crate) fn flag(query: Option<&str>, name: &str) -> bool {
    param(query, name).and_then(parse_bool) == Some(true)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn params_and_flags() {
        let q = Some("a=1&watch=true&pretty&x=");
        assert_eq!(param(q, "a"), Some("1"));
        assert_eq!(param(q, "pretty"), Some(""));
        assert_eq!(param(q, "nope"), None);
        assert!(flag(q, "watch"));
        assert!(
            !flag(q, "pretty"),
            "a bare name is not true, as in Kubernetes"
        );
        assert!(!flag(Some("watch=yes"), "watch"));
        assert!(!flag(None, "watch"));
        for s in ["1", "t", "T", "TRUE", "true", "True"] {
            assert_eq!(parse_bool(s), Some(true), "{s}");
        }
        for s in ["0", "f", "F", "FALSE", "false", "False"] {
            assert_eq!(parse_bool(s), Some(false), "{s}");
        }
        for s in ["", " true", "yes", "on", "tRue", "2", "FaLse", "true "] {
            assert_eq!(parse_bool(s), None, "{s:?}");
        }
    }
}
