//! The archive catalogue: every table and column of the live schema is either carried or left
//! out by name (a migration adding one must decide), rows read in one snapshot load into
//! another database and read back the same, and loaded events count as relayed.

use std::collections::BTreeSet;

use serde_json::json;

use super::{document, event, open, with_two_organizations};
use crate::archive::{Filter, LEFT_OUT, PARTS, Row, SCHEMA_VERSION};

async fn every_table_and_column_is_carried_or_left_out(url: String) {
    let store = open(&url).await;
    let mut tx = store.read_instance_wide().await.unwrap();
    let live: BTreeSet<(String, String)> =
        tx.tables_and_columns().await.unwrap().into_iter().collect();
    drop(tx);
    let left_out: BTreeSet<&str> = LEFT_OUT.iter().map(|(table, _)| *table).collect();
    let mut carried: BTreeSet<(String, String)> = BTreeSet::new();
    for part in PARTS {
        for column in part.columns {
            carried.insert((part.table.to_string(), column.name.to_string()));
        }
    }
    let uncarried: Vec<_> = live
        .iter()
        .filter(|(table, _)| !left_out.contains(table.as_str()))
        .filter(|pair| !carried.contains(*pair))
        .collect();
    assert!(
        uncarried.is_empty(),
        "columns neither carried by archive::PARTS nor in archive::LEFT_OUT: {uncarried:?}"
    );
    let unknown: Vec<_> = carried.difference(&live).collect();
    assert!(
        unknown.is_empty(),
        "carried columns the schema lacks: {unknown:?}"
    );
    let migrations = std::fs::read_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/migrations/sqlite"))
        .unwrap()
        .count();
    assert_eq!(
        SCHEMA_VERSION as usize, migrations,
        "archive::SCHEMA_VERSION names the last migration"
    );
    store.close().await;
}

/// Every row of every part, read as an export does: instance-wide, then per organization.
async fn everything(store: &std::sync::Arc<dyn crate::Store>) -> Vec<(String, Vec<Row>)> {
    let mut tx = store.snapshot().await.unwrap();
    let mut found = Vec::new();
    for part in PARTS {
        let mut rows = Vec::new();
        for owner in [None, Some("o1"), Some("o2")] {
            let filter = match owner {
                Some(org) => {
                    tx.act_for(org).await.unwrap();
                    Filter::Organization(org)
                }
                None => {
                    tx.act_instance_wide().await.unwrap();
                    Filter::All
                }
            };
            let by_organization = matches!(
                part.rows,
                crate::archive::Rows::Organization(_)
                    | crate::archive::Rows::OrganizationOrInstance(_)
            );
            if by_organization != owner.is_some() {
                continue;
            }
            // Pages of two: rows past the first page arrive too.
            let (pages, mut received) = tokio::sync::mpsc::channel(100);
            tx.archive_rows(part, filter, 2, pages).await.unwrap();
            while let Some(page) = received.recv().await {
                assert!(page.len() <= 2);
                rows.extend(page);
            }
        }
        // Streamed in no particular order: compared in key order.
        let key =
            |row: &Row| -> Vec<String> { part.key.iter().map(|k| row[*k].to_string()).collect() };
        rows.sort_by_key(key);
        found.push((part.name.to_string(), rows));
    }
    tx.commit().await.unwrap();
    found
}

async fn rows_load_into_another_database_and_read_back_the_same(url: String) {
    let source = open(&url).await;
    with_two_organizations(&source).await;
    let mut tx = source.write_for("o1").await.unwrap();
    let mut published = document("d1", "o1", "post", false);
    published.published_data = Some(crate::Json(json!({"title": "Hello", "n": 1.5})));
    published.published_at = Some(7);
    tx.insert_document(&published).await.unwrap();
    tx.append_events(&[
        event("e1", "o1", "document.published"),
        event("e2", "o1", "document.published"),
    ])
    .await
    .unwrap();
    tx.commit().await.unwrap();
    // e1 was relayed at the source, e2 not yet.
    let mut tx = source.write_instance_wide().await.unwrap();
    tx.mark_processed(&["e1".to_string()], 9).await.unwrap();
    tx.commit().await.unwrap();
    let mut tx = source.write_for("o2").await.unwrap();
    tx.insert_document(&document("d2", "o2", "page", true))
        .await
        .unwrap();
    tx.commit().await.unwrap();

    // A snapshot sees what was committed when it began, not what commits later.
    let mut snapshot = source.snapshot().await.unwrap();
    snapshot.act_for("o1").await.unwrap();
    let documents = crate::archive::part_named("documents").unwrap();
    let mut tx = source.write_for("o1").await.unwrap();
    tx.insert_document(&document("d3", "o1", "post", false))
        .await
        .unwrap();
    tx.commit().await.unwrap();
    let seen = snapshot
        .archive_count(documents, Filter::Organization("o1"))
        .await
        .unwrap();
    assert_eq!(
        seen, 1,
        "the snapshot does not see d3, committed after it began"
    );
    snapshot.commit().await.unwrap();

    let written = everything(&source).await;
    let count = |name: &str| {
        written
            .iter()
            .find(|(part, _)| part == name)
            .map(|(_, rows)| rows.len())
            .unwrap()
    };
    assert_eq!(
        (
            count("users"),
            count("organizations"),
            count("child-organizations")
        ),
        (1, 1, 1)
    );
    assert_eq!(
        (count("documents"), count("events"), count("outbox")),
        (3, 2, 1)
    );

    // The same rows loaded into a second database of this engine.
    let target_db = crate::testing::TestDatabase::new(source.dialect()).await;
    let target = open(&target_db.url).await;
    let mut tx = target.write_instance_wide().await.unwrap();
    assert!(!tx.holds_people_or_organizations().await.unwrap());
    drop(tx);
    for (name, rows) in &written {
        let part = crate::archive::part_named(name).unwrap();
        let by_organization = |row: &Row| {
            ["organization_id"]
                .iter()
                .find_map(|c| row.get(*c).and_then(|v| v.as_str()).map(str::to_string))
        };
        for row in rows {
            let mut tx = match (part.rows, by_organization(row)) {
                (
                    crate::archive::Rows::Organization(_)
                    | crate::archive::Rows::OrganizationOrInstance(_),
                    Some(org),
                ) => target.write_for(&org).await.unwrap(),
                _ => target.write_instance_wide().await.unwrap(),
            };
            tx.load_rows(part, std::slice::from_ref(row)).await.unwrap();
            tx.commit().await.unwrap();
        }
    }
    assert_eq!(everything(&target).await, written);
    let mut tx = target.write_instance_wide().await.unwrap();
    assert!(tx.holds_people_or_organizations().await.unwrap());
    assert_eq!(
        tx.outbox_backlog().await.unwrap(),
        1,
        "e1 arrives relayed, as at the source; e2 still waits for the relay"
    );
    drop(tx);
    target.close().await;
    target_db.remove().await;
    source.close().await;
}

crate::both_engines!(
    every_table_and_column_is_carried_or_left_out,
    rows_load_into_another_database_and_read_back_the_same,
);
