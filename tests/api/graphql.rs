//! GraphQL (SPEC.md "GraphQL", CONTRACT.md section 12): the shape per document type,
//! mutations through the service layer, perspectives, where and sort, batched references,
//! access rules and field stripping, limits, introspection, authentication, `graphql.path`.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use axum::http::StatusCode;
use cms::core::schema::parse_schemas;
use serde_json::{Value, json};
use tracing::instrument::WithSubscriber;
use tracing_subscriber::layer::{Context, Layer, SubscriberExt};

use crate::support::{Reply, Session, TestApp, config_for};

const GQL: &str = "/api/graphql";
/// `cms_server::GRAPHQL_CALL_TARGET`: one event per service call a GraphQL request makes.
const CALL_TARGET: &str = "cms_server::graphql::call";

async fn gql_at(app: &TestApp, path: &str, s: &Session, query: &str, variables: Value) -> Reply {
    app.post(path, json!({ "query": query, "variables": variables }))
        .cookie(s)
        .send()
        .await
}

/// A GraphQL request that must succeed: its `data`.
async fn ok(app: &TestApp, s: &Session, query: &str, variables: Value) -> Value {
    let res = gql_at(app, GQL, s, query, variables).await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);
    assert!(res.body.get("errors").is_none(), "{}", res.body);
    res.body["data"].clone()
}

/// A GraphQL request that must fail: HTTP 200, and its first error's `extensions`.
async fn failing(app: &TestApp, s: &Session, query: &str, variables: Value) -> Value {
    let res = gql_at(app, GQL, s, query, variables).await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);
    let errors = res.body["errors"].as_array().expect("errors");
    assert!(!errors.is_empty(), "{}", res.body);
    errors[0]["extensions"].clone()
}

const CREATE: &str = "mutation($data: JSON!, $publish: Boolean) { createPost(data: $data, publish: $publish) { id revision status title views } }";

async fn create_post(app: &TestApp, s: &Session, data: Value, publish: bool) -> String {
    let data = ok(app, s, CREATE, json!({"data": data, "publish": publish})).await;
    data["createPost"]["id"].as_str().unwrap().to_string()
}

async fn mutations_follow_the_document_lifecycle(url: String) {
    let app = TestApp::start(&url).await;
    let ada = app.sign_up("Ada", "ada@example.com").await;
    let created = ok(
        &app,
        &ada,
        CREATE,
        json!({"data": {"title": "Hello", "views": 3}}),
    )
    .await["createPost"]
        .clone();
    assert_eq!(created["revision"], 1);
    assert_eq!(created["status"], "draft");
    assert_eq!(created["title"], "Hello");
    assert_eq!(created["views"], 3.0);
    let id = created["id"].as_str().unwrap().to_string();

    // Update guarded by the revision.
    let update = "mutation($id: ID!, $rev: Int) { updatePost(id: $id, data: {title: \"Hello again\"}, expectedRevision: $rev) { revision title } }";
    let updated = ok(&app, &ada, update, json!({"id": id, "rev": 1})).await;
    assert_eq!(
        updated["updatePost"],
        json!({"revision": 2, "title": "Hello again"})
    );
    let conflict = failing(&app, &ada, update, json!({"id": id, "rev": 1})).await;
    assert_eq!(conflict["code"], "CONFLICT");
    assert_eq!(conflict["currentRevision"], 2);

    // The same document through REST: one service layer.
    let rest = app
        .get(&format!("/api/documents/{id}"))
        .cookie(&ada)
        .send()
        .await;
    assert_eq!(rest.body["data"]["draftData"]["title"], "Hello again");

    // Publish, unpublish.
    let published = ok(
        &app,
        &ada,
        "mutation($id: ID!) { publishPost(id: $id, expectedRevision: 2) { status publishedAt publishedHash revision } }",
        json!({"id": id}),
    )
    .await["publishPost"]
        .clone();
    assert_eq!(published["status"], "published");
    assert!(published["publishedHash"].is_string());
    assert!(published["publishedAt"].is_string());
    assert_eq!(published["revision"], 2, "publishing keeps the revision");
    let seen = ok(
        &app,
        &ada,
        "query($id: ID!) { Post(id: $id, perspective: published) { title status } }",
        json!({"id": id}),
    )
    .await;
    assert_eq!(
        seen["Post"],
        json!({"title": "Hello again", "status": "published"})
    );
    let unpublished = ok(
        &app,
        &ada,
        "mutation($id: ID!) { unpublishPost(id: $id) { status publishedHash } }",
        json!({"id": id}),
    )
    .await;
    assert_eq!(
        unpublished["unpublishPost"],
        json!({"status": "draft", "publishedHash": null})
    );

    // A publish that fails validation carries the issues.
    let untitled = create_post(&app, &ada, json!({"views": 1}), false).await;
    let refused = failing(
        &app,
        &ada,
        "mutation($id: ID!) { publishPost(id: $id) { id } }",
        json!({"id": untitled}),
    )
    .await;
    assert_eq!(refused["code"], "BAD_REQUEST");
    assert_eq!(refused["issues"][0]["path"], "title");

    // Delete.
    let deleted = ok(
        &app,
        &ada,
        "mutation($id: ID!) { deletePost(id: $id) }",
        json!({"id": id}),
    )
    .await;
    assert_eq!(deleted["deletePost"], true);
    let gone = ok(
        &app,
        &ada,
        "query($id: ID!) { Post(id: $id) { id } }",
        json!({"id": id}),
    )
    .await;
    assert_eq!(gone["Post"], Value::Null);
    let missing = failing(
        &app,
        &ada,
        "mutation($id: ID!) { deletePost(id: $id) }",
        json!({"id": id}),
    )
    .await;
    assert_eq!(missing["code"], "NOT_FOUND");
    app.stop().await;
}

async fn queries_take_perspective_where_and_sort(url: String) {
    let app = TestApp::start(&url).await;
    let ada = app.sign_up("Ada", "ada@example.com").await;
    create_post(&app, &ada, json!({"title": "A", "views": 10}), true).await;
    create_post(&app, &ada, json!({"title": "B", "views": 2}), true).await;
    create_post(&app, &ada, json!({"title": "C", "views": 7}), false).await;
    let titles = |data: &Value| -> Vec<String> {
        data["allPost"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| p["title"].as_str().unwrap().to_string())
            .collect()
    };
    let all = ok(
        &app,
        &ada,
        "{ allPost(sort: [\"title\"]) { title } }",
        json!({}),
    )
    .await;
    assert_eq!(titles(&all), ["A", "B", "C"]);
    let published = ok(
        &app,
        &ada,
        "{ allPost(perspective: published, sort: [\"title\"]) { title status } }",
        json!({}),
    )
    .await;
    assert_eq!(
        titles(&published),
        ["A", "B"],
        "the draft-only post is absent"
    );
    let busy = ok(
        &app,
        &ada,
        "{ allPost(where: {views: {greater_than: 5}}, sort: [\"-views\"]) { title views } }",
        json!({}),
    )
    .await;
    assert_eq!(titles(&busy), ["A", "C"]);
    let paged = ok(
        &app,
        &ada,
        "{ allPost(sort: [\"title\"], limit: 1, page: 2) { title } }",
        json!({}),
    )
    .await;
    assert_eq!(titles(&paged), ["B"]);
    let too_many = failing(&app, &ada, "{ allPost(limit: 101) { id } }", json!({})).await;
    assert_eq!(too_many["code"], "BAD_REQUEST");
    app.stop().await;
}

/// Counts the service calls (and SQL statements) made while a future runs.
#[derive(Clone, Default)]
struct Counter(Arc<Mutex<HashMap<String, usize>>>);

/// The `call` of a service-call event; the statement of an SQL event.
#[derive(Default)]
struct Fields {
    call: Option<String>,
    sql: String,
}

impl tracing::field::Visit for Fields {
    fn record_str(&mut self, field: &tracing::field::Field, value: &str) {
        match field.name() {
            "call" => self.call = Some(value.to_string()),
            "summary" | "db.statement" => self.sql.push_str(value),
            _ => {}
        }
    }
    fn record_debug(&mut self, field: &tracing::field::Field, value: &dyn std::fmt::Debug) {
        if matches!(field.name(), "summary" | "db.statement") {
            self.sql.push_str(&format!("{value:?}"));
        }
    }
}

impl<S: tracing::Subscriber> Layer<S> for Counter {
    fn on_event(&self, event: &tracing::Event<'_>, _: Context<'_, S>) {
        let target = event.metadata().target();
        let mut counts = self.0.lock().unwrap();
        let mut fields = Fields::default();
        event.record(&mut fields);
        if target == CALL_TARGET {
            *counts.entry(fields.call.unwrap_or_default()).or_default() += 1;
            *counts.entry("service".into()).or_default() += 1;
        } else if target.starts_with("sqlx::query") && fields.sql.contains("documents") {
            // Statements on documents: the ones an N+1 would multiply. (Connection set-up
            // statements vary with the pool's state, not with the query.)
            *counts.entry("sql".into()).or_default() += 1;
        }
    }
}

impl Counter {
    fn get(&self, what: &str) -> usize {
        self.0.lock().unwrap().get(what).copied().unwrap_or(0)
    }
}

async fn counted(app: &TestApp, s: &Session, query: &str) -> (Value, Counter) {
    let counter = Counter::default();
    let dispatch = tracing::Dispatch::new(tracing_subscriber::registry().with(counter.clone()));
    let res = gql_at(app, GQL, s, query, json!({}))
        .with_subscriber(dispatch)
        .await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);
    assert!(res.body.get("errors").is_none(), "{}", res.body);
    (res.body["data"].clone(), counter)
}

async fn references_resolve_in_batches(url: String) {
    let app = TestApp::start(&url).await;
    let ada = app.sign_up("Ada", "ada@example.com").await;
    let query = "{ allPost(limit: 100) { title author { name } } }";
    let mut counts = Vec::new();
    for (round, n) in [2, 20].into_iter().enumerate() {
        let have = if round == 0 { 0 } else { 2 };
        for i in have..n {
            let author = ok(
                &app,
                &ada,
                "mutation($data: JSON!) { createAuthor(data: $data) { id } }",
                json!({"data": {"name": format!("Author {i}")}}),
            )
            .await["createAuthor"]["id"]
                .as_str()
                .unwrap()
                .to_string();
            create_post(
                &app,
                &ada,
                json!({"title": format!("Post {i}"), "author": {"_ref": author}}),
                false,
            )
            .await;
        }
        // Warm: the pool's connections are open before counting.
        counted(&app, &ada, query).await;
        let (data, counter) = counted(&app, &ada, query).await;
        let posts = data["allPost"].as_array().unwrap();
        assert_eq!(posts.len(), n);
        for post in posts {
            let i = post["title"]
                .as_str()
                .unwrap()
                .strip_prefix("Post ")
                .unwrap();
            assert_eq!(post["author"]["name"], format!("Author {i}"));
        }
        assert_eq!(counter.get("list"), 1);
        assert_eq!(counter.get("by_ids"), 1, "one batch for every author");
        if url.starts_with("postgres") {
            // On SQLite, sqlx logs statements on its worker thread, out of this count's reach.
            assert!(counter.get("sql") > 0, "SQL statements are counted");
        }
        counts.push((counter.get("service"), counter.get("sql")));
    }
    assert_eq!(
        counts[0], counts[1],
        "2 posts and 20 posts cost the same (service calls, SQL statements)"
    );

    // A reference's copy follows the perspective: a draft-only author is absent from the
    // published view of a published post.
    let author = ok(
        &app,
        &ada,
        "mutation { createAuthor(data: {name: \"Draft author\"}) { id } }",
        json!({}),
    )
    .await["createAuthor"]["id"]
        .as_str()
        .unwrap()
        .to_string();
    let post = create_post(
        &app,
        &ada,
        json!({"title": "Pub", "author": {"_ref": author}}),
        true,
    )
    .await;
    let q =
        "query($id: ID!, $p: Perspective) { Post(id: $id, perspective: $p) { author { name } } }";
    let draft = ok(&app, &ada, q, json!({"id": post, "p": "draft"})).await;
    assert_eq!(draft["Post"]["author"]["name"], "Draft author");
    let published = ok(&app, &ada, q, json!({"id": post, "p": "published"})).await;
    assert_eq!(published["Post"]["author"], Value::Null);
    app.stop().await;
}

async fn a_read_only_key_cannot_mutate(url: String) {
    let app = TestApp::start(&url).await;
    let ada = app.sign_up("Ada", "ada@example.com").await;
    create_post(&app, &ada, json!({"title": "Kept"}), false).await;
    let key = app
        .create_key(&ada, json!({"name": "r", "permissions": ["read"]}))
        .await;
    let read = app
        .post(GQL, json!({"query": "{ allPost { title } }"}))
        .key(&key)
        .send()
        .await;
    assert_eq!(read.status, StatusCode::OK, "{}", read.body);
    assert_eq!(read.body["data"]["allPost"], json!([{"title": "Kept"}]));
    let write = app
        .post(
            GQL,
            json!({"query": "mutation { createPost(data: {title: \"Nope\"}) { id } }"}),
        )
        .key(&key)
        .send()
        .await;
    // SPEC.md "Authentication" point 4: refused at the HTTP layer, before it runs.
    write.assert_access_refusal(StatusCode::FORBIDDEN, "Forbidden");
    let all = ok(&app, &ada, "{ allPost { title } }", json!({})).await;
    assert_eq!(
        all["allPost"],
        json!([{"title": "Kept"}]),
        "nothing written"
    );
    app.stop().await;
}

async fn hidden_fields_are_null_and_no_filter_oracle(url: String) {
    let mut config = config_for(&url);
    config.auth.invite_only = false;
    let schemas = parse_schemas(&json!([
        { "type": "document", "name": "deal", "fields": [
            { "name": "title", "type": "string", "indexed": true },
            { "name": "secret", "type": "string", "indexed": true,
              "access": { "read": ["owner"], "update": ["owner"] } },
            { "name": "meta", "type": "object", "fields": [
                { "name": "note", "type": "string" },
                { "name": "internal", "type": "string", "access": { "read": ["owner"] } }
            ] },
            { "name": "status", "type": "string" }
        ] }
    ]))
    .unwrap();
    let app = TestApp::custom(config, |b| b.schemas(schemas)).await;
    let ada = app.sign_up("Ada", "ada@example.com").await;
    let org = app.active_organization(&ada).await;
    let bob = app.sign_up("Bob", "bob@example.com").await;
    app.join(&bob, &org, "editor").await;
    ok(
        &app,
        &ada,
        "mutation { createDeal(data: {title: \"One\", secret: \"SECRET-1\", meta: {note: \"n\", internal: \"INTERNAL-1\"}, status: \"open\"}) { id } }",
        json!({}),
    )
    .await;
    let q = "{ allDeal { title secret meta { note internal } field_status status } }";
    let owner = ok(&app, &ada, q, json!({})).await;
    assert_eq!(
        owner["allDeal"][0],
        json!({"title": "One", "secret": "SECRET-1", "meta": {"note": "n", "internal": "INTERNAL-1"}, "field_status": "open", "status": "draft"})
    );
    let editor = ok(&app, &bob, q, json!({})).await;
    assert_eq!(
        editor["allDeal"][0],
        json!({"title": "One", "secret": null, "meta": {"note": "n", "internal": null}, "field_status": "open", "status": "draft"})
    );
    // The owner's filter finds it; the editor's cannot tell.
    let by_secret = "{ allDeal(where: {secret: {equals: \"SECRET-1\"}}) { title } }";
    assert_eq!(
        ok(&app, &ada, by_secret, json!({})).await["allDeal"],
        json!([{"title": "One"}])
    );
    let res = gql_at(&app, GQL, &bob, by_secret, json!({})).await;
    assert!(
        !res.body.to_string().contains("\"One\""),
        "a hidden field is no filter oracle: {}",
        res.body
    );
    app.stop().await;
}

async fn introspection_limits_and_authentication(url: String) {
    let app = TestApp::start(&url).await;
    let ada = app.sign_up("Ada", "ada@example.com").await;
    let types = ok(&app, &ada, "{ __schema { types { name } } }", json!({})).await;
    let names: Vec<&str> = types["__schema"]["types"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    for wanted in ["Post", "Author", "SiteSettings", "Perspective", "JSON"] {
        assert!(names.contains(&wanted), "{wanted} missing: {names:?}");
    }
    let fields = ok(
        &app,
        &ada,
        "{ __type(name: \"Query\") { fields { name } } }",
        json!({}),
    )
    .await;
    let fields = fields["__type"]["fields"].to_string();
    for wanted in [
        "\"allPost\"",
        "\"Post\"",
        "\"allSiteSettings\"",
        "\"SiteSettings\"",
    ] {
        assert!(fields.contains(wanted), "{wanted} missing: {fields}");
    }

    // Too deep: refused before any resolver runs.
    let mut deep = String::from("{ allPost { ");
    for _ in 0..16 {
        deep.push_str("author { __typename ");
    }
    deep.push_str(&"} ".repeat(16));
    deep.push_str("} }");
    let res = gql_at(&app, GQL, &ada, &deep, json!({})).await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);
    let message = res.body["errors"][0]["message"].as_str().unwrap_or("");
    assert!(message.contains("nested too deep"), "{}", res.body);
    assert!(res.body["data"].is_null(), "{}", res.body);

    // No credentials: 401 like every endpoint.
    let res = app
        .post(GQL, json!({"query": "{ allPost { id } }"}))
        .send()
        .await;
    res.assert_access_refusal(StatusCode::UNAUTHORIZED, "Unauthorized");
    // Only POST.
    let res = app.get(GQL).cookie(&ada).send().await;
    assert_eq!(res.status, StatusCode::METHOD_NOT_ALLOWED);
    // A malformed body.
    let res = app
        .req(axum::http::Method::POST, GQL)
        .cookie(&ada)
        .raw("application/json", "{not json")
        .send()
        .await;
    assert_eq!(res.status, StatusCode::BAD_REQUEST);
    app.stop().await;
}

async fn the_path_is_configurable(url: String) {
    let mut config = config_for(&url);
    config.graphql.path = "/graph".into();
    let app = TestApp::with(config, None).await;
    let ada = app.sign_up("Ada", "ada@example.com").await;
    let res = gql_at(&app, "/graph", &ada, "{ allPost { id } }", json!({})).await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);
    assert_eq!(res.body["data"]["allPost"], json!([]));
    let old = gql_at(&app, GQL, &ada, "{ allPost { id } }", json!({})).await;
    assert_eq!(old.status, StatusCode::NOT_FOUND);
    app.stop().await;

    // A path another endpoint serves stops the start with a clear error, not a crash.
    let mut config = config_for(&url);
    config.graphql.path = "/api/documents".into();
    let refused = cms::Builder::new(config).build().await;
    let message = refused.err().expect("the start is refused").to_string();
    assert!(message.contains("graphql.path"), "{message}");
}

/// `includeChildOrganizations` as in REST: a parent reads its children's documents only when
/// asked, and their references resolve within the same reach.
async fn parents_read_children_only_when_asked(url: String) {
    let app = TestApp::start(&url).await;
    let ada = app.sign_up("Ada", "ada@example.com").await;
    let org = app.active_organization(&ada).await;
    create_post(&app, &ada, json!({"title": "Parent's"}), false).await;
    let author = ("child-author", "author", json!({"name": "Child author"}));
    let post = (
        "child-post",
        "post",
        json!({"title": "Child's", "author": {"_ref": "child-author"}}),
    );
    crate::support::insert_organization(&app, "child", Some(&org), &[author, post]).await;

    let titles = |data: &Value| -> Vec<String> {
        data["allPost"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| p["title"].as_str().unwrap().to_string())
            .collect()
    };
    let own = ok(
        &app,
        &ada,
        "{ allPost(sort: [\"title\"]) { title } }",
        json!({}),
    )
    .await;
    assert_eq!(titles(&own), ["Parent's"]);
    let all = ok(
        &app,
        &ada,
        "{ allPost(sort: [\"title\"], includeChildOrganizations: true) { title author { name } } }",
        json!({}),
    )
    .await;
    assert_eq!(titles(&all), ["Child's", "Parent's"]);
    assert_eq!(all["allPost"][0]["author"]["name"], "Child author");

    let one = "query($children: Boolean) { Post(id: \"child-post\", includeChildOrganizations: $children) { title author { name } } }";
    let hidden = ok(&app, &ada, one, json!({})).await;
    assert_eq!(hidden["Post"], Value::Null);
    let shown = ok(&app, &ada, one, json!({"children": true})).await;
    assert_eq!(shown["Post"]["title"], "Child's");
    assert_eq!(shown["Post"]["author"]["name"], "Child author");
}

/// Image and file fields resolve their asset record, in one batch for a whole page.
async fn images_resolve_their_asset_records(url: String) {
    let app = TestApp::start(&url).await;
    let ada = app.sign_up("Ada", "ada@example.com").await;
    let mut assets = Vec::new();
    for i in 0..3 {
        let bytes = crate::assets::png(10 + i, 20, 50);
        let asset = crate::assets::uploaded(&app, &ada, &format!("cover-{i}.png"), &bytes).await;
        assets.push(asset["id"].as_str().unwrap().to_string());
    }
    for (i, id) in assets.iter().enumerate() {
        create_post(
            &app,
            &ada,
            json!({"title": format!("Post {i}"), "cover": {"asset": {"_ref": id}, "alt": "A cover"}}),
            false,
        )
        .await;
    }
    create_post(
        &app,
        &ada,
        json!({"title": "Post 9", "cover": {"asset": {"_ref": "no-such-asset"}}}),
        false,
    )
    .await;
    let query = "{ allPost(sort: [\"title\"]) { title cover { assetId alt asset { id filename url mimeType assetType size width height } } } }";
    counted(&app, &ada, query).await;
    let (data, counter) = counted(&app, &ada, query).await;
    let posts = data["allPost"].as_array().unwrap();
    assert_eq!(posts.len(), 4);
    for (i, post) in posts.iter().take(3).enumerate() {
        let asset = &post["cover"]["asset"];
        assert_eq!(asset["id"], assets[i].as_str());
        assert_eq!(post["cover"]["alt"], "A cover");
        assert_eq!(asset["filename"], format!("cover-{i}.png"));
        assert_eq!(asset["url"], format!("/media/{}/cover-{i}.png", assets[i]));
        assert_eq!(asset["mimeType"], "image/png");
        assert_eq!(asset["assetType"], "image");
        assert_eq!(asset["width"], 10 + i);
        assert_eq!(asset["height"], 20);
        assert!(asset["size"].as_f64().unwrap() > 0.0);
    }
    // A reference to an asset that does not exist is null, not an error.
    assert_eq!(posts[3]["cover"]["assetId"], "no-such-asset");
    assert_eq!(posts[3]["cover"]["asset"], Value::Null);
    assert_eq!(counter.get("asset_by_ids"), 1, "one batch for every cover");
}

cms_store::both_engines!(
    images_resolve_their_asset_records,
    parents_read_children_only_when_asked,
    mutations_follow_the_document_lifecycle,
    queries_take_perspective_where_and_sort,
    references_resolve_in_batches,
    a_read_only_key_cannot_mutate,
    hidden_fields_are_null_and_no_filter_oracle,
    introspection_limits_and_authentication,
    the_path_is_configurable,
);
