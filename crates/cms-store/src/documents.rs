//! Documents: one row per document, with its draft and published copies.

use async_trait::async_trait;
use serde_json::Value;
use sqlx::types::Json;

use cms_core::filter::{Filter, SortKey};

use crate::Result;
use crate::filter_sql::DataColumn;

/// What a list or query asks for. The filter and sort are the parsed AST: the SQL for them is
/// written here, in the store, with every value bound.
#[derive(Debug, Clone, Copy)]
pub struct ListSpec<'a> {
    pub organizations: &'a [String],
    pub doc_type: &'a str,
    /// The copy `filter` and `sort` evaluate.
    pub column: DataColumn,
    /// Which documents by their published copy; `None` for all.
    pub published: Option<Publication>,
    pub filter: &'a Filter,
    pub sort: &'a [SortKey],
    pub limit: i64,
    pub offset: i64,
}

/// A list's filter on the published copy (the list endpoint's `status`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Publication {
    /// Documents with a published copy.
    Published,
    /// Documents never published (or unpublished): no published copy.
    DraftOnly,
    /// Documents with unpublished changes: what Publish would change. No published copy, or
    /// a draft that differs from it (JSON values, key order aside: Postgres compares `jsonb`,
    /// SQLite the text serde_json writes with sorted keys).
    Changed,
}

#[derive(Debug, Clone, sqlx::FromRow)]
pub struct DocumentRecord {
    pub id: String,
    pub organization_id: String,
    #[sqlx(rename = "type")]
    pub doc_type: String,
    pub singleton: bool,
    pub draft_data: Json<Value>,
    pub published_data: Option<Json<Value>>,
    pub published_hash: Option<String>,
    /// Starts at 1, grows by one on every draft write.
    pub revision: i64,
    pub created_by: Option<String>,
    pub updated_by: Option<String>,
    pub created_at: i64,
    pub updated_at: i64,
    pub published_at: Option<i64>,
}

#[async_trait]
pub trait Documents {
    /// Fails with [`crate::StoreError::Unique`] for a second row of a singleton type.
    async fn insert_document(&mut self, document: &DocumentRecord) -> Result<()>;
    /// The rows of a new document in one round trip: the document, its first versions (with
    /// their numbers) and its events (`document.created`, then `document.published` when it is
    /// born published; the outbox rows follow the events). Fails with
    /// [`crate::StoreError::Unique`] like [`Documents::insert_document`].
    async fn insert_new_document(
        &mut self,
        document: &DocumentRecord,
        versions: &[crate::versions::VersionRecord],
        events: &[crate::events::EventRecord],
    ) -> Result<()>;
    /// The rows of many new documents, a few multi-row statements per chunk of documents
    /// rather than round trips per document: each document, its first versions, its events
    /// (with their outbox rows) and its references. The same rows as
    /// [`Documents::insert_new_document`] plus
    /// [`crate::references::References::add_references`] for each; for bulk imports. Fails with
    /// [`crate::StoreError::Unique`] like [`Documents::insert_new_document`].
    async fn insert_new_documents(&mut self, rows: &[NewDocumentRows]) -> Result<()>;
    /// The document, when it belongs to one of `organizations`.
    async fn document(
        &mut self,
        organizations: &[String],
        id: &str,
    ) -> Result<Option<DocumentRecord>>;
    /// The canonical row of a singleton type in an organization.
    async fn singleton(
        &mut self,
        organization: &str,
        doc_type: &str,
    ) -> Result<Option<DocumentRecord>>;
    /// The documents with these ids that belong to one of `organizations`, in no given order;
    /// one statement per [`crate::references::ID_CHUNK`] ids.
    async fn documents_by_ids(
        &mut self,
        organizations: &[String],
        ids: &[String],
    ) -> Result<Vec<DocumentRecord>>;
    /// Replaces the draft and moves the revision from `expected_revision` to the next one.
    /// `false` when the stored revision is not `expected_revision` any more: nothing changed.
    async fn save_draft(
        &mut self,
        id: &str,
        draft: &Value,
        expected_revision: i64,
        by: Option<&str>,
        now: i64,
    ) -> Result<bool>;
    /// Rewrites a document's stored copies in place (`cms migrate-content`): the draft, and the
    /// published copy with its hash when given (its publish time stays). The revision moves
    /// from `expected_revision` to the next; `false` when it was not `expected_revision`.
    async fn rewrite_document(
        &mut self,
        id: &str,
        draft: &Value,
        published: Option<(&Value, &str)>,
        expected_revision: i64,
        now: i64,
    ) -> Result<bool>;
    /// Sets the published copy. The revision does not change.
    async fn set_published(
        &mut self,
        id: &str,
        data: &Value,
        hash: &str,
        by: Option<&str>,
        now: i64,
    ) -> Result<()>;
    /// Drops the published copy. The revision does not change.
    async fn clear_published(&mut self, id: &str, by: Option<&str>, now: i64) -> Result<()>;
    /// `true` when the document existed.
    async fn delete_document(&mut self, id: &str) -> Result<bool>;
    /// One page of documents and the total number matching.
    async fn list_documents(&mut self, spec: &ListSpec<'_>) -> Result<(Vec<DocumentRecord>, i64)>;
    /// One page of documents without the total: [`Documents::list_documents`] minus its
    /// count, for a caller that reads many pages of one list and counts for itself.
    async fn list_documents_page(&mut self, spec: &ListSpec<'_>) -> Result<Vec<DocumentRecord>>;
    /// The organization and type of the document with this id, in whichever organization owns
    /// it: the one lookup that crosses organizations. It works from any unit of work, also one
    /// that acts for no organization or another one (on PostgreSQL through the function of
    /// migration 0008, past row-level security), and reveals nothing else of the document.
    async fn locate_document(&mut self, id: &str) -> Result<Option<DocumentLocation>>;
}

/// Every row of one new document, for [`Documents::insert_new_documents`].
#[derive(Debug, Clone)]
pub struct NewDocumentRows {
    pub document: DocumentRecord,
    /// Its first versions, with their numbers.
    pub versions: Vec<crate::versions::VersionRecord>,
    /// Its events, in order: `document.created`, then `document.published` when it is born
    /// published.
    pub events: Vec<crate::events::EventRecord>,
    /// Its references, each with the copy (`draft` or `published`) it was found in.
    pub references: Vec<(String, crate::references::ReferenceRecord)>,
}

/// Documents per statement of [`Documents::insert_new_documents`]: 13 binds a row (versions 8,
/// references 6, events 5, two per document at most) keeps every statement far below both engines' bind limits.
pub(crate) const INSERT_CHUNK: usize = 200;

/// The columns of a [`DocumentRecord`], named rather than `*`: the field columns PostgreSQL
/// adds to `documents` while the service runs (crate::field_indexes) must not change the rows
/// of a statement prepared before (PostgreSQL would refuse it: "cached plan must not change
/// result type").
pub(crate) const DOCUMENT_COLUMNS: &str = document_columns!();

/// The text of [`DOCUMENT_COLUMNS`], for statements that must be `&'static str` (`concat!`).
macro_rules! document_columns {
    () => {
        "id, organization_id, type, singleton, draft_data, published_data, published_hash, \
         revision, created_by, updated_by, created_at, updated_at, published_at"
    };
}
use document_columns;

/// [`DOCUMENT_COLUMNS`] qualified by a table name or alias, for statements that join.
pub(crate) fn document_columns_of(table: &str) -> String {
    DOCUMENT_COLUMNS
        .split(',')
        .map(|column| format!("{table}.{}", column.trim()))
        .collect::<Vec<_>>()
        .join(", ")
}

/// [`Documents::insert_document`].
pub(crate) const INSERT_DOCUMENT_SQL: &str = "INSERT INTO documents (id, organization_id, type, singleton, \
     draft_data, published_data, published_hash, revision, created_by, updated_by, created_at, updated_at, \
     published_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)";

/// [`Documents::singleton`]: organization, type, `true`.
pub(crate) const SINGLETON_SQL: &str = concat!(
    "SELECT ",
    document_columns!(),
    " FROM documents WHERE organization_id = $1 AND type = $2 AND singleton = $3"
);

/// [`Documents::save_draft`]: id, draft, by, now, expected revision.
pub(crate) const SAVE_DRAFT_SQL: &str = "UPDATE documents SET draft_data = $2, revision = revision + 1, \
     updated_by = $3, updated_at = $4 WHERE id = $1 AND revision = $5";

/// [`Documents::set_published`]: id, data, hash, by, now.
pub(crate) const SET_PUBLISHED_SQL: &str = "UPDATE documents SET published_data = $2, published_hash = $3, \
     published_at = $5, updated_by = $4, updated_at = $5 WHERE id = $1";

/// [`Documents::clear_published`]: id, by, now.
pub(crate) const CLEAR_PUBLISHED_SQL: &str = "UPDATE documents SET published_data = NULL, \
     published_hash = NULL, published_at = NULL, updated_by = $2, updated_at = $3 WHERE id = $1";

/// Where a document lives: what [`Documents::locate_document`] reveals, and nothing more.
#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct DocumentLocation {
    pub organization_id: String,
    #[sqlx(rename = "type")]
    pub doc_type: String,
}

/// The `WHERE` of a list (without the word) and its binds, placeholders from `$1`.
pub(crate) fn list_condition(
    spec: &ListSpec<'_>,
    dialect: crate::Dialect,
    generated: Option<&crate::filter_sql::GeneratedColumns>,
) -> (String, Vec<crate::filter_sql::Bind>) {
    use crate::filter_sql::{Bind, compile_filter_with};
    let n = spec.organizations.len();
    let mut binds: Vec<Bind> = spec
        .organizations
        .iter()
        .map(|o| Bind::Text(o.clone()))
        .collect();
    // The type as a literal, so both planners can use the type's partial field indexes
    // (crate::field_indexes); a name that is not an identifier is bound instead.
    let doc_type = if crate::field_indexes::is_type_name(spec.doc_type) {
        format!("'{}'", spec.doc_type)
    } else {
        binds.push(Bind::Text(spec.doc_type.to_string()));
        format!("${}", n + 1)
    };
    let mut sql = format!(
        "organization_id IN ({}) AND type = {doc_type}",
        placeholders(1, n)
    );
    match spec.published {
        Some(Publication::Published) => sql.push_str(" AND published_data IS NOT NULL"),
        Some(Publication::DraftOnly) => sql.push_str(" AND published_data IS NULL"),
        Some(Publication::Changed) => {
            sql.push_str(" AND (published_data IS NULL OR draft_data <> published_data)")
        }
        None => {}
    }
    let compiled = compile_filter_with(
        spec.filter,
        dialect,
        spec.column,
        binds.len() + 1,
        generated_for(spec, generated),
    );
    sql.push_str(&format!(" AND ({})", compiled.sql));
    binds.extend(compiled.binds);
    (sql, binds)
}

/// The generated columns a list of `spec`'s type may use.
pub(crate) fn generated_for<'a>(
    spec: &ListSpec<'a>,
    columns: Option<&'a crate::filter_sql::GeneratedColumns>,
) -> Option<crate::filter_sql::Generated<'a>> {
    columns.map(|columns| crate::filter_sql::Generated {
        doc_type: spec.doc_type,
        columns,
    })
}

/// `$first, $first+1, ...` for a list of `n` binds: placeholders only, never values.
/// A document by id (`$1`) within `organizations` organizations (`$2`...).
pub(crate) fn document_sql(organizations: usize) -> String {
    format!(
        "SELECT {DOCUMENT_COLUMNS} FROM documents WHERE id = $1 AND organization_id IN ({})",
        placeholders(2, organizations)
    )
}

pub(crate) fn placeholders(first: usize, n: usize) -> String {
    (first..first + n)
        .map(|i| format!("${i}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Appends `INSERT INTO documents (...) VALUES (...), ...` of `$rows` (document records) to
/// the query builder `$sql`: the one column list of new document rows, for the single and the
/// batched insert.
macro_rules! push_documents {
    ($sql:ident, $rows:expr) => {
        $sql.push(
            "INSERT INTO documents (id, organization_id, type, singleton, draft_data, published_data, \
             published_hash, revision, created_by, updated_by, created_at, updated_at, published_at) ",
        );
        $sql.push_values($rows, |mut row, d| {
            row.push_bind(&d.id)
                .push_bind(&d.organization_id)
                .push_bind(&d.doc_type)
                .push_bind(d.singleton)
                .push_bind(&d.draft_data)
                .push_bind(&d.published_data)
                .push_bind(&d.published_hash)
                .push_bind(d.revision)
                .push_bind(&d.created_by)
                .push_bind(&d.updated_by)
                .push_bind(d.created_at)
                .push_bind(d.updated_at)
                .push_bind(d.published_at);
        });
    };
}
pub(crate) use push_documents;

/// [`push_documents`] for version records.
macro_rules! push_versions {
    ($sql:ident, $rows:expr) => {
        $sql.push(
            "INSERT INTO document_versions (id, document_id, organization_id, version_number, \
             event_type, data, created_by, created_at) ",
        );
        $sql.push_values($rows, |mut row, v| {
            row.push_bind(&v.id)
                .push_bind(&v.document_id)
                .push_bind(&v.organization_id)
                .push_bind(v.version_number)
                .push_bind(&v.event_type)
                .push_bind(&v.data)
                .push_bind(&v.created_by)
                .push_bind(v.created_at);
        });
    };
}
pub(crate) use push_versions;

/// [`push_documents`] for event records. The unit that runs it calls
/// `UnitOfWork::appended_events` after, so its commit wakes the event feed's readers.
macro_rules! push_events {
    ($sql:ident, $rows:expr) => {
        $sql.push("INSERT INTO events (id, organization_id, type, payload, created_at) ");
        $sql.push_values($rows, |mut row, e| {
            row.push_bind(&e.id)
                .push_bind(&e.organization_id)
                .push_bind(&e.event_type)
                .push_bind(&e.payload)
                .push_bind(e.created_at);
        });
    };
}
pub(crate) use push_events;

macro_rules! impl_documents {
    ($tx:ty) => {
        #[async_trait::async_trait]
        impl $crate::documents::Documents for $tx {
            async fn insert_document(&mut self, d: &$crate::documents::DocumentRecord) -> $crate::Result<()> {
                if let Some(direct) = self.direct().await? {
                    return direct.insert_document(d);
                }
                sqlx::query($crate::documents::INSERT_DOCUMENT_SQL)
                .bind(&d.id)
                .bind(&d.organization_id)
                .bind(&d.doc_type)
                .bind(d.singleton)
                .bind(&d.draft_data)
                .bind(&d.published_data)
                .bind(&d.published_hash)
                .bind(d.revision)
                .bind(&d.created_by)
                .bind(&d.updated_by)
                .bind(d.created_at)
                .bind(d.updated_at)
                .bind(d.published_at)
                .execute(self.conn().await?)
                .await?;
                Ok(())
            }

            async fn insert_new_document(
                &mut self,
                d: &$crate::documents::DocumentRecord,
                versions: &[$crate::versions::VersionRecord],
                events: &[$crate::events::EventRecord],
            ) -> $crate::Result<()> {
                if let Some(direct) = self.direct().await? {
                    return direct.insert_new_document(d, versions, events);
                }
                // One statement text: on SQLite several statements run in one call (binds are
                // numbered across them); on PostgreSQL the earlier inserts are data-modifying
                // CTEs of the last one.
                let (first, between) = match <$tx>::DIALECT {
                    $crate::Dialect::Sqlite => ("", "; "),
                    $crate::Dialect::Postgres => ("WITH d AS (", "), v AS ("),
                };
                let mut sql = sqlx::QueryBuilder::new(first);
                $crate::documents::push_documents!(sql, std::iter::once(d));
                if !versions.is_empty() {
                    sql.push(between);
                    $crate::documents::push_versions!(sql, versions);
                }
                // Then the last statement (on PostgreSQL the main one of the chain): the events
                // in one multi-row insert, or on PostgreSQL a no-op read when there are none.
                let last = match <$tx>::DIALECT {
                    $crate::Dialect::Sqlite => "; ",
                    $crate::Dialect::Postgres => ") ",
                };
                if !events.is_empty() {
                    sql.push(last);
                    $crate::documents::push_events!(sql, events);
                } else if <$tx>::DIALECT == $crate::Dialect::Postgres {
                    sql.push(last);
                    sql.push("SELECT 1");
                }
                sql.build().execute(self.conn().await?).await?;
                if !events.is_empty() {
                    self.appended_events();
                }
                Ok(())
            }

            async fn insert_new_documents(
                &mut self,
                rows: &[$crate::documents::NewDocumentRows],
            ) -> $crate::Result<()> {
                for chunk in rows.chunks($crate::documents::INSERT_CHUNK) {
                    let mut insert = sqlx::QueryBuilder::new("");
                    $crate::documents::push_documents!(insert, chunk.iter().map(|r| &r.document));
                    insert.build().execute(self.conn().await?).await?;
                    let versions: Vec<_> = chunk.iter().flat_map(|r| &r.versions).collect();
                    for versions in versions.chunks($crate::documents::INSERT_CHUNK * 2) {
                        let mut insert = sqlx::QueryBuilder::new("");
                        $crate::documents::push_versions!(insert, versions);
                        insert.build().execute(self.conn().await?).await?;
                    }
                    let events: Vec<_> = chunk.iter().flat_map(|r| &r.events).collect();
                    if !events.is_empty() {
                        let mut insert = sqlx::QueryBuilder::new("");
                        $crate::documents::push_events!(insert, events);
                        insert.build().execute(self.conn().await?).await?;
                        self.appended_events();
                    }
                    let references: Vec<_> = chunk
                        .iter()
                        .flat_map(|r| r.references.iter().map(move |(copy, reference)| (&r.document, copy, reference)))
                        .collect();
                    for references in references.chunks(1000) {
                        let mut insert = sqlx::QueryBuilder::new(
                            "INSERT INTO document_references (from_id, organization_id, copy, path, to_id, target) ",
                        );
                        insert.push_values(references, |mut row, (d, copy, r)| {
                            row.push_bind(&d.id)
                                .push_bind(&d.organization_id)
                                .push_bind(copy.as_str())
                                .push_bind(&r.path)
                                .push_bind(&r.to_id)
                                .push_bind(&r.target);
                        });
                        insert.build().execute(self.conn().await?).await?;
                    }
                }
                Ok(())
            }

            async fn document(
                &mut self,
                organizations: &[String],
                id: &str,
            ) -> $crate::Result<Option<$crate::documents::DocumentRecord>> {
                if organizations.is_empty() {
                    return Ok(None);
                }
                if let Some(points) = self.point_reads() {
                    return points.document(organizations, id);
                }
                if let Some(direct) = self.direct().await? {
                    return direct.document(organizations, id);
                }
                let sql = $crate::documents::document_sql(organizations.len());
                let mut query = sqlx::query_as(sqlx::AssertSqlSafe(sql)).bind(id);
                for org in organizations {
                    query = query.bind(org);
                }
                Ok(query.fetch_optional(self.conn().await?).await?)
            }

            async fn singleton(
                &mut self,
                organization: &str,
                doc_type: &str,
            ) -> $crate::Result<Option<$crate::documents::DocumentRecord>> {
                if let Some(direct) = self.direct().await? {
                    return direct.singleton(organization, doc_type);
                }
                Ok(sqlx::query_as($crate::documents::SINGLETON_SQL)
                .bind(organization)
                .bind(doc_type)
                .bind(true)
                .fetch_optional(self.conn().await?)
                .await?)
            }

            async fn documents_by_ids(
                &mut self,
                organizations: &[String],
                ids: &[String],
            ) -> $crate::Result<Vec<$crate::documents::DocumentRecord>> {
                let mut found = Vec::new();
                if organizations.is_empty() {
                    return Ok(found);
                }
                // Chunked under both engines' bind limits (see `ID_CHUNK`).
                for chunk in ids.chunks($crate::references::ID_CHUNK) {
                    let sql = format!(
                        "SELECT {} FROM documents WHERE organization_id IN ({}) AND id IN ({})",
                        $crate::documents::DOCUMENT_COLUMNS,
                        $crate::documents::placeholders(1, organizations.len()),
                        $crate::documents::placeholders(1 + organizations.len(), chunk.len())
                    );
                    let mut query = sqlx::query_as(sqlx::AssertSqlSafe(sql));
                    for value in organizations.iter().chain(chunk) {
                        query = query.bind(value);
                    }
                    found.extend(query.fetch_all(self.conn().await?).await?);
                }
                Ok(found)
            }

            async fn save_draft(
                &mut self,
                id: &str,
                draft: &serde_json::Value,
                expected_revision: i64,
                by: Option<&str>,
                now: i64,
            ) -> $crate::Result<bool> {
                if let Some(direct) = self.direct().await? {
                    return direct.save_draft(id, draft, expected_revision, by, now);
                }
                let done = sqlx::query($crate::documents::SAVE_DRAFT_SQL)
                .bind(id)
                .bind(sqlx::types::Json(draft))
                .bind(by)
                .bind(now)
                .bind(expected_revision)
                .execute(self.conn().await?)
                .await?;
                Ok(done.rows_affected() == 1)
            }

            async fn rewrite_document(
                &mut self,
                id: &str,
                draft: &serde_json::Value,
                published: Option<(&serde_json::Value, &str)>,
                expected_revision: i64,
                now: i64,
            ) -> $crate::Result<bool> {
                let done = sqlx::query(
                    "UPDATE documents SET draft_data = $2, revision = revision + 1, updated_at = $3, \
                     published_data = CASE WHEN $4 THEN $5 ELSE published_data END, \
                     published_hash = CASE WHEN $4 THEN $6 ELSE published_hash END \
                     WHERE id = $1 AND revision = $7",
                )
                .bind(id)
                .bind(sqlx::types::Json(draft))
                .bind(now)
                .bind(published.is_some())
                .bind(published.map(|(data, _)| sqlx::types::Json(data)))
                .bind(published.map(|(_, hash)| hash))
                .bind(expected_revision)
                .execute(self.conn().await?)
                .await?;
                Ok(done.rows_affected() == 1)
            }

            async fn set_published(
                &mut self,
                id: &str,
                data: &serde_json::Value,
                hash: &str,
                by: Option<&str>,
                now: i64,
            ) -> $crate::Result<()> {
                if let Some(direct) = self.direct().await? {
                    return direct.set_published(id, data, hash, by, now);
                }
                sqlx::query($crate::documents::SET_PUBLISHED_SQL)
                .bind(id)
                .bind(sqlx::types::Json(data))
                .bind(hash)
                .bind(by)
                .bind(now)
                .execute(self.conn().await?)
                .await?;
                Ok(())
            }

            async fn clear_published(&mut self, id: &str, by: Option<&str>, now: i64) -> $crate::Result<()> {
                if let Some(direct) = self.direct().await? {
                    return direct.clear_published(id, by, now);
                }
                sqlx::query($crate::documents::CLEAR_PUBLISHED_SQL)
                .bind(id)
                .bind(by)
                .bind(now)
                .execute(self.conn().await?)
                .await?;
                Ok(())
            }

            async fn list_documents(
                &mut self,
                spec: &$crate::documents::ListSpec<'_>,
            ) -> $crate::Result<(Vec<$crate::documents::DocumentRecord>, i64)> {
                if spec.organizations.is_empty() {
                    return Ok((Vec::new(), 0));
                }
                let (condition, binds) =
                    $crate::documents::list_condition(spec, <$tx>::DIALECT, self.generated_columns());
                let count_sql = format!("SELECT COUNT(*) FROM documents WHERE {condition}");
                let total: i64 = sqlx::query_scalar_with(sqlx::AssertSqlSafe(count_sql), <$tx>::arguments(binds)?)
                    .fetch_one(self.conn().await?)
                    .await?;
                if total == 0 {
                    return Ok((Vec::new(), 0));
                }
                let rows = $crate::documents::Documents::list_documents_page(self, spec).await?;
                Ok((rows, total))
            }

            async fn list_documents_page(
                &mut self,
                spec: &$crate::documents::ListSpec<'_>,
            ) -> $crate::Result<Vec<$crate::documents::DocumentRecord>> {
                if spec.organizations.is_empty() {
                    return Ok(Vec::new());
                }
                let (condition, mut binds) =
                    $crate::documents::list_condition(spec, <$tx>::DIALECT, self.generated_columns());
                let order = $crate::filter_sql::compile_sort_with(
                    spec.sort,
                    <$tx>::DIALECT,
                    spec.column,
                    spec.filter,
                    $crate::documents::generated_for(spec, self.generated_columns()),
                );
                let page_sql = format!(
                    "SELECT {} FROM documents WHERE {condition} ORDER BY {order} LIMIT ${} OFFSET ${}",
                    $crate::documents::DOCUMENT_COLUMNS,
                    binds.len() + 1,
                    binds.len() + 2
                );
                binds.push($crate::filter_sql::Bind::Int(spec.limit));
                binds.push($crate::filter_sql::Bind::Int(spec.offset));
                Ok(sqlx::query_as_with(sqlx::AssertSqlSafe(page_sql), <$tx>::arguments(binds)?)
                    .fetch_all(self.conn().await?)
                    .await?)
            }

            async fn locate_document(
                &mut self,
                id: &str,
            ) -> $crate::Result<Option<$crate::documents::DocumentLocation>> {
                Ok(sqlx::query_as(<$tx>::LOCATE_DOCUMENT)
                    .bind(id)
                    .fetch_optional(self.conn().await?)
                    .await?)
            }

            async fn delete_document(&mut self, id: &str) -> $crate::Result<bool> {
                let done = sqlx::query("DELETE FROM documents WHERE id = $1").bind(id).execute(self.conn().await?).await?;
                Ok(done.rows_affected() > 0)
            }
        }
    };
}
pub(crate) use impl_documents;
