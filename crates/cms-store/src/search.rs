//! Full-text search (CONTRACT.md section 14): the search rows of each document copy, written in
//! the unit of work that writes the copy, and lists of documents matching a parsed search.
//!
//! The tokens come from cms-core's tokenizer; each engine indexes them verbatim (SQLite: FTS5
//! with the `ascii` tokenizer over `document_search`; PostgreSQL: a `tsvector` built from the
//! tokens and their positions, under a GIN index), so both match the same documents. The score
//! is computed from integer columns the same way on both engines (see [`SearchSpec`]).
//!
//! On PostgreSQL a term is matched through `cms_search_matches` (migration 0014), a function
//! that applies the tenant rule itself, because under row-level security the planner would not
//! answer the non-leakproof `@@` from the GIN index; its ids are then joined to `documents`
//! under that table's policies like any list's.

use async_trait::async_trait;

use cms_core::search::{SearchQuery, SearchRow, SearchTerm};

use crate::Result;
use crate::documents::{DocumentRecord, ListSpec};
use crate::filter_sql::Bind;

/// What a search adds to a list.
#[derive(Debug, Clone, Copy)]
pub struct SearchSpec<'a> {
    pub query: &'a SearchQuery,
    /// The locale asked: rows of this locale and of fields that are not localized match.
    pub locale: &'a str,
    /// The searchable field paths the caller may read: only their rows match or score.
    pub paths: &'a [String],
}

/// A document of a search result with its score (higher is more relevant).
#[derive(Debug, Clone)]
pub struct ScoredDocument {
    pub document: DocumentRecord,
    pub score: f64,
}

/// The boost of a document with a readable field whose whole value is exactly the search's
/// words, in thousandths: larger than any sum of field weights a search can reach (at most
/// [`cms_core::search::MAX_TERMS`] terms, 500 a field), so such a document ranks first.
pub const EXACT_BOOST: i64 = 1_000_000;

/// Documents per read of [`Search::documents_after`].
pub const REINDEX_CHUNK: i64 = 200;

#[async_trait]
pub trait Search {
    /// Replaces the search rows of one copy (`draft` or `published`) of a document.
    async fn replace_search_rows(
        &mut self,
        document_id: &str,
        organization_id: &str,
        copy: &str,
        rows: &[SearchRow],
    ) -> Result<()>;
    /// Adds search rows of copies that have none yet (new documents): `(document id,
    /// organization id, copy, row)`, a few multi-row statements.
    async fn add_search_rows(&mut self, rows: &[(&str, &str, &str, &SearchRow)]) -> Result<()>;
    /// The search rows of one copy of a document, by locale, path and chunk (for tests and
    /// checks: the tokens as stored, space-separated).
    async fn search_rows_of(
        &mut self,
        document_id: &str,
        copy: &str,
    ) -> Result<Vec<(String, String, i64, String)>>;
    /// One page of the documents matching `spec` and `search`, with their scores, and the total
    /// number matching. Without sort keys the page is in relevance order (score descending,
    /// then id); with them, in their order.
    async fn search_documents(
        &mut self,
        spec: &ListSpec<'_>,
        search: &SearchSpec<'_>,
    ) -> Result<(Vec<ScoredDocument>, i64)>;
    /// [`Search::search_documents`] without the total.
    async fn search_documents_page(
        &mut self,
        spec: &ListSpec<'_>,
        search: &SearchSpec<'_>,
    ) -> Result<Vec<ScoredDocument>>;
    /// The signature the search rows of `doc_type` were last built from.
    async fn search_signature(&mut self, doc_type: &str) -> Result<Option<String>>;
    async fn set_search_signature(&mut self, doc_type: &str, signature: &str) -> Result<()>;
    /// Every organization's id, in id order: a rebuild of search rows visits each (documents are
    /// read and written acting for their organization).
    async fn all_organization_ids(&mut self) -> Result<Vec<String>>;
    /// Up to [`REINDEX_CHUNK`] documents of `doc_type` in `organization`, in id order, after
    /// `after` (from the first when `None`): for rebuilding search rows. They stay locked
    /// against writes until the unit ends, so the rows rebuilt are those of what is stored.
    async fn documents_after(
        &mut self,
        organization: &str,
        doc_type: &str,
        after: Option<&str>,
    ) -> Result<Vec<DocumentRecord>>;
}

/// The FTS5 query of one term: a quoted string of its tokens (a phrase when several).
fn fts5_query(term: &SearchTerm) -> String {
    format!("\"{}\"", term.tokens.join(" ").replace('"', "\"\""))
}

/// A quoted lexeme of PostgreSQL's `tsvector`/`tsquery` input syntax, taken verbatim.
fn lexeme(token: &str) -> String {
    format!("'{}'", token.replace('\\', "\\\\").replace('\'', "''"))
}

/// The `tsquery` of one term: its lexemes, followed-by (`<->`) for a phrase.
fn tsquery(term: &SearchTerm) -> String {
    term.tokens
        .iter()
        .map(|t| lexeme(t))
        .collect::<Vec<_>>()
        .join(" <-> ")
}

/// The `tsvector` of one row: each token with its position (from 1) in the chunk.
pub(crate) fn tsvector(tokens: &[String]) -> String {
    tokens
        .iter()
        .enumerate()
        .map(|(i, t)| format!("{}:{}", lexeme(t), i + 1))
        .collect::<Vec<_>>()
        .join(" ")
}

/// The value a row's tokens are stored as on `dialect`.
pub(crate) fn stored_tokens(dialect: crate::Dialect, tokens: &[String]) -> String {
    match dialect {
        crate::Dialect::Sqlite => tokens.join(" "),
        crate::Dialect::Postgres => tsvector(tokens),
    }
}

/// The copy whose rows a list over `column` reads (`draft` or `published`, as written).
pub fn copy_of(column: crate::filter_sql::DataColumn) -> &'static str {
    match column {
        crate::filter_sql::DataColumn::Draft => "draft",
        crate::filter_sql::DataColumn::Published => "published",
    }
}

/// Builds the SQL of a search list: the CTEs, the joins, the extra conditions and the score,
/// with placeholders continuing after those of the list's condition.
pub(crate) struct SearchSql {
    dialect: crate::Dialect,
    pub binds: Vec<Bind>,
    next: usize,
}

/// The pieces of a search list's statement.
pub(crate) struct SearchParts {
    /// `WITH ...` (ends with a space).
    pub with: String,
    /// ` JOIN ...` of the required terms.
    pub joins: String,
    /// ` AND ...` of the excluded terms.
    pub conditions: String,
    /// The score expression, in thousandths.
    pub score: String,
}

impl SearchSql {
    pub(crate) fn new(dialect: crate::Dialect, first_placeholder: usize) -> Self {
        SearchSql {
            dialect,
            binds: Vec::new(),
            next: first_placeholder,
        }
    }

    fn bind(&mut self, value: Bind) -> String {
        self.binds.push(value);
        self.next += 1;
        format!("${}", self.next - 1)
    }

    /// `s.copy = .. AND s.locale IN (.., '') AND s.path IN (..)`: the rows a search reads.
    fn rows(&mut self, copy: &str, search: &SearchSpec<'_>) -> String {
        let copy = self.bind(Bind::Text(copy.to_string()));
        let locale = self.bind(Bind::Text(search.locale.to_string()));
        let paths: Vec<String> = search
            .paths
            .iter()
            .map(|p| self.bind(Bind::Text(p.clone())))
            .collect();
        format!(
            "s.copy = {copy} AND s.locale IN ({locale}, '') AND s.path IN ({})",
            paths.join(", ")
        )
    }

    /// A query of the documents among the `copy` rows that match `term`, with the sum of the
    /// weights of their distinct matching fields (each readable field that holds the term
    /// counts once): columns `(document id, weight)`.
    fn term_matches(&mut self, term: &SearchTerm, copy: &str, search: &SearchSpec<'_>) -> String {
        match self.dialect {
            crate::Dialect::Sqlite => {
                let query = self.bind(Bind::Text(fts5_query(term)));
                let rows = self.rows(copy, search);
                format!(
                    "SELECT f.document_id, SUM(f.weight) FROM (SELECT DISTINCT s.document_id, \
                     s.path, s.weight FROM document_search s WHERE s.id IN (SELECT rowid FROM \
                     document_search_fts WHERE document_search_fts MATCH {query}) AND {rows}) f \
                     GROUP BY f.document_id"
                )
            }
            // Through the function of migration 0014, which applies the tenant rule itself so
            // that `@@` can be answered from the GIN index under row-level security.
            crate::Dialect::Postgres => {
                let query = self.bind(Bind::Text(tsquery(term)));
                let copy = self.bind(Bind::Text(copy.to_string()));
                let locale = self.bind(Bind::Text(search.locale.to_string()));
                let paths: Vec<String> = search
                    .paths
                    .iter()
                    .map(|p| self.bind(Bind::Text(p.clone())))
                    .collect();
                format!(
                    "SELECT m.matched_document_id, m.matched_weight FROM cms_search_matches(\
                     {query}::tsquery, {copy}, {locale}, ARRAY[{}]::text[]) m",
                    paths.join(", ")
                )
            }
        }
    }

    /// The pieces for `search` over the `copy` rows. `search.paths` is not empty.
    pub(crate) fn parts(&mut self, copy: &str, search: &SearchSpec<'_>) -> SearchParts {
        let mut ctes = Vec::new();
        let mut joins = String::new();
        let mut conditions = String::new();
        let mut score = Vec::new();
        for (i, term) in search.query.required().enumerate() {
            let matches = self.term_matches(term, copy, search);
            ctes.push(format!(
                "search_t{i}(search_doc_{i}, search_w_{i}) AS ({matches})"
            ));
            joins.push_str(&format!(
                " JOIN search_t{i} ON search_t{i}.search_doc_{i} = documents.id"
            ));
            score.push(format!("search_t{i}.search_w_{i}"));
        }
        for (i, term) in search.query.excluded().enumerate() {
            let matches = self.term_matches(term, copy, search);
            ctes.push(format!("search_x{i}(search_doc, search_w) AS ({matches})"));
            conditions.push_str(&format!(
                " AND documents.id NOT IN (SELECT search_doc FROM search_x{i})"
            ));
        }
        let exact = self.bind(Bind::Text(search.query.exact_key()));
        let rows = self.rows(copy, search);
        score.push(format!(
            "CASE WHEN EXISTS (SELECT 1 FROM document_search s WHERE s.document_id = documents.id \
             AND s.exact = {exact} AND {rows}) THEN {EXACT_BOOST} ELSE 0 END"
        ));
        SearchParts {
            with: format!("WITH {} ", ctes.join(", ")),
            joins,
            conditions,
            score: score.join(" + "),
        }
    }
}

/// Appends `INSERT INTO document_search (...) VALUES (...), ...` of `$rows` (`(document id,
/// organization id, copy, row)`) to the query builder `$sql`, the tokens as `$dialect` stores
/// them.
macro_rules! push_search_rows {
    ($sql:ident, $dialect:expr, $rows:expr) => {
        $sql.push(
            "INSERT INTO document_search (document_id, organization_id, copy, locale, path, chunk, \
             weight, exact, tokens) ",
        );
        $sql.push_values($rows, |mut row, (document_id, organization_id, copy, r)| {
            row.push_bind(*document_id)
                .push_bind(*organization_id)
                .push_bind(*copy)
                .push_bind(r.locale.as_str())
                .push_bind(r.path.as_str())
                .push_bind(r.chunk)
                .push_bind(r.weight)
                .push_bind(r.exact.as_str())
                .push_bind($crate::search::stored_tokens($dialect, &r.tokens));
            if $dialect == $crate::Dialect::Postgres {
                row.push_unseparated("::tsvector");
            }
        });
    };
}
pub(crate) use push_search_rows;

/// Rows per insert statement: nine binds a row keeps every statement far below both engines'
/// bind limits.
pub(crate) const SEARCH_INSERT_CHUNK: usize = 500;

/// The statement of a search list page (`count` false) or its count (`count` true), and its
/// binds.
pub(crate) fn search_statement(
    spec: &ListSpec<'_>,
    search: &SearchSpec<'_>,
    dialect: crate::Dialect,
    generated: Option<&crate::filter_sql::GeneratedColumns>,
    count: bool,
) -> (String, Vec<Bind>) {
    let (condition, mut binds) = crate::documents::list_condition(spec, dialect, generated);
    let mut sql = SearchSql::new(dialect, binds.len() + 1);
    let parts = sql.parts(copy_of(spec.column), search);
    binds.append(&mut sql.binds);
    let from = format!(
        "FROM documents{} WHERE {condition}{}",
        parts.joins, parts.conditions
    );
    if count {
        return (format!("{}SELECT COUNT(*) {from}", parts.with), binds);
    }
    let order = if spec.sort.is_empty() {
        "search_score DESC, documents.id ASC".to_string()
    } else {
        crate::filter_sql::compile_sort_with(
            spec.sort,
            dialect,
            spec.column,
            spec.filter,
            crate::documents::generated_for(spec, generated),
        )
    };
    let page = format!(
        "{}SELECT {}, ({}) AS search_score {from} ORDER BY {order} LIMIT ${} OFFSET ${}",
        parts.with,
        crate::documents::document_columns_of("documents"),
        parts.score,
        binds.len() + 1,
        binds.len() + 2
    );
    binds.push(Bind::Int(spec.limit));
    binds.push(Bind::Int(spec.offset));
    (page, binds)
}

/// A page row: the document and its score in thousandths.
#[derive(sqlx::FromRow)]
pub(crate) struct ScoredRow {
    #[sqlx(flatten)]
    pub document: DocumentRecord,
    pub search_score: i64,
}

impl From<ScoredRow> for ScoredDocument {
    fn from(row: ScoredRow) -> Self {
        ScoredDocument {
            document: row.document,
            score: row.search_score as f64 / 1000.0,
        }
    }
}

macro_rules! impl_search {
    ($tx:ty) => {
        #[async_trait::async_trait]
        impl $crate::search::Search for $tx {
            async fn replace_search_rows(
                &mut self,
                document_id: &str,
                organization_id: &str,
                copy: &str,
                rows: &[cms_core::search::SearchRow],
            ) -> $crate::Result<()> {
                sqlx::query("DELETE FROM document_search WHERE document_id = $1 AND copy = $2")
                    .bind(document_id)
                    .bind(copy)
                    .execute(self.conn().await?)
                    .await?;
                let rows: Vec<_> = rows
                    .iter()
                    .map(|r| (document_id, organization_id, copy, r))
                    .collect();
                $crate::search::Search::add_search_rows(self, &rows).await
            }

            async fn add_search_rows(
                &mut self,
                rows: &[(&str, &str, &str, &cms_core::search::SearchRow)],
            ) -> $crate::Result<()> {
                for chunk in rows.chunks($crate::search::SEARCH_INSERT_CHUNK) {
                    let mut insert = sqlx::QueryBuilder::new("");
                    $crate::search::push_search_rows!(insert, <$tx>::DIALECT, chunk);
                    insert.build().execute(self.conn().await?).await?;
                }
                Ok(())
            }

            async fn search_rows_of(
                &mut self,
                document_id: &str,
                copy: &str,
            ) -> $crate::Result<Vec<(String, String, i64, String)>> {
                let tokens = match <$tx>::DIALECT {
                    $crate::Dialect::Sqlite => "tokens",
                    // The lexemes in position order: what the row was built from.
                    $crate::Dialect::Postgres => {
                        "(SELECT string_agg(u.lexeme, ' ' ORDER BY p) FROM unnest(tokens) u, \
                         unnest(u.positions) p)"
                    }
                };
                Ok(sqlx::query_as(sqlx::AssertSqlSafe(format!(
                    "SELECT locale, path, CAST(chunk AS BIGINT), {tokens} FROM document_search \
                     WHERE document_id = $1 AND copy = $2 ORDER BY locale, path, chunk"
                )))
                .bind(document_id)
                .bind(copy)
                .fetch_all(self.conn().await?)
                .await?)
            }

            async fn search_documents(
                &mut self,
                spec: &$crate::documents::ListSpec<'_>,
                search: &$crate::search::SearchSpec<'_>,
            ) -> $crate::Result<(Vec<$crate::search::ScoredDocument>, i64)> {
                if spec.organizations.is_empty() || search.paths.is_empty() {
                    return Ok((Vec::new(), 0));
                }
                let (count_sql, binds) = $crate::search::search_statement(
                    spec,
                    search,
                    <$tx>::DIALECT,
                    self.generated_columns(),
                    true,
                );
                let total: i64 = sqlx::query_scalar_with(
                    sqlx::AssertSqlSafe(count_sql),
                    <$tx>::arguments(binds)?,
                )
                .fetch_one(self.conn().await?)
                .await?;
                if total == 0 {
                    return Ok((Vec::new(), 0));
                }
                let rows =
                    $crate::search::Search::search_documents_page(self, spec, search).await?;
                Ok((rows, total))
            }

            async fn search_documents_page(
                &mut self,
                spec: &$crate::documents::ListSpec<'_>,
                search: &$crate::search::SearchSpec<'_>,
            ) -> $crate::Result<Vec<$crate::search::ScoredDocument>> {
                if spec.organizations.is_empty() || search.paths.is_empty() {
                    return Ok(Vec::new());
                }
                let (page_sql, binds) = $crate::search::search_statement(
                    spec,
                    search,
                    <$tx>::DIALECT,
                    self.generated_columns(),
                    false,
                );
                let rows: Vec<$crate::search::ScoredRow> =
                    sqlx::query_as_with(sqlx::AssertSqlSafe(page_sql), <$tx>::arguments(binds)?)
                        .fetch_all(self.conn().await?)
                        .await?;
                Ok(rows.into_iter().map(Into::into).collect())
            }

            async fn search_signature(&mut self, doc_type: &str) -> $crate::Result<Option<String>> {
                Ok(sqlx::query_scalar(
                    "SELECT signature FROM search_index_state WHERE doc_type = $1",
                )
                .bind(doc_type)
                .fetch_optional(self.conn().await?)
                .await?)
            }

            async fn set_search_signature(
                &mut self,
                doc_type: &str,
                signature: &str,
            ) -> $crate::Result<()> {
                sqlx::query(
                    "INSERT INTO search_index_state (doc_type, signature) VALUES ($1, $2) \
                     ON CONFLICT (doc_type) DO UPDATE SET signature = excluded.signature",
                )
                .bind(doc_type)
                .bind(signature)
                .execute(self.conn().await?)
                .await?;
                Ok(())
            }

            async fn all_organization_ids(&mut self) -> $crate::Result<Vec<String>> {
                Ok(
                    sqlx::query_scalar("SELECT id FROM organizations ORDER BY id")
                        .fetch_all(self.conn().await?)
                        .await?,
                )
            }

            async fn documents_after(
                &mut self,
                organization: &str,
                doc_type: &str,
                after: Option<&str>,
            ) -> $crate::Result<Vec<$crate::documents::DocumentRecord>> {
                // Locked on PostgreSQL, in id order, until the chunk's unit ends: a write to one
                // of these documents waits for the rebuilt rows rather than racing their delete
                // and insert (both would insert the same keys). SQLite's write unit is already
                // exclusive.
                let lock = match <$tx>::DIALECT {
                    $crate::Dialect::Postgres => " FOR UPDATE",
                    $crate::Dialect::Sqlite => "",
                };
                let sql = format!(
                    "SELECT {} FROM documents WHERE organization_id = $1 AND type = $2 AND id > $3 \
                     ORDER BY id LIMIT $4{lock}",
                    $crate::documents::DOCUMENT_COLUMNS
                );
                Ok(sqlx::query_as(sqlx::AssertSqlSafe(sql))
                    .bind(organization)
                    .bind(doc_type)
                    .bind(after.unwrap_or(""))
                    .bind($crate::search::REINDEX_CHUNK)
                    .fetch_all(self.conn().await?)
                    .await?)
            }
        }
    };
}
pub(crate) use impl_search;
