//! Localization (CONTRACT.md section 17): localized fields stored per locale, reads in one
//! locale with fallbacks or in all of them, writes that touch one locale, publishing, versions,
//! `where` and `sort` per locale, validation, field access, the organization's narrowing and
//! GET /api/locales.

use std::collections::BTreeMap;

use axum::http::{Method, StatusCode};
use cms::core::schema::parse_schemas;
use serde_json::{Value, json};

use crate::support::{Session, TestApp, config_for};

const DOCS: &str = "/api/documents";

fn schemas() -> Vec<cms::core::schema::Schema> {
    parse_schemas(&json!([
        { "type": "object", "name": "seo", "fields": [
            { "name": "description", "type": "text", "localized": true, "maxLength": 20 },
            { "name": "noindex", "type": "boolean" }
        ] },
        { "type": "document", "name": "article", "fields": [
            { "name": "title", "type": "string", "localized": true, "required": true },
            { "name": "rank", "type": "number", "localized": true, "indexed": true },
            { "name": "views", "type": "number" },
            { "name": "slug", "type": "slug", "localized": true },
            { "name": "seo", "type": "seo" },
            { "name": "note", "type": "string", "localized": true,
              "access": { "read": ["owner"], "update": ["owner"] } }
        ] },
        { "type": "document", "name": "plain", "fields": [{ "name": "title", "type": "string" }] }
    ]))
    .unwrap()
}

/// An instance with `en` (default), `de`, `de-AT` (falling back to `de`) and `fr`.
async fn start(url: &str) -> (TestApp, Session) {
    start_with(config_for(url)).await
}

/// [`start`], where anyone may sign up (a second person joins).
async fn start_open(url: &str) -> (TestApp, Session) {
    let mut config = config_for(url);
    config.auth.invite_only = false;
    start_with(config).await
}

async fn start_with(mut config: cms::Config) -> (TestApp, Session) {
    config.locales.available = ["en", "de", "de-AT", "fr"].map(String::from).to_vec();
    config.locales.fallbacks = BTreeMap::from([("de-AT".to_owned(), "de".to_owned())]);
    let app = TestApp::custom(config, |b| b.schemas(schemas())).await;
    let ada = app.sign_up("Ada", "ada@example.com").await;
    (app, ada)
}

async fn send(app: &TestApp, s: &Session, method: Method, path: &str, body: Value) -> Value {
    let res = app.req(method, path).json(body).cookie(s).send().await;
    assert!(
        res.status.is_success(),
        "{path}: {} {}",
        res.status,
        res.body
    );
    res.body
}

async fn read(app: &TestApp, s: &Session, path: &str) -> Value {
    let res = app.get(path).cookie(s).send().await;
    assert_eq!(res.status, StatusCode::OK, "{path}: {}", res.body);
    res.body["data"].clone()
}

/// A new article written in `en`, then its German values written with `locale=de`.
async fn bilingual(app: &TestApp, s: &Session) -> String {
    let created = send(
        app,
        s,
        Method::POST,
        DOCS,
        json!({"type": "article", "data": {"title": "Hello", "views": 1, "seo": {"description": "About"}}}),
    )
    .await;
    let id = created["data"]["id"].as_str().unwrap().to_owned();
    send(
        app,
        s,
        Method::PUT,
        &format!("{DOCS}/{id}?locale=de"),
        json!({"data": {"title": "Hallo", "views": 2, "seo": {"description": "Über"}}}),
    )
    .await;
    id
}

async fn reads_follow_the_fallback_chain(url: String) {
    let (app, ada) = start(&url).await;
    let id = bilingual(&app, &ada).await;

    let en = read(&app, &ada, &format!("{DOCS}/{id}?locale=en")).await;
    assert_eq!(en["draftData"]["title"], "Hello");
    assert_eq!(en["draftData"]["seo"]["description"], "About");
    // A value every locale shares is the last one written.
    assert_eq!(en["draftData"]["views"], 2);
    assert_eq!(en["_meta"]["locale"], "en");
    assert_eq!(en["_meta"]["fallbackLocales"], json!({}));

    let de = read(&app, &ada, &format!("{DOCS}/{id}?locale=de")).await;
    assert_eq!(de["draftData"]["title"], "Hallo");
    assert_eq!(de["draftData"]["seo"]["description"], "Über");
    assert_eq!(de["_meta"]["locale"], "de");

    let de_at = read(&app, &ada, &format!("{DOCS}/{id}?locale=de-AT")).await;
    assert_eq!(de_at["draftData"]["title"], "Hallo");
    assert_eq!(de_at["_meta"]["locale"], "de-AT");
    assert_eq!(
        de_at["_meta"]["fallbackLocales"],
        json!({"title": "de", "seo.description": "de"})
    );

    let fr = read(&app, &ada, &format!("{DOCS}/{id}?locale=fr")).await;
    assert_eq!(fr["draftData"]["title"], "Hello");
    assert_eq!(
        fr["_meta"]["fallbackLocales"],
        json!({"title": "en", "seo.description": "en"})
    );

    // Without `locale` the default applies; tags match whatever their case.
    let default = read(&app, &ada, &format!("{DOCS}/{id}")).await;
    assert_eq!(default["draftData"]["title"], "Hello");
    assert_eq!(default["_meta"]["locale"], "en");
    let upper = read(&app, &ada, &format!("{DOCS}/{id}?locale=DE")).await;
    assert_eq!(upper["_meta"]["locale"], "de");

    // Lists and by-ids read the same way.
    let listed = read(&app, &ada, &format!("{DOCS}?type=article&locale=de-AT")).await;
    assert_eq!(listed[0]["draftData"]["title"], "Hallo");
    assert_eq!(listed[0]["_meta"]["fallbackLocales"]["title"], "de");
    let by_ids = read(&app, &ada, &format!("{DOCS}/by-ids?ids={id}&locale=fr")).await;
    assert_eq!(by_ids[0]["draftData"]["title"], "Hello");

    // An unknown tag is a 400 on every read and write.
    for path in [
        format!("{DOCS}/{id}?locale=it"),
        format!("{DOCS}?type=article&locale=it"),
        format!("{DOCS}/{id}?locale=x'--"),
    ] {
        let res = app.get(&path).cookie(&ada).send().await;
        let message = res.assert_handler_error(StatusCode::BAD_REQUEST, "Bad Request");
        assert!(message.contains("unknown locale"), "{message}");
    }
    let res = app
        .post(DOCS, json!({"type": "article", "locale": "it", "data": {}}))
        .cookie(&ada)
        .send()
        .await;
    res.assert_handler_error(StatusCode::BAD_REQUEST, "Bad Request");
    let res = app
        .post(
            "/api/documents/query",
            json!({"type": "article", "locale": "it"}),
        )
        .cookie(&ada)
        .send()
        .await;
    res.assert_handler_error(StatusCode::BAD_REQUEST, "Bad Request");

    // A type without localized fields says which locale was asked, and nothing else changes.
    let plain = send(
        &app,
        &ada,
        Method::POST,
        DOCS,
        json!({"type": "plain", "data": {"title": "Same"}}),
    )
    .await;
    let plain_id = plain["data"]["id"].as_str().unwrap();
    assert!(plain["data"]["_meta"].get("locale").is_none());
    let plain_de = read(&app, &ada, &format!("{DOCS}/{plain_id}?locale=de")).await;
    assert_eq!(plain_de["draftData"], json!({"title": "Same"}));
    assert_eq!(plain_de["_meta"]["locale"], "de");
    app.stop().await;
}

async fn every_locale_round_trips_and_a_write_keeps_the_others(url: String) {
    let (app, ada) = start(&url).await;
    let id = bilingual(&app, &ada).await;
    let path = format!("{DOCS}/{id}");

    let all = read(&app, &ada, &format!("{path}?locale=*")).await;
    assert_eq!(all["_meta"]["locale"], "*");
    assert_eq!(
        all["draftData"]["title"],
        json!({"en": "Hello", "de": "Hallo"})
    );
    assert_eq!(
        all["draftData"]["seo"]["description"],
        json!({"en": "About", "de": "Über"})
    );

    // What `*` reads, `*` writes back unchanged.
    let saved = send(
        &app,
        &ada,
        Method::PUT,
        &format!("{path}?locale=*"),
        json!({"data": all["draftData"]}),
    )
    .await;
    assert_eq!(saved["data"]["draftData"], all["draftData"]);

    // A write in French adds French and leaves English and German as they were.
    send(
        &app,
        &ada,
        Method::PUT,
        &path,
        json!({"locale": "fr", "data": {"title": "Bonjour", "views": 2, "seo": {"description": "À propos"}}}),
    )
    .await;
    let all = read(&app, &ada, &format!("{path}?locale=*")).await;
    assert_eq!(
        all["draftData"]["title"],
        json!({"en": "Hello", "de": "Hallo", "fr": "Bonjour"})
    );
    // Leaving a localized field out of a write in one locale removes that locale's value.
    send(
        &app,
        &ada,
        Method::PUT,
        &format!("{path}?locale=de"),
        json!({"data": {"title": "Hallo", "views": 2}}),
    )
    .await;
    let all = read(&app, &ada, &format!("{path}?locale=*")).await;
    assert_eq!(
        all["draftData"]["seo"]["description"],
        json!({"en": "About", "fr": "À propos"})
    );
    // `*` writes take keyed values whole, and refuse unknown locales and wrong shapes.
    let res = app
        .req(Method::PUT, &format!("{path}?locale=*"))
        .json(json!({"data": {"title": {"en": "Hi", "it": "Ciao"}}}))
        .cookie(&ada)
        .send()
        .await;
    res.assert_handler_error(StatusCode::BAD_REQUEST, "Bad Request");
    assert_eq!(res.body["issues"][0]["path"], "title.it");
    let res = app
        .req(Method::PUT, &format!("{path}?locale=de"))
        .json(json!({"data": {"title": 5}}))
        .cookie(&ada)
        .send()
        .await;
    res.assert_handler_error(StatusCode::BAD_REQUEST, "Bad Request");
    assert_eq!(res.body["issues"][0]["path"], "title.de");
    app.stop().await;
}

async fn publishing_and_versions_keep_every_locale(url: String) {
    let (app, ada) = start(&url).await;
    let id = bilingual(&app, &ada).await;
    let path = format!("{DOCS}/{id}");
    let published = send(
        &app,
        &ada,
        Method::POST,
        &format!("{path}/publish?locale=de"),
        json!({}),
    )
    .await;
    assert!(published["data"]["publishedHash"].is_string());
    // Every locale is published; the answer shows the one asked.
    assert_eq!(published["data"]["publishedData"]["title"], "Hallo");

    let de = read(
        &app,
        &ada,
        &format!("{path}?locale=de&perspective=published"),
    )
    .await;
    assert_eq!(de["publishedData"]["title"], "Hallo");
    let all = read(
        &app,
        &ada,
        &format!("{path}?locale=*&perspective=published"),
    )
    .await;
    assert_eq!(
        all["publishedData"]["title"],
        json!({"en": "Hello", "de": "Hallo"})
    );
    // The hash covers the whole document: every locale.
    let hash = all["publishedHash"].as_str().unwrap().to_owned();
    assert_eq!(
        hash,
        cms::core::canonical::published_hash(&all["publishedData"])
    );

    // Versions store every locale, and a restore brings them all back.
    let versions = read(&app, &ada, &format!("{path}/versions")).await;
    let first = versions.as_array().unwrap().last().unwrap().clone();
    assert_eq!(first["data"]["title"], json!({"en": "Hello"}));
    send(
        &app,
        &ada,
        Method::PUT,
        &format!("{path}?locale=de"),
        json!({"data": {"title": "Servus"}}),
    )
    .await;
    let second = &versions.as_array().unwrap()[versions.as_array().unwrap().len() - 2];
    let number = second["versionNumber"].as_i64().unwrap();
    assert_eq!(
        second["data"]["title"],
        json!({"en": "Hello", "de": "Hallo"})
    );
    let restored = send(
        &app,
        &ada,
        Method::POST,
        &format!("{path}/versions/{number}/restore"),
        json!({}),
    )
    .await;
    assert_eq!(restored["data"]["draftData"]["title"], "Hello");
    let all = read(&app, &ada, &format!("{path}?locale=*")).await;
    assert_eq!(
        all["draftData"]["title"],
        json!({"en": "Hello", "de": "Hallo"})
    );
    app.stop().await;
}

async fn required_binds_the_default_locale_only(url: String) {
    let (app, ada) = start(&url).await;
    // German only: the draft saves, and publishing is refused for the missing English title.
    let res = app
        .post(
            DOCS,
            json!({"type": "article", "locale": "de", "data": {"title": "Nur Deutsch"}}),
        )
        .cookie(&ada)
        .send()
        .await;
    assert_eq!(res.status, StatusCode::CREATED, "{}", res.body);
    assert_eq!(res.body["validation"]["isValid"], false);
    assert_eq!(res.body["validation"]["errors"][0]["path"], "title.en");
    let id = res.body["data"]["id"].as_str().unwrap().to_owned();
    let res = app
        .req(Method::POST, &format!("{DOCS}/{id}/publish"))
        .cookie(&ada)
        .send()
        .await;
    res.assert_handler_error(StatusCode::BAD_REQUEST, "Bad Request");
    assert_eq!(res.body["issues"][0]["path"], "title.en");

    // With the English title it publishes, though French has none; constraints bind every
    // locale present.
    send(
        &app,
        &ada,
        Method::PUT,
        &format!("{DOCS}/{id}?locale=en"),
        json!({"data": {"title": "English too"}}),
    )
    .await;
    send(
        &app,
        &ada,
        Method::POST,
        &format!("{DOCS}/{id}/publish"),
        json!({}),
    )
    .await;
    send(
        &app,
        &ada,
        Method::PUT,
        &format!("{DOCS}/{id}?locale=fr"),
        json!({"data": {"title": "Français", "seo": {"description": "beaucoup trop long pour la limite"}}}),
    )
    .await;
    let res = app
        .req(Method::POST, &format!("{DOCS}/{id}/publish"))
        .cookie(&ada)
        .send()
        .await;
    res.assert_handler_error(StatusCode::BAD_REQUEST, "Bad Request");
    assert_eq!(res.body["issues"][0]["path"], "seo.description.fr");
    app.stop().await;
}

async fn where_and_sort_read_the_requested_locale(url: String) {
    let (app, ada) = start(&url).await;
    for (en, de, rank_en, rank_de) in [("Apple", "Apfel", 1, 3), ("Banana", "Banane", 2, 1)] {
        let created = send(
            &app,
            &ada,
            Method::POST,
            DOCS,
            json!({"type": "article", "data": {"title": en, "rank": rank_en}}),
        )
        .await;
        let id = created["data"]["id"].as_str().unwrap();
        send(
            &app,
            &ada,
            Method::PUT,
            &format!("{DOCS}/{id}?locale=de"),
            json!({"data": {"title": de, "rank": rank_de}}),
        )
        .await;
    }
    // A French-only third article: no English or German value to match or sort by.
    send(
        &app,
        &ada,
        Method::POST,
        DOCS,
        json!({"type": "article", "locale": "fr", "data": {"title": "Cerise", "rank": 0}}),
    )
    .await;
    let titles = |body: &Value| -> Vec<String> {
        body["data"]
            .as_array()
            .unwrap()
            .iter()
            .map(|d| d["draftData"]["title"].as_str().unwrap_or("").to_owned())
            .collect()
    };
    let query = |locale: &str, where_: Value, sort: &str| json!({"type": "article", "locale": locale, "where": where_, "sort": sort});
    let res = send(
        &app,
        &ada,
        Method::POST,
        "/api/documents/query",
        query("de", json!({"title": {"equals": "Apfel"}}), "rank"),
    )
    .await;
    assert_eq!(titles(&res), ["Apfel"]);
    // No fallback in a filter: the English title does not match in German.
    let res = send(
        &app,
        &ada,
        Method::POST,
        "/api/documents/query",
        query("de", json!({"title": {"equals": "Apple"}}), "rank"),
    )
    .await;
    assert_eq!(res["pagination"]["total"], 0);
    // The indexed, localized `rank` sorts by the locale asked.
    let res = send(
        &app,
        &ada,
        Method::POST,
        "/api/documents/query",
        query("de", json!({"rank": {"exists": true}}), "rank"),
    )
    .await;
    assert_eq!(titles(&res), ["Banane", "Apfel"]);
    let res = send(
        &app,
        &ada,
        Method::POST,
        "/api/documents/query",
        query("en", json!({"rank": {"greater_than": 0}}), "-rank"),
    )
    .await;
    assert_eq!(titles(&res), ["Banana", "Apple"]);
    let res = read(
        &app,
        &ada,
        &format!("{DOCS}?type=article&locale=fr&sort=rank"),
    )
    .await;
    // Sorting in French: Cerise has the only French rank; the others fall back for display.
    assert_eq!(res.as_array().unwrap().len(), 3);
    let res = send(
        &app,
        &ada,
        Method::POST,
        "/api/documents/query",
        query("fr", json!({"title": {"starts_with": "Ce"}}), "rank"),
    )
    .await;
    assert_eq!(titles(&res), ["Cerise"]);
    app.stop().await;
}

async fn field_access_applies_in_every_locale(url: String) {
    let (app, ada) = start_open(&url).await;
    let org = app.active_organization(&ada).await;
    let bob = app.sign_up("Bob", "bob@example.com").await;
    app.join(&bob, &org, "editor").await;
    let created = send(
        &app,
        &ada,
        Method::POST,
        DOCS,
        json!({"type": "article", "data": {"title": "Hello", "note": "secret en"}}),
    )
    .await;
    let id = created["data"]["id"].as_str().unwrap().to_owned();
    send(
        &app,
        &ada,
        Method::PUT,
        &format!("{DOCS}/{id}?locale=de"),
        json!({"data": {"title": "Hallo", "note": "geheim"}}),
    )
    .await;
    // Bob may not read `note`: not in any locale, not keyed, not through a filter.
    for locale in ["en", "de", "de-AT", "*"] {
        let doc = read(&app, &bob, &format!("{DOCS}/{id}?locale={locale}")).await;
        assert!(doc["draftData"].get("note").is_none(), "{locale}: {doc}");
    }
    let res = send(
        &app,
        &bob,
        Method::POST,
        "/api/documents/query",
        json!({"type": "article", "locale": "de", "where": {"note": {"equals": "geheim"}}}),
    )
    .await;
    assert_eq!(res["pagination"]["total"], 0);
    // Bob's write in French cannot change `note` in any locale.
    send(
        &app,
        &bob,
        Method::PUT,
        &format!("{DOCS}/{id}?locale=fr"),
        json!({"data": {"title": "Bonjour", "note": "écrasé"}}),
    )
    .await;
    let all = read(&app, &ada, &format!("{DOCS}/{id}?locale=*")).await;
    assert_eq!(
        all["draftData"]["note"],
        json!({"en": "secret en", "de": "geheim"})
    );
    assert_eq!(
        all["draftData"]["title"],
        json!({"en": "Hello", "de": "Hallo", "fr": "Bonjour"})
    );
    app.stop().await;
}

async fn organizations_narrow_their_locales(url: String) {
    let (app, ada) = start(&url).await;
    let org = app.active_organization(&ada).await;
    let locales = read(&app, &ada, "/api/locales").await;
    assert_eq!(
        locales,
        json!({"available": ["en", "de", "de-AT", "fr"], "default": "en", "fallbacks": {"de-AT": "de"}})
    );
    let path = format!("/api/organizations/{org}");
    let res = send(
        &app,
        &ada,
        Method::PATCH,
        &path,
        json!({"locales": ["en", "DE-at"]}),
    )
    .await;
    assert_eq!(res["data"]["locales"], json!(["en", "de-AT"]));
    let locales = read(&app, &ada, "/api/locales").await;
    assert_eq!(
        locales,
        json!({"available": ["en", "de-AT"], "default": "en", "fallbacks": {}})
    );
    // French is no longer this organization's; de-AT now falls back to the default.
    let id = bilingual_in(&app, &ada).await;
    let res = app
        .get(&format!("{DOCS}/{id}?locale=fr"))
        .cookie(&ada)
        .send()
        .await;
    res.assert_handler_error(StatusCode::BAD_REQUEST, "Bad Request");
    let de_at = read(&app, &ada, &format!("{DOCS}/{id}?locale=de-AT")).await;
    assert_eq!(de_at["draftData"]["title"], "Hello");

    // The default cannot be left out, unknown tags are refused, null restores every locale.
    for bad in [json!(["de"]), json!(["en", "it"]), json!("en")] {
        let res = app
            .req(Method::PATCH, &path)
            .json(json!({"locales": bad}))
            .cookie(&ada)
            .send()
            .await;
        res.assert_handler_error(StatusCode::BAD_REQUEST, "Bad Request");
    }
    let res = send(&app, &ada, Method::PATCH, &path, json!({"locales": null})).await;
    assert_eq!(res["data"]["locales"], Value::Null);
    let locales = read(&app, &ada, "/api/locales").await;
    assert_eq!(locales["available"].as_array().unwrap().len(), 4);
    app.stop().await;
}

/// An article with an English title only (German is not available in a narrowed organization).
async fn bilingual_in(app: &TestApp, s: &Session) -> String {
    let created = send(
        app,
        s,
        Method::POST,
        DOCS,
        json!({"type": "article", "data": {"title": "Hello"}}),
    )
    .await;
    created["data"]["id"].as_str().unwrap().to_owned()
}

async fn the_default_configuration_has_one_locale(url: String) {
    let app = TestApp::start(&url).await;
    let ada = app.sign_up("Ada", "ada@example.com").await;
    let locales = read(&app, &ada, "/api/locales").await;
    assert_eq!(
        locales,
        json!({"available": ["en"], "default": "en", "fallbacks": {}})
    );
    // The demo `page` is localized: it reads plainly, and `*` shows its one locale.
    let created = send(
        &app,
        &ada,
        Method::POST,
        DOCS,
        json!({"type": "page", "data": {"title": "About"}}),
    )
    .await;
    assert_eq!(created["data"]["draftData"]["title"], "About");
    assert_eq!(created["data"]["_meta"]["locale"], "en");
    let id = created["data"]["id"].as_str().unwrap();
    let all = read(&app, &ada, &format!("{DOCS}/{id}?locale=*")).await;
    assert_eq!(all["draftData"]["title"], json!({"en": "About"}));
    let res = app
        .get(&format!("{DOCS}/{id}?locale=de"))
        .cookie(&ada)
        .send()
        .await;
    res.assert_handler_error(StatusCode::BAD_REQUEST, "Bad Request");
    app.stop().await;
}

async fn localized_slugs_are_unique_per_locale(url: String) {
    let (app, ada) = start(&url).await;
    let publish = |locale: &str, title: &str, slug: &str| {
        json!({"type": "article", "locale": locale, "publish": true,
               "data": {"title": title, "slug": {"current": slug}}})
    };
    send(
        &app,
        &ada,
        Method::POST,
        DOCS,
        publish("en", "About", "about"),
    )
    .await;
    // The same slug in another locale is another page's address: allowed.
    let res = app
        .post(DOCS, json!({"type": "article", "data": {"title": "Other"}}))
        .cookie(&ada)
        .send()
        .await;
    let other = res.body["data"]["id"].as_str().unwrap().to_owned();
    send(
        &app,
        &ada,
        Method::PUT,
        &format!("{DOCS}/{other}?locale=de"),
        json!({"publish": true, "data": {"title": "Andere", "slug": {"current": "about"}}}),
    )
    .await;
    // The same slug in the same locale is refused, naming the locale.
    let res = app
        .post(DOCS, publish("en", "Again", "about"))
        .cookie(&ada)
        .send()
        .await;
    res.assert_handler_error(StatusCode::BAD_REQUEST, "Bad Request");
    assert_eq!(res.body["issues"][0]["path"], "slug.en", "{}", res.body);
    assert_eq!(res.body["issues"][0]["code"], "unique", "{}", res.body);
    app.stop().await;
}

cms_store::both_engines!(
    localized_slugs_are_unique_per_locale,
    reads_follow_the_fallback_chain,
    every_locale_round_trips_and_a_write_keeps_the_others,
    publishing_and_versions_keep_every_locale,
    required_binds_the_default_locale_only,
    where_and_sort_read_the_requested_locale,
    field_access_applies_in_every_locale,
    organizations_narrow_their_locales,
    the_default_configuration_has_one_locale,
);
