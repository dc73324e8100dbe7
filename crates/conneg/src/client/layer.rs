//! [`ContentNegotiationLayer`]: the client layer's configuration.

use std::sync::Arc;

use http::HeaderValue;
use tower_layer::Layer;

use super::gates::Gates;
use super::memory::FallbackMemory;
use super::retry::RetryAfter;
use super::service::ContentNegotiation;

/// `Accept` when both gates are on (and the default preference).
pub const ACCEPT_PREFER_CBOR: &str = "application/cbor;q=1, application/json;q=0.9";
/// `Accept` with `AllowCBOR` on and `PreferCBOR` off, as client-go's dynamic client sends it.
pub const ACCEPT_ALLOW_CBOR: &str = "application/json;q=0.9,application/cbor;q=1";
/// `Accept` with `AllowCBOR` off.
pub const ACCEPT_JSON: &str = "application/json";

/// A Tower layer for HTTP clients: sets `Accept`, encodes [`ClientBody`](super::ClientBody)
/// request bodies in the preferred media type, and after a 415 retries once in the type the
/// server offers (JSON if it offers none), remembering the choice per
/// (server, method, resource) in a [`FallbackMemory`].
///
/// ```
/// use std::time::Duration;
/// use conneg::client::{ContentNegotiationLayer, FallbackMemory, Gates};
///
/// let layer = ContentNegotiationLayer::new()
///     .gates(Gates::from_env())
///     .memory(FallbackMemory::with_ttl(Duration::from_secs(600)));
/// assert_eq!(layer.accept_header(), "application/cbor;q=1, application/json;q=0.9");
/// ```
#[derive(Clone, Debug)]
pub struct ContentNegotiationLayer {
    pub(crate) config: Arc<Config>,
}

#[derive(Clone, Debug)]
pub(crate) struct Config {
    pub(crate) gates: Gates,
    /// An explicit `Accept`; `None` derives it from the gates.
    pub(crate) accept: Option<HeaderValue>,
    pub(crate) memory: FallbackMemory,
    pub(crate) retry: RetryAfter,
}

impl Config {
    /// The `Accept` header to send when the request has none.
    pub(crate) fn accept(&self) -> HeaderValue {
        match &self.accept {
            Some(v) if self.gates.accepts_cbor() => v.clone(),
            Some(v) => scrub_cbor(v),
            None if self.gates.sends_cbor() => HeaderValue::from_static(ACCEPT_PREFER_CBOR),
            None if self.gates.accepts_cbor() => HeaderValue::from_static(ACCEPT_ALLOW_CBOR),
            None => HeaderValue::from_static(ACCEPT_JSON),
        }
    }
}

impl Default for ContentNegotiationLayer {
    fn default() -> Self {
        Self::new()
    }
}

impl ContentNegotiationLayer {
    /// Both gates on ([`Gates::default`]), the default `Accept`, a memory without expiry.
    pub fn new() -> Self {
        ContentNegotiationLayer {
            config: Arc::new(Config {
                gates: Gates::default(),
                accept: None,
                memory: FallbackMemory::new(),
                retry: RetryAfter::default(),
            }),
        }
    }

    /// Sets the gates.
    pub fn gates(mut self, gates: Gates) -> Self {
        Arc::make_mut(&mut self.config).gates = gates;
        self
    }

    /// Sets the `Accept` header sent on requests that have none (default: from the gates, see
    /// [`Gates`]). With `AllowCBOR` off, CBOR ranges in it are sent as `application/json`, as
    /// client-go rewrites them.
    pub fn accept(mut self, accept: HeaderValue) -> Self {
        Arc::make_mut(&mut self.config).accept = Some(accept);
        self
    }

    /// Sets the fallback memory (share one between clients to share what they learn).
    pub fn memory(mut self, memory: FallbackMemory) -> Self {
        Arc::make_mut(&mut self.config).memory = memory;
        self
    }

    /// Sets how 429 answers with `Retry-After` are retried (default
    /// [`RetryAfter::default`]: 10 times, waits of at most 10 s; [`RetryAfter::NEVER`] turns
    /// it off).
    pub fn retry_after(mut self, retry: RetryAfter) -> Self {
        Arc::make_mut(&mut self.config).retry = retry;
        self
    }

    /// The gates.
    pub fn gates_ref(&self) -> Gates {
        self.config.gates
    }

    /// The fallback memory.
    pub fn memory_ref(&self) -> &FallbackMemory {
        &self.config.memory
    }

    /// The `Accept` header sent on requests that have none.
    pub fn accept_header(&self) -> HeaderValue {
        self.config.accept()
    }
}

impl<S> Layer<S> for ContentNegotiationLayer {
    type Service = ContentNegotiation<S>;

    fn layer(&self, inner: S) -> Self::Service {
        ContentNegotiation::from_parts(inner, self.config.clone())
    }
}

/// `application/cbor` and `application/cbor-seq` ranges become `application/json` (with their
/// parameters); other ranges stay.
fn scrub_cbor(accept: &HeaderValue) -> HeaderValue {
    let Ok(text) = accept.to_str() else {
        return HeaderValue::from_static(ACCEPT_JSON);
    };
    let clauses: Vec<String> = text
        .split(',')
        .map(str::trim)
        .filter(|c| !c.is_empty())
        .map(|clause| {
            let (essence, params) = match clause.find(';') {
                Some(i) => (clause[..i].trim(), &clause[i..]),
                None => (clause, ""),
            };
            if essence.eq_ignore_ascii_case("application/cbor")
                || essence.eq_ignore_ascii_case("application/cbor-seq")
            {
                format!("application/json{params}")
            } else {
                clause.to_owned()
            }
        })
        .collect();
    HeaderValue::from_str(&clauses.join(","))
        .unwrap_or_else(|_| HeaderValue::from_static(ACCEPT_JSON))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accept_per_gates() {
        let l = ContentNegotiationLayer::new();
        assert_eq!(l.accept_header(), ACCEPT_PREFER_CBOR);
        let l = l.gates(Gates::new().prefer_cbor(false));
        assert_eq!(l.accept_header(), ACCEPT_ALLOW_CBOR);
        let l = l.gates(Gates::json_only());
        assert_eq!(l.accept_header(), ACCEPT_JSON);
        let l = l.accept(HeaderValue::from_static(
            "application/cbor;q=0.9, example/foo;q=0.8",
        ));
        assert_eq!(
            l.accept_header(),
            "application/json;q=0.9,example/foo;q=0.8"
        );
        let l = l.gates(Gates::new());
        assert_eq!(
            l.accept_header(),
            "application/cbor;q=0.9, example/foo;q=0.8"
        );
    }
}
