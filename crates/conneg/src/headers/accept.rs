//! The `Accept` request header (RFC 9110 §12.5.1), read without allocating.
//!
//! [`Accept`] walks every `Accept` header line and every comma-separated clause in it, yielding
//! [`AcceptClause`]s. Malformed clauses are skipped, not fatal. Quality values are integers in
//! per-mille ([`QValue`]); `q=0` means "not acceptable".
//!
//! ```
//! use conneg::headers::{Accept, QValue};
//! use conneg::headers::MediaRange;
//! use http::{HeaderMap, HeaderValue, header::ACCEPT};
//!
//! let mut headers = HeaderMap::new();
//! headers.append(ACCEPT, HeaderValue::from_static("application/json;q=0.9, junk"));
//! headers.append(ACCEPT, HeaderValue::from_static("application/cbor"));
//! let accept = Accept::from_headers(&headers);
//!
//! assert_eq!(accept.clauses().count(), 2); // `junk` is skipped
//! let cbor = MediaRange::parse("application/cbor").unwrap();
//! assert_eq!(accept.quality(&cbor), QValue::ONE);
//! ```

use std::fmt;

use http::header::{ACCEPT, ValueIter};
use http::{HeaderMap, HeaderValue};

use crate::headers::media_type::{MediaRange, Specificity, parse_item};

/// A quality value in per-mille: `q=0.5` is `QValue(500)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct QValue(u16);

impl QValue {
    /// `q=0`: not acceptable.
    pub const ZERO: QValue = QValue(0);
    /// `q=1`, the default.
    pub const ONE: QValue = QValue(1000);

    /// A quality from per-mille, clamped to 1000.
    pub const fn from_millis(millis: u16) -> Self {
        if millis > 1000 {
            QValue(1000)
        } else {
            QValue(millis)
        }
    }

    /// The value in per-mille.
    pub const fn millis(self) -> u16 {
        self.0
    }

    /// Whether this is `q=0`.
    pub const fn is_zero(self) -> bool {
        self.0 == 0
    }
}

impl fmt::Display for QValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.0 == 1000 {
            f.write_str("1")
        } else if self.0 == 0 {
            f.write_str("0")
        } else {
            let s = format!("{:03}", self.0);
            write!(f, "0.{}", s.trim_end_matches('0'))
        }
    }
}

/// One clause of an `Accept` header: a media range and its weight.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AcceptClause<'a> {
    /// The media range with its media-type parameters (not `q`, not accept-ext).
    pub range: MediaRange<'a>,
    /// The weight; 1 when absent.
    pub q: QValue,
}

#[derive(Clone, Debug)]
enum Source<'a> {
    Headers(&'a HeaderMap),
    Str(&'a str),
}

/// All `Accept` header lines of a request, parsed lazily.
#[derive(Clone, Debug)]
pub struct Accept<'a> {
    source: Source<'a>,
}

impl<'a> Accept<'a> {
    /// Reads every `Accept` line of `headers`.
    pub fn from_headers(headers: &'a HeaderMap) -> Self {
        // One lookup here; the usual single line is then re-read as text with no further
        // header-map lookups, however many times the clauses are walked.
        let mut lines = headers.get_all(ACCEPT).iter();
        let source = match (lines.next(), lines.next()) {
            (None, _) => Source::Str(""),
            (Some(line), None) => Source::Str(line_text(line)),
            (Some(_), Some(_)) => Source::Headers(headers),
        };
        Accept { source }
    }

    /// Reads one header value given as text.
    pub fn from_value(value: &'a str) -> Self {
        Accept {
            source: Source::Str(value),
        }
    }

    /// The valid clauses, in header order.
    pub fn clauses(&self) -> Clauses<'a> {
        let (lines, current) = match &self.source {
            Source::Headers(h) => (Some(h.get_all(ACCEPT).iter()), ""),
            Source::Str(s) => (None, *s),
        };
        Clauses { lines, current }
    }

    /// Whether there is no valid clause (no header, empty header, or only malformed clauses).
    /// conneg treats all three as "anything, server's first choice".
    pub fn is_empty(&self) -> bool {
        self.clauses().next().is_none()
    }

    /// The quality the client gives to the concrete media type `media` (RFC 9110 §12.5.1):
    /// the weight of the most specific matching range, where a range's parameters must all be
    /// present in `media` with equal values. [`QValue::ZERO`] when nothing matches. An empty
    /// `Accept` accepts everything ([`QValue::ONE`]).
    pub fn quality(&self, media: &MediaRange<'_>) -> QValue {
        let mut best: Option<(Specificity, usize, QValue)> = None;
        let mut any = false;
        for clause in self.clauses() {
            any = true;
            let r = &clause.range;
            let essence_ok = r.type_() == "*"
                || (r.type_().eq_ignore_ascii_case(media.type_())
                    && (r.subtype() == "*" || r.subtype().eq_ignore_ascii_case(media.subtype())));
            if !essence_ok {
                continue;
            }
            let mut n = 0;
            let params_ok = r.params().all(|(name, value)| {
                n += 1;
                media
                    .param(name)
                    .is_some_and(|v| v.unquoted() == value.unquoted())
            });
            if !params_ok {
                continue;
            }
            let key = (r.specificity(), n);
            if best.is_none_or(|(s, c, _)| key > (s, c)) {
                best = Some((key.0, key.1, clause.q));
            }
        }
        match best {
            Some((_, _, q)) => q,
            None if !any => QValue::ONE,
            None => QValue::ZERO,
        }
    }
}

/// Iterator over the valid clauses of [`Accept`].
#[derive(Debug)]
pub struct Clauses<'a> {
    lines: Option<ValueIter<'a, HeaderValue>>,
    current: &'a str,
}

impl<'a> Iterator for Clauses<'a> {
    type Item = AcceptClause<'a>;

    fn next(&mut self) -> Option<AcceptClause<'a>> {
        loop {
            if self.current.is_empty() {
                let line = self.lines.as_mut()?.next()?;
                self.current = line_text(line);
                continue;
            }
            let (item, rest) = split_list_item(self.current);
            self.current = rest;
            if item.bytes().all(|b| b == b' ' || b == b'\t') {
                continue;
            }
            if let Some(parsed) = parse_item(item, true) {
                return Some(AcceptClause {
                    range: parsed.range,
                    q: QValue(parsed.q.unwrap_or(1000)),
                });
            }
        }
    }
}

/// A header line as text; non-UTF-8 lines (obs-text) cannot name a media type we serve, so they
/// read as empty.
fn line_text(line: &HeaderValue) -> &str {
    std::str::from_utf8(line.as_bytes()).unwrap_or("")
}

/// Splits off the first element of a comma-separated list, honouring quoted strings.
pub(crate) fn split_list_item(s: &str) -> (&str, &str) {
    let b = s.as_bytes();
    let mut i = 0;
    let mut quoted = false;
    while i < b.len() {
        match b[i] {
            b'\\' if quoted => i += 1,
            b'"' => quoted = !quoted,
            b',' if !quoted => return (&s[..i], &s[i + 1..]),
            _ => {}
        }
        i += 1;
    }
    (s, "")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn q(accept: &str, media: &str) -> u16 {
        Accept::from_value(accept)
            .quality(&MediaRange::parse(media).unwrap())
            .millis()
    }

    /// RFC 9110 §12.5.1's worked example.
    #[test]
    fn rfc9110_example() {
        let h = "text/*;q=0.3, text/plain;q=0.7, text/plain;format=flowed, text/plain;format=fixed;q=0.4, */*;q=0.5";
        assert_eq!(q(h, "text/plain;format=flowed"), 1000);
        assert_eq!(q(h, "text/plain"), 700);
        assert_eq!(q(h, "text/html"), 300);
        assert_eq!(q(h, "image/jpeg"), 500);
        assert_eq!(q(h, "text/plain;format=fixed"), 400);
        // The RFC's table says 0.7 here, which contradicts its own rule (erratum 7138): only
        // `text/*` matches `text/html;level=3`.
        assert_eq!(q(h, "text/html;level=3"), 300);
    }

    #[test]
    fn q_zero_and_empty() {
        assert_eq!(q("application/cbor;q=0, */*", "application/cbor"), 0);
        assert_eq!(q("application/cbor;q=0, */*", "application/json"), 1000);
        assert_eq!(q("", "application/json"), 1000);
        assert_eq!(q("text/html", "application/json"), 0);
    }

    #[test]
    fn multiple_lines_and_malformed_clauses() {
        let mut headers = HeaderMap::new();
        headers.append(
            ACCEPT,
            HeaderValue::from_static("application/json;q=0.5, foo, bar/baz;x"),
        );
        headers.append(ACCEPT, HeaderValue::from_static(""));
        headers.append(
            ACCEPT,
            HeaderValue::from_static(" , application/cbor ; q=0.8 ,"),
        );
        let accept = Accept::from_headers(&headers);
        let clauses: Vec<_> = accept
            .clauses()
            .map(|c| (c.range.to_string(), c.q.millis()))
            .collect();
        assert_eq!(
            clauses,
            [
                ("application/json".to_owned(), 500),
                ("application/cbor".to_owned(), 800)
            ]
        );
        assert!(!accept.is_empty());
        assert!(Accept::from_headers(&HeaderMap::new()).is_empty());
        assert!(Accept::from_value(" ,, ").is_empty());
    }

    #[test]
    fn quoted_commas_do_not_split() {
        let accept = Accept::from_value(r#"a/b;x="1,2", c/d"#);
        let clauses: Vec<_> = accept.clauses().collect();
        assert_eq!(clauses.len(), 2);
        assert_eq!(clauses[0].range.param("x").unwrap(), "1,2");
    }

    #[test]
    fn case_insensitive_q_and_names() {
        assert_eq!(q("APPLICATION/JSON;Q=0.2", "application/json"), 200);
    }

    #[test]
    fn qvalue_display() {
        assert_eq!(QValue::from_millis(500).to_string(), "0.5");
        assert_eq!(QValue::from_millis(1).to_string(), "0.001");
        assert_eq!(QValue::ONE.to_string(), "1");
        assert_eq!(QValue::ZERO.to_string(), "0");
    }
}
