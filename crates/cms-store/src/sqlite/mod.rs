//! The embedded engine: one file, WAL, a single writer connection and a pool of readers.

mod checkpoint;
mod point_reads;

pub(crate) use point_reads::PointReads;

use std::str::FromStr;
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use sqlx::pool::PoolConnection;
use sqlx::sqlite::{
    SqliteConnectOptions, SqliteConnection, SqliteJournalMode, SqlitePool, SqlitePoolOptions,
    SqliteSynchronous,
};
use sqlx::{Sqlite, Transaction};

use crate::unit::UnitOfWork;
use crate::{Dialect, Result, Store, StoreError, Tx};

static MIGRATOR: sqlx::migrate::Migrator = sqlx::migrate!("./migrations/sqlite");

pub(crate) struct SqliteStore {
    /// Exactly one connection: SQLite has one writer, and queueing here is cheaper and fairer
    /// than busy-waiting on the file lock.
    writer: SqlitePool,
    /// Readers never block the writer in WAL mode. `None` for an in-memory database, which
    /// exists only on the writer's connection.
    reader: Option<SqlitePool>,
    /// The hottest lookups, off sqlx; present exactly when `reader` is.
    points: Option<Arc<PointReads>>,
    /// Present exactly when `reader` is; stopped on close (or drop).
    checkpointer: std::sync::Mutex<Option<checkpoint::Checkpointer>>,
}

impl SqliteStore {
    pub(crate) async fn connect(url: &str) -> Result<Self> {
        let options = SqliteConnectOptions::from_str(url)?
            .create_if_missing(true)
            .journal_mode(SqliteJournalMode::Wal)
            .synchronous(SqliteSynchronous::Normal)
            .busy_timeout(Duration::from_secs(5))
            .foreign_keys(true)
            .pragma("wal_autocheckpoint", checkpoint::BACKSTOP_PAGES.to_string())
            // After a checkpoint has emptied it, a log grown by a burst shrinks back to this.
            .pragma("journal_size_limit", (64 * 1024 * 1024).to_string());
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
            .test_before_acquire(false)
            .idle_timeout(None)
            .max_lifetime(None)
            .connect_with(options.clone())
            .await?;
        let readers = std::thread::available_parallelism().map_or(4, |n| n.get().max(2) * 2);
        let path = options.get_filename().to_path_buf();
        let points = (!in_memory).then(|| Arc::new(PointReads::new(path.clone(), readers)));
        let reader = (!in_memory).then(|| {
            SqlitePoolOptions::new()
                .max_connections(readers as u32)
                // A ping per borrow is a round trip to the connection's thread; a file-backed
                // connection does not go stale, so it buys nothing here.
                .test_before_acquire(false)
                .connect_lazy_with(options.create_if_missing(false).read_only(true))
        });
        let checkpointer = match in_memory {
            true => None,
            false => Some(
                checkpoint::Checkpointer::start(path.clone())
                    .map_err(|e| StoreError::Config(format!("cannot start checkpoints: {e}")))?,
            ),
        };
        Ok(SqliteStore {
            writer,
            reader,
            points,
            checkpointer: std::sync::Mutex::new(checkpointer),
        })
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
            conn: Conn::Read {
                pool: pool.clone(),
                conn: None,
                points: self.points.clone(),
            },
        }))
    }

    async fn write(&self) -> Result<Box<dyn Tx>> {
        let tx = self.writer.begin_with("BEGIN IMMEDIATE").await?;
        Ok(Box::new(SqliteTx { conn: Conn::Tx(tx) }))
    }

    async fn ensure_field_indexes(
        &self,
        doc_type: &str,
        fields: &crate::field_indexes::FieldPaths,
    ) -> Result<crate::field_indexes::IndexBuild> {
        crate::field_indexes::sqlite::ensure(&self.writer, doc_type, fields).await
    }

    async fn drop_unwanted_field_indexes(
        &self,
        types: &[crate::field_indexes::IndexedType],
    ) -> Result<usize> {
        let wanted = crate::field_indexes::wanted_names(Dialect::Sqlite, types);
        crate::field_indexes::sqlite::drop_unwanted(&self.writer, &wanted).await
    }

    async fn close(&self) {
        if let Some(reader) = &self.reader {
            reader.close().await;
        }
        self.writer.close().await;
        let checkpointer = self.checkpointer.lock().ok().and_then(|mut c| c.take());
        drop(checkpointer);
    }
}

enum Conn {
    Tx(Transaction<'static, Sqlite>),
    /// A read on a pooled reader connection, borrowed at its first statement (point reads may
    /// need none): every statement sees a consistent snapshot on its own, and skipping
    /// BEGIN/COMMIT saves two round trips to the SQLite thread.
    Read {
        pool: SqlitePool,
        conn: Option<PoolConnection<Sqlite>>,
        points: Option<Arc<PointReads>>,
    },
}

pub(crate) struct SqliteTx {
    conn: Conn,
}

impl UnitOfWork for SqliteTx {
    type Connection = SqliteConnection;
    type Arguments = sqlx::sqlite::SqliteArguments;

    const DIALECT: Dialect = Dialect::Sqlite;

    /// `Documents::locate_document`: one instance, no second wall, a plain query.
    const LOCATE_DOCUMENT: &'static str =
        "SELECT organization_id, type FROM documents WHERE id = $1";

    /// The arguments for compiled SQL, in placeholder order.
    fn arguments(binds: Vec<crate::filter_sql::Bind>) -> Result<sqlx::sqlite::SqliteArguments> {
        let mut args = sqlx::sqlite::SqliteArguments::default();
        for bind in binds {
            bind.add_to_sqlite(&mut args)
                .map_err(|e| crate::StoreError::Database(sqlx::Error::Encode(e)))?;
        }
        Ok(args)
    }

    async fn conn(&mut self) -> Result<&mut SqliteConnection> {
        match &mut self.conn {
            Conn::Tx(tx) => Ok(tx),
            Conn::Read { pool, conn, .. } => {
                let borrowed = match conn.take() {
                    Some(borrowed) => borrowed,
                    None => pool.acquire().await?,
                };
                Ok(conn.insert(borrowed))
            }
        }
    }

    /// SQLite keeps comparing through its expression indexes: no generated columns.
    #[inline]
    fn generated_columns(&self) -> Option<&crate::filter_sql::GeneratedColumns> {
        None
    }

    /// Only outside a transaction: a write unit must see its own writes.
    #[inline]
    fn point_reads(&self) -> Option<&PointReads> {
        match &self.conn {
            Conn::Read { points, .. } => points.as_deref(),
            Conn::Tx(_) => None,
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

    async fn act_for(&mut self, _organization_id: &str) -> Result<()> {
        Ok(())
    }

    async fn act_for_delivery(&mut self) -> Result<()> {
        Ok(())
    }

    /// Write units hold the one writer from `BEGIN IMMEDIATE` to their end: nothing to add.
    async fn hold_until_end(&mut self, _key: &str) -> Result<()> {
        Ok(())
    }

    async fn act_instance_wide(&mut self) -> Result<()> {
        Ok(())
    }
}

crate::impl_repositories!(SqliteTx);
