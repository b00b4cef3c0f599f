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
}

/// Appends `INSERT INTO document_references (...) VALUES (...), ...` of the references of one
/// document copy to the query builder `$sql`: the one column list for the plain insert and for
/// SQLite's delete-and-insert in one round trip.
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
                sqlx::query("DELETE FROM document_references WHERE from_id = $1 AND copy = $2")
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
                    "SELECT * FROM documents WHERE organization_id IN ({}) AND id IN \
                     (SELECT from_id FROM document_references WHERE to_id = $1) ORDER BY created_at, id",
                    $crate::documents::placeholders(2, organizations.len())
                );
                let mut query = sqlx::query_as(sqlx::AssertSqlSafe(sql)).bind(to_id);
                for org in organizations {
                    query = query.bind(org);
                }
                Ok(query.fetch_all(self.conn().await?).await?)
            }
        }
    };
}
pub(crate) use impl_references;
