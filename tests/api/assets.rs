//! Assets through HTTP: upload, list, metadata, references, delete, delivery at /media with
//! caching, ranges and signed links (SPEC.md "Asset", "Endpoints: Assets", Authentication point
//! 10; CONTRACT.md sections 6 and 12). Local disk storage; the S3 path is in `s3.rs`.

use axum::http::{Method, StatusCode};
use serde_json::{Value, json};

use crate::support::{Reply, Session, TestApp, config_for};

pub const ASSETS: &str = "/api/assets";

/// A PNG header of `width` x `height` followed by `extra` bytes of (unparsed) data: enough for
/// sniffing and the header reader.
pub fn png(width: u32, height: u32, extra: usize) -> Vec<u8> {
    let mut bytes = vec![0x89, b'P', b'N', b'G', 0x0d, 0x0a, 0x1a, 0x0a];
    bytes.extend_from_slice(&[0, 0, 0, 13]);
    bytes.extend_from_slice(b"IHDR");
    bytes.extend_from_slice(&width.to_be_bytes());
    bytes.extend_from_slice(&height.to_be_bytes());
    bytes.extend_from_slice(&[8, 6, 0, 0, 0, 0, 0, 0, 0]);
    bytes.extend((0..extra).map(|i| (i % 251) as u8));
    bytes
}

/// The start of an MP4 file (an `ftyp` box).
pub fn mp4() -> Vec<u8> {
    let mut bytes = vec![0, 0, 0, 0x18];
    bytes.extend_from_slice(b"ftypmp42");
    bytes.extend_from_slice(&[0; 12]);
    bytes.extend_from_slice(&[7; 1000]);
    bytes
}

pub async fn upload(
    app: &TestApp,
    s: &Session,
    name: &str,
    bytes: &[u8],
    fields: &[(&str, &str)],
) -> Reply {
    app.req(Method::POST, ASSETS)
        .cookie(s)
        .multipart(fields, Some(("file", name, bytes)))
        .send()
        .await
}

pub async fn uploaded(app: &TestApp, s: &Session, name: &str, bytes: &[u8]) -> Value {
    let res = upload(app, s, name, bytes, &[]).await;
    assert_eq!(res.status, StatusCode::CREATED, "{}", res.body);
    res.body["data"].clone()
}

fn id(asset: &Value) -> String {
    asset["id"].as_str().unwrap().to_string()
}

fn sha256_hex(bytes: &[u8]) -> String {
    use sha2::{Digest, Sha256};
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// The files under the local storage directory.
fn stored_files(app: &TestApp) -> Vec<String> {
    let dir = app.data_dir().join("media");
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .map(|entries| {
            entries
                .filter_map(|e| e.ok())
                .map(|e| e.file_name().to_string_lossy().to_string())
                .filter(|n| !n.starts_with('.'))
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    names
}

/// Waits for the background removal of a refused upload's object.
async fn settle(app: &TestApp, expected: &[String]) {
    for _ in 0..100 {
        if stored_files(app) == expected {
            return;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    assert_eq!(stored_files(app), expected, "stored objects");
}

async fn uploads_are_sniffed_recorded_and_served(url: String) {
    let app = TestApp::start(&url).await;
    let ada = app.sign_up("Ada", "ada@example.com").await;
    let bytes = png(640, 480, 5000);
    let res = upload(
        &app,
        &ada,
        "Holiday photo.txt",
        &bytes,
        &[
            ("alt", "A beach"),
            ("description", "Summer"),
            ("creditLine", "Ada"),
        ],
    )
    .await;
    assert_eq!(res.status, StatusCode::CREATED, "{}", res.body);
    let asset = &res.body["data"];
    let asset_id = id(asset);
    // The content decides the type, not the name or the part's declared type.
    assert_eq!(asset["mimeType"], "image/png");
    assert_eq!(asset["assetType"], "image");
    assert_eq!(asset["width"], 640);
    assert_eq!(asset["height"], 480);
    assert_eq!(asset["size"], bytes.len());
    assert_eq!(asset["sha256"], sha256_hex(&bytes));
    assert_eq!(asset["filename"], "Holiday-photo.txt");
    assert_eq!(asset["title"], "Holiday photo.txt", "the default title");
    assert_eq!(asset["alt"], "A beach");
    assert_eq!(asset["description"], "Summer");
    assert_eq!(asset["creditLine"], "Ada");
    assert_eq!(asset["referenceCount"], 0);
    assert_eq!(asset["createdBy"], ada.user["id"]);
    assert_eq!(asset["organizationId"], app.active_organization(&ada).await);
    let url = format!("/media/{asset_id}/Holiday-photo.txt");
    assert_eq!(asset["url"], url);

    let got = app
        .get(&format!("{ASSETS}/{asset_id}"))
        .cookie(&ada)
        .send()
        .await;
    assert_eq!(got.status, StatusCode::OK);
    assert_eq!(&got.body["data"], asset);

    // Delivery needs no credentials for a public asset.
    let media = app.get(&url).send().await;
    assert_eq!(media.status, StatusCode::OK);
    assert_eq!(media.bytes.as_ref(), bytes.as_slice());
    assert_eq!(media.header("content-type"), Some("image/png"));
    assert_eq!(
        media.header("content-length"),
        Some(bytes.len().to_string().as_str())
    );
    assert_eq!(
        media.header("cache-control"),
        Some("public, max-age=31536000, immutable")
    );
    let etag = format!("\"{}\"", sha256_hex(&bytes));
    assert_eq!(media.header("etag"), Some(etag.as_str()));
    assert_eq!(media.header("accept-ranges"), Some("bytes"));
    assert_eq!(media.header("x-content-type-options"), Some("nosniff"));
    assert!(
        media
            .header("content-security-policy")
            .unwrap()
            .contains("sandbox")
    );
    assert_eq!(
        media.header("content-disposition"),
        Some("inline; filename=\"Holiday-photo.txt\"")
    );

    // Conditional requests.
    let again = app.get(&url).header("if-none-match", &etag).send().await;
    assert_eq!(again.status, StatusCode::NOT_MODIFIED);
    assert!(again.bytes.is_empty());
    assert_eq!(again.header("etag"), Some(etag.as_str()));
    let stale = app
        .get(&url)
        .header("if-none-match", "\"other\"")
        .send()
        .await;
    assert_eq!(stale.status, StatusCode::OK);

    // Ranges.
    let part = app.get(&url).header("range", "bytes=10-19").send().await;
    assert_eq!(part.status, StatusCode::PARTIAL_CONTENT);
    assert_eq!(part.bytes.as_ref(), &bytes[10..20]);
    let total = bytes.len();
    assert_eq!(
        part.header("content-range"),
        Some(format!("bytes 10-19/{total}").as_str())
    );
    assert_eq!(part.header("content-length"), Some("10"));
    let tail = app.get(&url).header("range", "bytes=-7").send().await;
    assert_eq!(tail.status, StatusCode::PARTIAL_CONTENT);
    assert_eq!(tail.bytes.as_ref(), &bytes[total - 7..]);
    let open = app.get(&url).header("range", "bytes=5000-").send().await;
    assert_eq!(open.bytes.as_ref(), &bytes[5000..]);
    let beyond = app
        .get(&url)
        .header("range", &format!("bytes={total}-"))
        .send()
        .await;
    assert_eq!(beyond.status, StatusCode::RANGE_NOT_SATISFIABLE);
    assert_eq!(
        beyond.header("content-range"),
        Some(format!("bytes */{total}").as_str())
    );
    // An If-Range for another version gets the whole file.
    let changed = app
        .get(&url)
        .header("range", "bytes=0-0")
        .header("if-range", "\"older\"")
        .send()
        .await;
    assert_eq!(changed.status, StatusCode::OK);
    assert_eq!(changed.bytes.len(), total);
    let head = app.req(Method::HEAD, &url).send().await;
    assert_eq!(head.status, StatusCode::OK);
    assert!(head.bytes.is_empty());

    // Another name, or another id, is not this asset.
    let wrong_name = app
        .get(&format!("/media/{asset_id}/other.png"))
        .send()
        .await;
    wrong_name.assert_handler_error(StatusCode::NOT_FOUND, "Not Found");
    let unknown = app.get("/media/0000/x.png").send().await;
    unknown.assert_handler_error(StatusCode::NOT_FOUND, "Not Found");
    app.stop().await;
}

async fn active_content_is_served_inert(url: String) {
    let app = TestApp::start(&url).await;
    let ada = app.sign_up("Ada", "ada@example.com").await;
    let svg = b"<?xml version=\"1.0\"?><svg xmlns=\"http://www.w3.org/2000/svg\"><script>alert(1)</script></svg>";
    let asset = uploaded(&app, &ada, "logo.svg", svg).await;
    assert_eq!(asset["mimeType"], "image/svg+xml");
    assert_eq!(asset["assetType"], "image");
    assert_eq!(asset["width"], Value::Null);
    let media = app.get(asset["url"].as_str().unwrap()).send().await;
    assert_eq!(media.header("content-type"), Some("image/svg+xml"));
    assert_eq!(
        media.header("content-disposition"),
        Some("attachment; filename=\"logo.svg\"")
    );
    assert_eq!(media.header("x-content-type-options"), Some("nosniff"));

    // HTML that claims to be a PNG is HTML, and downloads.
    let html = b"<!DOCTYPE html><html><body><script>document.cookie</script></body></html>";
    let asset = uploaded(&app, &ada, "cat.png", html).await;
    assert_eq!(asset["mimeType"], "text/html");
    assert_eq!(asset["assetType"], "file");
    let media = app.get(asset["url"].as_str().unwrap()).send().await;
    assert_eq!(
        media.header("content-type"),
        Some("text/html; charset=utf-8")
    );
    assert_eq!(
        media.header("content-disposition"),
        Some("attachment; filename=\"cat.png\"")
    );
    app.stop().await;
}

async fn bad_uploads_are_refused_and_leave_nothing(url: String) {
    let mut config = config_for(&url);
    config.assets.max_upload_bytes = 4096;
    let app = TestApp::with(config, None).await;
    let ada = app.sign_up("Ada", "ada@example.com").await;
    let before = stored_files(&app);

    // Not a form: 415.
    let res = app
        .post(ASSETS, json!({"file": "x"}))
        .cookie(&ada)
        .send()
        .await;
    res.assert_handler_error(StatusCode::UNSUPPORTED_MEDIA_TYPE, "Unsupported Media Type");
    let res = app
        .req(Method::POST, ASSETS)
        .cookie(&ada)
        .raw("image/png", png(1, 1, 10))
        .send()
        .await;
    res.assert_handler_error(StatusCode::UNSUPPORTED_MEDIA_TYPE, "Unsupported Media Type");
    // A form without a file: 400.
    let res = app
        .req(Method::POST, ASSETS)
        .cookie(&ada)
        .multipart(&[("title", "nothing")], None)
        .send()
        .await;
    let message = res.assert_handler_error(StatusCode::BAD_REQUEST, "Bad Request");
    assert!(message.contains("file"), "{message}");
    // An empty file, two files, an unknown field, a broken form: 400.
    let res = upload(&app, &ada, "empty.txt", b"", &[]).await;
    res.assert_handler_error(StatusCode::BAD_REQUEST, "Bad Request");
    let res = upload(&app, &ada, "a.png", &png(1, 1, 10), &[("colour", "red")]).await;
    res.assert_handler_error(StatusCode::BAD_REQUEST, "Bad Request");
    let res = app
        .req(Method::POST, ASSETS)
        .cookie(&ada)
        .raw("multipart/form-data; boundary=xyz", "--xyz\r\nbroken")
        .send()
        .await;
    res.assert_handler_error(StatusCode::BAD_REQUEST, "Bad Request");
    // Past the limit: 413.
    let res = upload(&app, &ada, "big.png", &png(10, 10, 5000), &[]).await;
    res.assert_handler_error(StatusCode::PAYLOAD_TOO_LARGE, "Payload Too Large");
    // Another organization named: refused after the file was streamed, and its object removed.
    let res = upload(
        &app,
        &ada,
        "a.png",
        &png(1, 1, 10),
        &[("organizationId", "someone-else")],
    )
    .await;
    res.assert_access_refusal(StatusCode::FORBIDDEN, "Forbidden");
    // No credentials: 401; a read-only key: 403.
    let res = app
        .req(Method::POST, ASSETS)
        .multipart(&[], Some(("file", "a.png", &png(1, 1, 10))))
        .send()
        .await;
    res.assert_access_refusal(StatusCode::UNAUTHORIZED, "Unauthorized");
    let reader = app
        .create_key(&ada, json!({"name": "r", "permissions": ["read"]}))
        .await;
    let res = app
        .req(Method::POST, ASSETS)
        .key(&reader)
        .multipart(&[], Some(("file", "a.png", &png(1, 1, 10))))
        .send()
        .await;
    res.assert_access_refusal(StatusCode::FORBIDDEN, "Forbidden");
    settle(&app, &before).await;
    let list = app.get(ASSETS).cookie(&ada).send().await;
    assert_eq!(list.body["pagination"]["total"], 0, "{}", list.body);

    // The organization named may be the caller's own.
    let own = app.active_organization(&ada).await;
    let res = upload(
        &app,
        &ada,
        "a.png",
        &png(1, 1, 10),
        &[("organizationId", &own)],
    )
    .await;
    assert_eq!(res.status, StatusCode::CREATED, "{}", res.body);
    app.stop().await;
}

async fn file_names_are_reduced_to_safe_names(url: String) {
    let app = TestApp::start(&url).await;
    let ada = app.sign_up("Ada", "ada@example.com").await;
    // Each file differs (`i`): the same bytes twice would be one asset.
    for (i, (sent, kept)) in [
        ("../../../etc/passwd", "passwd"),
        ("..\\..\\windows\\win.ini", "win.ini"),
        ("..", "file"),
        (".htaccess", "htaccess"),
        ("report;Set-Cookie=a.pdf", "report-Set-Cookie-a.pdf"),
        ("évian quoted.png", "vian-quoted.png"),
        ("<script>.png", "script-.png"),
    ]
    .into_iter()
    .enumerate()
    {
        let asset = uploaded(&app, &ada, sent, &png(1, 1, 10 + i)).await;
        assert_eq!(asset["filename"], kept, "{sent:?}");
        let url = format!("/media/{}/{kept}", id(&asset));
        assert_eq!(asset["url"], url);
        let media = app.get(&url).send().await;
        assert_eq!(media.status, StatusCode::OK, "{sent:?}");
        assert_eq!(
            media.header("content-disposition"),
            Some(format!("inline; filename=\"{kept}\"").as_str())
        );
        assert!(media.header("set-cookie").is_none());
    }
    // Every object is inside the storage directory, named by its asset id.
    for name in stored_files(&app) {
        assert!(uuid::Uuid::parse_str(&name).is_ok(), "{name}");
    }
    app.stop().await;
}

async fn lists_filter_search_and_paginate(url: String) {
    let app = TestApp::start(&url).await;
    let ada = app.sign_up("Ada", "ada@example.com").await;
    let a = upload(
        &app,
        &ada,
        "a.png",
        &png(2, 2, 10),
        &[("title", "Red Barn"), ("description", "farm at dawn")],
    )
    .await;
    let b = upload(
        &app,
        &ada,
        "b.txt",
        b"plain words",
        &[("title", "Notes 100%"), ("description", "a barn inventory")],
    )
    .await;
    let c = upload(
        &app,
        &ada,
        "c.svg",
        b"<svg xmlns=\"http://www.w3.org/2000/svg\"/>",
        &[("title", "Logo")],
    )
    .await;
    for r in [&a, &b, &c] {
        assert_eq!(r.status, StatusCode::CREATED, "{}", r.body);
    }
    let titles = |res: &Reply| -> Vec<String> {
        res.body["data"]
            .as_array()
            .unwrap_or_else(|| panic!("{}", res.body))
            .iter()
            .map(|a| a["title"].as_str().unwrap().to_string())
            .collect()
    };
    let list = |query: &str| app.get(&format!("{ASSETS}?{query}")).cookie(&ada).send();
    let all = list("").await;
    assert_eq!(
        titles(&all),
        ["Logo", "Notes 100%", "Red Barn"],
        "newest first"
    );
    assert_eq!(
        all.body["pagination"],
        json!({"total": 3, "page": 1, "pageSize": 20, "totalPages": 1,
               "hasNextPage": false, "hasPrevPage": false})
    );
    assert_eq!(titles(&list("assetType=image").await), ["Logo", "Red Barn"]);
    assert_eq!(titles(&list("assetType=file").await), ["Notes 100%"]);
    assert_eq!(titles(&list("mimeType=image/png").await), ["Red Barn"]);
    assert_eq!(
        titles(&list("mimeType=image/*").await),
        ["Logo", "Red Barn"]
    );
    assert_eq!(titles(&list("mimeType=text/plain").await), ["Notes 100%"]);
    // Title or description, any case; wildcards are plain characters.
    assert_eq!(
        titles(&list("search=BARN").await),
        ["Notes 100%", "Red Barn"]
    );
    assert_eq!(titles(&list("search=dawn").await), ["Red Barn"]);
    assert_eq!(titles(&list("search=100%25").await), ["Notes 100%"]);
    assert_eq!(titles(&list("search=_").await), Vec::<String>::new());
    assert_eq!(
        titles(&list("search=a&assetType=image").await),
        ["Red Barn"]
    );

    let page = list("limit=2&offset=2").await;
    assert_eq!(titles(&page), ["Red Barn"]);
    assert_eq!(
        page.body["pagination"],
        json!({"total": 3, "page": 2, "pageSize": 2, "totalPages": 2,
               "hasNextPage": false, "hasPrevPage": true})
    );
    let first = list("limit=2").await;
    assert_eq!(first.body["pagination"]["hasNextPage"], true);
    // An offset at the end of the integer range is an empty page, not an overflow (found by
    // schemathesis).
    let far = list("limit=1&offset=9223372036854775807").await;
    assert_eq!(far.status, StatusCode::OK, "{}", far.body);
    assert_eq!(titles(&far), Vec::<String>::new());
    assert_eq!(far.body["pagination"]["hasNextPage"], false);

    for bad in [
        "limit=0",
        "limit=101",
        "limit=x",
        "offset=-1",
        "assetType=video",
    ] {
        list(bad)
            .await
            .assert_handler_error(StatusCode::BAD_REQUEST, "Bad Request");
    }
    app.get(ASSETS)
        .send()
        .await
        .assert_access_refusal(StatusCode::UNAUTHORIZED, "Unauthorized");
    app.stop().await;
}

async fn metadata_changes_by_patch(url: String) {
    let app = TestApp::start(&url).await;
    let ada = app.sign_up("Ada", "ada@example.com").await;
    let asset = uploaded(&app, &ada, "a.png", &png(2, 2, 10)).await;
    let path = format!("{ASSETS}/{}", id(&asset));
    let patch = |body: Value| app.req(Method::PATCH, &path).cookie(&ada).json(body).send();
    let res = patch(json!({"title": "New", "alt": "Alt text", "creditLine": "Photo: Ada"})).await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);
    assert_eq!(res.body["data"]["title"], "New");
    assert_eq!(res.body["data"]["alt"], "Alt text");
    assert_eq!(res.body["data"]["creditLine"], "Photo: Ada");
    assert_eq!(res.body["data"]["filename"], "a.png");
    let res = patch(json!({"alt": null})).await;
    assert_eq!(res.body["data"]["alt"], Value::Null);
    assert_eq!(res.body["data"]["title"], "New", "untouched");

    patch(json!({"filename": "b.png"}))
        .await
        .assert_handler_error(StatusCode::BAD_REQUEST, "Bad Request");
    patch(json!({"title": 5}))
        .await
        .assert_handler_error(StatusCode::BAD_REQUEST, "Bad Request");
    patch(json!({"title": "x".repeat(10_001)}))
        .await
        .assert_handler_error(StatusCode::BAD_REQUEST, "Bad Request");
    app.req(Method::PATCH, &format!("{ASSETS}/nope"))
        .cookie(&ada)
        .json(json!({"title": "x"}))
        .send()
        .await
        .assert_handler_error(StatusCode::NOT_FOUND, "Not Found");
    let reader = app
        .create_key(&ada, json!({"name": "r", "permissions": ["read"]}))
        .await;
    app.req(Method::PATCH, &path)
        .key(&reader)
        .json(json!({"title": "x"}))
        .send()
        .await
        .assert_access_refusal(StatusCode::FORBIDDEN, "Forbidden");
    let writer = app
        .create_key(&ada, json!({"name": "w", "permissions": ["write"]}))
        .await;
    let res = app
        .req(Method::PATCH, &path)
        .key(&writer)
        .json(json!({"description": "by key"}))
        .send()
        .await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);
    app.stop().await;
}

async fn references_count_and_block_deletes(url: String) {
    let app = TestApp::start(&url).await;
    let ada = app.sign_up("Ada", "ada@example.com").await;
    let used = uploaded(&app, &ada, "used.png", &png(2, 2, 10)).await;
    let spare = uploaded(&app, &ada, "spare.png", &png(2, 2, 11)).await;
    let (used_id, spare_id) = (id(&used), id(&spare));
    let post = app
        .post(
            "/api/documents",
            json!({"type": "post", "data": {"title": "Hello",
                   "cover": {"asset": {"_ref": used_id}}}}),
        )
        .cookie(&ada)
        .send()
        .await;
    assert_eq!(post.status, StatusCode::CREATED, "{}", post.body);
    let post_id = post.body["data"]["id"].as_str().unwrap().to_string();
    // A second document references it from a draft only.
    let author = app
        .post(
            "/api/documents",
            json!({"type": "author", "data": {"name": "Ada",
                   "avatar": {"asset": {"_ref": used_id}}}}),
        )
        .cookie(&ada)
        .send()
        .await;
    let author_id = author.body["data"]["id"].as_str().unwrap().to_string();

    let res = app
        .get(&format!("{ASSETS}/{used_id}"))
        .cookie(&ada)
        .send()
        .await;
    assert_eq!(res.body["data"]["referenceCount"], 2);
    let list = app.get(ASSETS).cookie(&ada).send().await;
    let counts: Vec<&Value> = list.body["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| &a["referenceCount"])
        .collect();
    assert_eq!(counts, [&json!(0), &json!(2)]);
    let res = app
        .post(
            &format!("{ASSETS}/references/counts"),
            json!({"ids": [used_id, spare_id, "unknown"]}),
        )
        .cookie(&ada)
        .send()
        .await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);
    let mut expected = serde_json::Map::new();
    expected.insert(used_id.clone(), json!(2));
    expected.insert(spare_id.clone(), json!(0));
    expected.insert("unknown".into(), json!(0));
    assert_eq!(res.body["data"], Value::Object(expected));
    // Publishing needs every referenced asset to exist in the organization.
    let res = app
        .post(
            "/api/documents",
            json!({"type": "post", "publish": true, "data": {"title": "Ghost",
                   "cover": {"asset": {"_ref": "no-such-asset"}}}}),
        )
        .cookie(&ada)
        .send()
        .await;
    res.assert_handler_error(StatusCode::BAD_REQUEST, "Bad Request");
    assert_eq!(res.body["issues"][0]["path"], "cover");
    assert_eq!(res.body["issues"][0]["code"], "reference");
    let publish = app
        .post(&format!("/api/documents/{post_id}/publish"), json!({}))
        .cookie(&ada)
        .send()
        .await;
    assert_eq!(publish.status, StatusCode::OK, "{}", publish.body);
    let res = app
        .get(&format!("{ASSETS}/{used_id}/references"))
        .cookie(&ada)
        .send()
        .await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);
    assert_eq!(
        res.body["data"],
        json!({"total": 2, "references": [
            {"documentId": post_id, "type": "post", "status": "published"},
            {"documentId": author_id, "type": "author", "status": "draft"},
        ]})
    );

    // Referenced: 409, and nothing is gone.
    let res = app
        .req(Method::DELETE, &format!("{ASSETS}/{used_id}"))
        .cookie(&ada)
        .send()
        .await;
    let message = res.assert_handler_error(StatusCode::CONFLICT, "Conflict");
    assert!(message.contains("2 documents"), "{message}");
    let res = app
        .req(Method::DELETE, &format!("{ASSETS}/bulk"))
        .cookie(&ada)
        .json(json!({"ids": [spare_id, used_id]}))
        .send()
        .await;
    assert_eq!(res.status, StatusCode::CONFLICT, "{}", res.body);
    assert_eq!(res.body["success"], false);
    assert_eq!(res.body["error"], "1 asset is still referenced");
    assert_eq!(res.body["referencedIds"], json!([used_id]));
    for asset in [&used, &spare] {
        let media = app.get(asset["url"].as_str().unwrap()).send().await;
        assert_eq!(media.status, StatusCode::OK, "still served");
    }
    assert_eq!(stored_files(&app).len(), 2);

    // Bulk delete of unreferenced assets; unknown ids fail.
    let res = app
        .req(Method::DELETE, &format!("{ASSETS}/bulk"))
        .cookie(&ada)
        .json(json!({"ids": [spare_id, "unknown"]}))
        .send()
        .await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);
    assert_eq!(res.body["data"], json!({"deleted": 1, "failed": 1}));
    let media = app.get(spare["url"].as_str().unwrap()).send().await;
    assert_eq!(media.status, StatusCode::NOT_FOUND);
    for bad in [json!({"ids": []}), json!({"ids": "x"}), json!({})] {
        app.req(Method::DELETE, &format!("{ASSETS}/bulk"))
            .cookie(&ada)
            .json(bad)
            .send()
            .await
            .assert_handler_error(StatusCode::BAD_REQUEST, "Bad Request");
    }

    // Once no copy of any document references it, it can go.
    for (doc, doc_type, data) in [
        (&post_id, "post", json!({"title": "Hello"})),
        (&author_id, "author", json!({"name": "Ada"})),
    ] {
        let res = app
            .req(Method::PUT, &format!("/api/documents/{doc}"))
            .cookie(&ada)
            .json(json!({"data": data, "publish": doc_type == "post"}))
            .send()
            .await;
        assert_eq!(res.status, StatusCode::OK, "{}", res.body);
    }
    let res = app
        .req(Method::DELETE, &format!("{ASSETS}/{used_id}"))
        .cookie(&ada)
        .send()
        .await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);
    assert_eq!(res.body["data"], json!({"id": used_id, "deleted": true}));
    app.get(&format!("{ASSETS}/{used_id}"))
        .cookie(&ada)
        .send()
        .await
        .assert_handler_error(StatusCode::NOT_FOUND, "Not Found");
    settle(&app, &[]).await;
    let reader = app
        .create_key(&ada, json!({"name": "r", "permissions": ["read"]}))
        .await;
    app.req(Method::DELETE, &format!("{ASSETS}/{spare_id}"))
        .key(&reader)
        .send()
        .await
        .assert_access_refusal(StatusCode::FORBIDDEN, "Forbidden");
    app.stop().await;
}

const SIGNING_SECRET: &str = "an asset signing secret of 32+ characters";

async fn without_a_signing_secret_no_signature_verifies(url: String) {
    let app = TestApp::start(&url).await;
    let ada = app.sign_up("Ada", "ada@example.com").await;
    let asset = uploaded(&app, &ada, "a.png", &png(2, 2, 10)).await;
    let res = app
        .get(&format!("{ASSETS}/{}/signed-url", id(&asset)))
        .cookie(&ada)
        .send()
        .await;
    res.assert_handler_error(StatusCode::NOT_FOUND, "Not Found");
    let forged = format!(
        "{}?sig={}&exp=9999999999",
        asset["url"].as_str().unwrap(),
        "0".repeat(64)
    );
    app.get(&forged)
        .send()
        .await
        .assert_access_refusal(StatusCode::FORBIDDEN, "Forbidden");
    app.stop().await;
}

async fn signed_links_verify_and_expire(url: String) {
    let mut config = config_for(&url);
    config.assets.signing_secret = Some(SIGNING_SECRET.into());
    let app = TestApp::with(config, None).await;
    let ada = app.sign_up("Ada", "ada@example.com").await;
    let asset = uploaded(&app, &ada, "a.png", &png(2, 2, 10)).await;
    let res = app
        .get(&format!("{ASSETS}/{}/signed-url?expiresIn=60", id(&asset)))
        .cookie(&ada)
        .send()
        .await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);
    let link = res.body["data"]["url"].as_str().unwrap().to_string();
    assert!(res.body["data"]["expiresAt"].is_string());
    let path = link[link.find("/media/").unwrap()..].to_string();
    assert!(path.starts_with(asset["url"].as_str().unwrap()), "{path}");
    let media = app.get(&path).send().await;
    assert_eq!(media.status, StatusCode::OK);
    assert_eq!(
        media.header("cache-control"),
        Some("private, max-age=31536000, immutable")
    );
    // Tampering: another signature, another expiry, another asset name.
    let sig_at = path.find("sig=").unwrap() + 4;
    let mut tampered = path.clone();
    let flipped = if &path[sig_at..sig_at + 1] == "a" {
        "b"
    } else {
        "a"
    };
    tampered.replace_range(sig_at..sig_at + 1, flipped);
    for bad in [
        tampered,
        path.replace("exp=", "exp=1"),
        path.replace("/a.png?", "/b.png?"),
        path.split("&exp").next().unwrap().to_string(),
    ] {
        app.get(&bad)
            .send()
            .await
            .assert_access_refusal(StatusCode::FORBIDDEN, "Forbidden");
    }
    // Expired.
    app.clock.advance_millis(61_000);
    app.get(&path)
        .send()
        .await
        .assert_access_refusal(StatusCode::FORBIDDEN, "Forbidden");
    for bad in ["expiresIn=0", "expiresIn=604801", "expiresIn=soon"] {
        app.get(&format!("{ASSETS}/{}/signed-url?{bad}", id(&asset)))
            .cookie(&ada)
            .send()
            .await
            .assert_handler_error(StatusCode::BAD_REQUEST, "Bad Request");
    }
    app.stop().await;
}

async fn private_assets_need_a_session_or_a_signature(url: String) {
    let mut config = config_for(&url);
    config.assets.private = true;
    config.assets.signing_secret = Some(SIGNING_SECRET.into());
    let app = TestApp::with(config, None).await;
    let ada = app.sign_up("Ada", "ada@example.com").await;
    let asset = uploaded(&app, &ada, "a.png", &png(2, 2, 10)).await;
    let media = asset["url"].as_str().unwrap();
    app.get(media)
        .send()
        .await
        .assert_access_refusal(StatusCode::UNAUTHORIZED, "Unauthorized");
    let res = app.get(media).cookie(&ada).send().await;
    assert_eq!(res.status, StatusCode::OK);
    assert_eq!(
        res.header("cache-control"),
        Some("private, max-age=31536000, immutable")
    );
    let key = app
        .create_key(&ada, json!({"name": "r", "permissions": ["read"]}))
        .await;
    assert_eq!(app.get(media).key(&key).send().await.status, StatusCode::OK);
    // A member of another organization does not learn it exists.
    let res = app
        .post(
            "/api/organizations",
            json!({"name": "Other", "slug": "other"}),
        )
        .cookie(&ada)
        .send()
        .await;
    let other = res.body["data"]["id"].as_str().unwrap().to_string();
    app.post(
        "/api/organizations/switch",
        json!({"organizationId": other}),
    )
    .cookie(&ada)
    .send()
    .await;
    app.get(media)
        .cookie(&ada)
        .send()
        .await
        .assert_handler_error(StatusCode::NOT_FOUND, "Not Found");
    // A signed link works without any session.
    let res = app
        .get(&format!("{ASSETS}/{}/signed-url", id(&asset)))
        .key(&key)
        .send()
        .await;
    let link = res.body["data"]["url"].as_str().unwrap();
    let path = &link[link.find("/media/").unwrap()..];
    let res = app.get(path).send().await;
    assert_eq!(res.status, StatusCode::OK);
    assert_eq!(res.bytes.len(), asset["size"].as_u64().unwrap() as usize);
    app.stop().await;
}

async fn videos_take_a_poster_image(url: String) {
    let app = TestApp::start(&url).await;
    let ada = app.sign_up("Ada", "ada@example.com").await;
    let video = uploaded(&app, &ada, "clip.mp4", &mp4()).await;
    assert_eq!(video["mimeType"], "video/mp4");
    assert_eq!(video["assetType"], "file");
    assert_eq!(video["posterId"], Value::Null);
    let poster_path = format!("{ASSETS}/{}/poster", id(&video));
    let res = app
        .req(Method::POST, &poster_path)
        .cookie(&ada)
        .multipart(&[], Some(("file", "poster.png", &png(1280, 720, 100))))
        .send()
        .await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);
    let poster_id = res.body["data"]["posterId"].as_str().unwrap().to_string();
    assert_eq!(res.body["data"]["id"], video["id"]);
    let poster = app
        .get(&format!("{ASSETS}/{poster_id}"))
        .cookie(&ada)
        .send()
        .await;
    assert_eq!(poster.body["data"]["width"], 1280);
    assert_eq!(poster.body["data"]["assetType"], "image");

    // Not a video, not an image, no file: 400; an unknown asset: 404.
    let image = uploaded(&app, &ada, "a.png", &png(2, 2, 10)).await;
    for (path, file) in [
        (format!("{ASSETS}/{}/poster", id(&image)), png(2, 2, 10)),
        (poster_path.clone(), b"just text".to_vec()),
    ] {
        app.req(Method::POST, &path)
            .cookie(&ada)
            .multipart(&[], Some(("file", "p.png", &file)))
            .send()
            .await
            .assert_handler_error(StatusCode::BAD_REQUEST, "Bad Request");
    }
    app.req(Method::POST, &poster_path)
        .cookie(&ada)
        .multipart(&[("title", "x")], None)
        .send()
        .await
        .assert_handler_error(StatusCode::BAD_REQUEST, "Bad Request");
    app.req(Method::POST, &format!("{ASSETS}/nope/poster"))
        .cookie(&ada)
        .multipart(&[], Some(("file", "p.png", &png(2, 2, 10))))
        .send()
        .await
        .assert_handler_error(StatusCode::NOT_FOUND, "Not Found");
    // Deleting the poster detaches it from the video.
    let res = app
        .req(Method::DELETE, &format!("{ASSETS}/{poster_id}"))
        .cookie(&ada)
        .send()
        .await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);
    let res = app
        .get(&format!("{ASSETS}/{}", id(&video)))
        .cookie(&ada)
        .send()
        .await;
    assert_eq!(res.body["data"]["posterId"], Value::Null);
    app.stop().await;
}

async fn direct_upload_is_off_on_local_disk(url: String) {
    let app = TestApp::start(&url).await;
    let ada = app.sign_up("Ada", "ada@example.com").await;
    for (path, body) in [
        (
            "upload-url",
            json!({"filename": "a.png", "mimeType": "image/png", "size": 10}),
        ),
        ("confirm", json!({"assetId": "x"})),
        ("confirm", json!("not even an object")),
    ] {
        app.post(&format!("{ASSETS}/{path}"), body)
            .cookie(&ada)
            .send()
            .await
            .assert_handler_error(StatusCode::NOT_FOUND, "Not Found");
    }
    app.stop().await;
}

async fn deleting_an_organization_removes_its_files(url: String) {
    let app = TestApp::start(&url).await;
    let ada = app.sign_up("Ada", "ada@example.com").await;
    let kept = uploaded(&app, &ada, "kept.png", &png(2, 2, 10)).await;
    let res = app
        .post(
            "/api/organizations",
            json!({"name": "Brief", "slug": "brief"}),
        )
        .cookie(&ada)
        .send()
        .await;
    let brief = res.body["data"]["id"].as_str().unwrap().to_string();
    let home = app.active_organization(&ada).await;
    app.post(
        "/api/organizations/switch",
        json!({"organizationId": brief}),
    )
    .cookie(&ada)
    .send()
    .await;
    // The same bytes as `kept` in another organization are an asset of their own there.
    for (name, extra) in [("a.png", 10), ("b.png", 11)] {
        uploaded(&app, &ada, name, &png(2, 2, extra)).await;
    }
    assert_eq!(stored_files(&app).len(), 3);
    app.post("/api/organizations/switch", json!({"organizationId": home}))
        .cookie(&ada)
        .send()
        .await;
    let res = app
        .req(Method::DELETE, &format!("/api/organizations/{brief}"))
        .cookie(&ada)
        .send()
        .await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);
    assert_eq!(stored_files(&app), vec![id(&kept)]);
    let media = app.get(kept["url"].as_str().unwrap()).send().await;
    assert_eq!(media.status, StatusCode::OK);
    app.stop().await;
}

/// An `image` field takes image assets only (issue 32): a file there is reported by the save's
/// validation and refused by publishing, at the field, in a field and placed in text alike; an
/// image passes.
async fn an_image_field_takes_images_only(url: String) {
    let app = TestApp::start(&url).await;
    let ada = app.sign_up("Ada", "ada@example.com").await;
    let text = id(&uploaded(&app, &ada, "notes.txt", b"plain words, not a picture\n").await);
    let image = id(&uploaded(&app, &ada, "cover.png", &png(2, 2, 0)).await);
    let body = |asset: &str| json!([{"_type": "image", "_key": "i1", "asset": {"_ref": asset}}]);

    let res = app
        .post(
            "/api/documents",
            json!({"type": "post", "data": {"title": "Wrong kind",
                   "cover": {"asset": {"_ref": text}}, "body": body(&text)}}),
        )
        .cookie(&ada)
        .send()
        .await;
    assert_eq!(
        res.status,
        StatusCode::CREATED,
        "a draft may be incomplete: {}",
        res.body
    );
    let validation = &res.body["validation"];
    assert_eq!(validation["isValid"], false, "{validation}");
    let mut paths: Vec<(&str, &str, &str)> = validation["errors"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            (
                e["path"].as_str().unwrap(),
                e["code"].as_str().unwrap(),
                e["message"].as_str().unwrap(),
            )
        })
        .collect();
    paths.sort_unstable();
    assert_eq!(
        paths,
        [
            (
                "body[0]",
                "reference",
                "item 1 of Body: the referenced asset is not an image"
            ),
            (
                "cover",
                "reference",
                "Cover image: the referenced asset is not an image"
            ),
        ]
    );
    let draft = res.body["data"]["id"].as_str().unwrap().to_string();
    let res = app
        .post(&format!("/api/documents/{draft}/publish"), json!({}))
        .cookie(&ada)
        .send()
        .await;
    res.assert_handler_error(StatusCode::BAD_REQUEST, "Bad Request");
    assert_eq!(
        res.body["issues"].as_array().unwrap().len(),
        2,
        "{}",
        res.body
    );

    let res = app
        .req(Method::PUT, &format!("/api/documents/{draft}"))
        .json(json!({"data": {"title": "Right kind",
                     "cover": {"asset": {"_ref": image}}, "body": body(&image)},
                     "publish": true}))
        .cookie(&ada)
        .send()
        .await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);
    assert_eq!(res.body["data"]["publishedData"]["title"], "Right kind");
    app.stop().await;
}

cms_store::both_engines!(
    an_image_field_takes_images_only,
    deleting_an_organization_removes_its_files,
    uploads_are_sniffed_recorded_and_served,
    active_content_is_served_inert,
    bad_uploads_are_refused_and_leave_nothing,
    file_names_are_reduced_to_safe_names,
    lists_filter_search_and_paginate,
    metadata_changes_by_patch,
    references_count_and_block_deletes,
    without_a_signing_secret_no_signature_verifies,
    signed_links_verify_and_expire,
    private_assets_need_a_session_or_a_signature,
    videos_take_a_poster_image,
    direct_upload_is_off_on_local_disk,
);
