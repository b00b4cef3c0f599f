//! Units of work on either engine: a write dropped without commit is rolled back, foreign keys
//! hold, an unknown URL is a configuration error, and the two read paths of SQLite (off sqlx in
//! a read unit, through sqlx in a write unit) read every column alike.

use serde_json::json;

use super::{document, event, open, org, role, user, with_two_organizations};
use crate::api_keys::ApiKeyRecord;
use crate::documents::DocumentRecord;
use crate::organizations::MemberRecord;
use crate::sessions::SessionRecord;
use crate::{Json, StoreError};

async fn an_uncommitted_write_is_rolled_back(url: String) {
    let store = open(&url).await;
    {
        let mut tx = store.write_instance_wide().await.unwrap();
        tx.insert_user(&user("u1", "ada@example.com"))
            .await
            .unwrap();
        // dropped without commit
    }
    let mut tx = store.read_instance_wide().await.unwrap();
    assert_eq!(tx.count_users().await.unwrap(), 0);
    drop(tx); // close() waits for every unit of work to be returned
    store.close().await;
}

/// On SQLite a read unit answers these lookups off sqlx (`sqlite::PointReads`); a write unit
/// answers them through sqlx. Both must read every column alike.
async fn point_lookups_read_alike_in_read_and_write_units(url: String) {
    let store = open(&url).await;
    with_two_organizations(&store).await;
    let mut tx = store.write_for("o1").await.unwrap();
    tx.insert_role(&role("o1", "editor", &["document.read", "document.update"]))
        .await
        .unwrap();
    tx.insert_member(&MemberRecord {
        organization_id: "o1".into(),
        user_id: "u1".into(),
        role: "editor".into(),
        created_at: 1,
    })
    .await
    .unwrap();
    tx.commit().await.unwrap();
    // A session is no organization's row: only an instance-wide unit writes it.
    let mut tx = store.write_instance_wide().await.unwrap();
    tx.insert_session(&SessionRecord {
        id: "s1".into(),
        token_hash: "h1".into(),
        user_id: "u1".into(),
        active_organization_id: Some("o1".into()),
        expires_at: 100,
        ip_address: None,
        user_agent: Some("agent \u{e9}".into()),
        created_at: 1,
        updated_at: 2,
    })
    .await
    .unwrap();
    tx.commit().await.unwrap();
    let mut tx = store.write_for("o1").await.unwrap();
    tx.insert_api_key(&ApiKeyRecord {
        id: "k1".into(),
        organization_id: "o1".into(),
        name: "ci".into(),
        key_hash: "kh".into(),
        start: "cms_abcd".into(),
        permissions: Json(vec!["read".into(), "write".into()]),
        capabilities: Some(Json(vec!["document.read".into()])),
        created_by: "u1".into(),
        created_at: 1,
        expires_at: None,
    })
    .await
    .unwrap();
    let published = DocumentRecord {
        published_data: Some(Json(json!({"title": "d1", "n": [1.5, null, {"a": true}]}))),
        published_hash: Some("hash".into()),
        published_at: Some(3),
        singleton: true,
        ..document("d1", "o1", "settings", true)
    };
    tx.insert_document(&published).await.unwrap();
    tx.append_event(&event("e1", "o1", "document.published"))
        .await
        .unwrap();
    tx.commit().await.unwrap();

    let o1 = vec!["o1".to_string()];
    let both = vec!["o2".to_string(), "o1".to_string()];
    let o2 = vec!["o2".to_string()];
    let lookups = |mut tx: Box<dyn crate::Tx>| {
        let (o1, both, o2) = (o1.clone(), both.clone(), o2.clone());
        async move {
            // Credentials are resolved before any organization is known, documents for one.
            tx.act_instance_wide().await.unwrap();
            let grants = format!(
                "{:?}\n{:?}\n{:?}\n{:?}",
                tx.key_grant("kh").await.unwrap(),
                tx.key_grant("nope").await.unwrap(),
                tx.session_grant("h1").await.unwrap(),
                tx.session_grant("nope").await.unwrap(),
            );
            tx.act_for("o1").await.unwrap();
            format!(
                "{grants}\n{:?}\n{:?}\n{:?}\n{:?}",
                tx.document(&o1, "d1").await.unwrap(),
                tx.document(&both, "d1").await.unwrap(),
                tx.document(&o2, "d1").await.unwrap(),
                tx.outbox_backlog().await.unwrap(),
            )
        }
    };
    let read = lookups(store.read().await.unwrap()).await;
    let write = lookups(store.write().await.unwrap()).await;
    assert_eq!(read, write);
    assert!(
        read.contains("role_capabilities: Some(Json([\"document.read\", \"document.update\"]))")
    );
    let lines: Vec<&str> = read.lines().collect();
    assert_eq!(
        (lines[1], lines[3], lines[6], lines[7]),
        ("None", "None", "None", "1")
    );
    store.close().await;
}

async fn foreign_keys_are_enforced(url: String) {
    let store = open(&url).await;
    let mut tx = store.write_instance_wide().await.unwrap();
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
    let mut tx = store.write_instance_wide().await.unwrap();
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

/// Read units run without a transaction on both engines, so a write through one would be
/// committed statement by statement: their connections are read-only and refuse it instead.
async fn a_read_unit_cannot_write(url: String) {
    let store = open(&url).await;
    with_two_organizations(&store).await;
    for mut tx in [
        store.read().await.unwrap(),
        store.read_for("o1").await.unwrap(),
        store.read_instance_wide().await.unwrap(),
    ] {
        assert!(
            tx.insert_user(&user("u9", "eve@example.com"))
                .await
                .is_err(),
            "a read unit wrote a user"
        );
    }
    let mut tx = store.read_for("o1").await.unwrap();
    assert!(
        tx.insert_document(&document("d9", "o1", "post", false))
            .await
            .is_err(),
        "a read unit wrote a document"
    );
    drop(tx);
    let mut tx = store.read_instance_wide().await.unwrap();
    assert!(tx.user_by_id("u9").await.unwrap().is_none());
    assert!(tx.user_by_id("u1").await.unwrap().is_some());
    drop(tx);
    let mut tx = store.write_for("o1").await.unwrap();
    assert!(
        tx.document(&["o1".to_string()], "d9")
            .await
            .unwrap()
            .is_none()
    );
    drop(tx);
    store.close().await;
}

crate::both_engines!(
    a_read_unit_cannot_write,
    an_uncommitted_write_is_rolled_back,
    point_lookups_read_alike_in_read_and_write_units,
    foreign_keys_are_enforced,
    an_unsupported_url_is_a_configuration_error,
);
