//! PostgreSQL's generated columns for indexed fields, and the registry of those that exist,
//! which the store fills and every unit of work reads.

use cms_core::FieldKind;

use super::DataColumn;
use super::target::{JsonType, Target, is_path_segment};
use crate::Dialect;

/// The generated columns that exist on PostgreSQL's `documents` (by name): filled by the store
/// as it creates them, read by every list query. Only a column named here is ever referred to,
/// so an instance that has not (yet) created one stays on the JSON expressions.
#[derive(Debug, Default)]
pub struct GeneratedColumns(std::sync::RwLock<std::collections::HashSet<String>>);

impl GeneratedColumns {
    pub fn insert(&self, name: String) {
        self.0
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .insert(name);
    }

    pub fn contains(&self, name: &str) -> bool {
        self.0
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .contains(name)
    }
}

/// The generated columns a query over rows of `doc_type` may use.
#[derive(Debug, Clone, Copy)]
pub struct Generated<'a> {
    pub doc_type: &'a str,
    pub columns: &'a GeneratedColumns,
}

impl Generated<'_> {
    /// The existing generated column(s) for a field of this type.
    pub(super) fn column(
        &self,
        segments: &[String],
        kind: FieldKind,
        data: DataColumn,
    ) -> Option<GeneratedColumn> {
        let generated = generated_column(self.doc_type, segments, kind, data)?;
        self.columns.contains(&generated.name).then_some(generated)
    }
}

/// PostgreSQL STORED generated columns holding one field's scalar of one document type and
/// copy as plain SQL values, NULL for other types' rows and for values of another JSON type:
/// - strings, dates, slugs and references: one `text COLLATE "C"` column, exactly the value the
///   JSON expressions compare and sort by (`Target::sort_value`);
/// - numbers: a `float8` column (the index key: float8 comparisons are leakproof, numeric ones
///   are not) and the exact `numeric` value beside it (`exact`, carried in the index), which
///   decides where float8 rounding ties (integers beyond 2^53).
///
/// Using them changes no result.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GeneratedColumn {
    /// `f_` and 16 hex digits of FNV-1a over type, path, copy and kind.
    pub name: String,
    /// The column type, collation included.
    pub sql_type: &'static str,
    /// The generation expression (IMMUTABLE: jsonb operators, `jsonb_typeof`, casts).
    pub expression: String,
    /// Numbers: the exact value's column (`n_` and the same digits, `numeric`) and expression.
    pub exact: Option<(String, String)>,
}

impl GeneratedColumn {
    /// `ADD COLUMN` clauses for `ALTER TABLE documents`.
    pub fn add_columns(&self) -> Vec<String> {
        let mut clauses = vec![format!(
            "ADD COLUMN IF NOT EXISTS {} {} GENERATED ALWAYS AS ({}) STORED",
            self.name, self.sql_type, self.expression
        )];
        if let Some((name, expression)) = &self.exact {
            clauses.push(format!(
                "ADD COLUMN IF NOT EXISTS {name} numeric GENERATED ALWAYS AS ({expression}) STORED"
            ));
        }
        clauses
    }

    /// The index serving comparisons, sorts and exact counts: it ends with `id`, the tie-break
    /// of every sorted list, and carries the exact number, so a count is index-only.
    pub fn index(&self) -> String {
        let include = match &self.exact {
            Some((name, _)) => format!(" INCLUDE ({name})"),
            None => String::new(),
        };
        format!(
            "CREATE INDEX IF NOT EXISTS documents_{0} ON documents (organization_id, type, {0}, id){include}",
            self.name
        )
    }
}

/// The generated column(s) for a field, `None` for kinds without them (booleans, arrays,
/// objects) and for names that are not identifiers.
pub fn generated_column(
    doc_type: &str,
    segments: &[String],
    kind: FieldKind,
    data: DataColumn,
) -> Option<GeneratedColumn> {
    let type_ok = !doc_type.is_empty()
        && doc_type
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_');
    if !type_ok || segments.is_empty() || !segments.iter().all(|s| is_path_segment(s)) {
        return None;
    }
    let target = Target::new(Dialect::Postgres, data.name(), segments, kind);
    let hash = crate::fnv1a(&format!(
        "{doc_type}:{}:{}:{kind:?}",
        segments.join("."),
        data.name()
    ));
    let when = |ty| {
        format!(
            "CASE WHEN type = '{doc_type}' AND {} THEN",
            target.is_type(ty)
        )
    };
    Some(match kind {
        FieldKind::Number => GeneratedColumn {
            name: format!("f_{hash:016x}"),
            sql_type: "float8",
            expression: format!("{} {}::float8 END", when(JsonType::Number), target.value()),
            exact: Some((
                format!("n_{hash:016x}"),
                format!("{} {}::numeric END", when(JsonType::Number), target.value()),
            )),
        },
        FieldKind::String | FieldKind::Date | FieldKind::Slug | FieldKind::Reference => {
            GeneratedColumn {
                name: format!("f_{hash:016x}"),
                sql_type: "text COLLATE \"C\"",
                expression: format!("{} {} END", when(JsonType::String), target.text()),
                exact: None,
            }
        }
        FieldKind::Boolean | FieldKind::StringArray | FieldKind::Other => return None,
    })
}
