//! Field validation: what to do with unknown (and, for JSON, duplicate) fields in a request body.
//!
//! Kubernetes lets the client choose with the `fieldValidation` query parameter: `Strict` fails
//! the request (400), `Warn` decodes and returns one `Warning: 299 - "unknown field \"x\""`
//! response header per problem, `Ignore` drops unknown fields silently.
//!
//! ```
//! use conneg::FieldValidation;
//!
//! assert_eq!(FieldValidation::from_query(Some("pretty=1&fieldValidation=Strict")), Ok(Some(FieldValidation::Strict)));
//! assert_eq!(FieldValidation::from_query(Some("watch=true")), Ok(None));
//! assert!(FieldValidation::from_query(Some("fieldValidation=Loud")).is_err());
//! let header = conneg::warning_header_value("unknown field \"spec.x\"");
//! assert_eq!(header.to_str().unwrap(), r#"299 - "unknown field \"spec.x\"""#);
//! ```

use http::HeaderValue;

/// How unknown fields in a request body are handled.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum FieldValidation {
    /// Unknown fields fail decoding with 400 BadRequest.
    Strict,
    /// Unknown fields are dropped and reported as `Warning` response headers (Kubernetes'
    /// server default).
    #[default]
    Warn,
    /// Unknown fields are dropped silently. The fastest mode.
    Ignore,
}

impl FieldValidation {
    /// The Kubernetes spelling (`Strict`, `Warn`, `Ignore`).
    pub const fn as_str(self) -> &'static str {
        match self {
            FieldValidation::Strict => "Strict",
            FieldValidation::Warn => "Warn",
            FieldValidation::Ignore => "Ignore",
        }
    }

    /// Parses the value of the `fieldValidation` query parameter (case-sensitive, as Kubernetes).
    pub fn parse(value: &str) -> Option<Self> {
        match value {
            "Strict" => Some(FieldValidation::Strict),
            "Warn" => Some(FieldValidation::Warn),
            "Ignore" => Some(FieldValidation::Ignore),
            _ => None,
        }
    }

    /// Reads `fieldValidation` from a URI query string. `Ok(None)` when absent; `Err` with a
    /// Kubernetes-style message when present with an unknown value.
    pub fn from_query(query: Option<&str>) -> Result<Option<Self>, String> {
        let Some(value) = crate::query::param(query, "fieldValidation") else {
            return Ok(None);
        };
        match FieldValidation::parse(value) {
            Some(v) => Ok(Some(v)),
            None => Err(format!(
                "fieldValidation parameter unsupported: {value:?} (valid values: Ignore, Warn, Strict)"
            )),
        }
    }
}

/// Formats one warning as a `Warning` header value: `299 - "<text>"`, quoting `"` and `\`
/// (RFC 9111 §5.5 / RFC 7234 §5.5, as Kubernetes does). A long text (a warning quoting a huge
/// field name) is cut as [`Status::echo`](crate::Status::echo) cuts values.
pub fn warning_header_value(text: &str) -> HeaderValue {
    let text = crate::Status::echo(text);
    let mut out = String::with_capacity(text.len() + 10);
    out.push_str("299 - \"");
    for c in text.chars() {
        match c {
            '"' | '\\' => {
                out.push('\\');
                out.push(c);
            }
            // Header values cannot carry control characters or, portably, non-ASCII.
            c if c.is_ascii_control() => out.push(' '),
            c if !c.is_ascii() => out.push('?'),
            c => out.push(c),
        }
    }
    out.push('"');
    HeaderValue::from_str(&out)
        .unwrap_or_else(|_| HeaderValue::from_static("299 - \"invalid warning\""))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn query_parsing() {
        assert_eq!(crate::query::param(Some("a=1&b=2"), "b"), Some("2"));
        assert_eq!(crate::query::param(Some("a"), "a"), Some(""));
        assert_eq!(crate::query::param(None, "a"), None);
        assert_eq!(
            FieldValidation::from_query(Some("fieldValidation=Ignore")),
            Ok(Some(FieldValidation::Ignore))
        );
        assert!(FieldValidation::from_query(Some("fieldValidation=strict")).is_err());
    }

    #[test]
    fn warning_quoting() {
        assert_eq!(
            warning_header_value(r#"a "b" \c"#).to_str().unwrap(),
            r#"299 - "a \"b\" \\c""#
        );
        let huge = format!("unknown field \"{}\"", "f".repeat(100_000));
        let header = warning_header_value(&huge);
        assert!(header.len() < 1200, "{} bytes", header.len());
        assert!(header.to_str().unwrap().ends_with("fff\\\"\""));
    }
}
