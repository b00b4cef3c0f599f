//! Write units whose statements take both paths of SQLite's writer (the document statements on
//! the calling thread, the rest through sqlx; `sqlite/writer.rs`), asserted on both engines:
//! they see each other's writes, a unit dropped anywhere leaves none of them, concurrent units
//! never interleave, and a failed statement leaves the unit to be abandoned.

use std::future::Future;
use std::pin::pin;
use std::sync::Arc;
use std::task::Poll;

use serde_json::json;

use super::{document, open, user, with_two_organizations};
use crate::documents::ListSpec;
use crate::filter_sql::DataColumn;
use crate::references::ReferenceRecord;
use crate::versions::VersionRecord;
use crate::{Json, Store, StoreError};

fn version(document_id: &str, id: &str) -> VersionRecord {
    VersionRecord {
        id: id.into(),
        document_id: document_id.into(),
        organization_id: "o1".into(),
        version_number: 0,
        event_type: "draft".into(),
        data: Json(json!({"title": id})),
        created_by: Some("u1".into()),
        created_by_name: None,
        created_at: 2,
    }
}

fn reference(to_id: &str) -> ReferenceRecord {
    ReferenceRecord {
        path: "author".into(),
        to_id: to_id.into(),
        target: "document".into(),
    }
}

/// One unit's work, alternating the statements SQLite runs directly and through sqlx, so that
/// every hand-over of the handle is a wait at which it can be dropped: a new document (direct),
/// a user (sqlx), a version and references (direct), the user read back (sqlx), the document
/// published (direct).
async fn mixed_writes(tx: &mut dyn crate::Tx, name: &str) -> crate::Result<()> {
    tx.insert_new_document(&document(name, "o1", "post", false), &[], &[])
        .await?;
    tx.insert_user(&user(name, &format!("{name}@example.com")))
        .await?;
    tx.append_version(&version(name, &format!("{name}-v")))
        .await?;
    tx.replace_references(name, "o1", "draft", &[reference("target")])
        .await?;
    tx.user_by_id(name).await?;
    tx.set_published(name, &json!({"title": name}), "hash", None, 3)
        .await?;
    Ok(())
}

/// Whether the rows of `mixed_writes(name)` are there: all of them or none (`None` for a mix).
async fn written(store: &Arc<dyn Store>, name: &str) -> Option<bool> {
    let mut tx = store.read_for("o1").await.unwrap();
    let found = [
        tx.document(&["o1".to_string()], name)
            .await
            .unwrap()
            .is_some(),
        tx.user_by_id(name).await.unwrap().is_some(),
        tx.count_versions(name).await.unwrap() == 1,
        tx.references_from(name, "draft").await.unwrap().len() == 1,
    ];
    match found {
        [true, true, true, true] => Some(true),
        [false, false, false, false] => Some(false),
        _ => None,
    }
}

/// Drives `unit` until it has waited `waits` times, then drops it there. `true` when it finished
/// first.
async fn run_until_wait<F: Future<Output = ()>>(unit: F, waits: usize) -> bool {
    let mut unit = pin!(unit);
    let mut waited = 0;
    std::future::poll_fn(|cx| match unit.as_mut().poll(cx) {
        Poll::Ready(()) => Poll::Ready(true),
        Poll::Pending => {
            waited += 1;
            match waited >= waits {
                true => Poll::Ready(false),
                false => Poll::Pending,
            }
        }
    })
    .await
}

async fn direct_and_sqlx_statements_of_a_unit_see_each_other(url: String) {
    let store = open(&url).await;
    with_two_organizations(&store).await;
    let mut tx = store.write_for("o1").await.unwrap();
    mixed_writes(&mut *tx, "d1").await.unwrap();
    // Through sqlx on SQLite: the document the unit wrote directly.
    let o1 = vec!["o1".to_string()];
    let filter = cms_core::filter::Filter::All;
    let spec = ListSpec {
        organizations: &o1,
        doc_type: "post",
        column: DataColumn::Published,
        published: Some(crate::documents::Publication::Published),
        filter: &filter,
        sort: &[],
        limit: 10,
        offset: 0,
    };
    let (listed, total) = tx.list_documents(&spec).await.unwrap();
    assert_eq!(total, 1);
    assert_eq!(listed[0].published_hash.as_deref(), Some("hash"));
    assert_eq!(
        tx.references_from("d1", "draft").await.unwrap(),
        vec![reference("target")]
    );
    assert_eq!(tx.count_versions("d1").await.unwrap(), 1);
    // Directly on SQLite: the row sqlx just read, as it stands.
    let stored = tx.document(&o1, "d1").await.unwrap().unwrap();
    assert_eq!(stored.published_data.unwrap().0, json!({"title": "d1"}));
    assert_eq!(stored.published_at, Some(3));
    tx.commit().await.unwrap();
    assert_eq!(written(&store, "d1").await, Some(true));
    store.close().await;
}

async fn a_unit_dropped_at_any_wait_leaves_none_of_its_writes(url: String) {
    let store = open(&url).await;
    with_two_organizations(&store).await;
    const MOST_WAITS: usize = 16;
    let mut finished = 0;
    for waits in 1..=MOST_WAITS {
        let name = format!("dropped-{waits}");
        let unit = async {
            let mut tx = store.write_for("o1").await.unwrap();
            mixed_writes(&mut *tx, &name).await.unwrap();
            // Never committed: dropped here at the latest.
        };
        if run_until_wait(unit, waits).await {
            finished += 1;
        }
        // The next unit starts on a clean writer and commits only its own rows.
        let next = format!("next-{waits}");
        let mut tx = store.write_for("o1").await.unwrap();
        mixed_writes(&mut *tx, &next).await.unwrap();
        tx.commit().await.unwrap();
        assert_eq!(written(&store, &name).await, Some(false), "{name}");
        assert_eq!(written(&store, &next).await, Some(true), "{next}");
    }
    // The first units were dropped before their end and the last ones ran to it (and were
    // dropped uncommitted there): every wait of a unit was a place to drop it.
    assert!(
        finished > 0 && finished < MOST_WAITS,
        "finished {finished} of {MOST_WAITS}"
    );
    store.close().await;
}

async fn concurrent_write_units_never_interleave(url: String) {
    const TASKS: usize = 6;
    const ROUNDS: usize = 8;
    let store = open(&url).await;
    with_two_organizations(&store).await;
    let mut tx = store.write_for("o1").await.unwrap();
    tx.insert_new_document(&document("counter", "o1", "post", false), &[], &[])
        .await
        .unwrap();
    tx.commit().await.unwrap();
    let tasks: Vec<_> = (0..TASKS)
        .map(|task| {
            let store = store.clone();
            tokio::spawn(async move {
                for round in 0..ROUNDS {
                    let mut tx = store.write_for("o1").await.unwrap();
                    // PostgreSQL's units run side by side and need the key; SQLite's run one at a
                    // time on the writer, where this changes nothing.
                    tx.hold_until_end("counter").await.unwrap();
                    let current = tx
                        .document(&["o1".to_string()], "counter")
                        .await
                        .unwrap()
                        .unwrap();
                    // A unit in between would have moved the revision on: the guard refuses.
                    let saved = tx
                        .save_draft(
                            "counter",
                            &json!({"by": task, "round": round}),
                            current.revision,
                            None,
                            4,
                        )
                        .await
                        .unwrap();
                    assert!(saved, "task {task} round {round}: another unit interleaved");
                    tx.append_version(&version("counter", &format!("c-{task}-{round}")))
                        .await
                        .unwrap();
                    tx.commit().await.unwrap();
                }
            })
        })
        .collect();
    for task in tasks {
        task.await.unwrap();
    }
    let mut tx = store.read_for("o1").await.unwrap();
    let counter = tx
        .document(&["o1".to_string()], "counter")
        .await
        .unwrap()
        .unwrap();
    assert_eq!(counter.revision, 1 + (TASKS * ROUNDS) as i64);
    let versions = tx.versions("counter", 100, 0).await.unwrap();
    let mut numbers: Vec<i64> = versions.iter().map(|v| v.version_number).collect();
    numbers.sort_unstable();
    assert_eq!(numbers, (1..=(TASKS * ROUNDS) as i64).collect::<Vec<_>>());
    drop(tx);
    store.close().await;
}

async fn a_failed_statement_leaves_the_unit_to_be_abandoned(url: String) {
    let store = open(&url).await;
    with_two_organizations(&store).await;
    let mut tx = store.write_for("o1").await.unwrap();
    tx.insert_new_document(&document("d1", "o1", "post", false), &[], &[])
        .await
        .unwrap();
    let again = tx
        .insert_new_document(&document("d1", "o1", "post", false), &[], &[])
        .await;
    assert!(
        matches!(again, Err(StoreError::Unique(_))),
        "a second d1: {again:?}"
    );
    // The unit is abandoned, as the `Store::write` contract asks after any error.
    drop(tx);
    let mut tx = store.read_for("o1").await.unwrap();
    assert!(
        tx.document(&["o1".to_string()], "d1")
            .await
            .unwrap()
            .is_none()
    );
    drop(tx);

    // A document of an organization that does not exist: the foreign key refuses it.
    let mut tx = store.write_for("o9").await.unwrap();
    let orphan = tx
        .insert_new_document(&document("d2", "o9", "post", false), &[], &[])
        .await;
    assert!(
        matches!(orphan, Err(StoreError::ForeignKey(_))),
        "a document of no organization: {orphan:?}"
    );
    drop(tx);

    // The writer is whole again: the next unit writes and commits.
    let mut tx = store.write_for("o1").await.unwrap();
    tx.insert_new_document(&document("d1", "o1", "post", false), &[], &[])
        .await
        .unwrap();
    tx.commit().await.unwrap();
    let mut tx = store.read_for("o1").await.unwrap();
    assert!(
        tx.document(&["o1".to_string()], "d1")
            .await
            .unwrap()
            .is_some()
    );
    drop(tx);
    store.close().await;
}

crate::both_engines!(
    direct_and_sqlx_statements_of_a_unit_see_each_other,
    a_unit_dropped_at_any_wait_leaves_none_of_its_writes,
    concurrent_write_units_never_interleave,
    a_failed_statement_leaves_the_unit_to_be_abandoned,
);
