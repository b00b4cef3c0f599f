//! The storage conformance suite for people: organizations' lifecycle, invitations,
//! single-use e-mail tokens and preferences, asserted on both engines.

use serde_json::json;

use crate::api_keys::ApiKeyRecord;
use crate::change_sets::ChangeSetRecord;
use crate::invitations::InvitationRecord;
use crate::organizations::{MemberRecord, OrganizationRecord};
use crate::plugin_settings::PluginSettingsRecord;
use crate::roles::RoleRecord;
use crate::sessions::SessionRecord;
use crate::user_tokens::UserTokenRecord;
use crate::users::UserRecord;
use crate::{Json, StoreError};

async fn open(url: &str) -> std::sync::Arc<dyn crate::Store> {
    let store = crate::connect(url).await.expect("connect");
    store.migrate().await.expect("migrate");
    store
}

fn user(id: &str, email: &str) -> UserRecord {
    UserRecord {
        id: id.into(),
        email: email.into(),
        name: id.into(),
        password_hash: None,
        email_verified: false,
        role: "editor".into(),
        image: None,
        created_at: 1,
        updated_at: 1,
    }
}

fn org(id: &str, parent: Option<&str>) -> OrganizationRecord {
    OrganizationRecord {
        id: id.into(),
        name: id.into(),
        slug: id.into(),
        metadata: Json(json!({})),
        parent_id: parent.map(String::from),
        locales: None,
        require_two_factor: false,
        created_at: 1,
        updated_at: 1,
    }
}

fn invitation(id: &str, org: &str, email: &str, expires_at: i64) -> InvitationRecord {
    InvitationRecord {
        id: id.into(),
        organization_id: org.into(),
        email: email.into(),
        role: "viewer".into(),
        status: "pending".into(),
        invited_by: Some("u1".into()),
        token_hash: Some(format!("hash-{id}")),
        expires_at,
        created_at: 1,
        updated_at: 1,
    }
}

/// Users u1 (owner of o1) and u2 (viewer of o1), organizations o1 and o2, the roles of o1.
async fn seed(store: &std::sync::Arc<dyn crate::Store>) {
    let mut tx = store.write_instance_wide().await.unwrap();
    tx.insert_user(&user("u1", "ada@example.com"))
        .await
        .unwrap();
    tx.insert_user(&user("u2", "bob@example.com"))
        .await
        .unwrap();
    for o in ["o1", "o2"] {
        tx.insert_organization(&org(o, None)).await.unwrap();
        for name in ["owner", "viewer"] {
            tx.insert_role(&RoleRecord {
                id: format!("{o}-{name}"),
                organization_id: o.into(),
                name: name.into(),
                description: String::new(),
                capabilities: Json(vec![]),
                is_built_in: true,
                created_at: 1,
                updated_at: 1,
            })
            .await
            .unwrap();
        }
    }
    for (user, role, at) in [("u1", "owner", 1), ("u2", "viewer", 2)] {
        tx.insert_member(&MemberRecord {
            organization_id: "o1".into(),
            user_id: user.into(),
            role: role.into(),
            created_at: at,
        })
        .await
        .unwrap();
    }
    tx.commit().await.unwrap();
}

fn session(id: &str, user: &str, org: Option<&str>) -> SessionRecord {
    SessionRecord {
        id: id.into(),
        token_hash: format!("hash-{id}"),
        user_id: user.into(),
        active_organization_id: org.map(String::from),
        expires_at: i64::MAX,
        ip_address: None,
        user_agent: None,
        created_at: 1,
        updated_at: 1,
    }
}

async fn deleting_an_organization_cascades_and_clears_sessions(url: String) {
    let store = open(&url).await;
    seed(&store).await;
    let mut tx = store.write_instance_wide().await.unwrap();
    tx.insert_session(&session("s1", "u2", Some("o1")))
        .await
        .unwrap();
    tx.insert_session(&session("s2", "u2", Some("o2")))
        .await
        .unwrap();
    tx.insert_api_key(&ApiKeyRecord {
        id: "k1".into(),
        organization_id: "o1".into(),
        name: "k".into(),
        key_hash: "kh".into(),
        start: "cms_".into(),
        permissions: Json(vec!["read".into()]),
        capabilities: None,
        created_by: "u2".into(),
        created_at: 1,
        expires_at: None,
    })
    .await
    .unwrap();
    tx.insert_invitation(&invitation("i1", "o1", "carol@example.com", 10))
        .await
        .unwrap();
    tx.commit().await.unwrap();

    let mut tx = store.read_instance_wide().await.unwrap();
    let orgs = tx.organizations_of("u2").await.unwrap();
    assert_eq!(orgs.len(), 1);
    assert_eq!(
        (
            orgs[0].organization.id.as_str(),
            orgs[0].member_role.as_str()
        ),
        ("o1", "viewer")
    );
    let members: Vec<_> = tx
        .members_of("o1")
        .await
        .unwrap()
        .into_iter()
        .map(|m| (m.email, m.role))
        .collect();
    assert_eq!(
        members,
        vec![
            ("ada@example.com".to_string(), "owner".to_string()),
            ("bob@example.com".to_string(), "viewer".to_string())
        ]
    );
    drop(tx);

    let mut tx = store.write_instance_wide().await.unwrap();
    assert!(tx.lock_organization("o1").await.unwrap());
    assert!(!tx.lock_organization("missing").await.unwrap());
    assert!(tx.delete_organization("o1").await.unwrap());
    assert!(!tx.delete_organization("o1").await.unwrap());
    tx.commit().await.unwrap();

    let mut tx = store.read_instance_wide().await.unwrap();
    assert!(tx.roles("o1").await.unwrap().is_empty());
    assert!(tx.members_of("o1").await.unwrap().is_empty());
    assert!(tx.api_keys("o1").await.unwrap().is_empty());
    assert!(tx.invitation("i1").await.unwrap().is_none());
    let s1 = tx.session_by_token_hash("hash-s1").await.unwrap().unwrap();
    assert_eq!(
        s1.active_organization_id, None,
        "the session lives on without it"
    );
    let s2 = tx.session_by_token_hash("hash-s2").await.unwrap().unwrap();
    assert_eq!(s2.active_organization_id.as_deref(), Some("o2"));
    assert_eq!(
        tx.roles("o2").await.unwrap().len(),
        2,
        "others are untouched"
    );
    drop(tx);
    store.close().await;
}

async fn members_leave_keys_and_sessions_behind_on_request(url: String) {
    let store = open(&url).await;
    seed(&store).await;
    let mut tx = store.write_instance_wide().await.unwrap();
    tx.insert_session(&session("s1", "u2", Some("o1")))
        .await
        .unwrap();
    tx.insert_session(&session("s2", "u2", Some("o2")))
        .await
        .unwrap();
    tx.insert_session(&session("s3", "u1", Some("o1")))
        .await
        .unwrap();
    assert_eq!(
        tx.clear_active_organization("u2", "o1", 5).await.unwrap(),
        1
    );
    assert_eq!(tx.delete_api_keys_of_member("o1", "u2").await.unwrap(), 0);
    assert_eq!(tx.delete_sessions_of_user("u1").await.unwrap(), 1);
    tx.commit().await.unwrap();
    let mut tx = store.read_instance_wide().await.unwrap();
    let s1 = tx.session_by_token_hash("hash-s1").await.unwrap().unwrap();
    assert_eq!((s1.active_organization_id, s1.updated_at), (None, 5));
    assert!(tx.session_by_token_hash("hash-s2").await.unwrap().is_some());
    assert!(tx.session_by_token_hash("hash-s3").await.unwrap().is_none());
    drop(tx);

    // Profile updates keep e-mails unique.
    let mut tx = store.write_instance_wide().await.unwrap();
    assert!(
        tx.update_user_profile("u1", "Ada L", "ada@lovelace.org", false, 7)
            .await
            .unwrap()
    );
    assert!(
        tx.set_password_hash("u1", "$argon2id$new", 8)
            .await
            .unwrap()
    );
    assert!(tx.set_email_verified("u1", 9).await.unwrap());
    assert!(!tx.set_email_verified("nobody", 9).await.unwrap());
    tx.commit().await.unwrap();
    let mut tx = store.write_instance_wide().await.unwrap();
    assert!(matches!(
        tx.update_user_profile("u2", "Bob", "ada@lovelace.org", false, 10)
            .await,
        Err(StoreError::Unique(_))
    ));
    drop(tx);
    let mut tx = store.read_instance_wide().await.unwrap();
    let u1 = tx.user_by_id("u1").await.unwrap().unwrap();
    assert_eq!(
        (
            u1.name.as_str(),
            u1.email.as_str(),
            u1.email_verified,
            u1.updated_at
        ),
        ("Ada L", "ada@lovelace.org", true, 9)
    );
    assert_eq!(u1.password_hash.as_deref(), Some("$argon2id$new"));
    drop(tx);
    store.close().await;
}

async fn an_address_has_one_pending_invitation_per_organization(url: String) {
    let store = open(&url).await;
    seed(&store).await;
    let mut tx = store.write_instance_wide().await.unwrap();
    tx.insert_invitation(&invitation("i1", "o1", "carol@example.com", 100))
        .await
        .unwrap();
    tx.insert_invitation(&invitation("i2", "o2", "carol@example.com", 50))
        .await
        .unwrap();
    tx.commit().await.unwrap();
    let mut tx = store.write_instance_wide().await.unwrap();
    assert!(matches!(
        tx.insert_invitation(&invitation("i3", "o1", "carol@example.com", 100))
            .await,
        Err(StoreError::Unique(_))
    ));
    drop(tx);

    let mut tx = store.read_instance_wide().await.unwrap();
    let open_ids = |v: Vec<InvitationRecord>| v.into_iter().map(|i| i.id).collect::<Vec<_>>();
    assert_eq!(
        open_ids(
            tx.open_invitations_for("carol@example.com", 10)
                .await
                .unwrap()
        ),
        vec!["i1", "i2"]
    );
    // Past its expiry an invitation is not open, though still pending.
    assert_eq!(
        open_ids(
            tx.open_invitations_for("carol@example.com", 50)
                .await
                .unwrap()
        ),
        vec!["i1"]
    );
    assert_eq!(
        open_ids(tx.pending_invitations("o2").await.unwrap()),
        vec!["i2"]
    );
    assert_eq!(
        tx.pending_invitation("o1", "carol@example.com")
            .await
            .unwrap()
            .unwrap()
            .id,
        "i1"
    );
    // An invitation is found by the hash of its secret, and by nothing else.
    assert_eq!(
        tx.invitation_by_token_hash("hash-i2")
            .await
            .unwrap()
            .map(|i| i.id),
        Some("i2".to_string())
    );
    assert!(
        tx.invitation_by_token_hash("hash-i9")
            .await
            .unwrap()
            .is_none()
    );
    drop(tx);

    // Only a pending invitation moves, once; then the address may be invited again.
    let mut tx = store.write_instance_wide().await.unwrap();
    assert!(tx.finish_invitation("i1", "accepted", 20).await.unwrap());
    assert!(!tx.finish_invitation("i1", "cancelled", 21).await.unwrap());
    tx.insert_invitation(&invitation("i3", "o1", "carol@example.com", 100))
        .await
        .unwrap();
    tx.commit().await.unwrap();
    let mut tx = store.read_instance_wide().await.unwrap();
    let i1 = tx.invitation("i1").await.unwrap().unwrap();
    assert_eq!((i1.status.as_str(), i1.updated_at), ("accepted", 20));
    assert_eq!(
        open_ids(tx.pending_invitations("o1").await.unwrap()),
        vec!["i3"]
    );
    drop(tx);
    store.close().await;
}

async fn user_tokens_are_taken_once(url: String) {
    let store = open(&url).await;
    seed(&store).await;
    let token = |hash: &str, purpose: &str, expires_at: i64| UserTokenRecord {
        token_hash: hash.into(),
        user_id: "u1".into(),
        purpose: purpose.into(),
        email: None,
        expires_at,
        created_at: 1,
    };
    let mut tx = store.write_instance_wide().await.unwrap();
    tx.insert_user_token(&token("h1", "passwordReset", 100))
        .await
        .unwrap();
    tx.insert_user_token(&token("h2", "passwordReset", 5))
        .await
        .unwrap();
    tx.insert_user_token(&token("h3", "emailVerification", 100))
        .await
        .unwrap();
    tx.commit().await.unwrap();

    let mut tx = store.write_instance_wide().await.unwrap();
    // The purpose must match.
    assert!(
        tx.take_user_token("h1", "emailVerification")
            .await
            .unwrap()
            .is_none()
    );
    assert!(
        tx.user_token("h1", "passwordReset")
            .await
            .unwrap()
            .is_some()
    );
    let taken = tx
        .take_user_token("h1", "passwordReset")
        .await
        .unwrap()
        .unwrap();
    assert_eq!((taken.user_id.as_str(), taken.expires_at), ("u1", 100));
    assert!(
        tx.take_user_token("h1", "passwordReset")
            .await
            .unwrap()
            .is_none()
    );
    assert!(
        tx.user_token("h1", "passwordReset")
            .await
            .unwrap()
            .is_none()
    );
    assert_eq!(tx.delete_expired_user_tokens(10).await.unwrap(), 1);
    assert_eq!(
        tx.delete_user_tokens("u1", "emailVerification")
            .await
            .unwrap(),
        1
    );
    tx.commit().await.unwrap();
    let mut tx = store.read_instance_wide().await.unwrap();
    assert!(
        tx.user_token("h2", "passwordReset")
            .await
            .unwrap()
            .is_none()
    );
    assert!(
        tx.user_token("h3", "emailVerification")
            .await
            .unwrap()
            .is_none()
    );
    drop(tx);
    store.close().await;
}

async fn preferences_are_saved_per_user(url: String) {
    let store = open(&url).await;
    seed(&store).await;
    let mut tx = store.write_instance_wide().await.unwrap();
    assert!(tx.preferences("u1").await.unwrap().is_none());
    tx.save_preferences("u1", &Json(json!({"theme": "dark"})), 1)
        .await
        .unwrap();
    tx.save_preferences("u1", &Json(json!({"theme": "light", "n": 2})), 2)
        .await
        .unwrap();
    tx.commit().await.unwrap();
    let mut tx = store.read_instance_wide().await.unwrap();
    assert_eq!(
        tx.preferences("u1").await.unwrap().unwrap().0,
        json!({"theme": "light", "n": 2})
    );
    assert!(tx.preferences("u2").await.unwrap().is_none());
    drop(tx);
    // They go with their user.
    let mut tx = store.write_instance_wide().await.unwrap();
    assert!(tx.delete_user("u1").await.unwrap());
    tx.commit().await.unwrap();
    let mut tx = store.read_instance_wide().await.unwrap();
    assert!(tx.preferences("u1").await.unwrap().is_none());
    drop(tx);
    store.close().await;
}

async fn plugin_settings_are_saved_per_organization_and_plugin(url: String) {
    let store = open(&url).await;
    seed(&store).await;
    let record =
        |org: &str, plugin: &str, values: serde_json::Value, at: i64| PluginSettingsRecord {
            organization_id: org.into(),
            plugin_id: plugin.into(),
            values: Json(values),
            updated_at: at,
            updated_by: Some("u1".into()),
        };
    let mut tx = store.write_for("o1").await.unwrap();
    assert!(
        tx.plugin_settings("o1", "webhooks")
            .await
            .unwrap()
            .is_none()
    );
    assert!(tx.plugin_settings_of("o1").await.unwrap().is_empty());
    tx.save_plugin_settings(&record(
        "o1",
        "webhooks",
        json!({"url": "a", "secret": "v1:x"}),
        1,
    ))
    .await
    .unwrap();
    tx.save_plugin_settings(&record("o1", "analytics", json!({"id": 7}), 1))
        .await
        .unwrap();
    // A second save replaces the first (values, time and author).
    let replaced = PluginSettingsRecord {
        updated_by: None,
        ..record("o1", "webhooks", json!({"url": "b"}), 2)
    };
    tx.save_plugin_settings(&replaced).await.unwrap();
    tx.commit().await.unwrap();
    let mut tx = store.write_for("o2").await.unwrap();
    tx.save_plugin_settings(&record("o2", "webhooks", json!({"url": "other"}), 3))
        .await
        .unwrap();
    tx.commit().await.unwrap();

    let mut tx = store.read_for("o1").await.unwrap();
    assert_eq!(
        tx.plugin_settings("o1", "webhooks").await.unwrap(),
        Some(replaced.clone())
    );
    let all = tx.plugin_settings_of("o1").await.unwrap();
    assert_eq!(
        all.iter().map(|r| r.plugin_id.as_str()).collect::<Vec<_>>(),
        ["analytics", "webhooks"]
    );
    assert_eq!(all[0].values.0, json!({"id": 7}));
    assert_eq!(all[0].updated_by.as_deref(), Some("u1"));
    drop(tx);
    let mut tx = store.read_for("o2").await.unwrap();
    let other = tx.plugin_settings("o2", "webhooks").await.unwrap().unwrap();
    assert_eq!(
        (other.values.0, other.updated_at),
        (json!({"url": "other"}), 3)
    );
    // PostgreSQL's tenant wall: a unit acting for o2 sees none of o1's settings, and one that
    // declares nothing sees none at all. An instance-wide unit (the relay, reading the
    // webhooks settings form of its batch's organizations) reads them, and writes none.
    if store.dialect() == crate::Dialect::Postgres {
        assert!(
            tx.plugin_settings("o1", "webhooks")
                .await
                .unwrap()
                .is_none()
        );
        let mut bare = store.read().await.unwrap();
        assert!(bare.plugin_settings_of("o1").await.unwrap().is_empty());
        drop(bare);
        let mut relay = store.write_instance_wide().await.unwrap();
        assert_eq!(relay.plugin_settings_of("o1").await.unwrap().len(), 2);
        assert!(
            relay
                .save_plugin_settings(&record("o1", "spy", json!({}), 9))
                .await
                .is_err()
        );
    }
    drop(tx);

    // They go with their organization.
    let mut tx = store.write_instance_wide().await.unwrap();
    assert!(tx.delete_organization("o1").await.unwrap());
    tx.commit().await.unwrap();
    let mut tx = store.read_for("o1").await.unwrap();
    assert!(tx.plugin_settings_of("o1").await.unwrap().is_empty());
    drop(tx);
    store.close().await;
}

async fn change_sets_are_kept_per_organization_and_undone_once(url: String) {
    let store = open(&url).await;
    seed(&store).await;
    let record = |id: &str, org: &str, at: i64| ChangeSetRecord {
        id: id.into(),
        organization_id: org.into(),
        user_id: "u1".into(),
        created_at: at,
        operations: Json(json!([])),
        undone_at: None,
        source: if id == "c3" { "mcp" } else { "assistant" }.into(),
    };
    let mut tx = store.write_for("o1").await.unwrap();
    for (id, at) in [("c1", 1), ("c2", 3), ("c3", 2)] {
        tx.insert_change_set(&record(id, "o1", at)).await.unwrap();
    }
    let operations = Json(json!([{"tool": "create_document", "success": true}]));
    assert!(
        tx.set_change_set_operations("o1", "c1", &operations)
            .await
            .unwrap()
    );
    assert!(
        !tx.set_change_set_operations("o1", "missing", &operations)
            .await
            .unwrap()
    );
    tx.commit().await.unwrap();
    let mut tx = store.write_for("o2").await.unwrap();
    tx.insert_change_set(&record("c4", "o2", 9)).await.unwrap();
    tx.commit().await.unwrap();

    let mut tx = store.read_for("o1").await.unwrap();
    let (page, total) = tx.change_sets("o1", 2, 0).await.unwrap();
    assert_eq!(total, 3);
    assert_eq!(
        page.iter().map(|c| c.id.as_str()).collect::<Vec<_>>(),
        ["c2", "c3"],
        "newest first"
    );
    assert_eq!(
        page.iter().map(|c| c.source.as_str()).collect::<Vec<_>>(),
        ["assistant", "mcp"],
        "the door each came through"
    );
    let (rest, _) = tx.change_sets("o1", 2, 2).await.unwrap();
    assert_eq!(rest.len(), 1);
    assert_eq!(rest[0].operations, operations);
    assert!(tx.change_set("o1", "c4").await.unwrap().is_none());
    drop(tx);

    let mut tx = store.write_for("o1").await.unwrap();
    assert!(tx.mark_change_set_undone("o1", "c1", 5).await.unwrap());
    assert!(
        !tx.mark_change_set_undone("o1", "c1", 6).await.unwrap(),
        "an undo happens once"
    );
    assert!(!tx.mark_change_set_undone("o1", "c4", 6).await.unwrap());
    tx.commit().await.unwrap();
    let mut tx = store.read_for("o1").await.unwrap();
    assert_eq!(
        tx.change_set("o1", "c1").await.unwrap().unwrap().undone_at,
        Some(5)
    );
    if store.dialect() == crate::Dialect::Postgres {
        let mut bare = store.read_instance_wide().await.unwrap();
        assert_eq!(bare.change_sets("o1", 10, 0).await.unwrap().1, 0);
    }
    drop(tx);
    store.close().await;
}

crate::both_engines!(
    deleting_an_organization_cascades_and_clears_sessions,
    members_leave_keys_and_sessions_behind_on_request,
    an_address_has_one_pending_invitation_per_organization,
    user_tokens_are_taken_once,
    preferences_are_saved_per_user,
    plugin_settings_are_saved_per_organization_and_plugin,
    change_sets_are_kept_per_organization_and_undone_once,
);
