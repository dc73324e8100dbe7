//! The two client gates of KEP-4222, `AllowCBOR` and `PreferCBOR`, settable in code and from
//! the environment variables client-go reads.

use std::fmt;

use crate::parse_bool;

/// The environment variable of the allow gate (client-go's name, case-sensitive).
pub const ENV_ALLOW_CBOR: &str = "KUBE_FEATURE_ClientsAllowCBOR";
/// The environment variable of the prefer gate (client-go's name, case-sensitive).
pub const ENV_PREFER_CBOR: &str = "KUBE_FEATURE_ClientsPreferCBOR";

/// KEP-4222's client gates.
///
/// | allow | prefer | `Accept` | request bodies |
/// |---|---|---|---|
/// | off | any | `application/json` | JSON (`apply-patch+yaml` for apply) |
/// | on | off | `application/json;q=0.9,application/cbor;q=1` | JSON first |
/// | on | on | `application/cbor;q=1, application/json;q=0.9` | CBOR first (`apply-patch+cbor`) |
///
/// With allow on, a 415 may still move a request to CBOR when the server offers only that;
/// with allow off nothing CBOR is ever sent or accepted.
///
/// **Default: both on** ([`Gates::default`]): preferring CBOR is the point of this library, and
/// the per-resource 415 fallback makes it safe against JSON-only servers. (client-go's gates
/// are alpha and default to off.) [`Gates::from_env`] starts from that default and lets
/// `KUBE_FEATURE_ClientsAllowCBOR` / `KUBE_FEATURE_ClientsPreferCBOR` override each gate.
///
/// ```
/// use conneg::client::Gates;
///
/// let gates = Gates::default();
/// assert!(gates.sends_cbor());
/// let json_only = Gates::new().allow_cbor(false);
/// assert!(!json_only.accepts_cbor() && !json_only.sends_cbor());
/// // prefer without allow sends nothing CBOR, as in the KEP.
/// assert!(!Gates::new().allow_cbor(false).prefer_cbor(true).sends_cbor());
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Gates {
    allow: bool,
    prefer: bool,
}

impl Default for Gates {
    fn default() -> Self {
        Gates {
            allow: true,
            prefer: true,
        }
    }
}

impl Gates {
    /// Both gates on (the default).
    pub fn new() -> Self {
        Self::default()
    }

    /// Both gates off: JSON only, as client-go's alpha default.
    pub fn json_only() -> Self {
        Gates {
            allow: false,
            prefer: false,
        }
    }

    /// Sets `AllowCBOR`.
    pub fn allow_cbor(mut self, on: bool) -> Self {
        self.allow = on;
        self
    }

    /// Sets `PreferCBOR`.
    pub fn prefer_cbor(mut self, on: bool) -> Self {
        self.prefer = on;
        self
    }

    /// The allow gate as set.
    pub fn is_allow_cbor(&self) -> bool {
        self.allow
    }

    /// The prefer gate as set (it has an effect only with allow on).
    pub fn is_prefer_cbor(&self) -> bool {
        self.prefer
    }

    /// Whether CBOR may appear at all: in `Accept`, in responses, in request bodies.
    pub fn accepts_cbor(&self) -> bool {
        self.allow
    }

    /// Whether request bodies start out as CBOR.
    pub fn sends_cbor(&self) -> bool {
        self.allow && self.prefer
    }

    /// The default gates overridden by the environment ([`ENV_ALLOW_CBOR`],
    /// [`ENV_PREFER_CBOR`]). Invalid values are ignored with a `tracing` warning.
    pub fn from_env() -> Self {
        Self::default().with_env()
    }

    /// These gates, each overridden by its environment variable when that is set to a valid
    /// boolean.
    pub fn with_env(self) -> Self {
        self.with_lookup(|name| std::env::var(name).ok())
    }

    /// Like [`with_env`](Self::with_env) with any source of variables (for tests and for
    /// programs that keep their configuration elsewhere).
    pub fn with_lookup(mut self, lookup: impl Fn(&str) -> Option<String>) -> Self {
        for (name, slot) in [
            (ENV_ALLOW_CBOR, &mut self.allow),
            (ENV_PREFER_CBOR, &mut self.prefer),
        ] {
            if let Some(value) = lookup(name) {
                match parse_bool(&value) {
                    Some(b) => *slot = b,
                    None => tracing::warn!(
                        variable = name,
                        value = %value,
                        "conneg: ignoring an invalid boolean in a client gate variable"
                    ),
                }
            }
        }
        self
    }
}

impl fmt::Display for Gates {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "ClientsAllowCBOR={},ClientsPreferCBOR={}",
            self.allow, self.prefer
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env<'a>(vars: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<String> + 'a {
        move |name| {
            vars.iter()
                .find(|(n, _)| *n == name)
                .map(|(_, v)| (*v).to_owned())
        }
    }

    #[test]
    fn environment_overrides_each_gate_and_ignores_junk() {
        assert_eq!(Gates::default().with_lookup(env(&[])), Gates::default());
        let g = Gates::default().with_lookup(env(&[(ENV_ALLOW_CBOR, "false")]));
        assert!(!g.accepts_cbor() && !g.sends_cbor());
        let g = Gates::default().with_lookup(env(&[(ENV_PREFER_CBOR, "0")]));
        assert!(g.accepts_cbor() && !g.sends_cbor());
        let g = Gates::json_only()
            .with_lookup(env(&[(ENV_ALLOW_CBOR, "T"), (ENV_PREFER_CBOR, "maybe")]));
        assert!(g.accepts_cbor() && !g.sends_cbor(), "{g}");
        // Names are case-sensitive, as in client-go.
        let g = Gates::default().with_lookup(env(&[("KUBE_FEATURE_CLIENTSALLOWCBOR", "false")]));
        assert!(g.accepts_cbor());
    }
}
