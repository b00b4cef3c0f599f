//! The statements of a SQLite write unit that run on the calling thread (see `writer.rs`).
//!
//! These are the statements of the document writes (create, update, publish, unpublish): the
//! document by id, the draft and published copies, versions, events, their audit entries,
//! references and the reference targets a publish checks. Each runs the same SQL text as the sqlx path (the
//! constants of its repository module), bound the way sqlx binds it (`$N` is the N-th value,
//! JSON as its text, booleans as integers), through rusqlite on the writer's handle. Every other
//! statement of a write unit goes through sqlx, which stays correct and only costs its
//! hand-off.

use rusqlite::types::ToSqlOutput;
use rusqlite::{Connection, Row, Statement, ToSql};
use serde::Serialize;

use crate::Result;
use crate::audit::{self, AuditRecord};
use crate::documents::{self, DocumentRecord};
use crate::events::{self, EventRecord};
use crate::references::{self, ReferenceRecord, TargetKind};
use crate::versions::{self, VersionRecord};

/// The writer's connection, holding its handle (borrowed from `writer::Held`).
pub(crate) struct Direct<'a> {
    conn: &'a mut Connection,
}

impl<'a> Direct<'a> {
    pub(super) fn new(conn: &'a mut Connection) -> Self {
        Direct { conn }
    }

    /// Runs a statement that returns no rows; how many rows it changed.
    fn execute(&self, sql: &str, values: &[&dyn ToSql]) -> Result<usize> {
        let mut statement = self.conn.prepare_cached(sql)?;
        bind(&mut statement, values)?;
        Ok(statement.raw_execute()?)
    }

    /// The rows of a query, each through `read`.
    fn query<T>(
        &self,
        sql: &str,
        values: &[&dyn ToSql],
        read: impl Fn(&Row<'_>) -> rusqlite::Result<T>,
    ) -> Result<Vec<T>> {
        let mut statement = self.conn.prepare_cached(sql)?;
        bind(&mut statement, values)?;
        let mut rows = statement.raw_query();
        let mut out = Vec::new();
        // Stepped to the end, also for a write with `RETURNING`.
        while let Some(row) = rows.next()? {
            out.push(read(row)?);
        }
        Ok(out)
    }

    fn query_one<T>(
        &self,
        sql: &str,
        values: &[&dyn ToSql],
        read: impl Fn(&Row<'_>) -> rusqlite::Result<T>,
    ) -> Result<Option<T>> {
        Ok(self.query(sql, values, read)?.into_iter().next())
    }

    pub(crate) fn document(
        &self,
        organizations: &[String],
        id: &str,
    ) -> Result<Option<DocumentRecord>> {
        let mut values: Vec<&dyn ToSql> = vec![&id];
        values.extend(organizations.iter().map(|o| o as &dyn ToSql));
        self.query_one(
            &documents::document_sql(organizations.len()),
            &values,
            super::point_reads::document,
        )
    }

    pub(crate) fn singleton(
        &self,
        organization: &str,
        doc_type: &str,
    ) -> Result<Option<DocumentRecord>> {
        self.query_one(
            documents::SINGLETON_SQL,
            &[&organization, &doc_type, &true],
            super::point_reads::document,
        )
    }

    pub(crate) fn insert_document(&self, d: &DocumentRecord) -> Result<()> {
        self.execute(
            documents::INSERT_DOCUMENT_SQL,
            &[
                &d.id,
                &d.organization_id,
                &d.doc_type,
                &d.singleton,
                &JsonText(&d.draft_data.0),
                &d.published_data.as_ref().map(|p| JsonText(&p.0)),
                &d.published_hash,
                &d.revision,
                &d.created_by,
                &d.updated_by,
                &d.created_at,
                &d.updated_at,
                &d.published_at,
            ],
        )?;
        Ok(())
    }

    /// The rows of a new document: one cached statement per row, in-process, where sqlx
    /// batched them into one round trip.
    pub(crate) fn insert_new_document(
        &self,
        d: &DocumentRecord,
        versions: &[VersionRecord],
        events: &[EventRecord],
    ) -> Result<()> {
        self.insert_document(d)?;
        for v in versions {
            self.execute(
                versions::INSERT_VERSION_SQL,
                &[
                    &v.id,
                    &v.document_id,
                    &v.organization_id,
                    &v.version_number,
                    &v.event_type,
                    &JsonText(&v.data.0),
                    &v.created_by,
                    &v.created_at,
                ],
            )?;
        }
        for e in events {
            self.append_event(e)?;
        }
        Ok(())
    }

    pub(crate) fn save_draft(
        &self,
        id: &str,
        draft: &serde_json::Value,
        expected_revision: i64,
        by: Option<&str>,
        now: i64,
    ) -> Result<bool> {
        let changed = self.execute(
            documents::SAVE_DRAFT_SQL,
            &[&id, &JsonText(draft), &by, &now, &expected_revision],
        )?;
        Ok(changed == 1)
    }

    pub(crate) fn set_published(
        &self,
        id: &str,
        data: &serde_json::Value,
        hash: &str,
        by: Option<&str>,
        now: i64,
    ) -> Result<()> {
        self.execute(
            documents::SET_PUBLISHED_SQL,
            &[&id, &JsonText(data), &hash, &by, &now],
        )?;
        Ok(())
    }

    pub(crate) fn clear_published(&self, id: &str, by: Option<&str>, now: i64) -> Result<()> {
        self.execute(documents::CLEAR_PUBLISHED_SQL, &[&id, &by, &now])?;
        Ok(())
    }

    pub(crate) fn existing_targets(
        &self,
        organizations: &[String],
        kind: TargetKind,
        ids: &[String],
    ) -> Result<Vec<String>> {
        let mut found = Vec::new();
        if organizations.is_empty() {
            return Ok(found);
        }
        for chunk in ids.chunks(references::ID_CHUNK) {
            let sql = references::existing_targets_sql(kind, organizations.len(), chunk.len());
            let values: Vec<&dyn ToSql> = organizations
                .iter()
                .chain(chunk)
                .map(|v| v as &dyn ToSql)
                .collect();
            found.extend(self.query(&sql, &values, |row| row.get(0))?);
        }
        Ok(found)
    }

    pub(crate) fn add_references(
        &self,
        from_id: &str,
        organization_id: &str,
        copy: &str,
        rows: &[ReferenceRecord],
    ) -> Result<()> {
        for r in rows {
            self.execute(
                references::INSERT_REFERENCE_SQL,
                &[
                    &from_id,
                    &organization_id,
                    &copy,
                    &r.path,
                    &r.to_id,
                    &r.target,
                ],
            )?;
        }
        Ok(())
    }

    pub(crate) fn replace_references(
        &self,
        from_id: &str,
        organization_id: &str,
        copy: &str,
        rows: &[ReferenceRecord],
    ) -> Result<()> {
        self.execute(references::DELETE_REFERENCES_SQL, &[&from_id, &copy])?;
        self.add_references(from_id, organization_id, copy, rows)
    }

    pub(crate) fn append_version(&self, v: &VersionRecord) -> Result<i64> {
        let number = self.query_one(
            versions::APPEND_VERSION_SQL,
            &[
                &v.id,
                &v.document_id,
                &v.organization_id,
                &v.event_type,
                &JsonText(&v.data.0),
                &v.created_by,
                &v.created_at,
            ],
            |row| row.get(0),
        )?;
        // `INSERT ... SELECT` of an aggregate always yields its one row.
        number.ok_or_else(|| rusqlite::Error::QueryReturnedNoRows.into())
    }

    pub(crate) fn prune_versions(&self, document_id: &str, keep: i64) -> Result<u64> {
        let removed = self.execute(versions::PRUNE_VERSIONS_SQL, &[&document_id, &keep])?;
        Ok(removed as u64)
    }

    pub(crate) fn append_audit(&self, e: &AuditRecord) -> Result<()> {
        self.execute(
            audit::APPEND_AUDIT_SQL,
            &[
                &e.id,
                &e.organization_id,
                &e.action,
                &e.actor_type,
                &e.actor_id,
                &e.target_type,
                &e.target_id,
                &e.ip_address,
                &e.summary,
                &e.created_at,
            ],
        )?;
        Ok(())
    }

    pub(crate) fn append_event(&self, e: &EventRecord) -> Result<()> {
        self.execute(
            events::APPEND_EVENT_SQL,
            &[
                &e.id,
                &e.organization_id,
                &e.event_type,
                &JsonText(&e.payload.0),
                &e.created_at,
            ],
        )?;
        Ok(())
    }
}

/// Binds `values` to `statement` as sqlx does: SQLite names a `$N` placeholder `$N` and numbers
/// placeholders in order of first appearance, so `$N` is looked up by name, not by position
/// (`SET published_at = $5, updated_by = $4, updated_at = $5` binds the 5th value twice).
fn bind(statement: &mut Statement<'_>, values: &[&dyn ToSql]) -> rusqlite::Result<()> {
    for index in 1..=statement.parameter_count() {
        let number = statement
            .parameter_name(index)
            .and_then(|name| name.strip_prefix('$'))
            .and_then(|n| n.parse::<usize>().ok())
            .unwrap_or(index);
        let value = number
            .checked_sub(1)
            .and_then(|i| values.get(i))
            .ok_or(rusqlite::Error::InvalidParameterCount(number, values.len()))?;
        statement.raw_bind_parameter(index, value)?;
    }
    Ok(())
}

/// A JSON value bound as its text, as sqlx's `Json` binds it on SQLite.
struct JsonText<'a, T>(&'a T);

impl<T: Serialize> ToSql for JsonText<'_, T> {
    fn to_sql(&self) -> rusqlite::Result<ToSqlOutput<'_>> {
        serde_json::to_string(self.0)
            .map(ToSqlOutput::from)
            .map_err(|e| rusqlite::Error::ToSqlConversionFailure(Box::new(e)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbered_placeholders_bind_by_number_not_by_position() {
        let mut conn = Connection::open_in_memory().unwrap();
        let direct = Direct::new(&mut conn);
        let row = direct
            .query_one(
                "SELECT $2, $1, $2 || $3",
                &[&"one", &"two", &"three"],
                |row| {
                    Ok((
                        row.get::<_, String>(0)?,
                        row.get::<_, String>(1)?,
                        row.get::<_, String>(2)?,
                    ))
                },
            )
            .unwrap();
        assert_eq!(row, Some(("two".into(), "one".into(), "twothree".into())));
    }

    #[test]
    fn a_missing_value_is_an_error_not_a_null() {
        let mut conn = Connection::open_in_memory().unwrap();
        let direct = Direct::new(&mut conn);
        assert!(
            direct
                .query_one("SELECT $3", &[&1], |row| row.get::<_, i64>(0))
                .is_err()
        );
    }

    #[test]
    fn json_is_bound_as_its_text() {
        let mut conn = Connection::open_in_memory().unwrap();
        let direct = Direct::new(&mut conn);
        let value = serde_json::json!({"a": [1, true, null]});
        let text = direct
            .query_one("SELECT $1", &[&JsonText(&value)], |row| {
                row.get::<_, String>(0)
            })
            .unwrap();
        assert_eq!(text.as_deref(), Some(r#"{"a":[1,true,null]}"#));
    }
}
