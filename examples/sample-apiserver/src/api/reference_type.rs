//! `ReferenceType`: a string enum whose unknown values survive decoding and encoding.

use std::borrow::Cow;
use std::fmt;

use schemars::{JsonSchema, Schema, SchemaGenerator, json_schema};

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// The kind of object a Flunder refers to.
///
/// On the wire it is a plain string. The two known values get variants; any other string is
/// kept verbatim in [`ReferenceType::Other`] so that it round-trips (v1beta1 stores what it is
/// given until validation rejects it; v1alpha1 drops it on conversion, reference §4).
/// The empty string is "unset": fields hold `Option<ReferenceType>` and decode `""` as `None`
/// except v1alpha1, whose Go field is a pointer and so distinguishes `""` from absent.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ReferenceType {
    /// `"Flunder"`: the reference names another Flunder.
    Flunder,
    /// `"Fischer"`: the reference names a Fischer.
    Fischer,
    /// Any other value, kept as sent (case-sensitive: `"flunder"` is not `Flunder`).
    Other(String),
}

impl ReferenceType {
    /// The known values, for OpenAPI `enum` and error messages.
    pub const KNOWN: [&'static str; 2] = ["Flunder", "Fischer"];

    /// The wire string.
    pub fn as_str(&self) -> &str {
        match self {
            ReferenceType::Flunder => "Flunder",
            ReferenceType::Fischer => "Fischer",
            ReferenceType::Other(s) => s,
        }
    }

    /// Whether this is one of the known values.
    pub fn is_known(&self) -> bool {
        !matches!(self, ReferenceType::Other(_))
    }

    /// Whether this is the empty string.
    pub fn is_empty(&self) -> bool {
        self.as_str().is_empty()
    }
}

impl From<&str> for ReferenceType {
    fn from(s: &str) -> Self {
        match s {
            "Flunder" => ReferenceType::Flunder,
            "Fischer" => ReferenceType::Fischer,
            other => ReferenceType::Other(other.to_owned()),
        }
    }
}

impl From<String> for ReferenceType {
    fn from(s: String) -> Self {
        match s.as_str() {
            "Flunder" => ReferenceType::Flunder,
            "Fischer" => ReferenceType::Fischer,
            _ => ReferenceType::Other(s),
        }
    }
}

impl fmt::Display for ReferenceType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A string enum (enum KEP): its schema lists the known values, so any other is refused with
/// `Unsupported value` and published as "Possible enum values".
impl JsonSchema for ReferenceType {
    fn inline_schema() -> bool {
        true
    }
    fn schema_name() -> Cow<'static, str> {
        "ReferenceType".into()
    }
    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({"type": "string", "enum": ReferenceType::KNOWN})
    }
}

impl Serialize for ReferenceType {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for ReferenceType {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        String::deserialize(d).map(ReferenceType::from)
    }
}

/// Serde helper for Go's non-pointer `ReferenceType` with `omitempty`: `""`/`null`/absent
/// decode to `None`, `None` is omitted.
pub(crate) mod optional_nonempty {
    use super::ReferenceType;
    use serde::{Deserialize, Deserializer};

    pub(crate) fn deserialize<'de, D: Deserializer<'de>>(
        d: D,
    ) -> Result<Option<ReferenceType>, D::Error> {
        Ok(Option::<String>::deserialize(d)?
            .filter(|s| !s.is_empty())
            .map(ReferenceType::from))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknown_values_round_trip() {
        for s in ["Flunder", "Fischer", "flunder", "Bogus", ""] {
            let t: ReferenceType = serde_json::from_str(&format!("{s:?}")).unwrap();
            assert_eq!(serde_json::to_string(&t).unwrap(), format!("{s:?}"));
        }
        assert_eq!(ReferenceType::from("Fischer"), ReferenceType::Fischer);
        assert!(!ReferenceType::from("fischer").is_known());
    }
}
