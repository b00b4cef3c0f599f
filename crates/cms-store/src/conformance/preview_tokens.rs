//! Preview tokens: found by their hash with the creator's current grant, deleted per document
//! within the organization only, and gone with their document.

use super::{document, open, role, with_two_organizations};
use crate::organizations::MemberRecord;
use crate::preview_tokens::PreviewTokenRecord;

fn token(id: &str, org: &str, document_id: &str) -> PreviewTokenRecord {
    PreviewTokenRecord {
        id: id.into(),
        organization_id: org.into(),
        document_id: document_id.into(),
        token_hash: format!("h-{id}"),
        created_by: "u1".into(),
        created_at: 1,
        expires_at: 100,
    }
}

async fn preview_tokens_resolve_with_their_creators_grant(url: String) {
    let store = open(&url).await;
    with_two_organizations(&store).await;
    let mut tx = store.write_instance_wide().await.unwrap();
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
    let mut tx = store.write_for("o1").await.unwrap();
    tx.insert_document(&document("d1", "o1", "post", false))
        .await
        .unwrap();
    tx.insert_document(&document("d2", "o1", "post", false))
        .await
        .unwrap();
    tx.insert_preview_token(&token("p1", "o1", "d1"))
        .await
        .unwrap();
    tx.insert_preview_token(&token("p2", "o1", "d1"))
        .await
        .unwrap();
    tx.insert_preview_token(&token("p3", "o1", "d2"))
        .await
        .unwrap();
    tx.commit().await.unwrap();

    // Resolved before any organization is known, as credentials are.
    let mut tx = store.read_instance_wide().await.unwrap();
    let grant = tx.preview_grant("h-p1").await.unwrap().unwrap();
    assert_eq!(
        (
            grant.token_id.as_str(),
            grant.organization_id.as_str(),
            grant.document_id.as_str(),
            grant.expires_at,
            grant.user.id.as_str(),
            grant.member_role.as_deref(),
        ),
        ("p1", "o1", "d1", 100, "u1", Some("editor"))
    );
    assert_eq!(
        grant.role_capabilities.map(|c| c.0),
        Some(vec![
            "document.read".to_string(),
            "document.update".to_string()
        ])
    );
    assert!(tx.preview_grant("nope").await.unwrap().is_none());
    drop(tx);

    // Only the document's organization names its tokens.
    let mut tx = store.write_for("o1").await.unwrap();
    assert_eq!(tx.delete_preview_tokens("o2", "d1").await.unwrap(), 0);
    assert_eq!(tx.delete_preview_tokens("o1", "d1").await.unwrap(), 2);
    tx.commit().await.unwrap();
    let mut tx = store.read_instance_wide().await.unwrap();
    assert!(tx.preview_grant("h-p1").await.unwrap().is_none());
    assert!(tx.preview_grant("h-p3").await.unwrap().is_some());
    drop(tx);

    // Deleting the document deletes its tokens.
    let mut tx = store.write_for("o1").await.unwrap();
    assert!(tx.delete_document("d2").await.unwrap());
    tx.commit().await.unwrap();
    let mut tx = store.read_instance_wide().await.unwrap();
    assert!(tx.preview_grant("h-p3").await.unwrap().is_none());
    drop(tx);
    store.close().await;
}

/// On PostgreSQL a unit acting for another organization neither sees nor writes the tokens.
async fn preview_tokens_are_walled_per_organization(url: String) {
    let store = open(&url).await;
    with_two_organizations(&store).await;
    let mut tx = store.write_instance_wide().await.unwrap();
    tx.insert_organization(&super::org("o3", "stranger"))
        .await
        .unwrap();
    tx.commit().await.unwrap();
    let mut tx = store.write_for("o1").await.unwrap();
    tx.insert_document(&document("d1", "o1", "post", false))
        .await
        .unwrap();
    tx.insert_preview_token(&token("p1", "o1", "d1"))
        .await
        .unwrap();
    tx.commit().await.unwrap();
    let mut tx = store.write_for("o3").await.unwrap();
    assert!(tx.preview_grant("h-p1").await.unwrap().is_none());
    assert_eq!(tx.delete_preview_tokens("o1", "d1").await.unwrap(), 0);
    assert!(
        tx.insert_preview_token(&token("p9", "o1", "d1"))
            .await
            .is_err(),
        "a token of another organization cannot be inserted"
    );
    drop(tx);
    let mut tx = store.read_instance_wide().await.unwrap();
    assert!(tx.preview_grant("h-p1").await.unwrap().is_some());
    drop(tx);
    store.close().await;
}

crate::both_engines!(preview_tokens_resolve_with_their_creators_grant);

mod preview_tokens_are_walled_per_organization {
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn postgres() {
        crate::testing::with_database(
            crate::Dialect::Postgres,
            super::preview_tokens_are_walled_per_organization,
        )
        .await;
    }
}
