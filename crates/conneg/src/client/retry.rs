//! Retrying a request the server refused for overload: a 429 with `Retry-After` (Kubernetes'
//! priority and fairness, or its in-flight limits) is sent again after the wait it names, as
//! client-go does, within [`RetryAfter`]'s bounds.

use std::time::Duration;

use http::header::RETRY_AFTER;
use http::{Response, StatusCode};

/// How 429 answers with `Retry-After` are retried: at most `max_retries` times per
/// request, each only if the server asks to wait no longer than `max_wait`. Past either
/// bound the 429 is the answer.
///
/// ```
/// use std::time::Duration;
/// use conneg::client::{ContentNegotiationLayer, RetryAfter};
///
/// let layer = ContentNegotiationLayer::new().retry_after(RetryAfter {
///     max_retries: 3,
///     max_wait: Duration::from_secs(5),
/// });
/// # drop(layer);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetryAfter {
    /// Retries of one request at most.
    pub max_retries: u32,
    /// The longest `Retry-After` honoured.
    pub max_wait: Duration,
}

impl RetryAfter {
    /// No retry.
    pub const NEVER: RetryAfter = RetryAfter {
        max_retries: 0,
        max_wait: Duration::ZERO,
    };
}

impl Default for RetryAfter {
    /// client-go's 10 retries, waits of at most 10 s.
    fn default() -> Self {
        RetryAfter {
            max_retries: 10,
            max_wait: Duration::from_secs(10),
        }
    }
}

impl RetryAfter {
    /// How long to wait before retry number `retries + 1` of the request answered `res`, or
    /// `None` for no retry.
    pub(crate) fn wait<B>(&self, res: &Response<B>, retries: u32) -> Option<Duration> {
        if res.status() != StatusCode::TOO_MANY_REQUESTS || retries >= self.max_retries {
            return None;
        }
        let secs: u64 = res
            .headers()
            .get(RETRY_AFTER)?
            .to_str()
            .ok()?
            .trim()
            .parse()
            .ok()?;
        let wait = Duration::from_secs(secs);
        (wait <= self.max_wait).then_some(wait)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn answer(code: u16, retry_after: Option<&str>) -> Response<()> {
        let mut r = Response::builder().status(code);
        if let Some(v) = retry_after {
            r = r.header(RETRY_AFTER, v);
        }
        r.body(()).unwrap()
    }

    #[test]
    fn only_a_429_with_a_short_enough_wait_is_retried() {
        let r = RetryAfter::default();
        assert_eq!(
            r.wait(&answer(429, Some("1")), 0),
            Some(Duration::from_secs(1))
        );
        assert_eq!(r.wait(&answer(429, Some("1")), 10), None, "retries used up");
        assert_eq!(r.wait(&answer(429, Some("60")), 0), None, "too long a wait");
        assert_eq!(r.wait(&answer(429, None), 0), None, "no Retry-After");
        assert_eq!(r.wait(&answer(429, Some("soon")), 0), None);
        assert_eq!(r.wait(&answer(503, Some("1")), 0), None);
        assert_eq!(RetryAfter::NEVER.wait(&answer(429, Some("1")), 0), None);
    }
}
