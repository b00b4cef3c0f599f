//! The storage conformance suite: the same behaviour, asserted on both engines.

use serde_json::json;

use crate::api_keys::ApiKeyRecord;
use crate::organizations::{MemberRecord, OrganizationRecord};
use crate::roles::RoleRecord;
use crate::sessions::SessionRecord;
use crate::users::UserRecord;
use crate::{Json, StoreError};

fn user(id: &str, email: &str) -> UserRecord {
    UserRecord {
        id: id.into(),
        email: email.into(),
        name: "Ada".into(),
        password_hash: Some("$argon2id$...".into()),
        email_verified: false,
        role: "editor".into(),
        image: None,
        created_at: 1,
        updated_at: 1,
    }
}

fn org(id: &str, slug: &str) -> OrganizationRecord {
    OrganizationRecord {
        id: id.into(),
        name: "Acme".into(),
        slug: slug.into(),
        metadata: Json(json!({"plan": "pro"})),
        parent_id: None,
        created_at: 1,
        updated_at: 1,
    }
}

fn role(org: &str, name: &str, caps: &[&str]) -> RoleRecord {
    RoleRecord {
        id: format!("{org}-{name}"),
        organization_id: org.into(),
        name: name.into(),
        description: String::new(),
        capabilities: Json(caps.iter().map(|c| c.to_string()).collect()),
        is_built_in: name == "owner",
        created_at: 1,
        updated_at: 1,
    }
}

async fn open(url: &str) -> std::sync::Arc<dyn crate::Store> {
    let store = crate::connect(url).await.expect("connect");
    store.migrate().await.expect("migrate");
    // Migrating twice is a no-op.
    store.migrate().await.expect("migrate again");
    store
}

async fn users_round_trip_and_emails_are_unique(url: String) {
    let store = open(&url).await;
    let mut tx = store.write().await.unwrap();
    tx.insert_user(&user("u1", "ada@example.com"))
        .await
        .unwrap();
    tx.commit().await.unwrap();
    // After a constraint violation PostgreSQL aborts the transaction: a unit of work that saw
    // an error is abandoned, never continued.
    let mut tx = store.write().await.unwrap();
    assert!(matches!(
        tx.insert_user(&user("u2", "ada@example.com")).await,
        Err(StoreError::Unique(_))
    ));
    drop(tx);

    let mut tx = store.read().await.unwrap();
    let found = tx.user_by_email("ada@example.com").await.unwrap().unwrap();
    assert_eq!(found.id, "u1");
    assert!(!found.email_verified);
    assert_eq!(
        tx.user_by_id("u1").await.unwrap().unwrap().email,
        "ada@example.com"
    );
    assert!(tx.user_by_id("nobody").await.unwrap().is_none());
    assert_eq!(tx.count_users().await.unwrap(), 1);
    drop(tx); // close() waits for every unit of work to be returned
    store.close().await;
}

async fn an_uncommitted_write_is_rolled_back(url: String) {
    let store = open(&url).await;
    {
        let mut tx = store.write().await.unwrap();
        tx.insert_user(&user("u1", "ada@example.com"))
            .await
            .unwrap();
        // dropped without commit
    }
    let mut tx = store.read().await.unwrap();
    assert_eq!(tx.count_users().await.unwrap(), 0);
    drop(tx); // close() waits for every unit of work to be returned
    store.close().await;
}

async fn an_instance_flag_is_claimed_once(url: String) {
    let store = open(&url).await;
    let mut tx = store.write().await.unwrap();
    assert!(tx.claim_instance_flag("firstAdmin", "u1", 1).await.unwrap());
    assert!(!tx.claim_instance_flag("firstAdmin", "u2", 2).await.unwrap());
    assert_eq!(
        tx.instance_flag("firstAdmin").await.unwrap().as_deref(),
        Some("u1")
    );
    tx.commit().await.unwrap();
    store.close().await;
}

async fn organizations_members_and_roles(url: String) {
    let store = open(&url).await;
    let mut tx = store.write().await.unwrap();
    tx.insert_user(&user("u1", "ada@example.com"))
        .await
        .unwrap();
    tx.insert_organization(&org("o1", "acme")).await.unwrap();
    tx.insert_role(&role("o1", "owner", &["document.read"]))
        .await
        .unwrap();
    tx.insert_role(&role("o1", "viewer", &["document.read"]))
        .await
        .unwrap();
    tx.commit().await.unwrap();

    let refused = |e| matches!(e, Err(StoreError::Unique(_)));
    let mut tx = store.write().await.unwrap();
    assert!(refused(tx.insert_organization(&org("o2", "acme")).await));
    drop(tx);
    let mut tx = store.write().await.unwrap();
    assert!(refused(tx.insert_role(&role("o1", "viewer", &[])).await));
    drop(tx);
    // A member's role must exist in the organization.
    let ghost = MemberRecord {
        organization_id: "o1".into(),
        user_id: "u1".into(),
        role: "ghost".into(),
        created_at: 1,
    };
    let mut tx = store.write().await.unwrap();
    assert!(matches!(
        tx.insert_member(&ghost).await,
        Err(StoreError::ForeignKey(_))
    ));
    drop(tx);

    let mut tx = store.write().await.unwrap();
    let member = MemberRecord {
        role: "owner".into(),
        ..ghost
    };
    tx.insert_member(&member).await.unwrap();
    let updated = tx
        .reconcile_owner_roles(&["document.read".into(), "forms.export".into()], 2)
        .await
        .unwrap();
    assert_eq!(updated, 1);
    tx.commit().await.unwrap();

    let mut tx = store.read().await.unwrap();
    let o = tx.organization_by_id("o1").await.unwrap().unwrap();
    assert_eq!(o.metadata.0, json!({"plan": "pro"}));
    assert_eq!(tx.member("o1", "u1").await.unwrap().unwrap().role, "owner");
    let grant = tx.member_grant("o1", "u1").await.unwrap().unwrap();
    assert_eq!(
        (grant.role.as_str(), grant.capabilities.unwrap().0),
        ("owner", vec!["document.read".into(), "forms.export".into()])
    );
    assert!(tx.member_grant("o1", "nobody").await.unwrap().is_none());
    assert_eq!(tx.memberships_of("u1").await.unwrap().len(), 1);
    let owner = tx.role("o1", "owner").await.unwrap().unwrap();
    assert_eq!(owner.capabilities.0, vec!["document.read", "forms.export"]);
    let names: Vec<_> = tx
        .roles("o1")
        .await
        .unwrap()
        .into_iter()
        .map(|r| r.name)
        .collect();
    assert_eq!(names, vec!["owner", "viewer"]);
    drop(tx);

    let mut tx = store.write().await.unwrap();
    assert!(tx.update_member_role("o1", "u1", "viewer").await.unwrap());
    assert!(
        !tx.update_member_role("o1", "nobody", "viewer")
            .await
            .unwrap()
    );
    assert_eq!(tx.member("o1", "u1").await.unwrap().unwrap().role, "viewer");
    assert!(tx.delete_member("o1", "u1").await.unwrap());
    assert!(!tx.delete_member("o1", "u1").await.unwrap());
    tx.commit().await.unwrap();
    let mut tx = store.write().await.unwrap();
    assert!(matches!(
        tx.update_member_role("o1", "u1", "ghost").await,
        Ok(false)
    ));
    drop(tx); // close() waits for every unit of work to be returned
    store.close().await;
}

async fn sessions_are_found_by_hash_extended_and_deleted(url: String) {
    let store = open(&url).await;
    let mut tx = store.write().await.unwrap();
    tx.insert_user(&user("u1", "ada@example.com"))
        .await
        .unwrap();
    tx.insert_organization(&org("o1", "acme")).await.unwrap();
    let s = SessionRecord {
        id: "s1".into(),
        token_hash: "h1".into(),
        user_id: "u1".into(),
        active_organization_id: None,
        expires_at: 100,
        ip_address: Some("127.0.0.1".into()),
        user_agent: None,
        created_at: 1,
        updated_at: 1,
    };
    tx.insert_session(&s).await.unwrap();
    tx.extend_session("s1", 200, 2).await.unwrap();
    tx.set_active_organization("s1", Some("o1"), 2)
        .await
        .unwrap();
    tx.commit().await.unwrap();

    let mut tx = store.write().await.unwrap();
    let found = tx.session_by_token_hash("h1").await.unwrap().unwrap();
    assert_eq!(
        (found.expires_at, found.active_organization_id.as_deref()),
        (200, Some("o1"))
    );
    assert!(tx.delete_session("s1").await.unwrap());
    assert!(!tx.delete_session("s1").await.unwrap());
    assert!(tx.session_by_token_hash("h1").await.unwrap().is_none());
    tx.commit().await.unwrap();
    store.close().await;
}

async fn api_keys_are_scoped_to_their_organization(url: String) {
    let store = open(&url).await;
    let mut tx = store.write().await.unwrap();
    tx.insert_user(&user("u1", "ada@example.com"))
        .await
        .unwrap();
    tx.insert_organization(&org("o1", "acme")).await.unwrap();
    tx.insert_organization(&org("o2", "other")).await.unwrap();
    let key = ApiKeyRecord {
        id: "k1".into(),
        organization_id: "o1".into(),
        name: "ci".into(),
        key_hash: "kh".into(),
        start: "cms_abcd".into(),
        permissions: Json(vec!["read".into()]),
        capabilities: None,
        created_by: "u1".into(),
        created_at: 1,
        expires_at: Some(10),
    };
    tx.insert_api_key(&key).await.unwrap();
    tx.commit().await.unwrap();

    let mut tx = store.write().await.unwrap();
    let found = tx.api_key_by_hash("kh").await.unwrap().unwrap();
    assert_eq!((found.capabilities, found.expires_at), (None, Some(10)));
    assert_eq!(tx.api_keys("o1").await.unwrap().len(), 1);
    assert!(tx.api_keys("o2").await.unwrap().is_empty());
    assert!(
        !tx.delete_api_key("o2", "k1").await.unwrap(),
        "another organization cannot delete it"
    );
    assert!(tx.delete_api_key("o1", "k1").await.unwrap());
    assert!(tx.api_key_by_hash("kh").await.unwrap().is_none());
    tx.commit().await.unwrap();
    store.close().await;
}

async fn foreign_keys_are_enforced(url: String) {
    let store = open(&url).await;
    let mut tx = store.write().await.unwrap();
    tx.insert_user(&user("u1", "ada@example.com"))
        .await
        .unwrap();
    tx.insert_organization(&org("o1", "acme")).await.unwrap();
    tx.insert_role(&role("o1", "owner", &[])).await.unwrap();
    tx.insert_member(&MemberRecord {
        organization_id: "o1".into(),
        user_id: "u1".into(),
        role: "owner".into(),
        created_at: 1,
    })
    .await
    .unwrap();
    tx.commit().await.unwrap();
    let mut tx = store.write().await.unwrap();
    // Foreign keys are enforced on both engines (SQLite needs them switched on per connection).
    assert!(matches!(
        tx.insert_member(&MemberRecord {
            organization_id: "nope".into(),
            user_id: "u1".into(),
            role: "owner".into(),
            created_at: 1
        })
        .await,
        Err(StoreError::ForeignKey(_))
    ));
    drop(tx); // close() waits for every unit of work to be returned
    store.close().await;
}

async fn an_unsupported_url_is_a_configuration_error(_url: String) {
    assert!(matches!(
        crate::connect("mysql://x").await,
        Err(StoreError::Config(_))
    ));
}

crate::both_engines!(
    users_round_trip_and_emails_are_unique,
    an_uncommitted_write_is_rolled_back,
    an_instance_flag_is_claimed_once,
    organizations_members_and_roles,
    sessions_are_found_by_hash_extended_and_deleted,
    api_keys_are_scoped_to_their_organization,
    foreign_keys_are_enforced,
    an_unsupported_url_is_a_configuration_error,
);
