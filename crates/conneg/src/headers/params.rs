//! Kubernetes response media-type parameters: `as`/`g`/`v` (conversion), `stream`, `pretty`,
//! `profile`.
//!
//! Clients ask for a different *shape* of the response with media-type parameters in `Accept`,
//! e.g. `application/json;as=Table;v=v1;g=meta.k8s.io` for a server-side printed table. A route
//! declares which [`Conversion`]s it can produce and in which codecs (Kubernetes serves Table
//! only as JSON or YAML); a clause asking for anything else does not match, so negotiation falls
//! through to the client's next clause.
//!
//! ```
//! use conneg::{Codec, Conversion, Negotiator};
//! use http::{HeaderMap, HeaderValue, Method, Uri, header::ACCEPT};
//!
//! // This route can print Tables, in JSON only (as Kubernetes).
//! let route = Negotiator::new().conversion(Conversion::table(), [Codec::Json]);
//! let mut headers = HeaderMap::new();
//! headers.insert(ACCEPT, HeaderValue::from_static("application/json;as=Table;v=v1;g=meta.k8s.io,application/json"));
//! let n = route.negotiate(&Method::GET, &Uri::from_static("/flunders"), &headers, false).unwrap();
//! assert_eq!(n.conversion(), Some(&Conversion::table()));
//!
//! // A route without the conversion serves the plain object (the client's second choice).
//! let n = Negotiator::new().negotiate(&Method::GET, &Uri::from_static("/flunders"), &headers, false).unwrap();
//! assert_eq!(n.conversion(), None);
//! assert_eq!(Conversion::table().kind, "Table");
//! assert_eq!(Conversion::table().to_string(), "Table.v1.meta.k8s.io");
//! ```

use std::borrow::Cow;
use std::fmt;

use crate::codec::Codec;
use crate::headers::media_type::ParamValue;

/// A requested representation other than the resource itself: `as` (kind), `g` (group),
/// `v` (version).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Conversion {
    /// The `as` parameter, e.g. `Table`.
    pub kind: Cow<'static, str>,
    /// The `g` parameter, e.g. `meta.k8s.io`.
    pub group: Cow<'static, str>,
    /// The `v` parameter, e.g. `v1`.
    pub version: Cow<'static, str>,
}

impl Conversion {
    /// A conversion from static strings.
    pub const fn new(kind: &'static str, group: &'static str, version: &'static str) -> Self {
        Conversion {
            kind: Cow::Borrowed(kind),
            group: Cow::Borrowed(group),
            version: Cow::Borrowed(version),
        }
    }

    /// `as=Table;g=meta.k8s.io;v=v1`.
    pub const fn table() -> Self {
        Conversion::new("Table", "meta.k8s.io", "v1")
    }

    /// `as=PartialObjectMetadata;g=meta.k8s.io;v=v1`.
    pub const fn partial_object_metadata() -> Self {
        Conversion::new("PartialObjectMetadata", "meta.k8s.io", "v1")
    }

    /// `as=PartialObjectMetadataList;g=meta.k8s.io;v=v1`.
    pub const fn partial_object_metadata_list() -> Self {
        Conversion::new("PartialObjectMetadataList", "meta.k8s.io", "v1")
    }

    /// Whether the clause's `as`/`g`/`v` values (absent = empty) name this conversion.
    pub(crate) fn matches(
        &self,
        kind: Option<ParamValue<'_>>,
        group: Option<ParamValue<'_>>,
        version: Option<ParamValue<'_>>,
    ) -> bool {
        fn eq(v: Option<ParamValue<'_>>, want: &str) -> bool {
            match v {
                Some(v) => v == want,
                None => want.is_empty(),
            }
        }
        eq(kind, &self.kind) && eq(group, &self.group) && eq(version, &self.version)
    }
}

impl fmt::Display for Conversion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}.{}", self.kind, self.version, self.group)
    }
}

/// A conversion a route supports, and the codecs it can be produced in.
#[derive(Clone, Debug)]
pub(crate) struct AllowedConversion {
    pub(crate) conversion: Conversion,
    pub(crate) codecs: Vec<Codec>,
}

/// The media-type parameters of the `Accept` clause that won negotiation.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct MediaTypeParams {
    /// `as`/`g`/`v`: the representation asked for, already checked against what the route
    /// supports. `None` means the resource itself.
    pub conversion: Option<Conversion>,
    /// `stream=watch` was asked for (or `application/cbor-seq` on a streaming route).
    pub stream: bool,
    /// `pretty=1` was asked for (JSON only).
    pub pretty: bool,
    /// The `profile` parameter (used by discovery), if any.
    pub profile: Option<Box<str>>,
}
