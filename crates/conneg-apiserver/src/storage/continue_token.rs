//! List continue tokens in Kubernetes' format (`k8s.io/apiserver/pkg/storage/continue.go`):
//! unpadded base64url of `{"v":"meta.k8s.io/v1","rv":<list revision>,"start":"<next key
//! relative to the collection prefix>"}`. Clients treat them as opaque; matching the format
//! keeps tokens portable between this server's backends and readable when debugging.

use std::fmt;

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use serde::{Deserialize, Serialize};

use super::{ListResult, Revision};

const TOKEN_VERSION: &str = "meta.k8s.io/v1";

/// The message of Kubernetes' 410 when a continue token's revision has been compacted.
pub(crate) const CONTINUE_EXPIRED_MSG: &str = "The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter, or use the continue token in this response to retrieve the remainder of the results. Continuing with the provided token results in an inconsistent list - objects that were created, modified, or deleted between the time the first chunk was returned and now may show up in the list.";

#[derive(Serialize, Deserialize)]
struct Token {
    v: String,
    rv: Revision,
    start: String,
}

/// A continue token that cannot be used; the HTTP layer answers 400 BadRequest with
/// `invalid continue token: <this>`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum ContinueError {
    /// Not base64url/JSON, or a start key that escapes the prefix.
    InvalidKey(String),
    /// A `v` other than `meta.k8s.io/v1`.
    UnrecognizedVersion(String),
    /// `rv` is 0.
    InvalidStartRevision,
    /// `start` is empty.
    EmptyStartKey,
    /// The key does not lie under the prefix (encoding side).
    KeyOutsidePrefix,
}

impl fmt::Display for ContinueError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ContinueError::InvalidKey(why) => write!(f, "continue key is not valid: {why}"),
            ContinueError::UnrecognizedVersion(v) => {
                write!(f, "continue key has unrecognized version {v}")
            }
            ContinueError::InvalidStartRevision => f.write_str("continue key has invalid start RV"),
            ContinueError::EmptyStartKey => f.write_str("continue key is empty"),
            ContinueError::KeyOutsidePrefix => {
                f.write_str("unable to encode next field: the key and key prefix do not match")
            }
        }
    }
}

impl std::error::Error for ContinueError {}

/// Encode the token for continuing at `next_key` (inclusive) of the list under `prefix` read
/// at `revision`.
pub(crate) fn encode(
    next_key: &str,
    prefix: &str,
    revision: Revision,
) -> Result<String, ContinueError> {
    let start = next_key
        .strip_prefix(prefix)
        .ok_or(ContinueError::KeyOutsidePrefix)?;
    let json = serde_json::to_vec(&Token {
        v: TOKEN_VERSION.to_owned(),
        rv: revision,
        start: start.to_owned(),
    })
    .map_err(|e| ContinueError::InvalidKey(e.to_string()))?;
    Ok(URL_SAFE_NO_PAD.encode(json))
}

/// The token for the page after `page` (listed under `prefix`), if there is one.
pub(crate) fn for_next_page(
    page: &ListResult,
    prefix: &str,
) -> Result<Option<String>, ContinueError> {
    page.next_start_key()
        .map(|k| encode(&k, prefix, page.revision))
        .transpose()
}

/// Whether `/`-rooted `key` is already in Go's `path.Clean` form.
fn is_clean(key: &str) -> bool {
    if key == "/" {
        return true;
    }
    key.strip_prefix('/').is_some_and(|rest| {
        rest.split('/')
            .all(|seg| !seg.is_empty() && seg != "." && seg != "..")
    })
}

/// Decode a token for the list under `prefix`: the key to start at (inclusive) and the
/// revision to read at. Start keys that would escape the prefix (`../`) are refused.
pub(crate) fn decode(token: &str, prefix: &str) -> Result<(String, Revision), ContinueError> {
    let raw = URL_SAFE_NO_PAD
        .decode(token)
        .map_err(|e| ContinueError::InvalidKey(e.to_string()))?;
    let t: Token =
        serde_json::from_slice(&raw).map_err(|e| ContinueError::InvalidKey(e.to_string()))?;
    if t.v != TOKEN_VERSION {
        return Err(ContinueError::UnrecognizedVersion(t.v));
    }
    if t.rv == 0 {
        return Err(ContinueError::InvalidStartRevision);
    }
    if t.start.is_empty() {
        return Err(ContinueError::EmptyStartKey);
    }
    let key = if t.start.starts_with('/') {
        t.start.clone()
    } else {
        format!("/{}", t.start)
    };
    if !is_clean(&key) {
        return Err(ContinueError::InvalidKey(t.start));
    }
    // The prefix ends in '/', the cleaned key starts with one.
    Ok((format!("{prefix}{}", &key[1..]), t.rv))
}

#[cfg(test)]
mod tests {
    use super::*;

    const P: &str = "/registry/wardle.example.com/flunders/";

    #[test]
    fn round_trip_and_format() {
        let tok = encode(&format!("{P}ns/a\0"), P, 42).unwrap();
        let json = URL_SAFE_NO_PAD.decode(&tok).unwrap();
        assert_eq!(
            std::str::from_utf8(&json).unwrap(),
            r#"{"v":"meta.k8s.io/v1","rv":42,"start":"ns/a\u0000"}"#
        );
        assert_eq!(decode(&tok, P).unwrap(), (format!("{P}ns/a\0"), 42));
    }

    #[test]
    fn bad_tokens() {
        let mk = |json: &str| URL_SAFE_NO_PAD.encode(json);
        assert!(matches!(
            decode("%%%", P),
            Err(ContinueError::InvalidKey(_))
        ));
        assert_eq!(
            decode(&mk(r#"{"v":"x","rv":1,"start":"a"}"#), P),
            Err(ContinueError::UnrecognizedVersion("x".into()))
        );
        assert_eq!(
            decode(&mk(r#"{"v":"meta.k8s.io/v1","rv":0,"start":"a"}"#), P),
            Err(ContinueError::InvalidStartRevision)
        );
        assert_eq!(
            decode(&mk(r#"{"v":"meta.k8s.io/v1","rv":1,"start":""}"#), P),
            Err(ContinueError::EmptyStartKey)
        );
        assert!(matches!(
            decode(
                &mk(r#"{"v":"meta.k8s.io/v1","rv":1,"start":"../fischers/x"}"#),
                P
            ),
            Err(ContinueError::InvalidKey(_))
        ));
        assert_eq!(
            encode("/other/x", P, 1),
            Err(ContinueError::KeyOutsidePrefix)
        );
    }
}
