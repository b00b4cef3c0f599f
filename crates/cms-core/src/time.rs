//! Timestamps: stored as Unix milliseconds, shown as ISO 8601. And the stored form of a
//! `datetime` field's value.

use chrono::{DateTime, Datelike, SecondsFormat, Utc};
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

    /// The instant an RFC 3339 date-time names (any offset); `None` for anything else.
    pub fn parse_rfc3339(s: &str) -> Option<Self> {
        DateTime::parse_from_rfc3339(s)
            .ok()
            .map(|t| Timestamp(t.timestamp_millis()))
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

/// The stored form of a `datetime` value (CONTRACT.md section 14): the instant `s` names, in
/// UTC, with milliseconds, `YYYY-MM-DDTHH:MM:SS.sssZ`, so that text order is time order on
/// every engine. `s` is any RFC 3339 date-time chrono reads (`T`, `t` or a space between date
/// and time; `Z`, `z` or an offset up to ±23:59; any number of fraction digits, cut to
/// milliseconds). `None` when `s` is not one, or when its instant falls outside the years
/// 0000 to 9999 in UTC, which the fixed-width form cannot write.
pub fn normalize_datetime(s: &str) -> Option<String> {
    let utc = DateTime::parse_from_rfc3339(s).ok()?.with_timezone(&Utc);
    (0..=9999)
        .contains(&utc.year())
        .then(|| utc.to_rfc3339_opts(SecondsFormat::Millis, true))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn datetimes_normalize_to_utc_milliseconds() {
        for (input, stored) in [
            ("2026-11-26T10:00:00+01:00", "2026-11-26T09:00:00.000Z"),
            ("2026-11-26T09:00:00Z", "2026-11-26T09:00:00.000Z"),
            ("2026-11-26T09:00:00.000Z", "2026-11-26T09:00:00.000Z"),
            ("2026-11-26t09:00:00z", "2026-11-26T09:00:00.000Z"),
            ("2026-11-26 09:00:00-00:00", "2026-11-26T09:00:00.000Z"),
            ("2026-11-26T09:00:00.1234567Z", "2026-11-26T09:00:00.123Z"),
            ("2026-11-26T09:00:00.5-05:30", "2026-11-26T14:30:00.500Z"),
            ("2026-01-01T00:30:00+01:00", "2025-12-31T23:30:00.000Z"),
            ("2016-12-31T23:59:60Z", "2016-12-31T23:59:60.000Z"),
            ("0000-01-01T00:00:00Z", "0000-01-01T00:00:00.000Z"),
            ("9999-12-31T23:59:59.999Z", "9999-12-31T23:59:59.999Z"),
        ] {
            assert_eq!(
                normalize_datetime(input).as_deref(),
                Some(stored),
                "{input}"
            );
            assert_eq!(
                normalize_datetime(stored).as_deref(),
                Some(stored),
                "{stored}"
            );
        }
        for bad in [
            "",
            "2026-11-26",
            "2026-11-26T10:00:00",
            "2026-11-26T25:00:00Z",
            "2026-02-30T10:00:00Z",
            "2026-11-26T10:00:00+24:00",
            "yesterday",
            // Out of the four-digit years once in UTC.
            "0000-01-01T00:00:00+01:00",
            "9999-12-31T23:00:00-05:00",
        ] {
            assert_eq!(normalize_datetime(bad), None, "{bad}");
        }
    }

    #[test]
    fn stored_datetimes_order_as_their_instants() {
        let mut inputs = [
            "2026-11-26T10:00:00+01:00",
            "2026-11-26T08:30:00Z",
            "2026-11-26T03:59:00-05:00",
            "2026-11-26T09:00:00.001Z",
        ];
        let instant = |s: &str| DateTime::parse_from_rfc3339(s).unwrap();
        inputs.sort_by_key(|s| instant(s));
        let stored: Vec<String> = inputs
            .iter()
            .map(|s| normalize_datetime(s).unwrap())
            .collect();
        let mut by_text = stored.clone();
        by_text.sort();
        assert_eq!(stored, by_text);
    }

    #[test]
    fn renders_as_utc_rfc3339_with_millis() {
        let t = Timestamp::from_millis(1_700_000_000_123);
        assert_eq!(t.to_rfc3339(), "2023-11-14T22:13:20.123Z");
        assert_eq!(t.plus_days(1).millis(), 1_700_086_400_123);
    }
}
