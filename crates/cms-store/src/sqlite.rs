//! The embedded engine: one file, WAL, a single writer connection and a pool of readers.

use std::str::FromStr;
use std::time::Duration;

use async_trait::async_trait;
use sqlx::pool::PoolConnection;
use sqlx::sqlite::{
    SqliteConnectOptions, SqliteConnection, SqliteJournalMode, SqlitePool, SqlitePoolOptions,
    SqliteSynchronous,
};
use sqlx::{Sqlite, Transaction};

use crate::{Dialect, Result, Store, StoreError, Tx};

static MIGRATOR: sqlx::migrate::Migrator = sqlx::migrate!("./migrations/sqlite");

pub(crate) struct SqliteStore {
    /// Exactly one connection: SQLite has one writer, and queueing here is cheaper and fairer
    /// than busy-waiting on the file lock.
    writer: SqlitePool,
    /// Readers never block the writer in WAL mode. `None` for an in-memory database, which
    /// exists only on the writer's connection.
    reader: Option<SqlitePool>,
}

impl SqliteStore {
    pub(crate) async fn connect(url: &str) -> Result<Self> {
        let options = SqliteConnectOptions::from_str(url)?
            .create_if_missing(true)
            .journal_mode(SqliteJournalMode::Wal)
            .synchronous(SqliteSynchronous::Normal)
            .busy_timeout(Duration::from_secs(5))
            .foreign_keys(true);
        let in_memory = url.contains(":memory:") || url.contains("mode=memory");
        if !in_memory
            && let Some(parent) = options.get_filename().parent()
            && !parent.as_os_str().is_empty()
        {
            std::fs::create_dir_all(parent).map_err(|e| {
                StoreError::Config(format!("cannot create {}: {e}", parent.display()))
            })?;
        }
        let writer = SqlitePoolOptions::new()
            .max_connections(1)
            .min_connections(1)
            .idle_timeout(None)
            .max_lifetime(None)
            .connect_with(options.clone())
            .await?;
        let reader = (!in_memory).then(|| {
            let readers =
                std::thread::available_parallelism().map_or(4, |n| n.get().max(2) as u32 * 2);
            SqlitePoolOptions::new()
                .max_connections(readers)
                .connect_lazy_with(options.create_if_missing(false).read_only(true))
        });
        Ok(SqliteStore { writer, reader })
    }
}

#[async_trait]
impl Store for SqliteStore {
    fn dialect(&self) -> Dialect {
        Dialect::Sqlite
    }

    async fn migrate(&self) -> Result<()> {
        MIGRATOR.run(&self.writer).await?;
        Ok(())
    }

    async fn ping(&self) -> Result<()> {
        let pool = self.reader.as_ref().unwrap_or(&self.writer);
        sqlx::query("SELECT 1").execute(pool).await?;
        Ok(())
    }

    async fn read(&self) -> Result<Box<dyn Tx>> {
        let pool = self.reader.as_ref().unwrap_or(&self.writer);
        Ok(Box::new(SqliteTx {
            conn: Conn::Plain(pool.acquire().await?),
        }))
    }

    async fn write(&self) -> Result<Box<dyn Tx>> {
        let tx = self.writer.begin_with("BEGIN IMMEDIATE").await?;
        Ok(Box::new(SqliteTx { conn: Conn::Tx(tx) }))
    }

    async fn ensure_field_indexes(
        &self,
        doc_type: &str,
        fields: &[(Vec<String>, cms_core::FieldKind)],
    ) -> Result<()> {
        for statement in crate::field_index_statements(Dialect::Sqlite, doc_type, fields) {
            sqlx::query(sqlx::AssertSqlSafe(statement))
                .execute(&self.writer)
                .await?;
        }
        Ok(())
    }

    async fn close(&self) {
        if let Some(reader) = &self.reader {
            reader.close().await;
        }
        self.writer.close().await;
    }
}

enum Conn {
    Tx(Transaction<'static, Sqlite>),
    /// A read on a pooled reader connection: every statement sees a consistent snapshot on its
    /// own, and skipping BEGIN/COMMIT saves two round trips to the SQLite thread.
    Plain(PoolConnection<Sqlite>),
}

pub(crate) struct SqliteTx {
    conn: Conn,
}

impl SqliteTx {
    pub(crate) const DIALECT: Dialect = Dialect::Sqlite;

    /// The arguments for compiled SQL, in placeholder order.
    pub(crate) fn arguments(
        binds: Vec<crate::filter_sql::Bind>,
    ) -> Result<sqlx::sqlite::SqliteArguments> {
        let mut args = sqlx::sqlite::SqliteArguments::default();
        for bind in binds {
            bind.add_to_sqlite(&mut args)
                .map_err(|e| crate::StoreError::Database(sqlx::Error::Encode(e)))?;
        }
        Ok(args)
    }

    fn conn(&mut self) -> &mut SqliteConnection {
        match &mut self.conn {
            Conn::Tx(tx) => tx,
            Conn::Plain(conn) => conn,
        }
    }
}

#[async_trait]
impl Tx for SqliteTx {
    async fn commit(self: Box<Self>) -> Result<()> {
        if let Conn::Tx(tx) = self.conn {
            tx.commit().await?;
        }
        Ok(())
    }
}

crate::impl_repositories!(SqliteTx);
