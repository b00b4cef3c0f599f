//! The storage conformance suite: the same behaviour, asserted on both engines.

use serde_json::json;

use crate::api_keys::ApiKeyRecord;
use crate::documents::DocumentRecord;
use crate::events::{EventQuery, EventRecord};
use crate::invitations::InvitationRecord;
use crate::jobs::{JobOutcome, JobQuery, JobRecord};
use crate::organizations::{MemberRecord, OrganizationRecord};
use crate::references::ReferenceRecord;
use crate::roles::RoleRecord;
use crate::schedules::ScheduleRecord;
use crate::sessions::SessionRecord;
use crate::users::UserRecord;
use crate::versions::VersionRecord;
use crate::{Json, StoreError};
use cms_core::JobStatus;

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

pub(crate) async fn open(url: &str) -> std::sync::Arc<dyn crate::Store> {
    let store = crate::connect(url).await.expect("connect");
    store.migrate().await.expect("migrate");
    // Migrating twice is a no-op.
    store.migrate().await.expect("migrate again");
    store
}

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

async fn an_instance_flag_is_claimed_once(url: String) {
    let store = open(&url).await;
    let mut tx = store.write_instance_wide().await.unwrap();
    assert!(tx.claim_instance_flag("firstAdmin", "u1", 1).await.unwrap());
    assert!(!tx.claim_instance_flag("firstAdmin", "u2", 2).await.unwrap());
    assert_eq!(
        tx.instance_flag("firstAdmin").await.unwrap().as_deref(),
        Some("u1")
    );
    tx.commit().await.unwrap();
    store.close().await;
}

async fn instance_values_are_put_replaced_and_deleted(url: String) {
    let store = open(&url).await;
    let mut tx = store.write_instance_wide().await.unwrap();
    tx.put_instance_value("signUpPolicy", "{}", 1)
        .await
        .unwrap();
    tx.put_instance_value("signUpPolicy", "{\"inviteOnly\":false}", 2)
        .await
        .unwrap();
    assert_eq!(
        tx.instance_flag("signUpPolicy").await.unwrap().as_deref(),
        Some("{\"inviteOnly\":false}")
    );
    assert!(tx.delete_instance_value("signUpPolicy").await.unwrap());
    assert!(!tx.delete_instance_value("signUpPolicy").await.unwrap());
    assert_eq!(tx.instance_flag("signUpPolicy").await.unwrap(), None);
    tx.commit().await.unwrap();
    store.close().await;
}

async fn rate_limit_counters_count_per_window_and_are_purged(url: String) {
    use crate::rate_limits::RateCount;
    let store = open(&url).await;
    let mut tx = store.write_instance_wide().await.unwrap();
    // A window of 100 ms: a window that began at or before `now - 100` is over.
    for (now, expected) in [
        (
            1000,
            RateCount {
                window_start: 1000,
                hits: 1,
            },
        ),
        (
            1050,
            RateCount {
                window_start: 1000,
                hits: 2,
            },
        ),
        (
            1099,
            RateCount {
                window_start: 1000,
                hits: 3,
            },
        ),
        (
            1100,
            RateCount {
                window_start: 1100,
                hits: 1,
            },
        ),
    ] {
        assert_eq!(
            tx.hit_rate_limit("signIn.email:aa", now, now - 100)
                .await
                .unwrap(),
            expected
        );
    }
    // Another key counts on its own.
    assert_eq!(
        tx.hit_rate_limit("signIn.email:bb", 1150, 1050)
            .await
            .unwrap(),
        RateCount {
            window_start: 1150,
            hits: 1
        }
    );
    assert_eq!(tx.purge_rate_limits(1100).await.unwrap(), 1);
    assert_eq!(
        tx.hit_rate_limit("signIn.email:bb", 1160, 1060)
            .await
            .unwrap()
            .hits,
        2,
        "the purge kept the live window"
    );
    tx.commit().await.unwrap();
    store.close().await;
}

async fn concurrent_rate_limit_hits_each_count(url: String) {
    let store = open(&url).await;
    let hits: Vec<_> = (0..8)
        .map(|_| {
            let store = store.clone();
            tokio::spawn(async move {
                let mut tx = store.write_instance_wide().await.unwrap();
                let count = tx.hit_rate_limit("k", 5000, 0).await.unwrap();
                tx.commit().await.unwrap();
                count.hits
            })
        })
        .collect();
    let mut seen = Vec::new();
    for h in hits {
        seen.push(h.await.unwrap());
    }
    seen.sort();
    assert_eq!(seen, (1..=8).collect::<Vec<i64>>());
    store.close().await;
}

async fn organizations_members_and_roles(url: String) {
    let store = open(&url).await;
    let mut tx = store.write_instance_wide().await.unwrap();
    tx.insert_user(&user("u1", "ada@example.com"))
        .await
        .unwrap();
    tx.insert_organization(&org("o1", "acme")).await.unwrap();
    let child = OrganizationRecord {
        parent_id: Some("o1".into()),
        ..org("c1", "acme-child")
    };
    tx.insert_organization(&child).await.unwrap();
    tx.insert_role(&role("o1", "owner", &["document.read"]))
        .await
        .unwrap();
    tx.insert_role(&role("o1", "viewer", &["document.read"]))
        .await
        .unwrap();
    tx.commit().await.unwrap();

    let refused = |e| matches!(e, Err(StoreError::Unique(_)));
    let mut tx = store.write_instance_wide().await.unwrap();
    assert!(refused(tx.insert_organization(&org("o2", "acme")).await));
    drop(tx);
    let mut tx = store.write_instance_wide().await.unwrap();
    assert!(refused(tx.insert_role(&role("o1", "viewer", &[])).await));
    drop(tx);
    // A member's role must exist in the organization.
    let ghost = MemberRecord {
        organization_id: "o1".into(),
        user_id: "u1".into(),
        role: "ghost".into(),
        created_at: 1,
    };
    let mut tx = store.write_instance_wide().await.unwrap();
    assert!(matches!(
        tx.insert_member(&ghost).await,
        Err(StoreError::ForeignKey(_))
    ));
    drop(tx);

    let mut tx = store.write_instance_wide().await.unwrap();
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

    let mut tx = store.read_instance_wide().await.unwrap();
    let o = tx.organization_by_id("o1").await.unwrap().unwrap();
    assert_eq!(tx.child_organization_ids("o1").await.unwrap(), vec!["c1"]);
    assert!(tx.child_organization_ids("c1").await.unwrap().is_empty());
    assert_eq!(o.metadata.0, json!({"plan": "pro"}));
    assert_eq!(tx.member("o1", "u1").await.unwrap().unwrap().role, "owner");
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

    let mut tx = store.write_instance_wide().await.unwrap();
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
    let mut tx = store.write_instance_wide().await.unwrap();
    assert!(matches!(
        tx.update_member_role("o1", "u1", "ghost").await,
        Ok(false)
    ));
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

pub(crate) fn document(id: &str, org: &str, doc_type: &str, singleton: bool) -> DocumentRecord {
    DocumentRecord {
        id: id.into(),
        organization_id: org.into(),
        doc_type: doc_type.into(),
        singleton,
        draft_data: Json(json!({"title": id})),
        published_data: None,
        published_hash: None,
        revision: 1,
        created_by: Some("u1".into()),
        updated_by: Some("u1".into()),
        created_at: 1,
        updated_at: 1,
        published_at: None,
    }
}

/// A user u1 and organizations o1 and its child o2. A unit acting for o1 may read o2's rows,
/// which lets these tests look across both while PostgreSQL's row-level security holds.
pub(crate) async fn with_two_organizations(store: &std::sync::Arc<dyn crate::Store>) {
    let mut tx = store.write_instance_wide().await.unwrap();
    tx.insert_user(&user("u1", "ada@example.com"))
        .await
        .unwrap();
    tx.insert_organization(&org("o1", "acme")).await.unwrap();
    let child = OrganizationRecord {
        parent_id: Some("o1".into()),
        ..org("o2", "other")
    };
    tx.insert_organization(&child).await.unwrap();
    tx.commit().await.unwrap();
}

async fn documents_are_scoped_revised_and_published(url: String) {
    let store = open(&url).await;
    with_two_organizations(&store).await;
    for (id, org) in [("d1", "o1"), ("d2", "o2")] {
        let mut tx = store.write_for(org).await.unwrap();
        tx.insert_document(&document(id, org, "post", false))
            .await
            .unwrap();
        tx.commit().await.unwrap();
    }

    let o1 = vec!["o1".to_string()];
    let both = vec!["o1".to_string(), "o2".to_string()];
    let mut tx = store.write_for("o1").await.unwrap();
    assert!(
        tx.document(&o1, "d2").await.unwrap().is_none(),
        "another organization's document is invisible"
    );
    assert!(tx.document(&[], "d1").await.unwrap().is_none());
    assert_eq!(
        tx.document(&both, "d2")
            .await
            .unwrap()
            .unwrap()
            .organization_id,
        "o2"
    );
    let ids = vec!["d1".to_string(), "d2".to_string(), "nope".to_string()];
    assert_eq!(tx.documents_by_ids(&o1, &ids).await.unwrap().len(), 1);
    assert_eq!(tx.documents_by_ids(&both, &ids).await.unwrap().len(), 2);

    // Optimistic concurrency: the draft moves only from the expected revision.
    assert!(
        tx.save_draft("d1", &json!({"title": "v2"}), 1, Some("u1"), 5)
            .await
            .unwrap()
    );
    assert!(
        !tx.save_draft("d1", &json!({"title": "lost"}), 1, Some("u1"), 6)
            .await
            .unwrap()
    );
    tx.set_published("d1", &json!({"title": "v2"}), "abc", Some("u1"), 7)
        .await
        .unwrap();
    let d1 = tx.document(&o1, "d1").await.unwrap().unwrap();
    assert_eq!(
        (d1.revision, d1.draft_data.0.clone()),
        (2, json!({"title": "v2"}))
    );
    assert_eq!(
        (
            d1.published_data.unwrap().0,
            d1.published_hash.as_deref(),
            d1.published_at
        ),
        (json!({"title": "v2"}), Some("abc"), Some(7))
    );
    tx.clear_published("d1", None, 8).await.unwrap();
    let d1 = tx.document(&o1, "d1").await.unwrap().unwrap();
    assert_eq!(
        (
            d1.published_data,
            d1.published_hash,
            d1.published_at,
            d1.revision
        ),
        (None, None, None, 2)
    );
    assert!(tx.delete_document("d1").await.unwrap());
    assert!(!tx.delete_document("d1").await.unwrap());
    tx.commit().await.unwrap();
    store.close().await;
}

async fn a_singleton_type_has_one_row_per_organization(url: String) {
    let store = open(&url).await;
    with_two_organizations(&store).await;
    let mut tx = store.write_for("o2").await.unwrap();
    tx.insert_document(&document("s2", "o2", "siteSettings", true))
        .await
        .unwrap();
    tx.commit().await.unwrap();
    let mut tx = store.write_for("o1").await.unwrap();
    tx.insert_document(&document("s1", "o1", "siteSettings", true))
        .await
        .unwrap();
    // Non-singleton rows of the same type do not count.
    tx.insert_document(&document("p1", "o1", "post", false))
        .await
        .unwrap();
    tx.insert_document(&document("p2", "o1", "post", false))
        .await
        .unwrap();
    tx.commit().await.unwrap();
    let mut tx = store.write_for("o1").await.unwrap();
    assert!(matches!(
        tx.insert_document(&document("s3", "o1", "siteSettings", true))
            .await,
        Err(StoreError::Unique(_))
    ));
    drop(tx);
    let mut tx = store.read_for("o1").await.unwrap();
    assert_eq!(
        tx.singleton("o1", "siteSettings")
            .await
            .unwrap()
            .unwrap()
            .id,
        "s1"
    );
    assert!(tx.singleton("o1", "post").await.unwrap().is_none());
    drop(tx);
    store.close().await;
}

async fn versions_are_numbered_listed_and_pruned(url: String) {
    let store = open(&url).await;
    with_two_organizations(&store).await;
    let version = |i: i64, number: i64| VersionRecord {
        id: format!("v{i}"),
        document_id: "d1".into(),
        organization_id: "o1".into(),
        version_number: number,
        event_type: if i == 3 { "publish" } else { "draft" }.into(),
        data: Json(json!({"title": i})),
        created_by: Some("u1".into()),
        created_by_name: None,
        created_at: i,
    };
    let mut tx = store.write_for("o1").await.unwrap();
    // A new document's rows in one round trip: the first versions carry their numbers, the
    // event its outbox row; later versions are numbered on append, after them.
    let born_published = crate::events::EventRecord {
        id: "e1".into(),
        organization_id: Some("o1".into()),
        event_type: "document.published".into(),
        payload: Json(json!({"documentId": "d1"})),
        created_at: 1,
    };
    tx.insert_new_document(
        &document("d1", "o1", "post", false),
        &[version(1, 1), version(2, 2)],
        Some(&born_published),
    )
    .await
    .unwrap();
    tx.insert_new_document(&document("d2", "o1", "post", false), &[], None)
        .await
        .unwrap();
    assert!(matches!(
        tx.insert_new_document(&document("d2", "o1", "post", false), &[], None)
            .await,
        Err(StoreError::Unique(_))
    ));
    drop(tx);
    let mut tx = store.write_for("o1").await.unwrap();
    tx.insert_new_document(
        &document("d1", "o1", "post", false),
        &[version(1, 1), version(2, 2)],
        Some(&born_published),
    )
    .await
    .unwrap();
    tx.insert_new_document(&document("d2", "o1", "post", false), &[], None)
        .await
        .unwrap();
    assert_eq!(tx.outbox_backlog().await.unwrap(), 1);
    assert!(
        tx.document(&["o1".to_string()], "d2")
            .await
            .unwrap()
            .is_some()
    );
    for i in 3..=5 {
        assert_eq!(tx.append_version(&version(i, 0)).await.unwrap(), i);
    }
    tx.commit().await.unwrap();

    let mut tx = store.write_for("o1").await.unwrap();
    assert_eq!(tx.count_versions("d1").await.unwrap(), 5);
    let page = tx.versions("d1", 2, 1).await.unwrap();
    assert_eq!(
        page.iter().map(|v| v.version_number).collect::<Vec<_>>(),
        vec![4, 3]
    );
    assert_eq!(page[0].created_by_name.as_deref(), Some("Ada"));
    let v3 = tx.version("d1", 3).await.unwrap().unwrap();
    assert_eq!(
        (v3.event_type.as_str(), v3.data.0.clone()),
        ("publish", json!({"title": 3}))
    );
    assert_eq!(tx.prune_versions("d1", 2).await.unwrap(), 3);
    assert_eq!(
        tx.versions("d1", 10, 0)
            .await
            .unwrap()
            .iter()
            .map(|v| v.version_number)
            .collect::<Vec<_>>(),
        vec![5, 4]
    );
    assert!(tx.version("d1", 3).await.unwrap().is_none());
    // Numbers keep growing after pruning; they are never reused.
    let v6 = VersionRecord {
        id: "v6".into(),
        ..v3
    };
    assert_eq!(tx.append_version(&v6).await.unwrap(), 6);
    // Deleting the document deletes its versions.
    assert!(tx.delete_document("d1").await.unwrap());
    assert_eq!(tx.count_versions("d1").await.unwrap(), 0);
    tx.commit().await.unwrap();
    store.close().await;
}

async fn references_are_replaced_per_copy_and_found_backwards(url: String) {
    let store = open(&url).await;
    with_two_organizations(&store).await;
    let r = |path: &str, to: &str, target: &str| ReferenceRecord {
        path: path.into(),
        to_id: to.into(),
        target: target.into(),
    };
    let mut tx = store.write_for("o2").await.unwrap();
    tx.insert_document(&document("p2", "o2", "post", false))
        .await
        .unwrap();
    tx.replace_references("p2", "o2", "draft", &[r("author", "author", "document")])
        .await
        .unwrap();
    tx.commit().await.unwrap();
    let mut tx = store.write_for("o1").await.unwrap();
    for id in ["author", "p1"] {
        tx.insert_document(&document(id, "o1", "post", false))
            .await
            .unwrap();
    }
    tx.replace_references(
        "p1",
        "o1",
        "draft",
        &[
            r("author", "author", "document"),
            r("cover.asset", "a1", "asset"),
        ],
    )
    .await
    .unwrap();
    tx.replace_references(
        "p1",
        "o1",
        "published",
        &[r("author", "author", "document")],
    )
    .await
    .unwrap();
    tx.commit().await.unwrap();

    let mut tx = store.write_for("o1").await.unwrap();
    let o1 = vec!["o1".to_string()];
    let back: Vec<_> = tx
        .referencing_documents(&o1, "author")
        .await
        .unwrap()
        .into_iter()
        .map(|d| d.id)
        .collect();
    assert_eq!(back, vec!["p1"], "once per document, own organization only");
    let both = vec!["o1".to_string(), "o2".to_string()];
    assert_eq!(
        tx.referencing_documents(&both, "author")
            .await
            .unwrap()
            .len(),
        2
    );
    // Replacing a copy's references forgets the old ones.
    tx.replace_references("p1", "o1", "draft", &[])
        .await
        .unwrap();
    assert!(tx.references_from("p1", "draft").await.unwrap().is_empty());
    assert_eq!(
        tx.references_from("p1", "published").await.unwrap(),
        vec![r("author", "author", "document")]
    );
    // Deleting the referencing document removes its references.
    tx.delete_document("p1").await.unwrap();
    assert!(
        tx.referencing_documents(&o1, "author")
            .await
            .unwrap()
            .is_empty()
    );
    tx.commit().await.unwrap();
    store.close().await;
}

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
        3,
    );
    let sql = format!(
        "SELECT id FROM documents WHERE organization_id IN ($1) AND type = $2 AND ({})",
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

fn event(id: &str, org: &str, event_type: &str) -> EventRecord {
    EventRecord {
        id: id.into(),
        organization_id: Some(org.into()),
        event_type: event_type.into(),
        payload: Json(json!({"documentId": "d1"})),
        created_at: 1,
    }
}

fn job(id: &str, run_at: i64, key: Option<&str>) -> JobRecord {
    JobRecord {
        organization_id: Some("o1".into()),
        idempotency_key: key.map(str::to_string),
        ..JobRecord::pending(id.into(), "test.job", json!({"n": id}), 3, run_at)
    }
}

async fn events_carry_their_outbox_row_atomically(url: String) {
    let store = open(&url).await;
    with_two_organizations(&store).await;
    // Rolled back: neither the event nor its outbox row exists.
    let mut tx = store.write_instance_wide().await.unwrap();
    tx.append_event(&event("e0", "o1", "document.published"))
        .await
        .unwrap();
    drop(tx);
    let mut tx = store.write_instance_wide().await.unwrap();
    assert_eq!(tx.outbox_backlog().await.unwrap(), 0);
    for (id, org, t) in [
        ("e1", "o1", "document.published"),
        ("e2", "o2", "document.published"),
        ("e3", "o1", "user.deleted"),
    ] {
        tx.append_event(&event(id, org, t)).await.unwrap();
    }
    tx.commit().await.unwrap();

    let mut tx = store.write_instance_wide().await.unwrap();
    assert_eq!(tx.outbox_backlog().await.unwrap(), 3);
    let claimed = tx.claim_outbox(2).await.unwrap();
    let ids: Vec<&str> = claimed.iter().map(|e| e.id.as_str()).collect();
    assert_eq!(ids, ["e1", "e2"]);
    tx.mark_processed(&["e1".into(), "e2".into()], 5)
        .await
        .unwrap();
    tx.commit().await.unwrap();
    let mut tx = store.write_instance_wide().await.unwrap();
    assert_eq!(tx.outbox_backlog().await.unwrap(), 1);
    assert_eq!(tx.claim_outbox(10).await.unwrap()[0].id, "e3");
    let e2 = tx.event("e2").await.unwrap().unwrap();
    assert_eq!(
        (e2.organization_id.as_deref(), e2.payload.0.clone()),
        (Some("o2"), json!({"documentId": "d1"}))
    );
    assert!(tx.event("nope").await.unwrap().is_none());

    let query =
        |organization: Option<&str>, event_type: Option<&str>, after: Option<&str>| EventQuery {
            organization: organization.map(str::to_string),
            event_type: event_type.map(str::to_string),
            after: after.map(str::to_string),
            limit: 10,
            offset: 0,
        };
    let ids = |page: (Vec<EventRecord>, i64)| {
        (page.0.into_iter().map(|e| e.id).collect::<Vec<_>>(), page.1)
    };
    assert_eq!(
        ids(tx.events(&query(Some("o1"), None, None)).await.unwrap()),
        (vec!["e3".to_string(), "e1".to_string()], 2),
        "newest first, one organization"
    );
    assert_eq!(
        ids(tx
            .events(&query(None, Some("document.published"), None))
            .await
            .unwrap()),
        (vec!["e2".to_string(), "e1".to_string()], 2)
    );
    assert_eq!(
        ids(tx.events(&query(None, None, Some("e1"))).await.unwrap()),
        (vec!["e2".to_string(), "e3".to_string()], 2),
        "after an id: only newer, oldest first"
    );
    drop(tx);
    store.close().await;
}

async fn jobs_are_claimed_leased_finished_and_deduplicated(url: String) {
    let store = open(&url).await;
    let mut tx = store.write_instance_wide().await.unwrap();
    assert!(tx.enqueue_job(&job("j1", 100, Some("k1"))).await.unwrap());
    assert!(
        !tx.enqueue_job(&job("j1b", 100, Some("k1"))).await.unwrap(),
        "a duplicate key is absorbed"
    );
    assert!(tx.enqueue_job(&job("j2", 100, None)).await.unwrap());
    // A batch: the duplicate key (of an existing job, and within the batch) is absorbed.
    assert_eq!(
        tx.enqueue_jobs(&[
            job("b1", 900, Some("k1")),
            job("b2", 900, Some("kb")),
            job("b3", 900, Some("kb")),
        ])
        .await
        .unwrap(),
        1
    );
    assert_eq!(tx.enqueue_jobs(&[]).await.unwrap(), 0);
    assert!(tx.enqueue_job(&job("j3", 500, None)).await.unwrap());
    tx.commit().await.unwrap();

    let mut tx = store.write_instance_wide().await.unwrap();
    let claimed = tx.claim_jobs(100, 160, 10).await.unwrap();
    let ids: Vec<&str> = claimed.iter().map(|j| j.id.as_str()).collect();
    assert_eq!(ids, ["j1", "j2"], "only due jobs");
    assert!(
        claimed
            .iter()
            .all(|j| j.status == "running" && j.attempts == 1)
    );
    assert!(
        tx.claim_jobs(150, 210, 10).await.unwrap().is_empty(),
        "leased"
    );
    // j1's worker "crashed": its lease expires and another claim takes it over.
    let reclaimed = tx.claim_jobs(170, 230, 10).await.unwrap();
    let ids: Vec<(&str, i64)> = reclaimed
        .iter()
        .map(|j| (j.id.as_str(), j.attempts))
        .collect();
    assert_eq!(ids, [("j1", 2), ("j2", 2)]);
    assert!(
        !tx.finish_job("j1", 160, &JobOutcome::Completed, 171)
            .await
            .unwrap(),
        "the stale claim no longer holds it"
    );
    assert!(
        tx.finish_job("j1", 230, &JobOutcome::Completed, 171)
            .await
            .unwrap()
    );
    let retry = JobOutcome::Retry {
        run_at: 400,
        error: "boom".into(),
    };
    assert!(tx.finish_job("j2", 230, &retry, 171).await.unwrap());
    let j2 = tx.job("j2").await.unwrap().unwrap();
    assert_eq!(
        (
            j2.status.as_str(),
            j2.run_at,
            j2.last_error.as_deref(),
            j2.locked_until
        ),
        ("pending", 400, Some("boom"), None)
    );
    let claimed = tx.claim_jobs(500, 560, 10).await.unwrap();
    assert_eq!(claimed.len(), 2);
    assert_eq!(
        tx.complete_jobs(&["j2".into(), "j3".into()], 560, 501)
            .await
            .unwrap(),
        2
    );
    assert_eq!(tx.job("j3").await.unwrap().unwrap().completed_at, Some(501));

    // Requeue and cancel only from the states that allow it.
    assert!(
        !tx.requeue_job("j3", &[JobStatus::Failed, JobStatus::DeadLetter], true, 600)
            .await
            .unwrap()
    );
    assert!(tx.enqueue_job(&job("j4", 700, None)).await.unwrap());
    let stop = JobOutcome::DeadLettered {
        error: "gave up".into(),
    };
    tx.claim_jobs(700, 760, 1).await.unwrap();
    assert!(tx.finish_job("j4", 760, &stop, 701).await.unwrap());
    assert!(
        tx.requeue_job("j4", &[JobStatus::Failed, JobStatus::DeadLetter], true, 702)
            .await
            .unwrap()
    );
    let j4 = tx.job("j4").await.unwrap().unwrap();
    assert_eq!(
        (j4.status.as_str(), j4.attempts, j4.run_at),
        ("pending", 0, 702)
    );
    assert!(tx.cancel_job("j4", 703).await.unwrap());
    assert!(
        !tx.cancel_job("j4", 704).await.unwrap(),
        "only pending jobs cancel"
    );

    let (page, total) = tx
        .jobs(&JobQuery {
            status: Some("completed".into()),
            limit: 10,
            ..JobQuery::default()
        })
        .await
        .unwrap();
    assert_eq!((page.len(), total), (3, 3));
    let (counts, oldest) = tx.job_counts(Some("o1"), 1000).await.unwrap();
    assert_eq!(
        counts,
        vec![
            ("cancelled".to_string(), 1),
            ("completed".to_string(), 3),
            ("pending".to_string(), 1)
        ]
    );
    assert_eq!(oldest, Some(900), "b2 waits since its run time");
    assert_eq!(
        tx.job_counts(Some("o1"), 800).await.unwrap().1,
        None,
        "not due yet"
    );
    tx.commit().await.unwrap();
    store.close().await;
}

/// Two workers on two pools claim concurrently: every job is completed exactly once and none
/// is lost.
async fn concurrent_workers_complete_every_job_exactly_once(url: String) {
    let store = open(&url).await;
    let mut tx = store.write_instance_wide().await.unwrap();
    for i in 0..1000 {
        tx.enqueue_job(&job(&format!("j{i:04}"), 1, None))
            .await
            .unwrap();
    }
    tx.commit().await.unwrap();
    let other = crate::connect(&url).await.unwrap();
    let work = |store: std::sync::Arc<dyn crate::Store>, worker: i64| async move {
        let mut done = Vec::new();
        for round in 0.. {
            // Distinct leases per claim, so a claim finishes only its own jobs.
            let lease = 1_000_000 + worker * 100_000 + round;
            let mut tx = store.write_instance_wide().await.unwrap();
            let claimed = tx.claim_jobs(10, lease, 25).await.unwrap();
            tx.commit().await.unwrap();
            if claimed.is_empty() {
                break;
            }
            let ids: Vec<String> = claimed.iter().map(|j| j.id.clone()).collect();
            let mut tx = store.write_instance_wide().await.unwrap();
            assert_eq!(
                tx.complete_jobs(&ids, lease, 11).await.unwrap(),
                ids.len() as u64
            );
            tx.commit().await.unwrap();
            done.extend(ids);
        }
        done
    };
    let (a, b) = tokio::join!(work(store.clone(), 1), work(other.clone(), 2));
    let mut all: Vec<String> = a.iter().chain(b.iter()).cloned().collect();
    all.sort();
    let before = all.len();
    all.dedup();
    assert_eq!(
        (before, all.len()),
        (1000, 1000),
        "each job claimed once, none lost"
    );
    let mut tx = store.read_instance_wide().await.unwrap();
    let (counts, _) = tx.job_counts(None, 20).await.unwrap();
    assert_eq!(counts, vec![("completed".to_string(), 1000)]);
    drop(tx);
    other.close().await;
    store.close().await;
}

async fn one_pending_schedule_per_document(url: String) {
    let store = open(&url).await;
    with_two_organizations(&store).await;
    let schedule = |id: &str| ScheduleRecord {
        id: id.into(),
        document_id: "d1".into(),
        organization_id: "o1".into(),
        action: "publish".into(),
        run_at: 100,
        status: "pending".into(),
        job_id: format!("job-{id}"),
        created_by: Some("u1".into()),
        created_at: 1,
        updated_at: 1,
    };
    let mut tx = store.write_for("o1").await.unwrap();
    tx.insert_document(&document("d1", "o1", "post", false))
        .await
        .unwrap();
    tx.insert_schedule(&schedule("s1")).await.unwrap();
    tx.commit().await.unwrap();
    let mut tx = store.write_instance_wide().await.unwrap();
    assert!(matches!(
        tx.insert_schedule(&schedule("s2")).await,
        Err(StoreError::Unique(_))
    ));
    drop(tx);
    let mut tx = store.write_instance_wide().await.unwrap();
    assert_eq!(tx.pending_schedule("d1").await.unwrap().unwrap().id, "s1");
    assert!(tx.settle_schedule("s1", "cancelled", 2).await.unwrap());
    assert!(!tx.settle_schedule("s1", "completed", 3).await.unwrap());
    assert!(tx.pending_schedule("d1").await.unwrap().is_none());
    tx.insert_schedule(&schedule("s2")).await.unwrap();
    assert_eq!(
        tx.schedule("s1").await.unwrap().unwrap().status,
        "cancelled"
    );
    tx.commit().await.unwrap();
    store.close().await;
}

async fn roles_are_edited_and_deleted_unless_still_assigned(url: String) {
    let store = open(&url).await;
    let mut tx = store.write_instance_wide().await.unwrap();
    tx.insert_user(&user("u1", "ada@example.com"))
        .await
        .unwrap();
    tx.insert_organization(&org("o1", "acme")).await.unwrap();
    for name in ["lead", "reviewer", "spare"] {
        tx.insert_role(&role("o1", name, &["document.read"]))
            .await
            .unwrap();
    }
    tx.insert_member(&MemberRecord {
        organization_id: "o1".into(),
        user_id: "u1".into(),
        role: "lead".into(),
        created_at: 1,
    })
    .await
    .unwrap();
    let invitation = |id: &str, status: &str, expires_at: i64| InvitationRecord {
        id: id.into(),
        organization_id: "o1".into(),
        email: format!("{id}@example.com"),
        role: "reviewer".into(),
        status: status.into(),
        invited_by: Some("u1".into()),
        token_hash: None,
        expires_at,
        created_at: 1,
        updated_at: 1,
    };
    tx.insert_invitation(&invitation("pending", "pending", 100))
        .await
        .unwrap();
    tx.insert_invitation(&invitation("accepted", "accepted", 1000))
        .await
        .unwrap();
    tx.commit().await.unwrap();

    let mut tx = store.write_instance_wide().await.unwrap();
    let caps = vec!["document.read".to_string(), "document.update".to_string()];
    let updated = tx
        .update_role("o1", "spare", "Spare role", &caps, 5)
        .await
        .unwrap()
        .expect("the role exists");
    assert_eq!(
        (
            updated.description.as_str(),
            updated.capabilities.0.clone(),
            updated.updated_at
        ),
        ("Spare role", caps.clone(), 5)
    );
    assert!(
        tx.update_role("o1", "ghost", "", &caps, 5)
            .await
            .unwrap()
            .is_none()
    );
    // Only pending invitations that have not expired count.
    assert_eq!(
        tx.count_pending_invitations_with_role("o1", "reviewer", 99)
            .await
            .unwrap(),
        1
    );
    assert_eq!(
        tx.count_pending_invitations_with_role("o1", "reviewer", 100)
            .await
            .unwrap(),
        0
    );
    assert_eq!(
        tx.count_pending_invitations_with_role("o1", "spare", 0)
            .await
            .unwrap(),
        0
    );
    assert!(tx.delete_role("o1", "spare").await.unwrap());
    assert!(!tx.delete_role("o1", "spare").await.unwrap());
    tx.commit().await.unwrap();
    // A role a member holds cannot go.
    let mut tx = store.write_instance_wide().await.unwrap();
    assert!(matches!(
        tx.delete_role("o1", "lead").await,
        Err(StoreError::ForeignKey(_))
    ));
    drop(tx);
    store.close().await;
}

/// The one lookup across organizations: from a unit that acts for no organization, or for
/// another one (on PostgreSQL, past row-level security), a bare id tells its organization and
/// type, and nothing else becomes visible.
async fn a_document_is_located_from_any_unit(url: String) {
    let store = open(&url).await;
    with_two_organizations(&store).await;
    let mut tx = store.write_instance_wide().await.unwrap();
    tx.insert_organization(&org("o3", "stranger"))
        .await
        .unwrap();
    tx.commit().await.unwrap();
    let mut tx = store.write_for("o2").await.unwrap();
    tx.insert_document(&document("d2", "o2", "form", false))
        .await
        .unwrap();
    tx.commit().await.unwrap();
    let found = crate::documents::DocumentLocation {
        organization_id: "o2".into(),
        doc_type: "form".into(),
    };
    let o2 = vec!["o2".to_string()];
    for acting in [None, Some("o3"), Some("o2")] {
        let mut tx = match acting {
            None => store.read_instance_wide().await.unwrap(),
            Some(org) => store.read_for(org).await.unwrap(),
        };
        assert_eq!(
            tx.locate_document("d2").await.unwrap().as_ref(),
            Some(&found),
            "acting for {acting:?}"
        );
        assert_eq!(tx.locate_document("missing").await.unwrap(), None);
        // The lookup opens nothing else: the rest of the unit is as walled as before.
        let visible = tx.document(&o2, "d2").await.unwrap().is_some();
        let dialect = store.dialect();
        assert_eq!(
            visible,
            acting == Some("o2") || dialect == crate::Dialect::Sqlite,
            "acting for {acting:?} on {dialect:?}"
        );
        drop(tx);
    }
    // Also inside a write unit, before and after other statements.
    let mut tx = store.write_for("o3").await.unwrap();
    tx.insert_document(&document("d3", "o3", "post", false))
        .await
        .unwrap();
    assert_eq!(tx.locate_document("d2").await.unwrap(), Some(found.clone()));
    assert_eq!(
        tx.locate_document("d3").await.unwrap().map(|l| l.doc_type),
        Some("post".to_string())
    );
    tx.commit().await.unwrap();
    store.close().await;
}

/// Many new documents in a few statements: every row of each (document, versions, event with
/// its outbox row, references per copy) lands, across statement chunks, in one transaction.
async fn new_documents_are_inserted_in_bulk(url: String) {
    use crate::documents::{INSERT_CHUNK, NewDocumentRows};
    let store = open(&url).await;
    with_two_organizations(&store).await;
    let n = INSERT_CHUNK + 7;
    let rows: Vec<NewDocumentRows> = (0..n)
        .map(|i| {
            let id = format!("bulk{i}");
            let published = i % 3 != 0;
            let version = |number: i64, event_type: &str| VersionRecord {
                id: format!("{id}-v{number}"),
                document_id: id.clone(),
                organization_id: "o1".into(),
                version_number: number,
                event_type: event_type.into(),
                data: Json(json!({"title": i})),
                created_by: Some("u1".into()),
                created_by_name: None,
                created_at: 1,
            };
            let mut versions = vec![version(1, "draft")];
            let mut references = vec![(
                "draft".to_string(),
                ReferenceRecord {
                    path: "author".into(),
                    to_id: "bulk0".into(),
                    target: "document".into(),
                },
            )];
            if published {
                versions.push(version(2, "publish"));
                references.push(("published".to_string(), references[0].1.clone()));
            }
            NewDocumentRows {
                document: document(&id, "o1", "post", false),
                versions,
                event: published.then(|| EventRecord {
                    id: format!("{id}-e"),
                    organization_id: Some("o1".into()),
                    event_type: "document.published".into(),
                    payload: Json(json!({"documentId": id})),
                    created_at: 1,
                }),
                references,
            }
        })
        .collect();
    let mut tx = store.write_for("o1").await.unwrap();
    tx.insert_new_documents(&[]).await.unwrap();
    tx.insert_new_documents(&rows).await.unwrap();
    tx.commit().await.unwrap();

    let mut tx = store.write_for("o1").await.unwrap();
    let orgs = ["o1".to_string()];
    let last = format!("bulk{}", n - 1);
    let stored = tx.document(&orgs, &last).await.unwrap().unwrap();
    assert_eq!(stored.draft_data.0, json!({ "title": last }));
    let published = rows.iter().filter(|r| r.event.is_some()).count() as i64;
    assert_eq!(tx.outbox_backlog().await.unwrap(), published);
    assert_eq!(tx.count_versions(&last).await.unwrap(), 2);
    assert_eq!(tx.count_versions("bulk0").await.unwrap(), 1);
    assert_eq!(
        tx.references_from(&last, "published").await.unwrap()[0].to_id,
        "bulk0"
    );
    assert_eq!(
        tx.referencing_documents(&orgs, "bulk0")
            .await
            .unwrap()
            .len(),
        n
    );
    // A clash anywhere fails the statement, and the unit is abandoned.
    assert!(matches!(
        tx.insert_new_documents(&rows[n - 2..]).await,
        Err(StoreError::Unique(_))
    ));
    drop(tx);
    store.close().await;
}

crate::both_engines!(
    a_document_is_located_from_any_unit,
    roles_are_edited_and_deleted_unless_still_assigned,
    events_carry_their_outbox_row_atomically,
    jobs_are_claimed_leased_finished_and_deduplicated,
    concurrent_workers_complete_every_job_exactly_once,
    one_pending_schedule_per_document,
    indexed_fields_get_expression_indexes_that_queries_use,
    documents_are_scoped_revised_and_published,
    a_singleton_type_has_one_row_per_organization,
    versions_are_numbered_listed_and_pruned,
    new_documents_are_inserted_in_bulk,
    references_are_replaced_per_copy_and_found_backwards,
    users_round_trip_and_emails_are_unique,
    an_uncommitted_write_is_rolled_back,
    an_instance_flag_is_claimed_once,
    instance_values_are_put_replaced_and_deleted,
    rate_limit_counters_count_per_window_and_are_purged,
    concurrent_rate_limit_hits_each_count,
    organizations_members_and_roles,
    sessions_are_found_by_hash_extended_and_deleted,
    api_keys_are_scoped_to_their_organization,
    point_lookups_read_alike_in_read_and_write_units,
    foreign_keys_are_enforced,
    an_unsupported_url_is_a_configuration_error,
);

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
        tx.insert_new_document(&document(id, org, "post", false), &[version], None)
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
    for table in ["documents", "document_versions", "document_references"] {
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
        tx.commit().await.unwrap();
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
