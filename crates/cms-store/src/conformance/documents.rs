//! Documents: scoped to their organization, revised under optimistic concurrency, published
//! and unpublished; one row per organization for a singleton type; located from any unit by a
//! bare id; many inserted in bulk in one unit.

use serde_json::json;

use super::{document, open, org, with_two_organizations};
use crate::events::EventRecord;
use crate::references::ReferenceRecord;
use crate::versions::VersionRecord;
use crate::{Json, StoreError};

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

/// Many new documents in a few statements: every row of each (document, versions, events with
/// their outbox rows, references per copy) lands, across statement chunks, in one transaction.
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
                events: ["document.created", "document.published"]
                    .into_iter()
                    .take(if published { 2 } else { 1 })
                    .map(|event_type| EventRecord {
                        id: format!("{id}-{event_type}"),
                        organization_id: Some("o1".into()),
                        event_type: event_type.into(),
                        payload: Json(json!({"documentId": id})),
                        created_at: 1,
                    })
                    .collect(),
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
    let events = rows.iter().map(|r| r.events.len()).sum::<usize>() as i64;
    assert_eq!(events, (n + n - n.div_ceil(3)) as i64);
    assert_eq!(tx.outbox_backlog().await.unwrap(), events);
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
    documents_are_scoped_revised_and_published,
    a_singleton_type_has_one_row_per_organization,
    new_documents_are_inserted_in_bulk,
);
