//! The storage conformance suite for jobs under crashes and races: a job abandoned at its last
//! attempt is dead-lettered rather than reclaimed, and a pending schedule is held by one unit
//! at a time, asserted on both engines.

use serde_json::json;

use super::{document, open, with_two_organizations};
use crate::jobs::JobRecord;
use crate::schedules::ScheduleRecord;

fn job(id: &str, max_attempts: i64, run_at: i64) -> JobRecord {
    JobRecord::pending(id.into(), "test.job", json!({}), max_attempts, run_at)
}

/// A job whose worker died during its last attempt is neither claimed again nor left running:
/// it is dead-lettered, while jobs with attempts left are reclaimed and live leases kept.
async fn a_job_abandoned_at_its_last_attempt_is_dead_lettered(url: String) {
    let store = open(&url).await;
    let mut tx = store.write_instance_wide().await.unwrap();
    for j in [job("last", 2, 1), job("spare", 5, 2), job("live", 1, 3)] {
        tx.enqueue_job(&j).await.unwrap();
    }
    tx.commit().await.unwrap();

    let mut tx = store.write_instance_wide().await.unwrap();
    // Two crashed claims of `last` and `spare` (each counted), one live claim of `live`.
    assert_eq!(tx.claim_jobs(10, 20, 2).await.unwrap().len(), 2);
    assert_eq!(tx.claim_jobs(30, 40, 2).await.unwrap().len(), 2);
    assert_eq!(tx.claim_jobs(30, 1000, 1).await.unwrap()[0].id, "live");
    let reclaimed = tx.claim_jobs(50, 60, 10).await.unwrap();
    let ids: Vec<(&str, i64)> = reclaimed
        .iter()
        .map(|j| (j.id.as_str(), j.attempts))
        .collect();
    assert_eq!(ids, [("spare", 3)], "`last` has no attempt left to claim");

    let dead = tx
        .dead_letter_abandoned(70, "the worker stopped")
        .await
        .unwrap();
    let ids: Vec<&str> = dead.iter().map(|j| j.id.as_str()).collect();
    assert_eq!(
        ids,
        ["last"],
        "`spare`'s lease is live again, `live`'s never ran out"
    );
    let last = tx.job("last").await.unwrap().unwrap();
    assert_eq!(
        (
            last.status.as_str(),
            last.attempts,
            last.last_error.as_deref(),
            last.locked_until
        ),
        ("dead_letter", 2, Some("the worker stopped"), None)
    );
    assert!(
        tx.dead_letter_abandoned(70, "again")
            .await
            .unwrap()
            .is_empty(),
        "once"
    );
    tx.commit().await.unwrap();
    store.close().await;
}

/// Two units carrying out one schedule at once: the second waits for the first and then finds
/// it settled, so the schedule is carried out once.
async fn a_pending_schedule_is_held_by_one_unit_at_a_time(url: String) {
    let store = open(&url).await;
    with_two_organizations(&store).await;
    let mut tx = store.write_for("o1").await.unwrap();
    tx.insert_document(&document("d1", "o1", "post", false))
        .await
        .unwrap();
    tx.insert_schedule(&ScheduleRecord {
        id: "s1".into(),
        document_id: "d1".into(),
        organization_id: "o1".into(),
        action: "publish".into(),
        run_at: 100,
        status: "pending".into(),
        job_id: "job-s1".into(),
        created_by: Some("u1".into()),
        created_at: 1,
        updated_at: 1,
    })
    .await
    .unwrap();
    tx.commit().await.unwrap();

    let other = crate::connect(&url).await.unwrap();
    let mut first = store.write_instance_wide().await.unwrap();
    assert!(first.lock_pending_schedule("s1").await.unwrap().is_some());
    let second = tokio::spawn(async move {
        let mut tx = other.write_instance_wide().await.unwrap();
        let found = tx.lock_pending_schedule("s1").await.unwrap();
        tx.commit().await.unwrap();
        other.close().await;
        found
    });
    // Give the second unit time to queue behind the first (it cannot pass it either way).
    tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    assert!(first.settle_schedule("s1", "completed", 2).await.unwrap());
    first.commit().await.unwrap();
    assert!(
        second.await.unwrap().is_none(),
        "the second unit finds the schedule settled"
    );
    // A locking read takes a write unit: read units are read-only on PostgreSQL.
    let mut tx = store.write_instance_wide().await.unwrap();
    assert!(tx.lock_pending_schedule("s1").await.unwrap().is_none());
    drop(tx);
    store.close().await;
}

crate::both_engines!(
    a_job_abandoned_at_its_last_attempt_is_dead_lettered,
    a_pending_schedule_is_held_by_one_unit_at_a_time,
);
