//! SQLite: partial expression indexes, created one statement at a time on the writer.
//!
//! Building an index takes the write lock for as long as it scans the table (seconds at a
//! million documents), so each `CREATE INDEX` holds the writer for itself alone: write units
//! queued behind one run before the next. Reads go on meanwhile (WAL) and simply do not use an
//! index yet. The engine module runs the statements; this one says which.

use sqlx::SqliteConnection;

use super::{FieldPaths, sqlite_indexes};
use crate::Result;

/// The field indexes that exist.
pub(crate) async fn existing(conn: &mut SqliteConnection) -> Result<Vec<String>> {
    let names: Vec<String> = sqlx::query_scalar(
        "SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'documents' \
         AND name GLOB 'documents_field_[0-9a-f]*'",
    )
    .fetch_all(conn)
    .await?;
    Ok(names)
}

/// The `CREATE INDEX` statements a type's fields still need (by index name), and how many are
/// in place.
pub(crate) fn missing(
    doc_type: &str,
    fields: &FieldPaths,
    existing: &[String],
) -> (Vec<(String, String)>, usize) {
    let (present, missing): (Vec<_>, Vec<_>) = sqlite_indexes(doc_type, fields)
        .into_iter()
        .partition(|(name, _)| existing.contains(name));
    (missing, present.len())
}

/// The `DROP INDEX` statements of the field indexes not in `wanted` (fields removed, opted
/// out, or of an older shape), by index name.
pub(crate) fn unwanted(existing: &[String], wanted: &[String]) -> Vec<(String, String)> {
    existing
        .iter()
        .filter(|name| !wanted.contains(name))
        // The name came from the catalog and matched our pattern: an identifier.
        .map(|name| (name.clone(), format!("DROP INDEX IF EXISTS {name}")))
        .collect()
}
