//! Arbitrary header text never panics the parsers, and selection only ever picks an offered
//! codec that the client did not refuse.

use conneg::headers::Accept;
use conneg::headers::MediaRange;
use conneg::headers::{ContentType, request_content_type};
use conneg::{Codec, Codecs, Negotiator};
use http::{HeaderMap, HeaderValue, Method, Uri, header};
use proptest::prelude::*;

/// Header-ish text: the characters that matter to the grammar, plus some that must not.
fn header_text() -> impl Strategy<Value = String> {
    proptest::collection::vec(
        prop_oneof![
            Just("application".to_owned()),
            Just("json".to_owned()),
            Just("cbor".to_owned()),
            Just("*".to_owned()),
            Just("/".to_owned()),
            Just(";".to_owned()),
            Just(",".to_owned()),
            Just("=".to_owned()),
            Just("\"".to_owned()),
            Just("\\".to_owned()),
            Just(" ".to_owned()),
            Just("\t".to_owned()),
            Just("q".to_owned()),
            Just("0.5".to_owned()),
            Just("1".to_owned()),
            Just("as=Table".to_owned()),
            Just("é".to_owned()),
            "[ -~]{0,4}",
        ],
        0..24,
    )
    .prop_map(|parts| parts.concat())
}

proptest! {
    #[test]
    fn accept_parsing_never_panics(text in header_text()) {
        let accept = Accept::from_value(&text);
        for clause in accept.clauses() {
            let _ = clause.range.to_string();
            prop_assert!(clause.q.millis() <= 1000);
            for (_, v) in clause.range.params() {
                let _ = v.unquoted();
            }
        }
        if let Some(r) = MediaRange::parse(&text) {
            let _ = accept.quality(&r);
        }
    }

    #[test]
    fn selection_respects_q_zero(text in header_text()) {
        let codecs = Codecs::new();
        let accept = Accept::from_value(&text);
        if let Some(selection) = codecs.select(&accept) {
            prop_assert!(selection.codec == Codec::Json || selection.codec == Codec::Cbor);
            prop_assert!(!selection.q.is_zero());
        }
    }

    #[test]
    fn negotiate_never_panics(accept in header_text(), content_type in header_text(), patch in any::<bool>()) {
        let mut headers = HeaderMap::new();
        if let Ok(v) = HeaderValue::from_str(&accept) {
            headers.insert(header::ACCEPT, v);
        }
        if let Ok(v) = HeaderValue::from_str(&content_type) {
            headers.insert(header::CONTENT_TYPE, v);
        }
        let _ = request_content_type(&headers);
        let method = if patch { Method::PATCH } else { Method::POST };
        match Negotiator::new().profile(conneg::Profile::Kubernetes).negotiate(&method, &Uri::from_static("/"), &headers, true) {
            Ok(n) => prop_assert!(n.request_format().is_some()),
            Err(r) => prop_assert!(r.status().code().is_client_error()),
        }
    }
}

#[test]
fn non_utf8_header_lines_are_skipped() {
    let mut headers = HeaderMap::new();
    headers.append(
        header::ACCEPT,
        HeaderValue::from_bytes(b"text/\xff").unwrap(),
    );
    headers.append(header::ACCEPT, HeaderValue::from_static("application/cbor"));
    let selection = Codecs::new()
        .select(&Accept::from_headers(&headers))
        .unwrap();
    assert_eq!(selection.codec, Codec::Cbor);
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_bytes(b"application/\xffjson").unwrap(),
    );
    assert_eq!(request_content_type(&headers), ContentType::Invalid);
}
