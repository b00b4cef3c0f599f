//! Events: each carries its outbox row in the same unit of work, so the two land or are rolled
//! back together.

use serde_json::json;
use sqlx::types::Json;

use super::{event, open, with_two_organizations};
use crate::events::{EventQuery, EventRecord, LeftOut};

async fn events_carry_their_outbox_row_atomically(url: String) {
    let store = open(&url).await;
    with_two_organizations(&store).await;
    // Rolled back: neither the event nor its outbox row exists.
    let mut tx = store.write_instance_wide().await.unwrap();
    tx.append_event(&event("e0", "o1", "document.published"))
        .await
        .unwrap();
    drop(tx);
    let mut tx = store.write_instance_wide().await.unwrap();
    assert_eq!(tx.outbox_backlog().await.unwrap(), 0);
    for (id, org, t) in [
        ("e1", "o1", "document.published"),
        ("e2", "o2", "document.published"),
        ("e3", "o1", "user.deleted"),
    ] {
        tx.append_event(&event(id, org, t)).await.unwrap();
    }
    tx.commit().await.unwrap();

    let mut tx = store.write_instance_wide().await.unwrap();
    assert_eq!(tx.outbox_backlog().await.unwrap(), 3);
    let claimed = tx.claim_outbox(2).await.unwrap();
    let ids: Vec<&str> = claimed.iter().map(|e| e.id.as_str()).collect();
    assert_eq!(ids, ["e1", "e2"]);
    tx.mark_processed(&["e1".into(), "e2".into()], 5)
        .await
        .unwrap();
    tx.commit().await.unwrap();
    let mut tx = store.write_instance_wide().await.unwrap();
    assert_eq!(tx.outbox_backlog().await.unwrap(), 1);
    assert_eq!(tx.claim_outbox(10).await.unwrap()[0].id, "e3");
    let e2 = tx.event("e2").await.unwrap().unwrap();
    assert_eq!(
        (e2.organization_id.as_deref(), e2.payload.0.clone()),
        (Some("o2"), json!({"documentId": "d1"}))
    );
    assert!(tx.event("nope").await.unwrap().is_none());

    let query =
        |organization: Option<&str>, event_type: Option<&str>, after: Option<&str>| EventQuery {
            organization: organization.map(str::to_string),
            event_type: event_type.map(str::to_string),
            after: after.map(str::to_string),
            left_out: LeftOut::default(),
            limit: 10,
            offset: 0,
        };
    let ids = |page: (Vec<EventRecord>, i64)| {
        (page.0.into_iter().map(|e| e.id).collect::<Vec<_>>(), page.1)
    };
    assert_eq!(
        ids(tx.events(&query(Some("o1"), None, None)).await.unwrap()),
        (vec!["e3".to_string(), "e1".to_string()], 2),
        "newest first, one organization"
    );
    assert_eq!(
        ids(tx
            .events(&query(None, Some("document.published"), None))
            .await
            .unwrap()),
        (vec!["e2".to_string(), "e1".to_string()], 2)
    );
    assert_eq!(
        ids(tx.events(&query(None, None, Some("e1"))).await.unwrap()),
        (vec!["e2".to_string(), "e3".to_string()], 2),
        "after an id: only newer, oldest first"
    );
    drop(tx);
    store.close().await;
}

/// Many events appended at once, and a read that leaves out the document events of some
/// document types: out of the page and out of the total, whatever else the payload holds.
async fn reads_leave_out_what_the_reader_may_not_see(url: String) {
    let store = open(&url).await;
    with_two_organizations(&store).await;
    let about = |id: &str, event_type: &str, payload: serde_json::Value| EventRecord {
        payload: Json(payload),
        ..event(id, "o1", event_type)
    };
    let events = [
        about("e1", "document.created", json!({"documentType": "post"})),
        about("e2", "document.created", json!({"documentType": "memo"})),
        about(
            "e3",
            "document.published",
            json!({"documentType": "memo", "publishedHash": "h"}),
        ),
        // Not a document event: its `documentType` decides nothing.
        about("e4", "acme.thing.done", json!({"documentType": "memo"})),
        // A document event without a type stays.
        about("e5", "document.deleted", json!({"documentId": "d1"})),
        about("e6", "asset.created", json!({"assetId": "a1"})),
    ];
    let mut tx = store.write_for("o1").await.unwrap();
    tx.append_events(&[]).await.unwrap();
    tx.append_events(&events).await.unwrap();
    tx.commit().await.unwrap();

    let mut tx = store.read_for("o1").await.unwrap();
    let read = |left_out: LeftOut, offset: i64| EventQuery {
        organization: Some("o1".into()),
        after: Some("e0".into()),
        left_out,
        limit: 2,
        offset,
        ..EventQuery::default()
    };
    let hidden = |types: &[&str]| LeftOut {
        event_types: ["document.created", "document.published", "document.deleted"]
            .map(String::from)
            .to_vec(),
        document_types: types.iter().map(|t| t.to_string()).collect(),
    };
    let ids = |page: (Vec<EventRecord>, i64)| {
        (page.0.into_iter().map(|e| e.id).collect::<Vec<_>>(), page.1)
    };
    assert_eq!(
        ids(tx.events(&read(LeftOut::default(), 0)).await.unwrap()),
        (vec!["e1".to_string(), "e2".to_string()], 6),
        "appended in order, each with its outbox row"
    );
    assert_eq!(
        ids(tx.events(&read(hidden(&["memo"]), 0)).await.unwrap()),
        (vec!["e1".to_string(), "e4".to_string()], 4)
    );
    assert_eq!(
        ids(tx
            .events(&read(hidden(&["memo", "post"]), 1))
            .await
            .unwrap()),
        (vec!["e5".to_string(), "e6".to_string()], 3)
    );
    assert_eq!(
        ids(tx.events(&read(hidden(&["nothing"]), 0)).await.unwrap()).1,
        6
    );
    assert_eq!(tx.outbox_backlog().await.unwrap(), 6);
    drop(tx);
    store.close().await;
}

crate::both_engines!(
    events_carry_their_outbox_row_atomically,
    reads_leave_out_what_the_reader_may_not_see,
);
