//! Preview links (CONTRACT.md section 15): POST /api/documents/{id}/preview makes a token that
//! reads that one document's draft as its maker sees it, for `delivery.previewMinutes`; every
//! other use of it is 401; DELETE revokes; the type's `previewUrl` is filled in.

use axum::http::{Method, StatusCode};
use cms::core::schema::parse_schemas;
use cms::service::Clock;
use serde_json::{Value, json};

use crate::support::{Reply, Session, TestApp, config_for, insert_organization};

const DOCS: &str = "/api/documents";
const TEMPLATE: &str = "https://www.example.com/{type}/{slug}?preview={token}&id={id}";

fn schemas() -> Vec<cms::core::schema::Schema> {
    parse_schemas(&json!([
        { "type": "document", "name": "post", "previewUrl": TEMPLATE,
          "fields": [
            { "name": "title", "type": "string" },
            { "name": "slug", "type": "slug", "source": "title" },
            { "name": "secret", "type": "string",
              "access": { "read": ["owner"], "update": ["owner"] } },
            { "name": "author", "type": "reference", "to": ["author"] }
          ] },
        { "type": "document", "name": "author",
          "fields": [{ "name": "name", "type": "string" },
                     { "name": "mentor", "type": "reference", "to": ["author"] }] }
    ]))
    .unwrap()
}

/// Ada (instance super admin, owner), Bob (custom `writer`: read, create, update, publish)
/// and Carol (viewer), in Ada's organization.
struct People {
    ada: Session,
    bob: Session,
    carol: Session,
}

async fn start(url: &str) -> (TestApp, People) {
    let mut config = config_for(url);
    config.auth.invite_only = false;
    let app = TestApp::custom(config, |b| b.schemas(schemas())).await;
    let ada = app.sign_up("Ada", "ada@example.com").await;
    let org = app.active_organization(&ada).await;
    let res = app
        .post(
            "/api/roles",
            json!({"name": "writer", "capabilities": ["document.read", "document.create", "document.update", "document.publish", "asset.read"]}),
        )
        .cookie(&ada)
        .send()
        .await;
    assert_eq!(res.status, StatusCode::CREATED, "{}", res.body);
    let bob = app.sign_up("Bob", "bob@example.com").await;
    app.join(&bob, &org, "writer").await;
    let carol = app.sign_up("Carol", "carol@example.com").await;
    app.join(&carol, &org, "viewer").await;
    (app, People { ada, bob, carol })
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

/// A post by Ada with a hidden `secret`, referencing a draft-only author who references
/// another: (post, author, mentor).
async fn seed(app: &TestApp, p: &People) -> (String, String, String) {
    let mentor = create(app, &p.ada, "author", json!({"name": "Mentor"})).await;
    let author = create(
        app,
        &p.ada,
        "author",
        json!({"name": "Grace", "mentor": {"_ref": mentor}}),
    )
    .await;
    let post = create(
        app,
        &p.ada,
        "post",
        json!({"title": "Héllo wörld", "slug": {"current": "héllo wörld/?"}, "secret": "s3",
               "author": {"_ref": author}}),
    )
    .await;
    (post, author, mentor)
}

async fn make_link(app: &TestApp, s: &Session, id: &str) -> Value {
    let res = app
        .req(Method::POST, &format!("{DOCS}/{id}/preview"))
        .cookie(s)
        .send()
        .await;
    assert_eq!(res.status, StatusCode::CREATED, "{}", res.body);
    res.body["data"].clone()
}

async fn token_for(app: &TestApp, s: &Session, id: &str) -> String {
    make_link(app, s, id).await["token"]
        .as_str()
        .unwrap()
        .to_string()
}

async fn read(app: &TestApp, token: &str, path: &str) -> Reply {
    app.get(path).header("x-cms-preview", token).send().await
}

fn unauthorized(res: &Reply) {
    res.assert_access_refusal(StatusCode::UNAUTHORIZED, "Unauthorized");
}

async fn a_link_is_made_by_who_may_update_the_document(url: String) {
    let (app, p) = start(&url).await;
    let (post, author, _) = seed(&app, &p).await;
    let link = make_link(&app, &p.bob, &post).await;
    let token = link["token"].as_str().unwrap();
    assert!(token.starts_with("cmsp_") && token.len() > 40, "{token}");
    let keys: Vec<&String> = link.as_object().unwrap().keys().collect();
    assert_eq!(keys, ["expiresAt", "token", "url"]);
    // The clock's now plus delivery.previewMinutes (60 by default).
    let expires = chrono::DateTime::parse_from_rfc3339(link["expiresAt"].as_str().unwrap())
        .unwrap()
        .timestamp_millis();
    let expected = app.clock.now().millis() + 60 * 60_000;
    assert!(
        (expected - 5_000..=expected).contains(&expires),
        "{expires} vs {expected}"
    );
    // Each value URL-encoded: a slug cannot add a path segment or a parameter.
    assert_eq!(
        link["url"],
        json!(format!(
            "https://www.example.com/post/h%C3%A9llo%20w%C3%B6rld%2F%3F?preview={token}&id={post}"
        ))
    );
    // A type without previewUrl: url is null, the token works all the same.
    let bare = make_link(&app, &p.bob, &author).await;
    assert_eq!(bare["url"], Value::Null);
    let res = read(
        &app,
        bare["token"].as_str().unwrap(),
        &format!("{DOCS}/{author}"),
    )
    .await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);

    // A viewer and a read key may not make one; another organization's document is not there.
    let path = format!("{DOCS}/{post}/preview");
    app.req(Method::POST, &path)
        .cookie(&p.carol)
        .send()
        .await
        .assert_access_refusal(StatusCode::FORBIDDEN, "Forbidden");
    let key = app
        .create_key(&p.ada, json!({"name": "site", "permissions": ["read"]}))
        .await;
    app.req(Method::POST, &path)
        .key(&key)
        .send()
        .await
        .assert_access_refusal(StatusCode::FORBIDDEN, "Forbidden");
    insert_organization(
        &app,
        "elsewhere",
        None,
        &[("x1", "post", json!({"title": "X"}))],
    )
    .await;
    let res = app
        .req(Method::POST, &format!("{DOCS}/x1/preview"))
        .cookie(&p.ada)
        .send()
        .await;
    res.assert_handler_error(StatusCode::NOT_FOUND, "Not Found");
    let res = app
        .req(Method::POST, &format!("{DOCS}/nope/preview"))
        .cookie(&p.bob)
        .send()
        .await;
    res.assert_handler_error(StatusCode::NOT_FOUND, "Not Found");
    // A write key may, and its link reads as the key's maker.
    let writer = app
        .create_key(&p.ada, json!({"name": "ci", "permissions": ["write"]}))
        .await;
    let res = app.req(Method::POST, &path).key(&writer).send().await;
    assert_eq!(res.status, StatusCode::CREATED, "{}", res.body);
    app.stop().await;
}

async fn the_token_reads_that_draft_as_its_maker_sees_it(url: String) {
    let (app, p) = start(&url).await;
    let (post, author, mentor) = seed(&app, &p).await;
    // Published, then changed: the token reads the unpublished change.
    let res = app
        .req(Method::POST, &format!("{DOCS}/{post}/publish"))
        .cookie(&p.ada)
        .send()
        .await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);
    let res = app
        .req(Method::PUT, &format!("{DOCS}/{post}"))
        .cookie(&p.ada)
        .json(
            json!({"data": {"title": "Second draft", "slug": {"current": "second"}, "secret": "s4",
                              "author": {"_ref": author}}}),
        )
        .send()
        .await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);

    let token = token_for(&app, &p.bob, &post).await;
    let path = format!("{DOCS}/{post}?depth=2");
    let res = read(&app, &token, &path).await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);
    assert_eq!(res.header("cache-control"), Some("private, no-store"));
    let doc = &res.body["data"];
    assert_eq!(doc["id"], json!(post));
    assert_eq!(doc["draftData"]["title"], "Second draft");
    assert_eq!(doc["publishedData"]["title"], "Héllo wörld");
    // Bob's role may not read `secret`: neither may his link.
    assert!(doc["draftData"].get("secret").is_none(), "{doc}");
    assert!(doc["publishedData"].get("secret").is_none(), "{doc}");
    // References resolved in the draft perspective, two levels down, though never published.
    let resolved_author = &doc["draftData"]["author"];
    assert_eq!(resolved_author["_id"], json!(author), "{doc}");
    assert_eq!(resolved_author["name"], "Grace");
    assert_eq!(resolved_author["mentor"]["_id"], json!(mentor), "{doc}");
    assert_eq!(resolved_author["mentor"]["name"], "Mentor");
    // Exactly what Bob reads signed in.
    let as_bob = app.get(&path).cookie(&p.bob).send().await;
    assert_eq!(res.body, as_bob.body);
    // And what Ada (who may read `secret`) makes reads as Ada.
    let adas = token_for(&app, &p.ada, &post).await;
    let res = read(&app, &adas, &path).await;
    assert_eq!(res.body["data"]["draftData"]["secret"], "s4");

    // The query form works the same; an unknown token is no credential at all.
    let res = app
        .get(&format!("{DOCS}/{post}?preview={token}"))
        .send()
        .await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);
    assert_eq!(res.body["data"]["draftData"]["title"], "Second draft");
    assert_eq!(res.header("cache-control"), Some("private, no-store"));
    unauthorized(&read(&app, "cmsp_forged", &format!("{DOCS}/{post}")).await);
    app.stop().await;
}

async fn the_token_is_useless_anywhere_else(url: String) {
    let (app, p) = start(&url).await;
    let (post, author, _) = seed(&app, &p).await;
    let token = token_for(&app, &p.bob, &post).await;
    for path in [
        format!("{DOCS}/{author}"),
        format!("{DOCS}?type=post"),
        format!("{DOCS}/by-ids?ids={post}"),
        format!("{DOCS}/{post}/versions"),
        format!("{DOCS}/{post}/back-references"),
        "/api/assets".to_string(),
        "/api/schemas".to_string(),
        "/api/user/access".to_string(),
        "/api/auth/get-session".to_string(),
        "/api/organizations".to_string(),
    ] {
        let res = read(&app, &token, &path).await;
        unauthorized(&res);
        assert_eq!(res.header("cache-control"), Some("private, no-store"));
    }
    let gql = app
        .post(
            "/api/graphql",
            json!({"query": format!("{{ post(id: \"{post}\") {{ id }} }}")}),
        )
        .header("x-cms-preview", &token)
        .send()
        .await;
    unauthorized(&gql);
    for (method, path, body) in [
        (
            Method::PUT,
            format!("{DOCS}/{post}"),
            json!({"data": {"title": "x"}}),
        ),
        (Method::DELETE, format!("{DOCS}/{post}"), json!({})),
        (Method::POST, format!("{DOCS}/{post}/preview"), json!({})),
        (Method::DELETE, format!("{DOCS}/{post}/preview"), json!({})),
        (Method::POST, format!("{DOCS}/{post}/publish"), json!({})),
        (
            Method::POST,
            DOCS.to_string(),
            json!({"type": "post", "data": {}}),
        ),
    ] {
        let res = app
            .req(method.clone(), &path)
            .json(body)
            .header("x-cms-preview", &token)
            .send()
            .await;
        unauthorized(&res);
    }
    // Nothing was written.
    let res = app
        .get(&format!("{DOCS}/{post}"))
        .cookie(&p.ada)
        .send()
        .await;
    assert_eq!(res.body["data"]["draftData"]["title"], "Héllo wörld");
    assert_eq!(res.body["data"]["publishedData"], Value::Null);
    app.stop().await;
}

async fn expired_revoked_and_orphaned_tokens_stop_working(url: String) {
    let (app, p) = start(&url).await;
    let (post, author, _) = seed(&app, &p).await;
    let path = format!("{DOCS}/{post}");

    // Expired: a minute past delivery.previewMinutes.
    let token = token_for(&app, &p.bob, &post).await;
    app.clock.advance_millis(59 * 60_000);
    assert_eq!(read(&app, &token, &path).await.status, StatusCode::OK);
    app.clock.advance_millis(2 * 60_000);
    unauthorized(&read(&app, &token, &path).await);

    // Revoked: every link of the document at once, by who may update it.
    let first = token_for(&app, &p.bob, &post).await;
    let second = token_for(&app, &p.ada, &post).await;
    let other = token_for(&app, &p.bob, &author).await;
    let revoke = format!("{DOCS}/{post}/preview");
    app.req(Method::DELETE, &revoke)
        .cookie(&p.carol)
        .send()
        .await
        .assert_access_refusal(StatusCode::FORBIDDEN, "Forbidden");
    assert_eq!(read(&app, &first, &path).await.status, StatusCode::OK);
    let res = app.req(Method::DELETE, &revoke).cookie(&p.bob).send().await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);
    assert_eq!(
        res.body["data"],
        json!({"documentId": post, "revoked": 3}),
        "the expired one too"
    );
    unauthorized(&read(&app, &first, &path).await);
    unauthorized(&read(&app, &second, &path).await);
    let author_path = format!("{DOCS}/{author}");
    assert_eq!(
        read(&app, &other, &author_path).await.status,
        StatusCode::OK,
        "another document's link is untouched"
    );

    // The maker's role loses document.read (and the writes that imply it): the link reads
    // nothing any more.
    let token = token_for(&app, &p.bob, &post).await;
    let res = app
        .req(Method::PATCH, "/api/roles/writer")
        .cookie(&p.ada)
        .json(json!({"capabilities": ["asset.read"]}))
        .send()
        .await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);
    unauthorized(&read(&app, &token, &path).await);
    unauthorized(&read(&app, &other, &author_path).await);

    // The document is deleted: its links go with it.
    let token = token_for(&app, &p.ada, &author).await;
    let post_gone = create(&app, &p.ada, "author", json!({"name": "Temp"})).await;
    let temp = token_for(&app, &p.ada, &post_gone).await;
    let res = app
        .req(Method::DELETE, &format!("{DOCS}/{post_gone}"))
        .cookie(&p.ada)
        .send()
        .await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);
    unauthorized(&read(&app, &temp, &format!("{DOCS}/{post_gone}")).await);
    assert_eq!(
        read(&app, &token, &author_path).await.status,
        StatusCode::OK
    );
    app.stop().await;
}

async fn preview_url_is_written_back_by_the_schemas_endpoint(url: String) {
    let (app, p) = start(&url).await;
    let res = app.get("/api/schemas").cookie(&p.ada).send().await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);
    let types = res.body["data"].as_array().unwrap();
    let of = |name: &str| {
        types
            .iter()
            .find(|t| t["name"] == name)
            .unwrap_or_else(|| panic!("{name} in {types:?}"))
            .clone()
    };
    assert_eq!(of("post")["previewUrl"], TEMPLATE);
    assert!(of("author").get("previewUrl").is_none());

    // The OpenAPI document describes the endpoints, the credential and the schema option.
    let res = app.get("/api/openapi.json").cookie(&p.ada).send().await;
    assert_eq!(res.status, StatusCode::OK);
    let paths = &res.body["paths"];
    let preview = &paths["/api/documents/{id}/preview"];
    assert!(preview["post"]["responses"]["201"].is_object(), "{preview}");
    assert!(
        preview["delete"]["responses"]["200"].is_object(),
        "{preview}"
    );
    let params = paths["/api/documents/{id}"]["get"]["parameters"]
        .as_array()
        .unwrap();
    let has =
        |name: &str, place: &str| params.iter().any(|p| p["name"] == name && p["in"] == place);
    assert!(
        has("x-cms-preview", "header") && has("preview", "query"),
        "{params:?}"
    );
    assert!(res.body["components"]["schemas"]["Schema"]["properties"]["previewUrl"].is_object());
    app.stop().await;
}

cms_store::both_engines!(
    a_link_is_made_by_who_may_update_the_document,
    the_token_reads_that_draft_as_its_maker_sees_it,
    the_token_is_useless_anywhere_else,
    expired_revoked_and_orphaned_tokens_stop_working,
    preview_url_is_written_back_by_the_schemas_endpoint,
);

#[tokio::test]
async fn a_bad_preview_url_stops_the_start_naming_schema_and_problem() {
    let mut config = config_for("sqlite://unused");
    std::fs::create_dir_all(&config.data_dir).unwrap();
    let file = config.data_dir.join("site.json");
    config.schemas.paths = vec![config.data_dir.join("*.json").display().to_string()];
    for (template, says) in [
        (
            "https://www.example.com/{slug}/{draft}",
            "unknown placeholder `{draft}`",
        ),
        ("ftp://www.example.com/{id}", "http:// or https://"),
        ("/relative/{id}", "http:// or https://"),
        ("https://{slug}.example.com/", "fixed host"),
    ] {
        let schema = json!({"type": "document", "name": "page", "previewUrl": template,
                            "fields": [{"name": "title", "type": "string"}]});
        std::fs::write(&file, schema.to_string()).unwrap();
        let err = cms::Builder::new(config.clone())
            .build()
            .await
            .err()
            .expect("the start is refused");
        let message = err.to_string();
        for part in ["site.json", "page", "previewUrl", says] {
            assert!(message.contains(part), "{part} in {message}");
        }
    }
    let _ = std::fs::remove_dir_all(&config.data_dir);
}
