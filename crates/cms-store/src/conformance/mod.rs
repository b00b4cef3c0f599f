//! The storage conformance suite: the same behaviour, asserted on both engines.
//!
//! One module per concept of the store, each declaring its tests for both engines
//! (`both_engines!`); the records most tests start from are built here.

mod archive;
mod assets;
mod audit;
mod batched_reads;
mod cancel;
mod credentials;
mod documents;
mod event_feed;
mod events;
mod indexed_fields;
mod instance;
mod job_leases;
mod jobs;
mod organizations;
mod people;
mod presence;
mod preview_tokens;
mod public_role;
mod rate_limits;
mod references;
mod row_security;
mod schedules;
mod search;
mod units;
mod versions;
mod webhooks;
mod write_units;

use serde_json::json;

use crate::Json;
use crate::documents::DocumentRecord;
use crate::events::EventRecord;
use crate::organizations::OrganizationRecord;
use crate::roles::RoleRecord;
use crate::users::UserRecord;

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
        locales: None,
        require_two_factor: false,
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
        locales: None,
        require_two_factor: false,
        ..org("o2", "other")
    };
    tx.insert_organization(&child).await.unwrap();
    tx.commit().await.unwrap();
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
