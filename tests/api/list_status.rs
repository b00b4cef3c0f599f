//! The list's `status=changed` (issue 32, point 6): documents with unpublished changes, that
//! is what Publish would change: never published, or a draft that differs from the published
//! copy. `draft` and `published` keep their meaning (without / with a published copy).

use axum::http::{Method, StatusCode};
use serde_json::{Value, json};

use crate::support::{Session, TestApp};

const DOCS: &str = "/api/documents";

async fn create(app: &TestApp, s: &Session, data: Value, publish: bool) -> String {
    let res = app
        .post(
            DOCS,
            json!({"type": "post", "data": data, "publish": publish}),
        )
        .cookie(s)
        .send()
        .await;
    assert_eq!(res.status, StatusCode::CREATED, "{}", res.body);
    res.body["data"]["id"].as_str().unwrap().to_string()
}

async fn save(app: &TestApp, s: &Session, id: &str, data: Value) {
    let res = app
        .req(Method::PUT, &format!("{DOCS}/{id}"))
        .json(json!({ "data": data }))
        .cookie(s)
        .send()
        .await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);
}

/// The titles of a list answer, checking it succeeded.
async fn listed(app: &TestApp, s: &Session, query: &str) -> Vec<String> {
    let res = app.get(&format!("{DOCS}?{query}")).cookie(s).send().await;
    assert_eq!(res.status, StatusCode::OK, "{query}: {}", res.body);
    let titles: Vec<String> = res.body["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["draftData"]["title"].as_str().unwrap().to_string())
        .collect();
    if !query.contains("pageSize") {
        assert_eq!(
            res.body["pagination"]["total"],
            titles.len(),
            "{}",
            res.body
        );
    }
    titles
}

async fn changed_lists_what_publish_would_change(url: String) {
    let app = TestApp::start(&url).await;
    let ada = app.sign_up("Ada", "ada@example.com").await;
    // Nested values and several keys: equal copies compare equal whatever the engine stores.
    let rich =
        json!({"title": "B unchanged", "slug": {"current": "b"}, "tags": ["x", "y"], "views": 3});
    create(&app, &ada, json!({"title": "A never published"}), false).await;
    create(&app, &ada, rich.clone(), true).await;
    let edited = create(&app, &ada, json!({"title": "C edited", "views": 1}), true).await;
    save(
        &app,
        &ada,
        &edited,
        json!({"title": "C edited", "views": 2}),
    )
    .await;
    // Saved back to what is published: no change left to publish.
    let reverted = create(&app, &ada, json!({"title": "D reverted", "views": 1}), true).await;
    save(
        &app,
        &ada,
        &reverted,
        json!({"title": "D reverted", "views": 5}),
    )
    .await;
    save(
        &app,
        &ada,
        &reverted,
        json!({"views": 1, "title": "D reverted"}),
    )
    .await;
    // Edited, then published again.
    let republished = create(&app, &ada, json!({"title": "E republished"}), true).await;
    save(
        &app,
        &ada,
        &republished,
        json!({"title": "E republished", "views": 9}),
    )
    .await;
    let res = app
        .post(&format!("{DOCS}/{republished}/publish"), json!({}))
        .cookie(&ada)
        .send()
        .await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);

    assert_eq!(
        listed(&app, &ada, "type=post&status=changed&sort=title").await,
        ["A never published", "C edited"]
    );
    // The other statuses are as they were: by the published copy alone.
    assert_eq!(
        listed(&app, &ada, "type=post&status=draft&sort=title").await,
        ["A never published"]
    );
    assert_eq!(
        listed(&app, &ada, "type=post&status=published&sort=title").await,
        ["B unchanged", "C edited", "D reverted", "E republished"]
    );
    // It pages and sorts like any list, and combines with the full-text search.
    assert_eq!(
        listed(
            &app,
            &ada,
            "type=post&status=changed&sort=-title&pageSize=1"
        )
        .await,
        ["C edited"]
    );
    assert_eq!(
        listed(&app, &ada, "type=post&status=changed&search=edited").await,
        ["C edited"]
    );

    // Whether a draft differs is not for a reader of the published copy to learn.
    let res = app
        .get(&format!(
            "{DOCS}?type=post&status=changed&perspective=published"
        ))
        .cookie(&ada)
        .send()
        .await;
    res.assert_handler_error(StatusCode::BAD_REQUEST, "Bad Request");
    assert!(
        res.body["message"]
            .as_str()
            .unwrap()
            .contains("status=changed"),
        "{}",
        res.body
    );
    let res = app
        .get(&format!("{DOCS}?type=post&status=unsaved"))
        .cookie(&ada)
        .send()
        .await;
    assert_eq!(res.status, StatusCode::BAD_REQUEST, "{}", res.body);

    // The OpenAPI document names the new value.
    let res = app.get("/api/openapi.json").cookie(&ada).send().await;
    assert_eq!(res.status, StatusCode::OK);
    let status = res.body["paths"]["/api/documents"]["get"]["parameters"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["name"] == "status")
        .expect("the list documents `status`")
        .clone();
    assert_eq!(
        status["schema"]["enum"],
        json!(["draft", "published", "changed"]),
        "{status}"
    );
    app.stop().await;
}

cms_store::both_engines!(changed_lists_what_publish_would_change);
