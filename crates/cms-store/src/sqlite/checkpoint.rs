//! WAL checkpoints off the writer's path.
//!
//! By default SQLite checkpoints inside the commit that pushes the write-ahead log past 1,000
//! pages: that commit copies the log into the database file and syncs both, while holding the
//! single writer. Under a steady write load that cost half of every write transaction. Here a
//! thread of its own copies the log back every [`INTERVAL`] (a passive checkpoint never blocks
//! the writer or the readers), and the writer's own automatic checkpoint stays as a backstop at
//! [`BACKSTOP_PAGES`], should this thread fall behind.

use std::path::PathBuf;
use std::sync::mpsc::{self, RecvTimeoutError};
use std::thread::JoinHandle;
use std::time::Duration;

use rusqlite::{Connection, OpenFlags};

const INTERVAL: Duration = Duration::from_millis(100);

/// The writer checkpoints by itself past this many log pages (64 MiB at 4 KiB pages).
pub(crate) const BACKSTOP_PAGES: u32 = 16_384;

/// Stops (and joins) its thread when dropped.
pub(crate) struct Checkpointer {
    stop: Option<mpsc::Sender<()>>,
    thread: Option<JoinHandle<()>>,
}

impl Checkpointer {
    pub(crate) fn start(path: PathBuf) -> std::io::Result<Self> {
        let (stop, stopped) = mpsc::channel::<()>();
        let thread = std::thread::Builder::new()
            .name("cms-sqlite-checkpoint".into())
            .spawn(move || run(&path, &stopped))?;
        Ok(Checkpointer {
            stop: Some(stop),
            thread: Some(thread),
        })
    }
}

impl Drop for Checkpointer {
    fn drop(&mut self) {
        drop(self.stop.take());
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

fn run(path: &PathBuf, stopped: &mpsc::Receiver<()>) {
    let flags = OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX;
    let conn = match Connection::open_with_flags(path, flags) {
        Ok(conn) => conn,
        Err(e) => {
            tracing::warn!(error = %e, "cannot open the database for checkpoints; the writer will checkpoint");
            return;
        }
    };
    while let Err(RecvTimeoutError::Timeout) = stopped.recv_timeout(INTERVAL) {
        // A busy result only means a reader still needs older pages; the next round goes on.
        if let Err(e) = conn.query_row("PRAGMA wal_checkpoint(PASSIVE)", [], |_| Ok(())) {
            tracing::debug!(error = %e, "checkpoint skipped");
        }
    }
}
