//! Users, their sessions and API keys: unique e-mails, sessions found by their hash, keys
//! scoped to their organization, and the grants credential resolution reads.

use super::{open, org, user};
use crate::api_keys::ApiKeyRecord;
use crate::sessions::SessionRecord;
use crate::{Json, StoreError};

async fn users_round_trip_and_emails_are_unique(url: String) {
    let store = open(&url).await;
    let mut tx = store.write_instance_wide().await.unwrap();
    tx.insert_user(&user("u1", "ada@example.com"))
        .await
        .unwrap();
    tx.commit().await.unwrap();
    // After a constraint violation PostgreSQL aborts the transaction: a unit of work that saw
    // an error is abandoned, never continued.
    let mut tx = store.write_instance_wide().await.unwrap();
    assert!(matches!(
        tx.insert_user(&user("u2", "ada@example.com")).await,
        Err(StoreError::Unique(_))
    ));
    drop(tx);

    let mut tx = store.read_instance_wide().await.unwrap();
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

async fn sessions_are_found_by_hash_extended_and_deleted(url: String) {
    let store = open(&url).await;
    let mut tx = store.write_instance_wide().await.unwrap();
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

    let mut tx = store.write_instance_wide().await.unwrap();
    let found = tx.session_by_token_hash("h1").await.unwrap().unwrap();
    assert_eq!(
        (found.expires_at, found.active_organization_id.as_deref()),
        (200, Some("o1"))
    );
    let grant = tx.session_grant("h1").await.unwrap().unwrap();
    assert_eq!(
        (grant.session.session_id.as_str(), grant.user.email.as_str()),
        ("s1", "ada@example.com")
    );
    assert_eq!(
        (grant.member_role, grant.role_capabilities),
        (None, None),
        "not a member of o1"
    );
    assert!(tx.session_grant("nope").await.unwrap().is_none());
    assert!(tx.delete_session("s1").await.unwrap());
    assert!(!tx.delete_session("s1").await.unwrap());
    assert!(tx.session_by_token_hash("h1").await.unwrap().is_none());
    tx.commit().await.unwrap();
    store.close().await;
}

async fn a_users_sessions_are_listed_and_revoked_one_or_all_but_one(url: String) {
    let store = open(&url).await;
    let mut tx = store.write_instance_wide().await.unwrap();
    for (id, email) in [("u1", "ada@example.com"), ("u2", "bob@example.com")] {
        tx.insert_user(&user(id, email)).await.unwrap();
    }
    let session = |id: &str, user: &str, expires_at: i64, updated_at: i64| SessionRecord {
        id: id.into(),
        token_hash: format!("h-{id}"),
        user_id: user.into(),
        active_organization_id: None,
        expires_at,
        ip_address: None,
        user_agent: Some(format!("agent {id}")),
        created_at: 1,
        updated_at,
    };
    for s in [
        session("a", "u1", 100, 5),
        session("b", "u1", 100, 9),
        session("c", "u1", 100, 7),
        session("old", "u1", 10, 20),
        session("bob", "u2", 100, 8),
    ] {
        tx.insert_session(&s).await.unwrap();
    }
    let ids = |list: Vec<SessionRecord>| list.into_iter().map(|s| s.id).collect::<Vec<_>>();
    assert_eq!(
        ids(tx.sessions_of_user("u1", 50).await.unwrap()),
        ["b", "c", "a"],
        "live ones, most recently renewed first"
    );
    assert!(!tx.delete_session_of_user("u1", "bob").await.unwrap());
    assert!(tx.delete_session_of_user("u1", "c").await.unwrap());
    assert_eq!(
        tx.delete_other_sessions_of_user("u1", "b").await.unwrap(),
        2
    );
    assert_eq!(ids(tx.sessions_of_user("u1", 0).await.unwrap()), ["b"]);
    assert_eq!(ids(tx.sessions_of_user("u2", 0).await.unwrap()), ["bob"]);
    tx.commit().await.unwrap();
    store.close().await;
}

async fn two_factor_enables_once_and_accepts_each_step_and_code_once(url: String) {
    let store = open(&url).await;
    let mut tx = store.write_instance_wide().await.unwrap();
    tx.insert_user(&user("u1", "ada@example.com"))
        .await
        .unwrap();
    assert!(tx.two_factor("u1").await.unwrap().is_none());
    tx.begin_two_factor("u1", "sealed-1", 5).await.unwrap();
    // Restarting replaces the pending secret.
    tx.begin_two_factor("u1", "sealed-2", 6).await.unwrap();
    let pending = tx.two_factor("u1").await.unwrap().unwrap();
    assert_eq!(
        (pending.secret.as_str(), pending.enabled_at),
        ("sealed-2", None)
    );
    assert!(
        !tx.claim_two_factor_step("u1", 9).await.unwrap(),
        "not on yet"
    );

    let hashes = vec!["r1".to_string(), "r2".to_string()];
    assert!(tx.enable_two_factor("u1", 10, &hashes, 7).await.unwrap());
    assert!(
        !tx.enable_two_factor("u1", 11, &hashes, 8).await.unwrap(),
        "once"
    );
    let on = tx.two_factor("u1").await.unwrap().unwrap();
    assert_eq!((on.enabled_at, on.last_step), (Some(7), 10));
    assert!(
        !tx.claim_two_factor_step("u1", 10).await.unwrap(),
        "the confirming step"
    );
    assert!(
        !tx.claim_two_factor_step("u1", 9).await.unwrap(),
        "an older step"
    );
    assert!(tx.claim_two_factor_step("u1", 11).await.unwrap());
    assert!(
        !tx.claim_two_factor_step("u1", 11).await.unwrap(),
        "the same step again"
    );

    assert_eq!(tx.count_recovery_codes("u1").await.unwrap(), 2);
    assert!(tx.take_recovery_code("u1", "r1").await.unwrap());
    assert!(!tx.take_recovery_code("u1", "r1").await.unwrap());
    assert!(!tx.take_recovery_code("u1", "nope").await.unwrap());
    assert_eq!(tx.count_recovery_codes("u1").await.unwrap(), 1);

    assert!(tx.delete_two_factor("u1").await.unwrap());
    assert!(!tx.delete_two_factor("u1").await.unwrap());
    assert!(tx.two_factor("u1").await.unwrap().is_none());
    assert_eq!(tx.count_recovery_codes("u1").await.unwrap(), 0);
    tx.commit().await.unwrap();
    store.close().await;
}

async fn identities_link_a_provider_subject_to_one_user(url: String) {
    let store = open(&url).await;
    let mut tx = store.write_instance_wide().await.unwrap();
    for (id, email) in [("u1", "ada@example.com"), ("u2", "bob@example.com")] {
        tx.insert_user(&user(id, email)).await.unwrap();
    }
    assert!(tx.user_by_identity("corp", "s1").await.unwrap().is_none());
    tx.link_identity("corp", "s1", "u1", 5).await.unwrap();
    tx.link_identity("other", "s1", "u2", 5).await.unwrap();
    tx.commit().await.unwrap();
    let mut tx = store.write_instance_wide().await.unwrap();
    assert!(matches!(
        tx.link_identity("corp", "s1", "u2", 6).await,
        Err(StoreError::Unique(_))
    ));
    drop(tx);
    let mut tx = store.write_instance_wide().await.unwrap();
    let found = |u: Option<crate::users::UserRecord>| u.map(|u| u.id);
    assert_eq!(
        found(tx.user_by_identity("corp", "s1").await.unwrap()).as_deref(),
        Some("u1")
    );
    assert_eq!(
        found(tx.user_by_identity("other", "s1").await.unwrap()).as_deref(),
        Some("u2")
    );
    tx.delete_user("u1").await.unwrap();
    assert!(
        tx.user_by_identity("corp", "s1").await.unwrap().is_none(),
        "gone with its user"
    );
    tx.commit().await.unwrap();
    store.close().await;
}

async fn api_keys_are_scoped_to_their_organization(url: String) {
    let store = open(&url).await;
    let mut tx = store.write_instance_wide().await.unwrap();
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

    let mut tx = store.write_instance_wide().await.unwrap();
    let grant = tx.key_grant("kh").await.unwrap().unwrap();
    assert_eq!(
        (
            grant.key_id.as_str(),
            grant.user.id.as_str(),
            grant.member_role
        ),
        ("k1", "u1", None)
    );
    assert_eq!((grant.capabilities, grant.expires_at), (None, Some(10)));
    assert_eq!(tx.api_keys("o1").await.unwrap().len(), 1);
    assert!(tx.api_keys("o2").await.unwrap().is_empty());
    assert!(
        !tx.delete_api_key("o2", "k1").await.unwrap(),
        "another organization cannot delete it"
    );
    assert!(tx.delete_api_key("o1", "k1").await.unwrap());
    assert!(tx.key_grant("kh").await.unwrap().is_none());
    tx.commit().await.unwrap();
    store.close().await;
}

crate::both_engines!(
    a_users_sessions_are_listed_and_revoked_one_or_all_but_one,
    two_factor_enables_once_and_accepts_each_step_and_code_once,
    identities_link_a_provider_subject_to_one_user,
    users_round_trip_and_emails_are_unique,
    sessions_are_found_by_hash_extended_and_deleted,
    api_keys_are_scoped_to_their_organization,
);
