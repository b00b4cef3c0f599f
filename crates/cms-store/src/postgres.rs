//! The production engine: PostgreSQL, shared by several instances.

use async_trait::async_trait;
use sqlx::postgres::{PgConnection, PgPool, PgPoolOptions};
use sqlx::{Postgres, Transaction};

use crate::{Dialect, Result, Store, StoreError, Tx};

static MIGRATOR: sqlx::migrate::Migrator = sqlx::migrate!("./migrations/postgres");

pub(crate) struct PgStore {
    pool: PgPool,
}

impl PgStore {
    pub(crate) async fn connect(url: &str) -> Result<Self> {
        let pool = PgPoolOptions::new()
            .max_connections(16)
            // A ping per borrow is a network round trip on every unit of work; a connection
            // the server dropped fails its next statement and is discarded instead.
            .test_before_acquire(false)
            .connect(url)
            .await?;
        Ok(PgStore { pool })
    }
}

#[async_trait]
impl Store for PgStore {
    fn dialect(&self) -> Dialect {
        Dialect::Postgres
    }

    async fn migrate(&self) -> Result<()> {
        MIGRATOR.run(&self.pool).await?;
        Ok(())
    }

    async fn ping(&self) -> Result<()> {
        sqlx::query("SELECT 1").execute(&self.pool).await?;
        Ok(())
    }

    async fn read(&self) -> Result<Box<dyn Tx>> {
        Ok(Box::new(PgTx {
            tx: self.pool.begin().await?,
        }))
    }

    async fn write(&self) -> Result<Box<dyn Tx>> {
        Ok(Box::new(PgTx {
            tx: self.pool.begin().await?,
        }))
    }

    async fn ensure_field_indexes(
        &self,
        doc_type: &str,
        fields: &[(Vec<String>, cms_core::FieldKind)],
    ) -> Result<()> {
        for statement in crate::field_index_statements(Dialect::Postgres, doc_type, fields) {
            if let Err(e) = sqlx::query(sqlx::AssertSqlSafe(statement))
                .execute(&self.pool)
                .await
            {
                match StoreError::from(e) {
                    // Two instances starting together may both create the index: IF NOT EXISTS
                    // is not race-free, and the loser sees a catalog unique violation.
                    StoreError::Unique(_) => {}
                    other => return Err(other),
                }
            }
        }
        Ok(())
    }

    async fn close(&self) {
        self.pool.close().await;
    }
}

/// Reads run in a transaction too: row-level security will set the acting organization with a
/// transaction-local setting, which must never leak to the next borrower of the connection.
pub(crate) struct PgTx {
    tx: Transaction<'static, Postgres>,
}

impl PgTx {
    pub(crate) const DIALECT: Dialect = Dialect::Postgres;

    /// The arguments for compiled SQL, in placeholder order.
    pub(crate) fn arguments(
        binds: Vec<crate::filter_sql::Bind>,
    ) -> Result<sqlx::postgres::PgArguments> {
        let mut args = sqlx::postgres::PgArguments::default();
        for bind in binds {
            bind.add_to_postgres(&mut args)
                .map_err(|e| crate::StoreError::Database(sqlx::Error::Encode(e)))?;
        }
        Ok(args)
    }

    async fn conn(&mut self) -> Result<&mut PgConnection> {
        Ok(&mut self.tx)
    }

    /// PostgreSQL has no thread hop to save: every statement goes through the transaction.
    fn point_reads(&self) -> Option<&crate::sqlite::PointReads> {
        None
    }
}

#[async_trait]
impl Tx for PgTx {
    async fn commit(self: Box<Self>) -> Result<()> {
        self.tx.commit().await?;
        Ok(())
    }
}

crate::impl_repositories!(PgTx);
