//! Documents through HTTP: the state table, every endpoint, the where language, depth,
//! versions, singletons (SPEC.md "Endpoints: Documents", CONTRACT.md sections 5 and 12).

use axum::http::{Method, StatusCode};
use serde_json::{Value, json};

use crate::support::{Session, TestApp, config_for};

const DOCS: &str = "/api/documents";

async fn create(app: &TestApp, s: &Session, doc_type: &str, data: Value) -> Value {
    let res = app
        .post(DOCS, json!({"type": doc_type, "data": data}))
        .cookie(s)
        .send()
        .await;
    assert_eq!(res.status, StatusCode::CREATED, "{}", res.body);
    res.body["data"].clone()
}

fn id(doc: &Value) -> String {
    doc["id"].as_str().unwrap().to_string()
}

async fn query(app: &TestApp, s: &Session, body: Value) -> Value {
    let res = app
        .post("/api/documents/query", body)
        .cookie(s)
        .send()
        .await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);
    res.body
}

fn titles(body: &Value) -> Vec<String> {
    body["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["draftData"]["title"].as_str().unwrap_or("").to_string())
        .collect()
}

async fn drafts_are_saved_incomplete_and_refused_when_malformed(url: String) {
    let app = TestApp::start(&url).await;
    let ada = app.sign_up("Ada", "ada@example.com").await;
    // Incomplete: saved, and validation says what would block publishing.
    let res = app
        .post(
            DOCS,
            json!({"type": "post", "data": {"excerpt": "no title yet"}}),
        )
        .cookie(&ada)
        .send()
        .await;
    assert_eq!(res.status, StatusCode::CREATED, "{}", res.body);
    assert_eq!(res.body["validation"]["isValid"], false);
    assert_eq!(res.body["validation"]["errors"][0]["path"], "title");
    assert_eq!(res.body["validation"]["errors"][0]["code"], "required");
    let doc = &res.body["data"];
    assert_eq!(doc["type"], "post");
    assert_eq!(doc["_meta"]["revision"], 1);
    assert!(
        doc.get("publishedData").is_none() && doc.get("publishedHash").is_none(),
        "absent while draft-only: {doc}"
    );
    assert!(doc["organizationId"].is_string() && doc["createdAt"].is_string());
    assert_eq!(doc["createdBy"], ada.user["id"]);

    // Structurally wrong: 400 with issues, nothing stored.
    for (data, path, code) in [
        (json!({"title": "x", "surprise": 1}), "surprise", "unknown"),
        (json!({"title": 5}), "title", "type"),
        (json!({"tags": ["a", 3]}), "tags[1]", "type"),
    ] {
        let res = app
            .post(DOCS, json!({"type": "post", "data": data}))
            .cookie(&ada)
            .send()
            .await;
        res.assert_handler_error(StatusCode::BAD_REQUEST, "Bad Request");
        assert_eq!(res.body["issues"][0]["path"], path, "{}", res.body);
        assert_eq!(res.body["issues"][0]["code"], code, "{}", res.body);
    }
    let res = app
        .post(DOCS, json!({"type": "post", "data": [1]}))
        .cookie(&ada)
        .send()
        .await;
    res.assert_handler_error(StatusCode::BAD_REQUEST, "Bad Request");
    let res = app
        .post(DOCS, json!({"type": "nope", "data": {}}))
        .cookie(&ada)
        .send()
        .await;
    res.assert_handler_error(StatusCode::BAD_REQUEST, "Bad Request");
    let res = app
        .post(DOCS, json!({"data": {}}))
        .cookie(&ada)
        .send()
        .await;
    res.assert_handler_error(StatusCode::BAD_REQUEST, "Bad Request");
    // publish: true runs the full validation.
    let res = app
        .post(
            DOCS,
            json!({"type": "post", "data": {"excerpt": "x"}, "publish": true}),
        )
        .cookie(&ada)
        .send()
        .await;
    res.assert_handler_error(StatusCode::BAD_REQUEST, "Bad Request");
    assert_eq!(res.body["issues"][0]["path"], "title");
    let list = app
        .get("/api/documents?type=post")
        .cookie(&ada)
        .send()
        .await;
    assert_eq!(
        list.body["pagination"]["total"], 1,
        "only the incomplete draft was stored"
    );
    app.stop().await;
}

async fn updates_are_guarded_by_revision(url: String) {
    let app = TestApp::start(&url).await;
    let ada = app.sign_up("Ada", "ada@example.com").await;
    let doc = create(&app, &ada, "post", json!({"title": "One"})).await;
    let path = format!("{DOCS}/{}", id(&doc));
    let res = app
        .req(Method::PUT, &path)
        .json(json!({"data": {"title": "Two"}, "expectedRevision": 1}))
        .cookie(&ada)
        .send()
        .await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);
    assert_eq!(res.body["data"]["_meta"]["revision"], 2);
    assert_eq!(res.body["data"]["draftData"], json!({"title": "Two"}));

    let stale = app
        .req(Method::PUT, &path)
        .json(json!({"data": {"title": "Lost"}, "expectedRevision": 1}))
        .cookie(&ada)
        .send()
        .await;
    stale.assert_handler_error(StatusCode::CONFLICT, "Conflict");
    assert_eq!(stale.body["currentRevision"], 2);
    let message = stale.body["message"].as_str().unwrap();
    assert!(message.contains('1') && message.contains('2'), "{message}");
    let now = app.get(&path).cookie(&ada).send().await;
    assert_eq!(
        now.body["data"]["draftData"]["title"], "Two",
        "nothing was overwritten"
    );

    // Without expectedRevision the write is unconditional.
    let res = app
        .req(Method::PUT, &path)
        .json(json!({"data": {"title": "Three"}}))
        .cookie(&ada)
        .send()
        .await;
    assert_eq!(res.body["data"]["_meta"]["revision"], 3);
    // PUT with publish: true publishes the new draft.
    let res = app
        .req(Method::PUT, &path)
        .json(json!({"data": {"title": "Four"}, "publish": true}))
        .cookie(&ada)
        .send()
        .await;
    assert_eq!(res.body["data"]["publishedData"], json!({"title": "Four"}));
    assert_eq!(res.body["data"]["_meta"]["revision"], 4);
    let res = app
        .req(Method::PUT, &format!("{DOCS}/nope"))
        .json(json!({"data": {}}))
        .cookie(&ada)
        .send()
        .await;
    res.assert_handler_error(StatusCode::NOT_FOUND, "Not Found");
    app.stop().await;
}

async fn publishing_copies_the_draft_with_its_hash(url: String) {
    let app = TestApp::start(&url).await;
    let ada = app.sign_up("Ada", "ada@example.com").await;
    let doc = create(&app, &ada, "post", json!({"views": 3, "title": "Hello"})).await;
    let path = format!("{DOCS}/{}", id(&doc));
    let publish = format!("{path}/publish");
    app.get(&format!("{path}?perspective=published"))
        .cookie(&ada)
        .send()
        .await
        .assert_handler_error(StatusCode::NOT_FOUND, "Not Found");

    let stale = app
        .post(&publish, json!({"expectedRevision": 7}))
        .cookie(&ada)
        .send()
        .await;
    assert_eq!(
        (stale.status, stale.body["currentRevision"].clone()),
        (StatusCode::CONFLICT, json!(1))
    );

    let res = app.req(Method::POST, &publish).cookie(&ada).send().await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);
    let published = &res.body["data"];
    assert_eq!(
        published["publishedData"],
        json!({"title": "Hello", "views": 3})
    );
    assert_eq!(
        published["_meta"]["revision"], 1,
        "publishing does not change the revision"
    );
    // RFC 8785: sorted keys, no whitespace.
    let expected = cms::core::canonical::published_hash(&json!({"title": "Hello", "views": 3}));
    assert_eq!(published["publishedHash"], expected.as_str());
    assert!(published["publishedAt"].is_string());
    let got = app
        .get(&format!("{path}?perspective=published"))
        .cookie(&ada)
        .send()
        .await;
    assert_eq!(got.body["data"]["publishedData"]["title"], "Hello");

    // The draft moves on; the published copy stays until the next publish.
    app.req(Method::PUT, &path)
        .json(json!({"data": {}}))
        .cookie(&ada)
        .send()
        .await;
    let res = app.req(Method::POST, &publish).cookie(&ada).send().await;
    res.assert_handler_error(StatusCode::BAD_REQUEST, "Bad Request");
    assert_eq!(res.body["issues"][0]["code"], "required");
    let got = app.get(&path).cookie(&ada).send().await;
    assert_eq!(got.body["data"]["publishedData"]["title"], "Hello");

    let res = app
        .req(Method::DELETE, &publish)
        .json(json!({"expectedRevision": 1}))
        .cookie(&ada)
        .send()
        .await;
    assert_eq!(res.status, StatusCode::CONFLICT, "{}", res.body);
    let res = app.req(Method::DELETE, &publish).cookie(&ada).send().await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);
    assert!(res.body["data"].get("publishedData").is_none());
    assert_eq!(
        res.body["data"]["_meta"]["revision"], 2,
        "unpublishing does not change the revision"
    );
    app.get(&format!("{path}?perspective=published"))
        .cookie(&ada)
        .send()
        .await
        .assert_handler_error(StatusCode::NOT_FOUND, "Not Found");
    app.stop().await;
}

async fn versions_list_get_restore_and_prune(url: String) {
    let mut config = config_for(&url);
    config.versioning.max_versions = 4;
    let app = TestApp::with(config, None).await;
    let ada = app.sign_up("Ada", "ada@example.com").await;
    let doc = create(&app, &ada, "post", json!({"title": "v1"})).await;
    let path = format!("{DOCS}/{}", id(&doc));
    app.req(Method::PUT, &path)
        .json(json!({"data": {"title": "v2"}}))
        .cookie(&ada)
        .send()
        .await;
    app.req(Method::POST, &format!("{path}/publish"))
        .cookie(&ada)
        .send()
        .await;

    let res = app
        .get(&format!("{path}/versions"))
        .cookie(&ada)
        .send()
        .await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);
    assert_eq!(res.body["total"], 3);
    let numbers: Vec<_> = res.body["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v["versionNumber"].clone())
        .collect();
    assert_eq!(numbers, vec![json!(3), json!(2), json!(1)]);
    assert_eq!(res.body["data"][0]["eventType"], "publish");
    assert_eq!(res.body["data"][1]["eventType"], "draft");
    assert_eq!(res.body["data"][0]["createdByName"], "Ada");
    let page = app
        .get(&format!("{path}/versions?limit=1&offset=1"))
        .cookie(&ada)
        .send()
        .await;
    assert_eq!(page.body["data"][0]["versionNumber"], 2);

    let v1 = app
        .get(&format!("{path}/versions/1"))
        .cookie(&ada)
        .send()
        .await;
    assert_eq!(v1.body["data"]["data"], json!({"title": "v1"}));
    app.get(&format!("{path}/versions/99"))
        .cookie(&ada)
        .send()
        .await
        .assert_handler_error(StatusCode::NOT_FOUND, "Not Found");

    let stale = app
        .post(
            &format!("{path}/versions/1/restore"),
            json!({"expectedRevision": 1}),
        )
        .cookie(&ada)
        .send()
        .await;
    assert_eq!(
        (stale.status, stale.body["currentRevision"].clone()),
        (StatusCode::CONFLICT, json!(2))
    );
    let res = app
        .req(Method::POST, &format!("{path}/versions/1/restore"))
        .cookie(&ada)
        .send()
        .await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);
    assert_eq!(res.body["data"]["draftData"], json!({"title": "v1"}));
    assert_eq!(
        res.body["data"]["publishedData"],
        json!({"title": "v2"}),
        "published data untouched"
    );
    assert_eq!(res.body["data"]["_meta"]["revision"], 3);
    let res = app
        .get(&format!("{path}/versions"))
        .cookie(&ada)
        .send()
        .await;
    assert_eq!(res.body["data"][0]["versionNumber"], 4);
    assert_eq!(res.body["data"][0]["eventType"], "draft");

    // Retention: at most 4 versions, the oldest pruned on write.
    for i in 0..3 {
        app.req(Method::PUT, &path)
            .json(json!({"data": {"title": format!("more {i}")}}))
            .cookie(&ada)
            .send()
            .await;
    }
    let res = app
        .get(&format!("{path}/versions?limit=100"))
        .cookie(&ada)
        .send()
        .await;
    assert_eq!(res.body["total"], 4);
    assert_eq!(res.body["data"][3]["versionNumber"], 4);
    app.stop().await;
}

/// A known dataset for the where language.
async fn seed(app: &TestApp, s: &Session) -> Vec<String> {
    let docs = [
        json!({"title": "Rust in Action", "views": 10, "tags": ["rust", "systems"], "publishedOn": "2024-01-10", "slug": {"current": "rust-in-action"}}),
        json!({"title": "Learning rust fast", "views": 5, "tags": ["Rust"], "publishedOn": "2024-03-01"}),
        json!({"title": "Cooking 100% pasta", "views": 50, "tags": ["food"], "publishedOn": "2023-12-24"}),
        json!({"title": "Gardening", "tags": []}),
        json!({"title": "5", "views": 0}),
    ];
    let mut ids = Vec::new();
    for d in docs {
        ids.push(id(&create(app, s, "post", d).await));
    }
    ids
}

async fn the_where_language(url: String) {
    let app = TestApp::start(&url).await;
    let ada = app.sign_up("Ada", "ada@example.com").await;
    seed(&app, &ada).await;
    let q = |w: Value| {
        query(
            &app,
            &ada,
            json!({"type": "post", "where": w, "sort": "title", "limit": 100}),
        )
    };
    let cases: Vec<(Value, Vec<&str>)> = vec![
        (json!({"title": {"equals": "Gardening"}}), vec!["Gardening"]),
        (json!({"title": {"equals": 5}}), vec![]),
        (json!({"views": {"equals": 5}}), vec!["Learning rust fast"]),
        (
            json!({"views": {"not_equals": 10}}),
            vec!["5", "Cooking 100% pasta", "Gardening", "Learning rust fast"],
        ),
        (
            json!({"views": {"in": [0, 50]}}),
            vec!["5", "Cooking 100% pasta"],
        ),
        (
            json!({"views": {"not_in": [0, 50]}}),
            vec!["Gardening", "Learning rust fast", "Rust in Action"],
        ),
        (json!({"views": {"exists": false}}), vec!["Gardening"]),
        (
            json!({"views": {"exists": true}}),
            vec![
                "5",
                "Cooking 100% pasta",
                "Learning rust fast",
                "Rust in Action",
            ],
        ),
        (
            json!({"views": {"greater_than": 5}}),
            vec!["Cooking 100% pasta", "Rust in Action"],
        ),
        (
            json!({"views": {"greater_than_equal": 5}}),
            vec!["Cooking 100% pasta", "Learning rust fast", "Rust in Action"],
        ),
        (json!({"views": {"less_than": 5}}), vec!["5"]),
        (
            json!({"views": {"less_than_equal": 5}}),
            vec!["5", "Learning rust fast"],
        ),
        (
            json!({"publishedOn": {"greater_than": "2024-01-01"}}),
            vec!["Learning rust fast", "Rust in Action"],
        ),
        (
            json!({"publishedOn": {"less_than_equal": "2023-12-24"}}),
            vec!["Cooking 100% pasta"],
        ),
        (
            json!({"title": {"like": "RUST action"}}),
            vec!["Rust in Action"],
        ),
        (
            json!({"title": {"contains": "rust"}}),
            vec!["Learning rust fast", "Rust in Action"],
        ),
        (
            json!({"title": {"contains": "100%"}}),
            vec!["Cooking 100% pasta"],
        ),
        (
            json!({"title": {"contains": "%"}}),
            vec!["Cooking 100% pasta"],
        ),
        (
            json!({"title": {"starts_with": "learn"}}),
            vec!["Learning rust fast"],
        ),
        (
            json!({"title": {"ends_with": "ACTION"}}),
            vec!["Rust in Action"],
        ),
        (
            json!({"tags": {"contains": "rust"}}),
            vec!["Learning rust fast", "Rust in Action"],
        ),
        (
            json!({"slug": {"equals": "rust-in-action"}}),
            vec!["Rust in Action"],
        ),
        (
            json!({"or": [{"views": {"equals": 0}}, {"title": {"equals": "Gardening"}}]}),
            vec!["5", "Gardening"],
        ),
        (
            json!({"and": [{"views": {"greater_than": 1}}, {"tags": {"contains": "rust"}}]}),
            vec!["Learning rust fast", "Rust in Action"],
        ),
        (
            json!({"views": {"greater_than": 1}, "title": {"contains": "cook"}}),
            vec!["Cooking 100% pasta"],
        ),
        // Non-validation rules: an unknown operator drops the clause...
        (
            json!({"views": {"approximately": 3}}),
            vec![
                "5",
                "Cooking 100% pasta",
                "Gardening",
                "Learning rust fast",
                "Rust in Action",
            ],
        ),
        // ...a malformed clause or an undeclared field matches nothing.
        (json!({"views": {"in": 5}}), vec![]),
        (json!({"views": 5}), vec![]),
        (json!({"views": {"equals": 5, "not_equals": 6}}), vec![]),
        (json!({"views": {"exists": "yes"}}), vec![]),
        (json!({"nonsense": {"equals": 1}}), vec![]),
    ];
    for (clause, expected) in cases {
        let body = q(clause.clone()).await;
        assert_eq!(titles(&body), expected, "where {clause}");
        assert_eq!(
            body["pagination"]["total"],
            expected.len(),
            "where {clause}"
        );
    }
    app.stop().await;
}

async fn lists_paginate_sort_and_filter_by_status(url: String) {
    let app = TestApp::start(&url).await;
    let ada = app.sign_up("Ada", "ada@example.com").await;
    let ids = seed(&app, &ada).await;
    app.req(Method::POST, &format!("{DOCS}/{}/publish", ids[0]))
        .cookie(&ada)
        .send()
        .await;

    let res = app
        .get("/api/documents?type=post&pageSize=2&page=2&sort=title")
        .cookie(&ada)
        .send()
        .await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);
    assert_eq!(titles(&res.body), vec!["Gardening", "Learning rust fast"]);
    assert_eq!(
        res.body["pagination"],
        json!({"total": 5, "page": 2, "pageSize": 2, "totalPages": 3, "hasNextPage": true, "hasPrevPage": true})
    );
    let res = app
        .get("/api/documents?type=post&limit=2&page=3&sort=title")
        .cookie(&ada)
        .send()
        .await;
    assert_eq!(titles(&res.body), vec!["Rust in Action"]);
    assert_eq!(res.body["pagination"]["hasNextPage"], false);
    let res = app
        .get("/api/documents?type=post")
        .cookie(&ada)
        .send()
        .await;
    assert_eq!(res.body["pagination"]["pageSize"], 20);
    assert_eq!(titles(&res.body)[0], "5", "newest first by default");

    // Missing values sort as the largest: last ascending, first descending.
    let res = app
        .get("/api/documents?type=post&sort=views")
        .cookie(&ada)
        .send()
        .await;
    assert_eq!(
        titles(&res.body),
        vec![
            "5",
            "Learning rust fast",
            "Rust in Action",
            "Cooking 100% pasta",
            "Gardening"
        ]
    );
    let res = app
        .get("/api/documents?type=post&sort=-views")
        .cookie(&ada)
        .send()
        .await;
    assert_eq!(
        titles(&res.body),
        vec![
            "Gardening",
            "Cooking 100% pasta",
            "Rust in Action",
            "Learning rust fast",
            "5"
        ]
    );

    let res = app
        .get("/api/documents?type=post&status=published")
        .cookie(&ada)
        .send()
        .await;
    assert_eq!(titles(&res.body), vec!["Rust in Action"]);
    let res = app
        .get("/api/documents?type=post&status=draft")
        .cookie(&ada)
        .send()
        .await;
    assert_eq!(res.body["pagination"]["total"], 4);
    let res = app
        .get("/api/documents?type=post&perspective=published")
        .cookie(&ada)
        .send()
        .await;
    assert_eq!(res.body["pagination"]["total"], 1);
    // filterOrganizationIds is ignored by the list.
    let res = app
        .get("/api/documents?type=post&filterOrganizationIds=x")
        .cookie(&ada)
        .send()
        .await;
    assert_eq!(res.body["pagination"]["total"], 5);

    for bad in [
        "page=0",
        "pageSize=0",
        "pageSize=abc",
        "status=maybe",
        "perspective=both",
        "depth=6",
        "depth=-1",
    ] {
        let res = app
            .get(&format!("/api/documents?type=post&{bad}"))
            .cookie(&ada)
            .send()
            .await;
        res.assert_handler_error(StatusCode::BAD_REQUEST, "Bad Request");
    }
    app.get("/api/documents")
        .cookie(&ada)
        .send()
        .await
        .assert_handler_error(StatusCode::BAD_REQUEST, "Bad Request");
    app.stop().await;
}

async fn references_resolve_by_depth_and_point_back(url: String) {
    let app = TestApp::start(&url).await;
    let ada = app.sign_up("Ada", "ada@example.com").await;
    let author = create(&app, &ada, "author", json!({"name": "Grace"})).await;
    let post = create(
        &app,
        &ada,
        "post",
        json!({"title": "P", "author": {"_ref": id(&author)}}),
    )
    .await;
    let path = format!("{DOCS}/{}", id(&post));

    let res = app.get(&path).cookie(&ada).send().await;
    assert_eq!(
        res.body["data"]["draftData"]["author"],
        json!({"_ref": id(&author)})
    );
    let res = app
        .get(&format!("{path}?depth=1"))
        .cookie(&ada)
        .send()
        .await;
    assert_eq!(
        res.body["data"]["draftData"]["author"],
        json!({"name": "Grace", "_id": id(&author), "_type": "author"})
    );
    // The published perspective resolves published copies only: the author is a draft.
    app.req(Method::POST, &format!("{path}/publish"))
        .cookie(&ada)
        .send()
        .await;
    let res = app
        .get(&format!("{path}?depth=1&perspective=published"))
        .cookie(&ada)
        .send()
        .await;
    assert_eq!(
        res.body["data"]["publishedData"]["author"],
        json!({"_ref": id(&author)})
    );
    let res = query(&app, &ada, json!({"type": "post", "depth": 2})).await;
    assert_eq!(res["data"][0]["draftData"]["author"]["name"], "Grace");

    // A missing target blocks publishing and stays unresolved.
    let broken = create(
        &app,
        &ada,
        "post",
        json!({"title": "B", "author": {"_ref": "missing"}}),
    )
    .await;
    let res = app
        .req(Method::POST, &format!("{DOCS}/{}/publish", id(&broken)))
        .cookie(&ada)
        .send()
        .await;
    res.assert_handler_error(StatusCode::BAD_REQUEST, "Bad Request");
    assert_eq!(res.body["issues"][0]["path"], "author");
    let res = app
        .get(&format!("{DOCS}/{}?depth=1", id(&broken)))
        .cookie(&ada)
        .send()
        .await;
    assert_eq!(
        res.body["data"]["draftData"]["author"],
        json!({"_ref": "missing"})
    );

    let res = app
        .get(&format!("{DOCS}/{}/back-references", id(&author)))
        .cookie(&ada)
        .send()
        .await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);
    let back: Vec<_> = res.body["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(id)
        .collect();
    assert_eq!(back, vec![id(&post)]);
    app.stop().await;
}

async fn by_ids_keeps_request_order(url: String) {
    let app = TestApp::start(&url).await;
    let ada = app.sign_up("Ada", "ada@example.com").await;
    let ids = seed(&app, &ada).await;
    app.req(Method::POST, &format!("{DOCS}/{}/publish", ids[1]))
        .cookie(&ada)
        .send()
        .await;
    let url = format!(
        "/api/documents/by-ids?ids={},missing,{}&ids={}",
        ids[2], ids[0], ids[1]
    );
    let res = app.get(&url).cookie(&ada).send().await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);
    let got: Vec<_> = res.body["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(id)
        .collect();
    assert_eq!(got, vec![ids[2].clone(), ids[0].clone(), ids[1].clone()]);
    let res = app
        .get(&format!("{url}&perspective=published"))
        .cookie(&ada)
        .send()
        .await;
    let got: Vec<_> = res.body["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(id)
        .collect();
    assert_eq!(got, vec![ids[1].clone()]);
    let many: Vec<String> = (0..101).map(|i| format!("id{i}")).collect();
    let res = app
        .get(&format!("/api/documents/by-ids?ids={}", many.join(",")))
        .cookie(&ada)
        .send()
        .await;
    res.assert_handler_error(StatusCode::BAD_REQUEST, "Bad Request");
    app.stop().await;
}

async fn singletons_are_created_lazily_and_never_deleted(url: String) {
    let app = TestApp::start(&url).await;
    let ada = app.sign_up("Ada", "ada@example.com").await;
    let res = app
        .get("/api/documents?type=siteSettings&page=3&status=published")
        .cookie(&ada)
        .send()
        .await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);
    let rows = res.body["data"].as_array().unwrap();
    assert_eq!(rows.len(), 1, "one row, filters and pagination ignored");
    assert_eq!(rows[0]["singleton"], true);
    let row_id = id(&rows[0]);
    let again = app
        .get("/api/documents?type=siteSettings")
        .cookie(&ada)
        .send()
        .await;
    assert_eq!(id(&again.body["data"][0]), row_id);
    let res = app
        .req(Method::PUT, &format!("{DOCS}/{row_id}"))
        .json(json!({"data": {"siteName": "Acme"}}))
        .cookie(&ada)
        .send()
        .await;
    assert_eq!(res.body["data"]["draftData"]["siteName"], "Acme");
    let res = app
        .req(Method::DELETE, &format!("{DOCS}/{row_id}"))
        .cookie(&ada)
        .send()
        .await;
    res.assert_handler_error(StatusCode::BAD_REQUEST, "Bad Request");
    let res = app
        .post(DOCS, json!({"type": "siteSettings", "data": {}}))
        .cookie(&ada)
        .send()
        .await;
    res.assert_handler_error(StatusCode::CONFLICT, "Conflict");
    app.stop().await;
}

async fn delete_removes_the_document(url: String) {
    let app = TestApp::start(&url).await;
    let ada = app.sign_up("Ada", "ada@example.com").await;
    let doc = create(&app, &ada, "page", json!({"title": "About"})).await;
    let path = format!("{DOCS}/{}", id(&doc));
    let res = app.req(Method::DELETE, &path).cookie(&ada).send().await;
    assert_eq!(
        res.body,
        json!({"success": true, "data": {"id": id(&doc), "deleted": true}})
    );
    app.get(&path)
        .cookie(&ada)
        .send()
        .await
        .assert_handler_error(StatusCode::NOT_FOUND, "Not Found");
    app.req(Method::DELETE, &path)
        .cookie(&ada)
        .send()
        .await
        .assert_handler_error(StatusCode::NOT_FOUND, "Not Found");
    app.get(&format!("{path}/versions"))
        .cookie(&ada)
        .send()
        .await
        .assert_handler_error(StatusCode::NOT_FOUND, "Not Found");
    app.stop().await;
}

async fn access_is_checked_and_other_organizations_are_invisible(url: String) {
    let app = TestApp::start(&url).await;
    let ada = app.sign_up("Ada", "ada@example.com").await;
    let doc = create(&app, &ada, "post", json!({"title": "Mine"})).await;
    let path = format!("{DOCS}/{}", id(&doc));
    app.get(&path)
        .send()
        .await
        .assert_access_refusal(StatusCode::UNAUTHORIZED, "Unauthorized");
    app.get("/api/documents?type=post")
        .send()
        .await
        .assert_access_refusal(StatusCode::UNAUTHORIZED, "Unauthorized");

    let read = app
        .create_key(&ada, json!({"name": "r", "permissions": ["read"]}))
        .await;
    assert_eq!(
        app.get(&path).key(&read).send().await.status,
        StatusCode::OK
    );
    assert_eq!(
        app.post("/api/documents/query", json!({"type": "post"}))
            .key(&read)
            .send()
            .await
            .status,
        StatusCode::OK
    );
    app.post(DOCS, json!({"type": "post", "data": {}}))
        .key(&read)
        .send()
        .await
        .assert_access_refusal(StatusCode::FORBIDDEN, "Forbidden");
    app.req(Method::PUT, &path)
        .json(json!({"data": {}}))
        .key(&read)
        .send()
        .await
        .assert_access_refusal(StatusCode::FORBIDDEN, "Forbidden");
    app.req(Method::DELETE, &path)
        .key(&read)
        .send()
        .await
        .assert_access_refusal(StatusCode::FORBIDDEN, "Forbidden");
    app.req(Method::POST, &format!("{path}/publish"))
        .key(&read)
        .send()
        .await
        .assert_access_refusal(StatusCode::FORBIDDEN, "Forbidden");
    let write = app
        .create_key(&ada, json!({"name": "w", "permissions": ["write"]}))
        .await;
    assert_eq!(
        app.post(DOCS, json!({"type": "post", "data": {}}))
            .key(&write)
            .send()
            .await
            .status,
        StatusCode::CREATED
    );

    // A document of another organization is 404 everywhere, never 403.
    insert_org_with_post(&app, "other", None, "Theirs").await;
    let theirs = format!("{DOCS}/other-post");
    app.get(&theirs)
        .cookie(&ada)
        .send()
        .await
        .assert_handler_error(StatusCode::NOT_FOUND, "Not Found");
    app.req(Method::PUT, &theirs)
        .json(json!({"data": {}}))
        .cookie(&ada)
        .send()
        .await
        .assert_handler_error(StatusCode::NOT_FOUND, "Not Found");
    app.req(Method::DELETE, &theirs)
        .cookie(&ada)
        .send()
        .await
        .assert_handler_error(StatusCode::NOT_FOUND, "Not Found");
    app.get(&format!("{theirs}/versions"))
        .cookie(&ada)
        .send()
        .await
        .assert_handler_error(StatusCode::NOT_FOUND, "Not Found");
    app.get(&format!("{theirs}/back-references"))
        .cookie(&ada)
        .send()
        .await
        .assert_handler_error(StatusCode::NOT_FOUND, "Not Found");
    let res = app
        .get("/api/documents/by-ids?ids=other-post")
        .cookie(&ada)
        .send()
        .await;
    assert_eq!(res.body["data"], json!([]));
    let res = query(
        &app,
        &ada,
        json!({"type": "post", "where": {"title": {"equals": "Theirs"}}}),
    )
    .await;
    assert_eq!(res["pagination"]["total"], 0);
    app.stop().await;
}

/// An organization and one post in it, written straight to the store.
async fn insert_org_with_post(app: &TestApp, org_id: &str, parent: Option<&str>, title: &str) {
    let id = format!("{org_id}-post");
    let post = (id.as_str(), "post", json!({"title": title}));
    crate::support::insert_organization(app, org_id, parent, &[post]).await;
}

async fn parents_read_children_only_when_asked(url: String) {
    let app = TestApp::start(&url).await;
    let ada = app.sign_up("Ada", "ada@example.com").await;
    let org = app
        .get("/api/auth/get-session")
        .cookie(&ada)
        .send()
        .await
        .body["session"]["activeOrganizationId"]
        .as_str()
        .unwrap()
        .to_string();
    create(&app, &ada, "post", json!({"title": "Parent's"})).await;
    insert_org_with_post(&app, "child", Some(&org), "Child's").await;
    insert_org_with_post(&app, "stranger", None, "Stranger's").await;

    let res = app
        .get("/api/documents?type=post&sort=title")
        .cookie(&ada)
        .send()
        .await;
    assert_eq!(titles(&res.body), vec!["Parent's"]);
    let res = app
        .get("/api/documents?type=post&sort=title&includeChildOrganizations=true")
        .cookie(&ada)
        .send()
        .await;
    assert_eq!(titles(&res.body), vec!["Child's", "Parent's"]);
    let res = query(&app, &ada, json!({"type": "post", "includeChildOrganizations": true, "filterOrganizationIds": ["stranger"]})).await;
    assert_eq!(res["pagination"]["total"], 2);
    app.get(&format!("{DOCS}/child-post"))
        .cookie(&ada)
        .send()
        .await
        .assert_handler_error(StatusCode::NOT_FOUND, "Not Found");
    let res = app
        .get(&format!("{DOCS}/child-post?includeChildOrganizations=true"))
        .cookie(&ada)
        .send()
        .await;
    assert_eq!(res.body["data"]["draftData"]["title"], "Child's");
    let res = app
        .get("/api/documents/by-ids?ids=child-post,stranger-post&includeChildOrganizations=true")
        .cookie(&ada)
        .send()
        .await;
    assert_eq!(res.body["data"].as_array().unwrap().len(), 1);
    // Writes always target the caller's own organization: a child's document is not theirs.
    let res = app
        .req(Method::PUT, &format!("{DOCS}/child-post"))
        .json(json!({"data": {"title": "x"}}))
        .cookie(&ada)
        .send()
        .await;
    res.assert_handler_error(StatusCode::NOT_FOUND, "Not Found");
    let res = app
        .req(Method::DELETE, &format!("{DOCS}/child-post"))
        .cookie(&ada)
        .send()
        .await;
    res.assert_handler_error(StatusCode::NOT_FOUND, "Not Found");
    app.stop().await;
}

async fn slugs_are_unique_per_type_and_organization(url: String) {
    let app = TestApp::start(&url).await;
    let ada = app.sign_up("Ada", "ada@example.com").await;
    let first = app
        .post(
            DOCS,
            json!({"type": "post", "data": {"title": "A", "slug": {"current": "a"}}}),
        )
        .cookie(&ada)
        .send()
        .await;
    // Drafts do not reserve slugs: a second draft with the same slug is valid until one publishes.
    let second = app
        .post(
            DOCS,
            json!({"type": "post", "data": {"title": "B", "slug": {"current": "a"}}}),
        )
        .cookie(&ada)
        .send()
        .await;
    assert_eq!(
        second.body["validation"]["isValid"], true,
        "{}",
        second.body
    );
    let res = app
        .req(
            Method::POST,
            &format!("{DOCS}/{}/publish", id(&first.body["data"])),
        )
        .cookie(&ada)
        .send()
        .await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);
    // Now the slug is taken: the second document cannot publish it, and saves report it.
    let res = app
        .req(
            Method::POST,
            &format!("{DOCS}/{}/publish", id(&second.body["data"])),
        )
        .cookie(&ada)
        .send()
        .await;
    res.assert_handler_error(StatusCode::BAD_REQUEST, "Bad Request");
    assert_eq!(
        (
            res.body["issues"][0]["path"].clone(),
            res.body["issues"][0]["code"].clone()
        ),
        (json!("slug"), json!("unique"))
    );
    let third = app
        .post(
            DOCS,
            json!({"type": "post", "data": {"title": "C", "slug": {"current": "a"}}}),
        )
        .cookie(&ada)
        .send()
        .await;
    assert_eq!(third.status, StatusCode::CREATED);
    assert_eq!(third.body["validation"]["errors"][0]["code"], "unique");
    // Another type may use the same slug, and a document keeps its own.
    let page = app.post(DOCS, json!({"type": "page", "data": {"title": "A", "slug": {"current": "a"}}, "publish": true})).cookie(&ada).send().await;
    assert_eq!(page.status, StatusCode::CREATED, "{}", page.body);
    let res = app
        .req(
            Method::POST,
            &format!("{DOCS}/{}/publish", id(&first.body["data"])),
        )
        .cookie(&ada)
        .send()
        .await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);
    app.stop().await;
}

async fn hostile_list_inputs_are_4xx_never_500(url: String) {
    let app = TestApp::start(&url).await;
    let ada = app.sign_up("Ada", "ada@example.com").await;
    seed(&app, &ada).await;
    for path in [
        "/api/documents?type=post&page=9223372036854775807",
        "/api/documents?type=post&page=99999999999999999999",
        "/api/documents?type=post&pageSize=1000",
        "/api/documents?type=post&depth=300",
        "/api/documents?type=nope",
        "/api/documents/x/versions?limit=-1",
        "/api/documents/x/versions/abc",
    ] {
        let res = app.get(path).cookie(&ada).send().await;
        assert_eq!(res.status, StatusCode::BAD_REQUEST, "{path}: {}", res.body);
    }
    for body in [
        json!({"type": "post", "page": 9223372036854775807i64, "limit": 100}),
        json!({"type": "post", "page": -1}),
        json!({"type": "post", "limit": 0}),
        json!({"type": "post", "sort": 5}),
        json!({"type": "post", "depth": 6}),
        json!({"type": "post", "perspective": "future"}),
        json!({"type": 7}),
    ] {
        let res = app
            .post("/api/documents/query", body.clone())
            .cookie(&ada)
            .send()
            .await;
        assert_eq!(res.status, StatusCode::BAD_REQUEST, "{body}: {}", res.body);
    }
    // NUL characters, which PostgreSQL cannot store or compare, are refused alike on both
    // engines, at the door, with the issue at its path in the body.
    let res = app
        .post(DOCS, json!({"type": "post", "data": {"title": "a\u{0}b"}}))
        .cookie(&ada)
        .send()
        .await;
    res.assert_handler_error(StatusCode::BAD_REQUEST, "Bad Request");
    assert_eq!(
        (
            res.body["issues"][0]["path"].clone(),
            res.body["issues"][0]["code"].clone()
        ),
        (json!("data.title"), json!("invalid"))
    );
    let res = app
        .post(
            DOCS,
            json!({"type": "post", "data": {"tags": ["ok", "\u{0}"]}}),
        )
        .cookie(&ada)
        .send()
        .await;
    assert_eq!(
        res.body["issues"][0]["path"], "data.tags[1]",
        "{}",
        res.body
    );
    for path in [
        "/api/documents/a%00b",
        "/api/documents/by-ids?ids=a%00b",
        "/api/documents?type=post&sort=%00",
    ] {
        let res = app.get(path).cookie(&ada).send().await;
        res.assert_handler_error(StatusCode::BAD_REQUEST, "Bad Request");
    }
    let res = app
        .post(
            "/api/settings/api-keys",
            json!({"name": "k\u{0}", "permissions": ["read"]}),
        )
        .cookie(&ada)
        .send()
        .await;
    assert_eq!(res.body["issues"][0]["code"], "invalid", "{}", res.body);
    let res = app
        .post(
            "/api/auth/sign-up/email",
            json!({"name": "N\u{0}", "email": "n@example.com", "password": "long enough"}),
        )
        .send()
        .await;
    assert_eq!(res.status, StatusCode::BAD_REQUEST, "{}", res.body);
    let res = app
        .post(
            "/api/auth/sign-in/email",
            json!({"email": "ada@example.com\u{0}", "password": "x\u{0}"}),
        )
        .send()
        .await;
    // Refused at the door like any body holding a NUL, whoever the address belongs to.
    assert_eq!(res.status, StatusCode::BAD_REQUEST, "{}", res.body);
    // A where of any shape is never an error: it matches nothing or everything.
    // Past the filter's nesting limit it matches nothing; past the JSON parser's it is a 400.
    let nest = |n: usize| (0..n).fold(json!({"views": {"equals": 1}}), |w, _| json!({"and": [w]}));
    let res = app
        .post(
            "/api/documents/query",
            json!({"type": "post", "where": nest(500)}),
        )
        .cookie(&ada)
        .send()
        .await;
    res.assert_handler_error(StatusCode::BAD_REQUEST, "Bad Request");
    let res = app
        .post(
            "/api/documents/query",
            json!({"type": "post", "where": nest(40)}),
        )
        .cookie(&ada)
        .send()
        .await;
    assert_eq!(res.body["pagination"]["total"], 0, "{}", res.body);
    let deep = nest(8);
    for clause in [
        json!("string"),
        json!([1, 2]),
        json!(null),
        deep,
        json!({"or": [], "and": []}),
    ] {
        let res = app
            .post(
                "/api/documents/query",
                json!({"type": "post", "where": clause}),
            )
            .cookie(&ada)
            .send()
            .await;
        assert_eq!(res.status, StatusCode::OK, "{}", res.body);
    }
    app.stop().await;
}

async fn schemas_are_listed(url: String) {
    let app = TestApp::start(&url).await;
    let ada = app.sign_up("Ada", "ada@example.com").await;
    let res = app.get("/api/schemas").cookie(&ada).send().await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);
    let names: Vec<_> = res.body["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["name"].as_str().unwrap().to_string())
        .collect();
    for name in ["post", "author", "page", "siteSettings"] {
        assert!(names.contains(&name.to_string()), "{names:?}");
    }
    let post = app.get("/api/schemas/post").cookie(&ada).send().await;
    assert_eq!(post.body["data"]["name"], "post");
    assert_eq!(post.body["data"]["fields"][0]["name"], "title");
    app.get("/api/schemas/nope")
        .cookie(&ada)
        .send()
        .await
        .assert_handler_error(StatusCode::NOT_FOUND, "Not Found");
    app.get("/api/schemas")
        .send()
        .await
        .assert_access_refusal(StatusCode::UNAUTHORIZED, "Unauthorized");
    app.stop().await;
}

cms_store::both_engines!(
    drafts_are_saved_incomplete_and_refused_when_malformed,
    updates_are_guarded_by_revision,
    publishing_copies_the_draft_with_its_hash,
    versions_list_get_restore_and_prune,
    the_where_language,
    lists_paginate_sort_and_filter_by_status,
    references_resolve_by_depth_and_point_back,
    by_ids_keeps_request_order,
    singletons_are_created_lazily_and_never_deleted,
    delete_removes_the_document,
    access_is_checked_and_other_organizations_are_invisible,
    schemas_are_listed,
    parents_read_children_only_when_asked,
    slugs_are_unique_per_type_and_organization,
    hostile_list_inputs_are_4xx_never_500,
);

#[tokio::test]
async fn a_broken_schema_file_stops_the_start_with_file_schema_and_field_named() {
    let mut config = config_for("sqlite://unused");
    std::fs::create_dir_all(&config.data_dir).unwrap();
    let file = config.data_dir.join("blog.json");
    std::fs::write(&file, r#"[{"type": "document", "name": "article", "fields": [{"name": "title", "type": "string", "maxLenght": 5}]}]"#).unwrap();
    config.schemas.paths = vec![config.data_dir.join("*.json").display().to_string()];
    let err = cms::Builder::new(config.clone())
        .build()
        .await
        .err()
        .expect("the start is refused");
    let message = err.to_string();
    for part in ["blog.json", "article", "title", "maxLenght"] {
        assert!(message.contains(part), "{part} in {message}");
    }
    assert!(
        !config.data_dir.join("cms.db").exists(),
        "nothing was touched"
    );

    // A valid file replaces the demo schemas (the forms plugin's types join it).
    std::fs::write(&file, r#"{"type": "document", "name": "article", "fields": [{"name": "title", "type": "string"}]}"#).unwrap();
    config.database.url = Some(format!(
        "sqlite://{}",
        config.data_dir.join("cms.db").display()
    ));
    let app = TestApp::with(config, None).await;
    let names: Vec<_> = app
        .app
        .cms
        .schemas()
        .all()
        .iter()
        .map(|s| s.name.clone())
        .collect();
    assert_eq!(names, vec!["article", "form", "formSubmission"]);
    app.stop().await;
}
