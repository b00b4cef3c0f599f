//! Values: every value a client sent travels as a bind parameter, in the type the SQL expects.

use cms_core::filter::Scalar;
use serde_json::{Number, Value};
use sqlx::Arguments;
use sqlx::error::BoxDynError;
use sqlx::postgres::PgArguments;
use sqlx::sqlite::SqliteArguments;

use super::target::JsonType;

/// A value for one `$n` placeholder, in the type the SQL expects for it.
#[derive(Debug, Clone, PartialEq)]
pub enum Bind {
    Null,
    Bool(bool),
    Int(i64),
    Float(f64),
    Text(String),
    /// A JSON value: `jsonb` on PostgreSQL, its JSON text on SQLite.
    Json(Value),
}

impl Bind {
    /// Appends this value to SQLite arguments (after any the caller bound before).
    pub fn add_to_sqlite(self, args: &mut SqliteArguments) -> Result<(), BoxDynError> {
        match self {
            Bind::Null => args.add(None::<String>),
            Bind::Bool(b) => args.add(b),
            Bind::Int(i) => args.add(i),
            Bind::Float(f) => args.add(f),
            Bind::Text(s) => args.add(s),
            Bind::Json(v) => args.add(v.to_string()),
        }
    }

    /// Appends this value to PostgreSQL arguments (after any the caller bound before).
    pub fn add_to_postgres(self, args: &mut PgArguments) -> Result<(), BoxDynError> {
        match self {
            Bind::Null => args.add(None::<String>),
            Bind::Bool(b) => args.add(b),
            Bind::Int(i) => args.add(i),
            Bind::Float(f) => args.add(f),
            Bind::Text(s) => args.add(s),
            Bind::Json(v) => args.add(v),
        }
    }
}

pub(super) fn json_of(value: &Scalar) -> Option<Value> {
    match value {
        Scalar::Null => None,
        Scalar::Bool(b) => Some(Value::Bool(*b)),
        Scalar::Number(n) => Some(Value::Number(n.clone())),
        Scalar::String(s) => Some(Value::String(s.clone())),
    }
}

/// The SQLite bind of `value` when it belongs to the group of JSON type `ty`.
pub(super) fn sqlite_bind_of(value: &Scalar, ty: JsonType) -> Option<Bind> {
    match (value, ty) {
        (Scalar::Bool(b), JsonType::Boolean) => Some(Bind::Bool(*b)),
        (Scalar::Number(n), JsonType::Number) => Some(number_bind(n)),
        (Scalar::String(s), JsonType::String) => Some(Bind::Text(s.clone())),
        _ => None,
    }
}

/// Integers stay exact; anything else is a double. `as_f64` only fails with serde_json's
/// `arbitrary_precision` (not enabled) on out-of-range input: NaN then matches nothing on SQLite.
pub(super) fn number_bind(n: &Number) -> Bind {
    match (n.as_i64(), n.as_f64()) {
        (Some(i), _) => Bind::Int(i),
        (None, Some(f)) => Bind::Float(f),
        (None, None) => Bind::Float(f64::NAN),
    }
}
