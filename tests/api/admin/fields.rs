//! The edit form's fields as an editor meets them in a first hour (issue 32 point 8): a
//! reference chosen from a combobox (recent documents before typing, arrow keys and Enter,
//! Escape, the focus kept, "Create new …" in a dialog), tags as chips, a singleton opened
//! without writing any history, and the icon every page links.

use axum::http::{Method, StatusCode};
use cms::core::schema::demo_schemas;
use fantoccini::key::Key;
use serde_json::{Value, json};

use super::Ui;
use super::documents::saved_id;
use crate::builtin_events::Log;
use crate::people_support::first_owner;
use crate::support::{Session, TestApp, config_for};

async fn demo_app(url: &str) -> TestApp {
    TestApp::custom(config_for(url), |b| b.schemas(demo_schemas())).await
}

async fn author(app: &TestApp, who: &Session, name: &str) -> String {
    let res = app
        .post(
            "/api/documents",
            json!({"type": "author", "data": {"name": name}}),
        )
        .cookie(who)
        .send()
        .await;
    assert_eq!(res.status, StatusCode::CREATED, "{}", res.body);
    // Each one updated later than the one before: the recent list is newest first.
    app.clock.advance_millis(1000);
    res.body["data"]["id"].as_str().unwrap().to_string()
}

async fn draft(app: &TestApp, who: &Session, id: &str) -> Value {
    let res = app
        .get(&format!("/api/documents/{id}"))
        .cookie(who)
        .send()
        .await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);
    res.body["data"]["draftData"].clone()
}

/// The combobox's state: open or not, the options' texts, the active option's text, and
/// whether the focus is in the input.
const COMBOBOX: &str =
    "const input = document.querySelector('[data-field=author] [role=combobox]');
    const list = document.getElementById(input.getAttribute('aria-controls'));
    const active = input.getAttribute('aria-activedescendant');
    return {
      expanded: input.getAttribute('aria-expanded'),
      shown: !list.hidden,
      options: [...list.querySelectorAll('[role=option]')].map(o => o.textContent),
      active: active ? document.getElementById(active).textContent : null,
      selected: [...list.querySelectorAll('[aria-selected=true]')].map(o => o.textContent),
      focused: document.activeElement === input,
      chosen: document.querySelector('[data-field=author] .ref-chosen').textContent,
    };";

/// Waits until the combobox's state has `key` equal to `want`; returns the whole state.
async fn combobox_until(ui: &Ui, key: &str, want: Value) -> Value {
    for _ in 0..400 {
        let state = ui.eval(COMBOBOX, vec![]).await;
        if state[key] == want {
            return state;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    panic!(
        "the combobox's {key} never became {want}: {}",
        ui.eval(COMBOBOX, vec![]).await
    );
}

/// Waits until the combobox's chosen value reads `text`.
async fn combobox_until_chosen(ui: &Ui, text: &str) -> Value {
    for _ in 0..400 {
        let state = ui.eval(COMBOBOX, vec![]).await;
        if state["chosen"].as_str().is_some_and(|c| c.contains(text)) {
            return state;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    panic!(
        "the combobox never chose {text}: {}",
        ui.eval(COMBOBOX, vec![]).await
    );
}

fn key(k: Key) -> String {
    char::from(k).to_string()
}

async fn a_reference_is_chosen_from_a_combobox(url: String) {
    let app = demo_app(&url).await;
    let (ada, _) = first_owner(&app).await;
    author(&app, &ada, "Ada Lovelace").await;
    let grace = author(&app, &ada, "Grace Hopper").await;
    author(&app, &ada, "Alan Turing").await;
    let ui = Ui::start(app, "fields-reference").await;
    ui.sign_in_as(&ada).await;
    ui.open("/admin/documents/post/new").await;
    ui.fill("Title", "Pioneers").await;

    // Focus alone lists the recently updated authors, newest first, before any typing.
    let input = ui.control("Author").await;
    assert_eq!(
        input.attr("role").await.unwrap().as_deref(),
        Some("combobox")
    );
    ui.press(&input).await;
    let state = combobox_until(
        &ui,
        "options",
        json!([
            "Alan Turing",
            "Grace Hopper",
            "Ada Lovelace",
            "Create new Author…"
        ]),
    )
    .await;
    assert_eq!(state["expanded"], "true");
    assert_eq!(state["active"], Value::Null);
    ui.screenshot("recent").await;

    // Arrow keys move the active option; Enter chooses it and keeps the focus in the input.
    input
        .send_keys(&format!(
            "{}{}{}",
            key(Key::Down),
            key(Key::Down),
            key(Key::Down)
        ))
        .await
        .unwrap();
    combobox_until(&ui, "active", json!("Ada Lovelace")).await;
    input.send_keys(&key(Key::Up)).await.unwrap();
    let state = combobox_until(&ui, "active", json!("Grace Hopper")).await;
    assert_eq!(state["selected"], json!(["Grace Hopper"]));
    input.send_keys(&key(Key::Enter)).await.unwrap();
    let state = combobox_until(&ui, "expanded", json!("false")).await;
    assert!(
        state["chosen"].as_str().unwrap().contains("Grace Hopper"),
        "{state}"
    );
    assert_eq!(state["focused"], true, "the focus stays in the input");
    assert_eq!(state["shown"], false);
    // Enter chose; it did not submit the form.
    assert!(
        ui.client()
            .current_url()
            .await
            .unwrap()
            .path()
            .ends_with("/new")
    );
    ui.screenshot("chosen").await;

    // Typing searches; Escape closes the list and leaves the focus where it was.
    input.send_keys("lov").await.unwrap();
    combobox_until(
        &ui,
        "options",
        json!(["Ada Lovelace", "Create new Author…"]),
    )
    .await;
    input.send_keys(&key(Key::Escape)).await.unwrap();
    let state = combobox_until(&ui, "expanded", json!("false")).await;
    assert_eq!(state["focused"], true);
    assert!(state["chosen"].as_str().unwrap().contains("Grace Hopper"));
    ui.click("Save draft").await;
    ui.see("Draft saved.").await;
    let post = saved_id(&ui, "post").await;
    assert_eq!(
        draft(&ui.app, &ada, &post).await["author"],
        json!({"_ref": grace})
    );

    // "Create new Author…": a dialog with the author's required field, filled with what was
    // typed; the new author is created and chosen, and the focus comes back.
    let input = ui.control("Author").await;
    input.clear().await.unwrap();
    input.send_keys("Barbara Liskov").await.unwrap();
    combobox_until(&ui, "options", json!(["Create new Author…"])).await;
    input.send_keys(&key(Key::Down)).await.unwrap();
    combobox_until(&ui, "active", json!("Create new Author…")).await;
    input.send_keys(&key(Key::Enter)).await.unwrap();
    ui.find("dialog[open]").await;
    let name = ui.control("Name").await;
    assert_eq!(
        name.prop("value").await.unwrap().as_deref(),
        Some("Barbara Liskov")
    );
    ui.screenshot("create-dialog").await;
    // Refused without its required name: the dialog stays, saying why.
    name.clear().await.unwrap();
    ui.click("Create Author").await;
    ui.find("dialog[open] .field-error:not([hidden])").await;
    ui.fill("Name", "Barbara Liskov").await;
    ui.click("Create Author").await;
    // The choice lands when the create request has answered; the focus is back by then.
    let state = combobox_until_chosen(&ui, "Barbara Liskov").await;
    assert_eq!(state["focused"], json!(true), "{state}");
    assert_eq!(
        ui.eval(
            "return document.querySelectorAll('dialog[open]').length",
            vec![]
        )
        .await,
        json!(0)
    );
    let res = ui
        .app
        .get("/api/documents?type=author&limit=10")
        .cookie(&ada)
        .send()
        .await;
    let barbara = res.body["data"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["draftData"]["name"] == "Barbara Liskov")
        .unwrap_or_else(|| panic!("no new author: {}", res.body))["id"]
        .clone();
    ui.click("Save draft").await;
    ui.see("Draft saved.").await;
    let stored = draft(&ui.app, &ada, &post).await;
    assert_eq!(stored["author"], json!({"_ref": barbara}));
    ui.screenshot("created").await;
    ui.stop().await;
}

/// The chips' texts, in order.
const CHIPS: &str =
    "return [...document.querySelectorAll('[data-field=tags] .chip-text')].map(c => c.textContent)";

async fn chips_until(ui: &Ui, want: Value) {
    for _ in 0..400 {
        if ui.eval(CHIPS, vec![]).await == want {
            return;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    panic!(
        "the chips never were {want}: {}",
        ui.eval(CHIPS, vec![]).await
    );
}

async fn tags_are_chips(url: String) {
    let app = demo_app(&url).await;
    let (ada, _) = first_owner(&app).await;
    let ui = Ui::start(app, "fields-tags").await;
    ui.sign_in_as(&ada).await;
    ui.open("/admin/documents/post/new").await;
    ui.fill("Title", "Tagged").await;

    // One input: Enter or a comma adds a chip.
    let input = ui.control("Tags").await;
    input
        .send_keys(&format!("rust{}cms,web,", key(Key::Enter)))
        .await
        .unwrap();
    chips_until(&ui, json!(["rust", "cms", "web"])).await;
    assert_eq!(input.prop("value").await.unwrap().as_deref(), Some(""));
    ui.screenshot("chips").await;
    // Each chip has its own remove button, named after it.
    let remove = ui.find("button[aria-label='Remove tag cms']").await;
    ui.press(&remove).await;
    chips_until(&ui, json!(["rust", "web"])).await;
    // Backspace in the empty input removes the last chip.
    let input = ui.control("Tags").await;
    input.send_keys(&key(Key::Backspace)).await.unwrap();
    chips_until(&ui, json!(["rust"])).await;
    input
        .send_keys(&format!("db{}", key(Key::Enter)))
        .await
        .unwrap();
    chips_until(&ui, json!(["rust", "db"])).await;
    // Enter added a tag; it did not submit the form.
    assert!(
        ui.client()
            .current_url()
            .await
            .unwrap()
            .path()
            .ends_with("/new")
    );
    ui.click("Save draft").await;
    ui.see("Draft saved.").await;
    let id = saved_id(&ui, "post").await;
    // The stored value is the array of strings it always was.
    assert_eq!(
        draft(&ui.app, &ada, &id).await["tags"],
        json!(["rust", "db"])
    );

    // Opened again, the same chips.
    ui.open(&format!("/admin/documents/post/{id}")).await;
    chips_until(&ui, json!(["rust", "db"])).await;
    ui.stop().await;
}

async fn opening_a_singleton_writes_nothing(url: String) {
    let app = demo_app(&url).await;
    let (ada, _) = first_owner(&app).await;
    let org = app.active_organization(&ada).await;
    let mut log = Log::from_now(&url, &org).await;
    let ui = Ui::start(app, "fields-singleton").await;
    ui.sign_in_as(&ada).await;
    ui.client()
        .goto(&ui.url("/admin/documents/siteSettings"))
        .await
        .unwrap();
    let id = saved_id(&ui, "siteSettings").await;
    ui.ready().await;
    ui.control("Site name").await;
    // Opened (twice): no version, no event.
    ui.open(&format!("/admin/documents/siteSettings/{id}"))
        .await;
    let versions = format!("/api/documents/{id}/versions");
    let res = ui.app.get(&versions).cookie(&ada).send().await;
    assert_eq!(res.body["total"], 0, "{}", res.body);
    log.nothing_new().await;
    ui.fill("Site name", "My site").await;
    ui.click("Save draft").await;
    ui.see("Draft saved.").await;
    let res = ui.app.get(&versions).cookie(&ada).send().await;
    assert_eq!(res.body["total"], 1, "{}", res.body);
    assert_eq!(log.next().await.len(), 1, "one event: the save");
    ui.stop().await;
}

async fn every_page_links_an_icon_that_loads(url: String) {
    let app = demo_app(&url).await;
    let (ada, _) = first_owner(&app).await;
    let ui = Ui::start(app, "fields-icon").await;
    ui.sign_in_as(&ada).await;
    for path in ["/admin/sign-in", "/admin"] {
        ui.open(path).await;
        let href = ui
            .eval(
                "const link = document.querySelector('link[rel=icon]'); return link && new URL(link.href).pathname",
                vec![],
            )
            .await;
        let href = href
            .as_str()
            .unwrap_or_else(|| panic!("{path} links no icon"));
        let res = ui.app.get(href).send().await;
        assert_eq!(res.status, StatusCode::OK, "{path}: {href}");
        assert_eq!(res.header("content-type"), Some("image/svg+xml"));
    }
    let res = ui.app.req(Method::GET, "/favicon.ico").send().await;
    assert_eq!(res.status, StatusCode::TEMPORARY_REDIRECT);
    ui.stop().await;
}

crate::admin_scenarios!(
    a_reference_is_chosen_from_a_combobox,
    tags_are_chips,
    opening_a_singleton_writes_nothing,
    every_page_links_an_icon_that_loads,
);
