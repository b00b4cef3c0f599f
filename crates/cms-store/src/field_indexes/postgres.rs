//! PostgreSQL: field columns filled by a trigger per type, backfilled in batches, indexed
//! `CONCURRENTLY`; none of it holds a lock on `documents` for longer than a catalog change.
//!
//! The steps, each safe to repeat after a crash or on a second instance:
//! 1. the columns are added as plain nullable ones (instant); a column of an older version,
//!    `GENERATED ... STORED`, becomes a plain one (`DROP EXPRESSION`, instant, values kept);
//! 2. the type's trigger function assigns every column from the row's JSON on each insert and
//!    on each update of a copy, so from here on every write keeps them exact;
//! 3. rows written before are filled in batches of [`BATCH`], organization by organization as
//!    row-level security requires, in short transactions of their own;
//! 4. the column is marked filled (its comment), its partial index built `CONCURRENTLY`;
//! 5. only then may queries use it (the registry).

use sqlx::postgres::{PgConnection, PgPool};

use super::{FieldPaths, IndexBuild, postgres_columns};
use crate::filter_sql::{GeneratedColumn, GeneratedColumns};
use crate::{Result, StoreError};

/// Rows filled per statement: short transactions, so writes never queue long behind one.
const BATCH: i64 = 500;

/// The comment of a column whose existing rows are filled.
const FILLED: &str = "cms:filled";

/// How long a catalog change waits for the table's lock before giving up (and retrying later),
/// so that it never queues every request behind a long transaction.
const LOCK_TIMEOUT: &str = "SET lock_timeout = '5s'";

/// The trigger of a type (its function has the same digits).
pub(crate) fn trigger_name(doc_type: &str) -> String {
    format!("documents_fields_{:016x}", crate::fnv1a(doc_type))
}

fn function_name(doc_type: &str) -> String {
    format!("cms_fields_{:016x}", crate::fnv1a(doc_type))
}

/// Builds what a type's indexed fields need and registers the columns ready for queries.
/// `admin` is the tables' owner; `pool` serves the units of work (row-level security).
pub(crate) async fn ensure(
    admin: &mut PgConnection,
    pool: &PgPool,
    registry: &GeneratedColumns,
    doc_type: &str,
    fields: &FieldPaths,
) -> Result<IndexBuild> {
    let columns = postgres_columns(doc_type, fields);
    let mut build = IndexBuild::default();
    if columns.is_empty() {
        return Ok(build);
    }
    sqlx::query(LOCK_TIMEOUT).execute(&mut *admin).await?;
    let existing = existing_columns(admin).await?;
    add_columns(admin, &columns, &existing).await?;
    install_trigger(admin, doc_type, &columns).await?;
    let unfilled: Vec<&GeneratedColumn> = columns
        .iter()
        .filter(|c| !existing.iter().any(|e| e.name == c.name && e.filled))
        .collect();
    if !unfilled.is_empty() {
        backfill(pool, doc_type).await?;
    }
    // Marked once filled, a converted generated column included, so a restart skips the fill.
    for column in &columns {
        for (name, _) in column.assignments() {
            if !existing.iter().any(|e| e.name == name && e.marked) {
                let comment = format!("COMMENT ON COLUMN documents.{name} IS '{FILLED}'");
                sqlx::query(sqlx::AssertSqlSafe(comment))
                    .execute(&mut *admin)
                    .await?;
            }
        }
    }
    for column in &columns {
        if build_index(admin, column).await? {
            build.built += 1;
        } else {
            build.present += 1;
        }
        registry.insert(column.name.clone());
    }
    Ok(build)
}

/// Drops the columns, indexes, triggers and functions of fields and types no schema wants.
pub(crate) async fn drop_unwanted(admin: &mut PgConnection, wanted: &[String]) -> Result<usize> {
    sqlx::query(LOCK_TIMEOUT).execute(&mut *admin).await?;
    let mut dropped = 0;
    let triggers: Vec<String> = sqlx::query_scalar(
        "SELECT tgname::text FROM pg_trigger WHERE tgrelid = 'documents'::regclass \
         AND tgname ~ '^documents_fields_[0-9a-f]{16}$'",
    )
    .fetch_all(&mut *admin)
    .await?;
    for trigger in triggers.iter().filter(|t| !wanted.contains(t)) {
        let digits = trigger.trim_start_matches("documents_fields_");
        // Names from the catalog matching our pattern: identifiers.
        let drop = format!(
            "DROP TRIGGER IF EXISTS {trigger} ON documents; DROP FUNCTION IF EXISTS cms_fields_{digits}()"
        );
        sqlx::raw_sql(sqlx::AssertSqlSafe(drop))
            .execute(&mut *admin)
            .await?;
        dropped += 1;
    }
    let indexes: Vec<String> = sqlx::query_scalar(
        "SELECT indexname::text FROM pg_indexes WHERE schemaname = current_schema() \
         AND tablename = 'documents' AND indexname ~ '^documents_field_[0-9a-f]{16}$'",
    )
    .fetch_all(&mut *admin)
    .await?;
    // JSON expression indexes of earlier versions: no query on PostgreSQL can use them.
    for index in indexes {
        sqlx::query(sqlx::AssertSqlSafe(format!(
            "DROP INDEX CONCURRENTLY IF EXISTS {index}"
        )))
        .execute(&mut *admin)
        .await?;
        dropped += 1;
    }
    let columns: Vec<String> = existing_columns(admin)
        .await?
        .into_iter()
        .map(|c| c.name)
        .filter(|name| !wanted.contains(name))
        .collect();
    if !columns.is_empty() {
        let drops: Vec<String> = columns
            .iter()
            .map(|c| format!("DROP COLUMN IF EXISTS {c}"))
            .collect();
        sqlx::query(sqlx::AssertSqlSafe(format!(
            "ALTER TABLE documents {}",
            drops.join(", ")
        )))
        .execute(&mut *admin)
        .await?;
        dropped += columns.len();
    }
    Ok(dropped)
}

struct ExistingColumn {
    name: String,
    generated: bool,
    filled: bool,
    /// Its comment says it is filled.
    marked: bool,
}

async fn existing_columns(admin: &mut PgConnection) -> Result<Vec<ExistingColumn>> {
    let rows: Vec<(String, String, Option<String>)> = sqlx::query_as(
        "SELECT attname::text, attgenerated::text, col_description(attrelid, attnum) \
         FROM pg_attribute WHERE attrelid = 'documents'::regclass AND NOT attisdropped \
         AND attname ~ '^[fn]_[0-9a-f]{16}$'",
    )
    .fetch_all(&mut *admin)
    .await?;
    Ok(rows
        .into_iter()
        .map(|(name, generated, comment)| {
            let generated = generated == "s";
            let marked = comment.as_deref() == Some(FILLED);
            ExistingColumn {
                name,
                generated,
                // A stored generated column of an earlier version was always complete.
                filled: generated || marked,
                marked,
            }
        })
        .collect())
}

/// Adds the missing columns in one `ALTER TABLE` (no row is touched) and turns generated ones
/// into plain ones the trigger fills.
async fn add_columns(
    admin: &mut PgConnection,
    columns: &[GeneratedColumn],
    existing: &[ExistingColumn],
) -> Result<()> {
    let mut clauses = Vec::new();
    for column in columns {
        for (name, _) in column.assignments() {
            match existing.iter().find(|e| e.name == name) {
                Some(e) if e.generated => {
                    clauses.push(format!("ALTER COLUMN {name} DROP EXPRESSION"));
                }
                Some(_) => {}
                None => {}
            }
        }
        clauses.extend(column.add_columns());
    }
    if clauses.is_empty() {
        return Ok(());
    }
    let alter = format!("ALTER TABLE documents {}", clauses.join(", "));
    if let Err(e) = sqlx::query(sqlx::AssertSqlSafe(alter))
        .execute(&mut *admin)
        .await
    {
        // Two instances starting together: a catalog race can report a duplicate column
        // (42701) or a catalog unique violation; the column exists either way.
        let duplicate = e
            .as_database_error()
            .and_then(|d| d.code())
            .is_some_and(|code| code == "42701");
        match StoreError::from(e) {
            StoreError::Unique(_) => {}
            _ if duplicate => {}
            other => return Err(other),
        }
    }
    Ok(())
}

/// The type's trigger: every column assigned from the row being written.
async fn install_trigger(
    admin: &mut PgConnection,
    doc_type: &str,
    columns: &[GeneratedColumn],
) -> Result<()> {
    let assignments: Vec<(&str, &str)> = columns.iter().flat_map(|c| c.assignments()).collect();
    let targets: Vec<String> = assignments
        .iter()
        .map(|(name, _)| format!("NEW.{name}"))
        .collect();
    let values: Vec<&str> = assignments.iter().map(|(_, value)| *value).collect();
    let function = function_name(doc_type);
    let trigger = trigger_name(doc_type);
    // The expressions read `type`, `draft_data` and `published_data` as the list queries
    // write them: the row being written is presented under those names.
    let statements = format!(
        "CREATE OR REPLACE FUNCTION {function}() RETURNS trigger LANGUAGE plpgsql AS $fields$ \
         BEGIN \
           SELECT {values} INTO {targets} FROM (SELECT NEW.type AS type, NEW.draft_data AS draft_data, \
             NEW.published_data AS published_data) AS row_being_written; \
           RETURN NEW; \
         END $fields$; \
         CREATE OR REPLACE TRIGGER {trigger} BEFORE INSERT OR UPDATE OF draft_data, published_data \
           ON documents FOR EACH ROW WHEN (NEW.type = '{doc_type}') EXECUTE FUNCTION {function}()",
        values = values.join(", "),
        targets = targets.join(", "),
    );
    sqlx::raw_sql(sqlx::AssertSqlSafe(statements))
        .execute(&mut *admin)
        .await?;
    Ok(())
}

/// Rewrites each existing row of the type once, so its trigger fills the columns: in batches,
/// acting for one organization at a time (the policies admit no other way to write them).
async fn backfill(pool: &PgPool, doc_type: &str) -> Result<()> {
    let organizations: Vec<String> = sqlx::query_scalar("SELECT id FROM organizations ORDER BY id")
        .fetch_all(pool)
        .await?;
    let update = "UPDATE documents SET draft_data = draft_data WHERE id IN ( \
         SELECT id FROM documents WHERE organization_id = $1 AND type = $2 AND id COLLATE \"C\" > $3 \
         ORDER BY id COLLATE \"C\" LIMIT $4) RETURNING id";
    let mut filled = 0usize;
    for organization in organizations {
        let mut after = String::new();
        loop {
            let mut tx = pool.begin().await?;
            sqlx::query("SELECT set_config('cms.organization_id', $1, true)")
                .bind(&organization)
                .execute(&mut *tx)
                .await?;
            let ids: Vec<String> = sqlx::query_scalar(update)
                .bind(&organization)
                .bind(doc_type)
                .bind(&after)
                .bind(BATCH)
                .fetch_all(&mut *tx)
                .await?;
            tx.commit().await?;
            filled += ids.len();
            // Byte order, as the statement's "C" collation.
            match ids.into_iter().max() {
                Some(last) => after = last,
                None => break,
            }
        }
    }
    if filled > 0 {
        tracing::info!(doc_type, documents = filled, "field columns filled");
    }
    Ok(())
}

/// Builds the column's partial index unless a valid one exists; an invalid one (a build that
/// was interrupted) is dropped and built again. Whether it built one.
async fn build_index(admin: &mut PgConnection, column: &GeneratedColumn) -> Result<bool> {
    let name = column.index_name();
    let valid: Option<bool> = sqlx::query_scalar(
        "SELECT i.indisvalid FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid \
         WHERE c.relname = $1 AND c.relnamespace = current_schema()::regnamespace",
    )
    .bind(&name)
    .fetch_optional(&mut *admin)
    .await?;
    match valid {
        Some(true) => return Ok(false),
        Some(false) => {
            sqlx::query(sqlx::AssertSqlSafe(format!(
                "DROP INDEX CONCURRENTLY IF EXISTS {name}"
            )))
            .execute(&mut *admin)
            .await?;
        }
        None => {}
    }
    if let Err(e) = sqlx::query(sqlx::AssertSqlSafe(column.index()))
        .execute(&mut *admin)
        .await
    {
        match StoreError::from(e) {
            // Two instances building the same index: the loser sees a catalog unique violation.
            StoreError::Unique(_) => {}
            other => return Err(other),
        }
    }
    tracing::info!(index = %name, doc_type = %column.doc_type, "field index built");
    Ok(true)
}
