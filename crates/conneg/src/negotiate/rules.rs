//! [`Negotiator`]: a route's negotiation rules, and the decision it makes for one request.
//!
//! The Tower layer ([`NegotiateLayer`](crate::NegotiateLayer)) is a thin wrapper around a
//! `Negotiator`; use the `Negotiator` directly when there is no Tower stack (a hand-written
//! hyper service, a test).
//!
//! Order of checks: `fieldValidation` (400), then `Content-Type` (415), then `Accept` (406), then
//! a declared `Content-Length` over the limit (413), for every method. Kubernetes checks the body type first on PATCH and, through go-restful, on every
//! built-in route; doing it first everywhere keeps one rule, and the 415 is still encoded in the
//! negotiated format when `Accept` allows one.
//!
//! ```
//! use conneg::{Codec, Negotiator, PatchType};
//! use http::{HeaderMap, HeaderValue, Method, Uri, header};
//!
//! let negotiator = Negotiator::new().patch_types([PatchType::MergePatch, PatchType::ApplyCbor]);
//! let mut headers = HeaderMap::new();
//! headers.insert(header::ACCEPT, HeaderValue::from_static("application/cbor, */*"));
//! headers.insert(header::CONTENT_TYPE, HeaderValue::from_static("application/json; charset=utf-8"));
//!
//! let uri = Uri::from_static("/apis/x");
//! let n = negotiator.negotiate(&Method::POST, &uri, &headers, true).unwrap();
//! assert_eq!(n.response_codec(), &Codec::Cbor);
//! assert_eq!(n.request_codec(), Some(&Codec::Json));
//!
//! // A JSON body is not a patch: 415, encoded as CBOR because the client accepts CBOR.
//! let rejection = negotiator.negotiate(&Method::PATCH, &uri, &headers, true).unwrap_err();
//! let response = rejection.into_http_response();
//! assert_eq!(response.status(), 415);
//! assert_eq!(response.headers()["accept-patch"], "application/merge-patch+json, application/apply-patch+cbor");
//! assert_eq!(response.headers()["content-type"], "application/cbor");
//! ```

use bytes::Bytes;
use http::header::{ACCEPT, CONTENT_LENGTH, CONTENT_TYPE, TRANSFER_ENCODING};
use http::{HeaderMap, HeaderName, Method, Response, Uri};

use crate::codec::Codec;
use crate::field_validation::FieldValidation;
use crate::headers::accept::Accept;
use crate::headers::content_type::{ContentType, request_content_type};
use crate::headers::params::{AllowedConversion, Conversion};
use crate::negotiate::decision::{Negotiated, RequestFormat};
use crate::negotiate::rejection::{ErrorStyle, Rejection};
use crate::patch::PatchType;
use crate::profile::Profile;
use crate::query;
use crate::registry::{Codecs, join_media_types, select};
use crate::status::Status;

/// `Accept-Patch` (RFC 5789 §3.1).
pub const ACCEPT_PATCH: HeaderName = HeaderName::from_static("accept-patch");

/// Kubernetes' default request body limit: 3 MiB.
pub const DEFAULT_BODY_LIMIT: usize = 3 * 1024 * 1024;

/// What a route offers and accepts. Cheap to clone; build once per route.
#[derive(Clone, Debug)]
pub struct Negotiator {
    codecs: Codecs,
    request_codecs: Option<Vec<Codec>>,
    /// `None`: the profile's.
    patch_types: Option<Vec<PatchType>>,
    conversions: Vec<AllowedConversion>,
    body_limit: usize,
    streaming: bool,
    /// `None`: the profile's.
    field_validation: Option<FieldValidation>,
    errors: ErrorStyle,
}

impl Default for Negotiator {
    fn default() -> Self {
        Negotiator {
            codecs: Codecs::new(),
            request_codecs: None,
            patch_types: None,
            conversions: Vec::new(),
            body_limit: DEFAULT_BODY_LIMIT,
            streaming: false,
            field_validation: None,
            errors: ErrorStyle::default(),
        }
    }
}

impl Negotiator {
    /// The [standard profile](crate::Profile::Standard): JSON then CBOR both ways, merge patch
    /// on PATCH, no conversions, 3 MiB bodies, unknown fields ignored.
    pub fn new() -> Self {
        Self::default()
    }

    /// Follows `profile`'s conventions (see [`Profile`]): its error bodies, CBOR strings and
    /// query parameters, and its default patch types and field validation where
    /// [`patch_types`](Self::patch_types) and [`field_validation`](Self::field_validation) did
    /// not set them. An error mapping ([`map_errors`](Self::map_errors)) is kept.
    ///
    /// ```
    /// use conneg::{FieldValidation, Negotiator, PatchType, Profile};
    /// use http::{HeaderMap, Method, Uri};
    ///
    /// let kubernetes = Negotiator::new().profile(Profile::Kubernetes);
    /// let uri = Uri::from_static("/x?fieldValidation=Strict");
    /// let n = kubernetes.negotiate(&Method::POST, &uri, &HeaderMap::new(), true).unwrap();
    /// assert_eq!(n.field_validation(), FieldValidation::Strict);
    /// assert_eq!(kubernetes.get_patch_types(), PatchType::all());
    ///
    /// // The standard profile reads no query parameter.
    /// let n = Negotiator::new().negotiate(&Method::POST, &uri, &HeaderMap::new(), true).unwrap();
    /// assert_eq!(n.field_validation(), FieldValidation::Ignore);
    /// assert_eq!(Negotiator::new().get_patch_types(), [PatchType::MergePatch]);
    /// ```
    pub fn profile(mut self, profile: Profile) -> Self {
        self.errors.profile = profile;
        self
    }

    /// The profile.
    pub fn get_profile(&self) -> Profile {
        self.errors.profile
    }

    /// Maps every error conneg produces for this route (406, 415, 413, an undecodable body or
    /// patch, the `conneg::axum` extractors' and fallbacks' errors, a `Status` a handler
    /// returns) to the service's own response, in place of the profile's format. `f` gets the
    /// [`Rejection`] (code, message, negotiated codec) and usually answers with
    /// [`Rejection::respond`]; conneg then adds `Accept`/`Accept-Patch` on 415.
    pub fn map_errors(
        mut self,
        f: impl Fn(&Rejection) -> Response<Bytes> + Send + Sync + 'static,
    ) -> Self {
        self.errors = self.errors.with_map(f);
        self
    }

    /// The response codecs, in the server's order of preference (the first one answers a
    /// request without `Accept`).
    pub fn codecs(mut self, codecs: Codecs) -> Self {
        self.codecs = codecs;
        self
    }

    /// Adds a codec (for example a [`CustomCodec`](crate::CustomCodec)) at the end of the
    /// preference order, for responses and, unless restricted, request bodies.
    pub fn codec(mut self, codec: Codec) -> Self {
        self.codecs = self.codecs.with(codec);
        self
    }

    /// Restricts request bodies (POST, PUT, ...) to these codecs; by default every response
    /// codec is accepted.
    pub fn accept_request_types(mut self, codecs: impl IntoIterator<Item = Codec>) -> Self {
        self.request_codecs = Some(codecs.into_iter().collect());
        self
    }

    /// The patch types a PATCH request may use (default: the profile's, merge patch for the
    /// standard profile, all of [`PatchType::all`] for Kubernetes). An empty list makes PATCH
    /// bodies follow the ordinary request codecs instead.
    pub fn patch_types(mut self, types: impl IntoIterator<Item = PatchType>) -> Self {
        self.patch_types = Some(types.into_iter().collect());
        self
    }

    /// The patch types a PATCH request may use.
    pub fn get_patch_types(&self) -> &[PatchType] {
        self.patch_types
            .as_deref()
            .unwrap_or(self.errors.profile.patch_types())
    }

    /// Lets clients ask for `conversion` (e.g. `as=Table;g=meta.k8s.io;v=v1`) in the given
    /// codecs. Your handler reads [`Negotiated::conversion`] and produces that shape.
    pub fn conversion(
        mut self,
        conversion: Conversion,
        codecs: impl IntoIterator<Item = Codec>,
    ) -> Self {
        self.conversions.push(AllowedConversion {
            conversion,
            codecs: codecs.into_iter().collect(),
        });
        self
    }

    /// The maximum request body size (default 3 MiB); larger bodies get 413.
    pub fn body_limit(mut self, limit: usize) -> Self {
        self.body_limit = limit;
        self
    }

    /// Marks the route as able to stream (list/watch): `application/cbor-seq` in `Accept` then
    /// selects CBOR with [`MediaTypeParams::stream`](crate::MediaTypeParams) set. A watch
    /// (`?watch=true`, read as Kubernetes reads it) streams whatever this says.
    pub fn streaming(mut self, streaming: bool) -> Self {
        self.streaming = streaming;
        self
    }

    /// The field validation used when the request has no `fieldValidation` query parameter
    /// (the Kubernetes profile reads it) (default: the profile's, `Ignore` for the standard
    /// profile as `axum::Json`, `Warn` for Kubernetes; `Ignore` is the fastest).
    pub fn field_validation(mut self, validation: FieldValidation) -> Self {
        self.field_validation = Some(validation);
        self
    }

    /// The response codecs.
    pub fn response_codecs(&self) -> &Codecs {
        &self.codecs
    }

    /// The codecs accepted for request bodies.
    pub fn request_codecs(&self) -> &[Codec] {
        self.request_codecs
            .as_deref()
            .unwrap_or(self.codecs.as_slice())
    }

    /// The body limit in bytes, as set by [`body_limit`](Self::body_limit).
    pub fn get_body_limit(&self) -> usize {
        self.body_limit
    }

    fn is_patch_route(&self, method: &Method) -> bool {
        method == Method::PATCH && !self.get_patch_types().is_empty()
    }

    /// The media types listed in a 406.
    fn available(&self, streaming: bool) -> String {
        let singles = self.codecs.as_slice().iter().map(Codec::media_type);
        if streaming {
            join_media_types(
                singles.chain(
                    self.codecs
                        .as_slice()
                        .iter()
                        .filter_map(Codec::stream_media_type),
                ),
            )
        } else {
            join_media_types(singles)
        }
    }

    /// Decides the request and response formats for one request.
    ///
    /// `has_body` says whether the request carries a body (for a Tower service, use
    /// `!body.is_end_stream()` or the size hint; [`negotiate_parts`](Self::negotiate_parts) reads it from the headers). A
    /// request without a body gets no request format and is never rejected for its
    /// `Content-Type`, except PATCH, which needs a patch type.
    pub fn negotiate(
        &self,
        method: &Method,
        uri: &Uri,
        headers: &HeaderMap,
        has_body: bool,
    ) -> Result<Negotiated, Rejection> {
        let profile = self.errors.profile;
        // Only the Kubernetes profile reads query parameters.
        let query = uri.query().filter(|_| profile.reads_query());
        // The route knows it streams; so does any watch request (`?watch` as Kubernetes
        // reads its options: `?watch=null` is a watch).
        let streaming = self.streaming || query::option_flag(query, "watch");
        let selection = select(
            &Accept::from_headers(headers),
            self.codecs.as_slice(),
            &self.conversions,
            streaming,
        );
        let kubernetes = profile == Profile::Kubernetes;
        let pretty = kubernetes
            && (selection.as_ref().is_some_and(|s| s.params.pretty)
                || query::flag(query, "pretty"));
        // Errors go out in the negotiated format; with nothing acceptable, as JSON (indented
        // in the Kubernetes profile: Kubernetes' raw-JSON fallback).
        let reject = |status: Status| match &selection {
            Some(s) => Rejection::new(status, s.codec.clone(), pretty, self.errors.clone()),
            None => Rejection::new(status, Codec::Json, kubernetes, self.errors.clone()),
        };

        let field_validation = match FieldValidation::from_query(query) {
            Ok(v) => v.unwrap_or(self.field_validation.unwrap_or(profile.field_validation())),
            Err(message) => return Err(reject(Status::bad_request(message))),
        };

        let is_patch = self.is_patch_route(method);
        let request = if has_body || is_patch {
            Some(self.request_format(headers, is_patch))
        } else {
            None
        };

        let request = match request {
            Some(Err(())) => {
                let accepted = if is_patch {
                    join_media_types(self.get_patch_types().iter().map(|p| p.media_type()))
                } else {
                    join_media_types(self.request_codecs().iter().map(Codec::media_type))
                };
                tracing::debug!(content_type = ?headers.get(CONTENT_TYPE), %accepted, "conneg: 415 unsupported request media type");
                return Err(reject(Status::unsupported_media_type(&accepted))
                    .with_accepted(&accepted, is_patch));
            }
            Some(Ok(format)) => Some(format),
            None => None,
        };

        let Some(selection) = selection else {
            let available = self.available(streaming);
            tracing::debug!(accept = ?headers.get(ACCEPT), %available, "conneg: 406 nothing acceptable");
            return Err(reject(Status::not_acceptable(&available)));
        };
        if let Some(len) = content_length(headers)
            && len > self.body_limit as u64
        {
            tracing::debug!(
                len,
                limit = self.body_limit,
                "conneg: 413 declared body too large"
            );
            let status = Status::request_entity_too_large(self.body_limit);
            return Err(Rejection::new(
                status,
                selection.codec,
                pretty,
                self.errors.clone(),
            ));
        }

        tracing::trace!(
            response = %selection.codec,
            q = %selection.q,
            conversion = ?selection.params.conversion,
            stream = selection.params.stream,
            request = ?request,
            "conneg: negotiated"
        );
        Ok(Negotiated::new(
            selection.codec,
            selection.params,
            pretty,
            request,
            self.body_limit,
            field_validation,
            self.errors.clone(),
        ))
    }

    /// Like [`negotiate`](Self::negotiate) on request parts, deciding `has_body` from the
    /// headers (a body is announced by `Content-Length` other than 0 or by `Transfer-Encoding`).
    pub fn negotiate_parts(&self, parts: &http::request::Parts) -> Result<Negotiated, Rejection> {
        self.negotiate(
            &parts.method,
            &parts.uri,
            &parts.headers,
            request_has_body(&parts.headers),
        )
    }

    fn request_format(&self, headers: &HeaderMap, is_patch: bool) -> Result<RequestFormat, ()> {
        match request_content_type(headers) {
            ContentType::Present(range) if is_patch => PatchType::from_media_range(&range)
                .filter(|p| self.get_patch_types().contains(p))
                .map(RequestFormat::Patch)
                .ok_or(()),
            ContentType::Present(range) => self
                .request_codecs()
                .iter()
                .find(|c| c.is(&range))
                .cloned()
                .map(RequestFormat::Codec)
                .ok_or(()),
            // Kubernetes: a body without a type is JSON (its first serializer), but a patch
            // must say which kind of patch it is.
            ContentType::Missing if !is_patch => self
                .request_codecs()
                .iter()
                .find(|c| matches!(c, Codec::Json))
                .cloned()
                .map(RequestFormat::Codec)
                .ok_or(()),
            ContentType::Missing | ContentType::Invalid => Err(()),
        }
    }
}

fn content_length(headers: &HeaderMap) -> Option<u64> {
    headers
        .get(CONTENT_LENGTH)?
        .to_str()
        .ok()?
        .trim()
        .parse()
        .ok()
}

/// Whether the headers announce a body: a non-zero `Content-Length` or any
/// `Transfer-Encoding`.
pub(crate) fn request_has_body(headers: &HeaderMap) -> bool {
    content_length(headers).is_some_and(|n| n > 0) || headers.contains_key(TRANSFER_ENCODING)
}

#[cfg(test)]
mod tests {
    use super::*;
    use http::{HeaderValue, StatusCode};

    fn headers(pairs: &[(&'static str, &'static str)]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for (k, v) in pairs {
            h.append(HeaderName::from_static(k), HeaderValue::from_static(v));
        }
        h
    }

    fn run(
        n: &Negotiator,
        method: Method,
        h: &[(&'static str, &'static str)],
        body: bool,
    ) -> Result<Negotiated, Rejection> {
        n.negotiate(&method, &Uri::from_static("/x"), &headers(h), body)
    }

    #[test]
    fn missing_content_type_is_json_but_not_for_patch() {
        let n = Negotiator::new();
        let ok = run(&n, Method::POST, &[], true).unwrap();
        assert_eq!(ok.request_codec(), Some(&Codec::Json));
        let err = run(&n, Method::PATCH, &[], true).unwrap_err();
        assert_eq!(err.status().code(), StatusCode::UNSUPPORTED_MEDIA_TYPE);
    }

    #[test]
    fn no_body_no_request_format() {
        let n = Negotiator::new();
        let ok = run(&n, Method::GET, &[("content-type", "nonsense")], false).unwrap();
        assert_eq!(ok.request_format(), None);
    }

    #[test]
    fn unsupported_request_type_lists_accepted_types() {
        let n = Negotiator::new().accept_request_types([Codec::Json]);
        let err = run(
            &n,
            Method::PUT,
            &[("content-type", "application/cbor")],
            true,
        )
        .unwrap_err();
        assert_eq!(err.headers()[ACCEPT], "application/json");
        assert_eq!(
            err.status().message,
            "the body of the request was in an unknown format - accepted media types include: application/json"
        );
        assert!(err.headers().get(ACCEPT_PATCH).is_none());
    }

    #[test]
    fn patch_types() {
        let n = Negotiator::new().patch_types(PatchType::custom_resource().iter().copied());
        let ok = run(
            &n,
            Method::PATCH,
            &[("content-type", "application/apply-patch+cbor")],
            true,
        )
        .unwrap();
        assert_eq!(ok.patch_type(), Some(PatchType::ApplyCbor));
        let err = run(
            &n,
            Method::PATCH,
            &[("content-type", "application/strategic-merge-patch+json")],
            true,
        )
        .unwrap_err();
        assert_eq!(
            err.headers()[ACCEPT_PATCH],
            "application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml, application/apply-patch+cbor"
        );
        // With no patch types, PATCH takes ordinary bodies.
        let n = Negotiator::new().patch_types([]);
        assert_eq!(
            run(
                &n,
                Method::PATCH,
                &[("content-type", "application/json")],
                true
            )
            .unwrap()
            .request_codec(),
            Some(&Codec::Json)
        );
    }

    #[test]
    fn content_type_checked_before_accept() {
        let n = Negotiator::new();
        let err = run(
            &n,
            Method::POST,
            &[("accept", "text/html"), ("content-type", "text/plain")],
            true,
        )
        .unwrap_err();
        assert_eq!(err.status().code(), StatusCode::UNSUPPORTED_MEDIA_TYPE);
        // Nothing acceptable, so the 415 is indented JSON.
        assert_eq!(err.codec(), &Codec::Json);
        let err = run(
            &n,
            Method::POST,
            &[
                ("accept", "text/html"),
                ("content-type", "application/json"),
            ],
            true,
        )
        .unwrap_err();
        assert_eq!(err.status().code(), StatusCode::NOT_ACCEPTABLE);
        assert_eq!(
            err.status().message,
            "only the following media types are accepted: application/json, application/cbor"
        );
    }

    #[test]
    fn streaming_routes_list_stream_types() {
        let n = Negotiator::new().streaming(true);
        let err = run(&n, Method::GET, &[("accept", "text/html")], false).unwrap_err();
        assert!(err.status().message.ends_with("application/json, application/cbor, application/json;stream=watch, application/cbor-seq"));
    }

    #[test]
    fn a_watch_streams_whatever_the_route_says() {
        let n = Negotiator::new().profile(Profile::Kubernetes);
        let seq = [("accept", "application/cbor-seq")];
        let watch = |q: &'static str| {
            n.negotiate(&Method::GET, &Uri::from_static(q), &headers(&seq), false)
        };
        let ok = watch("/items?watch=true").unwrap();
        assert!(ok.is_stream());
        assert_eq!(ok.stream_content_type().unwrap(), "application/cbor-seq");
        // `?watch` as apimachinery reads a boolean: present and not `0`/`false` is true.
        for q in [
            "/items?resourceVersion=1&watch=1",
            "/items?watch",
            "/items?watch=null",
        ] {
            assert!(watch(q).unwrap().is_stream(), "{q}");
        }
        // Not a watch: a list of a non-streaming route does not offer the sequence type.
        for q in ["/items", "/items?watch=false", "/items?watch=0"] {
            let err = watch(q).unwrap_err();
            assert_eq!(err.status().code(), StatusCode::NOT_ACCEPTABLE, "{q}");
        }
    }

    #[test]
    fn declared_length_over_limit_is_413() {
        let n = Negotiator::new().body_limit(10);
        let err = run(&n, Method::POST, &[("content-length", "11")], true).unwrap_err();
        assert_eq!(err.status().code(), StatusCode::PAYLOAD_TOO_LARGE);
        assert!(run(&n, Method::POST, &[("content-length", "10")], true).is_ok());
    }

    #[test]
    fn query_parameters() {
        let n = Negotiator::new().profile(Profile::Kubernetes);
        let uri = Uri::from_static("/x?pretty=true&fieldValidation=Strict");
        let ok = n
            .negotiate(&Method::POST, &uri, &HeaderMap::new(), true)
            .unwrap();
        assert!(ok.is_pretty());
        assert_eq!(ok.field_validation(), FieldValidation::Strict);
        let uri = Uri::from_static("/x?fieldValidation=Nope");
        let err = n
            .negotiate(&Method::POST, &uri, &HeaderMap::new(), true)
            .unwrap_err();
        assert_eq!(err.status().code(), StatusCode::BAD_REQUEST);
    }
}
