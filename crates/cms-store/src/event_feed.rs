//! The feed of new events for live readers (the event stream, CONTRACT.md section 16): every
//! event has a **position** in the order the database assigned it, and readers learn when a
//! unit that appended events has committed.
//!
//! Positions: SQLite's `rowid` of `events` (one writer at a time, so positions are assigned in
//! commit order and never leave a hole behind a committed event); on PostgreSQL the identity
//! column `position` of migration 0018, taken at the insert, so two transactions may commit out
//! of order and a position may stay empty for good (a rolled-back insert). A reader therefore
//! remembers the positions it has not seen below the newest one it has ([`FeedHead::missing`])
//! and asks for them again ([`EventFeed::feed_after`]) until they fill or it gives up on them.
//! Events written before migration 0018 have no position on PostgreSQL: they are older than
//! every reader of the feed.
//!
//! Wake-ups ([`EventCommits`]): a unit that appended an event tells this process after its
//! `COMMIT` (SQLite: the writer's update hook sees every insert into `events`, whichever path
//! wrote it; PostgreSQL: the statements that insert events mark their unit), and on PostgreSQL
//! the `NOTIFY` of migration 0018's trigger tells every process that listens
//! ([`crate::Store::watch_event_commits`]).

use std::sync::Arc;

use async_trait::async_trait;
use tokio::sync::watch;

use crate::Result;
use crate::events::EventRecord;

/// An event with its position in the feed.
#[derive(Debug, Clone, sqlx::FromRow)]
pub struct FeedEvent {
    pub position: i64,
    #[sqlx(flatten)]
    pub event: EventRecord,
}

/// Where the feed stands: its newest position, and the positions below it (within the span
/// asked for) that hold no committed event.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FeedHead {
    pub head: i64,
    pub missing: Vec<i64>,
}

/// The events of one organization a stream replays: those after the id `after` (every one
/// when `None`), at positions up to `through` and not among `pending` (events without a position
/// count as old), of the listed types only when any are; oldest id first.
#[derive(Debug, Clone, Default)]
pub struct ReplayQuery {
    pub organization: String,
    pub after: Option<String>,
    pub through: i64,
    pub pending: Vec<i64>,
    pub types: Vec<String>,
    pub limit: i64,
}

#[async_trait]
pub trait EventFeed {
    /// The newest position (0 when there is no event), and which of the `span` positions below
    /// it hold no committed event now.
    async fn feed_head(&mut self, span: i64) -> Result<FeedHead>;

    /// Events past position `after` or at one of the `missing` positions, by position, at most
    /// `limit`.
    async fn feed_after(
        &mut self,
        after: i64,
        missing: &[i64],
        limit: i64,
    ) -> Result<Vec<FeedEvent>>;

    /// A page of the events a stream replays (see [`ReplayQuery`]).
    async fn feed_replay(&mut self, query: &ReplayQuery) -> Result<Vec<EventRecord>>;
}

/// The column that holds an event's position on each engine.
pub(crate) const fn position_column(dialect: crate::Dialect) -> &'static str {
    match dialect {
        crate::Dialect::Sqlite => "rowid",
        crate::Dialect::Postgres => "position",
    }
}

/// The positions in `(head - span, head]` that `present` (ascending) does not hold.
pub(crate) fn missing_positions(head: i64, span: i64, present: &[i64]) -> Vec<i64> {
    let from = (head - span + 1).max(1);
    let mut present = present.iter().copied().peekable();
    (from..=head)
        .filter(|&p| {
            while present.next_if(|&q| q < p).is_some() {}
            present.next_if_eq(&p).is_none()
        })
        .collect()
}

/// Tells readers of the feed that units appending events have committed: a counter that moves
/// on every such commit. Cheap to clone; every clone is the same signal.
#[derive(Clone)]
pub struct EventCommits {
    sender: Arc<watch::Sender<u64>>,
}

impl Default for EventCommits {
    fn default() -> Self {
        EventCommits {
            sender: Arc::new(watch::channel(0).0),
        }
    }
}

impl EventCommits {
    /// A unit that appended events has committed (or, from a listener, may have).
    pub(crate) fn committed(&self) {
        self.sender.send_modify(|n| *n = n.wrapping_add(1));
    }

    fn subscribe(&self) -> watch::Receiver<u64> {
        self.sender.subscribe()
    }
}

/// A reader's wake-ups: [`EventCommitWatch::changed`] returns after commits that appended
/// events (several commits may wake it once). On PostgreSQL it also holds the listener that
/// hears other processes' commits, stopped when the watch is dropped.
pub struct EventCommitWatch {
    receiver: watch::Receiver<u64>,
    _listener: Option<AbortOnDrop>,
}

impl EventCommitWatch {
    pub(crate) fn new(
        commits: &EventCommits,
        listener: Option<tokio::task::JoinHandle<()>>,
    ) -> Self {
        EventCommitWatch {
            receiver: commits.subscribe(),
            _listener: listener.map(AbortOnDrop),
        }
    }

    /// Waits for the next commit that appended events. Never returns while nothing commits.
    pub async fn changed(&mut self) {
        if self.receiver.changed().await.is_err() {
            // The store is gone: nothing will ever commit again.
            std::future::pending::<()>().await;
        }
    }
}

struct AbortOnDrop(tokio::task::JoinHandle<()>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// The SQL of [`EventFeed`], written once for both engines around their position column.
macro_rules! impl_event_feed {
    ($tx:ty) => {
        #[async_trait::async_trait]
        impl $crate::event_feed::EventFeed for $tx {
            async fn feed_head(
                &mut self,
                span: i64,
            ) -> $crate::Result<$crate::event_feed::FeedHead> {
                let position = $crate::event_feed::position_column(<$tx>::DIALECT);
                let head: Option<i64> = sqlx::query_scalar(sqlx::AssertSqlSafe(format!(
                    "SELECT MAX({position}) FROM events"
                )))
                .fetch_one(self.conn().await?)
                .await?;
                let head = head.unwrap_or(0);
                let present: Vec<i64> = sqlx::query_scalar(sqlx::AssertSqlSafe(format!(
                    "SELECT {position} FROM events WHERE {position} > $1 AND {position} <= $2 \
                     ORDER BY {position}"
                )))
                .bind(head - span)
                .bind(head)
                .fetch_all(self.conn().await?)
                .await?;
                Ok($crate::event_feed::FeedHead {
                    head,
                    missing: $crate::event_feed::missing_positions(head, span, &present),
                })
            }

            async fn feed_after(
                &mut self,
                after: i64,
                missing: &[i64],
                limit: i64,
            ) -> $crate::Result<Vec<$crate::event_feed::FeedEvent>> {
                let position = $crate::event_feed::position_column(<$tx>::DIALECT);
                let mut sql = sqlx::QueryBuilder::new(format!(
                    "SELECT {position} AS position, id, organization_id, type, payload, created_at \
                     FROM events WHERE {position} > "
                ));
                sql.push_bind(after);
                if !missing.is_empty() {
                    sql.push(format!(" OR {position} IN ("));
                    let mut list = sql.separated(", ");
                    for p in missing {
                        list.push_bind(*p);
                    }
                    sql.push(")");
                }
                sql.push(format!(" ORDER BY {position} LIMIT "));
                sql.push_bind(limit);
                Ok(sql.build_query_as().fetch_all(self.conn().await?).await?)
            }

            async fn feed_replay(
                &mut self,
                q: &$crate::event_feed::ReplayQuery,
            ) -> $crate::Result<Vec<$crate::events::EventRecord>> {
                let position = $crate::event_feed::position_column(<$tx>::DIALECT);
                let mut sql = sqlx::QueryBuilder::new(
                    "SELECT id, organization_id, type, payload, created_at FROM events \
                     WHERE organization_id = ",
                );
                sql.push_bind(q.organization.clone());
                if let Some(after) = &q.after {
                    sql.push(" AND id > ").push_bind(after.clone());
                }
                sql.push(format!(" AND ({position} IS NULL OR ({position} <= "));
                sql.push_bind(q.through);
                if !q.pending.is_empty() {
                    sql.push(format!(" AND {position} NOT IN ("));
                    let mut list = sql.separated(", ");
                    for p in &q.pending {
                        list.push_bind(*p);
                    }
                    sql.push(")");
                }
                sql.push("))");
                if !q.types.is_empty() {
                    sql.push(" AND type IN (");
                    let mut list = sql.separated(", ");
                    for t in &q.types {
                        list.push_bind(t.clone());
                    }
                    sql.push(")");
                }
                sql.push(" ORDER BY id LIMIT ").push_bind(q.limit);
                Ok(sql.build_query_as().fetch_all(self.conn().await?).await?)
            }
        }
    };
}
pub(crate) use impl_event_feed;

#[cfg(test)]
mod tests {
    use super::missing_positions;

    #[test]
    fn missing_positions_are_the_holes_below_the_head() {
        assert_eq!(missing_positions(0, 10, &[]), Vec::<i64>::new());
        assert_eq!(
            missing_positions(5, 10, &[1, 2, 3, 4, 5]),
            Vec::<i64>::new()
        );
        assert_eq!(missing_positions(6, 10, &[1, 3, 6]), vec![2, 4, 5]);
        // Only within the span.
        assert_eq!(missing_positions(10, 3, &[10]), vec![8, 9]);
        assert_eq!(missing_positions(3, 10, &[]), vec![1, 2, 3]);
    }
}
