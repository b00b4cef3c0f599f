//! The storage conformance suite for the batched reads of references (issue 21, point 6):
//! lookups by many ids are chunked under both engines' bind limits, existence checks read ids
//! only, referrers are counted per organization, and a list page can be read without its
//! count, asserted on both engines.

use std::sync::Arc;

use serde_json::json;

use crate::documents::{DocumentRecord, ListSpec};
use crate::filter_sql::DataColumn;
use crate::organizations::OrganizationRecord;
use crate::references::{ID_CHUNK, ReferenceRecord, TargetKind};
use crate::{Json, Store};

async fn open(url: &str) -> Arc<dyn Store> {
    let store = crate::connect(url).await.expect("connect");
    store.migrate().await.expect("migrate");
    store
}

fn org(id: &str) -> OrganizationRecord {
    OrganizationRecord {
        id: id.into(),
        name: id.into(),
        slug: id.into(),
        metadata: Json(json!({})),
        parent_id: None,
        locales: None,
        require_two_factor: false,
        created_at: 1,
        updated_at: 1,
    }
}

fn document(id: &str, org: &str) -> DocumentRecord {
    DocumentRecord {
        id: id.into(),
        organization_id: org.into(),
        doc_type: "post".into(),
        singleton: false,
        draft_data: Json(json!({"title": id})),
        published_data: None,
        published_hash: None,
        revision: 1,
        created_by: None,
        updated_by: None,
        created_at: 1,
        updated_at: 1,
        published_at: None,
    }
}

fn reference(to: &str) -> ReferenceRecord {
    ReferenceRecord {
        path: "author".into(),
        to_id: to.into(),
        target: "document".into(),
    }
}

/// More ids than one statement binds, half of them missing: every chunk is read.
async fn lookups_by_many_ids_are_chunked(url: String) {
    let store = open(&url).await;
    let mut tx = store.write().await.unwrap();
    tx.insert_organization(&org("o1")).await.unwrap();
    tx.insert_organization(&org("o3")).await.unwrap();
    tx.commit().await.unwrap();
    let stored = ID_CHUNK + ID_CHUNK / 2;
    let mut tx = store.write_for("o1").await.unwrap();
    for i in 0..stored {
        tx.insert_document(&document(&format!("d{i:05}"), "o1"))
            .await
            .unwrap();
    }
    tx.commit().await.unwrap();
    let ids: Vec<String> = (0..2 * stored).map(|i| format!("d{i:05}")).collect();
    let o1 = vec!["o1".to_string()];
    let mut tx = store.read_for("o1").await.unwrap();
    assert_eq!(tx.documents_by_ids(&o1, &ids).await.unwrap().len(), stored);
    let mut found = tx
        .existing_targets(&o1, TargetKind::Document, &ids)
        .await
        .unwrap();
    found.sort();
    assert_eq!(found, ids[..stored].to_vec());
    assert!(
        tx.existing_targets(&o1, TargetKind::Asset, &ids)
            .await
            .unwrap()
            .is_empty(),
        "documents are not assets"
    );
    let o3 = vec!["o3".to_string()];
    drop(tx);
    let mut tx = store.read_for("o3").await.unwrap();
    assert!(
        tx.existing_targets(&o3, TargetKind::Document, &ids)
            .await
            .unwrap()
            .is_empty(),
        "another organization's documents do not exist for o3"
    );
    drop(tx);
    store.close().await;
}

/// Referrers: other documents of the organization, once each, counted and listed.
async fn referrers_are_counted_per_organization(url: String) {
    let store = open(&url).await;
    let mut tx = store.write().await.unwrap();
    tx.insert_organization(&org("o1")).await.unwrap();
    tx.insert_organization(&org("o3")).await.unwrap();
    tx.commit().await.unwrap();
    let mut tx = store.write_for("o1").await.unwrap();
    for id in ["target", "a", "b", "c"] {
        tx.insert_document(&document(id, "o1")).await.unwrap();
    }
    for from in ["a", "b", "c", "target"] {
        tx.replace_references(from, "o1", "draft", &[reference("target")])
            .await
            .unwrap();
    }
    // Both copies of `a` reference it: still one referrer.
    tx.replace_references("a", "o1", "published", &[reference("target")])
        .await
        .unwrap();
    tx.commit().await.unwrap();
    let mut tx = store.write_for("o3").await.unwrap();
    tx.insert_document(&document("x", "o3")).await.unwrap();
    tx.replace_references("x", "o3", "draft", &[reference("target")])
        .await
        .unwrap();
    tx.commit().await.unwrap();

    let mut tx = store.read_for("o1").await.unwrap();
    let (total, ids) = tx.referrers("o1", "target", 2).await.unwrap();
    assert_eq!(
        (total, ids),
        (3, vec!["a".to_string(), "b".to_string()]),
        "itself and o3's document do not count"
    );
    assert_eq!(tx.referrers("o1", "a", 10).await.unwrap(), (0, Vec::new()));
    drop(tx);
    store.close().await;
}

/// A page without its count is the page `list_documents` returns.
async fn a_list_page_reads_without_its_count(url: String) {
    let store = open(&url).await;
    let mut tx = store.write().await.unwrap();
    tx.insert_organization(&org("o1")).await.unwrap();
    tx.commit().await.unwrap();
    let mut tx = store.write_for("o1").await.unwrap();
    for i in 0..5 {
        tx.insert_document(&document(&format!("d{i}"), "o1"))
            .await
            .unwrap();
    }
    tx.commit().await.unwrap();
    let o1 = vec!["o1".to_string()];
    let filter = cms_core::filter::Filter::All;
    let spec = ListSpec {
        organizations: &o1,
        doc_type: "post",
        column: DataColumn::Draft,
        published: None,
        filter: &filter,
        sort: &[],
        limit: 2,
        offset: 1,
    };
    let mut tx = store.read_for("o1").await.unwrap();
    let (counted, total) = tx.list_documents(&spec).await.unwrap();
    let page = tx.list_documents_page(&spec).await.unwrap();
    assert_eq!(total, 5);
    let ids = |rows: &[DocumentRecord]| rows.iter().map(|d| d.id.clone()).collect::<Vec<_>>();
    assert_eq!(ids(&page), ids(&counted));
    assert_eq!(page.len(), 2);
    drop(tx);
    store.close().await;
}

crate::both_engines!(
    lookups_by_many_ids_are_chunked,
    referrers_are_counted_per_organization,
    a_list_page_reads_without_its_count,
);
