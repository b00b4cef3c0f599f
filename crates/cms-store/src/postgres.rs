//! The production engine: PostgreSQL, shared by several instances.

use async_trait::async_trait;
use sqlx::postgres::{PgConnectOptions, PgConnection, PgPool, PgPoolOptions};
use sqlx::{Connection, Executor, Postgres, Transaction};

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use crate::filter_sql::GeneratedColumns;
use crate::unit::UnitOfWork;
use crate::{Dialect, Result, Store, StoreError, Tx};

static MIGRATOR: sqlx::migrate::Migrator = sqlx::migrate!("./migrations/postgres");

/// The role the application's queries run as when the configured login could bypass row-level
/// security (a superuser or a `BYPASSRLS` role): migration 0005 creates it, without that power.
pub(crate) const APPLICATION_ROLE: &str = "cms_app";

pub(crate) struct PgStore {
    /// Every unit of work runs here, under row-level security.
    pool: PgPool,
    /// For migrations and index creation, which need the owner's rights: a fresh connection as
    /// the owning login each time (the migration URL when one is configured, else the serving
    /// login), never one of the pool's.
    options: PgConnectOptions,
    /// The generated columns of indexed fields known to exist, shared with every unit of work.
    generated: Arc<GeneratedColumns>,
}

impl PgStore {
    /// `url` is the login units of work run as; `owner_url`, when given, the login that owns
    /// the tables, for migrations and index creation (see docs/CONFIGURATION.md).
    pub(crate) async fn connect(url: &str, owner_url: Option<&str>) -> Result<Self> {
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
        let pool = PgPoolOptions::new()
            .max_connections(16)
            // A ping per borrow is a network round trip on every unit of work; a connection
            // the server dropped fails its next statement and is discarded instead.
            .test_before_acquire(false)
            .after_connect(|conn, _| Box::pin(drop_rls_bypass(conn)))
            // Lazy: the first connection is opened after `migrate` has created the role.
            .connect_lazy_with(serving);
        Ok(PgStore {
            pool,
            options,
            generated: Arc::default(),
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
            let mut tx = self.read().await?;
            tx.act_for(organization_id).await?;
            return Ok(tx);
        }
        let begin =
            format!("BEGIN; SELECT set_config('{ACTING_ORGANIZATION}', '{organization_id}', true)");
        Ok(Box::new(PgTx {
            tx: begin_unit(&self.pool, Some(begin)).await?,
            generated: self.generated.clone(),
        }))
    }
}

impl PgStore {
    /// A transaction declared instance-wide ([`Tx::act_instance_wide`]) in its `BEGIN`.
    async fn begin_instance_wide(&self) -> Result<Box<dyn Tx>> {
        let begin = format!(
            "BEGIN; SELECT set_config('{SCOPE}', 'instance', true), \
             set_config('{ACTING_ORGANIZATION}', '', true)"
        );
        Ok(Box::new(PgTx {
            tx: begin_unit(&self.pool, Some(begin)).await?,
            generated: self.generated.clone(),
        }))
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

    async fn read(&self) -> Result<Box<dyn Tx>> {
        Ok(Box::new(PgTx {
            tx: begin_unit(&self.pool, None).await?,
            generated: self.generated.clone(),
        }))
    }

    async fn write(&self) -> Result<Box<dyn Tx>> {
        Ok(Box::new(PgTx {
            tx: begin_unit(&self.pool, None).await?,
            generated: self.generated.clone(),
        }))
    }

    async fn ensure_field_indexes(
        &self,
        doc_type: &str,
        fields: &[(Vec<String>, cms_core::FieldKind)],
    ) -> Result<()> {
        let statements = crate::field_index_statements(Dialect::Postgres, doc_type, fields);
        let generated = crate::generated_columns(doc_type, fields);
        if statements.is_empty() && generated.is_empty() {
            return Ok(());
        }
        let mut conn = self.admin().await?;
        if !generated.is_empty() {
            add_generated_columns(&mut conn, &generated).await?;
        }
        let indexes = generated.iter().map(|column| column.index());
        for statement in statements.into_iter().chain(indexes) {
            if let Err(e) = sqlx::query(sqlx::AssertSqlSafe(statement))
                .execute(&mut conn)
                .await
            {
                match StoreError::from(e) {
                    // Two instances starting together may both create the index: IF NOT EXISTS
                    // is not race-free, and the loser sees a catalog unique violation.
                    StoreError::Unique(_) => {}
                    other => return Err(other),
                }
            }
        }
        for column in generated {
            self.generated.insert(column.name);
        }
        Ok(())
    }

    /// The declaration rides in the round trip of the `BEGIN`, as for [`PgStore::begin_acting`]:
    /// credential resolution opens one of these on every authenticated request.
    async fn read_instance_wide(&self) -> Result<Box<dyn Tx>> {
        self.begin_instance_wide().await
    }

    async fn write_instance_wide(&self) -> Result<Box<dyn Tx>> {
        self.begin_instance_wide().await
    }

    async fn close(&self) {
        self.pool.close().await;
    }

    async fn read_for(&self, organization_id: &str) -> Result<Box<dyn Tx>> {
        self.begin_acting(organization_id).await
    }

    async fn write_for(&self, organization_id: &str) -> Result<Box<dyn Tx>> {
        self.begin_acting(organization_id).await
    }

    /// The setting rides in the round trip of the `BEGIN`, as for [`PgStore::begin_acting`].
    async fn read_for_delivery(&self) -> Result<Box<dyn Tx>> {
        let begin = format!("BEGIN; SELECT set_config('{DELIVERY}', 'on', true)");
        Ok(Box::new(PgTx {
            tx: begin_unit(&self.pool, Some(begin)).await?,
            generated: self.generated.clone(),
        }))
    }
}

/// Adds the missing generated columns in one `ALTER TABLE`, which rewrites `documents` once
/// (under an exclusive lock): only when one is missing, so a restart takes no lock at all.
async fn add_generated_columns(
    conn: &mut PgConnection,
    generated: &[crate::filter_sql::GeneratedColumn],
) -> Result<()> {
    let existing: Vec<String> = sqlx::query_scalar(
        "SELECT column_name::text FROM information_schema.columns \
         WHERE table_schema = current_schema() AND table_name = 'documents'",
    )
    .fetch_all(&mut *conn)
    .await?;
    let additions: Vec<String> = generated
        .iter()
        .filter(|column| {
            !existing.contains(&column.name)
                || column
                    .exact
                    .as_ref()
                    .is_some_and(|(exact, _)| !existing.contains(exact))
        })
        .flat_map(|column| column.add_columns())
        .collect();
    if additions.is_empty() {
        return Ok(());
    }
    let alter = format!("ALTER TABLE documents {}", additions.join(", "));
    if let Err(e) = sqlx::query(sqlx::AssertSqlSafe(alter))
        .execute(&mut *conn)
        .await
    {
        // Two instances starting together: IF NOT EXISTS waits for the other's lock and then
        // finds the column, but a catalog race can still report a duplicate column (42701) or
        // a catalog unique violation; the column exists either way.
        let duplicate = e
            .as_database_error()
            .and_then(|d| d.code())
            .is_some_and(|code| code == "42701");
        match StoreError::from(e) {
            StoreError::Unique(_) => {}
            _ if duplicate => {}
            other => return Err(other),
        }
    }
    Ok(())
}

/// Reads run in a transaction too: the acting organization is a transaction-local setting
/// ([`Tx::act_for`]), which must never leak to the next borrower of the connection.
pub(crate) struct PgTx {
    tx: Transaction<'static, Postgres>,
    generated: Arc<GeneratedColumns>,
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
        Ok(&mut self.tx)
    }

    /// The generated columns list queries may use.
    #[inline]
    fn generated_columns(&self) -> Option<&GeneratedColumns> {
        Some(&self.generated)
    }

    /// PostgreSQL has no thread hop to save: every statement goes through the transaction.
    #[inline]
    fn point_reads(&self) -> Option<&crate::sqlite::PointReads> {
        None
    }

    /// Every statement goes through the transaction.
    #[inline]
    async fn direct(&mut self) -> Result<Option<crate::sqlite::Direct<'_>>> {
        Ok(None)
    }
}

#[async_trait]
impl Tx for PgTx {
    async fn commit(self: Box<Self>) -> Result<()> {
        self.tx.commit().await?;
        Ok(())
    }

    async fn act_for(&mut self, organization_id: &str) -> Result<()> {
        sqlx::query("SELECT set_config($1, $2, true)")
            .bind(ACTING_ORGANIZATION)
            .bind(organization_id)
            .execute(&mut *self.tx)
            .await?;
        Ok(())
    }

    async fn act_for_delivery(&mut self) -> Result<()> {
        sqlx::query("SELECT set_config($1, 'on', true)")
            .bind(DELIVERY)
            .execute(&mut *self.tx)
            .await?;
        Ok(())
    }

    async fn hold_until_end(&mut self, key: &str) -> Result<()> {
        sqlx::query("SELECT pg_advisory_xact_lock(hashtextextended($1, 0))")
            .bind(key)
            .execute(&mut *self.tx)
            .await?;
        Ok(())
    }

    async fn act_instance_wide(&mut self) -> Result<()> {
        sqlx::query("SELECT set_config($1, 'instance', true), set_config($2, '', true)")
            .bind(SCOPE)
            .bind(ACTING_ORGANIZATION)
            .execute(&mut *self.tx)
            .await?;
        Ok(())
    }
}

crate::impl_repositories!(PgTx);
