//! Hearing other processes' commits: a `LISTEN` on the channel that migration 0018's trigger on
//! `events` notifies at the commit of every transaction that appended events. The channel is
//! named after the schema that holds `events` (a digest, within PostgreSQL's 63-byte limit), so
//! deployments sharing a database in separate schemas do not wake each other.
//!
//! The listener has a connection of its own (a pool of one, so a lost connection is opened
//! again); each notification, and each (re)connection, moves the store's [`EventCommits`]: a
//! notification sent while the connection was down is lost, so readers are woken then too.

use std::time::Duration;

use sqlx::postgres::{PgConnectOptions, PgListener, PgPoolOptions};

use crate::Result;
use crate::event_feed::EventCommits;

/// The channel of the `events` table the connection's `search_path` finds; migration 0018's
/// trigger computes the same name from `TG_TABLE_SCHEMA`.
const CHANNEL_SQL: &str = "SELECT 'cms_events_' || left(md5(n.nspname), 16) FROM pg_class c \
     JOIN pg_namespace n ON n.oid = c.relnamespace WHERE c.oid = 'events'::regclass";

/// How long to wait before listening again after a failure the listener could not recover
/// from by itself (the server refusing connections): the feed's poll covers the gap.
const RETRY: Duration = Duration::from_secs(1);

/// Listens until the returned task is aborted.
pub(super) fn spawn(
    options: PgConnectOptions,
    commits: EventCommits,
) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        loop {
            if let Err(e) = listen(&options, &commits).await {
                tracing::warn!(error = %e, "listening for event commits failed; trying again");
            }
            tokio::time::sleep(RETRY).await;
        }
    })
}

async fn listen(options: &PgConnectOptions, commits: &EventCommits) -> Result<()> {
    let pool = PgPoolOptions::new()
        .max_connections(1)
        .max_lifetime(None)
        .idle_timeout(None)
        .connect_lazy_with(options.clone());
    let mut listener = PgListener::connect_with(&pool).await?;
    let channel: String = sqlx::query_scalar(CHANNEL_SQL)
        .fetch_one(&mut listener)
        .await?;
    listener.listen(&channel).await?;
    // Whatever committed before the LISTEN took effect was announced to nobody here.
    commits.committed();
    loop {
        // `None`: the connection was lost and opened again (listening again on the channel);
        // what was notified in between is lost, so wake the readers as for a notification.
        let _ = listener.try_recv().await?;
        commits.committed();
    }
}
