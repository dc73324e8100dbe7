//! Kubernetes' "kube-aware" order of version names, newest and most stable first: `v2`,
//! `v1`, `v1beta2`, `v1beta1`, `v1alpha1`, then names of no such shape in alphabetical
//! order. Discovery lists a definition's versions in it (the first is preferred), and a
//! deprecated version's warning names the best one.

use std::cmp::Ordering;

/// `(stability, major, minor)` of a Kubernetes version name: stability 2 for GA, 1 beta,
/// 0 alpha; `None` for names of another shape.
fn parse(v: &str) -> Option<(u8, u64, u64)> {
    let rest = v.strip_prefix('v')?;
    let digits = rest
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(rest.len());
    let major: u64 = rest[..digits].parse().ok()?;
    if major == 0 {
        return None;
    }
    let rest = &rest[digits..];
    if rest.is_empty() {
        return Some((2, major, 0));
    }
    let (stability, minor) = if let Some(m) = rest.strip_prefix("beta") {
        (1, m)
    } else {
        (0, rest.strip_prefix("alpha")?)
    };
    let minor: u64 = minor.parse().ok()?;
    (minor > 0).then_some((stability, major, minor))
}

/// The kube-aware order: `Less` when `a` comes first (is newer or more stable).
pub(crate) fn compare(a: &str, b: &str) -> Ordering {
    match (parse(a), parse(b)) {
        (Some(x), Some(y)) => y.cmp(&x),
        (Some(_), None) => Ordering::Less,
        (None, Some(_)) => Ordering::Greater,
        (None, None) => a.cmp(b),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `versions` in the kube-aware order.
    fn sorted<'a>(versions: impl IntoIterator<Item = &'a str>) -> Vec<&'a str> {
        let mut v: Vec<&str> = versions.into_iter().collect();
        v.sort_by(|a, b| compare(a, b));
        v
    }

    #[test]
    fn ga_then_beta_then_alpha_then_other_names() {
        assert_eq!(
            sorted(["v1alpha1", "foo", "v1", "v2beta1", "v1beta2"]),
            ["v1", "v2beta1", "v1beta2", "v1alpha1", "foo"]
        );
    }

    #[test]
    fn stability_then_major_then_minor() {
        assert_eq!(
            sorted([
                "v11alpha2",
                "v10",
                "v12alpha1",
                "v10beta3",
                "v3beta1",
                "v2",
                "v1",
                "foo1",
                "foo10",
                "v0",
                "v1beta0"
            ]),
            [
                "v10",
                "v2",
                "v1",
                "v10beta3",
                "v3beta1",
                "v12alpha1",
                "v11alpha2",
                "foo1",
                "foo10",
                "v0",
                "v1beta0"
            ]
        );
    }
}
