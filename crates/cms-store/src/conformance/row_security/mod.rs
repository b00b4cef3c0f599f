//! The second wall (SPEC.md Authentication point 3), on PostgreSQL: row-level security keeps a
//! unit acting for one organization away from another's rows, as the application role and as a
//! plain login that owns the tables; `serving_login` as a login that neither owns nor bypasses
//! them. SQLite has no second wall: there is nothing to assert there.

mod read_sessions;
mod search;
mod serving_login;

use serde_json::json;

use super::{document, open, org, with_two_organizations};
use crate::Json;
use crate::versions::VersionRecord;

/// SPEC.md Authentication point 3, the second wall: on PostgreSQL the database itself keeps a
/// unit acting for one organization away from another's rows, even when the application's own
/// filter is wrong (here: asking for o1's rows by name while acting for o3) and even for raw
/// SQL on the application's role.
async fn row_level_security_stops_cross_organization_reads_and_writes(url: String) {
    use sqlx::{Connection, Executor};
    let store = open(&url).await;
    with_two_organizations(&store).await;
    let mut tx = store.write_instance_wide().await.unwrap();
    tx.insert_organization(&org("o3", "stranger"))
        .await
        .unwrap();
    tx.commit().await.unwrap();
    for (id, org) in [("d1", "o1"), ("d2", "o2")] {
        let mut tx = store.write_for(org).await.unwrap();
        let version = VersionRecord {
            id: format!("v-{id}"),
            document_id: id.into(),
            organization_id: org.into(),
            version_number: 1,
            event_type: "draft".into(),
            data: Json(json!({})),
            created_by: None,
            created_by_name: None,
            created_at: 1,
        };
        tx.insert_new_document(&document(id, org, "post", false), &[version], &[])
            .await
            .unwrap();
        let tokens = cms_core::search::tokenize(id);
        let search_row = cms_core::search::SearchRow {
            locale: String::new(),
            path: "title".into(),
            chunk: 0,
            weight: 500,
            exact: cms_core::search::exact_key(&tokens),
            tokens,
        };
        tx.replace_search_rows(id, org, "draft", &[search_row])
            .await
            .unwrap();
        tx.commit().await.unwrap();
    }
    let o1 = vec!["o1".to_string()];
    let o1_and_child = vec!["o1".to_string(), "o2".to_string()];

    // Through the store: the application filter names o1, the unit acts for o3.
    let mut tx = store.write_for("o3").await.unwrap();
    assert!(tx.document(&o1, "d1").await.unwrap().is_none());
    assert!(
        tx.documents_by_ids(&o1, &["d1".into()])
            .await
            .unwrap()
            .is_empty()
    );
    assert_eq!(tx.count_versions("d1").await.unwrap(), 0);
    assert!(tx.search_rows_of("d1", "draft").await.unwrap().is_empty());
    assert!(
        tx.replace_search_rows("d1", "o1", "draft", &[])
            .await
            .is_ok(),
        "deleting another organization's search rows deletes nothing"
    );
    assert!(
        !tx.save_draft("d1", &json!({"x": 1}), 1, None, 9)
            .await
            .unwrap()
    );
    assert!(!tx.delete_document("d1").await.unwrap());
    assert!(
        tx.insert_document(&document("d9", "o1", "post", false))
            .await
            .is_err(),
        "a row of another organization cannot be inserted"
    );
    drop(tx);
    // A parent reads its child but writes only its own rows; a child never sees its parent.
    let mut tx = store.write_for("o1").await.unwrap();
    assert!(tx.document(&o1_and_child, "d2").await.unwrap().is_some());
    assert!(!tx.delete_document("d2").await.unwrap());
    drop(tx);
    let mut tx = store.read_for("o2").await.unwrap();
    assert!(tx.document(&o1_and_child, "d1").await.unwrap().is_none());
    drop(tx);
    // A unit that names no organization sees nothing.
    let mut tx = store.read_instance_wide().await.unwrap();
    assert!(tx.document(&o1, "d1").await.unwrap().is_none());
    drop(tx);

    // Raw SQL on the application's role, another organization set: nothing read, nothing written.
    let mut conn = sqlx::PgConnection::connect(&url).await.unwrap();
    conn.execute(sqlx::AssertSqlSafe(format!(
        "SET ROLE {}",
        crate::postgres::APPLICATION_ROLE
    )))
    .await
    .unwrap();
    let mut raw = conn.begin().await.unwrap();
    raw.execute("SELECT set_config('cms.organization_id', 'o3', true)")
        .await
        .unwrap();
    for table in [
        "documents",
        "document_versions",
        "document_references",
        "document_search",
    ] {
        let seen: i64 =
            sqlx::query_scalar(sqlx::AssertSqlSafe(format!("SELECT COUNT(*) FROM {table}")))
                .fetch_one(&mut *raw)
                .await
                .unwrap();
        assert_eq!(seen, 0, "{table} is walled off");
    }
    let updated = raw
        .execute("UPDATE documents SET revision = revision + 1")
        .await
        .unwrap();
    let deleted = raw.execute("DELETE FROM document_versions").await.unwrap();
    assert_eq!((updated.rows_affected(), deleted.rows_affected()), (0, 0));
    let refused = raw
        .execute(
            "INSERT INTO documents (id, organization_id, type, draft_data, revision, created_at, \
             updated_at) VALUES ('d8', 'o1', 'post', '{}', 1, 1, 1)",
        )
        .await
        .unwrap_err();
    assert_eq!(
        refused
            .as_database_error()
            .and_then(|e| e.code())
            .as_deref(),
        Some("42501"),
        "insufficient privilege: the policy refused the row"
    );
    drop(raw);
    conn.close().await.unwrap();

    let mut tx = store.read_for("o1").await.unwrap();
    let d1 = tx.document(&o1, "d1").await.unwrap().unwrap();
    assert_eq!((d1.revision, d1.draft_data.0), (1, json!({"title": "d1"})));
    assert_eq!(
        tx.search_rows_of("d1", "draft").await.unwrap().len(),
        1,
        "o1's search rows survived o3's delete"
    );
    drop(tx);
    store.close().await;
}

mod row_level_security_stops_cross_organization_reads_and_writes {
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn postgres() {
        crate::testing::with_database(
            crate::Dialect::Postgres,
            super::row_level_security_stops_cross_organization_reads_and_writes,
        )
        .await;
    }
}

/// A deployment whose login is a plain role (no superuser, no BYPASSRLS) owns the tables and
/// gets no `cms_app` switch: FORCE ROW LEVEL SECURITY must bind it all the same, and migrations
/// and index creation must still work as that owner.
mod row_level_security_binds_a_plain_owner_login {
    use sqlx::{Connection, Executor};

    use super::*;

    const LOGIN: &str = "cms_plain_owner";

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn postgres() {
        let server = crate::testing::postgres_url();
        let schema = format!("t_{}", uuid::Uuid::now_v7().simple());
        let mut admin = sqlx::PgConnection::connect(&server)
            .await
            .unwrap_or_else(|e| {
                panic!("PostgreSQL tests need a server at {server} (CMS_TEST_POSTGRES_URL): {e}")
            });
        admin
            .execute(sqlx::AssertSqlSafe(format!(
                "DO $$ BEGIN CREATE ROLE {LOGIN} LOGIN NOSUPERUSER NOBYPASSRLS; \
                 EXCEPTION WHEN duplicate_object OR unique_violation THEN NULL; END $$"
            )))
            .await
            .unwrap();
        admin
            .execute(sqlx::AssertSqlSafe(format!(
                "CREATE SCHEMA {schema} AUTHORIZATION {LOGIN}"
            )))
            .await
            .unwrap();
        let url = plain_login_url(&server, &schema);
        let outcome = tokio::spawn(walled_off_as_owner(url)).await;
        let _ = admin
            .execute(sqlx::AssertSqlSafe(format!("DROP SCHEMA {schema} CASCADE")))
            .await;
        if let Err(e) = outcome {
            std::panic::resume_unwind(e.into_panic());
        }
    }

    /// The server URL with the plain login as user and the schema as search path.
    fn plain_login_url(server: &str, schema: &str) -> String {
        let (scheme, rest) = server.split_once("://").expect("a postgres:// URL");
        let host = rest.rsplit_once('@').map_or(rest, |(_, host)| host);
        let sep = if host.contains('?') { '&' } else { '?' };
        format!("{scheme}://{LOGIN}@{host}{sep}options=-c%20search_path%3D{schema}")
    }

    async fn walled_off_as_owner(url: String) {
        let store = open(&url).await;
        // Index creation runs as the owner too.
        store
            .ensure_field_indexes(
                "post",
                &[(vec!["title".to_string()], cms_core::FieldKind::String)],
            )
            .await
            .unwrap();
        with_two_organizations(&store).await;
        let mut tx = store.write_for("o1").await.unwrap();
        tx.insert_document(&document("d1", "o1", "post", false))
            .await
            .unwrap();
        tx.replace_search_rows("d1", "o1", "draft", &[search::title_row("parent words")])
            .await
            .unwrap();
        tx.commit().await.unwrap();
        // The search function runs with the plain owner's rights, which FORCE binds too: the
        // same answers (no index, see migration 0014).
        let mut tx = store.read_for("o1").await.unwrap();
        let found = search::found(&mut tx, &["o1", "o2"], "parent words").await;
        assert_eq!(found, (vec!["d1".to_string()], 1));
        drop(tx);
        let mut tx = store.read_for("o2").await.unwrap();
        let found = search::found(&mut tx, &["o1", "o2"], "parent words").await;
        assert_eq!(
            found,
            (vec![], 0),
            "a child never finds its parent's documents"
        );
        drop(tx);
        let o1 = vec!["o1".to_string()];
        let mut tx = store.read_for("o2").await.unwrap();
        assert!(
            tx.document(&o1, "d1").await.unwrap().is_none(),
            "a child never reads its parent, even as the tables' owner"
        );
        drop(tx);
        let mut tx = store.read_for("o1").await.unwrap();
        assert!(tx.document(&o1, "d1").await.unwrap().is_some());
        drop(tx);
        // The cross-organization lookup works for a plain owner too, and opens nothing else.
        for mut tx in [
            store.read_instance_wide().await.unwrap(),
            store.read_for("o2").await.unwrap(),
        ] {
            let found = tx.locate_document("d1").await.unwrap().unwrap();
            assert_eq!(
                (found.organization_id.as_str(), found.doc_type.as_str()),
                ("o1", "post")
            );
            assert!(tx.document(&o1, "d1").await.unwrap().is_none());
            drop(tx);
        }
        // Raw SQL as the owner, without any role switch.
        let mut conn = sqlx::PgConnection::connect(&url).await.unwrap();
        let (user, bypasses): (String, bool) = sqlx::query_as(
            "SELECT current_user::text, rolsuper OR rolbypassrls FROM pg_roles \
             WHERE rolname = current_user",
        )
        .fetch_one(&mut conn)
        .await
        .unwrap();
        assert_eq!((user.as_str(), bypasses), (LOGIN, false));
        let mut raw = conn.begin().await.unwrap();
        raw.execute("SELECT set_config('cms.organization_id', 'o2', true)")
            .await
            .unwrap();
        let seen: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM documents")
            .fetch_one(&mut *raw)
            .await
            .unwrap();
        let updated = raw
            .execute("UPDATE documents SET revision = revision + 1")
            .await
            .unwrap();
        assert_eq!((seen, updated.rows_affected()), (0, 0));
        drop(raw);
        conn.close().await.unwrap();
        store.close().await;
    }
}
