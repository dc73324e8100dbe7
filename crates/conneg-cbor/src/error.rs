//! The error type shared by encoding and decoding.

use std::fmt;
use std::sync::OnceLock;

/// `Result` with [`Error`] as the default error type.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// What went wrong, coarsely; see [`Error::kind`].
#[non_exhaustive]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ErrorKind {
    /// The input ended inside an item (or was empty).
    Eof,
    /// The input is not well-formed CBOR (RFC 8949 §3, Appendix F).
    Syntax,
    /// Bytes follow the single top-level item.
    TrailingData,
    /// A map holds the same key twice (byte and text string keys with equal bytes count as equal),
    /// or an encoded map would.
    DuplicateKey,
    /// A text string (or a byte string used as text) is not valid UTF-8.
    InvalidUtf8,
    /// An integer is outside the range the profile allows (`i64` on decode, `i64`/`u64` on encode).
    IntegerOverflow,
    /// A value the profile forbids: NaN, ±Infinity, `undefined`, other simple values, bignums,
    /// a time tag out of range.
    UnsupportedValue,
    /// A map key that is not a string.
    NonStringKey,
    /// Nesting deeper than the configured maximum.
    DepthLimit,
    /// An array or map longer than the configured maximum.
    LengthLimit,
    /// A map key that names no field of the target struct.
    UnknownField,
    /// A custom serde error or a type mismatch.
    Message,
    /// An I/O error from a reader or writer.
    Io,
}

/// An encoding or decoding error, with the path to the offending item and its byte offset.
///
/// Displays as `duplicate map key "name" at .metadata`.
pub struct Error {
    inner: Box<Inner>,
}

struct Inner {
    kind: ErrorKind,
    msg: String,
    /// Path segments (`.key`, `[index]`), innermost first: a decoder adds one per level as the
    /// error propagates out, so that decoding keeps no path on the success path.
    segs: Vec<String>,
    /// `segs` joined outermost first, rendered on first use.
    path: OnceLock<String>,
    offset: Option<usize>,
    io: Option<std::io::Error>,
}

impl Error {
    pub(crate) fn new(kind: ErrorKind, msg: impl Into<String>) -> Self {
        Error {
            inner: Box::new(Inner {
                kind,
                msg: msg.into(),
                segs: Vec::new(),
                path: OnceLock::new(),
                offset: None,
                io: None,
            }),
        }
    }

    pub(crate) fn at(kind: ErrorKind, offset: usize, msg: impl Into<String>) -> Self {
        let mut e = Error::new(kind, msg);
        e.inner.offset = Some(offset);
        e
    }

    pub(crate) fn eof(offset: usize) -> Self {
        Error::at(ErrorKind::Eof, offset, "unexpected end of input")
    }

    pub(crate) fn io(err: std::io::Error) -> Self {
        let mut e = Error::new(ErrorKind::Io, err.to_string());
        e.inner.io = Some(err);
        e
    }

    /// What kind of error this is.
    pub fn kind(&self) -> ErrorKind {
        self.inner.kind
    }

    /// The path to the offending item, e.g. `.spec.containers[2].name`; `""` at the root.
    pub fn path(&self) -> &str {
        self.inner
            .path
            .get_or_init(|| self.inner.segs.iter().rev().map(String::as_str).collect())
    }

    /// The byte offset in the input where the offending item starts, when known.
    pub fn offset(&self) -> Option<usize> {
        self.inner.offset
    }

    /// True when the input ended inside an item: more bytes might complete it.
    pub fn is_eof(&self) -> bool {
        self.inner.kind == ErrorKind::Eof
    }

    /// The message without the path.
    pub fn message(&self) -> &str {
        &self.inner.msg
    }

    /// A copy of this error (without an I/O source), for errors that must be reported again.
    pub(crate) fn duplicate(&self) -> Self {
        Error {
            inner: Box::new(Inner {
                kind: self.inner.kind,
                msg: self.inner.msg.clone(),
                segs: self.inner.segs.clone(),
                path: self.inner.path.clone(),
                offset: self.inner.offset,
                io: None,
            }),
        }
    }

    pub(crate) fn shift_offset(&mut self, by: usize) {
        if let Some(o) = &mut self.inner.offset {
            *o += by;
        }
    }

    /// Puts `seg` (`.key` or `[index]`) in front of the path: the error is leaving the item that
    /// `seg` names for its parent.
    pub(crate) fn prepend_path(&mut self, seg: String) {
        self.inner.path.take();
        self.inner.segs.push(seg);
    }

    pub(crate) fn set_offset_if_none(&mut self, offset: usize) {
        if self.inner.offset.is_none() {
            self.inner.offset = Some(offset);
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.inner.msg)?;
        match self.path() {
            "" => Ok(()),
            p => write!(f, " at {p}"),
        }
    }
}

impl fmt::Debug for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Error")
            .field("kind", &self.inner.kind)
            .field("message", &self.inner.msg)
            .field("path", &self.path())
            .field("offset", &self.inner.offset)
            .finish()
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.inner
            .io
            .as_ref()
            .map(|e| e as &(dyn std::error::Error + 'static))
    }
}

impl From<std::io::Error> for Error {
    fn from(err: std::io::Error) -> Self {
        Error::io(err)
    }
}

impl serde::ser::Error for Error {
    fn custom<T: fmt::Display>(msg: T) -> Self {
        Error::new(ErrorKind::Message, msg.to_string())
    }
}

impl serde::de::Error for Error {
    fn custom<T: fmt::Display>(msg: T) -> Self {
        Error::new(ErrorKind::Message, msg.to_string())
    }

    fn invalid_type(unexp: serde::de::Unexpected<'_>, exp: &dyn serde::de::Expected) -> Self {
        if let serde::de::Unexpected::Bytes(_) = unexp {
            // Byte strings are offered as text whenever they are valid UTF-8 (Go peers write every
            // string as a byte string), so a target rejecting bytes means the bytes were not UTF-8.
            return Error::new(
                ErrorKind::InvalidUtf8,
                format!("byte string is not valid UTF-8, expected {exp}"),
            );
        }
        Error::new(
            ErrorKind::Message,
            format!("invalid type: {unexp}, expected {exp}"),
        )
    }

    fn unknown_field(field: &str, _expected: &'static [&'static str]) -> Self {
        Error::new(ErrorKind::UnknownField, format!("unknown field {field:?}"))
    }

    fn duplicate_field(field: &'static str) -> Self {
        Error::new(
            ErrorKind::DuplicateKey,
            format!("duplicate field {field:?}"),
        )
    }
}
