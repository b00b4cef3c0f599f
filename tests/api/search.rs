//! Full-text search (CONTRACT.md section 14): words, phrases and exclusions over the searchable
//! fields the caller may read, relevance order with `_meta.score`, `sort`, `where`, `status`,
//! perspectives, locales and paging alongside, the 400s, rows that follow every write, the
//! rebuild at start, GraphQL's `allT(search:)`, and the same answers on both engines.

use axum::http::{Method, StatusCode};
use cms::core::schema::parse_schemas;
use serde_json::{Value, json};

use crate::support::{Session, TestApp, config_for};

const DOCS: &str = "/api/documents";

fn schemas(searchable: bool) -> Vec<cms::core::schema::Schema> {
    parse_schemas(&json!([
        { "type": "document", "name": "post", "fields": [
            { "name": "title", "type": "string", "indexed": true, "searchable": searchable },
            { "name": "body", "type": "block", "searchable": searchable },
            { "name": "excerpt", "type": "text", "searchable": searchable,
              "access": { "read": ["owner"], "update": ["owner"] } },
            { "name": "views", "type": "number", "indexed": true },
            { "name": "seo", "type": "object", "fields": [
                { "name": "keywords", "type": "string", "searchable": searchable }
            ] }
        ] },
        { "type": "document", "name": "article", "fields": [
            { "name": "title", "type": "string", "localized": true, "searchable": true }
        ] },
        { "type": "document", "name": "plain", "fields": [{ "name": "title", "type": "string" }] }
    ]))
    .unwrap()
}

async fn start(url: &str) -> (TestApp, Session) {
    start_with(url, true).await
}

async fn start_with(url: &str, searchable: bool) -> (TestApp, Session) {
    let mut config = config_for(url);
    config.auth.invite_only = false;
    config.locales.available = ["en", "de"].map(String::from).to_vec();
    let app = TestApp::custom(config, |b| b.schemas(schemas(searchable))).await;
    let ada = app.sign_up("Ada", "ada@example.com").await;
    (app, ada)
}

/// Portable Text with one block per paragraph.
fn blocks(paragraphs: &[&str]) -> Value {
    Value::Array(
        paragraphs
            .iter()
            .enumerate()
            .map(|(i, text)| {
                json!({ "_type": "block", "_key": format!("b{i}"), "markDefs": [],
                        "children": [{ "_type": "span", "_key": "s", "text": text }] })
            })
            .collect(),
    )
}

async fn create(app: &TestApp, s: &Session, doc_type: &str, data: Value, publish: bool) -> String {
    let res = app
        .post(
            DOCS,
            json!({ "type": doc_type, "data": data, "publish": publish }),
        )
        .cookie(s)
        .send()
        .await;
    assert_eq!(res.status, StatusCode::CREATED, "{}", res.body);
    res.body["data"]["id"].as_str().unwrap().to_string()
}

/// `text` for a query string.
fn encode(text: &str) -> String {
    text.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' => (b as char).to_string(),
            _ => format!("%{b:02X}"),
        })
        .collect()
}

/// GET /api/documents with `search` and `extra` query parameters: the page's body.
async fn get(app: &TestApp, s: &Session, doc_type: &str, search: &str, extra: &str) -> Value {
    let path = format!("{DOCS}?type={doc_type}&search={}{extra}", encode(search));
    let res = app.get(&path).cookie(s).send().await;
    assert_eq!(res.status, StatusCode::OK, "{path}: {}", res.body);
    res.body
}

/// POST /api/documents/query with `body`: the page's body.
async fn query(app: &TestApp, s: &Session, body: Value) -> Value {
    let res = app
        .post(&format!("{DOCS}/query"), body.clone())
        .cookie(s)
        .send()
        .await;
    assert_eq!(res.status, StatusCode::OK, "{body}: {}", res.body);
    res.body
}

fn titles(page: &Value) -> Vec<String> {
    page["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| {
            d["draftData"]["title"]
                .as_str()
                .unwrap_or_default()
                .to_string()
        })
        .collect()
}

fn scores(page: &Value) -> Vec<f64> {
    page["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["_meta"]["score"].as_f64().expect("a score"))
        .collect()
}

/// A small corpus of posts.
async fn corpus(app: &TestApp, s: &Session) {
    for (title, body, keywords) in [
        (
            "Rust web services",
            vec!["Fast web servers in Rust.", "Async all the way."],
            "backend",
        ),
        (
            "Gardening for beginners",
            vec!["Tomatoes need sun.", "Water the garden at dawn."],
            "outdoor",
        ),
        (
            "Web design basics",
            vec!["Colour, type and layout for the web."],
            "design",
        ),
        (
            "Café culture",
            vec!["A quick brown fox visits the café every morning."],
            "coffee",
        ),
        ("Rust", vec!["The language, not the oxide."], "language"),
    ] {
        let data =
            json!({ "title": title, "body": blocks(&body), "seo": { "keywords": keywords } });
        create(app, s, "post", data, false).await;
    }
}

async fn words_phrases_and_exclusions_match(url: String) {
    let (app, ada) = start(&url).await;
    corpus(&app, &ada).await;

    // Every word must match, in any searchable field (here title and body).
    let page = get(&app, &ada, "post", "rust web", "").await;
    assert_eq!(titles(&page), ["Rust web services"]);
    let page = get(&app, &ada, "post", "web", "").await;
    assert_eq!(page["pagination"]["total"], 2);
    // Case, diacritics and punctuation fold alike in text and query.
    let page = get(&app, &ada, "post", "CAFE", "").await;
    assert_eq!(titles(&page), ["Café culture"]);
    // A phrase: adjacent words in one field.
    let page = get(&app, &ada, "post", "\"brown fox\"", "").await;
    assert_eq!(titles(&page), ["Café culture"]);
    let page = get(&app, &ada, "post", "\"fox brown\"", "").await;
    assert_eq!(page["pagination"]["total"], 0);
    // A block field is one value: its paragraphs follow each other. A phrase never spans two
    // fields; a nested object's searchable field counts.
    let page = get(&app, &ada, "post", "\"rust async\"", "").await;
    assert_eq!(titles(&page), ["Rust web services"]);
    let page = get(&app, &ada, "post", "\"services fast\"", "").await;
    assert_eq!(page["pagination"]["total"], 0);
    let page = get(&app, &ada, "post", "outdoor", "").await;
    assert_eq!(titles(&page), ["Gardening for beginners"]);
    // Exclusions, of words and of phrases.
    let page = get(&app, &ada, "post", "web -rust", "").await;
    assert_eq!(titles(&page), ["Web design basics"]);
    let page = get(&app, &ada, "post", "rust -\"web services\"", "").await;
    assert_eq!(titles(&page), ["Rust"]);
    // The query body takes `search` too.
    let page = query(&app, &ada, json!({ "type": "post", "search": "tomatoes" })).await;
    assert_eq!(titles(&page), ["Gardening for beginners"]);
    // Without a search, no score.
    let res = app
        .get(&format!("{DOCS}?type=post"))
        .cookie(&ada)
        .send()
        .await;
    assert!(
        res.body["data"][0]["_meta"].get("score").is_none(),
        "{}",
        res.body
    );
    app.stop().await;
}

async fn relevance_orders_results_and_an_exact_title_ranks_first(url: String) {
    let (app, ada) = start(&url).await;
    corpus(&app, &ada).await;
    // `Rust` is exactly one title: first. The title match of a short title outweighs a long
    // body's.
    let page = get(&app, &ada, "post", "rust", "").await;
    assert_eq!(titles(&page), ["Rust", "Rust web services"]);
    let found = scores(&page);
    assert!(found.windows(2).all(|w| w[0] >= w[1]), "{found:?}");
    assert!(found[0] > found[1]);
    let page = get(&app, &ada, "post", "web", "").await;
    let found = scores(&page);
    assert!(found.windows(2).all(|w| w[0] >= w[1]), "{found:?}");
    assert_eq!(page["data"][0]["draftData"]["title"], "Web design basics");
    // Exact on the whole title, whatever the case.
    let page = get(&app, &ada, "post", "web DESIGN basics", "").await;
    assert_eq!(titles(&page), ["Web design basics"]);
    // `sort` decides the order; the score is still there.
    let page = get(&app, &ada, "post", "rust", "&sort=title").await;
    assert_eq!(titles(&page), ["Rust", "Rust web services"]);
    let page = get(&app, &ada, "post", "rust", "&sort=-title").await;
    assert_eq!(titles(&page), ["Rust web services", "Rust"]);
    assert_eq!(scores(&page).len(), 2);
    let page = query(
        &app,
        &ada,
        json!({ "type": "post", "search": "web", "sort": ["-title"] }),
    )
    .await;
    assert_eq!(titles(&page), ["Web design basics", "Rust web services"]);
    assert!(scores(&page).iter().all(|s| *s > 0.0));
    app.stop().await;
}

async fn search_combines_with_where_status_perspective_and_paging(url: String) {
    let (app, ada) = start(&url).await;
    for i in 0..25 {
        let data =
            json!({ "title": format!("Note {i}"), "body": blocks(&["shared words"]), "views": i });
        create(&app, &ada, "post", data, i % 2 == 0).await;
    }
    // Paging: exact total, pages of the relevance order (ties by id) that do not overlap.
    let first = get(&app, &ada, "post", "shared", "&pageSize=10").await;
    assert_eq!(first["pagination"]["total"], 25);
    assert_eq!(first["pagination"]["totalPages"], 3);
    let third = get(&app, &ada, "post", "shared", "&pageSize=10&page=3").await;
    assert_eq!(third["data"].as_array().unwrap().len(), 5);
    let second = get(&app, &ada, "post", "shared", "&pageSize=10&page=2").await;
    let mut ids: Vec<String> = [&first, &second, &third]
        .iter()
        .flat_map(|p| p["data"].as_array().unwrap().clone())
        .map(|d| d["id"].as_str().unwrap().to_string())
        .collect();
    let listed = ids.clone();
    ids.sort();
    assert_eq!(listed, ids, "equal scores come in id order");
    ids.dedup();
    assert_eq!(ids.len(), 25);
    // `where` and `search` together.
    let page = query(
        &app,
        &ada,
        json!({ "type": "post", "search": "shared", "where": { "views": { "greater_than_equal": 20 } } }),
    )
    .await;
    assert_eq!(page["pagination"]["total"], 5);
    // `status`, and the published perspective (searching the published copy).
    let page = get(&app, &ada, "post", "shared", "&status=draft").await;
    assert_eq!(page["pagination"]["total"], 12);
    let page = get(&app, &ada, "post", "shared", "&perspective=published").await;
    assert_eq!(page["pagination"]["total"], 13);
    app.stop().await;
}

async fn bad_searches_are_refused(url: String) {
    let (app, ada) = start(&url).await;
    corpus(&app, &ada).await;
    for (doc_type, search, why) in [
        ("plain", "anything", "no searchable field"),
        ("post", "", "empty"),
        ("post", "  ... ", "empty"),
        ("post", "-rust", "only excludes"),
        ("post", "-rust -\"web design\"", "only excludes"),
    ] {
        let path = format!("{DOCS}?type={doc_type}&search={}", encode(search));
        let res = app.get(&path).cookie(&ada).send().await;
        let message = res.assert_handler_error(StatusCode::BAD_REQUEST, "Bad Request");
        assert!(message.contains(why), "{path}: {message}");
        let res = app
            .post(
                &format!("{DOCS}/query"),
                json!({ "type": doc_type, "search": search }),
            )
            .cookie(&ada)
            .send()
            .await;
        res.assert_handler_error(StatusCode::BAD_REQUEST, "Bad Request");
    }
    app.stop().await;
}

async fn search_follows_every_write(url: String) {
    let (app, ada) = start(&url).await;
    let id = create(
        &app,
        &ada,
        "post",
        json!({ "title": "Alpha", "body": blocks(&["first draft"]) }),
        false,
    )
    .await;
    let total = |page: Value| page["pagination"]["total"].as_i64().unwrap();
    let published = "&perspective=published";
    assert_eq!(total(get(&app, &ada, "post", "alpha", "").await), 1);
    assert_eq!(total(get(&app, &ada, "post", "alpha", published).await), 0);
    // An update replaces the draft's words.
    let res = app
        .req(Method::PUT, &format!("{DOCS}/{id}"))
        .json(json!({ "data": { "title": "Beta", "body": blocks(&["second draft"]) } }))
        .cookie(&ada)
        .send()
        .await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);
    assert_eq!(total(get(&app, &ada, "post", "alpha", "").await), 0);
    assert_eq!(total(get(&app, &ada, "post", "beta second", "").await), 1);
    // Publishing indexes the published copy; a later draft leaves it as published.
    let res = app
        .post(&format!("{DOCS}/{id}/publish"), json!({}))
        .cookie(&ada)
        .send()
        .await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);
    let res = app
        .req(Method::PUT, &format!("{DOCS}/{id}"))
        .json(json!({ "data": { "title": "Gamma" } }))
        .cookie(&ada)
        .send()
        .await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);
    assert_eq!(total(get(&app, &ada, "post", "beta", published).await), 1);
    assert_eq!(total(get(&app, &ada, "post", "beta", "").await), 0);
    assert_eq!(total(get(&app, &ada, "post", "gamma", "").await), 1);
    // Restoring the first version brings its words back into the draft.
    let res = app
        .post(&format!("{DOCS}/{id}/versions/1/restore"), json!({}))
        .cookie(&ada)
        .send()
        .await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);
    assert_eq!(total(get(&app, &ada, "post", "alpha", "").await), 1);
    assert_eq!(total(get(&app, &ada, "post", "gamma", "").await), 0);
    // Unpublishing drops the published copy's words.
    let res = app
        .req(Method::DELETE, &format!("{DOCS}/{id}/publish"))
        .cookie(&ada)
        .send()
        .await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);
    assert_eq!(total(get(&app, &ada, "post", "beta", published).await), 0);
    // Deleting drops every word.
    let res = app
        .req(Method::DELETE, &format!("{DOCS}/{id}"))
        .cookie(&ada)
        .send()
        .await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);
    assert_eq!(total(get(&app, &ada, "post", "alpha", "").await), 0);
    // Born published: both copies at once.
    create(&app, &ada, "post", json!({ "title": "Delta" }), true).await;
    assert_eq!(total(get(&app, &ada, "post", "delta", published).await), 1);
    assert_eq!(total(get(&app, &ada, "post", "delta", "").await), 1);
    app.stop().await;
}

async fn localized_fields_are_searched_per_locale(url: String) {
    let (app, ada) = start(&url).await;
    let res = app
        .post(
            DOCS,
            json!({ "type": "article", "locale": "*", "data": { "title": { "en": "Hello world", "de": "Hallo Welt" } } }),
        )
        .cookie(&ada)
        .send()
        .await;
    assert_eq!(res.status, StatusCode::CREATED, "{}", res.body);
    let total = |page: Value| page["pagination"]["total"].as_i64().unwrap();
    assert_eq!(total(get(&app, &ada, "article", "hello", "").await), 1);
    assert_eq!(total(get(&app, &ada, "article", "hallo", "").await), 0);
    let de = get(&app, &ada, "article", "hallo welt", "&locale=de").await;
    assert_eq!(total(de.clone()), 1);
    assert_eq!(de["data"][0]["draftData"]["title"], "Hallo Welt");
    assert_eq!(
        total(get(&app, &ada, "article", "hello", "&locale=de").await),
        0
    );
    // No fallback: a locale without a value finds nothing.
    let res = app
        .get(&format!("{DOCS}?type=article&search=hello&locale=fr"))
        .cookie(&ada)
        .send()
        .await;
    assert_eq!(res.status, StatusCode::BAD_REQUEST, "fr is not configured");
    app.stop().await;
}

/// Field access: a field the caller may not read never matches and never scores. The table in
/// `security/` asserts the same as one of its rows.
async fn hidden_fields_never_match(url: String) {
    let (app, ada) = start(&url).await;
    let org = app.active_organization(&ada).await;
    let bob = app.sign_up("Bob", "bob@example.com").await;
    app.join(&bob, &org, "editor").await;
    create(
        &app,
        &ada,
        "post",
        json!({ "title": "Public", "excerpt": "classified words" }),
        false,
    )
    .await;
    let page = get(&app, &ada, "post", "classified", "").await;
    assert_eq!(page["pagination"]["total"], 1, "the owner reads `excerpt`");
    let page = get(&app, &bob, "post", "classified", "").await;
    assert_eq!(page["pagination"]["total"], 0, "an editor does not");
    let page = get(&app, &bob, "post", "public -classified", "").await;
    assert_eq!(page["pagination"]["total"], 1, "nor is excluded by it");
    let owner = get(&app, &ada, "post", "public", "").await;
    let editor = get(&app, &bob, "post", "public", "").await;
    assert_eq!(
        scores(&owner),
        scores(&editor),
        "the hidden field adds no score"
    );
    app.stop().await;
}

async fn graphql_all_takes_a_search(url: String) {
    let (app, ada) = start(&url).await;
    corpus(&app, &ada).await;
    let gql = |q: &str| app.post("/api/graphql", json!({ "query": q })).cookie(&ada);
    let res = gql(r#"{ allPost(search: "rust") { title _meta { score } } }"#)
        .send()
        .await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);
    let found = res.body["data"]["allPost"].as_array().unwrap().clone();
    assert_eq!(found.len(), 2, "{}", res.body);
    assert_eq!(found[0]["title"], "Rust");
    assert!(
        found[0]["_meta"]["score"].as_f64().unwrap() > found[1]["_meta"]["score"].as_f64().unwrap()
    );
    let res = gql(r#"{ allPost { _meta { score } } }"#).send().await;
    assert!(
        res.body["data"]["allPost"][0]["_meta"]["score"].is_null(),
        "{}",
        res.body
    );
    let res = gql(r#"{ allPost(search: "-rust") { title } }"#)
        .send()
        .await;
    assert_eq!(
        res.body["errors"][0]["extensions"]["code"], "BAD_REQUEST",
        "{}",
        res.body
    );
    app.stop().await;
}

/// Documents stored before their fields became searchable get search rows at the next start,
/// in the background.
async fn documents_stored_before_are_indexed_at_start(url: String) {
    let (app, ada) = start_with(&url, false).await;
    corpus(&app, &ada).await;
    let res = app
        .get(&format!("{DOCS}?type=post&search=rust"))
        .cookie(&ada)
        .send()
        .await;
    res.assert_handler_error(StatusCode::BAD_REQUEST, "Bad Request");
    app.stop().await;

    let mut config = config_for(&url);
    config.locales.available = ["en", "de"].map(String::from).to_vec();
    let app = TestApp::custom(config, |b| b.schemas(schemas(true))).await;
    let res = app
        .post(
            "/api/auth/sign-in/email",
            json!({ "email": "ada@example.com", "password": crate::support::PASSWORD }),
        )
        .send()
        .await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);
    let ada = Session::from(&res);
    let mut found = 0;
    for _ in 0..100 {
        let page = get(&app, &ada, "post", "rust", "").await;
        found = page["pagination"]["total"].as_i64().unwrap();
        if found == 2 {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    assert_eq!(found, 2, "the rebuild indexed the documents stored before");
    // The rebuild records what it built from, so the next start finds nothing stale.
    let mut stale = Vec::new();
    for _ in 0..100 {
        stale = app.app.cms.documents().stale_search_types().await.unwrap();
        if stale.is_empty() {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    assert!(stale.is_empty(), "still stale: {stale:?}");
    app.stop().await;
}

/// The OpenAPI document lists `search` on the list and the query body, and `_meta.score`.
async fn the_openapi_document_describes_search(url: String) {
    let (app, ada) = start(&url).await;
    let doc = app.get("/api/openapi.json").cookie(&ada).send().await.body;
    let params = doc["paths"]["/api/documents"]["get"]["parameters"]
        .as_array()
        .unwrap();
    let search = params
        .iter()
        .find(|p| p["name"] == "search")
        .expect("search");
    assert_eq!(search["in"], "query");
    assert!(
        search["description"]
            .as_str()
            .unwrap()
            .contains("_meta.score")
    );
    let components = &doc["components"]["schemas"];
    assert_eq!(
        components["QueryBody"]["properties"]["search"]["type"],
        json!(["string", "null"])
    );
    assert_eq!(
        components["Meta"]["properties"]["score"]["type"],
        json!(["number", "null"])
    );
    app.stop().await;
}

cms_store::both_engines!(
    the_openapi_document_describes_search,
    words_phrases_and_exclusions_match,
    relevance_orders_results_and_an_exact_title_ranks_first,
    search_combines_with_where_status_perspective_and_paging,
    bad_searches_are_refused,
    search_follows_every_write,
    localized_fields_are_searched_per_locale,
    hidden_fields_never_match,
    graphql_all_takes_a_search,
    documents_stored_before_are_indexed_at_start,
);

/// The same corpus on SQLite and on PostgreSQL answers every search with the same documents
/// and the same first one.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn both_engines_find_the_same_documents() {
    use cms_store::testing::TestDatabase;
    let sqlite = TestDatabase::new(cms_store::Dialect::Sqlite).await;
    let postgres = TestDatabase::new(cms_store::Dialect::Postgres).await;
    let (sqlite_url, postgres_url) = (sqlite.url.clone(), postgres.url.clone());
    let outcome = tokio::spawn(async move {
        let mut answers = Vec::new();
        for url in [sqlite_url, postgres_url] {
            let (app, ada) = start(&url).await;
            corpus(&app, &ada).await;
            for (title, body) in [
                ("Ünïcödé naïve résumé", "Straße ﬁnance İstanbul ΣΊΣΥΦΟΣ"),
                ("Don't panic", "e-mail x.y 3.14 — hello‐world"),
                ("中文 text", "हिन्दी भाषा and 日本語"),
            ] {
                let data = json!({ "title": title, "body": blocks(&[body]) });
                create(&app, &ada, "post", data, false).await;
            }
            let mut answer = Vec::new();
            for search in [
                "rust",
                "web",
                "the",
                "cafe",
                "CAFÉ",
                "\"brown fox\"",
                "web -rust",
                "naive resume",
                "strasse",
                "finance istanbul",
                "σισυφοσ",
                "don't",
                "\"e mail\"",
                "hello world",
                "14",
                "中文",
                "文",
                "हिन्दी",
                "日本語",
                "rust web services",
                "\"the web\"",
                "a -the",
            ] {
                let page = get(&app, &ada, "post", search, "&pageSize=100").await;
                let mut titles = titles(&page);
                let first = titles.first().cloned();
                titles.sort();
                answer.push((search, first, titles));
            }
            answers.push(answer);
            app.stop().await;
        }
        assert_eq!(answers[0], answers[1], "SQLite and PostgreSQL answer alike");
        assert!(
            answers[0]
                .iter()
                .filter(|(_, _, found)| !found.is_empty())
                .count()
                > 15,
            "{:?}",
            answers[0]
        );
    })
    .await;
    sqlite.remove().await;
    postgres.remove().await;
    if let Err(e) = outcome {
        std::panic::resume_unwind(e.into_panic());
    }
}
