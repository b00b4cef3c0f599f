//! Jobs: claimed under a lease, reclaimed when it expires, finished only by the claim that
//! holds them, deduplicated by idempotency key, requeued and cancelled from the states that
//! allow it; two workers on two pools complete every job exactly once.

use serde_json::json;

use super::open;
use crate::jobs::{JobOutcome, JobQuery, JobRecord};
use cms_core::JobStatus;

fn job(id: &str, run_at: i64, key: Option<&str>) -> JobRecord {
    JobRecord {
        organization_id: Some("o1".into()),
        idempotency_key: key.map(str::to_string),
        ..JobRecord::pending(id.into(), "test.job", json!({"n": id}), 3, run_at)
    }
}

async fn jobs_are_claimed_leased_finished_and_deduplicated(url: String) {
    let store = open(&url).await;
    let mut tx = store.write_instance_wide().await.unwrap();
    assert!(tx.enqueue_job(&job("j1", 100, Some("k1"))).await.unwrap());
    assert!(
        !tx.enqueue_job(&job("j1b", 100, Some("k1"))).await.unwrap(),
        "a duplicate key is absorbed"
    );
    assert!(tx.enqueue_job(&job("j2", 100, None)).await.unwrap());
    // A batch: the duplicate key (of an existing job, and within the batch) is absorbed.
    assert_eq!(
        tx.enqueue_jobs(&[
            job("b1", 900, Some("k1")),
            job("b2", 900, Some("kb")),
            job("b3", 900, Some("kb")),
        ])
        .await
        .unwrap(),
        1
    );
    assert_eq!(tx.enqueue_jobs(&[]).await.unwrap(), 0);
    assert!(tx.enqueue_job(&job("j3", 500, None)).await.unwrap());
    tx.commit().await.unwrap();

    let mut tx = store.write_instance_wide().await.unwrap();
    let claimed = tx.claim_jobs(100, 160, 10).await.unwrap();
    let ids: Vec<&str> = claimed.iter().map(|j| j.id.as_str()).collect();
    assert_eq!(ids, ["j1", "j2"], "only due jobs");
    assert!(
        claimed
            .iter()
            .all(|j| j.status == "running" && j.attempts == 1)
    );
    assert!(
        tx.claim_jobs(150, 210, 10).await.unwrap().is_empty(),
        "leased"
    );
    // j1's worker "crashed": its lease expires and another claim takes it over.
    let reclaimed = tx.claim_jobs(170, 230, 10).await.unwrap();
    let ids: Vec<(&str, i64)> = reclaimed
        .iter()
        .map(|j| (j.id.as_str(), j.attempts))
        .collect();
    assert_eq!(ids, [("j1", 2), ("j2", 2)]);
    assert!(
        !tx.finish_job("j1", 160, &JobOutcome::Completed, 171)
            .await
            .unwrap(),
        "the stale claim no longer holds it"
    );
    assert!(
        tx.finish_job("j1", 230, &JobOutcome::Completed, 171)
            .await
            .unwrap()
    );
    let retry = JobOutcome::Retry {
        run_at: 400,
        error: "boom".into(),
    };
    assert!(tx.finish_job("j2", 230, &retry, 171).await.unwrap());
    let j2 = tx.job("j2").await.unwrap().unwrap();
    assert_eq!(
        (
            j2.status.as_str(),
            j2.run_at,
            j2.last_error.as_deref(),
            j2.locked_until
        ),
        ("pending", 400, Some("boom"), None)
    );
    let claimed = tx.claim_jobs(500, 560, 10).await.unwrap();
    assert_eq!(claimed.len(), 2);
    assert_eq!(
        tx.complete_jobs(&["j2".into(), "j3".into()], 560, 501)
            .await
            .unwrap(),
        2
    );
    assert_eq!(tx.job("j3").await.unwrap().unwrap().completed_at, Some(501));

    // Requeue and cancel only from the states that allow it.
    assert!(
        !tx.requeue_job("j3", &[JobStatus::Failed, JobStatus::DeadLetter], true, 600)
            .await
            .unwrap()
    );
    assert!(tx.enqueue_job(&job("j4", 700, None)).await.unwrap());
    let stop = JobOutcome::DeadLettered {
        error: "gave up".into(),
    };
    tx.claim_jobs(700, 760, 1).await.unwrap();
    assert!(tx.finish_job("j4", 760, &stop, 701).await.unwrap());
    assert!(
        tx.requeue_job("j4", &[JobStatus::Failed, JobStatus::DeadLetter], true, 702)
            .await
            .unwrap()
    );
    let j4 = tx.job("j4").await.unwrap().unwrap();
    assert_eq!(
        (j4.status.as_str(), j4.attempts, j4.run_at),
        ("pending", 0, 702)
    );
    assert!(tx.cancel_job("j4", 703).await.unwrap());
    assert!(
        !tx.cancel_job("j4", 704).await.unwrap(),
        "only pending jobs cancel"
    );

    let (page, total) = tx
        .jobs(&JobQuery {
            status: Some("completed".into()),
            limit: 10,
            ..JobQuery::default()
        })
        .await
        .unwrap();
    assert_eq!((page.len(), total), (3, 3));
    let (counts, oldest) = tx.job_counts(Some("o1"), 1000).await.unwrap();
    assert_eq!(
        counts,
        vec![
            ("cancelled".to_string(), 1),
            ("completed".to_string(), 3),
            ("pending".to_string(), 1)
        ]
    );
    assert_eq!(oldest, Some(900), "b2 waits since its run time");
    assert_eq!(
        tx.job_counts(Some("o1"), 800).await.unwrap().1,
        None,
        "not due yet"
    );
    // Across the instance, per status and type (GET /metrics).
    let instance_wide = JobRecord::pending("x1".into(), "test.other", json!({}), 3, 100);
    assert!(tx.enqueue_job(&instance_wide).await.unwrap());
    let by_type = |status: &str, job_type: &str, n: i64| (status.into(), job_type.into(), n);
    let (counts, oldest) = tx.job_counts_by_type(1000).await.unwrap();
    assert_eq!(
        counts,
        vec![
            by_type("cancelled", "test.job", 1),
            by_type("completed", "test.job", 3),
            by_type("pending", "test.job", 1),
            by_type("pending", "test.other", 1),
        ]
    );
    assert_eq!(oldest, Some(100), "x1 waits since its run time");
    tx.commit().await.unwrap();
    store.close().await;
}

/// Two workers on two pools claim concurrently: every job is completed exactly once and none
/// is lost.
async fn concurrent_workers_complete_every_job_exactly_once(url: String) {
    let store = open(&url).await;
    let mut tx = store.write_instance_wide().await.unwrap();
    for i in 0..1000 {
        tx.enqueue_job(&job(&format!("j{i:04}"), 1, None))
            .await
            .unwrap();
    }
    tx.commit().await.unwrap();
    let other = crate::connect(&url).await.unwrap();
    let work = |store: std::sync::Arc<dyn crate::Store>, worker: i64| async move {
        let mut done = Vec::new();
        for round in 0.. {
            // Distinct leases per claim, so a claim finishes only its own jobs.
            let lease = 1_000_000 + worker * 100_000 + round;
            let mut tx = store.write_instance_wide().await.unwrap();
            let claimed = tx.claim_jobs(10, lease, 25).await.unwrap();
            tx.commit().await.unwrap();
            if claimed.is_empty() {
                break;
            }
            let ids: Vec<String> = claimed.iter().map(|j| j.id.clone()).collect();
            let mut tx = store.write_instance_wide().await.unwrap();
            assert_eq!(
                tx.complete_jobs(&ids, lease, 11).await.unwrap(),
                ids.len() as u64
            );
            tx.commit().await.unwrap();
            done.extend(ids);
        }
        done
    };
    let (a, b) = tokio::join!(work(store.clone(), 1), work(other.clone(), 2));
    let mut all: Vec<String> = a.iter().chain(b.iter()).cloned().collect();
    all.sort();
    let before = all.len();
    all.dedup();
    assert_eq!(
        (before, all.len()),
        (1000, 1000),
        "each job claimed once, none lost"
    );
    let mut tx = store.read_instance_wide().await.unwrap();
    let (counts, _) = tx.job_counts(None, 20).await.unwrap();
    assert_eq!(counts, vec![("completed".to_string(), 1000)]);
    drop(tx);
    other.close().await;
    store.close().await;
}

crate::both_engines!(
    jobs_are_claimed_leased_finished_and_deduplicated,
    concurrent_workers_complete_every_job_exactly_once,
);
