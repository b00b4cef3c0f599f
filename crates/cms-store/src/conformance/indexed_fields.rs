//! Indexed fields: `indexed: true` fields get the indexes their `where` clauses use, as
//! expression indexes (SQLite) or generated columns (PostgreSQL), and under row-level security
//! a range on one is an index condition.

use serde_json::json;

use super::{document, open, org, user};
use crate::Json;

struct PostFields;

impl cms_core::FieldLookup for PostFields {
    fn field_kind(&self, path: &[&str]) -> Option<cms_core::FieldKind> {
        match path {
            ["title"] => Some(cms_core::FieldKind::String),
            ["views"] => Some(cms_core::FieldKind::Number),
            _ => None,
        }
    }
}

async fn indexed_fields_get_expression_indexes_that_queries_use(url: String) {
    use cms_core::FieldKind;
    let store = open(&url).await;
    let fields = vec![
        (vec!["title".to_string()], FieldKind::String),
        (vec!["views".to_string()], FieldKind::Number),
    ];
    store.ensure_field_indexes("post", &fields).await.unwrap();
    // Idempotent: a restart finds them in place.
    store.ensure_field_indexes("post", &fields).await.unwrap();
    // A type name that is not an identifier never reaches SQL.
    store
        .ensure_field_indexes("post; DROP TABLE documents", &fields)
        .await
        .unwrap();

    let filter = cms_core::filter::parse(&json!({"title": {"equals": "x"}}), &PostFields);
    let compiled = crate::filter_sql::compile_filter(
        &filter,
        store.dialect(),
        crate::filter_sql::DataColumn::Draft,
        2,
    );
    // The type as a literal, as list queries write it: the indexes are partial on it.
    let sql = format!(
        "SELECT id FROM documents WHERE organization_id IN ($1) AND type = 'post' AND ({})",
        compiled.sql
    );
    match store.dialect() {
        crate::Dialect::Sqlite => {
            let path = url.trim_start_matches("sqlite://");
            let mut conn =
                <sqlx::SqliteConnection as sqlx::Connection>::connect(&format!("sqlite://{path}"))
                    .await
                    .unwrap();
            let plan: Vec<(i64, i64, i64, String)> =
                sqlx::query_as(sqlx::AssertSqlSafe(format!("EXPLAIN QUERY PLAN {sql}")))
                    .fetch_all(&mut conn)
                    .await
                    .unwrap();
            let detail: Vec<_> = plan.iter().map(|r| r.3.clone()).collect();
            assert!(
                detail.iter().any(|d| d.contains("documents_field_")),
                "the expression index is used: {detail:?}"
            );
            // The published copy's indexes hold published documents only; a list of published
            // copies, as the store writes it, implies that predicate and uses them.
            let filter =
                cms_core::filter::parse(&json!({"views": {"greater_than": 5}}), &PostFields);
            let orgs = vec!["o1".to_string()];
            let spec = crate::documents::ListSpec {
                organizations: &orgs,
                doc_type: "post",
                column: crate::filter_sql::DataColumn::Published,
                published: Some(crate::documents::Publication::Published),
                filter: &filter,
                sort: &[],
                limit: 20,
                offset: 0,
            };
            let (condition, _) = crate::documents::list_condition(&spec, store.dialect(), None);
            let plan: Vec<(i64, i64, i64, String)> = sqlx::query_as(sqlx::AssertSqlSafe(format!(
                "EXPLAIN QUERY PLAN SELECT id FROM documents WHERE {condition}"
            )))
            .fetch_all(&mut conn)
            .await
            .unwrap();
            let detail: Vec<_> = plan.iter().map(|r| r.3.clone()).collect();
            assert!(
                detail.iter().any(|d| d.contains("documents_field_")),
                "the published copy's index is used: {detail:?}"
            );
            let predicates: Vec<String> = sqlx::query_scalar(
                "SELECT sql FROM sqlite_master WHERE type = 'index' AND name LIKE 'documents_field_%'",
            )
            .fetch_all(&mut conn)
            .await
            .unwrap();
            assert_eq!(predicates.len(), 4, "{predicates:?}");
            for sql in &predicates {
                assert_eq!(
                    sql.contains("published_data IS NOT NULL"),
                    sql.contains("json_extract(published_data"),
                    "only the published copy's indexes leave drafts out: {sql}"
                );
            }
        }
        crate::Dialect::Postgres => {
            let mut conn = <sqlx::PgConnection as sqlx::Connection>::connect(&url)
                .await
                .unwrap();
            let count: i64 = sqlx::query_scalar(
                "SELECT COUNT(*) FROM pg_indexes WHERE tablename = 'documents' AND indexname LIKE 'documents_field_%' \
                 AND schemaname = current_schema()",
            )
            .fetch_one(&mut conn)
            .await
            .unwrap();
            // title and views: only the generated columns' indexes, for the draft and the
            // published copy (no JSON expression index could serve a condition under
            // row-level security).
            assert_eq!(count, 0);
            let generated: i64 = sqlx::query_scalar(
                "SELECT COUNT(*) FROM pg_indexes WHERE tablename = 'documents' \
                 AND indexname ~ '^documents_f_[0-9a-f]{16}$' AND schemaname = current_schema()",
            )
            .fetch_one(&mut conn)
            .await
            .unwrap();
            assert_eq!(generated, 4);
        }
    }
    store.close().await;
}

crate::both_engines!(indexed_fields_get_expression_indexes_that_queries_use,);

/// Under row-level security PostgreSQL only uses leakproof conditions as index conditions; the
/// JSON operators are not, so a range and sort on an indexed number field must go through its
/// generated `numeric` column to reach an index (issue 3): the plan of a list page and of its
/// exact count, as the application role acting for an organization, has an index condition on
/// the generated column and no filter over the JSON.
mod a_range_on_an_indexed_field_is_an_index_condition_under_row_level_security {
    use sqlx::{Connection, Executor};

    use super::*;
    use crate::Store;
    use crate::documents::ListSpec;
    use crate::filter_sql::DataColumn;

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn postgres() {
        crate::testing::with_database(crate::Dialect::Postgres, check).await;
    }

    async fn check(url: String) {
        let store = crate::postgres::PgStore::connect(&url, None).await.unwrap();
        store.migrate().await.unwrap();
        let fields = vec![(vec!["views".to_string()], cms_core::FieldKind::Number)];
        store.ensure_field_indexes("post", &fields).await.unwrap();
        let mut tx = store.write_instance_wide().await.unwrap();
        tx.insert_user(&user("u1", "ada@example.com"))
            .await
            .unwrap();
        tx.insert_organization(&org("o1", "acme")).await.unwrap();
        tx.commit().await.unwrap();
        let mut tx = store.write_for("o1").await.unwrap();
        for i in 0..1000 {
            let mut doc = document(&format!("d{i}"), "o1", "post", false);
            doc.draft_data = Json(json!({ "title": "t", "views": i }));
            tx.insert_document(&doc).await.unwrap();
        }
        tx.commit().await.unwrap();

        let filter =
            cms_core::filter::parse(&json!({ "views": { "greater_than": 950 } }), &PostFields);
        let sort = cms_core::filter::parse_sort(&["views"], &PostFields);
        let organizations = vec!["o1".to_string()];
        let spec = ListSpec {
            organizations: &organizations,
            doc_type: "post",
            column: DataColumn::Draft,
            published: None,
            filter: &filter,
            sort: &sort,
            limit: 20,
            offset: 0,
        };
        let columns = store.generated_columns();
        let (condition, binds) =
            crate::documents::list_condition(&spec, crate::Dialect::Postgres, Some(columns));
        let order = crate::filter_sql::compile_sort_with(
            &sort,
            crate::Dialect::Postgres,
            DataColumn::Draft,
            &filter,
            crate::documents::generated_for(&spec, Some(columns)),
        );
        let column = crate::filter_sql::generated_column(
            "post",
            &fields[0].0,
            cms_core::FieldKind::Number,
            DataColumn::Draft,
        )
        .unwrap()
        .name;

        let mut conn = sqlx::PgConnection::connect(&url).await.unwrap();
        conn.execute("VACUUM ANALYZE documents").await.unwrap();
        for query in [
            format!("SELECT COUNT(*) FROM documents WHERE {condition}"),
            format!("SELECT * FROM documents WHERE {condition} ORDER BY {order} LIMIT 20"),
        ] {
            let mut tx = conn.begin().await.unwrap();
            tx.execute("SET LOCAL ROLE cms_app").await.unwrap();
            tx.execute("SELECT set_config('cms.organization_id', 'o1', true)")
                .await
                .unwrap();
            // A table this small would be read whole; the question is whether an index can
            // answer the condition at all.
            tx.execute("SET LOCAL enable_seqscan = off").await.unwrap();
            tx.execute("SET LOCAL enable_bitmapscan = off")
                .await
                .unwrap();
            let mut args = sqlx::postgres::PgArguments::default();
            for bind in binds.clone() {
                bind.add_to_postgres(&mut args).unwrap();
            }
            let plan: Vec<String> =
                sqlx::query_scalar_with(sqlx::AssertSqlSafe(format!("EXPLAIN {query}")), args)
                    .fetch_all(&mut *tx)
                    .await
                    .unwrap();
            let plan = plan.join("\n");
            let row_security: bool = sqlx::query_scalar(
                "SELECT relrowsecurity FROM pg_class WHERE relname = 'documents' \
                                    AND relnamespace = current_schema()::regnamespace",
            )
            .fetch_one(&mut *tx)
            .await
            .unwrap();
            assert!(row_security, "row-level security is on");
            assert!(
                plan.lines()
                    .any(|l| l.contains("Index Cond") && l.contains(&format!("{column} >="))),
                "an index condition on the generated column:\n{query}\n{plan}"
            );
            assert!(
                !plan
                    .lines()
                    .any(|l| l.contains("Filter") && l.contains("#>")),
                "no filter over the JSON:\n{query}\n{plan}"
            );
            drop(tx);
        }
        conn.close().await.unwrap();
        // And the page itself, through the store.
        let mut tx = store.read_for("o1").await.unwrap();
        let (rows, total) = tx.list_documents(&spec).await.unwrap();
        assert_eq!(total, 49);
        let ids: Vec<_> = rows.iter().map(|r| r.id.as_str()).collect();
        assert_eq!(ids[..3], ["d951", "d952", "d953"]);
        drop(tx);
        store.close().await;
    }
}

/// Documents written before their fields were indexed are served by the indexes afterwards:
/// on PostgreSQL their columns are filled organization by organization (row-level security
/// admits no other way), writes after keep them exact, and a list uses them; on both engines
/// the results are those of the JSON.
async fn fields_indexed_after_the_fact_serve_existing_and_new_documents(url: String) {
    use crate::documents::ListSpec;
    use crate::filter_sql::DataColumn;
    use cms_core::FieldKind;
    let store = open(&url).await;
    super::with_two_organizations(&store).await;
    for org in ["o1", "o2"] {
        let mut tx = store.write_for(org).await.unwrap();
        for i in 0..30 {
            let mut doc = document(&format!("{org}-d{i}"), org, "post", false);
            doc.draft_data = Json(json!({ "title": format!("t{i:02}"), "views": i }));
            tx.insert_document(&doc).await.unwrap();
        }
        let mut other = document(&format!("{org}-a"), org, "author", false);
        other.draft_data = Json(json!({ "views": 1000 }));
        tx.insert_document(&other).await.unwrap();
        tx.commit().await.unwrap();
    }
    let fields = vec![
        (vec!["title".to_string()], FieldKind::String),
        (vec!["views".to_string()], FieldKind::Number),
    ];
    let build = store.ensure_field_indexes("post", &fields).await.unwrap();
    assert_eq!(
        build.built, 4,
        "title and views, draft and published copies"
    );
    let again = store.ensure_field_indexes("post", &fields).await.unwrap();
    assert_eq!((again.built, again.present), (0, 4));

    // A write after the build.
    let mut tx = store.write_for("o2").await.unwrap();
    let mut late = document("o2-late", "o2", "post", false);
    late.draft_data = Json(json!({ "title": "late", "views": 29.5 }));
    tx.insert_document(&late).await.unwrap();
    tx.commit().await.unwrap();

    let filter = cms_core::filter::parse(&json!({ "views": { "greater_than": 27 } }), &PostFields);
    let sort = cms_core::filter::parse_sort(&["-views"], &PostFields);
    let organizations = vec!["o1".to_string(), "o2".to_string()];
    let spec = ListSpec {
        organizations: &organizations,
        doc_type: "post",
        column: DataColumn::Draft,
        published: None,
        filter: &filter,
        sort: &sort,
        limit: 20,
        offset: 0,
    };
    let mut tx = store.read_for("o1").await.unwrap();
    let (rows, total) = tx.list_documents(&spec).await.unwrap();
    drop(tx);
    let ids: Vec<_> = rows.iter().map(|r| r.id.as_str()).collect();
    assert_eq!(total, 5);
    assert_eq!(ids, ["o2-late", "o1-d29", "o2-d29", "o1-d28", "o2-d28"]);

    if store.dialect() == crate::Dialect::Postgres {
        // The column list queries compare through, filled for every post of both organizations.
        let column = crate::filter_sql::generated_column(
            "post",
            &fields[1].0,
            FieldKind::Number,
            DataColumn::Draft,
        )
        .unwrap()
        .name;
        let mut conn = <sqlx::PgConnection as sqlx::Connection>::connect(&url)
            .await
            .unwrap();
        let unfilled: i64 = sqlx::query_scalar(sqlx::AssertSqlSafe(format!(
            "SELECT COUNT(*) FROM documents WHERE type = 'post' AND {column} IS NULL"
        )))
        .fetch_one(&mut conn)
        .await
        .unwrap();
        assert_eq!(unfilled, 0);
        let author: Option<f64> = sqlx::query_scalar(sqlx::AssertSqlSafe(format!(
            "SELECT {column} FROM documents WHERE id = 'o1-a'"
        )))
        .fetch_one(&mut conn)
        .await
        .unwrap();
        assert_eq!(author, None, "another type's rows stay out of the column");
        let late: Option<f64> = sqlx::query_scalar(sqlx::AssertSqlSafe(format!(
            "SELECT {column} FROM documents WHERE id = 'o2-late'"
        )))
        .fetch_one(&mut conn)
        .await
        .unwrap();
        assert_eq!(late, Some(29.5), "the trigger fills a later write");
        sqlx::Connection::close(conn).await.unwrap();
    }
    store.close().await;
}

crate::both_engines!(fields_indexed_after_the_fact_serve_existing_and_new_documents,);

/// Indexes of fields no schema indexes any more are dropped, and only those.
async fn indexes_no_schema_wants_are_dropped(url: String) {
    use cms_core::FieldKind;
    let store = open(&url).await;
    let title = (vec!["title".to_string()], FieldKind::String);
    let views = (vec!["views".to_string()], FieldKind::Number);
    store
        .ensure_field_indexes("post", &[title.clone(), views.clone()])
        .await
        .unwrap();
    store
        .ensure_field_indexes("author", std::slice::from_ref(&title))
        .await
        .unwrap();
    let wanted = vec![
        ("post".to_string(), vec![views.clone()]),
        ("author".to_string(), vec![title.clone()]),
    ];
    let dropped = store.drop_unwanted_field_indexes(&wanted).await.unwrap();
    // SQLite: the title's two indexes; PostgreSQL: its two columns (with their indexes).
    assert_eq!(dropped, 2);
    assert_eq!(store.drop_unwanted_field_indexes(&wanted).await.unwrap(), 0);
    // What is left is what is wanted: ensuring it again builds nothing.
    let post = store
        .ensure_field_indexes("post", std::slice::from_ref(&views))
        .await
        .unwrap();
    assert_eq!((post.built, post.present), (0, 2));
    let author = store
        .ensure_field_indexes("author", std::slice::from_ref(&title))
        .await
        .unwrap();
    assert_eq!((author.built, author.present), (0, 2));
    // No type left: everything goes, the type triggers included on PostgreSQL.
    let dropped = store.drop_unwanted_field_indexes(&[]).await.unwrap();
    let expected = match store.dialect() {
        crate::Dialect::Sqlite => 4,
        // views: float8 + numeric for two copies, title: two, and two triggers.
        crate::Dialect::Postgres => 4 + 2 + 2,
    };
    assert_eq!(dropped, expected);
    store.close().await;
}

crate::both_engines!(indexes_no_schema_wants_are_dropped,);

/// A column of an earlier version, `GENERATED ... STORED`, becomes a plain column the trigger
/// fills, keeping its values, marked filled so no start fills it again.
mod a_generated_column_of_an_earlier_version_is_converted_in_place {
    use sqlx::Connection;

    use super::*;
    use crate::filter_sql::{DataColumn, generated_column};

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn postgres() {
        crate::testing::with_database(crate::Dialect::Postgres, check).await;
    }

    async fn check(url: String) {
        let store = open(&url).await;
        super::super::with_two_organizations(&store).await;
        let mut tx = store.write_for("o1").await.unwrap();
        let mut doc = document("d1", "o1", "post", false);
        doc.draft_data = Json(json!({ "views": 7 }));
        tx.insert_document(&doc).await.unwrap();
        tx.commit().await.unwrap();
        // The shape of the columns before issue 23.
        let fields = vec![(vec!["views".to_string()], cms_core::FieldKind::Number)];
        let column = generated_column(
            "post",
            &fields[0].0,
            cms_core::FieldKind::Number,
            DataColumn::Draft,
        )
        .unwrap();
        let (exact, exact_expression) = column.exact.clone().unwrap();
        let mut conn = sqlx::PgConnection::connect(&url).await.unwrap();
        sqlx::query(sqlx::AssertSqlSafe(format!(
            "ALTER TABLE documents ADD COLUMN {} float8 GENERATED ALWAYS AS ({}) STORED, \
             ADD COLUMN {exact} numeric GENERATED ALWAYS AS ({exact_expression}) STORED",
            column.name, column.expression
        )))
        .execute(&mut conn)
        .await
        .unwrap();

        store.ensure_field_indexes("post", &fields).await.unwrap();
        let state: (String, Option<String>, Option<f64>) =
            sqlx::query_as(sqlx::AssertSqlSafe(format!(
                "SELECT a.attgenerated::text, col_description(a.attrelid, a.attnum), \
             (SELECT {0} FROM documents WHERE id = 'd1') \
             FROM pg_attribute a WHERE a.attrelid = 'documents'::regclass AND a.attname = '{0}'",
                column.name
            )))
            .fetch_one(&mut conn)
            .await
            .unwrap();
        assert_eq!(
            state,
            (String::new(), Some("cms:filled".to_string()), Some(7.0)),
            "a plain column, marked filled, its value kept"
        );
        // The trigger keeps it exact from here on.
        let mut tx = store.write_for("o1").await.unwrap();
        let mut later = document("d2", "o1", "post", false);
        later.draft_data = Json(json!({ "views": 8 }));
        tx.insert_document(&later).await.unwrap();
        tx.commit().await.unwrap();
        let value: Option<f64> = sqlx::query_scalar(sqlx::AssertSqlSafe(format!(
            "SELECT {} FROM documents WHERE id = 'd2'",
            column.name
        )))
        .fetch_one(&mut conn)
        .await
        .unwrap();
        assert_eq!(value, Some(8.0));
        conn.close().await.unwrap();
        store.close().await;
    }
}
