//! SQLite: partial expression indexes, created one statement at a time on the writer.
//!
//! Building an index takes the write lock for as long as it scans the table (seconds at a
//! million documents), so each `CREATE INDEX` is its own statement: writes queued behind one
//! run before the next. Reads go on meanwhile (WAL) and simply do not use an index yet.

use sqlx::SqlitePool;

use super::{FieldPaths, IndexBuild, sqlite_indexes};
use crate::Result;

/// Creates the missing indexes of a type's indexed fields.
pub(crate) async fn ensure(
    pool: &SqlitePool,
    doc_type: &str,
    fields: &FieldPaths,
) -> Result<IndexBuild> {
    let existing = existing(pool).await?;
    let mut build = IndexBuild::default();
    for (name, statement) in sqlite_indexes(doc_type, fields) {
        if existing.contains(&name) {
            build.present += 1;
            continue;
        }
        sqlx::query(sqlx::AssertSqlSafe(statement))
            .execute(pool)
            .await?;
        tracing::info!(index = %name, doc_type, "field index built");
        build.built += 1;
    }
    Ok(build)
}

/// Drops the field indexes not in `wanted` (fields removed, opted out, or of an older shape).
pub(crate) async fn drop_unwanted(pool: &SqlitePool, wanted: &[String]) -> Result<usize> {
    let mut dropped = 0;
    for name in existing(pool).await? {
        if !wanted.contains(&name) {
            // The name came from the catalog and matched our pattern: an identifier.
            sqlx::query(sqlx::AssertSqlSafe(format!("DROP INDEX IF EXISTS {name}")))
                .execute(pool)
                .await?;
            tracing::info!(index = %name, "field index dropped");
            dropped += 1;
        }
    }
    Ok(dropped)
}

async fn existing(pool: &SqlitePool) -> Result<Vec<String>> {
    let names: Vec<String> = sqlx::query_scalar(
        "SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'documents' \
         AND name GLOB 'documents_field_[0-9a-f]*'",
    )
    .fetch_all(pool)
    .await?;
    Ok(names)
}
