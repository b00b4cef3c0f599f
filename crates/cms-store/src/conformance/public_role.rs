//! The built-in `public` role (CONTRACT.md section 15): the one-query grant of an anonymous
//! request naming an organization, and migration 0015, which gives every existing organization
//! the role and moves a custom role of that name out of its way.

use sqlx::postgres::PgPoolOptions;
use sqlx::sqlite::SqlitePoolOptions;

use super::{org, role, user};
use crate::invitations::InvitationRecord;
use crate::organizations::MemberRecord;
use crate::{Dialect, Json};

async fn public_grant_is_the_organization_and_its_public_role(url: String) {
    let store = super::open(&url).await;
    let mut tx = store.write_instance_wide().await.unwrap();
    tx.insert_organization(&org("o1", "acme")).await.unwrap();
    tx.insert_role(&role("o1", "public", &["document.read"]))
        .await
        .unwrap();
    tx.insert_organization(&org("o2", "bare")).await.unwrap();
    tx.commit().await.unwrap();

    // A read unit (SQLite answers it on the calling thread) and a write unit (through sqlx)
    // read the same.
    for mut tx in [
        store.read_instance_wide().await.unwrap(),
        store.write_instance_wide().await.unwrap(),
    ] {
        let acme = tx.public_grant("acme").await.unwrap().expect("acme");
        assert_eq!(acme.organization_id, "o1");
        assert_eq!(
            acme.capabilities.map(|c| c.0),
            Some(vec!["document.read".to_string()])
        );
        let bare = tx.public_grant("bare").await.unwrap().expect("bare");
        assert_eq!(bare.organization_id, "o2");
        assert!(bare.capabilities.is_none());
        assert!(tx.public_grant("nobody").await.unwrap().is_none());
        assert!(
            tx.public_grant("o1").await.unwrap().is_none(),
            "slugs, not ids"
        );
    }
    store.close().await;
}

/// The organizations of the migration test, written in the columns of that release (the
/// store's own insert writes the columns of today's).
const OLD_ORGANIZATIONS: &str = "INSERT INTO organizations (id, name, slug, created_at, updated_at) \
     VALUES ('o1', 'one', 'one', 1, 1), ('o2', 'two', 'two', 1, 1), ('o3', 'three', 'three', 1, 1)";

/// Runs the migrations up to 0014 only, and writes three organizations: the database as the
/// release before the `public` role.
async fn migrate_before_public_role(url: &str, dialect: Dialect) {
    match dialect {
        // One-connection pools: `run_to` on a bare `&mut` connection is not `Send`-general
        // enough for a spawned test (as in `PgStore::migrate`).
        Dialect::Sqlite => {
            let pool = SqlitePoolOptions::new()
                .max_connections(1)
                .connect(url)
                .await
                .unwrap();
            crate::sqlite::MIGRATOR.run_to(14, &pool).await.unwrap();
            sqlx::query(OLD_ORGANIZATIONS).execute(&pool).await.unwrap();
            pool.close().await;
        }
        Dialect::Postgres => {
            let pool = PgPoolOptions::new()
                .max_connections(1)
                .connect(url)
                .await
                .unwrap();
            crate::postgres::MIGRATOR.run_to(14, &pool).await.unwrap();
            sqlx::query(OLD_ORGANIZATIONS).execute(&pool).await.unwrap();
            pool.close().await;
        }
    }
}

async fn migration_gives_existing_organizations_the_public_role(url: String) {
    let store = crate::connect(&url).await.unwrap();
    migrate_before_public_role(&url, store.dialect()).await;
    let mut tx = store.write_instance_wide().await.unwrap();
    tx.insert_user(&user("u1", "ada@example.com"))
        .await
        .unwrap();
    // o1: the four built-in roles of old; o2: a custom role named `public` with a member and an
    // invitation; o3: a custom `public` and a custom `public-legacy` already.
    for id in ["o1", "o2", "o3"] {
        tx.insert_role(&role(id, "owner", &["document.read"]))
            .await
            .unwrap();
    }
    tx.insert_role(&role("o2", "public", &["document.read", "document.create"]))
        .await
        .unwrap();
    tx.insert_member(&MemberRecord {
        organization_id: "o2".into(),
        user_id: "u1".into(),
        role: "public".into(),
        created_at: 1,
    })
    .await
    .unwrap();
    tx.insert_invitation(&InvitationRecord {
        id: "i1".into(),
        organization_id: "o2".into(),
        email: "bo@example.com".into(),
        role: "public".into(),
        status: "pending".into(),
        invited_by: Some("u1".into()),
        token_hash: None,
        expires_at: i64::MAX,
        created_at: 1,
        updated_at: 1,
    })
    .await
    .unwrap();
    tx.insert_role(&role("o3", "public", &["asset.read"]))
        .await
        .unwrap();
    tx.insert_role(&role("o3", "public-legacy", &["document.read"]))
        .await
        .unwrap();
    tx.commit().await.unwrap();

    store.migrate().await.unwrap();

    let mut tx = store.read_instance_wide().await.unwrap();
    for id in ["o1", "o2", "o3"] {
        let public = tx.role(id, "public").await.unwrap().expect("a public role");
        assert!(public.is_built_in, "{id}");
        assert!(
            public.capabilities.0.is_empty(),
            "{id}: nothing turns public"
        );
    }
    // o2's custom role lives on under the new name, with its member and its invitation.
    let legacy = tx
        .role("o2", "public-legacy")
        .await
        .unwrap()
        .expect("renamed");
    assert!(!legacy.is_built_in);
    assert_eq!(
        legacy.capabilities.0,
        vec!["document.read", "document.create"]
    );
    assert_eq!(
        tx.member("o2", "u1").await.unwrap().unwrap().role,
        "public-legacy"
    );
    assert_eq!(
        tx.invitation("i1").await.unwrap().unwrap().role,
        "public-legacy"
    );
    // o3's name was taken: the role's id makes its new name unique.
    let roles = tx.roles("o3").await.unwrap();
    let renamed: Vec<_> = roles
        .iter()
        .filter(|r| r.name.starts_with("public-legacy-"))
        .collect();
    assert_eq!(renamed.len(), 1, "{roles:?}");
    assert_eq!(renamed[0].capabilities.0, vec!["asset.read"]);
    assert!(renamed[0].name.parse::<cms_core::RoleName>().is_ok());
    assert_eq!(
        tx.role("o3", "public-legacy")
            .await
            .unwrap()
            .unwrap()
            .capabilities,
        Json(vec!["document.read".to_string()])
    );
    drop(tx);
    // Migrating again changes nothing.
    store.migrate().await.unwrap();
    store.close().await;
}

crate::both_engines!(
    public_grant_is_the_organization_and_its_public_role,
    migration_gives_existing_organizations_the_public_role,
);
