//! Search rows: written and deleted in the unit of work of the copy's write (a rollback leaves
//! none), matched alike on both engines (words, phrases, exclusions, locales, paths), scored
//! from their weights with the exact-match boost, and gone with their document.

use cms_core::filter::Filter;
use cms_core::search::{SearchQuery, SearchRow, tokenize};

use super::{document, open, with_two_organizations};
use crate::documents::ListSpec;
use crate::filter_sql::DataColumn;
use crate::search::{EXACT_BOOST, SearchSpec};

fn row(locale: &str, path: &str, text: &str, weight: i64) -> SearchRow {
    let tokens = tokenize(text);
    SearchRow {
        locale: locale.into(),
        path: path.into(),
        chunk: 0,
        weight,
        exact: cms_core::search::exact_key(&tokens),
        tokens,
    }
}

async fn ids(
    tx: &mut Box<dyn crate::Tx>,
    search: &str,
    locale: &str,
    paths: &[&str],
    column: DataColumn,
) -> (Vec<(String, f64)>, i64) {
    let orgs = vec!["o1".to_string()];
    let spec = ListSpec {
        organizations: &orgs,
        doc_type: "post",
        column,
        published: None,
        filter: &Filter::All,
        sort: &[],
        limit: 10,
        offset: 0,
    };
    let query = SearchQuery::parse(search).unwrap();
    let paths: Vec<String> = paths.iter().map(|p| p.to_string()).collect();
    let search = SearchSpec {
        query: &query,
        locale,
        paths: &paths,
    };
    let (found, total) = tx.search_documents(&spec, &search).await.unwrap();
    (
        found
            .into_iter()
            .map(|s| (s.document.id, s.score))
            .collect(),
        total,
    )
}

fn only_ids(found: &(Vec<(String, f64)>, i64)) -> Vec<&str> {
    found.0.iter().map(|(id, _)| id.as_str()).collect()
}

async fn search_rows_are_written_matched_and_removed_with_their_unit(url: String) {
    let store = open(&url).await;
    with_two_organizations(&store).await;

    // Written in a unit that rolls back: nothing stays.
    let mut tx = store.write_for("o1").await.unwrap();
    tx.insert_document(&document("d0", "o1", "post", false))
        .await
        .unwrap();
    tx.replace_search_rows("d0", "o1", "draft", &[row("", "title", "ghost", 500)])
        .await
        .unwrap();
    drop(tx);
    let mut tx = store.read_for("o1").await.unwrap();
    assert!(tx.search_rows_of("d0", "draft").await.unwrap().is_empty());
    let found = ids(&mut tx, "ghost", "en", &["title"], DataColumn::Draft).await;
    assert_eq!(found.1, 0, "a rolled-back unit leaves no search row");
    drop(tx);

    let mut tx = store.write_for("o1").await.unwrap();
    for id in ["d1", "d2", "d3"] {
        tx.insert_document(&document(id, "o1", "post", false))
            .await
            .unwrap();
    }
    tx.replace_search_rows(
        "d1",
        "o1",
        "draft",
        &[
            row("", "title", "Quick Brown Fox", 400),
            row("", "body", "the lazy dog sleeps", 200),
        ],
    )
    .await
    .unwrap();
    tx.replace_search_rows(
        "d2",
        "o1",
        "draft",
        &[
            row("", "title", "Brown dog", 450),
            row("", "secret", "fox", 500),
            row("de", "summary", "Fuchs", 500),
            row("en", "summary", "fox", 500),
        ],
    )
    .await
    .unwrap();
    let d3 = [(
        "d3",
        "o1",
        "draft",
        &row("", "title", "The quick brown fox", 380),
    )];
    tx.add_search_rows(&d3).await.unwrap();
    tx.replace_search_rows("d3", "o1", "published", &[row("", "title", "Old", 500)])
        .await
        .unwrap();
    tx.commit().await.unwrap();

    let mut tx = store.read_for("o1").await.unwrap();
    let stored = tx.search_rows_of("d1", "draft").await.unwrap();
    assert_eq!(
        stored,
        [
            ("".into(), "body".into(), 0, "the lazy dog sleeps".into()),
            ("".into(), "title".into(), 0, "quick brown fox".into()),
        ]
    );
    let all = ["title", "body", "summary"];
    // Words: every one must match, in any field; ties by id; a field counts once per term.
    let found = ids(&mut tx, "brown", "en", &all, DataColumn::Draft).await;
    assert_eq!(found.1, 3);
    assert_eq!(only_ids(&found), ["d2", "d1", "d3"]);
    assert_eq!(found.0[0].1, 0.45);
    let found = ids(&mut tx, "fox dog", "en", &all, DataColumn::Draft).await;
    assert_eq!(only_ids(&found), ["d2", "d1"]);
    assert_eq!(found.0[1].1, 0.6, "title 400 + body 200");
    // A phrase: adjacent, in order, in one field.
    let found = ids(&mut tx, "\"brown fox\"", "en", &all, DataColumn::Draft).await;
    assert_eq!(only_ids(&found), ["d1", "d3"]);
    let found = ids(&mut tx, "\"fox brown\"", "en", &all, DataColumn::Draft).await;
    assert_eq!(found.1, 0);
    // Exclusions.
    let found = ids(&mut tx, "brown -dog", "en", &all, DataColumn::Draft).await;
    assert_eq!(only_ids(&found), ["d3"]);
    let found = ids(
        &mut tx,
        "brown -\"lazy dog\"",
        "en",
        &all,
        DataColumn::Draft,
    )
    .await;
    assert_eq!(only_ids(&found), ["d2", "d3"]);
    // Only the paths given match: d2's `secret` does not.
    let found = ids(&mut tx, "fox", "de", &all, DataColumn::Draft).await;
    assert_eq!(only_ids(&found), ["d1", "d3"]);
    // Localized rows match in their locale only; rows without a locale in every locale.
    let found = ids(&mut tx, "fuchs", "de", &all, DataColumn::Draft).await;
    assert_eq!(only_ids(&found), ["d2"]);
    let found = ids(&mut tx, "fuchs", "en", &all, DataColumn::Draft).await;
    assert_eq!(found.1, 0);
    // The exact-match boost: a field that is exactly the words ranks first.
    let found = ids(&mut tx, "quick brown fox", "en", &all, DataColumn::Draft).await;
    assert_eq!(only_ids(&found), ["d1", "d3"]);
    assert_eq!(found.0[0].1, (3 * 400 + EXACT_BOOST) as f64 / 1000.0);
    // The published copy's rows are the published copy's.
    let found = ids(&mut tx, "old", "en", &all, DataColumn::Published).await;
    assert_eq!(only_ids(&found), ["d3"]);
    let found = ids(&mut tx, "old", "en", &all, DataColumn::Draft).await;
    assert_eq!(found.1, 0);
    drop(tx);

    // Replacing a copy's rows drops the old ones; deleting the document drops the rest.
    let mut tx = store.write_for("o1").await.unwrap();
    tx.replace_search_rows("d1", "o1", "draft", &[row("", "title", "Renamed", 500)])
        .await
        .unwrap();
    assert!(tx.delete_document("d3").await.unwrap());
    tx.commit().await.unwrap();
    let mut tx = store.read_for("o1").await.unwrap();
    let found = ids(&mut tx, "brown", "en", &all, DataColumn::Draft).await;
    assert_eq!(only_ids(&found), ["d2"]);
    assert!(
        tx.search_rows_of("d3", "published")
            .await
            .unwrap()
            .is_empty()
    );
    let found = ids(&mut tx, "renamed", "en", &all, DataColumn::Draft).await;
    assert_eq!(only_ids(&found), ["d1"]);
    drop(tx);

    // Another organization's unit finds none of o1's rows: PostgreSQL's wall (SQLite has none;
    // there the service's organization filter alone decides).
    if store.dialect() == crate::Dialect::Postgres {
        let mut tx = store.read_for("o2").await.unwrap();
        assert!(tx.search_rows_of("d1", "draft").await.unwrap().is_empty());
        drop(tx);
    }
    store.close().await;
}

crate::both_engines!(search_rows_are_written_matched_and_removed_with_their_unit,);

async fn search_signatures_are_kept_per_type(url: String) {
    let store = open(&url).await;
    with_two_organizations(&store).await;
    let mut tx = store.write().await.unwrap();
    assert_eq!(tx.search_signature("post").await.unwrap(), None);
    tx.set_search_signature("post", "a").await.unwrap();
    tx.set_search_signature("post", "b").await.unwrap();
    tx.commit().await.unwrap();
    let mut tx = store.read().await.unwrap();
    assert_eq!(
        tx.search_signature("post").await.unwrap().as_deref(),
        Some("b")
    );
    assert_eq!(
        tx.all_organization_ids().await.unwrap(),
        ["o1".to_string(), "o2".to_string()]
    );
    drop(tx);
    let mut tx = store.write_for("o1").await.unwrap();
    for i in 0..3 {
        tx.insert_document(&document(&format!("d{i}"), "o1", "post", false))
            .await
            .unwrap();
    }
    let first: Vec<String> = tx
        .documents_after("o1", "post", None)
        .await
        .unwrap()
        .into_iter()
        .map(|d| d.id)
        .collect();
    assert_eq!(first, ["d0", "d1", "d2"]);
    let rest = tx.documents_after("o1", "post", Some("d1")).await.unwrap();
    assert_eq!(rest.len(), 1);
    drop(tx);
    store.close().await;
}

crate::both_engines!(search_signatures_are_kept_per_type,);

/// A rebuild's chunk holds its documents until its unit ends: a write to one of them (its
/// draft saved, its search rows replaced) waits, then replaces the rebuilt rows instead of
/// colliding with them on the same keys.
async fn a_write_waits_for_the_rebuild_of_its_document(url: String) {
    let store = open(&url).await;
    with_two_organizations(&store).await;
    let mut tx = store.write_for("o1").await.unwrap();
    tx.insert_document(&document("d1", "o1", "post", false))
        .await
        .unwrap();
    tx.commit().await.unwrap();

    let mut rebuild = store.write_for("o1").await.unwrap();
    let chunk = rebuild.documents_after("o1", "post", None).await.unwrap();
    assert_eq!(chunk.len(), 1);
    rebuild
        .replace_search_rows("d1", "o1", "draft", &[row("", "title", "before", 500)])
        .await
        .unwrap();

    let writer = {
        let store = store.clone();
        tokio::spawn(async move {
            let mut tx = store.write_for("o1").await.unwrap();
            assert!(
                tx.save_draft("d1", &serde_json::json!({"title": "after"}), 1, None, 2)
                    .await
                    .unwrap()
            );
            tx.replace_search_rows("d1", "o1", "draft", &[row("", "title", "after", 500)])
                .await
                .unwrap();
            tx.commit().await.unwrap();
        })
    };
    // Not a timing claim: the writer cannot finish while the chunk is held, however long.
    tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    assert!(!writer.is_finished(), "the write waited for the rebuild");
    rebuild.commit().await.unwrap();
    writer.await.unwrap();

    let mut tx = store.read_for("o1").await.unwrap();
    let rows = tx.search_rows_of("d1", "draft").await.unwrap();
    assert_eq!(rows.len(), 1, "{rows:?}");
    assert_eq!(rows[0].3, "after");
    drop(tx);
    store.close().await;
}

crate::both_engines!(a_write_waits_for_the_rebuild_of_its_document,);
