//! Delivery to frontends over HTTP (CONTRACT.md section 15, issue 24 part A): CORS for the
//! listed origins (and `*`), the CSRF pass of a listed origin, strong entity tags with
//! `If-None-Match` on every read endpoint, `Cache-Control` and `Vary`, the document tag decided
//! from the stored document, and compression per `Accept-Encoding`.

use std::io::Read;

use axum::http::{Method, StatusCode};
use cms::core::schema::parse_schemas;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use crate::agent::{Answer, Model};
use crate::assets::{ASSETS, png, upload};
use crate::support::{Reply, Session, TestApp, config_for};

const DOCS: &str = "/api/documents";
const SITE: &str = "https://site.example";
const KEYS: &str = "/api/settings/api-keys";

fn schemas() -> Vec<cms::core::schema::Schema> {
    parse_schemas(&json!([
        { "type": "document", "name": "note", "fields": [
            { "name": "title", "type": "string" },
            { "name": "body", "type": "text" },
            { "name": "secret", "type": "string", "access": { "read": ["owner"] } },
            { "name": "related", "type": "reference", "to": ["note"] }
        ] },
        { "type": "document", "name": "page", "fields": [
            { "name": "title", "type": "string", "localized": true }
        ] }
    ]))
    .unwrap()
}

/// An app with the schemas above, `en` and `de`, and `cors.origins` as given; Ada (instance
/// super admin, owner) and Bob (editor of Ada's organization).
async fn start(url: &str, origins: &[&str]) -> (TestApp, Session, Session) {
    let mut config = config_for(url);
    config.auth.invite_only = false;
    config.cors.origins = origins.iter().map(|o| o.to_string()).collect();
    config.cors.max_age_seconds = 900;
    config.locales.available = vec!["en".into(), "de".into()];
    let app = TestApp::custom(config, |b| b.schemas(schemas())).await;
    let ada = app.sign_up("Ada", "ada@example.com").await;
    let bob = app.sign_up("Bob", "bob@example.com").await;
    let org = app.active_organization(&ada).await;
    app.join(&bob, &org, "editor").await;
    (app, ada, bob)
}

async fn create(app: &TestApp, s: &Session, doc_type: &str, data: Value) -> String {
    let res = app
        .post(DOCS, json!({"type": doc_type, "data": data}))
        .cookie(s)
        .send()
        .await;
    assert_eq!(res.status, StatusCode::CREATED, "{}", res.body);
    res.body["data"]["id"].as_str().unwrap().to_string()
}

async fn write(app: &TestApp, s: &Session, method: Method, path: &str, body: Value) {
    let res = app.req(method, path).cookie(s).json(body).send().await;
    assert!(
        res.status.is_success(),
        "{path}: {} {}",
        res.status,
        res.body
    );
}

/// The CORS headers of an answer.
fn cors_headers(res: &Reply) -> Vec<String> {
    res.headers
        .keys()
        .map(|k| k.as_str().to_string())
        .filter(|k| k.starts_with("access-control-"))
        .collect()
}

/// A comma-separated header as a sorted list of lower-case items.
fn items(res: &Reply, name: &str) -> Vec<String> {
    let mut items: Vec<String> = res
        .headers
        .get_all(name)
        .iter()
        .flat_map(|v| v.to_str().unwrap().split(','))
        .map(|s| s.trim().to_ascii_lowercase())
        .filter(|s| !s.is_empty())
        .collect();
    items.sort();
    items.dedup();
    items
}

fn sorted(list: &[&str]) -> Vec<String> {
    let mut v: Vec<String> = list.iter().map(|s| s.to_string()).collect();
    v.sort();
    v
}

async fn preflight(app: &TestApp, path: &str, origin: &str) -> Reply {
    app.req(Method::OPTIONS, path)
        .header("origin", origin)
        .header("access-control-request-method", "PUT")
        .header(
            "access-control-request-headers",
            "content-type, if-none-match",
        )
        .send()
        .await
}

async fn cors_admits_the_listed_origins_only(url: String) {
    let (app, ada, _) = start(&url, &[SITE, "http://localhost:3000"]).await;

    // A preflight, on any /api path, even one that needs credentials: no auth, 204.
    for path in [DOCS, "/api/documents/abc", KEYS] {
        let res = preflight(&app, path, SITE).await;
        assert_eq!(res.status, StatusCode::NO_CONTENT, "{path}");
        assert!(res.bytes.is_empty());
        assert_eq!(res.header("access-control-allow-origin"), Some(SITE));
        assert_eq!(res.header("access-control-allow-credentials"), Some("true"));
        assert_eq!(
            items(&res, "access-control-allow-methods"),
            sorted(&["get", "post", "put", "patch", "delete", "options"])
        );
        assert_eq!(
            items(&res, "access-control-allow-headers"),
            sorted(&[
                "content-type",
                "x-api-key",
                "authorization",
                "if-none-match",
                "x-cms-organization",
                "x-cms-preview"
            ])
        );
        assert_eq!(res.header("access-control-max-age"), Some("900"));
        assert_eq!(res.header("x-content-type-options"), Some("nosniff"));
    }
    let res = preflight(&app, DOCS, "http://localhost:3000").await;
    assert_eq!(
        res.header("access-control-allow-origin"),
        Some("http://localhost:3000")
    );

    // Not listed: no CORS header at all, whatever resembles a listed origin.
    for origin in [
        "https://evil.example",
        "http://site.example",
        "https://site.example.evil.example",
        "https://site.example:8443",
        "null",
    ] {
        let res = preflight(&app, DOCS, origin).await;
        assert_eq!(cors_headers(&res), Vec::<String>::new(), "{origin}");
        let res = app
            .get("/api/schemas")
            .cookie(&ada)
            .header("origin", origin)
            .send()
            .await;
        assert_eq!(res.status, StatusCode::OK);
        assert_eq!(cors_headers(&res), Vec::<String>::new(), "{origin}");
    }

    // A simple request from a listed origin: the origin, credentials, and what it may read.
    let key = app
        .create_key(&ada, json!({"name": "site", "permissions": ["read"]}))
        .await;
    let res = app
        .get("/api/schemas")
        .key(&key)
        .header("origin", SITE)
        .send()
        .await;
    assert_eq!(res.status, StatusCode::OK);
    assert_eq!(res.header("access-control-allow-origin"), Some(SITE));
    assert_eq!(res.header("access-control-allow-credentials"), Some("true"));
    assert_eq!(
        items(&res, "access-control-expose-headers"),
        sorted(&["etag", "x-request-id"])
    );
    // The CORS layer's `Vary` joins the validators' own.
    let vary = items(&res, "vary");
    for name in ["origin", "x-cms-organization", "accept-encoding"] {
        assert!(vary.contains(&name.to_string()), "{vary:?}");
    }
    assert!(res.header("etag").is_some());
    // Without an Origin (a server, curl): nothing changes.
    let res = app.get("/api/schemas").key(&key).send().await;
    assert_eq!(cors_headers(&res), Vec::<String>::new());

    // A cookie write from a listed origin passes the CSRF check; from another it does not.
    let res = app
        .post(KEYS, json!({"name": "from-site", "permissions": ["read"]}))
        .cookie_without_origin(&ada)
        .header("origin", SITE)
        .send()
        .await;
    assert_eq!(res.status, StatusCode::CREATED, "{}", res.body);
    assert_eq!(res.header("access-control-allow-origin"), Some(SITE));
    for origin in ["https://evil.example", "http://site.example"] {
        app.post(KEYS, json!({"name": "evil", "permissions": ["read"]}))
            .cookie_without_origin(&ada)
            .header("origin", origin)
            .send()
            .await
            .assert_access_refusal(StatusCode::FORBIDDEN, "Forbidden");
    }
    app.stop().await;
}

async fn without_origins_there_is_no_cors(url: String) {
    let (app, ada, _) = start(&url, &[]).await;
    let res = preflight(&app, DOCS, SITE).await;
    assert_eq!(cors_headers(&res), Vec::<String>::new());
    assert_ne!(res.status, StatusCode::NO_CONTENT);
    let res = app
        .get("/api/schemas")
        .cookie(&ada)
        .header("origin", SITE)
        .send()
        .await;
    assert_eq!(cors_headers(&res), Vec::<String>::new());
    app.post(KEYS, json!({"name": "k", "permissions": ["read"]}))
        .cookie_without_origin(&ada)
        .header("origin", SITE)
        .send()
        .await
        .assert_access_refusal(StatusCode::FORBIDDEN, "Forbidden");
    app.stop().await;
}

async fn any_origin_never_carries_credentials(url: String) {
    let (app, ada, _) = start(&url, &["*"]).await;
    let res = preflight(&app, DOCS, "https://anyone.example").await;
    assert_eq!(res.status, StatusCode::NO_CONTENT);
    assert_eq!(res.header("access-control-allow-origin"), Some("*"));
    assert_eq!(res.header("access-control-allow-credentials"), None);
    assert_eq!(res.header("access-control-max-age"), Some("900"));
    let res = app
        .get("/api/schemas")
        .cookie(&ada)
        .header("origin", "https://anyone.example")
        .send()
        .await;
    assert_eq!(res.header("access-control-allow-origin"), Some("*"));
    assert_eq!(res.header("access-control-allow-credentials"), None);
    // `*` lists nobody for the CSRF check.
    app.post(KEYS, json!({"name": "k", "permissions": ["read"]}))
        .cookie_without_origin(&ada)
        .header("origin", "https://anyone.example")
        .send()
        .await
        .assert_access_refusal(StatusCode::FORBIDDEN, "Forbidden");
    app.stop().await;
}

/// The strong tag of a 200, with the cache headers of a credentialed answer.
fn tag_of(res: &Reply, what: &str) -> String {
    assert_eq!(res.status, StatusCode::OK, "{what}: {}", res.body);
    let tag = res
        .header("etag")
        .unwrap_or_else(|| panic!("{what}: no ETag"));
    assert!(
        tag.starts_with('"') && tag.ends_with('"') && tag.len() > 2,
        "{what}: {tag} is a strong tag"
    );
    assert_eq!(
        res.header("cache-control"),
        Some("private, no-cache"),
        "{what}"
    );
    assert_eq!(
        items(res, "vary"),
        sorted(&["accept-encoding", "origin", "x-cms-organization"]),
        "{what}"
    );
    tag.to_string()
}

async fn get(app: &TestApp, s: &Session, path: &str, if_none_match: Option<&str>) -> Reply {
    let mut call = app.get(path).cookie(s);
    if let Some(tags) = if_none_match {
        call = call.header("if-none-match", tags);
    }
    call.send().await
}

/// `path` answers 304 to its current tag, with the 200's headers and no body.
async fn assert_not_modified(app: &TestApp, s: &Session, path: &str, tag: &str) {
    let res = get(app, s, path, Some(tag)).await;
    assert_eq!(res.status, StatusCode::NOT_MODIFIED, "{path}: {}", res.body);
    assert!(res.bytes.is_empty(), "{path}: a 304 has no body");
    assert_eq!(res.header("etag"), Some(tag), "{path}");
    assert_eq!(res.header("cache-control"), Some("private, no-cache"));
    assert_eq!(
        items(&res, "vary"),
        sorted(&["accept-encoding", "origin", "x-cms-organization"])
    );
}

async fn every_read_endpoint_answers_304_to_its_tag(url: String) {
    let (app, ada, _) = start(&url, &[]).await;
    let b = create(&app, &ada, "note", json!({"title": "B"})).await;
    let a = create(
        &app,
        &ada,
        "note",
        json!({"title": "A", "related": {"_ref": b}}),
    )
    .await;
    let res = upload(&app, &ada, "pixel.png", &png(2, 2, 10), &[]).await;
    assert_eq!(res.status, StatusCode::CREATED, "{}", res.body);
    let asset = res.body["data"]["id"].as_str().unwrap().to_string();

    let documents_changed = [
        format!("{DOCS}?type=note"),
        format!("{DOCS}/{a}"),
        format!("{DOCS}/{a}?depth=1"),
        format!("{DOCS}/by-ids?ids={a},{b}"),
        format!("{DOCS}/{b}/back-references"),
    ];
    let assets_changed = [format!("{ASSETS}?limit=10"), format!("{ASSETS}/{asset}")];
    let mut before = Vec::new();
    for path in documents_changed.iter().chain(&assets_changed) {
        let res = get(&app, &ada, path, None).await;
        let tag = tag_of(&res, path);
        // The same answer again: the same tag.
        assert_eq!(tag_of(&get(&app, &ada, path, None).await, path), tag);
        assert_not_modified(&app, &ada, path, &tag).await;
        before.push(tag);
    }
    // The registered schemas change only with a restart: their list's tag is its body's
    // digest, so other schemas are another tag.
    let res = get(&app, &ada, "/api/schemas", None).await;
    let schemas = tag_of(&res, "schemas");
    assert_eq!(schemas, body_tag(&res.bytes));
    assert_not_modified(&app, &ada, "/api/schemas", &schemas).await;

    // A key's answers are credentialed too.
    let key = app
        .create_key(&ada, json!({"name": "k", "permissions": ["read"]}))
        .await;
    let res = app.get(&format!("{DOCS}/{a}")).key(&key).send().await;
    tag_of(&res, "by key");

    // After a change, the old tag gets the new body with a new tag.
    write(
        &app,
        &ada,
        Method::PUT,
        &format!("{DOCS}/{a}"),
        json!({"data": {"title": "A2", "related": {"_ref": b}}}),
    )
    .await;
    write(
        &app,
        &ada,
        Method::PATCH,
        &format!("{ASSETS}/{asset}"),
        json!({"title": "Pixel"}),
    )
    .await;
    for (path, old) in documents_changed.iter().chain(&assets_changed).zip(&before) {
        let res = get(&app, &ada, path, Some(old)).await;
        let new = tag_of(&res, path);
        assert_ne!(&new, old, "{path}: the change makes a new tag");
        assert!(!res.bytes.is_empty());
        assert_not_modified(&app, &ada, path, &new).await;
    }
    app.stop().await;
}

async fn if_none_match_takes_lists_star_and_weak_tags(url: String) {
    let (app, ada, _) = start(&url, &[]).await;
    let id = create(&app, &ada, "note", json!({"title": "T"})).await;
    // The tag decided from the stored document, and the tag of a hashed body.
    for path in [format!("{DOCS}/{id}"), format!("{DOCS}?type=note")] {
        let tag = tag_of(&get(&app, &ada, &path, None).await, &path);
        let bare = tag.trim_matches('"');
        for (header, matches) in [
            ("*".to_string(), true),
            (format!("\"nope\", {tag}"), true),
            (format!("\"a\",\"b\" , W/{tag}"), true),
            (format!("W/{tag}"), true),
            (format!("\"{bare}-gzip\""), true),
            ("\"nope\"".to_string(), false),
            (format!("\"{bare}x\""), false),
            (format!("W/\"nope\", {bare}"), false),
            ("garbage".to_string(), false),
        ] {
            let res = get(&app, &ada, &path, Some(&header)).await;
            let expected = if matches {
                StatusCode::NOT_MODIFIED
            } else {
                StatusCode::OK
            };
            assert_eq!(res.status, expected, "{path} with If-None-Match: {header}");
        }
    }
    // A missing document stays 404 whatever the condition.
    let res = get(&app, &ada, &format!("{DOCS}/nope"), Some("*")).await;
    assert_eq!(res.status, StatusCode::NOT_FOUND);
    app.stop().await;
}

fn body_tag(bytes: &[u8]) -> String {
    let digest = Sha256::digest(bytes);
    let hex: String = digest[..16].iter().map(|b| format!("{b:02x}")).collect();
    format!("\"{hex}\"")
}

async fn the_document_tag_follows_what_shapes_the_body(url: String) {
    let (app, ada, bob) = start(&url, &[]).await;
    let b = create(&app, &ada, "note", json!({"title": "B"})).await;
    let a = create(
        &app,
        &ada,
        "note",
        json!({"title": "A", "secret": "S", "related": {"_ref": b}}),
    )
    .await;
    let path = format!("{DOCS}/{a}");
    let tag = |res: Reply| tag_of(&res, "a");
    let draft = tag(get(&app, &ada, &path, None).await);

    // Publishing moves no revision, yet the body (publishedData) changes: so does the tag.
    write(
        &app,
        &ada,
        Method::POST,
        &format!("{path}/publish"),
        json!({}),
    )
    .await;
    let res = get(&app, &ada, &path, Some(&draft)).await;
    let published = tag(res);
    assert_ne!(published, draft);
    let in_published = tag(get(&app, &ada, &format!("{path}?perspective=published"), None).await);
    assert_ne!(in_published, published, "perspectives have their own tags");
    assert_not_modified(
        &app,
        &ada,
        &format!("{path}?perspective=published"),
        &in_published,
    )
    .await;
    let res = get(
        &app,
        &ada,
        &format!("{path}?perspective=published"),
        Some(&published),
    )
    .await;
    assert_eq!(
        res.status,
        StatusCode::OK,
        "the draft's tag is not the published copy's"
    );

    // The editor sees no `secret`: another body, another tag, and the owner's never matches.
    let by_bob = get(&app, &bob, &path, Some(&published)).await;
    assert!(by_bob.body["data"]["draftData"].get("secret").is_none());
    let bobs = tag(by_bob);
    assert_ne!(bobs, published);
    assert_not_modified(&app, &bob, &path, &bobs).await;
    let res = get(&app, &ada, &path, Some(&bobs)).await;
    assert_eq!(res.status, StatusCode::OK);
    assert_eq!(res.body["data"]["draftData"]["secret"], "S");

    // Locales: each has its tag, and naming the default locale is another body too.
    let page = create(&app, &ada, "page", json!({"title": "Hello"})).await;
    let page_path = format!("{DOCS}/{page}");
    let mut tags = Vec::new();
    for query in ["", "?locale=en", "?locale=de", "?locale=*"] {
        let res = get(&app, &ada, &format!("{page_path}{query}"), None).await;
        tags.push(tag(res));
    }
    let mut unique = tags.clone();
    unique.sort();
    unique.dedup();
    assert_eq!(unique.len(), tags.len(), "one tag per locale: {tags:?}");

    // With references resolved, the body decides: its digest is the tag, and a change of the
    // referenced document changes it while the depth-0 tag stays.
    let deep = format!("{path}?depth=1");
    let res = get(&app, &ada, &deep, None).await;
    assert_eq!(res.body["data"]["draftData"]["related"]["title"], "B");
    let deep_tag = body_tag(&res.bytes);
    assert_eq!(tag(res), deep_tag);
    let shallow = tag(get(&app, &ada, &path, None).await);
    write(
        &app,
        &ada,
        Method::PUT,
        &format!("{DOCS}/{b}"),
        json!({"data": {"title": "B2"}}),
    )
    .await;
    assert_not_modified(&app, &ada, &path, &shallow).await;
    let res = get(&app, &ada, &deep, Some(&deep_tag)).await;
    assert_eq!(res.body["data"]["draftData"]["related"]["title"], "B2");
    assert_ne!(tag(res), deep_tag);

    // A draft save and an unpublish each move the tag.
    write(
        &app,
        &ada,
        Method::PUT,
        &path,
        json!({"data": {"title": "A2", "secret": "S"}}),
    )
    .await;
    let saved = tag(get(&app, &ada, &path, Some(&shallow)).await);
    assert_ne!(saved, shallow);
    write(
        &app,
        &ada,
        Method::DELETE,
        &format!("{path}/publish"),
        json!({}),
    )
    .await;
    let unpublished = tag(get(&app, &ada, &path, Some(&saved)).await);
    assert_ne!(unpublished, saved);
    app.stop().await;
}

fn decode(coding: &str, bytes: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    match coding {
        "gzip" => {
            flate2::read::GzDecoder::new(bytes)
                .read_to_end(&mut out)
                .unwrap();
        }
        "br" => {
            brotli::Decompressor::new(bytes, 4096)
                .read_to_end(&mut out)
                .unwrap();
        }
        "zstd" => out = zstd::decode_all(bytes).unwrap(),
        other => panic!("no decoder for {other}"),
    }
    out
}

async fn answers_are_compressed_per_accept_encoding(url: String) {
    let (app, ada, _) = start(&url, &[]).await;
    let body = "All work and no play makes a long note. ".repeat(10);
    for i in 0..6 {
        create(
            &app,
            &ada,
            "note",
            json!({"title": format!("N{i}"), "body": body}),
        )
        .await;
    }
    let path = format!("{DOCS}?type=note");
    let identity = get(&app, &ada, &path, None).await;
    assert!(identity.bytes.len() >= 1024);
    assert_eq!(identity.header("content-encoding"), None);
    let tag = tag_of(&identity, "identity");
    let bare = tag.trim_matches('"').to_string();

    for coding in ["zstd", "br", "gzip"] {
        let res = app
            .get(&path)
            .cookie(&ada)
            .header("accept-encoding", coding)
            .send()
            .await;
        assert_eq!(res.status, StatusCode::OK);
        assert_eq!(res.header("content-encoding"), Some(coding));
        assert!(
            res.bytes.len() < identity.bytes.len(),
            "{coding} is smaller"
        );
        let json: Value = serde_json::from_slice(&decode(coding, &res.bytes)).unwrap();
        assert_eq!(json, identity.body, "{coding} decodes to the same JSON");
        // The tag names this coding of the body; either form is current.
        let coded = format!("\"{bare}-{coding}\"");
        assert_eq!(res.header("etag"), Some(coded.as_str()));
        assert!(items(&res, "vary").contains(&"accept-encoding".to_string()));
        let again = app
            .get(&path)
            .cookie(&ada)
            .header("accept-encoding", coding)
            .header("if-none-match", &coded)
            .send()
            .await;
        assert_eq!(again.status, StatusCode::NOT_MODIFIED, "{coding}");
        assert!(again.bytes.is_empty());
        assert_eq!(again.header("etag"), Some(coded.as_str()));
        assert_eq!(again.header("content-encoding"), None);
    }
    // The client's preference decides among several.
    let res = app
        .get(&path)
        .cookie(&ada)
        .header("accept-encoding", "gzip;q=0.5, br;q=1.0")
        .send()
        .await;
    assert_eq!(res.header("content-encoding"), Some("br"));

    // Under 1 KiB: as it is.
    let id = create(&app, &ada, "note", json!({"title": "small"})).await;
    let res = app
        .get(&format!("{DOCS}/{id}"))
        .cookie(&ada)
        .header("accept-encoding", "gzip, br, zstd")
        .send()
        .await;
    assert!(res.bytes.len() < 1024);
    assert_eq!(res.header("content-encoding"), None);

    // A /media original is the stored bytes, even a large text file.
    let text = "plain text that compresses well\n".repeat(100);
    let res = upload(&app, &ada, "notes.txt", text.as_bytes(), &[]).await;
    assert_eq!(res.status, StatusCode::CREATED, "{}", res.body);
    let media = res.body["data"]["url"].as_str().unwrap().to_string();
    let res = app
        .get(&media)
        .header("accept-encoding", "gzip, br, zstd")
        .send()
        .await;
    assert_eq!(res.status, StatusCode::OK);
    assert!(
        res.header("content-type")
            .unwrap()
            .starts_with("text/plain")
    );
    assert_eq!(res.header("content-encoding"), None);
    assert_eq!(res.bytes.as_ref(), text.as_bytes());
    app.stop().await;
}

async fn event_streams_are_not_compressed(url: String) {
    let long: &'static str = Box::leak("streamed words ".repeat(200).into_boxed_str());
    let model = Model::start(vec![Answer::Text(vec![long, long], (1, 1))]).await;
    let mut config = config_for(&url);
    config.agent.base_url = Some(model.base_url.clone());
    config.agent.model = Some("test-model".into());
    config.agent.api_key = Some("sk-test-key".into());
    let app = TestApp::with(config, None).await;
    let ada = app.sign_up("Ada", "ada@example.com").await;
    let res = app
        .post(
            "/api/agent/chat",
            json!({"messages": [{"role": "user", "content": "Hi"}]}),
        )
        .cookie(&ada)
        .header("accept-encoding", "gzip, br, zstd")
        .send()
        .await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);
    assert_eq!(res.header("content-type"), Some("text/event-stream"));
    assert_eq!(res.header("content-encoding"), None);
    assert!(res.bytes.len() > 1024);
    assert!(res.text().contains("streamed words"));
    app.stop().await;
}

cms_store::both_engines!(
    cors_admits_the_listed_origins_only,
    without_origins_there_is_no_cors,
    any_origin_never_carries_credentials,
    every_read_endpoint_answers_304_to_its_tag,
    if_none_match_takes_lists_star_and_weak_tags,
    the_document_tag_follows_what_shapes_the_body,
    answers_are_compressed_per_accept_encoding,
    event_streams_are_not_compressed,
);
