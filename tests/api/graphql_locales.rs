//! GraphQL in several locales (CONTRACT.md sections 12 and 17): `locale` on `allT`, `T` and the
//! mutations, `_meta { locale fallbackLocales }`, references read in their parent's locale,
//! `where` and `sort` in the locale asked, and unknown locales (and `*`) as GraphQL errors.

use std::collections::BTreeMap;

use axum::http::StatusCode;
use cms::core::schema::parse_schemas;
use serde_json::{Value, json};

use crate::support::{Session, TestApp, config_for};

const GQL: &str = "/api/graphql";

fn schemas() -> Vec<cms::core::schema::Schema> {
    parse_schemas(&json!([
        { "type": "document", "name": "person", "fields": [
            { "name": "name", "type": "string" },
            { "name": "role", "type": "string", "localized": true }
        ] },
        { "type": "document", "name": "article", "fields": [
            { "name": "title", "type": "string", "localized": true, "required": true },
            { "name": "rank", "type": "number", "localized": true },
            { "name": "views", "type": "number" },
            { "name": "author", "type": "reference", "to": ["person"] },
            { "name": "contributors", "type": "array",
              "of": [{ "name": "contributor", "type": "reference", "to": ["person"] }] }
        ] },
        { "type": "document", "name": "plain", "fields": [{ "name": "title", "type": "string" }] }
    ]))
    .unwrap()
}

/// An instance with `en` (default), `de`, `de-AT` (falling back to `de`) and `fr`.
async fn start(url: &str) -> (TestApp, Session) {
    let mut config = config_for(url);
    config.locales.available = ["en", "de", "de-AT", "fr"].map(String::from).to_vec();
    config.locales.fallbacks = BTreeMap::from([("de-AT".to_owned(), "de".to_owned())]);
    let app = TestApp::custom(config, |b| b.schemas(schemas())).await;
    let ada = app.sign_up("Ada", "ada@example.com").await;
    (app, ada)
}

/// A GraphQL request: HTTP 200 whatever happens, and its body.
async fn gql(app: &TestApp, s: &Session, query: &str, variables: Value) -> Value {
    let res = app
        .post(GQL, json!({ "query": query, "variables": variables }))
        .cookie(s)
        .send()
        .await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);
    res.body
}

/// A GraphQL request that must succeed: its `data`.
async fn ok(app: &TestApp, s: &Session, query: &str, variables: Value) -> Value {
    let body = gql(app, s, query, variables).await;
    assert!(body.get("errors").is_none(), "{body}");
    body["data"].clone()
}

/// A GraphQL request that must fail with one BAD_REQUEST error: its message.
async fn refused(app: &TestApp, s: &Session, query: &str, variables: Value) -> String {
    let body = gql(app, s, query, variables).await;
    let errors = body["errors"].as_array().expect("errors");
    assert_eq!(errors.len(), 1, "{body}");
    assert_eq!(errors[0]["extensions"]["code"], "BAD_REQUEST", "{body}");
    errors[0]["message"].as_str().unwrap().to_owned()
}

/// A person whose `role` is `en` in English and `de` in German, written through GraphQL.
async fn person(app: &TestApp, s: &Session, name: &str, en: &str, de: &str) -> String {
    let created = ok(
        app,
        s,
        "mutation($data: JSON!) { createPerson(data: $data, locale: \"en\") { id role } }",
        json!({"data": {"name": name, "role": en}}),
    )
    .await;
    assert_eq!(created["createPerson"]["role"], en);
    let id = created["createPerson"]["id"].as_str().unwrap().to_owned();
    let updated = ok(
        app,
        s,
        "mutation($id: ID!, $data: JSON!) { updatePerson(id: $id, data: $data, locale: \"de\") { role } }",
        json!({"id": id, "data": {"name": name, "role": de}}),
    )
    .await;
    assert_eq!(updated["updatePerson"]["role"], de);
    id
}

/// The draft as stored, every locale keyed by tag (REST's `locale=*`).
async fn stored(app: &TestApp, s: &Session, id: &str) -> Value {
    let res = app
        .get(&format!("/api/documents/{id}?locale=*"))
        .cookie(s)
        .send()
        .await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);
    res.body["data"]["draftData"].clone()
}

const ONE: &str = "query($id: ID!, $locale: String, $p: Perspective) {
    Article(id: $id, locale: $locale, perspective: $p) {
        title rank views
        author { name role _meta { locale } }
        contributors { role }
        _meta { revision locale fallbackLocales }
    }
}";

async fn mutations_write_one_locale_and_queries_read_one(url: String) {
    let (app, ada) = start(&url).await;
    let grace = person(&app, &ada, "Grace", "Engineer", "Ingenieurin").await;
    let alan = person(&app, &ada, "Alan", "Mathematician", "Mathematiker").await;

    // Created in English: the answer reads in English and says so.
    let created = ok(
        &app,
        &ada,
        "mutation($data: JSON!) { createArticle(data: $data, locale: \"en\") {
            id title author { role } _meta { locale fallbackLocales } validation { isValid } } }",
        json!({"data": {"title": "Hello", "rank": 1, "views": 5,
            "author": {"_ref": grace}, "contributors": [{"_ref": alan}, {"_ref": grace}]}}),
    )
    .await["createArticle"]
        .clone();
    assert_eq!(created["title"], "Hello");
    assert_eq!(created["author"]["role"], "Engineer");
    assert_eq!(
        created["_meta"],
        json!({"locale": "en", "fallbackLocales": {}})
    );
    assert_eq!(created["validation"]["isValid"], true);
    let id = created["id"].as_str().unwrap().to_owned();

    // Updated in German: the answer reads in German, and the English values are kept.
    let updated = ok(
        &app,
        &ada,
        "mutation($id: ID!, $data: JSON!) { updateArticle(id: $id, data: $data, locale: \"de\", expectedRevision: 1) {
            title rank author { role } _meta { revision locale } } }",
        json!({"id": id, "data": {"title": "Hallo", "rank": 2, "views": 6,
            "author": {"_ref": grace}, "contributors": [{"_ref": alan}, {"_ref": grace}]}}),
    )
    .await["updateArticle"]
        .clone();
    assert_eq!(
        updated,
        json!({"title": "Hallo", "rank": 2.0, "author": {"role": "Ingenieurin"},
            "_meta": {"revision": 2, "locale": "de"}})
    );
    let data = stored(&app, &ada, &id).await;
    assert_eq!(data["title"], json!({"en": "Hello", "de": "Hallo"}));
    assert_eq!(data["rank"], json!({"en": 1, "de": 2}));
    assert_eq!(
        data["views"], 6,
        "a value every locale shares is the last written"
    );

    // A list in German: the documents and the documents they reference read in German.
    let listed = ok(
        &app,
        &ada,
        "{ allArticle(locale: \"de\") { title author { role _meta { locale } } contributors { role } _meta { locale fallbackLocales } } }",
        json!({}),
    )
    .await;
    assert_eq!(
        listed["allArticle"],
        json!([{
            "title": "Hallo",
            "author": {"role": "Ingenieurin", "_meta": {"locale": "de"}},
            "contributors": [{"role": "Mathematiker"}, {"role": "Ingenieurin"}],
            "_meta": {"locale": "de", "fallbackLocales": {}},
        }])
    );

    // French has no value: the fallback chain ends at the default, and `_meta` names it.
    let fr = ok(&app, &ada, ONE, json!({"id": id, "locale": "fr"})).await["Article"].clone();
    assert_eq!(fr["title"], "Hello");
    assert_eq!(fr["rank"], 1.0);
    assert_eq!(fr["author"]["role"], "Engineer");
    assert_eq!(fr["author"]["_meta"]["locale"], "fr");
    assert_eq!(
        fr["_meta"],
        json!({"revision": 2, "locale": "fr", "fallbackLocales": {"title": "en", "rank": "en"}})
    );
    // Austrian German falls back to German, for the article and its references alike.
    let at = ok(&app, &ada, ONE, json!({"id": id, "locale": "de-AT"})).await["Article"].clone();
    assert_eq!(at["title"], "Hallo");
    assert_eq!(at["author"]["role"], "Ingenieurin");
    assert_eq!(
        at["contributors"],
        json!([{"role": "Mathematiker"}, {"role": "Ingenieurin"}])
    );
    assert_eq!(
        at["_meta"]["fallbackLocales"],
        json!({"title": "de", "rank": "de"})
    );
    // No `locale`: the default locale; tags match whatever their case.
    let default = ok(&app, &ada, ONE, json!({"id": id})).await["Article"].clone();
    assert_eq!(default["title"], "Hello");
    assert_eq!(default["author"]["role"], "Engineer");
    assert_eq!(default["_meta"]["locale"], "en");
    let upper = ok(&app, &ada, ONE, json!({"id": id, "locale": "DE"})).await["Article"].clone();
    assert_eq!(upper["title"], "Hallo");
    assert_eq!(upper["_meta"]["locale"], "de");

    // Two locales in one request: each field's references read in its own locale.
    let both = ok(
        &app,
        &ada,
        "query($id: ID!) {
            en: Article(id: $id, locale: \"en\") { title author { role } }
            de: Article(id: $id, locale: \"de\") { title author { role } }
        }",
        json!({"id": id}),
    )
    .await;
    assert_eq!(
        both,
        json!({
            "en": {"title": "Hello", "author": {"role": "Engineer"}},
            "de": {"title": "Hallo", "author": {"role": "Ingenieurin"}},
        })
    );

    // Publishing publishes every locale; its answer reads in the locale asked.
    let published = ok(
        &app,
        &ada,
        "mutation($id: ID!) { publishArticle(id: $id, locale: \"de\") { status title _meta { locale } } }",
        json!({"id": id}),
    )
    .await;
    assert_eq!(
        published["publishArticle"],
        json!({"status": "published", "title": "Hallo", "_meta": {"locale": "de"}})
    );
    for (locale, title) in [("en", "Hello"), ("de", "Hallo"), ("fr", "Hello")] {
        let read = ok(
            &app,
            &ada,
            ONE,
            json!({"id": id, "locale": locale, "p": "published"}),
        )
        .await;
        assert_eq!(read["Article"]["title"], title, "{locale}");
    }
    let unpublished = ok(
        &app,
        &ada,
        "mutation($id: ID!) { unpublishArticle(id: $id, locale: \"fr\") { status title _meta { locale fallbackLocales } } }",
        json!({"id": id}),
    )
    .await;
    assert_eq!(
        unpublished["unpublishArticle"],
        json!({"status": "draft", "title": "Hello",
            "_meta": {"locale": "fr", "fallbackLocales": {"title": "en", "rank": "en"}}})
    );

    // A type without localized fields: `_meta.locale` only when a locale was named.
    ok(
        &app,
        &ada,
        "mutation { createPlain(data: {title: \"Same\"}) { id } }",
        json!({}),
    )
    .await;
    let plain = ok(
        &app,
        &ada,
        "{ de: allPlain(locale: \"de\") { title _meta { locale } } none: allPlain { title _meta { locale } } }",
        json!({}),
    )
    .await;
    assert_eq!(
        plain,
        json!({
            "de": [{"title": "Same", "_meta": {"locale": "de"}}],
            "none": [{"title": "Same", "_meta": {"locale": null}}],
        })
    );
    app.stop().await;
}

async fn where_and_sort_compare_the_locale_asked(url: String) {
    let (app, ada) = start(&url).await;
    for (en, de, rank_en, rank_de) in [("Apple", "Apfel", 1, 3), ("Banana", "Banane", 2, 1)] {
        let id = ok(
            &app,
            &ada,
            "mutation($data: JSON!) { createArticle(data: $data) { id } }",
            json!({"data": {"title": en, "rank": rank_en}}),
        )
        .await["createArticle"]["id"]
            .as_str()
            .unwrap()
            .to_owned();
        ok(
            &app,
            &ada,
            "mutation($id: ID!, $data: JSON!) { updateArticle(id: $id, data: $data, locale: \"de\") { id } }",
            json!({"id": id, "data": {"title": de, "rank": rank_de}}),
        )
        .await;
    }
    let titles = |data: &Value| -> Vec<String> {
        data["allArticle"]
            .as_array()
            .unwrap()
            .iter()
            .map(|d| d["title"].as_str().unwrap().to_owned())
            .collect()
    };
    let q = "query($locale: String, $where: JSON, $sort: [String!]) {
        allArticle(locale: $locale, where: $where, sort: $sort) { title } }";
    let found = ok(
        &app,
        &ada,
        q,
        json!({"locale": "de", "where": {"title": {"equals": "Apfel"}}}),
    )
    .await;
    assert_eq!(titles(&found), ["Apfel"]);
    // No fallback in a filter: the English title does not match in German.
    let none = ok(
        &app,
        &ada,
        q,
        json!({"locale": "de", "where": {"title": {"equals": "Apple"}}}),
    )
    .await;
    assert_eq!(titles(&none), Vec::<String>::new());
    let de = ok(&app, &ada, q, json!({"locale": "de", "sort": ["rank"]})).await;
    assert_eq!(titles(&de), ["Banane", "Apfel"]);
    let en = ok(&app, &ada, q, json!({"locale": "en", "sort": ["rank"]})).await;
    assert_eq!(titles(&en), ["Apple", "Banana"]);
    app.stop().await;
}

async fn unknown_locales_and_every_locale_are_graphql_errors(url: String) {
    let (app, ada) = start(&url).await;
    let id = ok(
        &app,
        &ada,
        "mutation { createArticle(data: {title: \"Hello\"}) { id } }",
        json!({}),
    )
    .await["createArticle"]["id"]
        .as_str()
        .unwrap()
        .to_owned();

    // An unknown tag (or no tag at all): the service's message, on every field that takes one.
    for locale in ["it", "x'--", ""] {
        let vars = json!({"id": id, "locale": locale, "data": {"title": "Ciao"}});
        for query in [
            "query($locale: String) { allArticle(locale: $locale) { id } }",
            "query($id: ID!, $locale: String) { Article(id: $id, locale: $locale) { id } }",
            "mutation($data: JSON!, $locale: String) { createArticle(data: $data, locale: $locale) { id } }",
            "mutation($id: ID!, $data: JSON!, $locale: String) { updateArticle(id: $id, data: $data, locale: $locale) { id } }",
            "mutation($id: ID!, $locale: String) { publishArticle(id: $id, locale: $locale) { id } }",
            "mutation($id: ID!, $locale: String) { unpublishArticle(id: $id, locale: $locale) { id } }",
        ] {
            let message = refused(&app, &ada, query, vars.clone()).await;
            assert!(
                message.contains("unknown locale"),
                "{locale:?}, {query}: {message}"
            );
        }
    }
    // Nothing was written by the refused mutations: no new article, no German title, nothing
    // published.
    let all = ok(
        &app,
        &ada,
        "{ allArticle { id status _meta { revision } } }",
        json!({}),
    )
    .await;
    assert_eq!(
        all["allArticle"],
        json!([{"id": id, "status": "draft", "_meta": {"revision": 1}}])
    );
    assert_eq!(
        stored(&app, &ada, &id).await["title"],
        json!({"en": "Hello"})
    );

    // Every locale at once: a field has one type, so GraphQL names REST's `locale=*` instead.
    let vars = json!({"id": id, "locale": "*", "data": {"title": {"en": "Hi", "de": "Hallo"}}});
    for query in [
        "query($locale: String) { allArticle(locale: $locale) { id } }",
        "query($id: ID!, $locale: String) { Article(id: $id, locale: $locale) { id } }",
        "mutation($data: JSON!, $locale: String) { createArticle(data: $data, locale: $locale) { id } }",
        "mutation($id: ID!, $data: JSON!, $locale: String) { updateArticle(id: $id, data: $data, locale: $locale) { id } }",
        "mutation($id: ID!, $locale: String) { publishArticle(id: $id, locale: $locale) { id } }",
    ] {
        let message = refused(&app, &ada, query, vars.clone()).await;
        assert!(message.contains("locale=*"), "{query}: {message}");
    }
    assert_eq!(
        stored(&app, &ada, &id).await["title"],
        json!({"en": "Hello"})
    );

    // The arguments are introspectable, described, and typed String.
    let fields = ok(
        &app,
        &ada,
        "{ __type(name: \"Query\") { fields { name args { name description type { name } } } } }",
        json!({}),
    )
    .await;
    let all_article = fields["__type"]["fields"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["name"] == "allArticle")
        .unwrap()
        .clone();
    let locale = all_article["args"]
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["name"] == "locale")
        .unwrap()
        .clone();
    assert_eq!(locale["type"]["name"], "String");
    assert!(
        locale["description"].as_str().unwrap().contains("fallback"),
        "{locale}"
    );
    app.stop().await;
}

cms_store::both_engines!(
    mutations_write_one_locale_and_queries_read_one,
    where_and_sort_compare_the_locale_asked,
    unknown_locales_and_every_locale_are_graphql_errors,
);
