//! Domain events (the append-only fact log) and the outbox the relay works through.

use async_trait::async_trait;
use serde_json::Value;
use sqlx::types::Json;

use crate::Result;

#[derive(Debug, Clone, sqlx::FromRow)]
pub struct EventRecord {
    pub id: String,
    pub organization_id: Option<String>,
    #[sqlx(rename = "type")]
    pub event_type: String,
    pub payload: Json<Value>,
    pub created_at: i64,
}

/// Which events a read wants. `organization: None` reads the whole instance.
#[derive(Debug, Clone, Default)]
pub struct EventQuery {
    pub organization: Option<String>,
    pub event_type: Option<String>,
    /// Only events newer than this id, oldest first; without it, newest first.
    pub after: Option<String>,
    /// Events the reader may not see, left out of the page and of the total.
    pub left_out: LeftOut,
    pub limit: i64,
    pub offset: i64,
}

/// Events a read leaves out: those of one of `event_types` whose payload's `documentType` is
/// one of `document_types` (an event without a `documentType` stays). Nothing is left out
/// when either list is empty.
#[derive(Debug, Clone, Default)]
pub struct LeftOut {
    pub event_types: Vec<String>,
    pub document_types: Vec<String>,
}

impl LeftOut {
    fn is_empty(&self) -> bool {
        self.event_types.is_empty() || self.document_types.is_empty()
    }

    /// Appends ` AND NOT (...)` to a `WHERE` of `events`, each value bound. `document_type`
    /// is the engine's expression for the payload's `documentType` as text.
    pub(crate) fn push_condition<DB: sqlx::Database>(
        &self,
        sql: &mut sqlx::QueryBuilder<DB>,
        document_type: &str,
    ) where
        for<'t> String: sqlx::Encode<'t, DB> + sqlx::Type<DB>,
    {
        if self.is_empty() {
            return;
        }
        sql.push(" AND NOT (type IN (");
        let mut types = sql.separated(", ");
        for t in &self.event_types {
            types.push_bind(t.clone());
        }
        // A payload without `documentType` gives NULL: made '' (no type's name) so that the
        // condition is false, not NULL, and the event stays.
        sql.push(") AND COALESCE(")
            .push(document_type)
            .push(", '') IN (");
        let mut names = sql.separated(", ");
        for t in &self.document_types {
            names.push_bind(t.clone());
        }
        sql.push("))");
    }
}

pub(crate) const OUTBOX_BACKLOG_SQL: &str =
    "SELECT COUNT(*) FROM outbox WHERE processed_at IS NULL";

#[async_trait]
pub trait Events {
    /// Appends an event; its outbox row is written with it, in the same statement.
    async fn append_event(&mut self, event: &EventRecord) -> Result<()>;
    /// Appends many events, in order, in multi-row statements (one per
    /// [`EVENTS_PER_STATEMENT`]); each gets its outbox row as with
    /// [`Events::append_event`].
    async fn append_events(&mut self, events: &[EventRecord]) -> Result<()>;
    async fn event(&mut self, id: &str) -> Result<Option<EventRecord>>;
    /// A page of events and the total that matches.
    async fn events(&mut self, query: &EventQuery) -> Result<(Vec<EventRecord>, i64)>;
    /// Up to `limit` events whose outbox row is unprocessed, oldest first. On PostgreSQL the
    /// rows are locked for the unit of work, and rows another relay holds are skipped.
    async fn claim_outbox(&mut self, limit: i64) -> Result<Vec<EventRecord>>;
    async fn mark_processed(&mut self, event_ids: &[String], now: i64) -> Result<()>;
    /// How many outbox rows wait for the relay.
    async fn outbox_backlog(&mut self) -> Result<i64>;
}

/// Events per statement of [`Events::append_events`]: 5 binds a row, far below both engines'
/// bind limits.
pub const EVENTS_PER_STATEMENT: usize = 500;

/// [`Events::append_event`] (a trigger writes the outbox row): id, organization, type, payload,
/// at. A unit that runs it through sqlx calls `UnitOfWork::appended_events` after.
pub(crate) const APPEND_EVENT_SQL: &str = "INSERT INTO events (id, organization_id, type, payload, \
     created_at) VALUES ($1, $2, $3, $4, $5)";

macro_rules! impl_events {
    ($tx:ty) => {
        #[async_trait::async_trait]
        impl $crate::events::Events for $tx {
            async fn append_event(&mut self, e: &$crate::events::EventRecord) -> $crate::Result<()> {
                if let Some(direct) = self.direct().await? {
                    return direct.append_event(e);
                }
                sqlx::query($crate::events::APPEND_EVENT_SQL)
                .bind(&e.id)
                .bind(&e.organization_id)
                .bind(&e.event_type)
                .bind(&e.payload)
                .bind(e.created_at)
                .execute(self.conn().await?)
                .await?;
                self.appended_events();
                Ok(())
            }

            async fn append_events(&mut self, events: &[$crate::events::EventRecord]) -> $crate::Result<()> {
                if let Some(direct) = self.direct().await? {
                    // In-process: one cached statement per event costs less than building
                    // a statement text per batch size.
                    return events.iter().try_for_each(|e| direct.append_event(e));
                }
                for chunk in events.chunks($crate::events::EVENTS_PER_STATEMENT) {
                    let mut insert = sqlx::QueryBuilder::new("");
                    $crate::documents::push_events!(insert, chunk);
                    insert.build().execute(self.conn().await?).await?;
                }
                if !events.is_empty() {
                    self.appended_events();
                }
                Ok(())
            }

            async fn event(&mut self, id: &str) -> $crate::Result<Option<$crate::events::EventRecord>> {
                Ok(sqlx::query_as("SELECT * FROM events WHERE id = $1")
                    .bind(id)
                    .fetch_optional(self.conn().await?)
                    .await?)
            }

            async fn events(
                &mut self,
                q: &$crate::events::EventQuery,
            ) -> $crate::Result<(Vec<$crate::events::EventRecord>, i64)> {
                let filter = |select: &str| {
                    let mut sql = sqlx::QueryBuilder::new(select);
                    sql.push(" WHERE 1 = 1");
                    if let Some(org) = &q.organization {
                        sql.push(" AND organization_id = ").push_bind(org.clone());
                    }
                    if let Some(t) = &q.event_type {
                        sql.push(" AND type = ").push_bind(t.clone());
                    }
                    if let Some(after) = &q.after {
                        sql.push(" AND id > ").push_bind(after.clone());
                    }
                    let document_type = match <$tx>::DIALECT {
                        $crate::Dialect::Sqlite => "json_extract(payload, '$.documentType')",
                        $crate::Dialect::Postgres => "payload->>'documentType'",
                    };
                    q.left_out.push_condition(&mut sql, document_type);
                    sql
                };
                let total: i64 = filter("SELECT COUNT(*) FROM events")
                    .build_query_scalar()
                    .fetch_one(self.conn().await?)
                    .await?;
                let mut page = filter("SELECT * FROM events");
                page.push(if q.after.is_some() { " ORDER BY id ASC" } else { " ORDER BY id DESC" });
                page.push(" LIMIT ").push_bind(q.limit).push(" OFFSET ").push_bind(q.offset);
                let rows = page.build_query_as().fetch_all(self.conn().await?).await?;
                Ok((rows, total))
            }

            async fn claim_outbox(&mut self, limit: i64) -> $crate::Result<Vec<$crate::events::EventRecord>> {
                let lock = match <$tx>::DIALECT {
                    $crate::Dialect::Postgres => " FOR UPDATE OF o SKIP LOCKED",
                    // The single writer already excludes every other relay.
                    $crate::Dialect::Sqlite => "",
                };
                let sql = format!(
                    "SELECT e.* FROM outbox o JOIN events e ON e.id = o.event_id \
                     WHERE o.processed_at IS NULL ORDER BY o.created_at, o.event_id LIMIT $1{lock}"
                );
                Ok(sqlx::query_as(sqlx::AssertSqlSafe(sql))
                    .bind(limit)
                    .fetch_all(self.conn().await?)
                    .await?)
            }

            async fn mark_processed(&mut self, event_ids: &[String], now: i64) -> $crate::Result<()> {
                for chunk in event_ids.chunks(500) {
                    let mut sql = sqlx::QueryBuilder::new("UPDATE outbox SET processed_at = ");
                    sql.push_bind(now).push(" WHERE event_id IN (");
                    let mut ids = sql.separated(", ");
                    for id in chunk {
                        ids.push_bind(id.clone());
                    }
                    sql.push(")");
                    sql.build().execute(self.conn().await?).await?;
                }
                Ok(())
            }

            async fn outbox_backlog(&mut self) -> $crate::Result<i64> {
                // Asked by every worker tick before it takes the writer.
                if let Some(points) = self.point_reads() {
                    return points.outbox_backlog();
                }
                Ok(sqlx::query_scalar($crate::events::OUTBOX_BACKLOG_SQL)
                    .fetch_one(self.conn().await?)
                    .await?)
            }
        }
    };
}
pub(crate) use impl_events;
