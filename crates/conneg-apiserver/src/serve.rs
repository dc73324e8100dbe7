//! Serving connections with bounds: at most `--max-connections` open at once, and a connection
//! that sends nothing useful is closed; over TLS when the listener has an acceptor.
//!
//! * **TLS.** The handshake runs in a task of its own, within `--header-read-timeout`, so a
//!   client that stalls in it holds only its own connection's permit; the listener hands out
//!   connections whose handshake is done, with the verified client certificate, if any, for
//!   authentication ([`ConnActivity::client_certificates`]).
//! * **Connection cap.** [`LimitedListener`] takes a permit before it accepts; while none is
//!   free, new connections wait in the kernel's backlog and open ones are served as usual. A
//!   permit is returned when its connection closes, so open file descriptors stay bounded.
//! * **Idle timeout.** A connection with no request in flight that receives nothing for
//!   `--idle-timeout` (keep-alive between requests, or a connection that never sends) is closed.
//! * **Header-read timeout.** Once the first byte of a request arrives, its head must be
//!   complete within `--header-read-timeout` (slowloris).
//!
//! Both timeouts are enforced by [`LimitedConn`], which wraps the socket: its reads fail with
//! `TimedOut` at the deadline, and hyper then closes the connection. While a request is in
//! flight (from its complete head until its response body has been sent, which for a watch is
//! as long as the watch lasts) neither applies: the request body has its own deadline
//! ([`crate::timeouts`]). [`track`] tells the connection when a request is in flight.

use std::io;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::task::{Context, Poll};
use std::time::Duration;

use axum::body::Body;
use axum::extract::Request;
use axum::extract::connect_info::{ConnectInfo, Connected};
use axum::middleware::Next;
use axum::response::Response;
use axum::serve::IncomingStream;
use http_body_util::BodyExt as _;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tokio::task::JoinSet;
use tokio::time::{Instant, Sleep};
use tokio_rustls::TlsAcceptor;
use tokio_rustls::rustls::pki_types::CertificateDer;
use tokio_rustls::server::TlsStream;

/// The connection bounds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ConnLimits {
    /// Connections open at once.
    pub max_connections: usize,
    /// From a request's first byte to the end of its head.
    pub header_read_timeout: Duration,
    /// How long a connection may wait for its next request.
    pub idle_timeout: Duration,
}

impl Default for ConnLimits {
    /// 512 connections, 32 s to read a request head, 90 s idle (the serving flags' defaults).
    fn default() -> Self {
        Self {
            max_connections: 512,
            header_read_timeout: Duration::from_secs(32),
            idle_timeout: Duration::from_secs(90),
        }
    }
}

/// A TCP listener that accepts at most [`ConnLimits::max_connections`] connections at once and
/// wraps each in a [`LimitedConn`], after a TLS handshake when it has an acceptor.
pub struct LimitedListener {
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
    pub fn new(inner: TcpListener, limits: ConnLimits, tls: Option<TlsAcceptor>) -> Self {
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
    match tokio::time::timeout(limits.header_read_timeout, acceptor.accept(io)).await {
        Ok(Ok(tls)) => {
            let chain: Arc<[CertificateDer<'static>]> =
                Arc::from(tls.get_ref().1.peer_certificates().unwrap_or_default());
            let stream = Stream::Tls(Box::new(tls));
            Some((LimitedConn::new(stream, permit, limits, chain), addr))
        }
        Ok(Err(e)) => {
            tracing::debug!(%addr, "TLS handshake failed: {e}");
            None
        }
        Err(_) => {
            tracing::debug!(%addr, "TLS handshake not done within {:?}", limits.header_read_timeout);
            None
        }
    }
}

impl axum::serve::Listener for LimitedListener {
    type Io = LimitedConn;
    type Addr = SocketAddr;

    async fn accept(&mut self) -> (LimitedConn, SocketAddr) {
        loop {
            let Some(acceptor) = &self.tls else {
                let (permit, io, addr) = Self::next_tcp(&self.permits, &mut self.inner).await;
                return (
                    LimitedConn::new(Stream::Plain(io), permit, self.limits, Arc::new([])),
                    addr,
                );
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

    fn local_addr(&self) -> io::Result<SocketAddr> {
        self.inner.local_addr()
    }
}

/// What a connection and the requests on it share: how many requests are in flight (high 32
/// bits) and how many have finished (low 32 bits, wrapping), in one word so that a reader
/// sees both from the same moment.
#[derive(Debug, Default)]
struct Activity(AtomicU64);

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
pub struct ConnActivity {
    activity: Arc<Activity>,
    client_certificates: Arc<[CertificateDer<'static>]>,
}

impl ConnActivity {
    /// The client certificate chain of a TLS connection, leaf first (empty without one): it
    /// chains to one of the client CAs, and which one the authenticators decide.
    pub fn client_certificates(&self) -> &[CertificateDer<'static>] {
        &self.client_certificates
    }
}

impl Connected<IncomingStream<'_, LimitedListener>> for ConnActivity {
    fn connect_info(stream: IncomingStream<'_, LimitedListener>) -> Self {
        Self {
            activity: stream.io().activity.clone(),
            client_certificates: stream.io().client_certificates.clone(),
        }
    }
}

/// Marks a request in flight until its response body has been sent or dropped.
struct InFlight(Arc<Activity>);

impl InFlight {
    fn start(a: Arc<Activity>) -> Self {
        a.0.fetch_add(IN_FLIGHT, Ordering::AcqRel);
        Self(a)
    }
}

impl Drop for InFlight {
    fn drop(&mut self) {
        // One fewer in flight, one more finished (wrapping within the low half: only a change
        // matters).
        let _ = self
            .0
            .0
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |w| {
                let done = (w.wrapping_add(1)) & (IN_FLIGHT - 1);
                Some((w & !(IN_FLIGHT - 1)) - IN_FLIGHT + done)
            });
    }
}

/// The middleware that tells a [`LimitedConn`] a request is in flight
/// (`axum::middleware::from_fn(serve::track)`); a no-op for requests that did not come through
/// a [`LimitedListener`].
pub async fn track(req: Request, next: Next) -> Response {
    let Some(ConnectInfo(ConnActivity { activity, .. })) = req.extensions().get().cloned() else {
        return next.run(req).await;
    };
    let guard = InFlight::start(activity);
    let resp = next.run(req).await;
    resp.map(|body| {
        Body::new(body.map_frame(move |frame| {
            let _in_flight = &guard;
            frame
        }))
    })
}

/// A connection under [`ConnLimits`]: reads fail with `TimedOut` when it has been idle for
/// the idle timeout, or has spent the header-read timeout on one request head.
#[derive(Debug)]
pub struct LimitedConn {
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
}

impl LimitedConn {
    fn new(
        io: Stream,
        permit: OwnedSemaphorePermit,
        limits: ConnLimits,
        client_certificates: Arc<[CertificateDer<'static>]>,
    ) -> Self {
        Self {
            io,
            client_certificates,
            _permit: permit,
            activity: Arc::default(),
            limits,
            deadline: Box::pin(tokio::time::sleep(limits.idle_timeout)),
            armed_for: 0,
            head_started: false,
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
        let word = this.activity.0.load(Ordering::Acquire);
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
                if idle && !this.head_started && buf.filled().len() > before {
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
