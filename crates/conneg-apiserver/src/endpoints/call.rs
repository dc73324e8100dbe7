//! One request to an endpoint, as the verbs take it ([`Call`]): what the router resolved
//! (the target, the query, the negotiation) and what the request brought (method, body,
//! user agent).

use axum::body::Body;
use conneg::Negotiated;
use http::Method;

use super::{Context, Params, Target};

/// One request to an endpoint, as the verbs take it.
pub(crate) struct Call<'a> {
    pub(super) st: &'a Context,
    pub(super) t: &'a Target,
    pub(super) q: &'a Params,
    pub(super) n: &'a Negotiated,
    pub(super) method: Method,
    pub(super) body: Body,
    pub(super) ua: Option<&'a str>,
}
