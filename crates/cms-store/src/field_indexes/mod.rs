//! The indexes behind `where` and `sort` on document fields (CONTRACT.md section 14): which
//! exist for a type's indexed fields, how each engine builds them without stopping the
//! service, and how those no schema wants any more are dropped.
//!
//! Every index is partial on its document type (`WHERE type = 'post'`): a write of an author
//! never touches the indexes of posts, so a type's writes pay only for its own fields. List
//! queries write the type as a literal (`list_condition`), which both planners need to match
//! a partial index; type names are identifiers ([`is_type_name`]), never client text.
//!
//! - SQLite: one expression index per field and copy over the JSON expression the compiled
//!   filters use (`json_extract(draft_data, '$.views')`).
//! - PostgreSQL: under row-level security no JSON expression can be an index condition (the
//!   JSON operators are not leakproof), so each field and copy has plain columns on `documents`
//!   ([`GeneratedColumn`]: `float8` + exact `numeric` for numbers, `text COLLATE "C"` for the
//!   rest). They are filled by a trigger per type rather than declared `GENERATED ... STORED`,
//!   because adding a stored generated column rewrites the whole table under an exclusive lock;
//!   a plain nullable column is added instantly, existing rows are filled in small batches, the
//!   index is built `CONCURRENTLY`, and only then do queries use the column (the registry
//!   [`crate::filter_sql::GeneratedColumns`], and a column comment for the next start).

pub(crate) mod postgres;
pub(crate) mod sqlite;

use cms_core::FieldKind;

use crate::Dialect;
use crate::filter_sql::{DataColumn, GeneratedColumn, generated_column, index_expressions};

/// A document type's indexed fields: declared paths (identifiers, locale tags after localized
/// fields) with their kinds.
pub type FieldPaths = [(Vec<String>, FieldKind)];

/// A document type with its indexed fields.
pub type IndexedType = (String, Vec<(Vec<String>, FieldKind)>);

/// What the building of field indexes has done so far, for the health report.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct IndexBuild {
    /// Indexes (SQLite) or columns with their index (PostgreSQL) made ready by this call.
    pub built: usize,
    /// Those that were already in place.
    pub present: usize,
}

/// Whether a document type's name may be written into SQL: schema names are identifiers
/// (`^[A-Za-z_][A-Za-z0-9_]*$`), checked again here so no other text ever reaches it.
pub(crate) fn is_type_name(doc_type: &str) -> bool {
    let mut chars = doc_type.chars();
    matches!(chars.next(), Some(c) if c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// SQLite: the `CREATE INDEX` statements of a type's indexed fields, by index name. Names are
/// derived from the type, the expression and the shape, so the same field always maps to the
/// same index, restarts are no-ops, and an index of an older shape is told apart (and dropped).
pub(crate) fn sqlite_indexes(doc_type: &str, fields: &FieldPaths) -> Vec<(String, String)> {
    if !is_type_name(doc_type) {
        return Vec::new();
    }
    let mut out = Vec::new();
    for (segments, kind) in fields {
        for column in [DataColumn::Draft, DataColumn::Published] {
            let expressions =
                index_expressions(segments, *kind, Dialect::Sqlite, column).unwrap_or_default();
            // A draft has no published copy: leaving drafts out of the published copy's indexes
            // spares every create their entries and every first publish moving them (a list of
            // published copies says `published_data IS NOT NULL`, which implies this predicate).
            let (shape, predicate) = match column {
                DataColumn::Draft => ("partial", String::new()),
                DataColumn::Published => ("published", " AND published_data IS NOT NULL".into()),
            };
            for expression in expressions {
                let name = format!(
                    "documents_field_{:016x}",
                    crate::fnv1a(&format!("{doc_type}:{expression}:{shape}"))
                );
                let statement = format!(
                    "CREATE INDEX IF NOT EXISTS {name} ON documents (organization_id, {expression}) \
                     WHERE type = '{doc_type}'{predicate}"
                );
                out.push((name, statement));
            }
        }
    }
    out
}

/// PostgreSQL: the columns of a type's indexed fields (see [`generated_column`]).
pub(crate) fn postgres_columns(doc_type: &str, fields: &FieldPaths) -> Vec<GeneratedColumn> {
    let mut out = Vec::new();
    for (segments, kind) in fields {
        for column in [DataColumn::Draft, DataColumn::Published] {
            out.extend(generated_column(doc_type, segments, *kind, column));
        }
    }
    out
}

/// Names of the index objects a set of types wants, for dropping the rest.
pub(crate) fn wanted_names(dialect: Dialect, types: &[IndexedType]) -> Vec<String> {
    let mut names = Vec::new();
    for (doc_type, fields) in types {
        match dialect {
            Dialect::Sqlite => {
                names.extend(sqlite_indexes(doc_type, fields).into_iter().map(|(n, _)| n))
            }
            Dialect::Postgres => {
                for column in postgres_columns(doc_type, fields) {
                    if let Some((exact, _)) = &column.exact {
                        names.push(exact.clone());
                    }
                    names.push(column.name);
                }
                names.push(postgres::trigger_name(doc_type));
            }
        }
    }
    names
}
