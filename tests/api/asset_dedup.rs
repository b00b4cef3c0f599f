//! Uploads de-duplicated by SHA-256 within an organization (issue 32 point 8; docs/DECISIONS.md
//! "Uploads are de-duplicated"): the same bytes uploaded again answer the existing asset with
//! 200 and `duplicate: true`, create no record, keep no second object and emit no
//! `asset.created`; another organization gets an asset of its own. The direct-upload door is
//! in `assets_s3.rs` (it needs object storage).

use axum::http::{Method, StatusCode};
use serde_json::Value;

use crate::assets::{ASSETS, mp4, png, upload, uploaded};
use crate::builtin_events::Log;
use crate::support::TestApp;

/// The objects under the local storage directory.
fn stored_objects(app: &TestApp) -> usize {
    std::fs::read_dir(app.data_dir().join("media"))
        .map(|entries| {
            entries
                .filter_map(|e| e.ok())
                .filter(|e| !e.file_name().to_string_lossy().starts_with('.'))
                .count()
        })
        .unwrap_or(0)
}

/// Waits for the background removal of a duplicate's staged object.
async fn settle(app: &TestApp, expected: usize) {
    for _ in 0..100 {
        if stored_objects(app) == expected {
            return;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    assert_eq!(stored_objects(app), expected, "stored objects");
}

fn asset_created(id: &Value) -> (String, Value) {
    (
        "asset.created".to_string(),
        serde_json::json!({ "assetId": id }),
    )
}

async fn the_same_bytes_twice_are_one_asset(url: String) {
    let app = TestApp::start(&url).await;
    let ada = app.sign_up("Ada", "ada@example.com").await;
    let org = app.active_organization(&ada).await;
    let mut log = Log::from_now(&url, &org).await;
    let bytes = png(6, 4, 64);

    let first = upload(&app, &ada, "harbour.png", &bytes, &[("title", "Harbour")]).await;
    assert_eq!(first.status, StatusCode::CREATED, "{}", first.body);
    assert!(
        first.body["data"].get("duplicate").is_none(),
        "a new asset carries no mark: {}",
        first.body
    );
    let id = first.body["data"]["id"].clone();
    assert_eq!(log.next().await, [asset_created(&id)]);

    // Again, under another name and title: the existing asset, as it was.
    let again = upload(&app, &ada, "copy.png", &bytes, &[("title", "Copy")]).await;
    assert_eq!(again.status, StatusCode::OK, "{}", again.body);
    assert_eq!(again.body["success"], true);
    let data = &again.body["data"];
    assert_eq!(data["duplicate"], true);
    assert_eq!(data["id"], id);
    assert_eq!(data["title"], "Harbour");
    assert_eq!(data["filename"], "harbour.png");
    assert_eq!(data["referenceCount"], 0);
    log.nothing_new().await;
    settle(&app, 1).await;
    let list = app.get(ASSETS).cookie(&ada).send().await;
    assert_eq!(list.body["pagination"]["total"], 1, "{}", list.body);
    // A read of the asset shows no mark: it belongs to the upload's answer only.
    let read = app
        .get(&format!("{ASSETS}/{}", id.as_str().unwrap()))
        .cookie(&ada)
        .send()
        .await;
    assert!(
        read.body["data"].get("duplicate").is_none(),
        "{}",
        read.body
    );

    // Different bytes are a new asset.
    let other = uploaded(&app, &ada, "harbour.png", &png(6, 4, 65)).await;
    assert_ne!(other["id"], id);

    // Another organization has no asset with these bytes: it gets one of its own.
    let res = app
        .post(
            "/api/organizations",
            serde_json::json!({"name": "Brief", "slug": "brief"}),
        )
        .cookie(&ada)
        .send()
        .await;
    let brief = res.body["data"]["id"].as_str().unwrap().to_string();
    app.post(
        "/api/organizations/switch",
        serde_json::json!({"organizationId": brief}),
    )
    .cookie(&ada)
    .send()
    .await;
    let theirs = upload(&app, &ada, "harbour.png", &bytes, &[]).await;
    assert_eq!(theirs.status, StatusCode::CREATED, "{}", theirs.body);
    assert_ne!(theirs.body["data"]["id"], id);
    assert_eq!(theirs.body["data"]["organizationId"], brief);
    app.stop().await;
}

async fn a_poster_already_uploaded_is_used_as_it_is(url: String) {
    let app = TestApp::start(&url).await;
    let ada = app.sign_up("Ada", "ada@example.com").await;
    let org = app.active_organization(&ada).await;
    let still = png(64, 36, 40);
    let image = uploaded(&app, &ada, "still.png", &still).await;
    let video = uploaded(&app, &ada, "clip.mp4", &mp4()).await;
    let mut log = Log::from_now(&url, &org).await;
    let res = app
        .req(
            Method::POST,
            &format!("{ASSETS}/{}/poster", video["id"].as_str().unwrap()),
        )
        .cookie(&ada)
        .multipart(&[], Some(("file", "poster.png", &still)))
        .send()
        .await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);
    assert_eq!(res.body["data"]["posterId"], image["id"]);
    // The video changed; no asset was created.
    assert_eq!(
        log.next().await,
        [(
            "asset.updated".to_string(),
            serde_json::json!({ "assetId": video["id"] })
        )]
    );
    settle(&app, 2).await;
    app.stop().await;
}

cms_store::both_engines!(
    the_same_bytes_twice_are_one_asset,
    a_poster_already_uploaded_is_used_as_it_is,
);
