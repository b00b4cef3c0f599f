//! Assets end to end on S3-compatible storage (a real moto server on loopback): upload through
//! the API, delivery with ranges, delete, and a presigned direct upload followed by confirm.

use axum::http::{Method, StatusCode};
use serde_json::json;

use crate::assets::{ASSETS, png, upload, uploaded};
use crate::s3::S3Server;
use crate::support::{TestApp, config_for};

pub(crate) fn s3_config(url: &str, s3: &S3Server, max_upload_bytes: u64) -> cms::Config {
    let mut config = config_for(url);
    config.storage.kind = "s3".into();
    config.storage.bucket = Some(s3.bucket.clone());
    config.storage.endpoint = Some(s3.endpoint.clone());
    config.storage.region = "us-east-1".into();
    config.storage.access_key_id = Some("test".into());
    config.storage.secret_access_key = Some("test".into());
    config.storage.force_path_style = true;
    config.storage.direct_upload = true;
    config.assets.max_upload_bytes = max_upload_bytes;
    config
}

/// Whether the bucket holds an object under `key`.
async fn in_bucket(s3: &S3Server, key: &str) -> bool {
    bucket_keys(s3).await.iter().any(|k| k == key)
}

async fn uploads_are_stored_served_and_deleted_on_s3(url: String) {
    let s3 = S3Server::start().await;
    let app = TestApp::with(s3_config(&url, &s3, 20 * 1024 * 1024), None).await;
    let ada = app.sign_up("Ada", "ada@example.com").await;
    // Larger than one multipart part, so the upload goes through S3 multipart.
    let bytes = png(800, 600, 9 * 1024 * 1024);
    let asset = uploaded(&app, &ada, "big.png", &bytes).await;
    let id = asset["id"].as_str().unwrap().to_string();
    assert_eq!(asset["width"], 800);
    assert_eq!(asset["size"], bytes.len());
    assert!(
        in_bucket(&s3, &id).await,
        "the object is named by the asset id"
    );

    let url = asset["url"].as_str().unwrap();
    let media = app.get(url).send().await;
    assert_eq!(media.status, StatusCode::OK);
    assert!(
        media.bytes.as_ref() == bytes.as_slice(),
        "the bytes come back"
    );
    let part = app
        .get(url)
        .header("range", "bytes=1000000-1000099")
        .send()
        .await;
    assert_eq!(part.status, StatusCode::PARTIAL_CONTENT);
    assert_eq!(part.bytes.as_ref(), &bytes[1_000_000..1_000_100]);

    // A refused upload (streamed to the bucket before the refusal) leaves nothing behind.
    let res = upload(
        &app,
        &ada,
        "x.png",
        &png(1, 1, 10),
        &[("organizationId", "elsewhere")],
    )
    .await;
    res.assert_access_refusal(StatusCode::FORBIDDEN, "Forbidden");
    for _ in 0..100 {
        if bucket_keys(&s3).await == vec![id.clone()] {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    assert_eq!(bucket_keys(&s3).await, vec![id.clone()]);

    let res = app
        .req(Method::DELETE, &format!("{ASSETS}/{id}"))
        .cookie(&ada)
        .send()
        .await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);
    assert!(
        !in_bucket(&s3, &id).await,
        "the object is gone with the asset"
    );
    assert_eq!(app.get(url).send().await.status, StatusCode::NOT_FOUND);
    app.stop().await;
}

/// The keys of every object in the bucket.
pub(crate) async fn bucket_keys(s3: &S3Server) -> Vec<String> {
    let listing = reqwest::Client::new()
        .get(format!("{}/{}?list-type=2", s3.endpoint, s3.bucket))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    listing
        .split("<Key>")
        .skip(1)
        .filter_map(|rest| rest.split("</Key>").next())
        .map(str::to_string)
        .collect()
}

async fn direct_uploads_are_presigned_and_confirmed(url: String) {
    let s3 = S3Server::start().await;
    let app = TestApp::with(s3_config(&url, &s3, 64 * 1024), None).await;
    let ada = app.sign_up("Ada", "ada@example.com").await;
    let bytes = png(32, 16, 2000);
    let res = app
        .post(
            &format!("{ASSETS}/upload-url"),
            json!({"filename": "../direct upload.jpg", "mimeType": "image/jpeg", "size": bytes.len()}),
        )
        .cookie(&ada)
        .send()
        .await;
    assert_eq!(res.status, StatusCode::CREATED, "{}", res.body);
    let ticket = res.body["data"].clone();
    let asset_id = ticket["assetId"].as_str().unwrap().to_string();
    let upload_url = ticket["uploadUrl"].as_str().unwrap().to_string();
    assert!(upload_url.starts_with(&s3.endpoint), "{upload_url}");
    assert!(ticket["expiresAt"].is_string());

    // Confirming before the bytes are there: 400, and the upload stays pending.
    let confirm = |id: String| {
        app.post(&format!("{ASSETS}/confirm"), json!({ "assetId": id }))
            .cookie(&ada)
            .send()
    };
    confirm(asset_id.clone())
        .await
        .assert_handler_error(StatusCode::BAD_REQUEST, "Bad Request");

    // The client puts the bytes straight into the bucket.
    let put = reqwest::Client::new()
        .put(&upload_url)
        .body(bytes.clone())
        .send()
        .await
        .unwrap();
    assert!(put.status().is_success(), "presigned PUT: {}", put.status());

    let res = confirm(asset_id.clone()).await;
    assert_eq!(res.status, StatusCode::CREATED, "{}", res.body);
    let asset = &res.body["data"];
    assert_eq!(asset["id"], asset_id);
    // What the bytes are, not what was announced.
    assert_eq!(asset["mimeType"], "image/png");
    assert_eq!(asset["width"], 32);
    assert_eq!(asset["size"], bytes.len());
    assert_eq!(asset["filename"], "direct-upload.jpg");
    let media = app.get(asset["url"].as_str().unwrap()).send().await;
    assert_eq!(media.status, StatusCode::OK);
    assert_eq!(media.bytes.as_ref(), bytes.as_slice());
    // Once only: the asset was created once, with its event.
    confirm(asset_id.clone())
        .await
        .assert_handler_error(StatusCode::NOT_FOUND, "Not Found");
    let created: Vec<_> = crate::builtin_events::logged(&url)
        .await
        .into_iter()
        .filter(|e| e.event_type == "asset.created")
        .collect();
    assert_eq!(created.len(), 1, "{created:?}");
    assert_eq!(created[0].payload, json!({ "assetId": asset_id }));
    assert!(created[0].outboxed);
    confirm("unknown".into())
        .await
        .assert_handler_error(StatusCode::NOT_FOUND, "Not Found");

    // The same bytes again: confirm answers the existing asset (200, `duplicate`), creates
    // nothing, and the second object leaves the bucket.
    let res = app
        .post(
            &format!("{ASSETS}/upload-url"),
            json!({"filename": "again.png", "mimeType": "image/png", "size": bytes.len()}),
        )
        .cookie(&ada)
        .send()
        .await;
    let again = res.body["data"]["assetId"].as_str().unwrap().to_string();
    let put = reqwest::Client::new()
        .put(res.body["data"]["uploadUrl"].as_str().unwrap())
        .body(bytes.clone())
        .send()
        .await
        .unwrap();
    assert!(put.status().is_success());
    let res = confirm(again.clone()).await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);
    assert_eq!(res.body["data"]["id"], asset_id);
    assert_eq!(res.body["data"]["duplicate"], true);
    let mut swept = false;
    for _ in 0..100 {
        if !in_bucket(&s3, &again).await {
            swept = true;
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    assert!(swept, "the duplicate's object is removed");
    let created = crate::builtin_events::logged(&url)
        .await
        .into_iter()
        .filter(|e| e.event_type == "asset.created")
        .count();
    assert_eq!(created, 1, "a duplicate emits no asset.created");

    // Announced past the limit: 413 at once. Sent past the limit: 413 at confirm, and the
    // object is removed.
    app.post(
        &format!("{ASSETS}/upload-url"),
        json!({"filename": "big.bin", "mimeType": "application/octet-stream", "size": 64 * 1024 + 1}),
    )
    .cookie(&ada)
    .send()
    .await
    .assert_handler_error(StatusCode::PAYLOAD_TOO_LARGE, "Payload Too Large");
    let res = app
        .post(
            &format!("{ASSETS}/upload-url"),
            json!({"filename": "small.bin", "mimeType": "application/octet-stream", "size": 10}),
        )
        .cookie(&ada)
        .send()
        .await;
    let liar = res.body["data"]["assetId"].as_str().unwrap().to_string();
    let put = reqwest::Client::new()
        .put(res.body["data"]["uploadUrl"].as_str().unwrap())
        .body(vec![1u8; 64 * 1024 + 1])
        .send()
        .await
        .unwrap();
    assert!(put.status().is_success());
    confirm(liar.clone())
        .await
        .assert_handler_error(StatusCode::PAYLOAD_TOO_LARGE, "Payload Too Large");
    assert!(!in_bucket(&s3, &liar).await);
    confirm(liar)
        .await
        .assert_handler_error(StatusCode::NOT_FOUND, "Not Found");

    // An upload left unconfirmed past its 15 minutes: confirm is 404, and announcing the next
    // upload sweeps the abandoned object out of the bucket.
    let res = app
        .post(
            &format!("{ASSETS}/upload-url"),
            json!({"filename": "late.png", "mimeType": "image/png", "size": 30}),
        )
        .cookie(&ada)
        .send()
        .await;
    let late = res.body["data"]["assetId"].as_str().unwrap().to_string();
    let put = reqwest::Client::new()
        .put(res.body["data"]["uploadUrl"].as_str().unwrap())
        .body(png(1, 1, 5))
        .send()
        .await
        .unwrap();
    assert!(put.status().is_success());
    app.clock.advance_millis(16 * 60 * 1000);
    confirm(late.clone())
        .await
        .assert_handler_error(StatusCode::NOT_FOUND, "Not Found");
    assert!(in_bucket(&s3, &late).await);
    let res = app
        .post(
            &format!("{ASSETS}/upload-url"),
            json!({"filename": "next.png", "mimeType": "image/png", "size": 30}),
        )
        .cookie(&ada)
        .send()
        .await;
    assert_eq!(res.status, StatusCode::CREATED, "{}", res.body);
    assert!(
        !in_bucket(&s3, &late).await,
        "the abandoned object is swept"
    );

    // Bad bodies and missing capabilities.
    for body in [
        json!({"filename": "a", "mimeType": "x"}),
        json!({"filename": "", "mimeType": "x", "size": 1}),
        json!({"filename": "a", "mimeType": "x", "size": 0}),
        json!({"filename": "a", "mimeType": "x", "size": 1, "extra": true}),
    ] {
        app.post(&format!("{ASSETS}/upload-url"), body)
            .cookie(&ada)
            .send()
            .await
            .assert_handler_error(StatusCode::BAD_REQUEST, "Bad Request");
    }
    let reader = app
        .create_key(&ada, json!({"name": "r", "permissions": ["read"]}))
        .await;
    app.post(
        &format!("{ASSETS}/upload-url"),
        json!({"filename": "a", "mimeType": "x", "size": 1}),
    )
    .key(&reader)
    .send()
    .await
    .assert_access_refusal(StatusCode::FORBIDDEN, "Forbidden");
    app.stop().await;
}

cms_store::both_engines!(
    uploads_are_stored_served_and_deleted_on_s3,
    direct_uploads_are_presigned_and_confirmed,
);
