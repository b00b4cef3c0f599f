//! Webhook endpoints and their delivery log: kept per organization, read across a relay
//! batch's organizations in one query, deliveries listed newest first with their jobs' state,
//! pending deliveries cancelled with their endpoint, and the rows gone with the endpoint.

use serde_json::json;

use super::{open, org, with_two_organizations};
use crate::Json;
use crate::jobs::JobRecord;
use crate::plugin_settings::PluginSettingsRecord;
use crate::webhooks::{WebhookDeliveryRecord, WebhookEndpointRecord};

fn endpoint(id: &str, organization: &str, enabled: bool, at: i64) -> WebhookEndpointRecord {
    WebhookEndpointRecord {
        id: id.into(),
        organization_id: organization.into(),
        url: format!("https://hooks.example.com/{id}"),
        events: Json(vec!["*".into()]),
        description: String::new(),
        enabled,
        secret: format!("v1:sealed-{id}"),
        created_by: Some("u1".into()),
        created_at: at,
        updated_at: at,
    }
}

fn delivery(job: &str, endpoint: &str, at: i64) -> (JobRecord, WebhookDeliveryRecord) {
    let record = JobRecord {
        organization_id: Some("o1".into()),
        idempotency_key: Some(format!("wh:e-{job}:{endpoint}")),
        ..JobRecord::pending(job.into(), "webhooks.deliver", json!({}), 5, at)
    };
    let row = WebhookDeliveryRecord {
        job_id: job.into(),
        endpoint_id: endpoint.into(),
        organization_id: "o1".into(),
        event_id: format!("e-{job}"),
        event_type: "document.published".into(),
        response_status: None,
        created_at: at,
    };
    (record, row)
}

async fn endpoints_are_kept_per_organization(url: String) {
    let store = open(&url).await;
    with_two_organizations(&store).await;
    let mut tx = store.write_instance_wide().await.unwrap();
    tx.insert_organization(&org("o3", "third")).await.unwrap();
    tx.commit().await.unwrap();
    for (id, organization, enabled, at) in [
        ("w2", "o1", true, 2),
        ("w1", "o1", true, 1),
        ("w3", "o1", false, 3),
        ("w4", "o2", true, 1),
        ("w5", "o3", true, 1),
    ] {
        let mut tx = store.write_for(organization).await.unwrap();
        tx.insert_webhook_endpoint(&endpoint(id, organization, enabled, at))
            .await
            .unwrap();
        tx.commit().await.unwrap();
    }

    let mut tx = store.read_for("o1").await.unwrap();
    let listed: Vec<String> = tx
        .webhook_endpoints("o1")
        .await
        .unwrap()
        .into_iter()
        .map(|e| e.id)
        .collect();
    assert_eq!(listed, ["w1", "w2", "w3"], "oldest first, disabled too");
    assert_eq!(
        tx.webhook_endpoint("o1", "w1").await.unwrap(),
        Some(endpoint("w1", "o1", true, 1))
    );
    assert!(
        tx.webhook_endpoint("o1", "w4").await.unwrap().is_none(),
        "another organization's endpoint is not found by the wrong organization"
    );
    drop(tx);

    // Every field but the id, organization, author and creation time is written.
    let mut tx = store.write_for("o1").await.unwrap();
    let changed = WebhookEndpointRecord {
        url: "http://other.example/in".into(),
        events: Json(vec!["document.published".into(), "user.deleted".into()]),
        description: "Search index".into(),
        enabled: false,
        secret: "v1:rotated".into(),
        updated_at: 9,
        ..endpoint("w1", "o1", true, 1)
    };
    assert!(tx.update_webhook_endpoint(&changed).await.unwrap());
    let elsewhere = WebhookEndpointRecord {
        organization_id: "o1".into(),
        ..endpoint("w4", "o1", false, 9)
    };
    assert!(
        !tx.update_webhook_endpoint(&elsewhere).await.unwrap(),
        "an endpoint of o2 is not updated for o1"
    );
    assert_eq!(
        tx.webhook_endpoint("o1", "w1").await.unwrap(),
        Some(changed)
    );
    tx.commit().await.unwrap();

    // The relay's read: the enabled endpoints of several organizations in one query.
    let mut tx = store.read_instance_wide().await.unwrap();
    let enabled: Vec<(String, String)> = tx
        .enabled_webhook_endpoints(&["o1".into(), "o3".into()])
        .await
        .unwrap()
        .into_iter()
        .map(|e| (e.organization_id, e.id))
        .collect();
    assert_eq!(
        enabled,
        [("o1".into(), "w2".into()), ("o3".into(), "w5".into())],
        "w1 and w3 are disabled; o2 was not asked for"
    );
    assert!(tx.enabled_webhook_endpoints(&[]).await.unwrap().is_empty());
    drop(tx);

    let mut tx = store.write_for("o1").await.unwrap();
    assert!(
        !tx.delete_webhook_endpoint("o1", "w4").await.unwrap(),
        "not o1's"
    );
    assert!(tx.delete_webhook_endpoint("o1", "w2").await.unwrap());
    assert!(!tx.delete_webhook_endpoint("o1", "w2").await.unwrap());
    tx.commit().await.unwrap();
    let mut tx = store.read_for("o2").await.unwrap();
    assert!(tx.webhook_endpoint("o2", "w4").await.unwrap().is_some());
    drop(tx);
    store.close().await;
}

async fn deliveries_are_listed_newest_first_with_their_jobs(url: String) {
    let store = open(&url).await;
    with_two_organizations(&store).await;
    let mut tx = store.write_for("o1").await.unwrap();
    for (id, at) in [("w1", 1), ("w2", 2), ("w3", 3)] {
        tx.insert_webhook_endpoint(&endpoint(id, "o1", true, at))
            .await
            .unwrap();
    }
    tx.commit().await.unwrap();

    // Written instance-wide, as the relay writes them beside their jobs.
    let made: Vec<_> = [
        ("j1", "w1", 10),
        ("j2", "w1", 20),
        ("j3", "w1", 20),
        ("j4", "w2", 15),
        ("j5", "w1", 30),
    ]
    .into_iter()
    .map(|(job, endpoint, at)| delivery(job, endpoint, at))
    .collect();
    let (jobs, rows): (Vec<_>, Vec<_>) = made.into_iter().unzip();
    let mut tx = store.write_instance_wide().await.unwrap();
    assert_eq!(tx.enqueue_jobs(&jobs).await.unwrap(), 5);
    tx.insert_webhook_deliveries(&rows).await.unwrap();
    // Written twice: absorbed.
    tx.insert_webhook_deliveries(&rows[..1]).await.unwrap();
    // A row whose job does not exist (a duplicate job absorbed by its key) is never listed.
    let (_, orphan) = delivery("j-orphan", "w1", 99);
    tx.insert_webhook_deliveries(&[orphan]).await.unwrap();
    tx.insert_webhook_deliveries(&[]).await.unwrap();
    tx.commit().await.unwrap();

    // j5 runs: answered 500, then nothing (a timeout); j2 completes.
    let mut tx = store.write_instance_wide().await.unwrap();
    let claimed = tx.claim_jobs(100, 200, 10).await.unwrap();
    assert_eq!(claimed.len(), 5);
    tx.finish_job(
        "j5",
        200,
        &crate::jobs::JobOutcome::Retry {
            run_at: 500,
            error: "the webhook target answered 500".into(),
        },
        101,
    )
    .await
    .unwrap();
    tx.finish_job("j2", 200, &crate::jobs::JobOutcome::Completed, 101)
        .await
        .unwrap();
    tx.commit().await.unwrap();
    let mut tx = store.write_for("o1").await.unwrap();
    tx.set_webhook_response_status("j5", Some(500))
        .await
        .unwrap();
    tx.set_webhook_response_status("j2", Some(204))
        .await
        .unwrap();
    tx.set_webhook_response_status("not-a-delivery", Some(200))
        .await
        .unwrap();
    tx.commit().await.unwrap();

    let mut tx = store.read_for("o1").await.unwrap();
    let (page, total) = tx.webhook_deliveries("w1", 2, 0).await.unwrap();
    assert_eq!(total, 4, "the orphan is not counted");
    let shown: Vec<(&str, &str, i64, Option<i32>)> = page
        .iter()
        .map(|d| {
            (
                d.delivery.job_id.as_str(),
                d.status.as_str(),
                d.attempts,
                d.delivery.response_status,
            )
        })
        .collect();
    assert_eq!(
        shown,
        [("j5", "pending", 1, Some(500)), ("j3", "running", 1, None)]
    );
    assert_eq!(
        page[0].last_error.as_deref(),
        Some("the webhook target answered 500")
    );
    let (page, _) = tx.webhook_deliveries("w1", 2, 2).await.unwrap();
    let ids: Vec<&str> = page.iter().map(|d| d.delivery.job_id.as_str()).collect();
    assert_eq!(ids, ["j2", "j1"], "ties on time broken by id, newest first");
    assert_eq!(page[0].completed_at, Some(101));
    assert_eq!(
        (page[0].status.as_str(), page[0].delivery.response_status),
        ("completed", Some(204))
    );
    let (page, total) = tx.webhook_deliveries("w3", 20, 0).await.unwrap();
    assert!(page.is_empty());
    assert_eq!(total, 0);

    // The newest delivery of each endpoint that has one.
    let mut latest: Vec<(String, String)> = tx
        .latest_webhook_deliveries("o1")
        .await
        .unwrap()
        .into_iter()
        .map(|d| (d.delivery.endpoint_id, d.delivery.job_id))
        .collect();
    latest.sort();
    assert_eq!(
        latest,
        [("w1".into(), "j5".into()), ("w2".into(), "j4".into())]
    );
    drop(tx);

    // Cancelling the endpoint's deliveries cancels only those still pending: j5 (back to
    // pending after its failed attempt); the running, completed and other endpoint's stay.
    let mut tx = store.write_for("o1").await.unwrap();
    assert_eq!(tx.cancel_webhook_deliveries("w1", 300).await.unwrap(), 1);
    let statuses: Vec<(String, String)> = {
        let mut found = Vec::new();
        for id in ["j1", "j2", "j3", "j4", "j5"] {
            let job = tx.job(id).await.unwrap().unwrap();
            found.push((job.id, job.status));
        }
        found
    };
    assert_eq!(
        statuses,
        [
            ("j1".into(), "running".into()),
            ("j2".into(), "completed".into()),
            ("j3".into(), "running".into()),
            ("j4".into(), "running".into()),
            ("j5".into(), "cancelled".into()),
        ]
    );
    // The endpoint goes, and its delivery rows with it; the jobs stay in the queue.
    assert!(tx.delete_webhook_endpoint("o1", "w1").await.unwrap());
    tx.commit().await.unwrap();
    let mut tx = store.read_for("o1").await.unwrap();
    assert_eq!(tx.webhook_deliveries("w1", 20, 0).await.unwrap().1, 0);
    assert_eq!(tx.webhook_deliveries("w2", 20, 0).await.unwrap().1, 1);
    assert!(tx.job("j5").await.unwrap().is_some());
    drop(tx);
    store.close().await;
}

async fn plugin_settings_are_read_across_a_batch(url: String) {
    let store = open(&url).await;
    with_two_organizations(&store).await;
    let mut tx = store.write_instance_wide().await.unwrap();
    tx.insert_organization(&org("o3", "third")).await.unwrap();
    tx.commit().await.unwrap();
    for (organization, plugin) in [("o1", "webhooks"), ("o1", "other"), ("o3", "webhooks")] {
        let mut tx = store.write_for(organization).await.unwrap();
        tx.save_plugin_settings(&PluginSettingsRecord {
            organization_id: organization.into(),
            plugin_id: plugin.into(),
            values: Json(json!({"url": format!("https://{organization}.example/{plugin}")})),
            updated_at: 1,
            updated_by: None,
        })
        .await
        .unwrap();
        tx.commit().await.unwrap();
    }
    let mut tx = store.read_instance_wide().await.unwrap();
    let mut found: Vec<(String, serde_json::Value)> = tx
        .plugin_settings_in(&["o1".into(), "o2".into(), "o3".into()], "webhooks")
        .await
        .unwrap()
        .into_iter()
        .map(|r| (r.organization_id, r.values.0["url"].clone()))
        .collect();
    found.sort_by(|a, b| a.0.cmp(&b.0));
    assert_eq!(
        found,
        [
            ("o1".into(), json!("https://o1.example/webhooks")),
            ("o3".into(), json!("https://o3.example/webhooks")),
        ]
    );
    assert!(
        tx.plugin_settings_in(&[], "webhooks")
            .await
            .unwrap()
            .is_empty()
    );
    drop(tx);
    store.close().await;
}

crate::both_engines!(
    endpoints_are_kept_per_organization,
    deliveries_are_listed_newest_first_with_their_jobs,
    plugin_settings_are_read_across_a_batch,
);
