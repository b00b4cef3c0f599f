//! The audit log: entries appended in their unit (a rollback leaves none), listed newest first
//! with each filter, counted, paged, and pruned by age in batches.

use super::{open, with_two_organizations};
use crate::audit::{AuditQuery, AuditRecord};

fn entry(id: &str, org: Option<&str>, action: &str, actor: Option<&str>, at: i64) -> AuditRecord {
    AuditRecord {
        id: id.into(),
        organization_id: org.map(str::to_string),
        action: action.into(),
        actor_type: if actor.is_some() { "user" } else { "system" }.into(),
        actor_id: actor.map(str::to_string),
        target_type: Some("document".into()),
        target_id: Some("d1".into()),
        ip_address: Some("203.0.113.7".into()),
        summary: "post".into(),
        created_at: at,
    }
}

fn ids(rows: &[AuditRecord]) -> Vec<&str> {
    rows.iter().map(|r| r.id.as_str()).collect()
}

fn query(organization: Option<&str>) -> AuditQuery {
    AuditQuery {
        organization: organization.map(str::to_string),
        limit: 100,
        ..AuditQuery::default()
    }
}

async fn audit_entries_are_appended_filtered_and_pruned(url: String) {
    let store = open(&url).await;
    with_two_organizations(&store).await;

    let mut tx = store.write_for("o1").await.unwrap();
    tx.append_audit(&[entry("a0", Some("o1"), "role.created", Some("u1"), 5)])
        .await
        .unwrap();
    drop(tx);

    let mut tx = store.write_instance_wide().await.unwrap();
    tx.append_audit(&[
        entry("a1", Some("o1"), "document.published", Some("u1"), 10),
        entry("a2", Some("o1"), "document.deleted", Some("u2"), 20),
        entry("a3", Some("o2"), "document.published", Some("u1"), 30),
        entry("a4", None, "instanceSettings.updated", Some("u1"), 40),
        entry("a5", Some("o1"), "document.published", None, 50),
    ])
    .await
    .unwrap();
    tx.commit().await.unwrap();

    let mut tx = store.read_instance_wide().await.unwrap();
    let (rows, total) = tx.audit_entries(&query(Some("o1"))).await.unwrap();
    assert_eq!(
        ids(&rows),
        ["a5", "a2", "a1"],
        "newest first; the rolled back one is gone"
    );
    assert_eq!(total, 3);
    assert_eq!(
        rows[2],
        entry("a1", Some("o1"), "document.published", Some("u1"), 10)
    );
    let (rows, total) = tx.audit_entries(&query(None)).await.unwrap();
    assert_eq!(ids(&rows), ["a5", "a4", "a3", "a2", "a1"]);
    assert_eq!(total, 5);
    let filtered = AuditQuery {
        action: Some("document.published".into()),
        actor_id: Some("u1".into()),
        ..query(None)
    };
    let (rows, total) = tx.audit_entries(&filtered).await.unwrap();
    assert_eq!((ids(&rows), total), (vec!["a3", "a1"], 2));
    let window = AuditQuery {
        from: Some(20),
        to: Some(40),
        ..query(None)
    };
    let (rows, _) = tx.audit_entries(&window).await.unwrap();
    assert_eq!(ids(&rows), ["a4", "a3", "a2"], "both bounds inclusive");
    let page = AuditQuery {
        limit: 2,
        offset: 2,
        ..query(None)
    };
    let (rows, total) = tx.audit_entries(&page).await.unwrap();
    assert_eq!((ids(&rows), total), (vec!["a3", "a2"], 5));
    drop(tx);

    let mut tx = store.write_instance_wide().await.unwrap();
    assert_eq!(tx.prune_audit(35, 2).await.unwrap(), 2, "a batch at a time");
    assert_eq!(tx.prune_audit(35, 2).await.unwrap(), 1);
    assert_eq!(tx.prune_audit(35, 2).await.unwrap(), 0);
    tx.commit().await.unwrap();
    let mut tx = store.read_instance_wide().await.unwrap();
    let (rows, _) = tx.audit_entries(&query(None)).await.unwrap();
    assert_eq!(ids(&rows), ["a5", "a4"]);
    drop(tx);
    store.close().await;
}

crate::both_engines!(audit_entries_are_appended_filtered_and_pruned,);
