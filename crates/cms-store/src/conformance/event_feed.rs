//! The event feed (`event_feed.rs`): positions in the order events were written, the holes a
//! transaction still open (or rolled back) leaves on PostgreSQL, the replay of one
//! organization's events, and the wake-ups of readers after each commit that appended events,
//! whichever path wrote them.

use std::time::Duration;

use super::{document, event, open, with_two_organizations};
use crate::documents::NewDocumentRows;
use crate::event_feed::{EventCommitWatch, FeedEvent, FeedHead, ReplayQuery};
use crate::{Dialect, Store};

fn ids(events: &[FeedEvent]) -> Vec<&str> {
    events.iter().map(|e| e.event.id.as_str()).collect()
}

async fn append(store: &std::sync::Arc<dyn Store>, events: &[(&str, &str, &str)]) {
    let mut tx = store.write_instance_wide().await.unwrap();
    for (id, org, t) in events {
        tx.append_event(&event(id, org, t)).await.unwrap();
    }
    tx.commit().await.unwrap();
}

async fn feed_after(
    store: &std::sync::Arc<dyn Store>,
    after: i64,
    missing: &[i64],
) -> Vec<FeedEvent> {
    let mut tx = store.read_instance_wide().await.unwrap();
    tx.feed_after(after, missing, 100).await.unwrap()
}

async fn head(store: &std::sync::Arc<dyn Store>, span: i64) -> FeedHead {
    store
        .read_instance_wide()
        .await
        .unwrap()
        .feed_head(span)
        .await
        .unwrap()
}

/// Waits (bounded, so a missing wake-up fails instead of hanging) for the watch to change.
async fn woken(watch: &mut EventCommitWatch, what: &str) {
    tokio::time::timeout(Duration::from_secs(10), watch.changed())
        .await
        .unwrap_or_else(|_| panic!("no wake-up after {what}"));
}

async fn events_have_positions_in_write_order(url: String) {
    let store = open(&url).await;
    with_two_organizations(&store).await;
    assert_eq!(
        head(&store, 100).await,
        FeedHead::default(),
        "an empty feed"
    );
    // Ids out of order on purpose: the feed follows positions, not ids.
    append(
        &store,
        &[
            ("e3", "o1", "a.b"),
            ("e1", "o2", "a.b"),
            ("e2", "o1", "c.d"),
        ],
    )
    .await;
    let all = feed_after(&store, 0, &[]).await;
    assert_eq!(ids(&all), ["e3", "e1", "e2"]);
    assert!(all.windows(2).all(|w| w[0].position < w[1].position));
    assert_eq!(all[1].event.organization_id.as_deref(), Some("o2"));
    let last = all[2].position;
    assert_eq!(
        head(&store, 100).await,
        FeedHead {
            head: last,
            missing: vec![]
        }
    );
    assert!(feed_after(&store, last, &[]).await.is_empty());
    // Past a position, and at a position asked for again.
    assert_eq!(
        ids(&feed_after(&store, all[1].position, &[all[0].position]).await),
        ["e3", "e2"]
    );
    store.close().await;
}

/// On PostgreSQL a transaction takes its position at the insert and may commit after a later
/// one: the earlier position is a hole until it commits, and stays one when it rolls back.
async fn late_commits_leave_holes_until_they_land(url: String) {
    let store = open(&url).await;
    with_two_organizations(&store).await;
    append(&store, &[("e1", "o1", "a.b")]).await;
    let first = head(&store, 10).await.head;
    if store.dialect() == Dialect::Sqlite {
        // One writer: a second unit waits for the first, so positions follow commits and a
        // rolled-back position is taken again.
        let mut tx = store.write_instance_wide().await.unwrap();
        tx.append_event(&event("gone", "o1", "a.b")).await.unwrap();
        drop(tx);
        append(&store, &[("e2", "o1", "a.b")]).await;
        let next = feed_after(&store, first, &[]).await;
        assert_eq!(ids(&next), ["e2"]);
        assert_eq!(next[0].position, first + 1);
        assert_eq!(head(&store, 10).await.missing, Vec::<i64>::new());
        store.close().await;
        return;
    }
    let mut late = store.write_instance_wide().await.unwrap();
    late.append_event(&event("late", "o1", "a.b"))
        .await
        .unwrap();
    let mut gone = store.write_instance_wide().await.unwrap();
    gone.append_event(&event("gone", "o1", "a.b"))
        .await
        .unwrap();
    append(&store, &[("early", "o1", "a.b")]).await;
    let seen = feed_after(&store, first, &[]).await;
    assert_eq!(ids(&seen), ["early"]);
    let now = head(&store, 10).await;
    assert_eq!(now.head, seen[0].position);
    assert_eq!(
        now.missing,
        vec![first + 1, first + 2],
        "both open transactions' positions"
    );
    late.commit().await.unwrap();
    drop(gone);
    let filled = feed_after(&store, now.head, &now.missing).await;
    assert_eq!(ids(&filled), ["late"]);
    assert_eq!(filled[0].position, first + 1);
    assert_eq!(
        head(&store, 10).await.missing,
        vec![first + 2],
        "a rolled-back position stays empty"
    );
    store.close().await;
}

async fn replay_reads_one_organization_up_to_a_position(url: String) {
    let store = open(&url).await;
    with_two_organizations(&store).await;
    append(
        &store,
        &[
            ("e1", "o1", "a.b"),
            ("e2", "o2", "a.b"),
            ("e3", "o1", "c.d"),
            ("e4", "o1", "a.b"),
            ("e5", "o1", "a.b"),
        ],
    )
    .await;
    let all = feed_after(&store, 0, &[]).await;
    let position = |id: &str| all.iter().find(|e| e.event.id == id).unwrap().position;
    let replay =
        |after: Option<&str>, through: i64, pending: Vec<i64>, types: &[&str]| ReplayQuery {
            organization: "o1".into(),
            after: after.map(str::to_string),
            through,
            pending,
            types: types.iter().map(|t| t.to_string()).collect(),
            limit: 10,
        };
    let read = async |q: ReplayQuery| -> Vec<String> {
        let mut tx = store.read_for("o1").await.unwrap();
        tx.feed_replay(&q)
            .await
            .unwrap()
            .into_iter()
            .map(|e| e.id)
            .collect()
    };
    let top = position("e5");
    assert_eq!(
        read(replay(None, top, vec![], &[])).await,
        ["e1", "e3", "e4", "e5"]
    );
    assert_eq!(
        read(replay(Some("e3"), top, vec![], &[])).await,
        ["e4", "e5"]
    );
    assert_eq!(
        read(replay(None, position("e4"), vec![], &[])).await,
        ["e1", "e3", "e4"]
    );
    assert_eq!(
        read(replay(None, top, vec![position("e3")], &[])).await,
        ["e1", "e4", "e5"]
    );
    assert_eq!(read(replay(None, top, vec![], &["c.d"])).await, ["e3"]);
    let mut page = replay(None, top, vec![], &[]);
    page.limit = 2;
    assert_eq!(read(page).await, ["e1", "e3"]);
    store.close().await;
}

/// Every way of appending events wakes the readers after its commit: one event (direct on
/// SQLite), a new document with its event, an import's batch (through sqlx on SQLite).
async fn commits_that_append_events_wake_readers(url: String) {
    let store = open(&url).await;
    with_two_organizations(&store).await;
    let mut watch = store.watch_event_commits();
    if store.dialect() == Dialect::Postgres {
        // The listener wakes its readers once it listens (what committed before was announced
        // to nobody): wait for that, so the wake-ups below are the commits'.
        woken(&mut watch, "listening").await;
    }
    append(&store, &[("e1", "o1", "a.b")]).await;
    woken(&mut watch, "append_event").await;

    let mut tx = store.write_for("o1").await.unwrap();
    tx.insert_new_document(
        &document("d1", "o1", "post", false),
        &[],
        &[event("e2", "o1", "a.b")],
    )
    .await
    .unwrap();
    tx.commit().await.unwrap();
    woken(&mut watch, "insert_new_document").await;

    let mut tx = store.write_for("o1").await.unwrap();
    tx.insert_new_documents(&[NewDocumentRows {
        document: document("d2", "o1", "post", false),
        versions: vec![],
        events: vec![event("e3", "o1", "a.b")],
        references: vec![],
    }])
    .await
    .unwrap();
    tx.commit().await.unwrap();
    woken(&mut watch, "insert_new_documents").await;

    if store.dialect() == Dialect::Postgres {
        // Another process's commit (a store of its own): heard through LISTEN alone.
        let other = crate::connect(&url).await.unwrap();
        append(&other, &[("e4", "o1", "a.b")]).await;
        woken(&mut watch, "another store's commit").await;
        other.close().await;
    }
    let mut expected = vec!["e1", "e2", "e3"];
    if store.dialect() == Dialect::Postgres {
        expected.push("e4");
    }
    assert_eq!(ids(&feed_after(&store, 0, &[]).await), expected);
    drop(watch);
    store.close().await;
}

crate::both_engines!(
    events_have_positions_in_write_order,
    late_commits_leave_holes_until_they_land,
    replay_reads_one_organization_up_to_a_position,
    commits_that_append_events_wake_readers,
);
