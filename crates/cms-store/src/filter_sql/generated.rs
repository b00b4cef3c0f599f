//! PostgreSQL's columns for indexed fields (filled by a trigger per type, see
//! `crate::field_indexes`), and the registry of those ready for queries, which the store fills
//! and every unit of work reads.

use cms_core::FieldKind;

use super::DataColumn;
use super::target::{JsonType, Target, is_path_segment};
use crate::Dialect;

/// The field columns of PostgreSQL's `documents` ready for queries (by name): filled, indexed
/// and kept up to date by their trigger. Read by every list query. Only a column named here is
/// ever referred to, so while one is being built queries stay on the JSON expressions.
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

/// PostgreSQL columns holding one field's scalar of one document type and copy as plain SQL
/// values, NULL for other types' rows and for values of another JSON type:
/// - strings, dates, slugs and references: one `text COLLATE "C"` column holding the first
///   [`TEXT_PREFIX`] characters of the value the JSON expressions compare and sort by
///   (`Target::sort_value`): a B-tree entry must fit a third of a page, so a longer value is
///   cut, and conditions recheck the JSON where the cut could decide;
/// - numbers: a `float8` column (the index key: float8 comparisons are leakproof, numeric ones
///   are not) and the exact `numeric` value beside it (`exact`, carried in the index), which
///   decides where float8 rounding ties (integers beyond 2^53).
///
/// Using them changes no result.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GeneratedColumn {
    /// `f_` and 16 hex digits of FNV-1a over type, path, copy and kind.
    pub name: String,
    /// The document type whose rows the column serves (its index is partial on it).
    pub doc_type: String,
    /// The column type, collation included.
    pub sql_type: &'static str,
    /// The value over a row's `type`, `draft_data` and `published_data` (IMMUTABLE: jsonb
    /// operators, `jsonb_typeof`, casts), which the type's trigger assigns.
    pub expression: String,
    /// Numbers: the exact value's column (`n_` and the same digits, `numeric`) and expression.
    pub exact: Option<(String, String)>,
}

/// The characters of a string value a text column keeps (at most four bytes each, so an index
/// entry stays far below PostgreSQL's limit of about 2,700 bytes).
pub const TEXT_PREFIX: usize = 400;

impl GeneratedColumn {
    /// `ADD COLUMN` clauses for `ALTER TABLE documents`: plain nullable columns, which
    /// PostgreSQL adds without touching a row.
    pub fn add_columns(&self) -> Vec<String> {
        let mut clauses = vec![format!(
            "ADD COLUMN IF NOT EXISTS {} {}",
            self.name, self.sql_type
        )];
        if let Some((name, _)) = &self.exact {
            clauses.push(format!("ADD COLUMN IF NOT EXISTS {name} numeric"));
        }
        clauses
    }

    /// The columns with the values to assign, in the trigger's order.
    pub fn assignments(&self) -> Vec<(&str, &str)> {
        let mut out = vec![(self.name.as_str(), self.expression.as_str())];
        if let Some((name, expression)) = &self.exact {
            out.push((name.as_str(), expression.as_str()));
        }
        out
    }

    /// The index serving comparisons, sorts and exact counts, over the rows of its type only:
    /// it ends with `id`, the tie-break of every sorted list, and carries the exact number, so
    /// a count is index-only. Built without blocking writes.
    pub fn index(&self) -> String {
        let include = match &self.exact {
            Some((name, _)) => format!(" INCLUDE ({name})"),
            None => String::new(),
        };
        format!(
            "CREATE INDEX CONCURRENTLY IF NOT EXISTS {} ON documents (organization_id, {}, id){include}              WHERE type = '{}'",
            self.index_name(),
            self.name,
            self.doc_type
        )
    }

    pub fn index_name(&self) -> String {
        format!("documents_{}", self.name)
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
    if !crate::field_indexes::is_type_name(doc_type)
        || segments.is_empty()
        || !segments.iter().all(|s| is_path_segment(s))
    {
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
    let doc_type = doc_type.to_string();
    Some(match kind {
        FieldKind::Number => GeneratedColumn {
            doc_type,
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
                doc_type,
                name: format!("f_{hash:016x}"),
                sql_type: "text COLLATE \"C\"",
                expression: format!(
                    "{} left({}, {TEXT_PREFIX}) END",
                    when(JsonType::String),
                    target.text()
                ),
                exact: None,
            }
        }
        FieldKind::Boolean | FieldKind::StringArray | FieldKind::Other => return None,
    })
}
