use std::pin::Pin;
use std::task::{Context, Poll};

use bytes::Bytes;
use http_body::{Frame, SizeHint};
use http_body_util::Full;
use pin_project_lite::pin_project;

pin_project! {
    /// The response body of [`Negotiate`](super::Negotiate): the inner service's body, or one
    /// the layer encoded (a rejection, a deferred value, a re-encoded `Status`).
    pub struct NegotiateBody<B> {
        #[pin]
        kind: Kind<B>,
    }
}

pin_project! {
    #[project = KindProj]
    enum Kind<B> {
        Inner { #[pin] body: B },
        Full { #[pin] body: Full<Bytes> },
    }
}

impl<B> NegotiateBody<B> {
    pub(crate) fn inner(body: B) -> Self {
        NegotiateBody {
            kind: Kind::Inner { body },
        }
    }

    pub(crate) fn full(bytes: Bytes) -> Self {
        NegotiateBody::from_full(Full::new(bytes))
    }

    pub(crate) fn from_full(body: Full<Bytes>) -> Self {
        NegotiateBody {
            kind: Kind::Full { body },
        }
    }
}

impl<B> std::fmt::Debug for NegotiateBody<B> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self.kind {
            Kind::Inner { .. } => "NegotiateBody::Inner",
            Kind::Full { .. } => "NegotiateBody::Full",
        })
    }
}

impl<B> http_body::Body for NegotiateBody<B>
where
    B: http_body::Body<Data = Bytes>,
{
    type Data = Bytes;
    type Error = B::Error;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, B::Error>>> {
        match self.project().kind.project() {
            KindProj::Inner { body } => body.poll_frame(cx),
            KindProj::Full { body } => match body.poll_frame(cx) {
                Poll::Ready(Some(Ok(frame))) => Poll::Ready(Some(Ok(frame))),
                Poll::Ready(Some(Err(never))) => match never {},
                Poll::Ready(None) => Poll::Ready(None),
                Poll::Pending => Poll::Pending,
            },
        }
    }

    fn is_end_stream(&self) -> bool {
        match &self.kind {
            Kind::Inner { body } => body.is_end_stream(),
            Kind::Full { body } => body.is_end_stream(),
        }
    }

    fn size_hint(&self) -> SizeHint {
        match &self.kind {
            Kind::Inner { body } => body.size_hint(),
            Kind::Full { body } => body.size_hint(),
        }
    }
}
