//! Versions: numbered on append (never reused), listed newest first, pruned, and deleted with
//! their document.

use serde_json::json;

use super::{document, open, with_two_organizations};
use crate::versions::VersionRecord;
use crate::{Json, StoreError};

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
    // A new document's rows in one round trip: the first versions carry their numbers, each
    // event its outbox row; later versions are numbered on append, after them.
    let event = |id: &str, event_type: &str| crate::events::EventRecord {
        id: id.into(),
        organization_id: Some("o1".into()),
        event_type: event_type.into(),
        payload: Json(json!({"documentId": "d1"})),
        created_at: 1,
    };
    let born_published = [
        event("e1", "document.created"),
        event("e2", "document.published"),
    ];
    tx.insert_new_document(
        &document("d1", "o1", "post", false),
        &[version(1, 1), version(2, 2)],
        &born_published,
    )
    .await
    .unwrap();
    tx.insert_new_document(&document("d2", "o1", "post", false), &[], &[])
        .await
        .unwrap();
    assert!(matches!(
        tx.insert_new_document(&document("d2", "o1", "post", false), &[], &[])
            .await,
        Err(StoreError::Unique(_))
    ));
    drop(tx);
    let mut tx = store.write_for("o1").await.unwrap();
    tx.insert_new_document(
        &document("d1", "o1", "post", false),
        &[version(1, 1), version(2, 2)],
        &born_published,
    )
    .await
    .unwrap();
    tx.insert_new_document(&document("d2", "o1", "post", false), &[], &[])
        .await
        .unwrap();
    assert_eq!(tx.outbox_backlog().await.unwrap(), 2);
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

crate::both_engines!(versions_are_numbered_listed_and_pruned,);
