//! Schedules: one pending schedule per document, settled once.

use super::{document, open, with_two_organizations};
use crate::StoreError;
use crate::schedules::ScheduleRecord;

async fn one_pending_schedule_per_document(url: String) {
    let store = open(&url).await;
    with_two_organizations(&store).await;
    let schedule = |id: &str| ScheduleRecord {
        id: id.into(),
        document_id: "d1".into(),
        organization_id: "o1".into(),
        action: "publish".into(),
        run_at: 100,
        status: "pending".into(),
        job_id: format!("job-{id}"),
        created_by: Some("u1".into()),
        created_at: 1,
        updated_at: 1,
    };
    let mut tx = store.write_for("o1").await.unwrap();
    tx.insert_document(&document("d1", "o1", "post", false))
        .await
        .unwrap();
    tx.insert_schedule(&schedule("s1")).await.unwrap();
    tx.commit().await.unwrap();
    let mut tx = store.write_instance_wide().await.unwrap();
    assert!(matches!(
        tx.insert_schedule(&schedule("s2")).await,
        Err(StoreError::Unique(_))
    ));
    drop(tx);
    let mut tx = store.write_instance_wide().await.unwrap();
    assert_eq!(tx.pending_schedule("d1").await.unwrap().unwrap().id, "s1");
    assert!(tx.settle_schedule("s1", "cancelled", 2).await.unwrap());
    assert!(!tx.settle_schedule("s1", "completed", 3).await.unwrap());
    assert!(tx.pending_schedule("d1").await.unwrap().is_none());
    tx.insert_schedule(&schedule("s2")).await.unwrap();
    assert_eq!(
        tx.schedule("s1").await.unwrap().unwrap().status,
        "cancelled"
    );
    tx.commit().await.unwrap();
    store.close().await;
}

crate::both_engines!(one_pending_schedule_per_document,);
