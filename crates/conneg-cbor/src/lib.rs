//! Strict CBOR for API objects (placeholder until the codec lands).
