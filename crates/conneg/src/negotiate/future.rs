use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll, ready};

use bytes::Bytes;
use http::header::{ACCEPT, CONTENT_LENGTH, CONTENT_TYPE, VARY};
use http::{HeaderMap, HeaderValue, Response, StatusCode};
use http_body_util::Full;
use pin_project_lite::pin_project;

use super::NegotiateBody;
use crate::codec::{Codec, EncodeError};
use crate::negotiate::decision::{Negotiated, append_warnings};
use crate::problem::Problem;
use crate::status::Status;

type Encode = dyn Fn(&Negotiated) -> Result<Bytes, EncodeError> + Send + Sync;

/// A response value whose encoding waits for the negotiated codec: the handler's response
/// carries it in its extensions, and [`ResponseFuture`] runs it. One allocation (the `Arc`
/// holding the closure and the value) per response; the encoding inside it is monomorphic (no
/// erased serde).
///
/// The response it rides on carries a placeholder status, 599 (what the client sees if the
/// layer is missing: a server error, RFC 9110 §15 treats an unknown 5xx as 500). A status
/// still equal to [`Deferred::PLACEHOLDER`] when the layer sees it means "not set by the
/// handler" and becomes 200; any other status (from `(StatusCode::CREATED, Conneg(v))`, or
/// an explicit `(StatusCode::INTERNAL_SERVER_ERROR, Conneg(v))`) is kept. No handler has a
/// reason to send 599, so no status a handler chooses is mistaken for the placeholder.
#[derive(Clone)]
pub(crate) struct Deferred {
    encode: Arc<Encode>,
}

impl Deferred {
    pub(crate) const PLACEHOLDER: StatusCode = match StatusCode::from_u16(599) {
        Ok(code) => code,
        Err(_) => panic!("599 is a valid status code"),
    };

    #[cfg_attr(not(feature = "axum"), allow(dead_code))]
    pub(crate) fn new(encode: Arc<Encode>) -> Self {
        Deferred { encode }
    }

    fn encode(&self, negotiated: &Negotiated) -> Result<Bytes, EncodeError> {
        (self.encode)(negotiated)
    }
}

impl fmt::Debug for Deferred {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Deferred").finish_non_exhaustive()
    }
}

pin_project! {
    /// The response future of [`Negotiate`](super::Negotiate).
    pub struct ResponseFuture<F> {
        #[pin]
        kind: Kind<F>,
    }
}

pin_project! {
    #[project = KindProj]
    enum Kind<F> {
        Inner {
            #[pin]
            future: F,
            negotiated: Option<Negotiated>,
            span: tracing::Span,
        },
        Reject {
            response: Option<Response<Full<Bytes>>>,
        },
    }
}

impl<F> ResponseFuture<F> {
    pub(crate) fn inner(future: F, negotiated: Negotiated, span: tracing::Span) -> Self {
        ResponseFuture {
            kind: Kind::Inner {
                future,
                negotiated: Some(negotiated),
                span,
            },
        }
    }

    pub(crate) fn reject(response: Response<Full<Bytes>>) -> Self {
        ResponseFuture {
            kind: Kind::Reject {
                response: Some(response),
            },
        }
    }
}

impl<F: fmt::Debug> fmt::Debug for ResponseFuture<F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ResponseFuture").finish_non_exhaustive()
    }
}

impl<F, B, E> Future for ResponseFuture<F>
where
    F: Future<Output = Result<Response<B>, E>>,
    B: http_body::Body<Data = Bytes>,
{
    type Output = Result<Response<NegotiateBody<B>>, E>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        match self.project().kind.project() {
            KindProj::Inner {
                future,
                negotiated,
                span,
            } => {
                let _entered = span.enter();
                let response = ready!(future.poll(cx))?;
                let negotiated = negotiated
                    .take()
                    .expect("ResponseFuture polled after completion");
                Poll::Ready(Ok(finish(response, negotiated)))
            }
            KindProj::Reject { response } => {
                let response = response
                    .take()
                    .expect("ResponseFuture polled after completion");
                let mut response = response.map(NegotiateBody::from_full);
                add_vary_accept(response.headers_mut());
                Poll::Ready(Ok(response))
            }
        }
    }
}

/// The handler's `response` in the negotiated form, carrying `negotiated` in its extensions
/// (for the layers outside, such as a metrics layer that counts media types).
fn finish<B>(response: Response<B>, negotiated: Negotiated) -> Response<NegotiateBody<B>> {
    let (mut parts, body) = response.into_parts();
    let mut encoded = None;
    if let Some(deferred) = parts.extensions.remove::<Deferred>() {
        match deferred.encode(&negotiated) {
            Ok(bytes) => {
                if parts.status == Deferred::PLACEHOLDER {
                    parts.status = StatusCode::OK;
                }
                parts
                    .headers
                    .insert(CONTENT_TYPE, negotiated.content_type());
                encoded = Some(bytes);
            }
            Err(err) => encoded = Some(render_error(&mut parts, &Status::from(err), &negotiated)),
        }
    } else if let Some(status) = parts.extensions.get::<Status>() {
        // The body is a compact JSON `Status` already; re-encode only when the client
        // negotiated something else, or the route writes errors another way.
        if !negotiated.error_style().is_status()
            || !matches!(negotiated.response_codec(), Codec::Json)
            || negotiated.is_pretty()
        {
            let status = status.clone();
            encoded = Some(render_error(&mut parts, &status, &negotiated));
        }
    } else if let Some(problem) = parts.extensions.get::<Problem>() {
        // A problem the handler chose is sent as it is, in the negotiated format.
        if !matches!(negotiated.response_codec(), Codec::Json) {
            let problem = problem.to_response(negotiated.response_codec());
            encoded = Some(take_head(&mut parts, problem));
        }
    }
    let warnings = negotiated.take_warnings();
    append_warnings(&mut parts.headers, &warnings);
    add_vary_accept(&mut parts.headers);
    let body = match encoded {
        Some(bytes) => {
            parts.headers.remove(CONTENT_LENGTH);
            NegotiateBody::full(bytes)
        }
        None => NegotiateBody::inner(body),
    };
    parts.extensions.insert(negotiated);
    Response::from_parts(parts, body)
}

/// Replaces the status and headers of `parts` with the route's error response for `status`
/// (headers the handler set, such as `Allow`, stay) and returns its body.
fn render_error(
    parts: &mut http::response::Parts,
    status: &Status,
    negotiated: &Negotiated,
) -> Bytes {
    let rendered = negotiated.reject(status.clone()).render();
    take_head(parts, rendered)
}

/// Moves `response`'s status and headers onto `parts`; returns its body.
fn take_head(parts: &mut http::response::Parts, response: Response<Bytes>) -> Bytes {
    let (head, body) = response.into_parts();
    parts.status = head.status;
    let mut name = None;
    for (next, value) in head.headers {
        // A name comes with its first value, which replaces the handler's in place; the
        // values after it share the name.
        match next {
            Some(next) => {
                parts.headers.insert(&next, value);
                name = Some(next);
            }
            None => {
                if let Some(name) = &name {
                    parts.headers.append(name, value);
                }
            }
        }
    }
    body
}

/// Appends `Vary: Accept` unless a `Vary` value already lists `Accept` or `*`.
pub(crate) fn add_vary_accept(headers: &mut HeaderMap) {
    let present = headers.get_all(VARY).iter().any(|v| {
        v.to_str().is_ok_and(|s| {
            s.split(',')
                .map(str::trim)
                .any(|t| t == "*" || t.eq_ignore_ascii_case(ACCEPT.as_str()))
        })
    });
    if !present {
        headers.append(VARY, HeaderValue::from_static("Accept"));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn vary_is_appended_once() {
        let mut h = HeaderMap::new();
        add_vary_accept(&mut h);
        add_vary_accept(&mut h);
        assert_eq!(h.get_all(VARY).iter().count(), 1);

        let mut h = HeaderMap::new();
        h.insert(VARY, HeaderValue::from_static("Accept-Encoding"));
        add_vary_accept(&mut h);
        let all: Vec<_> = h.get_all(VARY).iter().collect();
        assert_eq!(all, ["Accept-Encoding", "Accept"]);

        let mut h = HeaderMap::new();
        h.insert(VARY, HeaderValue::from_static("origin, ACCEPT"));
        add_vary_accept(&mut h);
        assert_eq!(h.get_all(VARY).iter().count(), 1);
    }
}
