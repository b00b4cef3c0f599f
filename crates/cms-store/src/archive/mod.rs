//! Archive: the rows `cms export` carries and `cms import` loads (CONTRACT.md section 19).
//!
//! [`PARTS`] names every table an instance's content and people live in, the columns carried
//! and how each is typed, in an order in which loading satisfies every foreign key. A row
//! travels as a JSON object of column names to values, the same on both engines (timestamps
//! are Unix milliseconds everywhere, JSON columns carry their JSON), so an archive written from
//! SQLite loads into PostgreSQL and back. [`LEFT_OUT`] names the tables deliberately not
//! carried; a conformance test holds every table and column of both engines to one list or
//! the other, so a migration that adds one without deciding fails.
//!
//! Which rows of a part an export of some organizations takes is the part's [`Rows`]; which
//! parts an export without credentials leaves out, its [`Carried`]. The service decides
//! which to ask for; this module reads and writes exactly that.

mod catalogue;
pub(crate) mod sql;

use async_trait::async_trait;
use serde_json::{Map, Value};

pub use catalogue::{LEFT_OUT, PARTS, part_named};

use crate::Result;

/// The database shape an archive's rows have: the number of the last migration. An archive
/// loads only into a database at the same shape (the binary that wrote it, or one with the
/// same migrations).
pub const SCHEMA_VERSION: u32 = 25;

/// One row of a part: column names to values.
pub type Row = Map<String, Value>;

/// How a column's values are typed on the engines, and so read and bound.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Text,
    /// BIGINT on PostgreSQL, INTEGER on SQLite.
    Integer,
    /// INTEGER (32 bits) on PostgreSQL.
    Integer32,
    Real,
    Boolean,
    /// JSONB on PostgreSQL, JSON text on SQLite.
    Json,
}

#[derive(Debug, Clone, Copy)]
pub struct Column {
    pub name: &'static str,
    pub kind: Kind,
    /// A secret that lets someone in (a password hash, an invitation's token hash): carried
    /// only with credentials, null otherwise.
    pub credential: bool,
}

/// Which of a part's rows belong to what an export of some organizations carries, and which
/// organization a unit loading them acts for (PostgreSQL's row-level security).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rows {
    /// The organizations table itself: the chosen ones.
    Organizations,
    /// Rows of one organization, by this column. Read and loaded acting for it.
    Organization(&'static str),
    /// Rows of one organization by this column, or of none (null): instance rows, carried by
    /// a whole-instance export only.
    OrganizationOrInstance(&'static str),
    /// Rows of a person, by this column holding a user id: those of the people the chosen
    /// organizations hold (members, inviters, key creators).
    People(&'static str),
    /// Instance-wide rows: carried by a whole-instance export only.
    Instance,
}

/// Whether an export without credentials carries a part.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Carried {
    Always,
    /// Its rows are credentials as a whole (API keys, two-factor secrets).
    WithCredentials,
}

/// How a part's rows are loaded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Load {
    Insert,
    /// Events: inserting one queues its outbox row (a trigger); the loaded events were
    /// relayed at the source already, so their outbox rows are marked relayed. Those still
    /// pending at the source come with the `outbox` part.
    InsertRelayed,
    /// Rows that may exist already (an instance fact recorded at a first start, an outbox row
    /// its event queued): the archive's row wins. The columns are the conflict target.
    Upsert(&'static [&'static str]),
}

/// One slice of a table in the archive.
#[derive(Debug)]
pub struct Part {
    /// The archive's name for it (a table split in two has two names).
    pub name: &'static str,
    pub table: &'static str,
    pub columns: &'static [Column],
    /// Unique, non-null: what tells its rows apart.
    pub key: &'static [&'static str],
    /// The column naming the document a row belongs to, in tables without an index leading
    /// with the organization: an organization's rows are read through its documents.
    pub of_document: Option<&'static str>,
    /// A condition on the table's own columns narrowing the part, when it is one slice.
    pub only: Option<&'static str>,
    pub rows: Rows,
    pub carried: Carried,
    pub load: Load,
}

impl Part {
    /// Rows a load statement takes at most: under both engines' bound-parameter limits.
    pub fn rows_per_statement(&self) -> usize {
        (20_000 / self.columns.len()).min(500)
    }
}

/// Which rows of a part one read takes (see [`Rows`]).
#[derive(Debug, Clone, Copy)]
pub enum Filter<'a> {
    /// Every row of the part.
    All,
    /// The rows whose organization column holds this id.
    Organization(&'a str),
    /// The rows whose organization column is null.
    NoOrganization,
    /// The organizations table's rows with these ids.
    Organizations(&'a [String]),
    /// The rows of people these organizations hold: members, inviters, key creators.
    PeopleOf(&'a [String]),
}

#[async_trait]
pub trait Archive {
    /// How many rows of `part` the filter takes.
    async fn archive_count(&mut self, part: &Part, filter: Filter<'_>) -> Result<u64>;

    /// Sends every row of `part` the filter takes to `pages`, `page_rows` at a time, as one
    /// statement streams them (in no particular order). A closed `pages` ends it early, without
    /// an error: the receiver stopped for a reason of its own.
    async fn archive_rows(
        &mut self,
        part: &Part,
        filter: Filter<'_>,
        page_rows: usize,
        pages: tokio::sync::mpsc::Sender<Vec<Row>>,
    ) -> Result<()>;

    /// Writes `rows` of `part` (at most [`Part::rows_per_statement`] per statement). A column
    /// a row lacks is written null.
    async fn load_rows(&mut self, part: &Part, rows: &[Row]) -> Result<()>;

    /// Forgets which types' search rows are current, so the next start rebuilds them all (the
    /// rows are not carried: they follow from the documents).
    async fn forget_search_index(&mut self) -> Result<()>;

    /// Whether the database holds any person or organization.
    async fn holds_people_or_organizations(&mut self) -> Result<bool>;

    /// Every table of the database (the live schema), with its columns: for the conformance
    /// test holding the catalogue to the migrations.
    async fn tables_and_columns(&mut self) -> Result<Vec<(String, String)>>;
}

macro_rules! impl_archive {
    ($tx:ty) => {
        #[async_trait::async_trait]
        impl $crate::archive::Archive for $tx {
            async fn archive_count(
                &mut self,
                part: &$crate::archive::Part,
                filter: $crate::archive::Filter<'_>,
            ) -> $crate::Result<u64> {
                let mut sql = $crate::archive::sql::count_sql(part, filter);
                let count: i64 = sql
                    .build_query_scalar()
                    .fetch_one(self.conn().await?)
                    .await?;
                Ok(count as u64)
            }

            async fn archive_rows(
                &mut self,
                part: &$crate::archive::Part,
                filter: $crate::archive::Filter<'_>,
                page_rows: usize,
                pages: tokio::sync::mpsc::Sender<Vec<$crate::archive::Row>>,
            ) -> $crate::Result<()> {
                use futures_util::TryStreamExt as _;
                let mut sql = $crate::archive::sql::select_sql(part, filter);
                let mut fetched = sql.build().fetch(self.conn().await?);
                let mut page = Vec::with_capacity(page_rows);
                while let Some(found) = fetched.try_next().await? {
                    let mut row = $crate::archive::Row::new();
                    for (i, column) in part.columns.iter().enumerate() {
                        row.insert(
                            column.name.to_string(),
                            $crate::archive::sql::value_of(&found, i, column.kind)?,
                        );
                    }
                    page.push(row);
                    if page.len() == page_rows
                        && pages.send(std::mem::replace(&mut page, Vec::with_capacity(page_rows))).await.is_err()
                    {
                        return Ok(());
                    }
                }
                if !page.is_empty() {
                    let _ = pages.send(page).await;
                }
                Ok(())
            }

            async fn load_rows(
                &mut self,
                part: &$crate::archive::Part,
                rows: &[$crate::archive::Row],
            ) -> $crate::Result<()> {
                for chunk in rows.chunks(part.rows_per_statement()) {
                    let mut sql = $crate::archive::sql::insert_sql(part, chunk);
                    sql.build().execute(self.conn().await?).await?;
                    if part.load == $crate::archive::Load::InsertRelayed {
                        self.appended_events();
                        let mut relayed = sqlx::QueryBuilder::new(
                            "UPDATE outbox SET processed_at = created_at WHERE event_id IN (",
                        );
                        let mut ids = relayed.separated(", ");
                        for row in chunk {
                            ids.push_bind(row.get("id").and_then(|v| v.as_str()).map(str::to_string));
                        }
                        relayed.push(")");
                        relayed.build().execute(self.conn().await?).await?;
                    }
                }
                Ok(())
            }

            async fn forget_search_index(&mut self) -> $crate::Result<()> {
                sqlx::query("DELETE FROM search_index_state")
                    .execute(self.conn().await?)
                    .await?;
                Ok(())
            }

            async fn holds_people_or_organizations(&mut self) -> $crate::Result<bool> {
                Ok(sqlx::query_scalar(
                    "SELECT EXISTS (SELECT 1 FROM users) OR EXISTS (SELECT 1 FROM organizations)",
                )
                .fetch_one(self.conn().await?)
                .await?)
            }

            async fn tables_and_columns(&mut self) -> $crate::Result<Vec<(String, String)>> {
                let sql = match <$tx as $crate::unit::UnitOfWork>::DIALECT {
                    $crate::Dialect::Sqlite => {
                        "SELECT m.name, c.name FROM sqlite_master m, pragma_table_xinfo(m.name) c \
                         WHERE m.type = 'table' AND m.name NOT LIKE 'sqlite_%' \
                         AND m.name NOT LIKE '\\_sqlx%' ESCAPE '\\' \
                         AND m.name NOT LIKE 'document_search_fts%' ORDER BY 1, 2"
                    }
                    $crate::Dialect::Postgres => {
                        "SELECT table_name::TEXT, column_name::TEXT FROM information_schema.columns \
                         WHERE table_schema = current_schema() AND table_name NOT LIKE '\\_sqlx%' \
                         AND is_generated = 'NEVER' AND identity_generation IS NULL ORDER BY 1, 2"
                    }
                };
                Ok(sqlx::query_as(sql).fetch_all(self.conn().await?).await?)
            }
        }
    };
}
pub(crate) use impl_archive;
