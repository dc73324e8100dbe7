//! The string formats a declaration may name (`format` in the schema), checked with
//! Kubernetes' own messages. Formats the server does not know (OpenAPI's `int64`, `byte`...)
//! are published and not checked, as kube-apiserver ignores them.

use crate::names;

/// A checked string format.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Format {
    /// RFC 1123 label (`dns1123label`, declarative validation's `k8s-short-name`).
    Dns1123Label,
    /// RFC 1123 subdomain (`dns1123subdomain`, `k8s-long-name`).
    Dns1123Subdomain,
    /// RFC 1035 label (`dns1035label`).
    Dns1035Label,
    /// An RFC 4122 UUID in its textual form (`uuid`).
    Uuid,
}

const DNS1035_LABEL_MAX: usize = 63;
const DNS1035_LABEL_MSG: &str = "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')";

impl Format {
    /// The format a schema's `format` names, if the server checks it.
    pub(crate) fn parse(name: &str) -> Option<Self> {
        Some(match name {
            "dns1123label" | "k8s-short-name" => Format::Dns1123Label,
            "dns1123subdomain" | "k8s-long-name" => Format::Dns1123Subdomain,
            "dns1035label" => Format::Dns1035Label,
            "uuid" => Format::Uuid,
            _ => return None,
        })
    }

    /// What is wrong with `s` in this format, one message per problem (none when valid).
    pub(crate) fn errors(self, s: &str) -> Vec<String> {
        match self {
            Format::Dns1123Label => names::dns1123_label_errors(s),
            Format::Dns1123Subdomain => names::dns1123_subdomain_errors(s),
            Format::Dns1035Label => {
                let mut errs = Vec::new();
                if s.len() > DNS1035_LABEL_MAX {
                    errs.push(format!(
                        "must be no more than {DNS1035_LABEL_MAX} characters"
                    ));
                }
                let ok = |c: char| c.is_ascii_lowercase() || c.is_ascii_digit();
                let valid = s.starts_with(|c: char| c.is_ascii_lowercase())
                    && s.ends_with(ok)
                    && s.chars().all(|c| ok(c) || c == '-');
                if !valid {
                    errs.push(DNS1035_LABEL_MSG.to_owned());
                }
                errs
            }
            Format::Uuid => {
                let groups: Vec<&str> = s.split('-').collect();
                let lens = [8, 4, 4, 4, 12];
                let valid = groups.len() == 5
                    && groups
                        .iter()
                        .zip(lens)
                        .all(|(g, n)| g.len() == n && g.chars().all(|c| c.is_ascii_hexdigit()));
                if valid {
                    Vec::new()
                } else {
                    vec!["must be a UUID in RFC 4122 form".to_owned()]
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_check_with_kubernetes_messages() {
        assert!(Format::parse("int64").is_none());
        let label = Format::parse("k8s-short-name").unwrap();
        assert!(label.errors("my-name").is_empty());
        assert!(label.errors("My_name")[0].starts_with("a lowercase RFC 1123 label"));
        let sub = Format::parse("dns1123subdomain").unwrap();
        assert!(sub.errors("a.b-c").is_empty());
        assert_eq!(sub.errors(&"a".repeat(254)).len(), 1);
        let l1035 = Format::parse("dns1035label").unwrap();
        assert!(l1035.errors("abc-1").is_empty());
        assert!(l1035.errors("1abc")[0].starts_with("a DNS-1035 label"));
        let uuid = Format::parse("uuid").unwrap();
        assert!(
            uuid.errors("0e6f1a44-5c2b-4b3c-9d4e-0123456789ab")
                .is_empty()
        );
        assert_eq!(uuid.errors("0e6f1a44").len(), 1);
    }
}
