//! Content negotiation for API servers.
#![deny(missing_docs, unreachable_pub, unsafe_code)]

pub mod accept;
pub mod media_type;
