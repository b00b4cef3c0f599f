//! The hottest lookups of a read unit on SQLite, answered on the calling thread (and the
//! outbox backlog every worker tick asks for).
//!
//! sqlx runs every SQLite connection on a thread of its own and passes each statement and each
//! row over channels. For a lookup that SQLite answers from its page cache in microseconds, the
//! two thread wake-ups per statement cost more than the query: under load they took over half of
//! the CPU. The few statements on the path of every request (the API key or session behind the
//! credentials, a document by id) therefore run here, synchronously, on read-only connections
//! of our own. They are all point lookups through a primary or unique key, so they never hold a
//! runtime thread for long; everything else (lists, writes) stays on sqlx.
//!
//! The SQL is the same text the sqlx path runs (`$1` placeholders are positional in SQLite).

use std::path::PathBuf;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use rusqlite::{Connection, OpenFlags, OptionalExtension, Row};
use serde::de::DeserializeOwned;
use sqlx::types::Json;

use crate::Result;
use crate::api_keys::{KEY_GRANT_SQL, KeyGrantRecord};
use crate::documents::{DocumentRecord, document_sql};
use crate::events::OUTBOX_BACKLOG_SQL;
use crate::roles::{PUBLIC_GRANT_SQL, PublicGrantRecord};
use crate::sessions::{SESSION_GRANT_SQL, SessionFields, SessionGrantRecord};
use crate::users::UserRecord;

/// A small pool of read-only connections to the database file.
pub(crate) struct PointReads {
    path: PathBuf,
    idle: Mutex<Vec<Connection>>,
    /// Connections kept when returned; more are opened under a burst and closed after it.
    keep: usize,
    /// Connections running a lookup now (for the pool gauges of GET /metrics).
    lent: AtomicU32,
}

impl PointReads {
    pub(crate) fn new(path: PathBuf, keep: usize) -> Self {
        PointReads {
            path,
            idle: Mutex::new(Vec::new()),
            keep,
            lent: AtomicU32::new(0),
        }
    }

    /// Connections running a lookup, idle ones, and how many are kept.
    pub(crate) fn usage(&self) -> (u32, u32, u32) {
        let idle = self.idle.lock().map_or(0, |idle| idle.len());
        (
            self.lent.load(Ordering::Relaxed),
            idle as u32,
            self.keep as u32,
        )
    }

    fn with<T>(&self, f: impl FnOnce(&Connection) -> rusqlite::Result<T>) -> Result<T> {
        let idle = self.idle.lock().ok().and_then(|mut idle| idle.pop());
        let conn = match idle {
            Some(conn) => conn,
            None => self.open()?,
        };
        self.lent.fetch_add(1, Ordering::Relaxed);
        let result = f(&conn);
        self.lent.fetch_sub(1, Ordering::Relaxed);
        if let Ok(mut idle) = self.idle.lock()
            && idle.len() < self.keep
        {
            idle.push(conn);
        }
        Ok(result?)
    }

    fn open(&self) -> rusqlite::Result<Connection> {
        let flags = OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        let conn = Connection::open_with_flags(&self.path, flags)?;
        conn.busy_timeout(Duration::from_secs(5))?;
        Ok(conn)
    }

    pub(crate) fn key_grant(&self, key_hash: &str) -> Result<Option<KeyGrantRecord>> {
        self.with(|conn| {
            conn.prepare_cached(KEY_GRANT_SQL)?
                .query_row([key_hash], |row| {
                    Ok(KeyGrantRecord {
                        key_id: row.get("key_id")?,
                        organization_id: row.get("organization_id")?,
                        permissions: json(row, "permissions")?,
                        capabilities: optional_json(row, "capabilities")?,
                        expires_at: row.get("expires_at")?,
                        user: user(row)?,
                        member_role: row.get("member_role")?,
                        role_capabilities: optional_json(row, "role_capabilities")?,
                    })
                })
                .optional()
        })
    }

    pub(crate) fn public_grant(&self, slug: &str) -> Result<Option<PublicGrantRecord>> {
        self.with(|conn| {
            conn.prepare_cached(PUBLIC_GRANT_SQL)?
                .query_row([slug], |row| {
                    Ok(PublicGrantRecord {
                        organization_id: row.get("organization_id")?,
                        capabilities: optional_json(row, "capabilities")?,
                    })
                })
                .optional()
        })
    }

    pub(crate) fn session_grant(&self, token_hash: &str) -> Result<Option<SessionGrantRecord>> {
        self.with(|conn| {
            conn.prepare_cached(SESSION_GRANT_SQL)?
                .query_row([token_hash], |row| {
                    Ok(SessionGrantRecord {
                        session: SessionFields {
                            session_id: row.get("session_id")?,
                            active_organization_id: row.get("active_organization_id")?,
                            expires_at: row.get("expires_at")?,
                            ip_address: row.get("ip_address")?,
                            user_agent: row.get("user_agent")?,
                            session_created_at: row.get("session_created_at")?,
                            session_updated_at: row.get("session_updated_at")?,
                        },
                        user: user(row)?,
                        member_role: row.get("member_role")?,
                        role_capabilities: optional_json(row, "role_capabilities")?,
                        organization_requires_two_factor: row
                            .get("organization_requires_two_factor")?,
                        two_factor_enabled_at: row.get("two_factor_enabled_at")?,
                    })
                })
                .optional()
        })
    }

    pub(crate) fn outbox_backlog(&self) -> Result<i64> {
        self.with(|conn| {
            conn.prepare_cached(OUTBOX_BACKLOG_SQL)?
                .query_row([], |row| row.get(0))
        })
    }

    pub(crate) fn document(
        &self,
        organizations: &[String],
        id: &str,
    ) -> Result<Option<DocumentRecord>> {
        let params = std::iter::once(id).chain(organizations.iter().map(String::as_str));
        self.with(|conn| {
            conn.prepare_cached(&document_sql(organizations.len()))?
                .query_row(rusqlite::params_from_iter(params), document)
                .optional()
        })
    }
}

fn user(row: &Row) -> rusqlite::Result<UserRecord> {
    Ok(UserRecord {
        id: row.get("id")?,
        email: row.get("email")?,
        name: row.get("name")?,
        password_hash: row.get("password_hash")?,
        email_verified: row.get("email_verified")?,
        role: row.get("role")?,
        image: row.get("image")?,
        created_at: row.get("created_at")?,
        updated_at: row.get("updated_at")?,
    })
}

pub(super) fn document(row: &Row) -> rusqlite::Result<DocumentRecord> {
    Ok(DocumentRecord {
        id: row.get("id")?,
        organization_id: row.get("organization_id")?,
        doc_type: row.get("type")?,
        singleton: row.get("singleton")?,
        draft_data: json(row, "draft_data")?,
        published_data: optional_json(row, "published_data")?,
        published_hash: row.get("published_hash")?,
        revision: row.get("revision")?,
        created_by: row.get("created_by")?,
        updated_by: row.get("updated_by")?,
        created_at: row.get("created_at")?,
        updated_at: row.get("updated_at")?,
        published_at: row.get("published_at")?,
    })
}

/// A JSON column, stored as TEXT.
fn json<T: DeserializeOwned>(row: &Row, column: &str) -> rusqlite::Result<Json<T>> {
    optional_json(row, column)?.ok_or_else(|| {
        rusqlite::Error::InvalidColumnType(0, column.to_string(), rusqlite::types::Type::Null)
    })
}

fn optional_json<T: DeserializeOwned>(
    row: &Row,
    column: &str,
) -> rusqlite::Result<Option<Json<T>>> {
    let Some(text) = row.get_ref(column)?.as_str_or_null()? else {
        return Ok(None);
    };
    serde_json::from_str(text)
        .map(|value| Some(Json(value)))
        .map_err(|e| {
            rusqlite::Error::FromSqlConversionFailure(0, rusqlite::types::Type::Text, e.into())
        })
}
