//! `application/yaml` as a [`CustomCodec`]: the whole of a custom codec. conneg hands it
//! `serde_json::Value`s; negotiation, 406/415 and problem details in YAML come with it.

use conneg::{BoxError, CustomCodec};

/// YAML through `serde_norway`.
pub(crate) struct Yaml;

impl CustomCodec for Yaml {
    fn media_type(&self) -> &str {
        "application/yaml"
    }

    fn encode(&self, value: &serde_json::Value, out: &mut Vec<u8>) -> Result<(), BoxError> {
        Ok(serde_norway::to_writer(out, value)?)
    }

    fn decode(&self, body: &[u8]) -> Result<serde_json::Value, BoxError> {
        Ok(serde_norway::from_slice(body)?)
    }
}
