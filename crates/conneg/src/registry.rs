//! The codec registry: which codecs a server offers, in its order of preference, and response
//! codec selection from `Accept`.
//!
//! Selection rules (RFC 9110 §12.5.1 first, Kubernetes-compatible second):
//!
//! 1. Each codec gets the weight of the **most specific** `Accept` clause that matches it
//!    (`type/sub;params` > `type/sub` > `type/*` > `*/*`; among equally specific clauses the
//!    highest `q`, then the first). A clause whose Kubernetes parameters the route cannot honour
//!    (`as=Table` in a codec without that conversion, `stream=watch` on a codec without a stream
//!    form) does not match that codec.
//! 2. `q=0` makes a codec unacceptable, even if a wildcard would match it.
//! 3. The highest `q` wins; among equal `q`, a codec the client **named** beats one matched only
//!    by a wildcard (kubectl's `application/cbor, */*` means CBOR); remaining ties go to the
//!    server's order.
//! 4. No `Accept` (or only empty or malformed clauses) means the server's first codec.
//!
//! ```
//! use conneg::{Codec, Codecs};
//! use conneg::headers::Accept;
//!
//! let codecs = Codecs::new(); // JSON first, then CBOR
//! let pick = |h| codecs.select(&Accept::from_value(h)).map(|s| s.codec);
//! assert_eq!(pick("application/cbor, */*"), Some(Codec::Cbor));
//! assert_eq!(pick("application/json;q=0.9,application/cbor;q=1"), Some(Codec::Cbor));
//! assert_eq!(pick(""), Some(Codec::Json));
//! assert_eq!(pick("text/html"), None);
//! ```

use crate::codec::Codec;
use crate::headers::accept::{Accept, AcceptClause, QValue};
use crate::headers::media_type::{MediaRange, ParamValue, Specificity};
use crate::headers::params::{AllowedConversion, MediaTypeParams};

/// An ordered list of codecs; the order is the server's preference.
#[derive(Clone, Debug)]
pub struct Codecs {
    list: Vec<Codec>,
}

impl Default for Codecs {
    fn default() -> Self {
        Codecs {
            list: vec![Codec::Json, Codec::Cbor],
        }
    }
}

impl Codecs {
    /// JSON, then CBOR (Kubernetes' order for the formats conneg builds in).
    pub fn new() -> Self {
        Self::default()
    }

    /// No codecs; add them with [`with`](Self::with).
    pub fn empty() -> Self {
        Codecs { list: Vec::new() }
    }

    /// Appends `codec`, or moves it to the end if a codec with its media type is already there.
    pub fn with(mut self, codec: Codec) -> Self {
        self.list.retain(|c| !c.same_as(&codec));
        self.list.push(codec);
        self
    }

    /// The codecs in preference order.
    pub fn as_slice(&self) -> &[Codec] {
        &self.list
    }

    /// Whether there are no codecs.
    pub fn is_empty(&self) -> bool {
        self.list.is_empty()
    }

    /// The codec whose media type `range` names exactly (parameters ignored).
    pub fn find(&self, range: &MediaRange<'_>) -> Option<&Codec> {
        self.list.iter().find(|c| c.is(range))
    }

    /// The media types joined with `", "`, as listed in 406/415 messages and `Accept` headers.
    pub fn media_types(&self) -> String {
        join_media_types(self.list.iter().map(Codec::media_type))
    }

    /// Picks the response codec for `accept` (no conversions, no streams).
    pub fn select(&self, accept: &Accept<'_>) -> Option<Selection> {
        select(accept, &self.list, &[], false)
    }
}

pub(crate) fn join_media_types<'a>(types: impl Iterator<Item = &'a str>) -> String {
    let mut out = String::new();
    for t in types {
        if !out.is_empty() {
            out.push_str(", ");
        }
        out.push_str(t);
    }
    out
}

/// The outcome of response negotiation.
#[derive(Clone, Debug, PartialEq)]
pub struct Selection {
    /// The codec to encode the response with.
    pub codec: Codec,
    /// The weight the client gave it.
    pub q: QValue,
    /// The Kubernetes parameters of the winning clause.
    pub params: MediaTypeParams,
}

/// The Kubernetes parameters of one `Accept` clause (others, such as `charset`, are ignored).
#[derive(Default)]
struct ClauseParams<'a> {
    kind: Option<ParamValue<'a>>,
    group: Option<ParamValue<'a>>,
    version: Option<ParamValue<'a>>,
    stream: Option<ParamValue<'a>>,
    pretty: Option<ParamValue<'a>>,
    profile: Option<ParamValue<'a>>,
}

impl<'a> ClauseParams<'a> {
    fn read(range: &MediaRange<'a>) -> Self {
        let mut p = ClauseParams::default();
        for (name, value) in range.params() {
            let is = |n: &str| name.eq_ignore_ascii_case(n);
            let slot = if is("as") {
                &mut p.kind
            } else if is("g") {
                &mut p.group
            } else if is("v") {
                &mut p.version
            } else if is("stream") {
                &mut p.stream
            } else if is("pretty") {
                &mut p.pretty
            } else if is("profile") {
                &mut p.profile
            } else {
                continue;
            };
            slot.get_or_insert(value);
        }
        p
    }

    fn asks_conversion(&self) -> bool {
        self.kind.is_some() || self.group.is_some() || self.version.is_some()
    }

    fn conversion<'c>(
        &self,
        conversions: &'c [AllowedConversion],
    ) -> impl Iterator<Item = &'c AllowedConversion> {
        let (kind, group, version) = (self.kind, self.group, self.version);
        conversions
            .iter()
            .filter(move |a| a.conversion.matches(kind, group, version))
    }
}

/// Whether `clause` matches `codec` on this route; on success, whether it matched through the
/// stream media type (`application/cbor-seq`).
fn clause_matches(
    clause: &AcceptClause<'_>,
    codec: &Codec,
    conversions: &[AllowedConversion],
    streaming: bool,
) -> Option<bool> {
    let range = &clause.range;
    let via_stream_type = streaming
        && !range.is_wildcard()
        && codec
            .stream_media_type()
            .is_some_and(|m| !m.contains(';') && range.essence_eq(m));
    if !via_stream_type && !range.matches_essence(codec.media_type()) {
        return None;
    }
    if !range.has_params() {
        return Some(via_stream_type);
    }
    let params = ClauseParams::read(range);
    if params
        .stream
        .is_some_and(|v| !(v == "watch" && codec.stream_media_type().is_some()))
    {
        return None;
    }
    if params.asks_conversion()
        && !params
            .conversion(conversions)
            .any(|a| a.codecs.iter().any(|c| c.same_as(codec)))
    {
        return None;
    }
    Some(via_stream_type)
}

fn params_of(
    clause: &AcceptClause<'_>,
    conversions: &[AllowedConversion],
    via_stream_type: bool,
) -> MediaTypeParams {
    if !clause.range.has_params() {
        return MediaTypeParams {
            stream: via_stream_type,
            ..MediaTypeParams::default()
        };
    }
    let p = ClauseParams::read(&clause.range);
    MediaTypeParams {
        conversion: if p.asks_conversion() {
            p.conversion(conversions)
                .next()
                .map(|a| a.conversion.clone())
        } else {
            None
        },
        stream: via_stream_type || p.stream.is_some(),
        pretty: p.pretty.is_some_and(|v| v == "1" || v == "true"),
        profile: p.profile.map(|v| v.unquoted().into()),
    }
}

/// How many `Accept` clauses selection keeps on the stack; longer headers are re-parsed per
/// codec instead (same result, no allocation either way).
const STACK_CLAUSES: usize = 16;

/// Response negotiation; see the module docs for the rules.
pub(crate) fn select(
    accept: &Accept<'_>,
    codecs: &[Codec],
    conversions: &[AllowedConversion],
    streaming: bool,
) -> Option<Selection> {
    // Parse the header once into a stack buffer: typical headers have 1-6 clauses.
    let mut buf = [None::<AcceptClause<'_>>; STACK_CLAUSES];
    let mut len = 0;
    for clause in accept.clauses() {
        if len == STACK_CLAUSES {
            return select_in(|| accept.clauses(), codecs, conversions, streaming);
        }
        buf[len] = Some(clause);
        len += 1;
    }
    if len == 0 {
        let codec = codecs.first()?.clone();
        return Some(Selection {
            codec,
            q: QValue::ONE,
            params: MediaTypeParams::default(),
        });
    }
    let parsed = &buf[..len];
    select_in(
        || parsed.iter().flatten().copied(),
        codecs,
        conversions,
        streaming,
    )
}

fn select_in<'a, I>(
    clauses: impl Fn() -> I,
    codecs: &[Codec],
    conversions: &[AllowedConversion],
    streaming: bool,
) -> Option<Selection>
where
    I: Iterator<Item = AcceptClause<'a>>,
{
    // (codec index, q, explicit, clause, via stream type)
    let mut winner: Option<(usize, QValue, bool, AcceptClause<'a>, bool)> = None;
    for (index, codec) in codecs.iter().enumerate() {
        let mut best: Option<(Specificity, QValue, AcceptClause<'a>, bool)> = None;
        for clause in clauses() {
            let Some(via_stream) = clause_matches(&clause, codec, conversions, streaming) else {
                continue;
            };
            let spec = clause.range.specificity();
            if best
                .as_ref()
                .is_none_or(|(s, q, _, _)| (spec, clause.q) > (*s, *q))
            {
                best = Some((spec, clause.q, clause, via_stream));
            }
        }
        let Some((spec, q, clause, via_stream)) = best else {
            continue;
        };
        if q.is_zero() {
            continue;
        }
        let explicit = spec >= Specificity::Subtype;
        if winner
            .as_ref()
            .is_none_or(|(_, wq, wexplicit, _, _)| (q, explicit) > (*wq, *wexplicit))
        {
            winner = Some((index, q, explicit, clause, via_stream));
        }
    }
    let (index, q, _, clause, via_stream) = winner?;
    Some(Selection {
        codec: codecs[index].clone(),
        q,
        params: params_of(&clause, conversions, via_stream),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::headers::params::Conversion;

    fn pick(
        accept: &str,
        codecs: &[Codec],
        conversions: &[AllowedConversion],
        streaming: bool,
    ) -> Option<Selection> {
        select(&Accept::from_value(accept), codecs, conversions, streaming)
    }

    fn codec(accept: &str) -> Option<Codec> {
        pick(accept, &[Codec::Json, Codec::Cbor], &[], false).map(|s| s.codec)
    }

    #[test]
    fn kubernetes_client_headers() {
        // kubectl with ClientsPreferCBOR.
        assert_eq!(codec("application/cbor, */*"), Some(Codec::Cbor));
        // dynamic client with ClientsAllowCBOR.
        assert_eq!(
            codec("application/json;q=0.9,application/cbor;q=1"),
            Some(Codec::Cbor)
        );
        assert_eq!(
            codec("application/cbor;q=0.9,application/json;q=1"),
            Some(Codec::Json)
        );
        // generated clients without CBOR.
        assert_eq!(codec("application/json, */*"), Some(Codec::Json));
        // built-in typed client: protobuf first, which we do not serve.
        assert_eq!(
            codec("application/vnd.kubernetes.protobuf,application/json"),
            Some(Codec::Json)
        );
        assert_eq!(
            codec("application/json, application/cbor"),
            Some(Codec::Json)
        );
    }

    #[test]
    fn q_zero_is_not_acceptable() {
        assert_eq!(codec("application/cbor;q=0"), None);
        assert_eq!(codec("application/cbor;q=0, */*"), Some(Codec::Json));
        assert_eq!(
            pick(
                "*/*, application/json;q=0",
                &[Codec::Json, Codec::Cbor],
                &[],
                false
            )
            .unwrap()
            .codec,
            Codec::Cbor
        );
        assert_eq!(
            codec("application/cbor;q=0, application/json;q=0.1"),
            Some(Codec::Json)
        );
    }

    #[test]
    fn specificity_and_server_order() {
        // The specific clause sets CBOR's weight below the wildcard's.
        assert_eq!(
            pick(
                "*/*, application/cbor;q=0.5",
                &[Codec::Cbor, Codec::Json],
                &[],
                false
            )
            .unwrap()
            .codec,
            Codec::Json
        );
        assert_eq!(codec("application/*"), Some(Codec::Json));
        assert_eq!(
            pick("application/*", &[Codec::Cbor, Codec::Json], &[], false)
                .unwrap()
                .codec,
            Codec::Cbor
        );
        assert_eq!(codec("*/*"), Some(Codec::Json));
        assert_eq!(
            codec("application/*;q=0.5, application/cbor;q=0.4"),
            Some(Codec::Json)
        );
    }

    #[test]
    fn empty_and_malformed() {
        assert_eq!(codec(""), Some(Codec::Json));
        assert_eq!(codec("garbage"), Some(Codec::Json));
        assert_eq!(codec("garbage, application/cbor"), Some(Codec::Cbor));
        assert_eq!(
            codec("application/json;q=abc, application/cbor;q=0.5"),
            Some(Codec::Cbor)
        );
        assert_eq!(codec("text/html"), None);
        assert_eq!(codec("Application/CBOR"), Some(Codec::Cbor));
        assert_eq!(pick("", &[], &[], false), None);
    }

    #[test]
    fn table_conversion_only_where_supported() {
        let header = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json";
        let table = [AllowedConversion {
            conversion: Conversion::table(),
            codecs: vec![Codec::Json],
        }];
        let codecs = [Codec::Json, Codec::Cbor];

        let s = pick(header, &codecs, &table, false).unwrap();
        assert_eq!(s.codec, Codec::Json);
        assert_eq!(s.params.conversion, Some(Conversion::table()));

        let s = pick(header, &codecs, &[], false).unwrap();
        assert_eq!(s.codec, Codec::Json);
        assert_eq!(s.params.conversion, None);

        // Table is not offered in CBOR, so the CBOR Table clause does not match and the plain
        // JSON clause wins.
        let s = pick(
            "application/cbor;as=Table;v=v1;g=meta.k8s.io, application/json;q=0.5",
            &codecs,
            &table,
            false,
        )
        .unwrap();
        assert_eq!((s.codec, s.params.conversion), (Codec::Json, None));
        // Only a Table in an unsupported version: nothing acceptable.
        assert_eq!(
            pick(
                "application/json;as=Table;v=v1alpha1;g=meta.k8s.io",
                &codecs,
                &table,
                false
            ),
            None
        );
        // Quoted values unquote.
        let s = pick(
            r#"application/json;as="Table";v="v1";g="meta.k8s.io""#,
            &codecs,
            &table,
            false,
        )
        .unwrap();
        assert_eq!(s.params.conversion, Some(Conversion::table()));
    }

    #[test]
    fn stream_and_pretty_params() {
        let codecs = [Codec::Json, Codec::Cbor];
        let s = pick("application/json;stream=watch", &codecs, &[], false).unwrap();
        assert!(s.params.stream);
        assert_eq!(
            pick("application/json;stream=other", &codecs, &[], false),
            None
        );
        assert_eq!(pick("application/cbor-seq", &codecs, &[], false), None);
        let s = pick("application/cbor-seq", &codecs, &[], true).unwrap();
        assert_eq!(s.codec, Codec::Cbor);
        assert!(s.params.stream);
        let s = pick(
            "application/json;pretty=1;profile=\"x y\"",
            &codecs,
            &[],
            false,
        )
        .unwrap();
        assert!(s.params.pretty);
        assert_eq!(s.params.profile.as_deref(), Some("x y"));
    }

    #[test]
    fn long_headers_select_the_same_as_short_ones() {
        let filler = "text/a, text/b, text/c, text/d, text/e, text/f, text/g, text/h, text/i, text/j, text/k, text/l, text/m, text/n, text/o, text/p";
        for tail in [
            "application/cbor",
            "application/cbor;q=0, */*",
            "application/json;q=0.1, application/cbor;q=0.2",
        ] {
            let short = pick(tail, &[Codec::Json, Codec::Cbor], &[], false);
            let long = pick(
                &format!("{filler}, {tail}"),
                &[Codec::Json, Codec::Cbor],
                &[],
                false,
            );
            assert_eq!(short, long, "{tail}");
            assert!(short.is_some());
        }
    }

    #[test]
    fn selection_reports_q() {
        let s = pick(
            "application/cbor;q=0.25",
            &[Codec::Json, Codec::Cbor],
            &[],
            false,
        )
        .unwrap();
        assert_eq!(s.q, QValue::from_millis(250));
    }
}
