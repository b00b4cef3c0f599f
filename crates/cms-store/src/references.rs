//! References: which document points at which document or asset, kept in a side table that is
//! rewritten with every write of a document copy.

use async_trait::async_trait;

use crate::Result;
use crate::documents::DocumentRecord;

/// One reference found in a document copy.
#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct ReferenceRecord {
    /// Where in the data: `author`, `gallery[2].asset`.
    pub path: String,
    pub to_id: String,
    /// `document` or `asset`.
    pub target: String,
}

/// What a reference points at: the table its target lives in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TargetKind {
    Document,
    Asset,
    /// An asset that is an image.
    Image,
}

impl TargetKind {
    /// The table of the targets (a literal: never built from input).
    pub(crate) fn table(self) -> &'static str {
        match self {
            TargetKind::Document => "documents",
            TargetKind::Asset | TargetKind::Image => "assets",
        }
    }

    /// What a row of the table must also be to count (a literal, empty for none).
    pub(crate) fn condition(self) -> &'static str {
        match self {
            TargetKind::Document | TargetKind::Asset => "",
            TargetKind::Image => " AND asset_type = 'image'",
        }
    }
}

/// The most ids one statement of [`References::existing_targets`] binds. Both engines take
/// far more (SQLite 32766 binds, PostgreSQL 65535); a thousand keeps each statement's text
/// and `IN` list small enough to plan quickly, and a caller naming more ids simply pays one
/// more round trip per thousand.
pub const ID_CHUNK: usize = 1000;

#[async_trait]
pub trait References {
    /// Adds references of one copy of a document that has none yet (a new document).
    async fn add_references(
        &mut self,
        from_id: &str,
        organization_id: &str,
        copy: &str,
        references: &[ReferenceRecord],
    ) -> Result<()>;
    /// Replaces the references of one copy (`draft` or `published`) of a document.
    async fn replace_references(
        &mut self,
        from_id: &str,
        organization_id: &str,
        copy: &str,
        references: &[ReferenceRecord],
    ) -> Result<()>;
    /// The references of one copy of a document, by path.
    async fn references_from(&mut self, from_id: &str, copy: &str) -> Result<Vec<ReferenceRecord>>;
    /// The documents of `organizations` whose draft or published copy references `to_id`,
    /// oldest first.
    async fn referencing_documents(
        &mut self,
        organizations: &[String],
        to_id: &str,
    ) -> Result<Vec<DocumentRecord>>;
    /// Which of `ids` name a target of `kind` in one of `organizations`: ids only, one
    /// statement per [`ID_CHUNK`] ids, for checking reference targets without loading them.
    async fn existing_targets(
        &mut self,
        organizations: &[String],
        kind: TargetKind,
        ids: &[String],
    ) -> Result<Vec<String>>;
    /// The documents of `organization`, other than `to_id` itself, whose draft or published
    /// copy references `to_id`: how many, and the first `limit` ids in id order.
    async fn referrers(
        &mut self,
        organization: &str,
        to_id: &str,
        limit: i64,
    ) -> Result<(i64, Vec<String>)>;
}

/// Appends `INSERT INTO document_references (...) VALUES (...), ...` of the references of one
/// document copy to the query builder `$sql`: the one column list for the plain insert and for
/// SQLite's delete-and-insert in one round trip.
/// One reference row, in column order: from, organization, copy, path, to, target.
pub(crate) const INSERT_REFERENCE_SQL: &str = "INSERT INTO document_references (from_id, \
     organization_id, copy, path, to_id, target) VALUES ($1, $2, $3, $4, $5, $6)";

/// The references of one copy of a document: from, copy.
pub(crate) const DELETE_REFERENCES_SQL: &str =
    "DELETE FROM document_references WHERE from_id = $1 AND copy = $2";

/// [`References::existing_targets`] for `organizations` organizations (`$1`...) and `ids` ids.
pub(crate) fn existing_targets_sql(kind: TargetKind, organizations: usize, ids: usize) -> String {
    format!(
        "SELECT id FROM {} WHERE organization_id IN ({}) AND id IN ({}){}",
        kind.table(),
        crate::documents::placeholders(1, organizations),
        crate::documents::placeholders(1 + organizations, ids),
        kind.condition()
    )
}

macro_rules! push_references {
    ($sql:ident, $from_id:expr, $organization_id:expr, $copy:expr, $rows:expr) => {
        $sql.push(
            "INSERT INTO document_references (from_id, organization_id, copy, path, to_id, target) ",
        );
        $sql.push_values($rows, |mut row, r| {
            row.push_bind($from_id)
                .push_bind($organization_id)
                .push_bind($copy)
                .push_bind(&r.path)
                .push_bind(&r.to_id)
                .push_bind(&r.target);
        });
    };
}
pub(crate) use push_references;

macro_rules! impl_references {
    ($tx:ty) => {
        #[async_trait::async_trait]
        impl $crate::references::References for $tx {
            async fn add_references(
                &mut self,
                from_id: &str,
                organization_id: &str,
                copy: &str,
                references: &[$crate::references::ReferenceRecord],
            ) -> $crate::Result<()> {
                if let Some(direct) = self.direct().await? {
                    return direct.add_references(from_id, organization_id, copy, references);
                }
                // Six parameters a row keeps every statement far below both engines' limits.
                for chunk in references.chunks(1000) {
                    let mut insert = sqlx::QueryBuilder::new("");
                    $crate::references::push_references!(insert, from_id, organization_id, copy, chunk);
                    insert.build().execute(self.conn().await?).await?;
                }
                Ok(())
            }

            async fn replace_references(
                &mut self,
                from_id: &str,
                organization_id: &str,
                copy: &str,
                references: &[$crate::references::ReferenceRecord],
            ) -> $crate::Result<()> {
                if let Some(direct) = self.direct().await? {
                    return direct.replace_references(from_id, organization_id, copy, references);
                }
                // SQLite runs several statements in one call (binds numbered across them): the
                // delete and the insert are one round trip to its connection's thread, which on
                // the single writer is the cost of a write.
                if <$tx>::DIALECT == $crate::Dialect::Sqlite && !references.is_empty() && references.len() <= 1000 {
                    let mut sql = sqlx::QueryBuilder::new("DELETE FROM document_references WHERE from_id = ");
                    sql.push_bind(from_id);
                    sql.push(" AND copy = ");
                    sql.push_bind(copy);
                    sql.push("; ");
                    $crate::references::push_references!(sql, from_id, organization_id, copy, references);
                    sql.build().execute(self.conn().await?).await?;
                    return Ok(());
                }
                sqlx::query($crate::references::DELETE_REFERENCES_SQL)
                    .bind(from_id)
                    .bind(copy)
                    .execute(self.conn().await?)
                    .await?;
                $crate::references::References::add_references(self, from_id, organization_id, copy, references).await
            }

            async fn references_from(
                &mut self,
                from_id: &str,
                copy: &str,
            ) -> $crate::Result<Vec<$crate::references::ReferenceRecord>> {
                Ok(sqlx::query_as(
                    "SELECT path, to_id, target FROM document_references WHERE from_id = $1 AND copy = $2 \
                     ORDER BY path",
                )
                .bind(from_id)
                .bind(copy)
                .fetch_all(self.conn().await?)
                .await?)
            }

            async fn referencing_documents(
                &mut self,
                organizations: &[String],
                to_id: &str,
            ) -> $crate::Result<Vec<$crate::documents::DocumentRecord>> {
                if organizations.is_empty() {
                    return Ok(Vec::new());
                }
                let sql = format!(
                    "SELECT {} FROM documents WHERE organization_id IN ({}) AND id IN \
                     (SELECT from_id FROM document_references WHERE to_id = $1) ORDER BY created_at, id",
                    $crate::documents::DOCUMENT_COLUMNS,
                    $crate::documents::placeholders(2, organizations.len())
                );
                let mut query = sqlx::query_as(sqlx::AssertSqlSafe(sql)).bind(to_id);
                for org in organizations {
                    query = query.bind(org);
                }
                Ok(query.fetch_all(self.conn().await?).await?)
            }

            async fn existing_targets(
                &mut self,
                organizations: &[String],
                kind: $crate::references::TargetKind,
                ids: &[String],
            ) -> $crate::Result<Vec<String>> {
                if let Some(direct) = self.direct().await? {
                    return direct.existing_targets(organizations, kind, ids);
                }
                let mut found = Vec::new();
                if organizations.is_empty() {
                    return Ok(found);
                }
                for chunk in ids.chunks($crate::references::ID_CHUNK) {
                    let sql = $crate::references::existing_targets_sql(kind, organizations.len(), chunk.len());
                    let mut query = sqlx::query_scalar(sqlx::AssertSqlSafe(sql));
                    for value in organizations.iter().chain(chunk) {
                        query = query.bind(value);
                    }
                    let ids: Vec<String> = query.fetch_all(self.conn().await?).await?;
                    found.extend(ids);
                }
                Ok(found)
            }

            async fn referrers(
                &mut self,
                organization: &str,
                to_id: &str,
                limit: i64,
            ) -> $crate::Result<(i64, Vec<String>)> {
                const WHERE: &str = "FROM document_references WHERE to_id = $1 AND organization_id = $2 AND from_id <> $1";
                let total: i64 = sqlx::query_scalar(sqlx::AssertSqlSafe(format!("SELECT COUNT(DISTINCT from_id) {WHERE}")))
                    .bind(to_id)
                    .bind(organization)
                    .fetch_one(self.conn().await?)
                    .await?;
                if total == 0 {
                    return Ok((0, Vec::new()));
                }
                let ids = sqlx::query_scalar(sqlx::AssertSqlSafe(format!(
                    "SELECT DISTINCT from_id {WHERE} ORDER BY from_id LIMIT $3"
                )))
                .bind(to_id)
                .bind(organization)
                .bind(limit)
                .fetch_all(self.conn().await?)
                .await?;
                Ok((total, ids))
            }
        }
    };
}
pub(crate) use impl_references;
