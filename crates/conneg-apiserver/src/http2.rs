//! HTTP/2 on the secure port: the bounds kube-apiserver sets on it, and what defends it.
//!
//! A TLS connection that negotiates `h2` in ALPN (offered first, as Go's server does) is served
//! HTTP/2; every other connection HTTP/1.1 ([`crate::serve`]). Each HTTP/2 stream is a request
//! like any other: the same layers, metrics, access log and timeouts, one in-flight request
//! each for the idle timeout.
//!
//! The bounds, with kube-apiserver's values (`secure_serving.go`) as defaults:
//!
//! * concurrent streams per connection ([`Http2Limits::max_streams`], 100: what Kubernetes
//!   uses when `--http2-max-streams-per-connection` is 0); a stream past it is refused
//!   (`RST_STREAM REFUSED_STREAM`) without reaching a handler;
//! * the flow-control window of a stream (256 KiB, Kubernetes' `MaxUploadBufferPerStream`)
//!   and of the connection (that times the streams, as Kubernetes): a client cannot make the
//!   server buffer more request body than the windows it granted;
//! * the largest frame read (256 KiB, Kubernetes' `MaxReadFrameSize`);
//! * the decoded header list of a request (1 MiB, Kubernetes' `MaxHeaderBytes`): past it the
//!   request is refused with 431, far past it the connection is closed;
//! * the response bytes buffered per stream for a client that does not read (400 KiB):
//!   the handler then waits, so a watch nobody reads holds a bounded buffer.
//!
//! What the `h2` crate under hyper adds, at its defaults: a client that resets more than 20
//! streams before they are even accepted (rapid reset, CVE-2023-44487), that makes the
//! server reset more than 1024 streams (the "MadeYouReset" variant), or that sends more than
//! 100 empty DATA frames or a flood of tiny ones, gets `GOAWAY ENHANCE_YOUR_CALM`; a PING or
//! SETTINGS acknowledgement is written before the next frame is read, so a flood of them
//! from a client that does not read stalls only its own connection. [`crate::serve`] adds
//! the rest: a connection with no stream in flight is closed after the idle timeout whatever
//! frames it sends, and one whose client cancels streams faster than
//! [`Http2Limits::max_streams`] a second is sent `GOAWAY`.

use std::sync::Mutex;

use hyper_util::rt::TokioExecutor;
use hyper_util::server::conn::auto::Builder;
use tokio::time::Instant;

/// The HTTP/2 bounds of a connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Http2Limits {
    /// Streams open at once on one connection (`SETTINGS_MAX_CONCURRENT_STREAMS`).
    pub max_streams: u32,
    /// The decoded size of a request's header list (`SETTINGS_MAX_HEADER_LIST_SIZE`).
    pub max_header_list_size: u32,
    /// The flow-control window of each stream: request body bytes a client may send ahead.
    pub stream_window: u32,
    /// The flow-control window of the connection, across its streams.
    pub connection_window: u32,
    /// The largest frame the server reads (`SETTINGS_MAX_FRAME_SIZE`).
    pub max_frame_size: u32,
    /// Response bytes buffered per stream while the client's window is closed.
    pub max_send_buffer: usize,
}

/// Kubernetes' `resourceBody99Percentile`: its per-stream window and largest frame.
const RESOURCE_BODY_99_PERCENTILE: u32 = 256 * 1024;

impl Default for Http2Limits {
    /// kube-apiserver's values: 100 streams, 1 MiB of headers, 256 KiB stream windows and
    /// frames, a connection window of both multiplied; hyper's 400 KiB send buffer.
    fn default() -> Self {
        Self::with_max_streams(100)
    }
}

impl Http2Limits {
    /// The defaults with `max_streams` streams per connection, the connection window sized
    /// to match (as Kubernetes does for `--http2-max-streams-per-connection`).
    ///
    /// ```
    /// use conneg_apiserver::server::Http2Limits;
    /// let limits = Http2Limits::with_max_streams(1000);
    /// assert_eq!(limits.connection_window, 1000 * limits.stream_window);
    /// ```
    pub fn with_max_streams(max_streams: u32) -> Self {
        Self {
            max_streams,
            max_header_list_size: 1 << 20,
            stream_window: RESOURCE_BODY_99_PERCENTILE,
            connection_window: Self::connection_window_for(
                RESOURCE_BODY_99_PERCENTILE,
                max_streams,
            ),
            max_frame_size: RESOURCE_BODY_99_PERCENTILE,
            max_send_buffer: 400 * 1024,
        }
    }

    /// The connection window for `streams` streams of `stream_window` each, at most the
    /// largest window HTTP/2 allows (2^31-1).
    pub(crate) fn connection_window_for(stream_window: u32, streams: u32) -> u32 {
        stream_window
            .saturating_mul(streams)
            .min(i32::MAX.unsigned_abs())
    }

    /// A builder that serves HTTP/2 only, with these bounds.
    pub(crate) fn builder(&self) -> Builder<TokioExecutor> {
        let mut builder = Builder::new(TokioExecutor::new()).http2_only();
        builder
            .http2()
            .max_concurrent_streams(self.max_streams)
            .max_header_list_size(self.max_header_list_size)
            .initial_stream_window_size(self.stream_window)
            .initial_connection_window_size(self.connection_window)
            .max_frame_size(self.max_frame_size)
            .max_send_buf_size(self.max_send_buffer);
        builder
    }
}

/// How many streams a client may cancel in a burst, and per second after it, before its
/// connection is sent `GOAWAY`: [`Http2Limits::max_streams`] of each, so a client that
/// fills its streams and cancels them all once a second (an informer restarting every
/// watch) is never cut off, and one that opens and cancels streams in a loop is within a
/// second.
#[derive(Debug)]
pub(crate) struct ResetBudget {
    per_second: f64,
    state: Mutex<(f64, Instant)>,
}

impl ResetBudget {
    pub(crate) fn new(max_streams: u32) -> Self {
        let per_second = f64::from(max_streams.max(1));
        Self {
            per_second,
            state: Mutex::new((per_second, Instant::now())),
        }
    }

    /// Spends one cancellation; `false` once the budget is exhausted.
    pub(crate) fn spend(&self) -> bool {
        let mut state = self
            .state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let (tokens, last) = &mut *state;
        let now = Instant::now();
        let refill = now.saturating_duration_since(*last).as_secs_f64() * self.per_second;
        *tokens = (*tokens + refill).min(self.per_second);
        *last = now;
        if *tokens >= 1.0 {
            *tokens -= 1.0;
            true
        } else {
            false
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn the_reset_budget_allows_a_burst_then_refills() {
        let budget = ResetBudget::new(3);
        assert!((0..3).all(|_| budget.spend()));
        assert!(!budget.spend());
        tokio::time::advance(std::time::Duration::from_secs(1)).await;
        assert!((0..3).all(|_| budget.spend()));
        assert!(!budget.spend());
    }
}
