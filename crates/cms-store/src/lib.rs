//! Storage: one boundary, two engines.
//!
//! The service layer talks to a [`Store`] and to the units of work ([`Tx`]) it hands out. Each
//! concept of the domain has a module here (users, sessions, organizations, roles, API keys,
//! invitations, e-mail tokens, preferences, preview tokens, plugin settings, documents,
//! references, presence, assets, webhook endpoints, ...)
//! with its record types and a repository trait; the SQL in those modules is written once in the
//! dialect both engines understand (`$1` placeholders, `ON CONFLICT`, `RETURNING`) and
//! instantiated for the SQLite and the PostgreSQL unit of work. Where the dialects differ the
//! engine module says so.
//!
//! Architecture invariant: only this crate writes SQL. It decides nothing about access: it
//! stores and fetches exactly what it is asked to.

mod error;
mod postgres;
mod sqlite;
mod unit;

pub mod api_keys;
pub mod archive;
pub mod assets;
pub mod audit;
pub mod change_sets;
pub mod documents;
pub mod event_feed;
pub mod events;
pub mod field_indexes;
pub mod filter_sql;
pub mod identities;
pub mod instance;
pub mod invitations;
pub mod jobs;
pub mod organizations;
pub mod plugin_settings;
pub mod preferences;
pub mod presence;
pub mod preview_tokens;
pub mod rate_limits;
pub mod references;
pub mod roles;
pub mod schedules;
pub mod search;
pub mod sessions;
pub mod two_factor;
pub mod user_tokens;
pub mod users;
pub mod versions;
pub mod webhooks;

use std::sync::Arc;

use async_trait::async_trait;

pub use error::{Result, StoreError};
pub use sqlx::types::Json;

/// The SQL engine behind a store.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dialect {
    Sqlite,
    Postgres,
}

/// How one of a store's connection pools is used right now (GET /metrics, docs/METRICS.md).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PoolUse {
    /// Which pool: `write` and `read` on both engines, and `point_read` on SQLite (its
    /// connections for the hottest lookups, off sqlx).
    pub pool: &'static str,
    /// Connections lent to a unit of work now.
    pub in_use: u32,
    /// Open connections waiting for a unit.
    pub idle: u32,
    /// The most connections the pool opens (`point_read`: keeps; it opens more under a burst
    /// and closes them after).
    pub max: u32,
}

/// A database: a source of units of work.
#[async_trait]
pub trait Store: Send + Sync + 'static {
    fn dialect(&self) -> Dialect;

    /// How each connection pool is used now: a snapshot read from memory, no statement.
    fn pool_use(&self) -> Vec<PoolUse>;

    /// Applies the pending migrations of this engine. Safe to run from several processes at
    /// once (PostgreSQL takes an advisory lock; SQLite has one writer).
    async fn migrate(&self) -> Result<()>;

    /// A trivial round trip, for health checks.
    async fn ping(&self) -> Result<()>;

    /// A unit of work for reads. It borrows its connection at its first statement, runs
    /// without a transaction, and must not write nor lock rows (its connections are read-only;
    /// `FOR UPDATE` reads take a write unit). Each
    /// statement sees a consistent snapshot of its own; two statements of one unit may see
    /// different ones (a write committed between them), on both engines: a read that needs one
    /// snapshot across statements takes a write unit, or asks in one statement.
    async fn read(&self) -> Result<Box<dyn Tx>>;

    /// A unit of work that may write: a transaction, committed with [`Tx::commit`] and rolled
    /// back when dropped without it. On SQLite it holds the single writer from its first
    /// statement (`BEGIN IMMEDIATE`), so read-then-write never fails half way with SQLITE_BUSY.
    /// After any error the unit must be abandoned: PostgreSQL refuses every further statement
    /// of a transaction that failed.
    async fn write(&self) -> Result<Box<dyn Tx>>;

    /// Builds, when missing, what serves `where` and `sort` on the indexed fields of a document
    /// type, for both the draft and the published copy (see [`field_indexes`]): without
    /// blocking reads, and writes only for moments. `fields` are declared paths (identifiers,
    /// locale tags) with their kinds. Long on a large table: run it beside the service.
    async fn ensure_field_indexes(
        &self,
        doc_type: &str,
        fields: &field_indexes::FieldPaths,
    ) -> Result<field_indexes::IndexBuild>;

    /// Drops what served fields no type in `types` indexes any more (fields removed or opted
    /// out, types removed, shapes of earlier versions). How many objects it dropped.
    async fn drop_unwanted_field_indexes(
        &self,
        types: &[crate::field_indexes::IndexedType],
    ) -> Result<usize>;

    /// Closes every connection; waits for those in use to be returned.
    async fn close(&self);

    /// Wake-ups for readers of new events ([`event_feed`]): the watch changes after every
    /// commit in this process of a unit that appended events, and on PostgreSQL after such a
    /// commit in any process (a `LISTEN` on a connection of its own, opened again when lost,
    /// for as long as the watch lives). Call it inside a Tokio runtime.
    fn watch_event_commits(&self) -> event_feed::EventCommitWatch;

    /// A read unit acting for `organization_id` (see [`Tx::act_for`]).
    async fn read_for(&self, organization_id: &str) -> Result<Box<dyn Tx>> {
        let mut tx = self.read().await?;
        tx.act_for(organization_id).await?;
        Ok(tx)
    }

    /// A write unit acting for `organization_id` (see [`Tx::act_for`]).
    async fn write_for(&self, organization_id: &str) -> Result<Box<dyn Tx>> {
        let mut tx = self.write().await?;
        tx.act_for(organization_id).await?;
        Ok(tx)
    }

    /// A read unit serving public asset delivery (see [`Tx::act_for_delivery`]).
    async fn read_for_delivery(&self) -> Result<Box<dyn Tx>> {
        let mut tx = self.read().await?;
        tx.act_for_delivery().await?;
        Ok(tx)
    }

    /// A read unit that sees one state of the whole database from its first statement to its
    /// end, however long it runs, while writers go on (`cms export`): SQLite reads inside one
    /// transaction on a connection of its own; PostgreSQL runs `REPEATABLE READ, READ ONLY`.
    /// It starts instance-wide ([`Tx::act_instance_wide`]) and may act for one organization
    /// after another ([`Tx::act_for`]).
    async fn snapshot(&self) -> Result<Box<dyn Tx>>;

    /// A read unit for work that spans organizations (see [`Tx::act_instance_wide`]).
    async fn read_instance_wide(&self) -> Result<Box<dyn Tx>> {
        let mut tx = self.read().await?;
        tx.act_instance_wide().await?;
        Ok(tx)
    }

    /// A write unit for work that spans organizations (see [`Tx::act_instance_wide`]).
    async fn write_instance_wide(&self) -> Result<Box<dyn Tx>> {
        let mut tx = self.write().await?;
        tx.act_instance_wide().await?;
        Ok(tx)
    }
}

/// A unit of work: every repository of the domain, on one connection.
#[async_trait]
pub trait Tx:
    users::Users
    + sessions::Sessions
    + organizations::Organizations
    + roles::Roles
    + api_keys::ApiKeys
    + documents::Documents
    + versions::Versions
    + references::References
    + events::Events
    + event_feed::EventFeed
    + jobs::Jobs
    + schedules::Schedules
    + instance::Instance
    + rate_limits::RateLimits
    + invitations::Invitations
    + user_tokens::UserTokens
    + two_factor::TwoFactor
    + identities::UserIdentities
    + preferences::Preferences
    + preview_tokens::PreviewTokens
    + presence::Presence
    + plugin_settings::PluginSettings
    + assets::Assets
    + change_sets::ChangeSets
    + search::Search
    + webhooks::Webhooks
    + audit::Audit
    + archive::Archive
    + Send
{
    /// Makes the writes of this unit durable. A read unit commits trivially.
    async fn commit(self: Box<Self>) -> Result<()>;

    /// Names the organization this unit acts for, before its first statement on documents,
    /// versions or references. PostgreSQL's row-level security policies read it: rows of that
    /// organization and of its children are visible, only rows of that organization may be
    /// written, and a unit that never names one sees and writes nothing there. SQLite has no
    /// second wall: there it changes nothing.
    async fn act_for(&mut self, organization_id: &str) -> Result<()>;

    /// Marks this read unit as serving public asset delivery (/media): on PostgreSQL it may then read
    /// any asset row by id (policy `assets_delivery`), and nothing else beyond what `act_for` allows.
    /// SQLite has no second wall: there it changes nothing.
    async fn act_for_delivery(&mut self) -> Result<()>;

    /// Holds `key` until this unit ends (commit, rollback or drop): a unit asking for a key
    /// another unit holds waits until that one ends. For a check that must see the writes of
    /// every unit that made the same check before it (a published slug is unique, CONTRACT.md
    /// section 2): without it, two units could each find the value free and both write it. On
    /// PostgreSQL a transaction-scoped advisory lock on a 64-bit hash of the key (a collision
    /// only makes two unrelated units wait on each other); SQLite's write units already run one
    /// at a time, so there it changes nothing. Units that hold several keys take them in one
    /// order (sorted), so two of them never wait on each other.
    async fn hold_until_end(&mut self, key: &str) -> Result<()>;

    /// Declares this unit's work as spanning organizations: claiming due jobs, relaying the
    /// outbox, resolving a credential by its hash, sign-up, a user's memberships, instance-wide
    /// listings. On PostgreSQL it may then read and write the rows of every organization in
    /// roles, members, API keys, invitations, sessions, events, the outbox, jobs and schedules
    /// (the `*_instance` policies of migration 0010), and documents stay closed. It holds only
    /// while the unit names no organization: [`Tx::act_for`] confines the unit to that
    /// organization again, and this clears a named one. A unit that declares neither sees none
    /// of those rows. SQLite has no second wall: there it changes nothing.
    async fn act_instance_wide(&mut self) -> Result<()>;
}

/// Opens the database a URL names: `sqlite://PATH` (created when missing) or `postgres://...`.
/// It does not migrate: call [`Store::migrate`].
pub async fn connect(url: &str) -> Result<Arc<dyn Store>> {
    connect_with_migration_url(url, None).await
}

/// Like [`connect`], with units of work running as the login of `url` while migrations and
/// index creation run as the login of `migration_url` (PostgreSQL: the tables' owner, so the
/// serving login need neither own them nor be able to leave their row-level security). SQLite
/// has one file and no logins: `migration_url` is ignored there.
pub async fn connect_with_migration_url(
    url: &str,
    migration_url: Option<&str>,
) -> Result<Arc<dyn Store>> {
    if url.starts_with("sqlite:") {
        Ok(Arc::new(sqlite::SqliteStore::connect(url).await?))
    } else if url.starts_with("postgres:") || url.starts_with("postgresql:") {
        Ok(Arc::new(
            postgres::PgStore::connect(url, migration_url).await?,
        ))
    } else {
        Err(StoreError::Config(format!(
            "unsupported database URL `{}`: use sqlite://PATH or postgres://...",
            url.split(':').next().unwrap_or_default()
        )))
    }
}

/// Writes a consistent copy of the SQLite database `url` names to the new file `target` while
/// the service keeps running (CONTRACT.md section 19). PostgreSQL has its own tools: refused
/// with the one to use.
pub async fn backup(url: &str, target: &std::path::Path) -> Result<()> {
    if url.starts_with("sqlite:") {
        sqlite::backup::backup(url, target).await
    } else {
        Err(StoreError::Config(
            "`cms backup` copies SQLite databases; on PostgreSQL use pg_dump (for example \
             `pg_dump --format=custom --file=cms.dump \"$CMS_DATABASE_URL\"`), which takes a \
             consistent snapshot while the service runs"
                .into(),
        ))
    }
}

/// Implements every repository trait for an engine's unit of work. The type must implement
/// [`unit::UnitOfWork`], which every repository macro's SQL calls (and only it).
macro_rules! impl_repositories {
    ($tx:ty) => {
        const _: () = {
            // The shared SQL reaches the unit only through its `UnitOfWork` methods.
            use $crate::unit::UnitOfWork as _;
            const fn is_a_unit_of_work<T: $crate::unit::UnitOfWork>() {}
            is_a_unit_of_work::<$tx>();

            $crate::users::impl_users!($tx);
            $crate::sessions::impl_sessions!($tx);
            $crate::organizations::impl_organizations!($tx);
            $crate::roles::impl_roles!($tx);
            $crate::api_keys::impl_api_keys!($tx);
            $crate::instance::impl_instance!($tx);
            $crate::rate_limits::impl_rate_limits!($tx);
            $crate::invitations::impl_invitations!($tx);
            $crate::documents::impl_documents!($tx);
            $crate::versions::impl_versions!($tx);
            $crate::references::impl_references!($tx);
            $crate::events::impl_events!($tx);
            $crate::event_feed::impl_event_feed!($tx);
            $crate::jobs::impl_jobs!($tx);
            $crate::schedules::impl_schedules!($tx);
            $crate::user_tokens::impl_user_tokens!($tx);
            $crate::two_factor::impl_two_factor!($tx);
            $crate::identities::impl_user_identities!($tx);
            $crate::preferences::impl_preferences!($tx);
            $crate::preview_tokens::impl_preview_tokens!($tx);
            $crate::presence::impl_presence!($tx);
            $crate::plugin_settings::impl_plugin_settings!($tx);
            $crate::assets::impl_assets!($tx);
            $crate::change_sets::impl_change_sets!($tx);
            $crate::search::impl_search!($tx);
            $crate::webhooks::impl_webhooks!($tx);
            $crate::audit::impl_audit!($tx);
            $crate::archive::impl_archive!($tx);
        };
    };
}
pub(crate) use impl_repositories;

#[cfg(any(test, feature = "testing"))]
pub mod testing;

/// A stable 64-bit hash (FNV-1a) for index names; not for security.
pub(crate) fn fnv1a(text: &str) -> u64 {
    text.bytes().fold(0xcbf29ce484222325, |hash, b| {
        (hash ^ u64::from(b)).wrapping_mul(0x100000001b3)
    })
}

#[cfg(test)]
mod conformance;
