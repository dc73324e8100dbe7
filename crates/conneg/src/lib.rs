//! Content negotiation for API servers (placeholder until the negotiation core lands).
