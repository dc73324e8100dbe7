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

/// Whether query parameter `name` is present and true as Go's `strconv.ParseBool` reads it
/// (`?pretty=1`), which Kubernetes uses for `pretty`.
pub(crate) fn flag(query: Option<&str>, name: &str) -> bool {
    param(query, name).and_then(parse_bool) == Some(true)
}

/// A boolean parameter of Kubernetes' API options (`watch`, `allowWatchBookmarks`,
/// `sendInitialEvents`, `force`, `orphanDependents`, ...), given its first value, percent-decoded,
/// as apimachinery converts it (`runtime.Convert_Slice_string_To_bool`): only `0` and `false`
/// in any case (Go's `strings.EqualFold`, under which `ſ` is an `s`) are false; anything else,
/// the empty string and `null` included, is true. An absent parameter is false.
///
/// ```
/// use conneg::option_bool;
/// assert!(!option_bool("FaLsE"));
/// assert!(!option_bool("0"));
/// assert!(option_bool(""));
/// assert!(option_bool("null"));
/// assert!(option_bool("no"));
/// ```
pub fn option_bool(value: &str) -> bool {
    if value == "0" {
        return false;
    }
    let mut rest = value.chars();
    let folds_to_false = "false".chars().all(|want| {
        rest.next()
            .is_some_and(|c| c.to_ascii_lowercase() == want || (want == 's' && c == 'ſ'))
    });
    !(folds_to_false && rest.next().is_none())
}

/// Whether the options parameter `name` of the raw `query` is true ([`option_bool`] of its
/// first value, percent-decoded): how Kubernetes tells a `?watch` request.
///
/// ```
/// use conneg::option_flag;
/// assert!(option_flag(Some("watch=null"), "watch"));
/// assert!(option_flag(Some("watch"), "watch"));
/// assert!(!option_flag(Some("watch=%46alse&watch=1"), "watch"));
/// assert!(!option_flag(Some("x=1"), "watch"));
/// ```
pub fn option_flag(query: Option<&str>, name: &str) -> bool {
    param(query, name).is_some_and(|v| option_bool(&percent_decoded(v)))
}

/// `v` with `+` as a space and `%XX` escapes decoded (what Go's `url.ParseQuery` does to a
/// value; a bad escape is kept as it is, and bytes that are not UTF-8 are replaced).
fn percent_decoded(v: &str) -> std::borrow::Cow<'_, str> {
    if !v.contains(['%', '+']) {
        return v.into();
    }
    let b = v.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        let hex = |j: usize| b.get(j).and_then(|c| (*c as char).to_digit(16));
        match (b[i], hex(i + 1), hex(i + 2)) {
            (b'%', Some(h), Some(l)) => {
                out.push((h * 16 + l) as u8);
                i += 3;
            }
            (b'+', _, _) => {
                out.push(b' ');
                i += 1;
            }
            (c, _, _) => {
                out.push(c);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned().into()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn option_booleans_are_converted_as_apimachinery_converts_them() {
        for v in ["0", "false", "False", "FALSE", "fAlSe", "falſe", "FALſE"] {
            assert!(!option_bool(v), "{v:?}");
        }
        for v in [
            "", "1", "true", "null", "no", "f", "00", " false", "false ", "falsee",
        ] {
            assert!(option_bool(v), "{v:?}");
        }
        // The first value, percent-decoded; a bare name is the empty value.
        assert!(option_flag(Some("watch=null"), "watch"));
        assert!(option_flag(Some("a=1&watch"), "watch"));
        assert!(option_flag(Some("watch=yes&watch=false"), "watch"));
        assert!(!option_flag(Some("watch=false&watch=true"), "watch"));
        assert!(!option_flag(Some("watch=%30"), "watch"));
        assert!(!option_flag(Some("watch=fal%C5%BFe"), "watch"));
        assert!(option_flag(Some("watch=%zz"), "watch"));
        assert!(!option_flag(None, "watch"));
    }

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
