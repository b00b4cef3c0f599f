//! References: replaced per copy (draft or published), found backwards from their target, and
//! deleted with the referencing document.

use super::{document, open, with_two_organizations};
use crate::references::ReferenceRecord;

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

crate::both_engines!(references_are_replaced_per_copy_and_found_backwards,);
