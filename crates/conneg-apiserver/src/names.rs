//! Name syntax checks (apimachinery `util/validation` and `api/validation/path`), with
//! Kubernetes' messages, plus server-side generation of names and UIDs.

use std::collections::hash_map::RandomState;
use std::hash::{BuildHasher, Hasher};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

const QUALIFIED_NAME_MAX: usize = 63;
const LABEL_VALUE_MAX: usize = 63;
/// The longest RFC 1123 label, hence the longest namespace.
pub(crate) const DNS1123_LABEL_MAX: usize = 63;
/// The longest RFC 1123 subdomain, hence the longest object name.
pub(crate) const DNS1123_SUBDOMAIN_MAX: usize = 253;

const QNAME_FMT: &str = "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";
const QNAME_EXAMPLES: &str = "(e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')";
const LABEL_VALUE_MSG: &str = "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')";
const DNS1123_LABEL_MSG: &str = "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')";
const DNS1123_SUBDOMAIN_MSG: &str = "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";

fn max_len_msg(n: usize) -> String {
    format!("must be no more than {n} characters")
}

fn is_qname_part(s: &str) -> bool {
    let alnum = |c: char| c.is_ascii_alphanumeric();
    !s.is_empty()
        && s.starts_with(alnum)
        && s.ends_with(alnum)
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
}

fn is_dns_label_syntax(s: &str) -> bool {
    let ok = |c: char| c.is_ascii_lowercase() || c.is_ascii_digit();
    !s.is_empty() && s.starts_with(ok) && s.ends_with(ok) && s.chars().all(|c| ok(c) || c == '-')
}

/// `IsDNS1123Label`: problems with `s` as an RFC 1123 label (empty when valid).
pub(crate) fn dns1123_label_errors(s: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if s.len() > DNS1123_LABEL_MAX {
        errs.push(max_len_msg(DNS1123_LABEL_MAX));
    }
    if !is_dns_label_syntax(s) {
        errs.push(DNS1123_LABEL_MSG.to_owned());
    }
    errs
}

const DNS1035_LABEL_MSG: &str = "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')";

/// `IsDNS1035Label`: problems with `s` as an RFC 1035 label, which starts with a letter
/// (empty when valid). Custom resource names and versions are such labels.
pub(crate) fn dns1035_label_errors(s: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if s.len() > DNS1123_LABEL_MAX {
        errs.push(max_len_msg(DNS1123_LABEL_MAX));
    }
    if !(is_dns_label_syntax(s) && s.starts_with(|c: char| c.is_ascii_lowercase())) {
        errs.push(DNS1035_LABEL_MSG.to_owned());
    }
    errs
}

/// `IsDNS1123Subdomain`: problems with `s` as an RFC 1123 subdomain (empty when valid).
pub(crate) fn dns1123_subdomain_errors(s: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if s.len() > DNS1123_SUBDOMAIN_MAX {
        errs.push(max_len_msg(DNS1123_SUBDOMAIN_MAX));
    }
    if !s.split('.').all(is_dns_label_syntax) {
        errs.push(DNS1123_SUBDOMAIN_MSG.to_owned());
    }
    errs
}

/// `NameIsDNSSubdomain` (apimachinery `api/validation`): the name rule of wardle objects, as of
/// most Kubernetes kinds and every custom resource, so a name fits in a URL path segment, a
/// storage key and a DNS name alike. With `prefix`, checks a `generateName`: as Kubernetes'
/// `maskTrailingDash`, a final `-` (after which the random suffix goes) and the byte before it
/// are replaced by `a` before the check.
pub(crate) fn name_is_dns_subdomain(name: &str, prefix: bool) -> Vec<String> {
    match name.strip_suffix('-') {
        Some(rest) if prefix && !rest.is_empty() => {
            // Byte-wise, as Go slices; a cut character is not ASCII, so invalid either way.
            let kept = &rest.as_bytes()[..rest.len() - 1];
            dns1123_subdomain_errors(&format!("{}a", String::from_utf8_lossy(kept)))
        }
        _ => dns1123_subdomain_errors(name),
    }
}

/// `IsQualifiedName`: `[prefix/]name` as label and annotation keys (empty when valid).
pub(crate) fn qualified_name_errors(s: &str) -> Vec<String> {
    let mut errs = Vec::new();
    let parts: Vec<&str> = s.split('/').collect();
    let name = match parts[..] {
        [name] => name,
        [prefix, name] => {
            if prefix.is_empty() {
                errs.push("prefix part must be non-empty".to_owned());
            } else {
                errs.extend(
                    dns1123_subdomain_errors(prefix)
                        .into_iter()
                        .map(|m| format!("prefix part {m}")),
                );
            }
            name
        }
        _ => {
            errs.push(format!(
                "a qualified name {QNAME_FMT} {QNAME_EXAMPLES} with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"
            ));
            return errs;
        }
    };
    if name.is_empty() {
        errs.push("name part must be non-empty".to_owned());
    } else if name.len() > QUALIFIED_NAME_MAX {
        errs.push(format!("name part {}", max_len_msg(QUALIFIED_NAME_MAX)));
    }
    if !name.is_empty() && !is_qname_part(name) {
        errs.push(format!("name part {QNAME_FMT} {QNAME_EXAMPLES}"));
    }
    errs
}

/// `IsValidLabelValue` (empty when valid).
pub(crate) fn label_value_errors(s: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if s.len() > LABEL_VALUE_MAX {
        errs.push(max_len_msg(LABEL_VALUE_MAX));
    }
    if !s.is_empty() && !is_qname_part(s) {
        errs.push(LABEL_VALUE_MSG.to_owned());
    }
    errs
}

/// `ValidatePathSegmentName`: what names of wardle objects must satisfy (they become URL path
/// segments and storage key segments). With `prefix`, checks a `generateName`.
pub(crate) fn path_segment_name_errors(name: &str, prefix: bool) -> Vec<String> {
    let mut errs = Vec::new();
    if !prefix {
        for bad in [".", ".."] {
            if name == bad {
                errs.push(format!("may not be '{bad}'"));
            }
        }
    }
    for bad in ["/", "%"] {
        if name.contains(bad) {
            errs.push(format!("may not contain '{bad}'"));
        }
    }
    errs
}

const NAME_ALPHABET: &[u8] = b"bcdfghjklmnpqrstvwxz2456789";
const MAX_GENERATED_NAME_LENGTH: usize = 63;
const RANDOM_LENGTH: usize = 5;

static COUNTER: AtomicU64 = AtomicU64::new(0);

/// 64 unpredictable-enough bits: SipHash with the process's random keys over a counter and
/// the clock. Unique, not cryptographic (names and UIDs need uniqueness only).
fn random_u64() -> u64 {
    let mut h = RandomState::new().build_hasher();
    h.write_u64(COUNTER.fetch_add(1, Ordering::Relaxed));
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    h.write_u128(nanos);
    h.finish()
}

/// `SimpleNameGenerator.GenerateName`: `base` (cut to 58 characters) plus 5 random
/// characters from Kubernetes' alphabet (no vowels, no confusable digits).
pub(crate) fn generate_name(base: &str) -> String {
    let max_base = MAX_GENERATED_NAME_LENGTH - RANDOM_LENGTH;
    let mut cut = base.len().min(max_base);
    while !base.is_char_boundary(cut) {
        cut -= 1;
    }
    let mut out = String::with_capacity(cut + RANDOM_LENGTH);
    out.push_str(&base[..cut]);
    let mut r = random_u64();
    for _ in 0..RANDOM_LENGTH {
        let n = NAME_ALPHABET.len() as u64;
        out.push(char::from(NAME_ALPHABET[(r % n) as usize]));
        r /= n;
    }
    out
}

/// A random (version 4 layout) UUID for `metadata.uid`.
pub(crate) fn new_uid() -> String {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let mut b = [0u8; 16];
    b[..8].copy_from_slice(&random_u64().to_be_bytes());
    b[8..].copy_from_slice(&random_u64().to_be_bytes());
    b[6] = (b[6] & 0x0f) | 0x40;
    b[8] = (b[8] & 0x3f) | 0x80;
    // 8-4-4-4-12 hex digits, written in place (this runs on every create).
    let mut out = String::with_capacity(36);
    for (i, x) in b.iter().enumerate() {
        if matches!(i, 4 | 6 | 8 | 10) {
            out.push('-');
        }
        out.push(char::from(HEX[usize::from(x >> 4)]));
        out.push(char::from(HEX[usize::from(x & 0x0f)]));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names() {
        assert!(qualified_name_errors("example.com/My_name.1").is_empty());
        assert_eq!(qualified_name_errors("Example.com/x").len(), 1);
        assert_eq!(qualified_name_errors("a/b/c").len(), 1);
        assert_eq!(qualified_name_errors("-a").len(), 1);
        assert!(label_value_errors("").is_empty());
        assert_eq!(label_value_errors(&"a".repeat(64)).len(), 1);
        assert!(dns1123_label_errors("default").is_empty());
        assert_eq!(dns1123_label_errors("Default").len(), 1);
        assert!(dns1035_label_errors("v1beta1").is_empty());
        assert_eq!(dns1035_label_errors("1v"), [DNS1035_LABEL_MSG]);
        assert_eq!(dns1035_label_errors("").len(), 1);
        assert_eq!(dns1035_label_errors(&"a".repeat(64)).len(), 1);
        assert_eq!(path_segment_name_errors("a/b%", false).len(), 2);
        assert_eq!(path_segment_name_errors("..", false), ["may not be '..'"]);
        assert!(path_segment_name_errors("..", true).is_empty());
    }

    #[test]
    fn dns_subdomain_names() {
        let longest = "a".repeat(253);
        assert!(name_is_dns_subdomain(&longest, false).is_empty());
        assert_eq!(
            name_is_dns_subdomain(&format!("{longest}b"), false),
            ["must be no more than 253 characters"]
        );
        assert_eq!(name_is_dns_subdomain("a/b", false), [DNS1123_SUBDOMAIN_MSG]);
        assert_eq!(name_is_dns_subdomain("My-Flunder", false).len(), 1);
        assert!(name_is_dns_subdomain("my.flunder-1", false).is_empty());
        // generateName: a trailing '-' is fine, and masking takes the byte before it too.
        assert!(name_is_dns_subdomain("my-flunder-", true).is_empty());
        assert_eq!(name_is_dns_subdomain("my-flunder-", false).len(), 1);
        assert!(name_is_dns_subdomain(&format!("{longest}-"), true).is_empty());
        assert_eq!(
            name_is_dns_subdomain(&format!("{longest}b-"), true).len(),
            1
        );
        assert_eq!(name_is_dns_subdomain("-", true).len(), 1);
        assert_eq!(name_is_dns_subdomain("é-", true).len(), 1);
    }

    #[test]
    fn generated() {
        let n = generate_name("my-flunder-");
        assert_eq!(n.len(), 16);
        assert!(n.starts_with("my-flunder-"));
        assert!(n[11..].bytes().all(|c| NAME_ALPHABET.contains(&c)));
        assert_eq!(generate_name(&"x".repeat(100)).len(), 63);
        assert_ne!(generate_name("a-"), generate_name("a-"));
        let u = new_uid();
        assert_eq!(u.len(), 36);
        assert_eq!(&u[14..15], "4");
        assert!("89ab".contains(&u[19..20]), "{u}");
        for (i, c) in u.char_indices() {
            if [8, 13, 18, 23].contains(&i) {
                assert_eq!(c, '-', "{u}");
            } else {
                assert!(c.is_ascii_hexdigit() && !c.is_ascii_uppercase(), "{u}");
            }
        }
        assert_ne!(new_uid(), u);
    }
}
