//! Organizations, their members and roles: unique slugs, a member's role must exist, owner
//! roles reconciled, and a role is edited, and deleted only while no member holds it.

use serde_json::json;

use super::{open, org, role, user};
use crate::StoreError;
use crate::invitations::InvitationRecord;
use crate::organizations::{MemberRecord, OrganizationRecord};

async fn organizations_members_and_roles(url: String) {
    let store = open(&url).await;
    let mut tx = store.write_instance_wide().await.unwrap();
    tx.insert_user(&user("u1", "ada@example.com"))
        .await
        .unwrap();
    tx.insert_organization(&org("o1", "acme")).await.unwrap();
    let child = OrganizationRecord {
        parent_id: Some("o1".into()),
        locales: None,
        require_two_factor: false,
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
    let again = tx
        .reconcile_owner_roles(&["document.read".into(), "forms.export".into()], 3)
        .await
        .unwrap();
    assert_eq!(again, 0, "the same capabilities again write nothing");
    tx.commit().await.unwrap();

    let mut tx = store.read_instance_wide().await.unwrap();
    let o = tx.organization_by_id("o1").await.unwrap().unwrap();
    // An operator names an organization by id or by slug.
    for key in ["o1", "acme"] {
        let found = tx.organization_by_id_or_slug(key).await.unwrap();
        assert_eq!(found.map(|o| o.id).as_deref(), Some("o1"), "{key}");
    }
    assert!(
        tx.organization_by_id_or_slug("nosuch")
            .await
            .unwrap()
            .is_none()
    );
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

crate::both_engines!(
    roles_are_edited_and_deleted_unless_still_assigned,
    organizations_members_and_roles,
);
