//! Presence: a touch upserts one row per person and document, a read lists who was seen
//! since a moment (with their names), leaving deletes the row, stale rows go with the next
//! touch in the organization, and rows go with their document.

use super::{document, open, user, with_two_organizations};
use crate::presence::{PresentRecord, STALE_AFTER_MILLIS};
use crate::users::UserRecord;

/// u1 (Ada) and u2 (Grace), documents d1 and d2 of o1.
async fn with_two_people_on_two_documents(store: &std::sync::Arc<dyn crate::Store>) {
    with_two_organizations(store).await;
    let mut tx = store.write_instance_wide().await.unwrap();
    tx.insert_user(&UserRecord {
        name: "Grace".into(),
        image: Some("https://example.com/grace.png".into()),
        ..user("u2", "grace@example.com")
    })
    .await
    .unwrap();
    tx.commit().await.unwrap();
    let mut tx = store.write_for("o1").await.unwrap();
    for id in ["d1", "d2"] {
        tx.insert_document(&document(id, "o1", "post", false))
            .await
            .unwrap();
    }
    tx.commit().await.unwrap();
}

async fn seen(
    store: &std::sync::Arc<dyn crate::Store>,
    document_id: &str,
    since: i64,
) -> Vec<(String, i64)> {
    let mut tx = store.read_for("o1").await.unwrap();
    let found = tx.present_on("o1", document_id, since).await.unwrap();
    found.into_iter().map(|p| (p.user_id, p.seen_at)).collect()
}

async fn presence_is_touched_listed_left_and_swept(url: String) {
    let store = open(&url).await;
    with_two_people_on_two_documents(&store).await;
    let mut tx = store.write_for("o1").await.unwrap();
    tx.touch_presence("o1", "d1", "u2", 1_000).await.unwrap();
    tx.touch_presence("o1", "d1", "u1", 2_000).await.unwrap();
    tx.commit().await.unwrap();

    // By name (Ada before Grace), with what a reader shows of each person.
    let mut tx = store.read_for("o1").await.unwrap();
    assert_eq!(
        tx.present_on("o1", "d1", 0).await.unwrap(),
        vec![
            PresentRecord {
                user_id: "u1".into(),
                name: "Ada".into(),
                email: "ada@example.com".into(),
                image: None,
                seen_at: 2_000,
            },
            PresentRecord {
                user_id: "u2".into(),
                name: "Grace".into(),
                email: "grace@example.com".into(),
                image: Some("https://example.com/grace.png".into()),
                seen_at: 1_000,
            },
        ]
    );
    // Only the organization named finds them; only rows seen since the moment asked.
    assert!(tx.present_on("o2", "d1", 0).await.unwrap().is_empty());
    drop(tx);
    assert_eq!(seen(&store, "d1", 1_500).await, vec![("u1".into(), 2_000)]);
    assert!(seen(&store, "d2", 0).await.is_empty());

    // A second touch moves the one row forward.
    let mut tx = store.write_for("o1").await.unwrap();
    tx.touch_presence("o1", "d1", "u2", 3_000).await.unwrap();
    tx.commit().await.unwrap();
    assert_eq!(
        seen(&store, "d1", 0).await,
        vec![("u1".into(), 2_000), ("u2".into(), 3_000)]
    );

    // Leaving deletes the person's row on that document only.
    let mut tx = store.write_for("o1").await.unwrap();
    assert!(!tx.leave_presence("o2", "d1", "u1").await.unwrap());
    assert!(tx.leave_presence("o1", "d1", "u1").await.unwrap());
    assert!(!tx.leave_presence("o1", "d1", "u1").await.unwrap());
    tx.commit().await.unwrap();
    assert_eq!(seen(&store, "d1", 0).await, vec![("u2".into(), 3_000)]);

    // A touch anywhere in the organization sweeps rows older than the stale age.
    let later = 3_000 + STALE_AFTER_MILLIS + 1;
    let mut tx = store.write_for("o1").await.unwrap();
    tx.touch_presence("o1", "d2", "u1", later).await.unwrap();
    tx.commit().await.unwrap();
    assert!(seen(&store, "d1", 0).await.is_empty(), "swept");
    assert_eq!(seen(&store, "d2", 0).await, vec![("u1".into(), later)]);

    // Rows go with their document.
    let mut tx = store.write_for("o1").await.unwrap();
    assert!(tx.delete_document("d2").await.unwrap());
    tx.commit().await.unwrap();
    assert!(seen(&store, "d2", 0).await.is_empty());
    store.close().await;
}

/// On PostgreSQL a unit acting for another organization neither sees nor writes presence.
async fn presence_is_walled_per_organization(url: String) {
    let store = open(&url).await;
    with_two_people_on_two_documents(&store).await;
    let mut tx = store.write_instance_wide().await.unwrap();
    tx.insert_organization(&super::org("o3", "stranger"))
        .await
        .unwrap();
    tx.commit().await.unwrap();
    let mut tx = store.write_for("o1").await.unwrap();
    tx.touch_presence("o1", "d1", "u1", 1_000).await.unwrap();
    tx.commit().await.unwrap();
    let mut tx = store.write_for("o3").await.unwrap();
    assert!(tx.present_on("o1", "d1", 0).await.unwrap().is_empty());
    assert!(!tx.leave_presence("o1", "d1", "u1").await.unwrap());
    assert!(
        tx.touch_presence("o1", "d1", "u2", 2_000).await.is_err(),
        "presence in another organization cannot be written"
    );
    drop(tx);
    assert_eq!(seen(&store, "d1", 0).await, vec![("u1".into(), 1_000)]);
    store.close().await;
}

crate::both_engines!(presence_is_touched_listed_left_and_swept);

mod presence_is_walled_per_organization {
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn postgres() {
        crate::testing::with_database(
            crate::Dialect::Postgres,
            super::presence_is_walled_per_organization,
        )
        .await;
    }
}
