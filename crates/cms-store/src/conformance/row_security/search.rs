//! Full-text search behind the wall, on PostgreSQL: a search matches through
//! `cms_search_matches` (migration 0014), a SECURITY DEFINER function that applies the tenant
//! rule itself so that `@@` can be answered from the GIN index. These tests hold it to the read
//! policy's answer (the acting organization and its children, nothing when none is named, never
//! another organization's rows even when the application asks for them and the words match) and
//! show that a search made as the application role with row-level security on scans the GIN
//! index. SQLite has no second wall and uses its FTS5 index directly: nothing to assert there.

use cms_core::filter::Filter;
use cms_core::search::{SearchQuery, SearchRow, tokenize};
use sqlx::{Connection, Executor};

use super::super::{document, open, org, with_two_organizations};
use crate::documents::ListSpec;
use crate::filter_sql::DataColumn;
use crate::organizations::OrganizationRecord;
use crate::search::SearchSpec;

pub(super) fn title_row(text: &str) -> SearchRow {
    let tokens = tokenize(text);
    SearchRow {
        locale: String::new(),
        path: "title".into(),
        chunk: 0,
        weight: 500,
        exact: cms_core::search::exact_key(&tokens),
        tokens,
    }
}

/// The ids a unit finds for `search` over the draft titles of `organizations` (what the
/// application asks for; the wall decides what it gets), in id order, and the total.
pub(super) async fn found(
    tx: &mut Box<dyn crate::Tx>,
    organizations: &[&str],
    search: &str,
) -> (Vec<String>, i64) {
    let organizations: Vec<String> = organizations.iter().map(|o| o.to_string()).collect();
    let spec = ListSpec {
        organizations: &organizations,
        doc_type: "post",
        column: DataColumn::Draft,
        published: None,
        filter: &Filter::All,
        sort: &[],
        limit: 100,
        offset: 0,
    };
    let query = SearchQuery::parse(search).unwrap();
    let paths = vec!["title".to_string()];
    let search = SearchSpec {
        query: &query,
        locale: "en",
        paths: &paths,
    };
    let (rows, total) = tx.search_documents(&spec, &search).await.unwrap();
    let mut ids: Vec<String> = rows.into_iter().map(|r| r.document.id).collect();
    ids.sort();
    (ids, total)
}

/// o1 with its child o2 and a stranger o3 with its child o4, one post each whose title holds
/// the same words and its own id.
async fn four_organizations_with_the_same_words(store: &std::sync::Arc<dyn crate::Store>) {
    with_two_organizations(store).await;
    let mut tx = store.write_instance_wide().await.unwrap();
    tx.insert_organization(&org("o3", "stranger"))
        .await
        .unwrap();
    tx.insert_organization(&OrganizationRecord {
        parent_id: Some("o3".into()),
        ..org("o4", "strangers-child")
    })
    .await
    .unwrap();
    tx.commit().await.unwrap();
    for (id, organization) in [("d1", "o1"), ("d2", "o2"), ("d3", "o3"), ("d4", "o4")] {
        let mut tx = store.write_for(organization).await.unwrap();
        tx.insert_document(&document(id, organization, "post", false))
            .await
            .unwrap();
        let title = format!("Shared secret words {id}");
        tx.replace_search_rows(id, organization, "draft", &[title_row(&title)])
            .await
            .unwrap();
        tx.commit().await.unwrap();
    }
}

const ALL: &[&str] = &["o1", "o2", "o3", "o4"];

async fn a_search_never_crosses_the_tenant_wall(url: String) {
    let store = open(&url).await;
    four_organizations_with_the_same_words(&store).await;
    let ids = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();

    // The application asks for every organization (a wrong filter): the wall answers.
    let mut tx = store.read_for("o1").await.unwrap();
    assert_eq!(
        found(&mut tx, ALL, "shared words").await,
        (ids(&["d1", "d2"]), 2),
        "a parent finds its own and its child's documents, not a stranger's"
    );
    assert_eq!(
        found(&mut tx, ALL, "\"secret words\"").await,
        (ids(&["d1", "d2"]), 2)
    );
    assert_eq!(found(&mut tx, ALL, "shared -d1").await, (ids(&["d2"]), 1));
    assert_eq!(
        found(&mut tx, ALL, "shared d3").await,
        (vec![], 0),
        "a word only a stranger's document holds matches nothing"
    );
    assert_eq!(found(&mut tx, ALL, "d4").await, (vec![], 0));
    // As the service asks: the acting organization and its children.
    assert_eq!(
        found(&mut tx, &["o1", "o2"], "secret").await,
        (ids(&["d1", "d2"]), 2)
    );
    drop(tx);
    let mut tx = store.read_for("o2").await.unwrap();
    assert_eq!(
        found(&mut tx, ALL, "shared").await,
        (ids(&["d2"]), 1),
        "a child never finds its parent's documents"
    );
    drop(tx);
    let mut tx = store.read_for("o3").await.unwrap();
    assert_eq!(found(&mut tx, ALL, "shared").await, (ids(&["d3", "d4"]), 2));
    drop(tx);
    // A unit that names no organization finds nothing.
    for mut tx in [
        store.read_instance_wide().await.unwrap(),
        store.read().await.unwrap(),
    ] {
        assert_eq!(found(&mut tx, ALL, "shared").await, (vec![], 0));
        drop(tx);
    }

    // Raw SQL as the application role: the function answers exactly what the read policy lets
    // a direct query on `document_search` see, for every declaration.
    let mut conn = sqlx::PgConnection::connect(&url).await.unwrap();
    conn.execute(sqlx::AssertSqlSafe(format!(
        "SET ROLE {}",
        crate::postgres::APPLICATION_ROLE
    )))
    .await
    .unwrap();
    let declarations = [
        ("o1", vec!["d1", "d2"]),
        ("o2", vec!["d2"]),
        ("o3", vec!["d3", "d4"]),
        ("o4", vec!["d4"]),
        ("", vec![]),
        ("nobody", vec![]),
    ];
    for (acting, expected) in declarations {
        for query in ["'shared'", "'secret' <-> 'words'", "'d1'", "'d3'"] {
            let mut raw = conn.begin().await.unwrap();
            raw.execute(sqlx::AssertSqlSafe(format!(
                "SELECT set_config('cms.organization_id', '{acting}', true)"
            )))
            .await
            .unwrap();
            let through_function: Vec<String> = sqlx::query_scalar(
                "SELECT matched_document_id FROM cms_search_matches($1::tsquery, 'draft', 'en', \
                 ARRAY['title']) ORDER BY 1",
            )
            .bind(query)
            .fetch_all(&mut *raw)
            .await
            .unwrap();
            let under_policy: Vec<String> = sqlx::query_scalar(
                "SELECT DISTINCT document_id FROM document_search WHERE tokens @@ $1::tsquery \
                 AND copy = 'draft' AND locale IN ('en', '') AND path = 'title' ORDER BY 1",
            )
            .bind(query)
            .fetch_all(&mut *raw)
            .await
            .unwrap();
            assert_eq!(
                through_function, under_policy,
                "acting for {acting:?}, {query}: the function answers as the policy"
            );
            assert!(
                through_function
                    .iter()
                    .all(|id| expected.contains(&id.as_str())),
                "acting for {acting:?}, {query}: {through_function:?} within {expected:?}"
            );
            if query == "'shared'" {
                assert_eq!(through_function, expected, "acting for {acting:?}");
            }
            drop(raw);
        }
    }
    // Declaring nothing at all (the setting never set in this session's transaction).
    let mut raw = conn.begin().await.unwrap();
    let undeclared: i64 = sqlx::query_scalar(
        "SELECT COUNT(*) FROM cms_search_matches('shared'::tsquery, 'draft', '', ARRAY['title'])",
    )
    .fetch_one(&mut *raw)
    .await
    .unwrap();
    assert_eq!(
        undeclared, 0,
        "a unit that names no organization gets nothing"
    );
    drop(raw);
    conn.close().await.unwrap();

    // The function is what migration 0014 promises: the owner's rights, a fixed search path,
    // callable by the application role and not by everyone.
    let mut conn = sqlx::PgConnection::connect(&url).await.unwrap();
    let (definer, config, public, app): (bool, Vec<String>, bool, bool) = sqlx::query_as(
        "SELECT p.prosecdef, p.proconfig, \
         EXISTS (SELECT 1 FROM aclexplode(p.proacl) a WHERE a.grantee = 0), \
         has_function_privilege('cms_app', p.oid, 'EXECUTE') \
         FROM pg_proc p WHERE p.proname = 'cms_search_matches' \
         AND p.pronamespace = current_schema()::regnamespace",
    )
    .fetch_one(&mut conn)
    .await
    .unwrap();
    assert!(definer, "SECURITY DEFINER");
    assert!(
        config
            .iter()
            .any(|c| c.starts_with("search_path=") && c.ends_with(", pg_temp")),
        "a fixed search path, pg_temp last: {config:?}"
    );
    assert!(!public, "PUBLIC may not execute it");
    assert!(app, "the application role may");
    conn.close().await.unwrap();
    store.close().await;
}

mod a_search_never_crosses_the_tenant_wall {
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn postgres() {
        crate::testing::with_database(
            crate::Dialect::Postgres,
            super::a_search_never_crosses_the_tenant_wall,
        )
        .await;
    }
}

/// Index scans of `index` counted so far in the current transaction.
async fn scans_of(conn: &mut sqlx::PgConnection, index: &str) -> i64 {
    sqlx::query_scalar("SELECT pg_stat_get_xact_numscans($1::regclass)")
        .bind(index)
        .fetch_one(conn)
        .await
        .unwrap()
}

/// A search made as the application role, row-level security on, acting for an organization,
/// is answered from the GIN index `document_search_tokens`: the statement the store runs goes
/// through `cms_search_matches` (its plan's function scan), the transaction's index statistics
/// count a scan of the GIN index and none of the organization index the policy alone would
/// use, and the function's own query, planned as the function plans it (generically, with its
/// owner's rights), is a Bitmap Index Scan on the GIN index.
async fn a_search_is_answered_from_the_gin_index_under_row_level_security(url: String) {
    let store = open(&url).await;
    with_two_organizations(&store).await;
    let mut tx = store.write_instance_wide().await.unwrap();
    tx.insert_organization(&org("o3", "stranger"))
        .await
        .unwrap();
    tx.commit().await.unwrap();
    // 1,000 posts in o1 and in o3, every title of common words; one post in each holds "zebra".
    for organization in ["o1", "o3"] {
        let mut tx = store.write_for(organization).await.unwrap();
        let mut rows = Vec::new();
        for i in 0..1000 {
            let id = format!("{organization}-{i:04}");
            tx.insert_document(&document(&id, organization, "post", false))
                .await
                .unwrap();
            let words = if i == 7 { "zebra" } else { "horse" };
            rows.push((
                id,
                title_row(&format!("the common {words} title {}", i % 10)),
            ));
        }
        let rows: Vec<_> = rows
            .iter()
            .map(|(id, row)| (id.as_str(), organization, "draft", row))
            .collect();
        tx.add_search_rows(&rows).await.unwrap();
        tx.commit().await.unwrap();
    }
    let mut conn = sqlx::PgConnection::connect(&url).await.unwrap();
    conn.execute("VACUUM ANALYZE document_search")
        .await
        .unwrap();
    conn.execute("VACUUM ANALYZE documents").await.unwrap();

    let organizations = vec!["o1".to_string()];
    let spec = ListSpec {
        organizations: &organizations,
        doc_type: "post",
        column: DataColumn::Draft,
        published: None,
        filter: &Filter::All,
        sort: &[],
        limit: 20,
        offset: 0,
    };
    let query = SearchQuery::parse("zebra title").unwrap();
    let paths = vec!["title".to_string()];
    let search = SearchSpec {
        query: &query,
        locale: "en",
        paths: &paths,
    };
    let (page, binds) =
        crate::search::search_statement(&spec, &search, crate::Dialect::Postgres, None, false);
    let arguments = || {
        let mut args = sqlx::postgres::PgArguments::default();
        for bind in binds.clone() {
            bind.add_to_postgres(&mut args).unwrap();
        }
        args
    };

    let mut tx = conn.begin().await.unwrap();
    tx.execute(sqlx::AssertSqlSafe(format!(
        "SET LOCAL ROLE {}",
        crate::postgres::APPLICATION_ROLE
    )))
    .await
    .unwrap();
    tx.execute("SELECT set_config('cms.organization_id', 'o1', true)")
        .await
        .unwrap();
    let (user, bypasses, row_security): (String, bool, bool) = sqlx::query_as(
        "SELECT current_user::text, r.rolsuper OR r.rolbypassrls, \
         (SELECT relrowsecurity AND relforcerowsecurity FROM pg_class \
          WHERE relname = 'document_search' AND relnamespace = current_schema()::regnamespace) \
         FROM pg_roles r WHERE r.rolname = current_user",
    )
    .fetch_one(&mut *tx)
    .await
    .unwrap();
    assert_eq!(
        (user.as_str(), bypasses, row_security),
        ("cms_app", false, true),
        "the application role, bound by row-level security"
    );
    let plan: Vec<String> =
        sqlx::query_scalar_with(sqlx::AssertSqlSafe(format!("EXPLAIN {page}")), arguments())
            .fetch_all(&mut *tx)
            .await
            .unwrap();
    let plan = plan.join("\n");
    assert!(
        plan.contains("Function Scan on cms_search_matches"),
        "the store's statement matches through the function:\n{plan}"
    );
    let gin_before = scans_of(&mut tx, "document_search_tokens").await;
    let by_organization_before = scans_of(&mut tx, "document_search_by_organization").await;
    let found: Vec<String> = sqlx::query_scalar_with(
        sqlx::AssertSqlSafe(format!("SELECT id FROM ({page}) p")),
        arguments(),
    )
    .fetch_all(&mut *tx)
    .await
    .unwrap();
    assert_eq!(found, ["o1-0007"], "o3's zebra stays behind the wall");
    let gin = scans_of(&mut tx, "document_search_tokens").await - gin_before;
    let by_organization =
        scans_of(&mut tx, "document_search_by_organization").await - by_organization_before;
    assert!(
        gin >= 1,
        "the search scanned the GIN index ({gin} scans):\n{plan}"
    );
    assert_eq!(
        by_organization, 0,
        "and did not read the organization's rows through the policy's index"
    );
    drop(tx);

    // The function's own query, planned as a SQL function's is (generic parameters), with its
    // owner's rights (the migrating login, here this connection's), acting for o1.
    let (body, owner): (String, String) = sqlx::query_as(
        "SELECT p.prosrc, pg_get_userbyid(p.proowner)::text FROM pg_proc p \
         WHERE p.proname = 'cms_search_matches' \
         AND p.pronamespace = current_schema()::regnamespace",
    )
    .fetch_one(&mut conn)
    .await
    .unwrap();
    let mut tx = conn.begin().await.unwrap();
    let me: String = sqlx::query_scalar("SELECT current_user::text")
        .fetch_one(&mut *tx)
        .await
        .unwrap();
    assert_eq!(owner, me, "the migrating login owns the function");
    tx.execute("SELECT set_config('cms.organization_id', 'o1', true)")
        .await
        .unwrap();
    tx.execute("SET LOCAL plan_cache_mode = force_generic_plan")
        .await
        .unwrap();
    tx.execute(sqlx::AssertSqlSafe(format!(
        "PREPARE search_body(tsquery, text, text, text[]) AS {body}"
    )))
    .await
    .unwrap();
    let plan: Vec<String> = sqlx::query_scalar(
        "EXPLAIN EXECUTE search_body('zebra'::tsquery, 'draft', 'en', ARRAY['title'])",
    )
    .fetch_all(&mut *tx)
    .await
    .unwrap();
    let plan = plan.join("\n");
    assert!(
        plan.lines()
            .any(|l| l.contains("Bitmap Index Scan on document_search_tokens")),
        "the function's query reads the GIN index:\n{plan}"
    );
    assert!(
        !plan.contains("document_search_by_organization") && !plan.contains("Seq Scan"),
        "and neither scans nor ranges over the organization:\n{plan}"
    );
    drop(tx);
    conn.close().await.unwrap();

    // And through the store.
    let mut tx = store.read_for("o1").await.unwrap();
    let (rows, total) = tx.search_documents(&spec, &search).await.unwrap();
    assert_eq!(total, 1);
    assert_eq!(rows[0].document.id, "o1-0007");
    drop(tx);
    store.close().await;
}

mod a_search_is_answered_from_the_gin_index_under_row_level_security {
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn postgres() {
        crate::testing::with_database(
            crate::Dialect::Postgres,
            super::a_search_is_answered_from_the_gin_index_under_row_level_security,
        )
        .await;
    }
}
