//! A singleton's one row (SPEC.md "Singleton types"; issue 32 point 8; docs/DECISIONS.md
//! "Opening a singleton writes no history"): created lazily on its first read so reads never
//! 404, but reading is no edit, so that creation writes no version and emits no event; the
//! first save writes the first version and a `document.updated`.

use axum::http::{Method, StatusCode};
use serde_json::json;

use crate::builtin_events::{Log, document};
use crate::support::TestApp;

const DOCS: &str = "/api/documents";

async fn opening_a_singleton_writes_no_history(url: String) {
    let app = TestApp::start(&url).await;
    let ada = app.sign_up("Ada", "ada@example.com").await;
    let org = app.active_organization(&ada).await;
    let mut log = Log::from_now(&url, &org).await;

    // Read as the admin opens it (the list), twice, and by id: one row, no 404.
    let res = app
        .get("/api/documents?type=siteSettings")
        .cookie(&ada)
        .send()
        .await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);
    let id = res.body["data"][0]["id"].as_str().unwrap().to_string();
    assert_eq!(res.body["data"][0]["singleton"], true);
    let again = app
        .get("/api/documents?type=siteSettings")
        .cookie(&ada)
        .send()
        .await;
    assert_eq!(again.body["data"][0]["id"], id.as_str());
    let res = app.get(&format!("{DOCS}/{id}")).cookie(&ada).send().await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);

    // No history entry and no content event for the reads.
    let versions = format!("{DOCS}/{id}/versions");
    let res = app.get(&versions).cookie(&ada).send().await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);
    assert_eq!(res.body["data"], json!([]), "opening wrote no version");
    assert_eq!(res.body["total"], 0);
    log.nothing_new().await;

    // The first save is the first version and the first event.
    let res = app
        .req(Method::PUT, &format!("{DOCS}/{id}"))
        .json(json!({"data": {"siteName": "Acme"}}))
        .cookie(&ada)
        .send()
        .await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);
    assert_eq!(res.body["data"]["draftData"]["siteName"], "Acme");
    let res = app.get(&versions).cookie(&ada).send().await;
    assert_eq!(res.body["total"], 1, "{}", res.body);
    assert_eq!(res.body["data"][0]["eventType"], "draft");
    assert_eq!(
        log.next().await,
        [document("document.updated", &id, "siteSettings")]
    );
    app.stop().await;
}

cms_store::both_engines!(opening_a_singleton_writes_no_history);
