//! The single writer of a SQLite database, and the write units that hold it.
//!
//! sqlx runs every SQLite connection on a thread of its own: each statement is sent there and
//! its answer sent back, two thread wake-ups, and the task that sent it must be scheduled again
//! among every other request's before the next statement can go. A write unit of nine
//! statements held the one writer through nine such hand-offs while the writer's thread mostly
//! slept (docs/PERFORMANCE.md, "Publishes on SQLite").
//!
//! So the writer is one sqlx connection behind an async mutex (the queue of write units, first
//! come first served), and a write unit holds that mutex for its whole life. It takes the
//! connection's database handle away from sqlx's thread once ([`SqliteConnection::lock_handle`],
//! one hand-off), and then runs `BEGIN IMMEDIATE`, the statements that have a direct form
//! ([`super::Direct`]) and `COMMIT` synchronously on the calling thread, through rusqlite on the
//! very same handle: microseconds each, no hand-off. A statement without a direct form still
//! goes through sqlx: the handle is given back to sqlx's thread for it (which costs its hand-off,
//! as before) and taken again by the next direct statement.
//!
//! Cancellation: a unit is dropped wherever it waits. Holding the handle it rolls back on the
//! spot (synchronously): no sqlx command of it can be pending then, since taking the handle
//! waits for sqlx's thread to reach the request behind them. Dropped while sqlx has the handle,
//! a statement of the unit may still be queued for sqlx's thread, and taking the handle does not
//! wait for it when sqlx's thread has not locked it again yet: the rollback must come after it,
//! or the statement would run after the rollback, outside any transaction, and stay. So the
//! writer is marked dirty and the unit's guard goes to a task that first waits for a round trip
//! through sqlx's queue (a ping, behind the unit's statement), then takes the handle and rolls
//! back; nobody else gets the writer before. Without a runtime the next holder does the same
//! first. Either way no unit starts inside a transaction another one left, and no abandoned
//! statement lands in another unit's.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use sqlx::sqlite::{LockedSqliteHandle, SqliteConnectOptions, SqliteConnection, SqliteOperation};
use sqlx::{ConnectOptions, Connection};
use tokio::sync::{Mutex, OwnedMutexGuard};

use super::direct::Direct;
use crate::event_feed::EventCommits;
use crate::{Result, StoreError};

/// How long `BEGIN IMMEDIATE` waits for another process's write lock (the same as every
/// connection's busy timeout), then fails with SQLITE_BUSY before the unit did anything.
pub(super) const BUSY_TIMEOUT: Duration = Duration::from_secs(5);

/// Statements rusqlite keeps prepared on the writer (its default is 16; the direct statements
/// of one publish alone are about ten, and a reference list's chunk size adds its own).
const STATEMENT_CACHE: usize = 64;

/// The writer's connection: sqlx's, and rusqlite's view of its handle.
pub(super) struct Writer {
    /// Used only while the handle is locked out of sqlx's thread. Declared first so that its
    /// cached statements are finalized before `sqlx` closes the handle (sqlx refuses to close a
    /// handle with statements left).
    direct: rusqlite::Connection,
    sqlx: SqliteConnection,
    /// A unit ended while it may still have been inside its transaction: whoever holds the
    /// writer next rolls back first.
    dirty: bool,
    /// Set by the connection's update hook when a row is inserted into `events`, by whichever
    /// path (direct or through sqlx); cleared when a unit begins, read when it commits.
    appended: Arc<AtomicBool>,
    /// Told after the `COMMIT` of a unit that appended events.
    commits: EventCommits,
}

/// The writer, shared by the store and its units; `None` once the store is closed.
pub(super) type Shared = Arc<Mutex<Option<Writer>>>;

impl Writer {
    /// Opens the writer's connection. It is opened `serialized` (SQLite's own mutex guards the
    /// handle): the handle is used from two threads, never at once by construction, but a store
    /// dropped without `close` finalizes rusqlite's statements on whichever thread drops it.
    pub(super) async fn open(
        options: &SqliteConnectOptions,
        commits: EventCommits,
    ) -> Result<Shared> {
        let mut sqlx = options.clone().serialized(true).connect().await?;
        let appended = Arc::new(AtomicBool::new(false));
        let mut handle = sqlx.lock_handle().await?;
        // Every statement of every unit runs on this handle, so the hook sees every event
        // appended, whatever wrote it (the events of a document write, an import's batch, a
        // custom event): the readers of the feed never depend on each path remembering to say so.
        let seen = appended.clone();
        handle.set_update_hook(move |change| {
            if change.operation == SqliteOperation::Insert && change.table == "events" {
                seen.store(true, Ordering::Relaxed);
            }
        });
        let raw = handle.as_raw_handle();
        drop(handle);
        // SAFETY: the handle stays open as long as `sqlx`, which `Writer` drops after `direct`
        // (field order); `from_handle` never closes it. `direct` runs statements only while the
        // handle is locked out of sqlx's thread (`Held::lock`), so the two never use it at once.
        let direct = unsafe { rusqlite::Connection::from_handle(raw.as_ptr()) }?;
        direct.set_prepared_statement_cache_capacity(STATEMENT_CACHE);
        Ok(Arc::new(Mutex::new(Some(Writer {
            direct,
            sqlx,
            dirty: false,
            appended,
            commits,
        }))))
    }
}

/// The writer, held: by a write unit, by migrations and index creation, or (in memory, where
/// the database exists only on this connection) by a read unit.
pub(super) struct Held {
    /// The handle taken from sqlx's thread, while statements run directly. Declared before
    /// `guard` so that it is released first: it borrows from the connection the guard holds.
    locked: Option<LockedSqliteHandle<'static>>,
    /// `None` only once `Drop` has handed it to the task that rolls back.
    guard: Option<OwnedMutexGuard<Option<Writer>>>,
    /// Inside `BEGIN IMMEDIATE` until `commit`.
    transaction: bool,
    /// The connection was lent to sqlx (`sqlx()`) and the handle not taken back since: a
    /// statement given to sqlx may still be queued when this is dropped.
    lent: bool,
}

impl Held {
    /// Waits for the writer (first come, first served) and rolls back what an abandoned unit
    /// left behind.
    pub(super) async fn acquire(shared: &Shared) -> Result<Held> {
        let guard = shared.clone().lock_owned().await;
        let mut held = Held {
            locked: None,
            guard: Some(guard),
            transaction: false,
            lent: false,
        };
        if held.writer()?.dirty {
            held.settle().await?;
        }
        Ok(held)
    }

    /// A write unit: the writer, inside `BEGIN IMMEDIATE` (one hand-off, to take the handle).
    pub(super) async fn begin(shared: &Shared) -> Result<Held> {
        let mut held = Held::acquire(shared).await?;
        held.lock().await?;
        let started = tokio::time::Instant::now();
        let mut pause = Duration::from_millis(1);
        // From here a dropped unit is rolled back, if its `BEGIN` went through.
        held.transaction = true;
        held.writer()?.dirty = true;
        loop {
            match try_begin(&held.writer()?.direct) {
                Ok(()) => {
                    // What a unit rolled back appended is not this unit's.
                    held.writer()?.appended.store(false, Ordering::Relaxed);
                    return Ok(held);
                }
                // Another process holds the write lock: wait without blocking this thread (the
                // handle stays locked, nobody else may use this connection meanwhile anyway).
                Err(e) if is_busy(&e) && started.elapsed() < BUSY_TIMEOUT => {
                    tokio::time::sleep(pause).await;
                    pause = (pause * 2).min(Duration::from_millis(50));
                }
                Err(e) => return Err(e.into()),
            }
        }
    }

    fn writer(&mut self) -> Result<&mut Writer> {
        self.guard
            .as_mut()
            .and_then(|guard| guard.as_mut())
            .ok_or(StoreError::Database(sqlx::Error::PoolClosed))
    }

    /// Takes the handle from sqlx's thread, when it does not have it yet.
    async fn lock(&mut self) -> Result<()> {
        if self.locked.is_none() {
            let locked = self.writer()?.sqlx.lock_handle().await?;
            // SAFETY: only the lifetime changes. The lock refers to the connection's shared
            // state (heap memory that lives as long as the connection); the connection lives in
            // the mutex `guard` holds, and `locked` is released before the guard or the
            // connection go (field order; `close` and `Drop` release it first). While it is
            // held nothing here asks sqlx's thread for anything (`sqlx()` releases it first).
            let locked: LockedSqliteHandle<'static> = unsafe { std::mem::transmute(locked) };
            self.locked = Some(locked);
            self.lent = false;
        }
        Ok(())
    }

    /// Rolls back what an abandoned unit left open, after whatever it left queued for sqlx's
    /// thread has run (see the module documentation).
    async fn settle(&mut self) -> Result<()> {
        self.locked = None;
        self.writer()?.sqlx.ping().await?;
        self.lock().await?;
        let writer = self.writer()?;
        roll_back_if_open(&writer.direct)?;
        writer.dirty = false;
        Ok(())
    }

    /// The direct statements: the handle, taken from sqlx's thread if sqlx has it.
    pub(super) async fn direct(&mut self) -> Result<Direct<'_>> {
        self.lock().await?;
        Ok(Direct::new(&mut self.writer()?.direct))
    }

    /// The connection for statements through sqlx: the handle goes back to sqlx's thread.
    pub(super) fn sqlx(&mut self) -> Result<&mut SqliteConnection> {
        self.locked = None;
        self.lent = true;
        Ok(&mut self.writer()?.sqlx)
    }

    /// Gives the writer back after work through sqlx (migrations, index creation, a ping) whose
    /// every statement was awaited: nothing of it is left queued.
    pub(super) fn release(mut self) {
        self.lent = false;
    }

    /// Commits the unit's transaction.
    pub(super) async fn commit(mut self) -> Result<()> {
        self.lock().await?;
        let writer = self.writer()?;
        writer.direct.prepare_cached("COMMIT")?.execute([])?;
        writer.dirty = false;
        if writer.appended.swap(false, Ordering::Relaxed) {
            writer.commits.committed();
        }
        self.transaction = false;
        Ok(())
    }

    /// Closes the writer: its units have ended (this holds it), what they left is rolled back.
    pub(super) async fn close(mut self) -> Result<()> {
        self.lock().await?;
        let Some(Writer { direct, sqlx, .. }) = self.guard.as_mut().and_then(|guard| guard.take())
        else {
            return Ok(());
        };
        let rolled_back = roll_back_if_open(&direct);
        // rusqlite's statements are finalized while the handle is still ours; then sqlx may
        // have it back, and close it.
        drop(direct);
        self.locked = None;
        sqlx.close().await?;
        rolled_back
    }
}

impl Drop for Held {
    fn drop(&mut self) {
        if self.locked.is_some() {
            if self.transaction
                && let Ok(writer) = self.writer()
            {
                // Holding the handle, nothing of this unit is queued: roll back now. On failure
                // the writer stays dirty and its next holder tries again.
                if roll_back_if_open(&writer.direct).is_ok() {
                    writer.dirty = false;
                }
            }
            return;
        }
        if !self.lent && !self.transaction {
            // Never began or committed, and nothing of it is queued.
            return;
        }
        // A statement of this unit may still be queued for sqlx's thread: the rollback waits
        // for it, on a task of its own that keeps the writer until it is done. Without a
        // runtime the writer's next holder does it (it is dirty).
        self.locked = None;
        if let Ok(writer) = self.writer() {
            writer.dirty = true;
        }
        let (Ok(runtime), Some(guard)) = (tokio::runtime::Handle::try_current(), self.guard.take())
        else {
            return;
        };
        runtime.spawn(async move {
            let mut held = Held {
                locked: None,
                guard: Some(guard),
                transaction: false,
                lent: false,
            };
            if let Err(e) = held.settle().await {
                tracing::warn!(error = %e, "rolling back an abandoned write unit failed; the next unit retries");
            }
        });
    }
}

/// `BEGIN IMMEDIATE` without waiting in SQLite's busy handler (which would block this thread).
fn try_begin(conn: &rusqlite::Connection) -> rusqlite::Result<()> {
    conn.busy_timeout(Duration::ZERO)?;
    let begun = conn
        .prepare_cached("BEGIN IMMEDIATE")?
        .execute([])
        .map(|_| ());
    conn.busy_timeout(BUSY_TIMEOUT)?;
    begun
}

fn is_busy(e: &rusqlite::Error) -> bool {
    e.sqlite_error_code() == Some(rusqlite::ErrorCode::DatabaseBusy)
}

fn roll_back_if_open(conn: &rusqlite::Connection) -> Result<()> {
    if !conn.is_autocommit() {
        conn.prepare_cached("ROLLBACK")?.execute([])?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::time::Instant;

    use crate::Store;
    use crate::testing::TestDatabase;
    use crate::users::UserRecord;

    fn user(id: &str) -> UserRecord {
        UserRecord {
            id: id.into(),
            email: format!("{id}@example.com"),
            name: "Ada".into(),
            password_hash: None,
            email_verified: false,
            role: "editor".into(),
            image: None,
            created_at: 1,
            updated_at: 1,
        }
    }

    /// Another process holding the write lock makes `BEGIN IMMEDIATE` wait, and the wait must
    /// not hold the runtime's thread: on a runtime of one thread, another task keeps running.
    #[tokio::test(flavor = "current_thread")]
    async fn a_unit_waits_for_another_process_without_blocking_the_runtime() {
        let db = TestDatabase::new(crate::Dialect::Sqlite).await;
        let store = super::super::SqliteStore::connect(&db.url).await.unwrap();
        store.migrate().await.unwrap();
        let path = db.url.trim_start_matches("sqlite://").to_string();
        let other = rusqlite::Connection::open(&path).unwrap();
        other.execute_batch("BEGIN IMMEDIATE").unwrap();
        let release = std::thread::spawn(move || {
            std::thread::sleep(std::time::Duration::from_millis(300));
            other.execute_batch("COMMIT").unwrap();
        });
        let ticks = std::sync::Arc::new(AtomicUsize::new(0));
        let ticker = tokio::spawn({
            let ticks = ticks.clone();
            async move {
                loop {
                    tokio::time::sleep(std::time::Duration::from_millis(10)).await;
                    ticks.fetch_add(1, Ordering::SeqCst);
                }
            }
        });
        let started = Instant::now();
        let mut tx = store.write().await.unwrap();
        let waited = started.elapsed();
        tx.insert_user(&user("u1")).await.unwrap();
        tx.commit().await.unwrap();
        ticker.abort();
        release.join().unwrap();
        assert!(
            waited >= std::time::Duration::from_millis(250),
            "began after {waited:?}"
        );
        assert!(
            ticks.load(Ordering::SeqCst) >= 10,
            "the runtime ran {} ticks while the unit waited",
            ticks.load(Ordering::SeqCst)
        );
        let mut tx = store.read().await.unwrap();
        assert!(tx.user_by_id("u1").await.unwrap().is_some());
        drop(tx);
        store.close().await;
        db.remove().await;
    }

    /// An in-memory database exists only on the writer's connection: its read units borrow the
    /// writer, and see what write units committed and nothing of what they abandoned.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn an_in_memory_database_is_read_on_its_writer() {
        let store = super::super::SqliteStore::connect("sqlite::memory:")
            .await
            .unwrap();
        store.migrate().await.unwrap();
        let mut tx = store.write().await.unwrap();
        tx.insert_user(&user("kept")).await.unwrap();
        tx.commit().await.unwrap();
        let mut tx = store.write().await.unwrap();
        tx.insert_user(&user("dropped")).await.unwrap();
        drop(tx);
        let mut tx = store.read().await.unwrap();
        assert!(tx.user_by_id("kept").await.unwrap().is_some());
        assert!(tx.user_by_id("dropped").await.unwrap().is_none());
        drop(tx);
        store.ping().await.unwrap();
        store.close().await;
        // Closed: no unit any more, and a clear error rather than a hang or a panic.
        assert!(store.write().await.is_err());
    }
}
