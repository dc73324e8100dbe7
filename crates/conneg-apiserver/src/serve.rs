//! Serving connections with bounds: at most `--max-connections` open at once, and a connection
//! that sends nothing useful is closed; over TLS when the listener has an acceptor, HTTP/2
//! when the client picks `h2` in ALPN ([`crate::http2`]), HTTP/1.1 otherwise.
//!
//! * **TLS.** The handshake runs in a task of its own, within `--header-read-timeout`, so a
//!   client that stalls in it holds only its own connection's permit; the listener hands out
//!   connections whose handshake is done, with the verified client certificate, if any, for
//!   authentication ([`ConnActivity::client_certificates`]). A refused handshake's connection
//!   is closed so that the client reads the alert rather than a reset.
//! * **Connection cap.** [`LimitedListener`] takes a permit before it accepts; while none is
//!   free, new connections wait in the kernel's backlog and open ones are served as usual. A
//!   permit is returned when its connection closes, so open file descriptors stay bounded.
//! * **Idle timeout.** A connection with no request in flight that receives nothing for
//!   `--idle-timeout` (keep-alive between requests, or a connection that never sends) is closed;
//!   the wait starts when the last request in flight finishes. On HTTP/2 a request is a
//!   stream, and frames without one (PING, SETTINGS, WINDOW_UPDATE) do not keep the
//!   connection open.
//! * **Header-read timeout.** Once the first byte of an HTTP/1.1 request arrives, its head
//!   must be complete within `--header-read-timeout` (slowloris). HTTP/2 bounds a header
//!   block by size instead, and an unfinished one is no stream: the idle timeout applies.
//! * **Cancelled streams.** An HTTP/2 client that cancels more streams than its budget
//!   ([`crate::http2`]'s rapid-reset defence) is sent `GOAWAY`, and the connection ends once
//!   its other streams have.
//!
//! Both timeouts are enforced by [`LimitedConn`], which wraps the socket: its reads fail with
//! `TimedOut` at the deadline, and hyper then closes the connection. While a request is in
//! flight (from its complete head until its response body has been sent, which for a watch is
//! as long as the watch lasts) neither applies: the request body has its own deadline
//! ([`crate::timeouts`]). [`track`] tells the connection when a request is in flight.
//! `serve_connections` is the accept loop.

use std::future::Future;
use std::io;
use std::net::SocketAddr;
use std::pin::{Pin, pin};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::task::{Context, Poll};
use std::time::Duration;

use axum::Router;
use axum::body::Body;
use axum::extract::Request;
use axum::extract::connect_info::ConnectInfo;
use axum::response::Response;
use bytes::Bytes;
use futures_util::task::AtomicWaker;
use http_body::Frame;
use hyper_util::rt::{TokioExecutor, TokioIo};
use hyper_util::server::conn::auto::Builder;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{Notify, OwnedSemaphorePermit, Semaphore, watch};
use tokio::task::JoinSet;
use tokio::time::{Instant, Sleep};
use tokio_rustls::TlsAcceptor;
use tokio_rustls::rustls::pki_types::CertificateDer;
use tokio_rustls::server::TlsStream;
use tower::ServiceExt as _;

use crate::http2::{Http2Limits, ResetBudget};
use crate::middleware::{Inner, Middleware, Next};

/// The connection bounds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ConnLimits {
    /// Connections open at once.
    pub max_connections: usize,
    /// From a request's first byte to the end of its head.
    pub header_read_timeout: Duration,
    /// How long a connection may wait for its next request.
    pub idle_timeout: Duration,
    /// The HTTP/2 bounds, for connections that negotiate `h2`.
    pub http2: Http2Limits,
}

impl Default for ConnLimits {
    /// 512 connections, 32 s to read a request head, 90 s idle (the serving flags' defaults),
    /// kube-apiserver's HTTP/2 bounds.
    fn default() -> Self {
        Self {
            max_connections: 512,
            header_read_timeout: Duration::from_secs(32),
            idle_timeout: Duration::from_secs(90),
            http2: Http2Limits::default(),
        }
    }
}

/// A TCP listener that accepts at most [`ConnLimits::max_connections`] connections at once and
/// wraps each in a [`LimitedConn`], after a TLS handshake when it has an acceptor.
pub(crate) struct LimitedListener {
    inner: TcpListener,
    permits: Arc<Semaphore>,
    limits: ConnLimits,
    tls: Option<TlsAcceptor>,
    handshakes: JoinSet<Option<(LimitedConn, SocketAddr)>>,
}

impl std::fmt::Debug for LimitedListener {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LimitedListener")
            .field("inner", &self.inner)
            .field("limits", &self.limits)
            .field("tls", &self.tls.is_some())
            .finish_non_exhaustive()
    }
}

impl LimitedListener {
    /// Wraps a bound listener; with `tls`, every connection is a TLS one.
    pub(crate) fn new(inner: TcpListener, limits: ConnLimits, tls: Option<TlsAcceptor>) -> Self {
        Self {
            inner,
            permits: Arc::new(Semaphore::new(limits.max_connections)),
            limits,
            tls,
            handshakes: JoinSet::new(),
        }
    }

    /// The next TCP connection, once a permit is free.
    async fn next_tcp(
        permits: &Arc<Semaphore>,
        inner: &mut TcpListener,
    ) -> (OwnedSemaphorePermit, TcpStream, SocketAddr) {
        // The semaphore is never closed, so this waits until a connection ends.
        let permit = match permits.clone().acquire_owned().await {
            Ok(p) => p,
            Err(_) => std::future::pending().await,
        };
        let (io, addr) = axum::serve::Listener::accept(inner).await;
        // As Go's server: HTTP/2 writes a response's HEADERS and DATA frames apart, and
        // Nagle's algorithm would hold the second behind the client's delayed ACK (~40 ms).
        if let Err(e) = io.set_nodelay(true) {
            tracing::debug!(%addr, "TCP_NODELAY: {e}");
        }
        (permit, io, addr)
    }
}

/// The handshake of one connection, bounded by the header-read timeout; `None` when it fails
/// (logged at debug: scanners and impatient clients are common).
async fn handshake(
    acceptor: TlsAcceptor,
    io: TcpStream,
    addr: SocketAddr,
    permit: OwnedSemaphorePermit,
    limits: ConnLimits,
) -> Option<(LimitedConn, SocketAddr)> {
    let accept = acceptor.accept(io).into_fallible();
    match tokio::time::timeout(limits.header_read_timeout, accept).await {
        Ok(Ok(tls)) => {
            let session = tls.get_ref().1;
            let chain: Arc<[CertificateDer<'static>]> =
                Arc::from(session.peer_certificates().unwrap_or_default());
            let http2 = session.alpn_protocol() == Some(b"h2");
            let stream = Stream::Tls(Box::new(tls));
            Some((LimitedConn::new(stream, permit, limits, chain, http2), addr))
        }
        Ok(Err((e, io))) => {
            tracing::debug!(%addr, "TLS handshake failed: {e}");
            close_after_alert(io).await;
            None
        }
        Err(_) => {
            tracing::debug!(%addr, "TLS handshake not done within {:?}", limits.header_read_timeout);
            None
        }
    }
}

/// How long a refused handshake's connection is still read after the alert, and how much of
/// what the client sends meanwhile is read and dropped.
const REFUSED_LINGER: Duration = Duration::from_secs(1);
const REFUSED_DRAIN: usize = 64 * 1024;

/// Closes a connection whose handshake was refused (its alert already sent) without a reset.
///
/// In TLS 1.3 a client sends its certificate after the server's last handshake message, so it
/// believes the handshake done and writes its request at once. Closing a socket with that
/// request unread sends a reset, and the client then reports "broken pipe" or "connection
/// reset" instead of the alert that says why (an unknown certificate authority). So the
/// server ends its side and reads, within a bound of time and bytes, until the client closes.
async fn close_after_alert(mut io: TcpStream) {
    use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
    if io.shutdown().await.is_err() {
        return;
    }
    let drain = async {
        let mut buf = [0u8; 4096];
        let mut left = REFUSED_DRAIN;
        while left > 0 {
            match io.read(&mut buf).await {
                Ok(0) | Err(_) => break,
                Ok(n) => left = left.saturating_sub(n),
            }
        }
    };
    // Past the bound the socket is closed as it is: a reset, at worst.
    let _ = tokio::time::timeout(REFUSED_LINGER, drain).await;
}

impl LimitedListener {
    /// The next connection, once a permit is free (and, with TLS, its handshake done).
    async fn accept(&mut self) -> (LimitedConn, SocketAddr) {
        loop {
            let Some(acceptor) = &self.tls else {
                let (permit, io, addr) = Self::next_tcp(&self.permits, &mut self.inner).await;
                let conn =
                    LimitedConn::new(Stream::Plain(io), permit, self.limits, Arc::new([]), false);
                return (conn, addr);
            };
            tokio::select! {
                Some(done) = self.handshakes.join_next(), if !self.handshakes.is_empty() => {
                    if let Ok(Some(conn)) = done {
                        return conn;
                    }
                }
                (permit, io, addr) = Self::next_tcp(&self.permits, &mut self.inner) => {
                    self.handshakes
                        .spawn(handshake(acceptor.clone(), io, addr, permit, self.limits));
                }
            }
        }
    }
}

/// Serves `app` on every connection `listener` accepts, HTTP/2 on those that negotiated it,
/// until `shutdown` completes; then every connection is shut down gracefully (`GOAWAY`, or
/// closed once its HTTP/1.1 response is sent) and waited for.
pub(crate) async fn serve_connections(
    mut listener: LimitedListener,
    app: Router,
    shutdown: impl Future<Output = ()>,
) {
    let http1 = Builder::new(TokioExecutor::new()).http1_only();
    let http2 = listener.limits.http2.builder();
    let (stop, stopped) = watch::channel(());
    let mut connections = JoinSet::new();
    let mut shutdown = pin!(shutdown);
    loop {
        let (conn, addr) = tokio::select! {
            accepted = listener.accept() => accepted,
            () = &mut shutdown => break,
        };
        while connections.try_join_next().is_some() {}
        let builder = if conn.http2 { &http2 } else { &http1 };
        let info = ConnActivity {
            activity: conn.activity.clone(),
            client_certificates: conn.client_certificates.clone(),
        };
        let app = app.clone();
        let service = hyper::service::service_fn(move |req: Request<hyper::body::Incoming>| {
            let mut req = req.map(Body::new);
            req.extensions_mut().insert(ConnectInfo(info.clone()));
            app.clone().oneshot(req)
        });
        let activity = conn.activity.clone();
        let served = builder
            .serve_connection(TokioIo::new(conn), service)
            .into_owned();
        connections.spawn(serve_one(served, activity, stopped.clone(), addr));
    }
    drop(listener);
    let _ = stop.send(());
    while connections.join_next().await.is_some() {}
}

/// Serves one connection until it ends, asking it to shut down gracefully when the server
/// stops or its client has cancelled too many streams.
async fn serve_one<C>(
    served: C,
    activity: Arc<Activity>,
    mut stop: watch::Receiver<()>,
    addr: SocketAddr,
) where
    C: Future<Output = Result<(), Box<dyn std::error::Error + Send + Sync>>> + GracefulShutdown,
{
    let mut served = pin!(served);
    let mut draining = false;
    loop {
        tokio::select! {
            outcome = served.as_mut() => {
                if let Err(e) = outcome {
                    tracing::debug!(%addr, "connection ended: {e}");
                }
                return;
            }
            _ = stop.changed(), if !draining => {
                draining = true;
                served.as_mut().graceful_shutdown();
            }
            () = activity.abusive.notified(), if !draining => {
                tracing::info!(%addr, "HTTP/2 client cancels streams faster than allowed: GOAWAY");
                draining = true;
                served.as_mut().graceful_shutdown();
            }
        }
    }
}

/// A connection that can be asked to finish its requests and end (hyper-util's connection).
trait GracefulShutdown {
    fn graceful_shutdown(self: Pin<&mut Self>);
}

impl<I, S, E> GracefulShutdown for hyper_util::server::conn::auto::Connection<'static, I, S, E>
where
    S: hyper::service::HttpService<hyper::body::Incoming>,
    S::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
    S::ResBody: http_body::Body + Send + 'static,
    <S::ResBody as http_body::Body>::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
    I: hyper::rt::Read + hyper::rt::Write + Unpin + Send + 'static,
    E: hyper::rt::bounds::Http2ServerConnExec<S::Future, S::ResBody>,
{
    fn graceful_shutdown(self: Pin<&mut Self>) {
        hyper_util::server::conn::auto::Connection::graceful_shutdown(self);
    }
}

/// What a connection and the requests on it share: how many requests are in flight (high 32
/// bits) and how many have finished (low 32 bits, wrapping), in one word so that a reader
/// sees both from the same moment; the connection's reader, woken when the last request in
/// flight finishes so that its idle wait starts then; and, on HTTP/2, the budget of streams
/// its client may cancel.
#[derive(Debug, Default)]
struct Activity {
    word: AtomicU64,
    reader: AtomicWaker,
    resets: Option<ResetBudget>,
    abusive: Notify,
}

const IN_FLIGHT: u64 = 1 << 32;

impl Activity {
    fn in_flight(word: u64) -> bool {
        word >= IN_FLIGHT
    }
}

/// What requests learn of their connection, from their extensions (as
/// `ConnectInfo<ConnActivity>`): the handle on its `Activity`, and the client certificate it
/// presented.
#[derive(Debug, Clone)]
pub(crate) struct ConnActivity {
    activity: Arc<Activity>,
    client_certificates: Arc<[CertificateDer<'static>]>,
}

impl ConnActivity {
    /// The client certificate chain of a TLS connection, leaf first (empty without one): it
    /// chains to one of the client CAs, and which one the authenticators decide.
    pub(crate) fn client_certificates(&self) -> &[CertificateDer<'static>] {
        &self.client_certificates
    }
}

/// Marks a request in flight until its response body has been sent or dropped; dropped
/// before that, the request was cancelled (on HTTP/2, usually by the client's `RST_STREAM`).
struct InFlight {
    activity: Arc<Activity>,
    complete: bool,
}

impl InFlight {
    fn start(activity: Arc<Activity>) -> Self {
        activity.word.fetch_add(IN_FLIGHT, Ordering::AcqRel);
        Self {
            activity,
            complete: false,
        }
    }
}

impl Drop for InFlight {
    fn drop(&mut self) {
        let a = &self.activity;
        // One fewer in flight, one more finished (wrapping within the low half: only a change
        // matters).
        let before = a
            .word
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |w| {
                let done = (w.wrapping_add(1)) & (IN_FLIGHT - 1);
                Some((w & !(IN_FLIGHT - 1)) - IN_FLIGHT + done)
            })
            .unwrap_or(IN_FLIGHT);
        if !Activity::in_flight(before - IN_FLIGHT) {
            // The last one: the idle wait starts now, not at the reader's next wake-up.
            a.reader.wake();
        }
        if !self.complete && a.resets.as_ref().is_some_and(|r| !r.spend()) {
            a.abusive.notify_one();
        }
    }
}

/// The filter that tells a [`LimitedConn`] a request is in flight; a no-op for requests that
/// did not come through a [`LimitedListener`].
#[derive(Debug, Clone, Copy)]
pub(crate) struct Track;

impl Middleware for Track {
    async fn run<S: Inner>(self, req: Request, next: Next<S>) -> Response {
        let Some(activity) = req
            .extensions()
            .get::<ConnectInfo<ConnActivity>>()
            .map(|c| Arc::clone(&c.0.activity))
        else {
            return next.run(req).await;
        };
        let in_flight = InFlight::start(activity);
        let resp = next.run(req).await;
        resp.map(|body| Body::new(Tracked { body, in_flight }))
    }
}

/// A response body that keeps its request in flight, and marks it complete at its end.
struct Tracked {
    body: Body,
    in_flight: InFlight,
}

impl http_body::Body for Tracked {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, axum::Error>>> {
        let polled = Pin::new(&mut self.body).poll_frame(cx);
        if matches!(polled, Poll::Ready(None)) || self.body.is_end_stream() {
            self.in_flight.complete = true;
        }
        polled
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> http_body::SizeHint {
        self.body.size_hint()
    }
}

/// A connection under [`ConnLimits`]: reads fail with `TimedOut` when it has been idle for
/// the idle timeout, or has spent the header-read timeout on one request head.
#[derive(Debug)]
pub(crate) struct LimitedConn {
    io: Stream,
    client_certificates: Arc<[CertificateDer<'static>]>,
    _permit: OwnedSemaphorePermit,
    activity: Arc<Activity>,
    limits: ConnLimits,
    deadline: Pin<Box<Sleep>>,
    /// The finished-request count when the deadline was last set for an idle wait.
    armed_for: u64,
    /// Whether bytes of the next request head have arrived since the connection became idle.
    head_started: bool,
    /// Whether the connection speaks HTTP/2 (ALPN `h2`).
    http2: bool,
}

impl LimitedConn {
    fn new(
        io: Stream,
        permit: OwnedSemaphorePermit,
        limits: ConnLimits,
        client_certificates: Arc<[CertificateDer<'static>]>,
        http2: bool,
    ) -> Self {
        let activity = Activity {
            resets: http2.then(|| ResetBudget::new(limits.http2.max_streams)),
            ..Activity::default()
        };
        Self {
            io,
            client_certificates,
            _permit: permit,
            activity: Arc::new(activity),
            limits,
            deadline: Box::pin(tokio::time::sleep(limits.idle_timeout)),
            armed_for: 0,
            head_started: false,
            http2,
        }
    }

    fn timed_out(&self) -> io::Error {
        let (what, limit) = if self.head_started {
            ("request head not received", self.limits.header_read_timeout)
        } else {
            ("connection idle", self.limits.idle_timeout)
        };
        io::Error::new(io::ErrorKind::TimedOut, format!("{what} within {limit:?}"))
    }
}

impl AsyncRead for LimitedConn {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        // Registered before the word is read, so that a request finishing after the read
        // still wakes this reader.
        this.activity.reader.register(cx.waker());
        let word = this.activity.word.load(Ordering::Acquire);
        let idle = !Activity::in_flight(word);
        if idle && word != this.armed_for {
            // A request finished since the deadline was set: the idle wait starts now.
            this.armed_for = word;
            this.head_started = false;
            this.deadline
                .as_mut()
                .reset(Instant::now() + this.limits.idle_timeout);
        }
        let before = buf.filled().len();
        match Pin::new(&mut this.io).poll_read(cx, buf) {
            Poll::Ready(Ok(())) => {
                if idle && !this.http2 && !this.head_started && buf.filled().len() > before {
                    this.head_started = true;
                    this.deadline
                        .as_mut()
                        .reset(Instant::now() + this.limits.header_read_timeout);
                }
                Poll::Ready(Ok(()))
            }
            Poll::Pending if idle && this.deadline.as_mut().poll(cx).is_ready() => {
                Poll::Ready(Err(this.timed_out()))
            }
            other => other,
        }
    }
}

impl AsyncWrite for LimitedConn {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.get_mut().io).poll_write(cx, buf)
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.get_mut().io).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.io.is_write_vectored()
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().io).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().io).poll_shutdown(cx)
    }
}

/// A connection's byte stream: plain TCP or TLS over it.
#[derive(Debug)]
enum Stream {
    Plain(TcpStream),
    Tls(Box<TlsStream<TcpStream>>),
}

impl AsyncRead for Stream {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        match self.get_mut() {
            Stream::Plain(s) => Pin::new(s).poll_read(cx, buf),
            Stream::Tls(s) => Pin::new(s.as_mut()).poll_read(cx, buf),
        }
    }
}

impl AsyncWrite for Stream {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        match self.get_mut() {
            Stream::Plain(s) => Pin::new(s).poll_write(cx, buf),
            Stream::Tls(s) => Pin::new(s.as_mut()).poll_write(cx, buf),
        }
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        match self.get_mut() {
            Stream::Plain(s) => Pin::new(s).poll_write_vectored(cx, bufs),
            Stream::Tls(s) => Pin::new(s.as_mut()).poll_write_vectored(cx, bufs),
        }
    }

    fn is_write_vectored(&self) -> bool {
        match self {
            Stream::Plain(s) => s.is_write_vectored(),
            Stream::Tls(s) => s.is_write_vectored(),
        }
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.get_mut() {
            Stream::Plain(s) => Pin::new(s).poll_flush(cx),
            Stream::Tls(s) => Pin::new(s.as_mut()).poll_flush(cx),
        }
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.get_mut() {
            Stream::Plain(s) => Pin::new(s).poll_shutdown(cx),
            Stream::Tls(s) => Pin::new(s.as_mut()).poll_shutdown(cx),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::middleware::Layered;
    use axum::routing::get;
    use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};

    /// A server of `GET /x` on loopback with `limits`; its address.
    async fn serve(limits: ConnLimits) -> SocketAddr {
        let tcp = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = tcp.local_addr().unwrap();
        let listener = LimitedListener::new(tcp, limits, None);
        let app = Router::new()
            .route("/x", get(|| async { "ok" }))
            .layer(tower::layer::layer_fn(|inner| Layered::new(Track, inner)));
        tokio::spawn(serve_connections(listener, app, std::future::pending()));
        addr
    }

    /// The idle wait starts when the response has been sent, not when the reader next wakes
    /// up (which, after a request, was at the header-read deadline: idle + header-read).
    #[tokio::test]
    async fn a_connection_idle_after_a_request_is_closed_at_the_idle_timeout() {
        let limits = ConnLimits {
            idle_timeout: Duration::from_secs(1),
            header_read_timeout: Duration::from_secs(5),
            ..ConnLimits::default()
        };
        let addr = serve(limits).await;
        let mut conn = TcpStream::connect(addr).await.unwrap();
        conn.write_all(b"GET /x HTTP/1.1\r\nHost: x\r\n\r\n")
            .await
            .unwrap();
        let mut got = Vec::new();
        let mut buf = [0u8; 1024];
        while !got.ends_with(b"ok") {
            let n = conn.read(&mut buf).await.unwrap();
            assert!(n > 0, "closed before the answer: {got:?}");
            got.extend_from_slice(&buf[..n]);
        }
        let answered = Instant::now();
        let n = tokio::time::timeout(Duration::from_secs(10), conn.read(&mut buf))
            .await
            .expect("still open 10 s after the answer")
            .unwrap_or(0);
        assert_eq!(n, 0, "only the close was expected");
        let idle = answered.elapsed();
        assert!(
            idle >= Duration::from_millis(900) && idle < Duration::from_secs(3),
            "closed {idle:?} after the answer; the idle timeout is 1 s"
        );
    }

    /// A client certificate from an unknown authority is refused with TLS's alert, and the
    /// client reads that alert: the request it wrote after its side of the handshake neither
    /// fails with a broken pipe nor is answered.
    #[tokio::test]
    async fn a_refused_client_certificate_is_told_why_not_reset() {
        use tokio_rustls::rustls;
        use tokio_rustls::rustls::pki_types::pem::PemObject as _;
        let dir = tempfile::tempdir().unwrap();
        let known = rcgen::KeyPair::generate().unwrap();
        let ca = rcgen::CertificateParams::new(vec![])
            .unwrap()
            .self_signed(&known)
            .unwrap();
        let ca_file = dir.path().join("ca.crt");
        std::fs::write(&ca_file, ca.pem()).unwrap();
        let opts = crate::tls::TlsOptions {
            cert_dir: dir.path().to_owned(),
            client_ca_files: vec![ca_file],
            ..crate::tls::TlsOptions::default()
        };
        let acceptor = TlsAcceptor::from(crate::tls::server_config(&opts).unwrap());
        let tcp = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = tcp.local_addr().unwrap();
        let listener = LimitedListener::new(tcp, ConnLimits::default(), Some(acceptor));
        let app = Router::new().route("/x", get(|| async { "ok" }));
        tokio::spawn(serve_connections(listener, app, std::future::pending()));

        let mut roots = rustls::RootCertStore::empty();
        let served = dir.path().join("apiserver.crt");
        for cert in CertificateDer::pem_file_iter(served).unwrap() {
            roots.add(cert.unwrap()).unwrap();
        }
        let unknown = rcgen::KeyPair::generate().unwrap();
        let mut params = rcgen::CertificateParams::new(vec![]).unwrap();
        params
            .distinguished_name
            .push(rcgen::DnType::CommonName, "mallory");
        let mallory = params.self_signed(&unknown).unwrap();
        let key = rustls::pki_types::PrivateKeyDer::try_from(unknown.serialize_der()).unwrap();
        let client = rustls::ClientConfig::builder()
            .with_root_certificates(roots)
            .with_client_auth_cert(vec![mallory.der().clone()], key)
            .unwrap();
        let connector = tokio_rustls::TlsConnector::from(Arc::new(client));
        let tcp = TcpStream::connect(addr).await.unwrap();
        let name = rustls::pki_types::ServerName::try_from("localhost").unwrap();
        let mut conn = connector.connect(name, tcp).await.unwrap();
        conn.write_all(b"GET /x HTTP/1.1\r\nHost: x\r\n")
            .await
            .expect("the first write");
        // By now the server has refused the certificate; a closed socket would have reset.
        tokio::time::sleep(Duration::from_millis(300)).await;
        conn.write_all(b"\r\n")
            .await
            .expect("a write after the refusal");
        let mut got = Vec::new();
        let err = conn.read_to_end(&mut got).await.expect_err("no answer");
        assert!(got.is_empty(), "{got:?}");
        let alert = rustls::Error::AlertReceived(rustls::AlertDescription::UnknownCA);
        assert_eq!(err.to_string(), alert.to_string(), "{err:?}");
    }
}
