//! The production engine: PostgreSQL, shared by several instances.
//!
//! Write units are transactions on one pool, their row-level security settings
//! transaction-local and sent in the round trip of their `BEGIN`; read units run without a
//! transaction on a pool of their own ([`reads`]).

mod listen;
mod reads;

use async_trait::async_trait;
use sqlx::postgres::{PgConnectOptions, PgConnection, PgPool, PgPoolOptions};
use sqlx::{Connection, Executor, Postgres, Transaction};

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use self::reads::{Declared, ReadPool, ReadUnit};
use crate::event_feed::{EventCommitWatch, EventCommits};
use crate::filter_sql::GeneratedColumns;
use crate::unit::UnitOfWork;
use crate::{Dialect, PoolUse, Result, Store, Tx};

pub(crate) static MIGRATOR: sqlx::migrate::Migrator = sqlx::migrate!("./migrations/postgres");

/// The role the application's queries run as when the configured login could bypass row-level
/// security (a superuser or a `BYPASSRLS` role): migration 0005 creates it, without that power.
pub(crate) const APPLICATION_ROLE: &str = "cms_app";

/// Connections per pool: write units and read units each have their own.
const POOL_SIZE: u32 = 16;

pub(crate) struct PgStore {
    /// Write units run here, under row-level security.
    pool: PgPool,
    /// Read units run here, under row-level security.
    reads: Arc<ReadPool>,
    /// For migrations and index creation, which need the owner's rights: a fresh connection as
    /// the owning login each time (the migration URL when one is configured, else the serving
    /// login), never one of the pool's.
    options: PgConnectOptions,
    /// The generated columns of indexed fields known to exist, shared with every unit of work.
    generated: Arc<GeneratedColumns>,
    /// The serving login, for the listener of event commits.
    serving: PgConnectOptions,
    /// Told after the commit of each unit of this process that appended events, and by the
    /// listeners for those of every process.
    commits: EventCommits,
}

impl PgStore {
    /// `url` is the login units of work run as; `owner_url`, when given, the login that owns
    /// the tables, for migrations and index creation (see docs/CONFIGURATION.md).
    pub(crate) async fn connect(url: &str, owner_url: Option<&str>) -> Result<Self> {
        Self::connect_sized(url, owner_url, POOL_SIZE).await
    }

    /// [`PgStore::connect`] with `size` connections per pool (tests use one).
    pub(crate) async fn connect_sized(
        url: &str,
        owner_url: Option<&str>,
        size: u32,
    ) -> Result<Self> {
        let serving: PgConnectOptions = url.parse()?;
        let options: PgConnectOptions = match owner_url {
            Some(owner) => owner.parse()?,
            None => serving.clone(),
        };
        // Fail now, not at the first request, when the server cannot be reached.
        PgConnection::connect_with(&serving).await?.close().await?;
        if owner_url.is_some() {
            PgConnection::connect_with(&options).await?.close().await?;
        }
        let reads = Arc::new(ReadPool::new(serving.clone(), size));
        let listening = serving.clone();
        let pool = PgPoolOptions::new()
            .max_connections(size)
            // A ping per borrow is a network round trip on every unit of work; a connection
            // the server dropped fails its next statement and is discarded instead.
            .test_before_acquire(false)
            .after_connect(|conn, _| Box::pin(drop_rls_bypass(conn)))
            // Lazy: the first connection is opened after `migrate` has created the role.
            .connect_lazy_with(serving);
        Ok(PgStore {
            pool,
            reads,
            options,
            generated: Arc::default(),
            serving: listening,
            commits: EventCommits::default(),
        })
    }

    /// The generated columns this store knows to exist.
    #[cfg(test)]
    pub(crate) fn generated_columns(&self) -> &GeneratedColumns {
        &self.generated
    }

    async fn admin(&self) -> Result<PgConnection> {
        Ok(PgConnection::connect_with(&self.options).await?)
    }

    /// A transaction that names its acting organization in the round trip of its `BEGIN`,
    /// saving one round trip per unit of work. The id is written into the SQL text only when it
    /// is plainly an identifier (ours are UUIDs); anything else is bound as a parameter instead.
    async fn begin_acting(&self, organization_id: &str) -> Result<Box<dyn Tx>> {
        let plain = !organization_id.is_empty()
            && organization_id
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
        if !plain {
            let mut tx = self.write().await?;
            tx.act_for(organization_id).await?;
            return Ok(tx);
        }
        let begin =
            format!("BEGIN; SELECT set_config('{ACTING_ORGANIZATION}', '{organization_id}', true)");
        Ok(Box::new(self.unit(Unit::Write(
            begin_unit(&self.pool, Some(begin)).await?,
        ))))
    }
}

impl PgStore {
    /// A unit of work on `unit`.
    fn unit(&self, unit: Unit) -> PgTx {
        PgTx {
            unit,
            generated: self.generated.clone(),
            commits: self.commits.clone(),
            appended: false,
        }
    }

    /// A read unit declaring `declared`: no I/O until its first statement.
    fn read_unit(&self, declared: Declared) -> Box<dyn Tx> {
        Box::new(self.unit(Unit::Read(ReadUnit::new(self.reads.clone(), declared))))
    }

    /// A transaction declared instance-wide ([`Tx::act_instance_wide`]) in its `BEGIN`.
    async fn begin_instance_wide(&self) -> Result<Box<dyn Tx>> {
        let begin = format!(
            "BEGIN; SELECT set_config('{SCOPE}', 'instance', true), \
             set_config('{ACTING_ORGANIZATION}', '', true)"
        );
        Ok(Box::new(self.unit(Unit::Write(
            begin_unit(&self.pool, Some(begin)).await?,
        ))))
    }
}

/// The transaction-local setting row-level security reads (migration 0005).
const ACTING_ORGANIZATION: &str = "cms.organization_id";

/// The transaction-local setting that declares a unit's work as spanning organizations: the
/// policies `<table>_instance` (migration 0010) admit it while it names no organization.
const SCOPE: &str = "cms.scope";

/// The transaction-local setting that marks a unit serving public asset delivery: policy
/// `assets_delivery` (migration 0006) lets it read any asset row.
const DELIVERY: &str = "cms.delivery";

/// Opens a unit's transaction, `BEGIN` (or `begin`, a statement starting with one) included.
/// sqlx arms its rollback only once the server has answered the `BEGIN`: a unit dropped in
/// between (a client that hangs up) would hand its connection back to the pool still inside
/// the transaction, and the next unit to borrow it would run, and commit, inside it. So a
/// begin dropped before its answer finishes on a task of its own (docs/DECISIONS.md,
/// "Cancelled units of work"); once begun, a dropped transaction queues its `ROLLBACK`, which
/// the pool sends before lending the connection again.
async fn begin_unit(
    pool: &PgPool,
    begin: Option<String>,
) -> Result<Transaction<'static, Postgres>> {
    let pool = pool.clone();
    let begin = Box::pin(async move {
        match begin {
            Some(statement) => pool.begin_with(sqlx::AssertSqlSafe(statement)).await,
            None => pool.begin().await,
        }
    });
    let runtime = tokio::runtime::Handle::current();
    Ok(FinishedOnDrop {
        begin: Some(begin),
        runtime,
    }
    .await?)
}

type Begin = Pin<Box<dyn Future<Output = sqlx::Result<Transaction<'static, Postgres>>> + Send>>;

/// A begin that always runs to the server's answer. Polled in place, so a unit that is not
/// dropped pays nothing; dropped before the answer, it moves to a task of its own, where the
/// transaction it then yields is dropped, counted by sqlx, and so rolled back before reuse.
struct FinishedOnDrop {
    begin: Option<Begin>,
    runtime: tokio::runtime::Handle,
}

impl Future for FinishedOnDrop {
    type Output = sqlx::Result<Transaction<'static, Postgres>>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.get_mut();
        let Some(begin) = this.begin.as_mut() else {
            panic!("a begin polled after it finished");
        };
        let begun = std::task::ready!(begin.as_mut().poll(cx));
        this.begin = None;
        Poll::Ready(begun)
    }
}

impl Drop for FinishedOnDrop {
    fn drop(&mut self) {
        if let Some(begin) = self.begin.take() {
            self.runtime.spawn(begin);
        }
    }
}

/// Superusers and `BYPASSRLS` roles are exempt from row-level security, even with FORCE; a
/// login that is one of them switches to the application role, so the policies hold for every
/// query the service makes. A plain login owns the tables, and FORCE ROW LEVEL SECURITY
/// already binds it.
async fn drop_rls_bypass(conn: &mut PgConnection) -> std::result::Result<(), sqlx::Error> {
    let bypasses: bool = sqlx::query_scalar(
        "SELECT rolsuper OR rolbypassrls FROM pg_roles WHERE rolname = current_user",
    )
    .fetch_one(&mut *conn)
    .await?;
    if bypasses {
        conn.execute(sqlx::AssertSqlSafe(format!("SET ROLE {APPLICATION_ROLE}")))
            .await?;
    }
    Ok(())
}

#[async_trait]
impl Store for PgStore {
    fn dialect(&self) -> Dialect {
        Dialect::Postgres
    }

    /// The write units' sqlx pool and the read units' own pool ([`reads`]).
    fn pool_use(&self) -> Vec<PoolUse> {
        let idle = self.pool.num_idle() as u32;
        let (read_in_use, read_idle, read_max) = self.reads.usage();
        vec![
            PoolUse {
                pool: "write",
                in_use: self.pool.size().saturating_sub(idle),
                idle,
                max: self.pool.options().get_max_connections(),
            },
            PoolUse {
                pool: "read",
                in_use: read_in_use,
                idle: read_idle,
                max: read_max,
            },
        ]
    }

    async fn migrate(&self) -> Result<()> {
        // A one-connection pool rather than a bare connection: `Migrator::run` on a
        // `&mut PgConnection` is not `Send`-general enough for an async trait method.
        let admin = PgPoolOptions::new()
            .max_connections(1)
            .connect_with(self.options.clone())
            .await?;
        let outcome = MIGRATOR.run(&admin).await;
        admin.close().await;
        outcome?;
        Ok(())
    }

    async fn ping(&self) -> Result<()> {
        sqlx::query("SELECT 1").execute(&self.pool).await?;
        Ok(())
    }

    /// No transaction: each statement sees a snapshot of its own ([`reads`]).
    async fn read(&self) -> Result<Box<dyn Tx>> {
        Ok(self.read_unit(Declared::default()))
    }

    async fn write(&self) -> Result<Box<dyn Tx>> {
        Ok(Box::new(
            self.unit(Unit::Write(begin_unit(&self.pool, None).await?)),
        ))
    }

    async fn snapshot(&self) -> Result<Box<dyn Tx>> {
        let begin = format!(
            "BEGIN ISOLATION LEVEL REPEATABLE READ, READ ONLY; \
             SELECT set_config('{SCOPE}', 'instance', true), \
             set_config('{ACTING_ORGANIZATION}', '', true)"
        );
        Ok(Box::new(self.unit(Unit::Write(
            begin_unit(&self.pool, Some(begin)).await?,
        ))))
    }

    async fn ensure_field_indexes(
        &self,
        doc_type: &str,
        fields: &crate::field_indexes::FieldPaths,
    ) -> Result<crate::field_indexes::IndexBuild> {
        let mut admin = self.admin().await?;
        let built = crate::field_indexes::postgres::ensure(
            &mut admin,
            &self.pool,
            &self.generated,
            doc_type,
            fields,
        )
        .await;
        admin.close().await.ok();
        built
    }

    async fn drop_unwanted_field_indexes(
        &self,
        types: &[crate::field_indexes::IndexedType],
    ) -> Result<usize> {
        let wanted = crate::field_indexes::wanted_names(Dialect::Postgres, types);
        let mut admin = self.admin().await?;
        let dropped = crate::field_indexes::postgres::drop_unwanted(&mut admin, &wanted).await;
        admin.close().await.ok();
        dropped
    }

    /// Credential resolution opens one of these on every authenticated request: one round
    /// trip when an idle connection's session is already instance-wide ([`reads`]).
    async fn read_instance_wide(&self) -> Result<Box<dyn Tx>> {
        Ok(self.read_unit(Declared::instance_wide()))
    }

    async fn write_instance_wide(&self) -> Result<Box<dyn Tx>> {
        self.begin_instance_wide().await
    }

    async fn close(&self) {
        self.reads.close().await;
        self.pool.close().await;
    }

    /// This process's commits as they happen, and every process's through a listener that
    /// lives as long as the watch.
    fn watch_event_commits(&self) -> EventCommitWatch {
        let listener = listen::spawn(self.serving.clone(), self.commits.clone());
        EventCommitWatch::new(&self.commits, Some(listener))
    }

    async fn read_for(&self, organization_id: &str) -> Result<Box<dyn Tx>> {
        Ok(self.read_unit(Declared::acting_for(organization_id)))
    }

    async fn write_for(&self, organization_id: &str) -> Result<Box<dyn Tx>> {
        self.begin_acting(organization_id).await
    }

    async fn read_for_delivery(&self) -> Result<Box<dyn Tx>> {
        Ok(self.read_unit(Declared::delivery()))
    }
}

/// A unit of work: a transaction (write units), or statements on a read connection.
pub(crate) struct PgTx {
    unit: Unit,
    generated: Arc<GeneratedColumns>,
    commits: EventCommits,
    /// A statement of this unit appended events ([`UnitOfWork::appended_events`]).
    appended: bool,
}

enum Unit {
    /// The settings are transaction-local ([`Tx::act_for`]): they end with the transaction and
    /// never reach the next borrower of the connection.
    Write(Transaction<'static, Postgres>),
    Read(ReadUnit),
}

impl UnitOfWork for PgTx {
    type Connection = PgConnection;
    type Arguments = sqlx::postgres::PgArguments;

    const DIALECT: Dialect = Dialect::Postgres;

    /// `Documents::locate_document`, through the function of migration 0008 that row-level
    /// security lets see one row's organization and type from any unit of work.
    const LOCATE_DOCUMENT: &'static str = "SELECT located_organization_id AS organization_id, \
         located_type AS type FROM cms_locate_document($1)";

    /// The arguments for compiled SQL, in placeholder order.
    fn arguments(binds: Vec<crate::filter_sql::Bind>) -> Result<sqlx::postgres::PgArguments> {
        let mut args = sqlx::postgres::PgArguments::default();
        for bind in binds {
            bind.add_to_postgres(&mut args)
                .map_err(|e| crate::StoreError::Database(sqlx::Error::Encode(e)))?;
        }
        Ok(args)
    }

    #[inline]
    async fn conn(&mut self) -> Result<&mut PgConnection> {
        match &mut self.unit {
            Unit::Write(tx) => Ok(tx),
            Unit::Read(read) => read.conn().await,
        }
    }

    /// The generated columns list queries may use.
    #[inline]
    fn generated_columns(&self) -> Option<&GeneratedColumns> {
        Some(&self.generated)
    }

    /// PostgreSQL has no thread hop to save: every statement goes through the unit's connection.
    #[inline]
    fn point_reads(&self) -> Option<&crate::sqlite::PointReads> {
        None
    }

    /// Every statement goes through the transaction.
    #[inline]
    async fn direct(&mut self) -> Result<Option<crate::sqlite::Direct<'_>>> {
        Ok(None)
    }

    #[inline]
    fn appended_events(&mut self) {
        self.appended = true;
    }
}

#[async_trait]
impl Tx for PgTx {
    /// A read unit has nothing to commit: its statements ran outside a transaction.
    async fn commit(self: Box<Self>) -> Result<()> {
        if let Unit::Write(tx) = self.unit {
            tx.commit().await?;
            if self.appended {
                self.commits.committed();
            }
        }
        Ok(())
    }

    async fn act_for(&mut self, organization_id: &str) -> Result<()> {
        match &mut self.unit {
            Unit::Write(tx) => {
                sqlx::query("SELECT set_config($1, $2, true)")
                    .bind(ACTING_ORGANIZATION)
                    .bind(organization_id)
                    .execute(&mut **tx)
                    .await?;
            }
            Unit::Read(read) => read.declared_mut().organization_id = organization_id.to_string(),
        }
        Ok(())
    }

    async fn act_for_delivery(&mut self) -> Result<()> {
        match &mut self.unit {
            Unit::Write(tx) => {
                sqlx::query("SELECT set_config($1, 'on', true)")
                    .bind(DELIVERY)
                    .execute(&mut **tx)
                    .await?;
            }
            Unit::Read(read) => read.declared_mut().delivery = true,
        }
        Ok(())
    }

    /// A read unit writes nothing, so it has no check-then-write to order (and no transaction
    /// to hold a lock for): as on SQLite, nothing to do there.
    async fn hold_until_end(&mut self, key: &str) -> Result<()> {
        if let Unit::Write(tx) = &mut self.unit {
            sqlx::query("SELECT pg_advisory_xact_lock(hashtextextended($1, 0))")
                .bind(key)
                .execute(&mut **tx)
                .await?;
        }
        Ok(())
    }

    async fn act_instance_wide(&mut self) -> Result<()> {
        match &mut self.unit {
            Unit::Write(tx) => {
                sqlx::query("SELECT set_config($1, 'instance', true), set_config($2, '', true)")
                    .bind(SCOPE)
                    .bind(ACTING_ORGANIZATION)
                    .execute(&mut **tx)
                    .await?;
            }
            Unit::Read(read) => {
                let declared = read.declared_mut();
                declared.instance_wide = true;
                declared.organization_id.clear();
            }
        }
        Ok(())
    }
}

crate::impl_repositories!(PgTx);
