//! The embedded engine: one file, WAL, a single writer connection and a pool of readers.

pub(crate) mod backup;
mod checkpoint;
mod direct;
mod point_reads;
mod writer;

pub(crate) use direct::Direct;
pub(crate) use point_reads::PointReads;

use std::str::FromStr;
use std::sync::Arc;

use async_trait::async_trait;
use sqlx::pool::PoolConnection;
use sqlx::sqlite::{
    SqliteConnectOptions, SqliteConnection, SqliteJournalMode, SqlitePool, SqlitePoolOptions,
    SqliteSynchronous,
};
use sqlx::{Executor, Sqlite};

use crate::event_feed::{EventCommitWatch, EventCommits};
use crate::unit::UnitOfWork;
use crate::{Dialect, PoolUse, Result, Store, StoreError, Tx};

pub(crate) static MIGRATOR: sqlx::migrate::Migrator = sqlx::migrate!("./migrations/sqlite");

pub(crate) struct SqliteStore {
    /// Exactly one connection: SQLite has one writer, and queueing here (an async mutex, first
    /// come first served) is cheaper and fairer than busy-waiting on the file lock.
    writer: writer::Shared,
    /// Readers never block the writer in WAL mode. `None` for an in-memory database, which
    /// exists only on the writer's connection.
    reader: Option<SqlitePool>,
    /// The hottest lookups, off sqlx; present exactly when `reader` is.
    points: Option<Arc<PointReads>>,
    /// Present exactly when `reader` is; stopped on close (or drop).
    checkpointer: std::sync::Mutex<Option<checkpoint::Checkpointer>>,
    /// Told by the writer after each commit that appended events. Another process's commits
    /// reach no one here: readers of the feed poll for them.
    commits: EventCommits,
}

impl SqliteStore {
    pub(crate) async fn connect(url: &str) -> Result<Self> {
        let options = SqliteConnectOptions::from_str(url)?
            .create_if_missing(true)
            .journal_mode(SqliteJournalMode::Wal)
            .synchronous(SqliteSynchronous::Normal)
            .busy_timeout(writer::BUSY_TIMEOUT)
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
        let commits = EventCommits::default();
        let writer = writer::Writer::open(&options, commits.clone()).await?;
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
            commits,
        })
    }

    /// Runs one statement holding the writer for it alone (see `crate::field_indexes::sqlite`).
    async fn run_on_writer(&self, statement: &str) -> Result<()> {
        let mut held = writer::Held::acquire(&self.writer).await?;
        sqlx::query(sqlx::AssertSqlSafe(statement.to_string()))
            .execute(held.sqlx()?)
            .await?;
        held.release();
        Ok(())
    }

    async fn existing_field_indexes(&self) -> Result<Vec<String>> {
        let mut held = writer::Held::acquire(&self.writer).await?;
        let existing = crate::field_indexes::sqlite::existing(held.sqlx()?).await?;
        held.release();
        Ok(existing)
    }
}

#[async_trait]
impl Store for SqliteStore {
    fn dialect(&self) -> Dialect {
        Dialect::Sqlite
    }

    /// The single writer (in use while a unit holds it), sqlx's readers, and the point reads.
    fn pool_use(&self) -> Vec<PoolUse> {
        let writer_held = self.writer.try_lock().is_err() as u32;
        let mut pools = vec![PoolUse {
            pool: "write",
            in_use: writer_held,
            idle: 1 - writer_held,
            max: 1,
        }];
        if let Some(reader) = &self.reader {
            let idle = reader.num_idle() as u32;
            pools.push(PoolUse {
                pool: "read",
                in_use: reader.size().saturating_sub(idle),
                idle,
                max: reader.options().get_max_connections(),
            });
        }
        if let Some(points) = &self.points {
            let (in_use, idle, max) = points.usage();
            pools.push(PoolUse {
                pool: "point_read",
                in_use,
                idle,
                max,
            });
        }
        pools
    }

    async fn migrate(&self) -> Result<()> {
        let mut held = writer::Held::acquire(&self.writer).await?;
        // `run` would need `Acquire` for every lifetime of the connection, which sqlx's own
        // `run_direct` works around.
        MIGRATOR.run_direct(None, held.sqlx()?, false).await?;
        held.release();
        Ok(())
    }

    async fn ping(&self) -> Result<()> {
        match &self.reader {
            Some(pool) => {
                pool.execute("SELECT 1").await?;
            }
            None => {
                let mut held = writer::Held::acquire(&self.writer).await?;
                held.sqlx()?.execute("SELECT 1").await?;
                held.release();
            }
        }
        Ok(())
    }

    async fn read(&self) -> Result<Box<dyn Tx>> {
        let conn = match &self.reader {
            Some(pool) => Conn::Read {
                pool: pool.clone(),
                conn: None,
                points: self.points.clone(),
            },
            None => Conn::InMemoryRead {
                writer: self.writer.clone(),
                held: None,
            },
        };
        Ok(Box::new(SqliteTx { conn }))
    }

    async fn write(&self) -> Result<Box<dyn Tx>> {
        let held = writer::Held::begin(&self.writer).await?;
        Ok(Box::new(SqliteTx {
            conn: Conn::Write(held),
        }))
    }

    async fn snapshot(&self) -> Result<Box<dyn Tx>> {
        let Some(pool) = &self.reader else {
            // An in-memory database lives on the writer's connection alone: holding it is
            // the only snapshot there is.
            return self.read().await;
        };
        // Detached: the connection closes with the unit, so its transaction never reaches
        // another unit through the pool, however the unit ends.
        let mut conn = pool.acquire().await?.detach();
        // A deferred transaction takes its snapshot at its first read: take it now.
        conn.execute("BEGIN").await?;
        conn.execute("SELECT COUNT(*) FROM sqlite_master").await?;
        Ok(Box::new(SqliteTx {
            conn: Conn::Snapshot(conn),
        }))
    }

    async fn ensure_field_indexes(
        &self,
        doc_type: &str,
        fields: &crate::field_indexes::FieldPaths,
    ) -> Result<crate::field_indexes::IndexBuild> {
        use crate::field_indexes::{IndexBuild, sqlite};
        let existing = self.existing_field_indexes().await?;
        let (missing, present) = sqlite::missing(doc_type, fields, &existing);
        for (name, statement) in &missing {
            self.run_on_writer(statement).await?;
            tracing::info!(index = %name, doc_type, "field index built");
        }
        Ok(IndexBuild {
            built: missing.len(),
            present,
        })
    }

    async fn drop_unwanted_field_indexes(
        &self,
        types: &[crate::field_indexes::IndexedType],
    ) -> Result<usize> {
        use crate::field_indexes::{sqlite, wanted_names};
        let wanted = wanted_names(Dialect::Sqlite, types);
        let existing = self.existing_field_indexes().await?;
        let unwanted = sqlite::unwanted(&existing, &wanted);
        for (name, statement) in &unwanted {
            self.run_on_writer(statement).await?;
            tracing::info!(index = %name, "field index dropped");
        }
        Ok(unwanted.len())
    }

    async fn close(&self) {
        if let Some(reader) = &self.reader {
            reader.close().await;
        }
        // Waits for the unit holding the writer, if any, to end.
        // An error here means closed already.
        if let Ok(held) = writer::Held::acquire(&self.writer).await
            && let Err(e) = held.close().await
        {
            tracing::warn!(error = %e, "closing the SQLite writer failed");
        }
        let checkpointer = self.checkpointer.lock().ok().and_then(|mut c| c.take());
        drop(checkpointer);
    }

    /// This process's commits only: SQLite has no notifications between processes.
    fn watch_event_commits(&self) -> EventCommitWatch {
        EventCommitWatch::new(&self.commits, None)
    }
}

enum Conn {
    /// A write unit: the writer, inside `BEGIN IMMEDIATE` (see `writer.rs`).
    Write(writer::Held),
    /// A read of an in-memory database, which exists only on the writer's connection: the
    /// writer, held from the unit's first statement.
    InMemoryRead {
        writer: writer::Shared,
        held: Option<writer::Held>,
    },
    /// A read on a pooled reader connection, borrowed at its first statement (point reads may
    /// need none): every statement sees a consistent snapshot on its own, and skipping
    /// BEGIN/COMMIT saves two round trips to the SQLite thread.
    Read {
        pool: SqlitePool,
        conn: Option<PoolConnection<Sqlite>>,
        points: Option<Arc<PointReads>>,
    },
    /// A read inside one transaction on a reader connection of its own ([`Store::snapshot`]).
    Snapshot(SqliteConnection),
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
            Conn::Write(held) => held.sqlx(),
            Conn::Snapshot(conn) => Ok(conn),
            Conn::InMemoryRead { writer, held } => {
                let writer = match held.take() {
                    Some(writer) => writer,
                    None => writer::Held::acquire(writer).await?,
                };
                held.insert(writer).sqlx()
            }
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
            Conn::Write(_) | Conn::InMemoryRead { .. } | Conn::Snapshot(_) => None,
        }
    }

    /// Only in a write unit: a read unit's statements need no writer.
    async fn direct(&mut self) -> Result<Option<Direct<'_>>> {
        match &mut self.conn {
            Conn::Write(held) => Ok(Some(held.direct().await?)),
            Conn::Read { .. } | Conn::InMemoryRead { .. } | Conn::Snapshot(_) => Ok(None),
        }
    }

    /// The writer's update hook notices every insert into `events` (see `writer.rs`).
    #[inline]
    fn appended_events(&mut self) {}
}

#[async_trait]
impl Tx for SqliteTx {
    async fn commit(self: Box<Self>) -> Result<()> {
        match self.conn {
            Conn::Write(held) => held.commit().await?,
            Conn::Snapshot(mut conn) => {
                conn.execute("COMMIT").await?;
                sqlx::Connection::close(conn).await?;
            }
            Conn::Read { .. } | Conn::InMemoryRead { .. } => {}
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
