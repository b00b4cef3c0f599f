//! `cms backup` on SQLite (CONTRACT.md section 19): a consistent copy of a database another
//! process may be writing, by `VACUUM INTO`. It runs in one read transaction of its own, so the
//! copy is the database as of one commit, writers go on meanwhile (WAL), and the copy is
//! compacted and holds no log of its own.

use std::path::Path;
use std::str::FromStr;

use sqlx::sqlite::SqliteConnectOptions;

use crate::{Result, StoreError};

/// Copies the SQLite database `url` names to `target`, which must not exist yet.
pub(crate) async fn backup(url: &str, target: &Path) -> Result<()> {
    let options = SqliteConnectOptions::from_str(url)?;
    let source = options.get_filename().to_path_buf();
    if !source.is_file() {
        return Err(StoreError::Config(format!(
            "there is no database at {}",
            source.display()
        )));
    }
    if target.exists() {
        return Err(StoreError::Config(format!(
            "{} exists already: name a new file",
            target.display()
        )));
    }
    let target_text = target
        .to_str()
        .ok_or_else(|| StoreError::Config("the backup path must be valid UTF-8".into()))?
        .to_string();
    tokio::task::spawn_blocking(move || -> Result<()> {
        let conn = rusqlite::Connection::open_with_flags(
            &source,
            rusqlite::OpenFlags::SQLITE_OPEN_READ_WRITE | rusqlite::OpenFlags::SQLITE_OPEN_NO_MUTEX,
        )?;
        // A writer's checkpoint may hold the file briefly; wait rather than fail.
        conn.busy_timeout(std::time::Duration::from_secs(30))?;
        conn.execute("VACUUM INTO ?1", [&target_text])?;
        Ok(())
    })
    .await
    .map_err(|e| StoreError::Config(format!("the backup stopped: {e}")))?
}
