//! The assistant in several locales (CONTRACT.md sections 8 and 17): the document tools take a
//! `locale`, describe_cms and get_schema say what is localized, and `translate_document`
//! writes one locale from another as a change set whose undo removes only the translation.

use axum::http::StatusCode;
use cms::core::schema::parse_schemas;
use serde_json::{Value, json};

use crate::agent::{Answer, Model, done, events, of_kind, user};
use crate::support::{Session, TestApp, config_for};

fn schemas() -> Vec<cms::core::schema::Schema> {
    parse_schemas(&json!([
        { "type": "object", "name": "seo", "fields": [
            { "name": "description", "type": "text", "localized": true },
            { "name": "noindex", "type": "boolean" }
        ] },
        { "type": "document", "name": "article", "fields": [
            { "name": "title", "type": "string", "localized": true, "required": true },
            { "name": "summary", "type": "text", "localized": true },
            { "name": "views", "type": "number" },
            { "name": "seo", "type": "seo" }
        ] }
    ]))
    .unwrap()
}

/// An instance with `en` (default) and `de`, the assistant on a scripted model, and an
/// article written in English.
async fn start(url: &str, answers: Vec<Answer>) -> (TestApp, Model, Session, String) {
    let model = Model::start(answers).await;
    let mut config = config_for(url);
    config.locales.available = ["en", "de"].map(String::from).to_vec();
    config.agent.base_url = Some(model.base_url.clone());
    config.agent.model = Some("test-model".into());
    let app = TestApp::custom(config, |b| b.schemas(schemas())).await;
    let ada = app.sign_up("Ada", "ada@example.com").await;
    let res = app
        .post(
            "/api/documents",
            json!({"type": "article", "data": {
                "title": "Hello", "summary": "A greeting", "views": 3,
                "seo": {"description": "About", "noindex": false}
            }}),
        )
        .cookie(&ada)
        .send()
        .await;
    assert_eq!(res.status, StatusCode::CREATED, "{}", res.body);
    let id = res.body["data"]["id"].as_str().unwrap().to_owned();
    (app, model, ada, id)
}

async fn chat(app: &TestApp, s: &Session, text: &str) -> Vec<crate::agent::Event> {
    let res = app
        .post("/api/agent/chat", json!({"messages": [user(text)]}))
        .cookie(s)
        .send()
        .await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);
    events(&res.bytes)
}

async fn read(app: &TestApp, s: &Session, id: &str, locale: &str) -> Value {
    let res = app
        .get(&format!("/api/documents/{id}?locale={locale}"))
        .cookie(s)
        .send()
        .await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);
    res.body["data"].clone()
}

/// The results of a turn's tool calls, by call id.
fn result<'a>(events: &'a [crate::agent::Event], id: &str) -> &'a Value {
    of_kind(events, "toolResult")
        .into_iter()
        .find(|r| r["id"] == id)
        .unwrap_or_else(|| panic!("no result for {id}: {events:?}"))
}

async fn a_turn_translates_a_document_and_undo_removes_only_the_translation(url: String) {
    let (app, model, ada, id) = start(&url, vec![]).await;
    let english = read(&app, &ada, &id, "*").await["draftData"].clone();
    model.push(vec![
        Answer::Calls(vec![
            ("d", "describe_cms", json!({})),
            ("s", "get_schema", json!({"collection": "article"})),
            (
                "r",
                "get_document",
                json!({"collection": "article", "id": id, "locale": "en"}),
            ),
        ]),
        Answer::Calls(vec![(
            "t",
            "translate_document",
            json!({"collection": "article", "id": id, "from": "en", "to": "de", "translations": {
                "title": "Hallo",
                "seo": {"description": "Über", "noindex": false}
            }}),
        )]),
        Answer::Calls(vec![
            (
                "u",
                "update_document",
                json!({"collection": "article", "id": id, "locale": "de", "data": {"summary": "Ein Gruß"}}),
            ),
            (
                "q",
                "query_documents",
                json!({"collection": "article", "locale": "de", "where": {"title": {"equals": "Hallo"}}}),
            ),
        ]),
        Answer::Text(vec!["Übersetzt."], (1, 1)),
    ]);
    let events = chat(&app, &ada, "Translate my article into German").await;
    assert_eq!(done(&events)["finishReason"], "stop");
    for r in of_kind(&events, "toolResult") {
        assert_eq!(r["ok"], true, "{r}");
    }

    // The tools declare `locale`, the translation tool is offered, and the model is told
    // which locales exist and which fields are localized.
    let tools = model.requests()[0]["tools"].as_array().unwrap().clone();
    let params = |name: &str| {
        tools
            .iter()
            .find(|t| t["function"]["name"] == name)
            .unwrap_or_else(|| panic!("{name} offered"))["function"]["parameters"]["properties"]
            .clone()
    };
    for name in [
        "query_documents",
        "get_document",
        "create_document",
        "update_document",
    ] {
        assert_eq!(params(name)["locale"]["type"], "string", "{name}");
    }
    assert!(params("translate_document")["translations"].is_object());
    let described = &result(&events, "d")["result"];
    assert_eq!(described["locales"]["available"], json!(["en", "de"]));
    assert_eq!(described["locales"]["default"], "en");
    let article = described["collections"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == "article")
        .unwrap();
    assert_eq!(
        article["localizedFields"],
        json!(["title", "summary", "seo.description"])
    );
    assert_eq!(
        result(&events, "s")["result"]["localizedFields"],
        json!(["title", "summary", "seo.description"])
    );
    let source = &result(&events, "r")["result"];
    assert_eq!(source["draftData"]["title"], "Hello");
    assert_eq!(source["_meta"]["locale"], "en");

    // The translation reports what it left untranslated; the update in German merged into
    // German values only (no English copied over through the fallback).
    let translated = &result(&events, "t")["result"];
    assert_eq!(translated["locale"], "de");
    assert_eq!(translated["untranslated"], json!(["summary"]));
    let found = &result(&events, "q")["result"];
    assert_eq!(found["pagination"]["total"], 1, "{found}");
    assert_eq!(found["documents"][0]["draftData"]["title"], "Hallo");

    let german = read(&app, &ada, &id, "de").await;
    assert_eq!(
        german["draftData"],
        json!({"title": "Hallo", "summary": "Ein Gruß", "views": 3,
               "seo": {"description": "Über", "noindex": false}})
    );
    assert_eq!(german["_meta"]["fallbackLocales"], json!({}));
    assert_eq!(
        read(&app, &ada, &id, "en").await["draftData"],
        json!({"title": "Hello", "summary": "A greeting", "views": 3,
               "seo": {"description": "About", "noindex": false}})
    );

    // One change set for the turn, with both writes.
    let res = app.get("/api/agent/change-sets").cookie(&ada).send().await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);
    assert_eq!(res.body["pagination"]["total"], 1);
    let set = &res.body["data"][0];
    let tools: Vec<&Value> = set["operations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| &o["tool"])
        .collect();
    assert_eq!(
        tools,
        [&json!("translate_document"), &json!("update_document")]
    );
    assert!(
        set["operations"]
            .as_array()
            .unwrap()
            .iter()
            .all(|o| o["success"] == true && o["documentId"] == id.as_str())
    );

    // Undoing it removes the German values and nothing else.
    let set_id = set["id"].as_str().unwrap();
    let res = app
        .post(&format!("/api/agent/change-sets/{set_id}/undo"), json!({}))
        .cookie(&ada)
        .send()
        .await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);
    assert_eq!(
        res.body["data"],
        json!({"restored": [id], "skipped": [], "conflicts": []})
    );
    assert_eq!(read(&app, &ada, &id, "*").await["draftData"], english);
    let german = read(&app, &ada, &id, "de").await;
    assert_eq!(german["draftData"]["title"], "Hello");
    assert_eq!(german["_meta"]["fallbackLocales"]["title"], "en");
    app.stop().await;
}

async fn locale_mistakes_come_back_to_the_model_as_tool_errors(url: String) {
    let (app, model, ada, id) = start(&url, vec![]).await;
    model.push(vec![
        Answer::Calls(vec![
            (
                "g",
                "get_document",
                json!({"collection": "article", "id": id, "locale": "fr"}),
            ),
            (
                "u",
                "update_document",
                json!({"collection": "article", "id": id, "locale": "fr", "data": {"title": "Salut"}}),
            ),
            (
                "t1",
                "translate_document",
                json!({"collection": "article", "id": id, "from": "en", "to": "fr", "translations": {"title": "Salut"}}),
            ),
        ]),
        Answer::Calls(vec![
            (
                "t2",
                "translate_document",
                json!({"collection": "article", "id": id, "from": "en", "to": "de", "translations": {"views": 5}}),
            ),
            (
                "t3",
                "translate_document",
                json!({"collection": "article", "id": id, "from": "en", "to": "de", "translations": {
                    "seo": {"description": "Über", "noindex": true}
                }}),
            ),
            (
                "c",
                "create_document",
                json!({"collection": "article", "locale": "de", "data": {"title": "Nur Deutsch"}}),
            ),
        ]),
        Answer::Text(vec!["Sorry."], (1, 1)),
    ]);
    let events = chat(&app, &ada, "Translate into French").await;
    assert_eq!(done(&events)["finishReason"], "stop", "{events:?}");
    for call in ["g", "u", "t1"] {
        let r = result(&events, call);
        assert_eq!(r["ok"], false, "{r}");
        let error = r["result"]["error"].as_str().unwrap();
        assert!(error.contains("unknown locale \"fr\""), "{call}: {error}");
    }
    // A translation may not change shared values (a non-localized field, or the non-localized
    // parts of an object holding localized fields).
    for call in ["t2", "t3"] {
        let r = result(&events, call);
        assert_eq!(r["ok"], false, "{r}");
        assert!(
            r["result"]["error"]
                .as_str()
                .unwrap()
                .contains("shared by every locale"),
            "{r}"
        );
    }
    // A create in German stores German values only.
    let created = result(&events, "c");
    assert_eq!(created["ok"], true, "{created}");
    let new_id = created["result"]["document"]["id"].as_str().unwrap();
    assert_eq!(
        read(&app, &ada, new_id, "*").await["draftData"],
        json!({"title": {"de": "Nur Deutsch"}})
    );
    // Nothing of the refused calls was written.
    let doc = read(&app, &ada, &id, "*").await;
    assert_eq!(doc["_meta"]["revision"], 1);
    assert_eq!(doc["draftData"]["title"], json!({"en": "Hello"}));
    app.stop().await;
}

cms_store::both_engines!(
    a_turn_translates_a_document_and_undo_removes_only_the_translation,
    locale_mistakes_come_back_to_the_model_as_tool_errors,
);
