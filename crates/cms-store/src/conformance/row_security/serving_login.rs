//! The row-level-security wall as the recommended deployment meets it on PostgreSQL: the
//! service runs as a login that neither owns the tables nor may bypass their policies (granted
//! `cms_app`), while migrations run as the owner through the migration URL (README,
//! docs/CONFIGURATION.md). Raw SQL as that login shows that acting for one organization it can
//! neither read nor write another's rows in any tenant table, that declaring nothing it sees
//! nothing, and that it cannot take the wall down. SQLite has no logins and no second wall (one
//! instance, the service layer decides): there is nothing to assert there.

use sqlx::postgres::{PgConnection, PgQueryResult};
use sqlx::{Connection, Executor};

use crate::Json;
use crate::roles::RoleRecord;

/// Every table with an organization's rows, with the condition that picks organization `ob`'s
/// rows, a harmless update, and an insert of a fresh row of `ob`.
struct Table {
    name: &'static str,
    of_b: &'static str,
    of_a: &'static str,
    touch: &'static str,
    insert_b: &'static str,
    /// Moving one of the acting organization's own rows into `ob`, where the table has an
    /// organization column to move.
    move_to_b: Option<&'static str>,
}

const TABLES: &[Table] = &[
    Table {
        name: "roles",
        of_b: "organization_id = 'ob'",
        of_a: "organization_id = 'oa'",
        touch: "description = description",
        insert_b: "INSERT INTO roles (id, organization_id, name, capabilities, created_at, updated_at) \
                   VALUES ('rb2', 'ob', 'spy', '[]', 1, 1)",
        move_to_b: Some(
            "UPDATE roles SET organization_id = 'ob', name = 'moved' WHERE organization_id = 'oa'",
        ),
    },
    Table {
        name: "members",
        of_b: "organization_id = 'ob'",
        of_a: "organization_id = 'oa'",
        touch: "role = role",
        insert_b: "INSERT INTO members (organization_id, user_id, role, created_at) \
                   VALUES ('ob', 'u2', 'owner', 1)",
        move_to_b: Some(
            "UPDATE members SET organization_id = 'ob', user_id = 'u2' WHERE organization_id = 'oa'",
        ),
    },
    Table {
        name: "api_keys",
        of_b: "organization_id = 'ob'",
        of_a: "organization_id = 'oa'",
        touch: "name = name",
        insert_b: "INSERT INTO api_keys (id, organization_id, name, key_hash, start, permissions, \
                   created_by, created_at) VALUES ('kb2', 'ob', 'spy', 'hkb2', 'cms_', '[]', 'u1', 1)",
        move_to_b: Some("UPDATE api_keys SET organization_id = 'ob' WHERE organization_id = 'oa'"),
    },
    Table {
        name: "invitations",
        of_b: "organization_id = 'ob'",
        of_a: "organization_id = 'oa'",
        touch: "email = email",
        insert_b: "INSERT INTO invitations (id, organization_id, email, role, status, expires_at, \
                   created_at, updated_at) VALUES ('ib2', 'ob', 'spy@example.com', 'owner', 'accepted', 9, 1, 1)",
        move_to_b: Some(
            "UPDATE invitations SET organization_id = 'ob' WHERE organization_id = 'oa'",
        ),
    },
    Table {
        name: "events",
        of_b: "organization_id = 'ob'",
        of_a: "organization_id = 'oa'",
        touch: "type = type",
        insert_b: "INSERT INTO events (id, organization_id, type, payload, created_at) \
                   VALUES ('eb2', 'ob', 'spy', '{}', 1)",
        move_to_b: Some("UPDATE events SET organization_id = 'ob' WHERE organization_id = 'oa'"),
    },
    Table {
        name: "outbox",
        of_b: "event_id = 'eb'",
        of_a: "event_id = 'ea'",
        touch: "processed_at = 7",
        // The outbox row of an event of `ob` whose row the relay already removed.
        insert_b: "INSERT INTO outbox (event_id, created_at) VALUES ('eb_done', 1)",
        move_to_b: None,
    },
    Table {
        name: "jobs",
        of_b: "organization_id = 'ob'",
        of_a: "organization_id = 'oa'",
        touch: "status = status",
        insert_b: "INSERT INTO jobs (id, organization_id, type, status, payload, max_attempts, run_at, \
                   created_at, updated_at) VALUES ('jb2', 'ob', 'spy', 'pending', '{}', 3, 1, 1, 1)",
        move_to_b: Some("UPDATE jobs SET organization_id = 'ob' WHERE organization_id = 'oa'"),
    },
    Table {
        name: "schedules",
        of_b: "organization_id = 'ob'",
        of_a: "organization_id = 'oa'",
        touch: "status = status",
        insert_b: "INSERT INTO schedules (id, document_id, organization_id, action, run_at, status, \
                   job_id, created_at, updated_at) VALUES ('sb2', 'db', 'ob', 'publish', 1, 'cancelled', 'jb', 1, 1)",
        move_to_b: Some("UPDATE schedules SET organization_id = 'ob' WHERE organization_id = 'oa'"),
    },
    Table {
        name: "preview_tokens",
        of_b: "organization_id = 'ob'",
        of_a: "organization_id = 'oa'",
        touch: "expires_at = expires_at",
        insert_b: "INSERT INTO preview_tokens (id, organization_id, document_id, token_hash, \
                   created_by, created_at, expires_at) VALUES ('pb2', 'ob', 'db', 'hpb2', 'u1', 1, 9)",
        move_to_b: Some(
            "UPDATE preview_tokens SET organization_id = 'ob' WHERE organization_id = 'oa'",
        ),
    },
    Table {
        name: "webhook_endpoints",
        of_b: "organization_id = 'ob'",
        of_a: "organization_id = 'oa'",
        touch: "url = url",
        insert_b: "INSERT INTO webhook_endpoints (id, organization_id, url, events, enabled, \
                   secret, created_at, updated_at) VALUES ('wb2', 'ob', 'https://spy', '[\"*\"]', TRUE, 'v1:x', 1, 1)",
        move_to_b: Some(
            "UPDATE webhook_endpoints SET organization_id = 'ob' WHERE organization_id = 'oa'",
        ),
    },
    Table {
        name: "webhook_deliveries",
        of_b: "organization_id = 'ob'",
        of_a: "organization_id = 'oa'",
        touch: "response_status = response_status",
        insert_b: "INSERT INTO webhook_deliveries (job_id, endpoint_id, organization_id, event_id, \
                   event_type, created_at) VALUES ('jb2', 'wb', 'ob', 'eb', 't', 1)",
        move_to_b: Some(
            "UPDATE webhook_deliveries SET organization_id = 'ob' WHERE organization_id = 'oa'",
        ),
    },
    Table {
        name: "plugin_settings",
        of_b: "organization_id = 'ob'",
        of_a: "organization_id = 'oa'",
        touch: "updated_at = updated_at",
        insert_b: "INSERT INTO plugin_settings (organization_id, plugin_id, \"values\", updated_at) \
                   VALUES ('ob', 'spy', '{}', 1)",
        move_to_b: Some(
            "UPDATE plugin_settings SET organization_id = 'ob' WHERE organization_id = 'oa'",
        ),
    },
    Table {
        name: "audit_log",
        of_b: "organization_id = 'ob'",
        of_a: "organization_id = 'oa'",
        touch: "summary = summary",
        insert_b: "INSERT INTO audit_log (id, organization_id, action, actor_type, summary, \
                   created_at) VALUES ('ab2', 'ob', 'role.deleted', 'user', 'spy', 1)",
        move_to_b: Some("UPDATE audit_log SET organization_id = 'ob' WHERE organization_id = 'oa'"),
    },
    Table {
        name: "sessions",
        of_b: "active_organization_id = 'ob'",
        of_a: "active_organization_id = 'oa'",
        touch: "updated_at = updated_at",
        insert_b: "INSERT INTO sessions (id, token_hash, user_id, active_organization_id, expires_at, \
                   created_at, updated_at) VALUES ('sb2', 'hsb2', 'u1', 'ob', 9, 1, 1)",
        // A's own sessions are out of its reach already (see below).
        move_to_b: None,
    },
];

/// Two unrelated organizations `oa` and `ob`, each with a row in every tenant table, written as
/// the owner (the test server's superuser, which bypasses the policies).
const SEED: &str = "
    INSERT INTO users (id, email, name, role, created_at, updated_at) VALUES
        ('u1', 'ada@example.com', 'Ada', 'editor', 1, 1),
        ('u2', 'bob@example.com', 'Bob', 'editor', 1, 1);
    INSERT INTO organizations (id, name, slug, created_at, updated_at) VALUES
        ('oa', 'A', 'a', 1, 1), ('ob', 'B', 'b', 1, 1);
    INSERT INTO roles (id, organization_id, name, capabilities, created_at, updated_at) VALUES
        ('ra', 'oa', 'owner', '[]', 1, 1), ('rb', 'ob', 'owner', '[]', 1, 1);
    INSERT INTO members (organization_id, user_id, role, created_at) VALUES
        ('oa', 'u1', 'owner', 1), ('ob', 'u1', 'owner', 1);
    INSERT INTO api_keys (id, organization_id, name, key_hash, start, permissions, created_by, created_at) VALUES
        ('ka', 'oa', 'a', 'hka', 'cms_', '[]', 'u1', 1), ('kb', 'ob', 'b', 'hkb', 'cms_', '[]', 'u1', 1);
    INSERT INTO invitations (id, organization_id, email, role, status, expires_at, created_at, updated_at) VALUES
        ('ia', 'oa', 'x@example.com', 'owner', 'pending', 9, 1, 1),
        ('ib', 'ob', 'x@example.com', 'owner', 'pending', 9, 1, 1);
    INSERT INTO sessions (id, token_hash, user_id, active_organization_id, expires_at, created_at, updated_at) VALUES
        ('sa', 'hsa', 'u1', 'oa', 9, 1, 1), ('sb', 'hsb', 'u1', 'ob', 9, 1, 1);
    INSERT INTO documents (id, organization_id, type, draft_data, revision, created_at, updated_at) VALUES
        ('da', 'oa', 'post', '{}', 1, 1, 1), ('db', 'ob', 'post', '{}', 1, 1, 1);
    INSERT INTO events (id, organization_id, type, payload, created_at) VALUES
        ('ea', 'oa', 't', '{}', 1), ('eb', 'ob', 't', '{}', 1), ('eb_done', 'ob', 't', '{}', 1);
    DELETE FROM outbox WHERE event_id = 'eb_done';
    INSERT INTO jobs (id, organization_id, type, status, payload, max_attempts, run_at, created_at, updated_at) VALUES
        ('ja', 'oa', 't', 'pending', '{}', 3, 1, 1, 1), ('jb', 'ob', 't', 'pending', '{}', 3, 1, 1, 1);
    INSERT INTO schedules (id, document_id, organization_id, action, run_at, status, job_id, created_at, updated_at) VALUES
        ('sa', 'da', 'oa', 'publish', 1, 'pending', 'ja', 1, 1),
        ('sb', 'db', 'ob', 'publish', 1, 'pending', 'jb', 1, 1);
    INSERT INTO preview_tokens (id, organization_id, document_id, token_hash, created_by, created_at, expires_at) VALUES
        ('pa', 'oa', 'da', 'hpa', 'u1', 1, 9), ('pb', 'ob', 'db', 'hpb', 'u1', 1, 9);
    INSERT INTO webhook_endpoints (id, organization_id, url, events, enabled, secret, created_at, updated_at) VALUES
        ('wa', 'oa', 'https://a', '[\"*\"]', TRUE, 'v1:a', 1, 1),
        ('wb', 'ob', 'https://b', '[\"*\"]', TRUE, 'v1:b', 1, 1);
    INSERT INTO webhook_deliveries (job_id, endpoint_id, organization_id, event_id, event_type, created_at) VALUES
        ('ja', 'wa', 'oa', 'ea', 't', 1), ('jb', 'wb', 'ob', 'eb', 't', 1);
    INSERT INTO plugin_settings (organization_id, plugin_id, \"values\", updated_at) VALUES
        ('oa', 'webhooks', '{}', 1), ('ob', 'webhooks', '{}', 1);
    INSERT INTO audit_log (id, organization_id, action, actor_type, summary, created_at) VALUES
        ('aa', 'oa', 'role.created', 'user', 'a', 1), ('ab', 'ob', 'role.created', 'user', 'b', 1);
    INSERT INTO document_presence (organization_id, document_id, user_id, seen_at) VALUES
        ('oa', 'da', 'u1', 1), ('ob', 'db', 'u1', 1);
";

/// The test's URL with another login as its user (same host, database, schema and
/// application name, so the test database's cleanup ends its connections too).
fn as_login(url: &str, login: &str) -> String {
    let (scheme, rest) = url.split_once("://").expect("a postgres:// URL");
    let path_start = rest.find('/').unwrap_or(rest.len());
    let (authority, path) = rest.split_at(path_start);
    let host = authority
        .rsplit_once('@')
        .map_or(authority, |(_, host)| host);
    format!("{scheme}://{login}@{host}{path}")
}

mod a_serving_login_that_neither_owns_nor_bypasses_stays_inside_the_wall {
    use super::*;

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn postgres() {
        crate::testing::with_database(crate::Dialect::Postgres, with_serving_login).await;
    }
}

/// Creates the login (unique to this run), runs the checks, and drops the login whatever
/// happened.
async fn with_serving_login(owner_url: String) {
    // The owner (the test's superuser) migrates: that creates `cms_app` and its grants.
    let store = crate::connect(&owner_url).await.unwrap();
    store.migrate().await.unwrap();
    store.close().await;
    let login = format!("cms_serve_{}", uuid::Uuid::now_v7().simple());
    let mut owner = PgConnection::connect(&owner_url).await.unwrap();
    owner
        .execute(sqlx::AssertSqlSafe(format!(
            "CREATE ROLE {login} LOGIN NOSUPERUSER NOBYPASSRLS NOCREATEROLE NOCREATEDB INHERIT; \
             GRANT cms_app TO {login}"
        )))
        .await
        .unwrap();
    owner.execute(SEED).await.unwrap();
    let outcome = tokio::spawn(walled_in(owner_url.clone(), login.clone())).await;
    let _ = owner
        .execute(sqlx::AssertSqlSafe(format!(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = '{login}'"
        )))
        .await;
    owner
        .execute(sqlx::AssertSqlSafe(format!("DROP ROLE {login}")))
        .await
        .unwrap();
    owner.close().await.unwrap();
    if let Err(e) = outcome {
        std::panic::resume_unwind(e.into_panic());
    }
}

async fn walled_in(owner_url: String, login: String) {
    let url = as_login(&owner_url, &login);
    let mut conn = PgConnection::connect(&url).await.unwrap();
    it_is_a_plain_login(&mut conn, &login).await;
    acting_for_a_never_reaches_b(&mut conn).await;
    declaring_nothing_sees_nothing(&mut conn).await;
    instance_wide_spans_until_an_organization_is_named(&mut conn).await;
    it_cannot_leave_the_policies(&mut conn).await;
    conn.close().await.unwrap();
    the_store_serves_as_that_login(&url, &owner_url).await;
}

async fn it_is_a_plain_login(conn: &mut PgConnection, login: &str) {
    let (user, bypasses, owns): (String, bool, bool) = sqlx::query_as(
        "SELECT current_user::text, rolsuper OR rolbypassrls, \
                EXISTS (SELECT 1 FROM pg_tables WHERE schemaname = current_schema() \
                        AND tableowner = current_user) \
         FROM pg_roles WHERE rolname = current_user",
    )
    .fetch_one(&mut *conn)
    .await
    .unwrap();
    assert_eq!((user.as_str(), bypasses, owns), (login, false, false));
}

/// Runs `sql` in a transaction of its own that first runs `declare` (the setting `Tx::act_for`
/// or `Tx::act_instance_wide` makes, or nothing), rolled back afterwards.
async fn in_unit(
    conn: &mut PgConnection,
    declare: &str,
    sql: &str,
) -> Result<PgQueryResult, sqlx::Error> {
    let mut tx = conn.begin().await.unwrap();
    tx.execute(sqlx::AssertSqlSafe(declare.to_string()))
        .await
        .unwrap();
    let outcome = tx.execute(sqlx::AssertSqlSafe(sql.to_string())).await;
    drop(tx);
    outcome
}

async fn count(conn: &mut PgConnection, declare: &str, table: &str, condition: &str) -> i64 {
    let mut tx = conn.begin().await.unwrap();
    tx.execute(sqlx::AssertSqlSafe(declare.to_string()))
        .await
        .unwrap();
    let n: i64 = sqlx::query_scalar(sqlx::AssertSqlSafe(format!(
        "SELECT COUNT(*) FROM {table} WHERE {condition}"
    )))
    .fetch_one(&mut *tx)
    .await
    .unwrap_or_else(|e| panic!("counting {table}: {e}"));
    drop(tx);
    n
}

const ACT_FOR_A: &str = "SELECT set_config('cms.organization_id', 'oa', true)";
const INSTANCE_WIDE: &str = "SELECT set_config('cms.scope', 'instance', true)";
const NOTHING: &str = "SELECT 1";

fn refused_by_policy(outcome: Result<PgQueryResult, sqlx::Error>, what: &str) {
    let code = outcome
        .err()
        .unwrap_or_else(|| panic!("{what} went through"))
        .as_database_error()
        .and_then(|d| d.code().map(|c| c.into_owned()));
    // insufficient_privilege: "new row violates row-level security policy".
    assert_eq!(code.as_deref(), Some("42501"), "{what}");
}

async fn acting_for_a_never_reaches_b(conn: &mut PgConnection) {
    for table in TABLES {
        let name = table.name;
        assert_eq!(
            count(conn, ACT_FOR_A, name, table.of_b).await,
            0,
            "{name}: B's rows are invisible to A"
        );
        let own = count(conn, ACT_FOR_A, name, table.of_a).await;
        if name == "sessions" {
            // A session is a user's credential, no organization's data: instance-wide only.
            assert_eq!(own, 0, "sessions are out of every organization's reach");
        } else {
            assert_eq!(own, 1, "{name}: A reads its own rows");
        }
        let updated = in_unit(
            conn,
            ACT_FOR_A,
            &format!("UPDATE {name} SET {} WHERE {}", table.touch, table.of_b),
        )
        .await
        .unwrap();
        assert_eq!(
            updated.rows_affected(),
            0,
            "{name}: B's rows are not updated"
        );
        let deleted = in_unit(
            conn,
            ACT_FOR_A,
            &format!("DELETE FROM {name} WHERE {}", table.of_b),
        )
        .await
        .unwrap();
        assert_eq!(
            deleted.rows_affected(),
            0,
            "{name}: B's rows are not deleted"
        );
        refused_by_policy(
            in_unit(conn, ACT_FOR_A, table.insert_b).await,
            &format!("{name}: inserting a row of B"),
        );
        if let Some(move_to_b) = table.move_to_b {
            refused_by_policy(
                in_unit(conn, ACT_FOR_A, move_to_b).await,
                &format!("{name}: moving A's row into B"),
            );
        }
    }
    // The rows of B are all still there (read as the owner would: instance-wide).
    for table in TABLES {
        assert!(
            count(conn, INSTANCE_WIDE, table.name, table.of_b).await >= 1,
            "{}",
            table.name
        );
    }
}

async fn declaring_nothing_sees_nothing(conn: &mut PgConnection) {
    for name in TABLES.iter().map(|t| t.name).chain([
        "documents",
        "document_versions",
        "assets",
        "document_presence",
    ]) {
        assert_eq!(count(conn, NOTHING, name, "TRUE").await, 0, "{name}");
        let deleted = in_unit(conn, NOTHING, &format!("DELETE FROM {name}"))
            .await
            .unwrap();
        assert_eq!(deleted.rows_affected(), 0, "{name}");
    }
    // Outside any transaction too.
    let n: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM members")
        .fetch_one(&mut *conn)
        .await
        .unwrap();
    assert_eq!(n, 0);
    refused_by_policy(
        in_unit(conn, NOTHING, TABLES[0].insert_b).await,
        "an undeclared insert",
    );
}

async fn instance_wide_spans_until_an_organization_is_named(conn: &mut PgConnection) {
    for table in TABLES {
        let both = format!("({}) OR ({})", table.of_a, table.of_b);
        assert!(
            count(conn, INSTANCE_WIDE, table.name, &both).await >= 2,
            "{}",
            table.name
        );
        // Naming an organization confines the unit, whatever else it declared.
        let declared_both = format!("{INSTANCE_WIDE}; {ACT_FOR_A}");
        assert_eq!(
            count(conn, &declared_both, table.name, table.of_b).await,
            0,
            "{}",
            table.name
        );
    }
    // Documents stay closed to instance-wide units.
    assert_eq!(count(conn, INSTANCE_WIDE, "documents", "TRUE").await, 0);
}

async fn it_cannot_leave_the_policies(conn: &mut PgConnection) {
    let owner: String = sqlx::query_scalar(
        "SELECT tableowner::text FROM pg_tables \
         WHERE schemaname = current_schema() AND tablename = 'roles'",
    )
    .fetch_one(&mut *conn)
    .await
    .unwrap();
    for escape in [
        format!("SET ROLE \"{owner}\""),
        "ALTER TABLE roles DISABLE ROW LEVEL SECURITY".to_string(),
        "ALTER TABLE roles NO FORCE ROW LEVEL SECURITY".to_string(),
        "DROP POLICY roles_read ON roles".to_string(),
        "ALTER POLICY roles_read ON roles USING (TRUE)".to_string(),
    ] {
        assert!(
            in_unit(conn, NOTHING, &escape).await.is_err(),
            "`{escape}` must be refused"
        );
    }
    // Turning row security off is accepted as a setting, but then every query the policies
    // would filter fails rather than running unfiltered.
    let mut tx = conn.begin().await.unwrap();
    tx.execute("SET LOCAL row_security = off").await.unwrap();
    tx.execute(ACT_FOR_A).await.unwrap();
    let unfiltered = sqlx::query_scalar::<_, i64>("SELECT COUNT(*) FROM roles")
        .fetch_one(&mut *tx)
        .await;
    assert!(unfiltered.is_err(), "row_security = off must not unfilter");
    drop(tx);
}

/// The service's own units, with the serving login for queries and the owner for migrations.
async fn the_store_serves_as_that_login(url: &str, owner_url: &str) {
    let store = crate::connect_with_migration_url(url, Some(owner_url))
        .await
        .unwrap();
    // Migrations and index creation run as the owner.
    store.migrate().await.unwrap();
    store
        .ensure_field_indexes(
            "post",
            &[(vec!["title".to_string()], cms_core::FieldKind::String)],
        )
        .await
        .unwrap();
    assert_eq!(roles_of(store.read_for("oa").await.unwrap(), "ob").await, 0);
    assert_eq!(roles_of(store.read_for("oa").await.unwrap(), "oa").await, 1);
    assert_eq!(roles_of(store.read().await.unwrap(), "oa").await, 0);
    assert_eq!(
        roles_of(store.read_instance_wide().await.unwrap(), "ob").await,
        1
    );
    let mut tx = store.write_for("oa").await.unwrap();
    let spy = RoleRecord {
        id: "rb3".into(),
        organization_id: "ob".into(),
        name: "spy".into(),
        description: String::new(),
        capabilities: Json(Vec::new()),
        is_built_in: false,
        created_at: 1,
        updated_at: 1,
    };
    assert!(tx.insert_role(&spy).await.is_err());
    drop(tx);
    let mut tx = store.write_instance_wide().await.unwrap();
    tx.act_for("oa").await.unwrap();
    assert_eq!(tx.roles("ob").await.unwrap().len(), 0, "act_for confines");
    drop(tx);
    // A search runs the search function (migration 0014), which the login may execute as a
    // member of `cms_app`.
    let mut tx = store.read_for("oa").await.unwrap();
    assert_eq!(
        super::search::found(&mut tx, &["oa"], "anything").await,
        (vec![], 0)
    );
    drop(tx);
    store.close().await;
}

async fn roles_of(mut tx: Box<dyn crate::Tx>, org: &str) -> usize {
    tx.roles(org).await.unwrap().len()
}
