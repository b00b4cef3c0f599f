//! Localized documents through the admin (CONTRACT.md section 17), on an instance in English
//! and German: the localized tag at the field, the locale switcher that reloads the form and
//! saves in the chosen locale (the other locale kept), the note at a field served from the
//! fallback locale, the side-by-side view, the list's "missing in" marker, the choice kept
//! while navigating, a document created in the chosen locale, and the organization narrowing
//! its locales in its settings. Each step is checked against what the API then stores.

use axum::http::StatusCode;
use cms::core::schema::demo_schemas;
use serde_json::{Value, json};

use super::Ui;
use super::documents::{saved_id, see_value};
use crate::people_support::first_owner;
use crate::support::{Session, TestApp, config_for};

async fn bilingual_app(url: &str) -> TestApp {
    let mut config = config_for(url);
    config.locales.available = vec!["en".to_owned(), "de".to_owned()];
    TestApp::custom(config, |b| b.schemas(demo_schemas())).await
}

/// A page written in the default locale (English), its slug derived from `title`.
async fn create_page(app: &TestApp, who: &Session, title: &str, publish: bool) -> String {
    let slug = title.to_lowercase().replace(' ', "-");
    let res = app
        .post(
            "/api/documents",
            json!({"type": "page", "data": {"title": title, "slug": {"current": slug}}, "publish": publish}),
        )
        .cookie(who)
        .send()
        .await;
    assert_eq!(res.status, StatusCode::CREATED, "create: {}", res.body);
    res.body["data"]["id"].as_str().unwrap().to_owned()
}

async fn read(app: &TestApp, who: &Session, id: &str, locale: &str) -> Value {
    let res = app
        .get(&format!("/api/documents/{id}?locale={locale}"))
        .cookie(who)
        .send()
        .await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);
    res.body["data"].clone()
}

/// Whether `css` matches anything on the page now.
async fn present(ui: &Ui, css: &str) -> bool {
    ui.eval(
        "return document.querySelector(arguments[0]) !== null",
        vec![json!(css)],
    )
    .await
        == json!(true)
}

/// Waits until `css` matches nothing.
async fn gone(ui: &Ui, css: &str) {
    for _ in 0..400 {
        if !present(ui, css).await {
            return;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    panic!("{css} stayed on the page: {}", ui.main_text().await);
}

async fn an_editor_writes_and_publishes_a_page_in_german(url: String) {
    let app = bilingual_app(&url).await;
    let (ada, _) = first_owner(&app).await;
    let id = create_page(&app, &ada, "Hello", true).await;
    let ui = Ui::start(app, "l10n-page").await;
    ui.sign_in_as(&ada).await;

    // A type without localized fields reads the same in every locale: no locale bar.
    ui.open("/admin/documents/post/new").await;
    ui.control("Title").await;
    assert!(!present(&ui, ".locale-bar").await);
    assert!(!present(&ui, ".localized-badge").await);

    // In English the page is complete: the tag at Title (not at Slug), no missing note.
    ui.open(&format!("/admin/documents/page/{id}?locale=en"))
        .await;
    see_value(&ui, "Title", "Hello").await;
    let tag = ui
        .find(".field[data-field='title'] > .localized-badge")
        .await;
    assert_eq!(tag.text().await.unwrap(), "localized");
    ui.find("fieldset[data-field='body'] > legend > .localized-badge")
        .await;
    assert!(!present(&ui, ".field[data-field='slug'] .localized-badge").await);
    assert!(!present(&ui, ".locale-note").await);

    // German: the form reads the page again; Title has no German value and says so, showing
    // the English one.
    ui.control("Locale")
        .await
        .select_by_value("de")
        .await
        .unwrap();
    ui.see("Missing in de, showing en").await;
    ui.find(".field[data-field='title'] > .locale-note").await;
    see_value(&ui, "Title", "Hello").await;
    let at = ui.client().current_url().await.unwrap();
    assert_eq!(at.query(), Some("locale=de"), "{at}");
    ui.screenshot("german-missing").await;

    // Side by side: the English value beside the German field, read-only.
    let toggle = ui.control("Side by side").await;
    ui.press(&toggle).await;
    let reference = ui
        .find(".document-editor.comparing .localized-pair .locale-reference:not([hidden]) .locale-reference-value")
        .await;
    assert_eq!(reference.text().await.unwrap(), "Hello");
    let heading = ui
        .find(".localized-pair .locale-reference:not([hidden]) .locale-reference-label")
        .await;
    assert_eq!(heading.text().await.unwrap(), "English (en)");
    ui.screenshot("side-by-side").await;

    // The German title, published with the page.
    ui.fill("Title", "Hallo").await;
    ui.click("Publish").await;
    ui.see("Published.").await;
    // The form stays in German, now with a German value of its own.
    see_value(&ui, "Title", "Hallo").await;
    gone(&ui, ".field[data-field='title'] > .locale-note").await;
    ui.screenshot("german-published").await;

    let de = read(&ui.app, &ada, &id, "de").await;
    assert_eq!(de["publishedData"]["title"], "Hallo", "{de}");
    assert_eq!(de["_meta"]["locale"], "de");
    assert_eq!(de["_meta"]["fallbackLocales"], json!({}), "{de}");
    let en = read(&ui.app, &ada, &id, "en").await;
    assert_eq!(en["publishedData"]["title"], "Hello", "{en}");
    assert_eq!(en["draftData"]["title"], "Hello", "{en}");
    let all = read(&ui.app, &ada, &id, "*").await;
    assert_eq!(
        all["publishedData"]["title"],
        json!({"en": "Hello", "de": "Hallo"}),
        "{all}"
    );
    // The shared slug went back as it was; no other locale's value was copied.
    assert_eq!(all["publishedData"]["slug"], json!({"current": "hello"}));
    assert!(all["draftData"].get("body").is_none(), "{all}");

    // The choice follows the editor: the list, opened without a locale, is in German, and
    // marks the page that has no German title.
    let english_only = create_page(&ui.app, &ada, "Only English", false).await;
    ui.open("/admin/documents/page").await;
    ui.see("Only English").await;
    let chosen = ui.control("Locale").await.prop("value").await.unwrap();
    assert_eq!(chosen.as_deref(), Some("de"));
    ui.find(&format!("tr[data-id='{english_only}'] .missing-locale"))
        .await;
    ui.see("Missing in de").await;
    assert!(!present(&ui, &format!("tr[data-id='{id}'] .missing-locale")).await);
    ui.see("Hallo").await;
    ui.screenshot("list-de").await;

    // In English nothing is missing.
    ui.control("Locale")
        .await
        .select_by_value("en")
        .await
        .unwrap();
    ui.see("Hello").await;
    gone(&ui, ".missing-locale").await;

    // Back in German, a new page is created in German.
    ui.control("Locale")
        .await
        .select_by_value("de")
        .await
        .unwrap();
    ui.find(".missing-locale").await;
    ui.click("New").await;
    ui.arrive("/admin/documents/page/new").await;
    ui.fill("Title", "Neu").await;
    ui.click("Save draft").await;
    ui.see("Draft saved.").await;
    let new_id = saved_id(&ui, "page").await;
    let created = read(&ui.app, &ada, &new_id, "*").await;
    assert_eq!(
        created["draftData"]["title"],
        json!({"de": "Neu"}),
        "{created}"
    );

    // The organization narrows its locales in its settings: leaving the default out is
    // refused at the field, English alone is saved, and an empty field restores every locale.
    let org = ui.app.active_organization(&ada).await;
    ui.open("/admin/settings/organization").await;
    ui.fill("Locales", "de").await;
    ui.click("Save organization").await;
    ui.see("cannot be left out").await;
    ui.fill("Locales", "en").await;
    ui.click("Save organization").await;
    ui.see("The organization is saved.").await;
    let locales = |body: Value| body["data"].clone();
    let res = ui
        .app
        .get(&format!("/api/organizations/{org}"))
        .cookie(&ada)
        .send()
        .await;
    assert_eq!(locales(res.body)["locales"], json!(["en"]));
    let res = ui.app.get("/api/locales").cookie(&ada).send().await;
    assert_eq!(locales(res.body)["available"], json!(["en"]));
    ui.fill("Locales", "").await;
    ui.click("Save organization").await;
    // The first save's notice may still show: wait for what the API stores instead.
    let mut available = Value::Null;
    for _ in 0..200 {
        let res = ui.app.get("/api/locales").cookie(&ada).send().await;
        available = locales(res.body)["available"].clone();
        if available == json!(["en", "de"]) {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    assert_eq!(available, json!(["en", "de"]));
    ui.stop().await;
}

crate::admin_scenarios!(an_editor_writes_and_publishes_a_page_in_german);
