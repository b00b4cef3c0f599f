//! Content migrations (issue 28 point 3, CONTRACT.md section 19): after a schema renames a
//! field (`renamedFrom`), removes one and retypes one, stored documents still read and save;
//! start-up names what was left behind; `cms migrate-content` (dry, then for real, then again)
//! rewrites the documents, and what a removed field held stays in their versions.

use axum::http::{Method, StatusCode};
use cms::core::schema::{Schema, parse_schemas};
use serde_json::{Value, json};

use crate::support::{Session, TestApp, config_for};

const DOCS: &str = "/api/documents";

fn before() -> Vec<Schema> {
    parse_schemas(&json!([{ "type": "document", "name": "post", "fields": [
        { "name": "title", "type": "string", "required": true },
        { "name": "teaser", "type": "text" },
        { "name": "subtitle", "type": "string" },
        { "name": "views", "type": "string" }
    ] }]))
    .unwrap()
}

fn after() -> Vec<Schema> {
    parse_schemas(&json!([{ "type": "document", "name": "post", "fields": [
        { "name": "title", "type": "string", "required": true },
        { "name": "summary", "type": "text", "renamedFrom": "teaser" },
        { "name": "views", "type": "number" }
    ] }]))
    .unwrap()
}

async fn create(app: &TestApp, ada: &Session, data: Value, publish: bool) -> String {
    let res = app
        .post(
            DOCS,
            json!({"type": "post", "data": data, "publish": publish}),
        )
        .cookie(ada)
        .send()
        .await;
    assert_eq!(res.status, StatusCode::CREATED, "{}", res.body);
    res.body["data"]["id"].as_str().unwrap().to_string()
}

async fn get(app: &TestApp, ada: &Session, path: &str) -> Value {
    let res = app.get(path).cookie(ada).send().await;
    assert_eq!(res.status, StatusCode::OK, "{path}: {}", res.body);
    res.body["data"].clone()
}

/// The drafts of `post` whose summary is `value`, by a query on what is stored.
async fn with_summary(app: &TestApp, ada: &Session, value: &str) -> usize {
    let res = app
        .post(
            "/api/documents/query",
            json!({"type": "post", "where": {"summary": {"equals": value}}}),
        )
        .cookie(ada)
        .send()
        .await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);
    res.body["data"].as_array().unwrap().len()
}

async fn renamed_and_removed_fields_keep_working_until_migrated(url: String) {
    let config = config_for(&url);
    let old = TestApp::custom(config.clone(), |b| b.schemas(before())).await;
    let ada = old.sign_up("Ada", "ada@example.com").await;
    let a = create(
        &old,
        &ada,
        json!({"title": "A", "teaser": "TA", "subtitle": "SA", "views": "12"}),
        true,
    )
    .await;
    let b = create(
        &old,
        &ada,
        json!({"title": "B", "teaser": "TB", "subtitle": "SB"}),
        false,
    )
    .await;
    old.app.cms.store().close().await;

    let app = TestApp::custom(config, |b| b.schemas(after())).await;
    let documents = app.app.cms.documents();

    // What the change left behind, by path and kind, naming the documents.
    let leftovers = documents.leftovers(&["post".to_string()]).await.unwrap();
    let found: Vec<(&str, &str, u64)> = leftovers
        .iter()
        .map(|l| (l.path.as_str(), l.kind, l.documents))
        .collect();
    assert_eq!(
        found,
        [
            ("subtitle", "removed", 2),
            ("teaser → summary", "renamed", 2),
            ("views", "retyped", 1)
        ]
    );
    assert_eq!(leftovers[2].examples, std::slice::from_ref(&a));
    // Start-up checked it once in the background; the same schemas are not checked again.
    let mut again = None;
    for _ in 0..100 {
        let left = app.app.cms.check_leftovers().await.unwrap();
        if left.is_empty() {
            again = Some(left);
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    assert_eq!(
        again,
        Some(Vec::new()),
        "checked once per change of the schemas"
    );

    // Reads show the current fields: the renamed one under its new name, the removed one out.
    let doc = get(&app, &ada, &format!("{DOCS}/{a}")).await;
    assert_eq!(
        doc["draftData"],
        json!({"title": "A", "summary": "TA", "views": "12"})
    );
    assert_eq!(doc["publishedData"], doc["draftData"]);
    // Saving what was read works (the retyped value corrected); the old keys do not come back.
    let res = app
        .req(Method::PUT, &format!("{DOCS}/{a}"))
        .json(json!({"data": {"title": "A2", "summary": "TA", "views": 12}}))
        .cookie(&ada)
        .send()
        .await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);
    // A save sending a removed field is still refused: the field does not exist.
    let res = app
        .req(Method::PUT, &format!("{DOCS}/{b}"))
        .json(json!({"data": {"title": "B", "subtitle": "back"}}))
        .cookie(&ada)
        .send()
        .await;
    assert_eq!(res.status, StatusCode::BAD_REQUEST, "{}", res.body);
    // Not yet rewritten: a query on stored data finds B under its old key only.
    assert_eq!(with_summary(&app, &ada, "TB").await, 0);

    // A dry run lists the changes and writes nothing.
    for _ in 0..2 {
        let dry = documents.migrate_content(true, |_| {}).await.unwrap();
        assert_eq!(dry.scanned, 2);
        let mut changed: Vec<(String, Vec<String>, Vec<String>)> = dry
            .changed
            .iter()
            .map(|d| (d.id.clone(), d.renamed.clone(), d.dropped.clone()))
            .collect();
        changed.sort();
        let mut expected = vec![
            // A's draft was saved already; its published copy still holds the old keys.
            (
                a.clone(),
                vec!["teaser → summary".to_string()],
                vec!["subtitle".to_string()],
            ),
            (
                b.clone(),
                vec!["teaser → summary".to_string()],
                vec!["subtitle".to_string()],
            ),
        ];
        expected.sort();
        assert_eq!(changed, expected);
    }

    let versions_before = get(&app, &ada, &format!("{DOCS}/{b}/versions")).await;
    let run = documents.migrate_content(false, |_| {}).await.unwrap();
    assert_eq!(run.changed.len(), 2);
    assert!(
        documents
            .migrate_content(false, |_| {})
            .await
            .unwrap()
            .changed
            .is_empty()
    );
    assert_eq!(
        with_summary(&app, &ada, "TB").await,
        1,
        "B is stored under the new key"
    );

    // B: a new version of the rewritten draft; the one before still holds the removed field.
    let versions = get(&app, &ada, &format!("{DOCS}/{b}/versions")).await;
    let versions = versions.as_array().unwrap();
    assert_eq!(
        versions.len(),
        versions_before.as_array().unwrap().len() + 1
    );
    let newest = versions[0]["versionNumber"].as_i64().unwrap();
    let latest = get(&app, &ada, &format!("{DOCS}/{b}/versions/{newest}")).await;
    assert_eq!(latest["data"], json!({"title": "B", "summary": "TB"}));
    let earlier = get(&app, &ada, &format!("{DOCS}/{b}/versions/{}", newest - 1)).await;
    assert_eq!(
        earlier["data"]["subtitle"], "SB",
        "the removed field's value stays in history"
    );
    assert_eq!(
        earlier["data"]["summary"], "TB",
        "shown under the field's new name"
    );

    // A: the published copy rewritten, still published.
    let doc = get(&app, &ada, &format!("{DOCS}/{a}")).await;
    assert_eq!(
        doc["publishedData"],
        json!({"title": "A", "summary": "TA", "views": "12"})
    );
    assert_eq!(doc["draftData"]["title"], "A2");
    app.stop().await;
}

async fn renamed_from_is_checked_and_shown(url: String) {
    let app = TestApp::custom(config_for(&url), |b| b.schemas(after())).await;
    let ada = app.sign_up("Ada", "ada@example.com").await;
    let res = app.get("/api/schemas/post").cookie(&ada).send().await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);
    let fields = res.body["data"]["fields"].as_array().unwrap().clone();
    let summary = fields.iter().find(|f| f["name"] == "summary").unwrap();
    assert_eq!(summary["renamedFrom"], "teaser");
    app.stop().await;
}

cms_store::both_engines!(
    renamed_and_removed_fields_keep_working_until_migrated,
    renamed_from_is_checked_and_shown,
);
