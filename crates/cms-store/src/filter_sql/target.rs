//! The stored value a condition or sort key looks at, and how each engine reads it: the
//! dialect differences of JSON paths, types and missing values.

use cms_core::FieldKind;

use crate::Dialect;

/// The JSON types a clause can ask the stored value to have.
#[derive(Clone, Copy)]
pub(super) enum JsonType {
    Number,
    String,
    Boolean,
    Array,
}

/// The stored value a condition or sort key looks at: a field path inside one JSON column,
/// extended by `current` for slugs and `_ref` for references.
pub(super) struct Target {
    dialect: Dialect,
    pub(super) column: &'static str,
    pub(super) segments: Vec<String>,
}

impl Target {
    pub(super) fn new(
        dialect: Dialect,
        column: &'static str,
        segments: &[String],
        kind: FieldKind,
    ) -> Self {
        let mut segments = segments.to_vec();
        match kind {
            FieldKind::Slug => segments.push("current".into()),
            FieldKind::Reference => segments.push("_ref".into()),
            _ => {}
        }
        debug_assert!(segments.iter().all(|s| is_path_segment(s)));
        Target {
            dialect,
            column,
            segments,
        }
    }

    /// SQLite `json_extract(col, '$.a.b')` (the native SQL value); PostgreSQL `(col #> '{a,b}')`
    /// (jsonb).
    pub(super) fn value(&self) -> String {
        match self.dialect {
            Dialect::Sqlite => format!(
                "json_extract({}, '$.{}')",
                self.column,
                self.segments.join(".")
            ),
            Dialect::Postgres => format!("({} #> '{{{}}}')", self.column, self.segments.join(",")),
        }
    }

    /// The value as text: PostgreSQL `(col #>> '{a,b}')`; on SQLite the native value already is.
    pub(super) fn text(&self) -> String {
        match self.dialect {
            Dialect::Sqlite => self.value(),
            Dialect::Postgres => {
                format!("({} #>> '{{{}}}')", self.column, self.segments.join(","))
            }
        }
    }

    /// The JSON type name, NULL when the path is missing.
    pub(super) fn type_name(&self) -> String {
        match self.dialect {
            Dialect::Sqlite => {
                format!(
                    "json_type({}, '$.{}')",
                    self.column,
                    self.segments.join(".")
                )
            }
            Dialect::Postgres => format!("jsonb_typeof({})", self.value()),
        }
    }

    pub(super) fn is_type(&self, ty: JsonType) -> String {
        let name = self.type_name();
        match (self.dialect, ty) {
            (Dialect::Sqlite, JsonType::Number) => format!("{name} IN ('integer','real')"),
            (Dialect::Sqlite, JsonType::String) => format!("{name} = 'text'"),
            (Dialect::Sqlite, JsonType::Boolean) => format!("{name} IN ('true','false')"),
            (Dialect::Postgres, JsonType::Number) => format!("{name} = 'number'"),
            (Dialect::Postgres, JsonType::String) => format!("{name} = 'string'"),
            (Dialect::Postgres, JsonType::Boolean) => format!("{name} = 'boolean'"),
            (_, JsonType::Array) => format!("{name} = 'array'"),
        }
    }

    /// Absent or JSON null. Never SQL NULL, so it is safe under NOT.
    pub(super) fn missing(&self) -> String {
        format!("{} = 'null'", self.null_safe_type())
    }

    pub(super) fn present(&self) -> String {
        format!("{} <> 'null'", self.null_safe_type())
    }

    pub(super) fn null_safe_type(&self) -> String {
        match self.dialect {
            Dialect::Sqlite => format!("IFNULL({}, 'null')", self.type_name()),
            Dialect::Postgres => format!("coalesce({}, 'null')", self.type_name()),
        }
    }

    /// The value to order by for `kind`; values of another JSON type order as missing, so
    /// both engines agree even on data that does not match its schema.
    pub(super) fn sort_value(&self, kind: FieldKind) -> Option<String> {
        let (ty, then) = match (kind, self.dialect) {
            (FieldKind::Number, Dialect::Sqlite) => (JsonType::Number, self.value()),
            (FieldKind::Number, Dialect::Postgres) => {
                (JsonType::Number, format!("{}::numeric", self.value()))
            }
            (FieldKind::Boolean, Dialect::Sqlite) => (JsonType::Boolean, self.value()),
            (FieldKind::Boolean, Dialect::Postgres) => {
                (JsonType::Boolean, format!("{}::boolean", self.value()))
            }
            (FieldKind::StringArray | FieldKind::Other, _) => return None,
            (_, _) => (JsonType::String, self.text()),
        };
        let collate = match (ty, self.dialect) {
            (JsonType::String, Dialect::Postgres) => " COLLATE \"C\"",
            _ => "",
        };
        Some(format!(
            "(CASE WHEN {} THEN {then} END){collate}",
            self.is_type(ty)
        ))
    }
}

/// A declared name, or a locale tag after a localized field: neither holds a character with a
/// meaning in SQL text or in either engine's JSON path (no quote, dot, comma, brace, bracket).
pub(super) fn is_path_segment(segment: &str) -> bool {
    is_identifier(segment) || cms_core::LocaleTag::parse(segment).is_some()
}

fn is_identifier(segment: &str) -> bool {
    let mut bytes = segment.bytes();
    matches!(bytes.next(), Some(b) if b.is_ascii_alphabetic() || b == b'_')
        && bytes.all(|b| b.is_ascii_alphanumeric() || b == b'_')
}
