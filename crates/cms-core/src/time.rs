//! Timestamps: stored as Unix milliseconds, shown as ISO 8601.

use chrono::{DateTime, SecondsFormat, Utc};
use serde::{Serialize, Serializer};

/// A point in time with millisecond precision. Stored as an integer on every engine so ordering
/// and comparison are engine-independent; serialised as an RFC 3339 string (`...Z`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Timestamp(i64);

impl Timestamp {
    pub const fn from_millis(ms: i64) -> Self {
        Timestamp(ms)
    }

    pub fn millis(self) -> i64 {
        self.0
    }

    pub fn plus_millis(self, ms: i64) -> Self {
        Timestamp(self.0.saturating_add(ms))
    }

    pub fn plus_days(self, days: i64) -> Self {
        self.plus_millis(days.saturating_mul(86_400_000))
    }

    pub fn to_datetime(self) -> DateTime<Utc> {
        DateTime::from_timestamp_millis(self.0).unwrap_or_default()
    }

    pub fn to_rfc3339(self) -> String {
        self.to_datetime()
            .to_rfc3339_opts(SecondsFormat::Millis, true)
    }
}

impl From<i64> for Timestamp {
    fn from(ms: i64) -> Self {
        Timestamp(ms)
    }
}

impl From<DateTime<Utc>> for Timestamp {
    fn from(t: DateTime<Utc>) -> Self {
        Timestamp(t.timestamp_millis())
    }
}

/// An RFC 3339 date-time string in UTC with milliseconds, as it is serialized.
impl utoipa::PartialSchema for Timestamp {
    fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
        utoipa::openapi::ObjectBuilder::new()
            .schema_type(utoipa::openapi::schema::Type::String)
            .format(Some(utoipa::openapi::SchemaFormat::KnownFormat(
                utoipa::openapi::KnownFormat::DateTime,
            )))
            .into()
    }
}

impl utoipa::ToSchema for Timestamp {}

impl Serialize for Timestamp {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.to_rfc3339())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_as_utc_rfc3339_with_millis() {
        let t = Timestamp::from_millis(1_700_000_000_123);
        assert_eq!(t.to_rfc3339(), "2023-11-14T22:13:20.123Z");
        assert_eq!(t.plus_days(1).millis(), 1_700_086_400_123);
    }
}
