//! Media types and media ranges: the lexical layer under `Accept` and `Content-Type`.
//!
//! [`MediaRange`] is a borrowed, allocation-free view of one `type/subtype; name=value` item as
//! RFC 9110 §8.3.1 and §12.5.1 define it. Type, subtype and parameter names compare ASCII
//! case-insensitively; parameter values compare case-sensitively, after removing the quoting of a
//! quoted-string.
//!
//! ```
//! use conneg::headers::MediaRange;
//!
//! let range = MediaRange::parse(r#"Application/JSON ; as="Table";v=v1"#).unwrap();
//! assert!(range.essence_eq("application/json"));
//! assert_eq!(range.param("AS").unwrap(), "Table");
//! assert_eq!(range.params().count(), 2);
//! assert!(MediaRange::parse("application/json; broken").is_none());
//! ```

use std::borrow::Cow;
use std::fmt;

/// `application/json`.
pub const APPLICATION_JSON: &str = "application/json";
/// `application/cbor` (RFC 8949).
pub const APPLICATION_CBOR: &str = "application/cbor";
/// `application/cbor-seq` (RFC 8742), the CBOR stream form used for watch.
pub const APPLICATION_CBOR_SEQ: &str = "application/cbor-seq";
/// `application/json;stream=watch`, the JSON stream form used for watch.
pub const APPLICATION_JSON_WATCH: &str = "application/json;stream=watch";

/// How specific a media range is (RFC 9110 §12.5.1): `*/*` < `type/*` < `type/sub` <
/// `type/sub;params`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Specificity {
    /// `*/*`
    Any,
    /// `type/*`
    Type,
    /// `type/subtype`
    Subtype,
    /// `type/subtype;name=value`
    Params,
}

/// A parsed media type or media range, borrowing the header text.
///
/// Parameters are validated when the range is parsed and re-read lazily by [`params`](Self::params),
/// so parsing never allocates.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct MediaRange<'a> {
    type_: &'a str,
    subtype: &'a str,
    /// The validated parameter text (`; a=b; c="d"`), possibly empty.
    params: &'a str,
}

impl<'a> MediaRange<'a> {
    /// Parses a whole media type with parameters, such as a `Content-Type` value.
    ///
    /// Leading and trailing whitespace is allowed, as is whitespace around `;`. Returns `None`
    /// for anything that is not RFC 9110 syntax (a missing subtype, a parameter without `=`, an
    /// unterminated quoted string, `*/json`...).
    pub fn parse(s: &'a str) -> Option<Self> {
        let parsed = parse_item(s, false)?;
        Some(parsed.range)
    }

    /// The type, as written (compare with [`str::eq_ignore_ascii_case`]).
    pub fn type_(&self) -> &'a str {
        self.type_
    }

    /// The subtype, as written.
    pub fn subtype(&self) -> &'a str {
        self.subtype
    }

    /// Whether `type/subtype` equals `essence` (for example `"application/json"`), ignoring
    /// ASCII case.
    pub fn essence_eq(&self, essence: &str) -> bool {
        match essence.split_once('/') {
            Some((t, s)) => {
                self.type_.eq_ignore_ascii_case(t) && self.subtype.eq_ignore_ascii_case(s)
            }
            None => false,
        }
    }

    /// Whether this range (possibly a wildcard) matches the concrete `essence`
    /// (`type/subtype`), ignoring parameters.
    pub fn matches_essence(&self, essence: &str) -> bool {
        let Some((t, s)) = essence.split_once('/') else {
            return false;
        };
        if self.type_ == "*" {
            return true;
        }
        self.type_.eq_ignore_ascii_case(t)
            && (self.subtype == "*" || self.subtype.eq_ignore_ascii_case(s))
    }

    /// The parameters, in order. For an `Accept` clause these exclude `q` and everything after it.
    pub fn params(&self) -> Params<'a> {
        Params { rest: self.params }
    }

    /// Whether the range has any parameters.
    pub fn has_params(&self) -> bool {
        self.params().next().is_some()
    }

    /// The first parameter named `name` (ASCII case-insensitive).
    pub fn param(&self, name: &str) -> Option<ParamValue<'a>> {
        self.params()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v)
    }

    /// How specific this range is.
    pub fn specificity(&self) -> Specificity {
        if self.type_ == "*" {
            Specificity::Any
        } else if self.subtype == "*" {
            Specificity::Type
        } else if self.has_params() {
            Specificity::Params
        } else {
            Specificity::Subtype
        }
    }

    /// The same media type as a [`mime::Mime`] (for code built on the `mime` crate). Allocates.
    pub fn to_mime(&self) -> Option<mime::Mime> {
        self.to_string().parse().ok()
    }

    /// Whether the range is `*/*` or `type/*`.
    pub fn is_wildcard(&self) -> bool {
        self.type_ == "*" || self.subtype == "*"
    }
}

impl fmt::Debug for MediaRange<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "MediaRange({self})")
    }
}

impl fmt::Display for MediaRange<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.type_, self.subtype)?;
        for (name, value) in self.params() {
            if value.quoted {
                write!(f, ";{name}=\"{}\"", value.raw)?;
            } else {
                write!(f, ";{name}={}", value.raw)?;
            }
        }
        Ok(())
    }
}

/// One parameter value: a token, or the inside of a quoted-string (escapes not yet removed).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct ParamValue<'a> {
    raw: &'a str,
    quoted: bool,
}

impl<'a> ParamValue<'a> {
    /// The value as written, without surrounding quotes but with any `\` escapes.
    pub fn raw(&self) -> &'a str {
        self.raw
    }

    /// Whether the value was written as a quoted-string.
    pub fn is_quoted(&self) -> bool {
        self.quoted
    }

    /// The value with quoted-pair escapes removed; borrows unless there was an escape.
    pub fn unquoted(&self) -> Cow<'a, str> {
        if self.quoted && self.raw.contains('\\') {
            let mut out = String::with_capacity(self.raw.len());
            let mut chars = self.raw.chars();
            while let Some(c) = chars.next() {
                if c == '\\' {
                    if let Some(next) = chars.next() {
                        out.push(next);
                    }
                } else {
                    out.push(c);
                }
            }
            Cow::Owned(out)
        } else {
            Cow::Borrowed(self.raw)
        }
    }

    /// Iterates the unescaped characters without allocating.
    fn chars(&self) -> impl Iterator<Item = char> + 'a {
        let quoted = self.quoted;
        let mut chars = self.raw.chars();
        std::iter::from_fn(move || {
            let c = chars.next()?;
            if quoted && c == '\\' {
                chars.next()
            } else {
                Some(c)
            }
        })
    }
}

impl PartialEq<str> for ParamValue<'_> {
    fn eq(&self, other: &str) -> bool {
        if !self.quoted {
            return self.raw == other;
        }
        self.chars().eq(other.chars())
    }
}

impl PartialEq<&str> for ParamValue<'_> {
    fn eq(&self, other: &&str) -> bool {
        *self == **other
    }
}

/// Iterator over the parameters of a [`MediaRange`].
#[derive(Clone, Debug)]
pub struct Params<'a> {
    rest: &'a str,
}

impl<'a> Iterator for Params<'a> {
    type Item = (&'a str, ParamValue<'a>);

    fn next(&mut self) -> Option<Self::Item> {
        let s = self.rest;
        let b = s.as_bytes();
        let mut i = 0;
        loop {
            i = skip_ows(b, i);
            if i >= b.len() {
                self.rest = "";
                return None;
            }
            if b[i] == b';' {
                i += 1;
                continue;
            }
            break;
        }
        // Validated at parse time, so this cannot fail; be defensive anyway.
        let Some((name, value, end)) = lex_param(s, i, false) else {
            self.rest = "";
            return None;
        };
        self.rest = &s[end..];
        Some((name, value?))
    }
}

/// The result of lexing one `Accept` / `Content-Type` item.
pub(crate) struct ParsedItem<'a> {
    pub(crate) range: MediaRange<'a>,
    /// The `q` weight in per-mille, if an `Accept` clause carried one.
    pub(crate) q: Option<u16>,
}

pub(crate) fn is_tchar(b: u8) -> bool {
    b.is_ascii_alphanumeric()
        || matches!(
            b,
            b'!' | b'#'
                | b'$'
                | b'%'
                | b'&'
                | b'\''
                | b'*'
                | b'+'
                | b'-'
                | b'.'
                | b'^'
                | b'_'
                | b'`'
                | b'|'
                | b'~'
        )
}

pub(crate) fn skip_ows(b: &[u8], mut i: usize) -> usize {
    while i < b.len() && (b[i] == b' ' || b[i] == b'\t') {
        i += 1;
    }
    i
}

fn token_end(b: &[u8], mut i: usize) -> usize {
    while i < b.len() && is_tchar(b[i]) {
        i += 1;
    }
    i
}

/// `b[i] == '"'`; returns the index just past the closing quote.
fn quoted_end(b: &[u8], mut i: usize) -> Option<usize> {
    i += 1;
    while i < b.len() {
        match b[i] {
            b'"' => return Some(i + 1),
            b'\\' => i += 2,
            // qdtext excludes CTLs other than HTAB.
            c if (c < 0x20 && c != b'\t') || c == 0x7f => return None,
            _ => i += 1,
        }
    }
    None
}

/// Lexes `name[=value]` at `i`. The value is required unless `allow_bare`; a bare name returns
/// `Some((name, None, end))`.
#[allow(clippy::type_complexity)]
fn lex_param(s: &str, i: usize, allow_bare: bool) -> Option<(&str, Option<ParamValue<'_>>, usize)> {
    let b = s.as_bytes();
    let name_end = token_end(b, i);
    if name_end == i {
        return None;
    }
    let name = &s[i..name_end];
    if name_end >= b.len() || b[name_end] != b'=' {
        return allow_bare.then_some((name, None, name_end));
    }
    let v = name_end + 1;
    if v < b.len() && b[v] == b'"' {
        let end = quoted_end(b, v)?;
        Some((
            name,
            Some(ParamValue {
                raw: &s[v + 1..end - 1],
                quoted: true,
            }),
            end,
        ))
    } else {
        let end = token_end(b, v);
        if end == v {
            return None;
        }
        Some((
            name,
            Some(ParamValue {
                raw: &s[v..end],
                quoted: false,
            }),
            end,
        ))
    }
}

/// Parses a qvalue into per-mille. RFC 9110 §12.4.2 allows `0[.ddd]` and `1[.000]`; we also
/// accept a missing leading digit (`.5`, sent by Java's default `Accept`) and more than three
/// fractional digits (truncated). Anything else is malformed.
pub(crate) fn parse_qvalue(s: &str) -> Option<u16> {
    let b = s.as_bytes();
    let (int, frac) = match s.split_once('.') {
        Some((i, f)) => (i, f),
        None => (s, ""),
    };
    if b.is_empty() || int.len() > 1 || (int.is_empty() && frac.is_empty()) {
        return None;
    }
    if !frac.bytes().all(|c| c.is_ascii_digit()) {
        return None;
    }
    let whole: u16 = match int {
        "" | "0" => 0,
        "1" => 1,
        _ => return None,
    };
    let mut milli = 0u16;
    let mut scale = 100u16;
    for d in frac.bytes().take(3) {
        milli += u16::from(d - b'0') * scale;
        scale /= 10;
    }
    let value = whole * 1000 + milli;
    (value <= 1000).then_some(value)
}

/// Lexes one media type / media range with parameters. With `accept`, the first `q` parameter
/// ends the media-type parameters; it and the accept-ext parameters after it are not part of
/// [`MediaRange::params`].
pub(crate) fn parse_item(s: &str, accept: bool) -> Option<ParsedItem<'_>> {
    let b = s.as_bytes();
    let mut i = skip_ows(b, 0);
    let t0 = i;
    i = token_end(b, i);
    if i == t0 {
        return None;
    }
    let type_ = &s[t0..i];
    let subtype;
    if i < b.len() && b[i] == b'/' {
        let s0 = i + 1;
        i = token_end(b, s0);
        if i == s0 {
            return None;
        }
        subtype = &s[s0..i];
    } else if accept && type_ == "*" {
        // A bare `*` (Java's default Accept) is read as `*/*`.
        subtype = "*";
    } else {
        return None;
    }
    if type_ == "*" && subtype != "*" {
        return None;
    }
    if !accept && (type_ == "*" || subtype == "*") {
        return None;
    }
    let params_start = i;
    let mut params_end = None;
    let mut q = None;
    let mut last_end = i;
    loop {
        let before = i;
        i = skip_ows(b, i);
        if i >= b.len() {
            break;
        }
        if b[i] != b';' {
            return None;
        }
        let semi = before;
        i = skip_ows(b, i + 1);
        if i >= b.len() {
            last_end = i;
            break;
        }
        if b[i] == b';' {
            continue;
        }
        let after_q = params_end.is_some();
        let (name, value, end) = lex_param(s, i, after_q)?;
        if accept && !after_q && name.eq_ignore_ascii_case("q") {
            let value = value?;
            if value.quoted {
                return None;
            }
            q = Some(parse_qvalue(value.raw)?);
            params_end = Some(semi);
        }
        i = end;
        last_end = end;
    }
    let params = &s[params_start..params_end.unwrap_or(last_end.max(params_start))];
    Some(ParsedItem {
        range: MediaRange {
            type_,
            subtype,
            params,
        },
        q,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_type_subtype_and_params() {
        let r = MediaRange::parse("application/json").unwrap();
        assert_eq!((r.type_(), r.subtype()), ("application", "json"));
        assert!(!r.has_params());
        assert_eq!(r.specificity(), Specificity::Subtype);

        let r = MediaRange::parse("  text/plain ;charset=utf-8;  format=\"flowed\"  ").unwrap();
        let params: Vec<_> = r
            .params()
            .map(|(n, v)| (n, v.unquoted().into_owned()))
            .collect();
        assert_eq!(
            params,
            [
                ("charset", "utf-8".to_owned()),
                ("format", "flowed".to_owned())
            ]
        );
        assert_eq!(r.specificity(), Specificity::Params);
        assert_eq!(r.to_string(), "text/plain;charset=utf-8;format=\"flowed\"");
        let m = r.to_mime().unwrap();
        assert_eq!(m.essence_str(), "text/plain");
        assert_eq!(m.get_param(mime::CHARSET).unwrap(), "utf-8");
    }

    #[test]
    fn case_insensitive_names_case_sensitive_values() {
        let r = MediaRange::parse("APPLICATION/Cbor;CharSet=UTF-8").unwrap();
        assert!(r.essence_eq("application/cbor"));
        assert!(!r.essence_eq("application/cbor-seq"));
        assert_eq!(r.param("charset").unwrap(), "UTF-8");
        assert_ne!(r.param("charset").unwrap(), "utf-8");
    }

    #[test]
    fn quoted_values_with_escapes_and_separators() {
        let r = MediaRange::parse(r#"a/b;x="a\"b;c,d";y=z"#).unwrap();
        let x = r.param("x").unwrap();
        assert!(x.is_quoted());
        assert_eq!(x, "a\"b;c,d");
        assert_eq!(x.unquoted(), "a\"b;c,d");
        assert_eq!(r.param("y").unwrap(), "z");
    }

    #[test]
    fn rejects_malformed() {
        for bad in [
            "",
            "application",
            "application/",
            "/json",
            "*/json",
            "application/json;",
            "application/json; charset",
            "application/json; charset=",
            "application/json; charset=\"unterminated",
            "application/json junk",
            "application / json",
            "application/json; a=b c",
        ] {
            // A trailing `;` is allowed by the grammar (empty parameter), everything else fails.
            if bad == "application/json;" {
                assert!(MediaRange::parse(bad).is_some());
                continue;
            }
            assert!(MediaRange::parse(bad).is_none(), "{bad:?} should not parse");
        }
        // Wildcards are ranges, not types.
        assert!(MediaRange::parse("*/*").is_none());
        assert!(MediaRange::parse("application/*").is_none());
    }

    #[test]
    fn accept_items_split_off_q_and_extensions() {
        let p = parse_item("text/plain;format=fixed;q=0.4;ext;e2=\"v\"", true).unwrap();
        assert_eq!(p.q, Some(400));
        assert_eq!(p.range.params().count(), 1);
        assert_eq!(p.range.param("format").unwrap(), "fixed");

        let p = parse_item("application/json ; q=0.5", true).unwrap();
        assert_eq!(p.q, Some(500));
        assert!(!p.range.has_params());
        assert_eq!(p.range.specificity(), Specificity::Subtype);

        let p = parse_item("*", true).unwrap();
        assert_eq!(p.range.specificity(), Specificity::Any);
        assert!(parse_item("application/json;q=abc", true).is_none());
        assert!(parse_item("application/json;q=\"0.5\"", true).is_none());
    }

    #[test]
    fn qvalues() {
        assert_eq!(parse_qvalue("1"), Some(1000));
        assert_eq!(parse_qvalue("1.000"), Some(1000));
        assert_eq!(parse_qvalue("1.5"), None);
        assert_eq!(parse_qvalue("0"), Some(0));
        assert_eq!(parse_qvalue("0.001"), Some(1));
        assert_eq!(parse_qvalue("0.9"), Some(900));
        assert_eq!(parse_qvalue("0.12345"), Some(123));
        assert_eq!(parse_qvalue(".2"), Some(200));
        assert_eq!(parse_qvalue("2"), None);
        assert_eq!(parse_qvalue("-0"), None);
        assert_eq!(parse_qvalue(""), None);
        assert_eq!(parse_qvalue("."), None);
        assert_eq!(parse_qvalue("0.x"), None);
    }

    #[test]
    fn wildcard_matching() {
        let any = parse_item("*/*", true).unwrap().range;
        let app = parse_item("Application/*", true).unwrap().range;
        assert!(any.matches_essence("application/cbor"));
        assert!(app.matches_essence("application/cbor"));
        assert!(!app.matches_essence("text/plain"));
        assert_eq!(app.specificity(), Specificity::Type);
        assert!(app.is_wildcard());
    }
}
