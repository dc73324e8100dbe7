//! The compiled declarations of a server's served kinds, one per version and resource.

use std::collections::HashMap;

use foldhash::quality::RandomState;
use std::sync::Arc;

use super::Validator;
use crate::resource::{GroupVersion, ResourceInfo};

/// The compiled declaration of each served version and resource: what every write of that
/// resource in that version is checked against. A server compiles it from the schemas its
/// OpenAPI documents publish, so what is published is what is enforced.
#[derive(Debug, Default)]
pub struct Validators(HashMap<(GroupVersion, &'static str), Arc<Validator>, RandomState>);

impl Validators {
    /// Adds the validation of `resource` in `version`.
    pub fn insert(&mut self, version: GroupVersion, resource: &'static str, v: Validator) {
        self.0.insert((version, resource), Arc::new(v));
    }

    /// The validation of `resource` in `version`.
    pub fn get(&self, version: GroupVersion, resource: &ResourceInfo) -> Option<&Arc<Validator>> {
        self.0.get(&(version, resource.resource))
    }
}
