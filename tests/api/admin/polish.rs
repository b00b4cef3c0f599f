//! Polish (issue 30, point 6): the command palette (Ctrl+K, or the top bar's button) runs
//! actions and finds documents by title, as a combobox the keyboard drives; the admin follows
//! the system's dark preference; times read as "3 minutes ago" with the exact moment in their
//! title; and empty lists say what to do, with the action that does it.

use std::time::Duration;

use fantoccini::actions::{InputSource, KeyAction, KeyActions};
use fantoccini::key::Key;
use serde_json::{Value, json};

use super::Ui;
use super::assets::{TEAL, png};
use super::documents::{create, demo_app, fetch, saved_id};
use crate::browser::Browser;
use crate::people_support::first_owner;

/// Presses Ctrl+K (the palette's shortcut) wherever the focus is.
async fn control_k(ui: &Ui) {
    let keys = KeyActions::new("keyboard".into())
        .then(KeyAction::Down {
            value: Key::Control.into(),
        })
        .then(KeyAction::Down { value: 'k' })
        .then(KeyAction::Up { value: 'k' })
        .then(KeyAction::Up {
            value: Key::Control.into(),
        });
    ui.client().perform_actions(keys).await.unwrap();
}

/// Sends `keys` to the focused element (the palette's search box while it is open).
async fn type_keys(ui: &Ui, keys: &str) {
    ui.client()
        .active_element()
        .await
        .unwrap()
        .send_keys(keys)
        .await
        .unwrap();
}

/// The palette as a screen reader meets it: open, the focus in its combobox, the options'
/// labels, the active option (aria-activedescendant) and how many are marked selected.
const PALETTE: &str = "const d = document.querySelector('dialog.palette[open]');
  if (!d) return null;
  const input = d.querySelector('[role=combobox]');
  const active = input.getAttribute('aria-activedescendant');
  const label = (o) => o.querySelector('.palette-label').textContent;
  return {
    focused: document.activeElement === input,
    expanded: input.getAttribute('aria-expanded'),
    controls: document.getElementById(input.getAttribute('aria-controls'))?.getAttribute('role') ?? null,
    options: [...d.querySelectorAll('[role=option]')].map(label),
    active: active ? label(document.getElementById(active)) : null,
    selected: d.querySelectorAll('[role=option][aria-selected=true]').length,
  };";

/// Waits until the palette's state satisfies `done`, and returns it.
async fn palette_until(ui: &Ui, done: impl Fn(&Value) -> bool) -> Value {
    let mut seen = Value::Null;
    for _ in 0..300 {
        seen = ui.eval(PALETTE, vec![]).await;
        if done(&seen) {
            return seen;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("the palette never got there: {seen}");
}

fn lists(state: &Value, label: &str) -> bool {
    state["options"]
        .as_array()
        .is_some_and(|o| o.iter().any(|l| l == label))
}

/// The name (or class, for the palette button) of the focused element.
async fn focused(ui: &Ui) -> Value {
    ui.eval(
        "const e = document.activeElement; return e.name || e.className;",
        vec![],
    )
    .await
}

async fn the_palette_runs_actions_and_finds_documents(url: String) {
    let app = demo_app(&url).await;
    let (ada, _) = first_owner(&app).await;
    let zebra = create(
        &app,
        &ada,
        "post",
        json!({"title": "Zebra crossing notes"}),
        false,
    )
    .await;
    let zebra = zebra["id"].as_str().unwrap().to_string();
    create(&app, &ada, "author", json!({"name": "Ada Lovelace"}), false).await;
    let ui = Ui::start(app, "palette").await;
    ui.sign_in_as(&ada).await;
    ui.open("/admin/documents/post").await;

    // The top bar says how to open it.
    let shortcut = ui
        .eval(
            "return document.querySelector('.palette-button').getAttribute('aria-keyshortcuts')",
            vec![],
        )
        .await;
    assert_eq!(shortcut, json!("Control+K"));

    // Ctrl+K from the list's search box: the actions, the first active, the focus in the box.
    ui.control("Search").await.click().await.unwrap();
    control_k(&ui).await;
    let state = palette_until(&ui, |s| !s.is_null()).await;
    assert_eq!(state["focused"], json!(true), "{state}");
    assert_eq!(state["expanded"], json!("true"), "{state}");
    assert_eq!(state["controls"], json!("listbox"), "{state}");
    for action in [
        "New Post",
        "New Author",
        "Go to Post",
        "Go to Assets",
        "Go to Settings",
    ] {
        assert!(lists(&state, action), "{action} in {state}");
    }
    assert!(!lists(&state, "New Site settings"), "{state}");
    assert_eq!(state["active"], state["options"][0], "{state}");
    assert_eq!(state["selected"], json!(1), "{state}");
    ui.screenshot("open").await;

    // Arrow keys move the active option, wrapping at the ends; the focus stays in the box.
    type_keys(&ui, &Key::Down.to_string()).await;
    let state = palette_until(&ui, |s| s["active"] == s["options"][1]).await;
    assert_eq!(state["focused"], json!(true));
    type_keys(&ui, &format!("{}{}", Key::Up, Key::Up)).await;
    let last = state["options"].as_array().unwrap().last().unwrap().clone();
    palette_until(&ui, |s| s["active"] == last).await;

    // Escape closes it and gives the focus back to where it was.
    type_keys(&ui, &Key::Escape.to_string()).await;
    palette_until(&ui, Value::is_null).await;
    assert_eq!(focused(&ui).await, json!("q"));

    // A document's title, typed: its match is offered across the types, and Enter opens it.
    control_k(&ui).await;
    palette_until(&ui, |s| !s.is_null()).await;
    type_keys(&ui, "zebra cross").await;
    let state = palette_until(&ui, |s| lists(s, "Zebra crossing notes")).await;
    assert_eq!(state["active"], json!("Zebra crossing notes"), "{state}");
    assert!(!lists(&state, "Ada Lovelace"), "{state}");
    ui.screenshot("document").await;
    type_keys(&ui, &Key::Enter.to_string()).await;
    ui.arrive(&format!("/admin/documents/post/{zebra}")).await;

    // On an edit page with nothing to save, Save is not offered; Publish is (never published).
    control_k(&ui).await;
    let state = palette_until(&ui, |s| !s.is_null()).await;
    assert!(!lists(&state, "Save draft"), "{state}");
    assert!(lists(&state, "Publish"), "{state}");
    type_keys(&ui, &Key::Escape.to_string()).await;
    palette_until(&ui, Value::is_null).await;

    // "New post" from the palette opens a new post's form, where it saves the draft.
    control_k(&ui).await;
    palette_until(&ui, |s| !s.is_null()).await;
    type_keys(&ui, "new post").await;
    palette_until(&ui, |s| s["active"] == json!("New Post")).await;
    type_keys(&ui, &Key::Enter.to_string()).await;
    ui.arrive("/admin/documents/post/new").await;
    ui.see("New Post").await;
    ui.fill("Title", "Saved from the palette").await;
    control_k(&ui).await;
    palette_until(&ui, |s| lists(s, "Save draft")).await;
    type_keys(&ui, "save").await;
    palette_until(&ui, |s| s["active"] == json!("Save draft")).await;
    type_keys(&ui, &Key::Enter.to_string()).await;
    ui.see("Draft saved.").await;
    let id = saved_id(&ui, "post").await;
    let (_, stored) = fetch(&ui.app, &ada, &id).await;
    assert_eq!(stored["draftData"]["title"], "Saved from the palette");
    // After the command, the focus is back in the form.
    assert_eq!(focused(&ui).await, json!("title"));

    // The top bar's button, for a pointer: opens it; Escape gives the focus back to it; an
    // option clicked runs.
    let button = ui.find(".palette-button").await;
    ui.press(&button).await;
    palette_until(&ui, |s| !s.is_null()).await;
    type_keys(&ui, &Key::Escape.to_string()).await;
    palette_until(&ui, Value::is_null).await;
    assert_eq!(focused(&ui).await, json!("palette-button"));

    // On a phone, open, it fits the window.
    ui.client().set_window_size(320, 700).await.unwrap();
    ui.open("/admin").await;
    let button = ui.find(".palette-button").await;
    ui.press(&button).await;
    palette_until(&ui, |s| !s.is_null()).await;
    let wide = ui.sideways_overflow().await;
    assert_eq!(wide[0], json!(0), "the palette overflows at 320 px: {wide}");
    ui.screenshot("phone").await;
    ui.click("Go to Assets").await;
    ui.arrive("/admin/assets").await;
    ui.stop().await;
}

/// The relative luminance (0 black, 1 white) of an element's computed background.
async fn background_luminance(ui: &Ui, css: &str) -> f64 {
    ui.eval(
        "const [r, g, b] = getComputedStyle(document.querySelector(arguments[0])).backgroundColor.match(/\\d+(\\.\\d+)?/g).map(Number);
         const lin = (c) => { c /= 255; return c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4; };
         return 0.2126 * lin(r) + 0.7152 * lin(g) + 0.0722 * lin(b);",
        vec![json!(css)],
    )
    .await
    .as_f64()
    .unwrap()
}

async fn the_admin_follows_the_systems_dark_preference(url: String) {
    let app = demo_app(&url).await;
    let (ada, _) = first_owner(&app).await;
    let doc = create(
        &app,
        &ada,
        "post",
        json!({"title": "In both lights"}),
        false,
    )
    .await;
    let id = doc["id"].as_str().unwrap().to_string();
    let mut ui = Ui::start(app, "dark-mode").await;
    ui.sign_in_as(&ada).await;
    ui.open(&format!("/admin/documents/post/{id}")).await;
    let prefers = "return matchMedia('(prefers-color-scheme: dark)').matches";
    assert_eq!(ui.eval(prefers, vec![]).await, json!(false));
    let light = background_luminance(&ui, "body").await;
    assert!(light > 0.8, "the light page is {light}");
    ui.screenshot("light").await;

    let previous = ui.swap_browser(Browser::start_dark().await);
    previous.stop().await;
    ui.client().set_window_size(1280, 900).await.unwrap();
    ui.sign_in_as(&ada).await;
    ui.open(&format!("/admin/documents/post/{id}")).await;
    assert_eq!(ui.eval(prefers, vec![]).await, json!(true));
    let dark = background_luminance(&ui, "body").await;
    assert!(dark < 0.2, "the dark page is {dark}");
    // Panels and fields darken too (no white box left on the dark page), and the text is light.
    for part in [".topbar", "input[name=title]"] {
        let l = background_luminance(&ui, part).await;
        assert!(l < 0.2, "{part} is {l} in the dark");
    }
    let text = ui
        .eval(
            "const [r, g, b] = getComputedStyle(document.body).color.match(/\\d+/g).map(Number); return (r + g + b) / 3;",
            vec![],
        )
        .await;
    assert!(text.as_f64().unwrap() > 180.0, "the text is {text}");
    ui.screenshot("dark").await;
    ui.open("/admin/documents/post").await;
    ui.screenshot("dark-list").await;
    ui.stop().await;
}

async fn times_read_relative_with_the_moment_in_a_title(url: String) {
    let app = demo_app(&url).await;
    let (ada, _) = first_owner(&app).await;
    let doc = create(&app, &ada, "post", json!({"title": "Timed"}), false).await;
    let id = doc["id"].as_str().unwrap().to_string();
    let ui = Ui::start(app, "relative-time").await;
    ui.sign_in_as(&ada).await;

    // The function itself, against a fixed "now".
    let said = ui
        .eval(
            "const m = await import(document.body.dataset.assets + '/js/dom.js');
             const now = new Date(2026, 2, 10, 15, 0);
             const at = (...a) => new Date(...a).toISOString();
             return [
               m.relativeTime(at(2026, 2, 10, 14, 59, 50), now),
               m.relativeTime(at(2026, 2, 10, 14, 57), now),
               m.relativeTime(at(2026, 2, 10, 12, 0), now),
               m.relativeTime(at(2026, 2, 9, 9, 0), now),
               m.relativeTime(at(2026, 2, 7, 9, 0), now),
               m.relativeTime(at(2026, 2, 2, 9, 0), now),
               m.relativeTime(at(2025, 11, 24, 9, 0), now),
               m.relativeTime(at(2026, 2, 11, 9, 0), now),
             ];",
            vec![],
        )
        .await;
    assert_eq!(
        said,
        json!([
            "just now",
            "3 minutes ago",
            "3 hours ago",
            "yesterday",
            "3 days ago",
            "on March 2",
            "on December 24, 2025",
            "tomorrow"
        ])
    );

    // In the list: a <time> with the instant, the exact moment as its title.
    ui.open("/admin/documents/post").await;
    let cell = ui
        .eval(
            "const t = document.querySelector(`tr[data-id='${arguments[0]}'] td[data-column='_updatedAt'] time`);
             return t && [Date.parse(t.dateTime), t.title, t.textContent];",
            vec![json!(id)],
        )
        .await;
    let (_, stored) = fetch(&ui.app, &ada, &id).await;
    let updated =
        chrono::DateTime::parse_from_rfc3339(stored["updatedAt"].as_str().unwrap()).unwrap();
    assert_eq!(cell[0], json!(updated.timestamp_millis()), "{cell}");
    let (title, text) = (cell[1].as_str().unwrap(), cell[2].as_str().unwrap());
    assert!(title.contains(&updated.format("%Y").to_string()), "{cell}");
    assert_ne!(title, text);
    assert!(
        ["ago", "just now", "yesterday", "on ", "in "]
            .iter()
            .any(|w| text.contains(w)),
        "{cell}"
    );
    // The edit page's header too.
    ui.open(&format!("/admin/documents/post/{id}")).await;
    let header = ui
        .eval(
            "const t = document.querySelector('.document-meta time'); return t && [t.title, t.textContent];",
            vec![],
        )
        .await;
    assert!(
        header[0]
            .as_str()
            .unwrap()
            .contains(&updated.format("%Y").to_string()),
        "{header}"
    );
    ui.see(&format!("Updated {}", header[1].as_str().unwrap()))
        .await;
    ui.stop().await;
}

async fn empty_lists_say_what_to_do(url: String) {
    let app = demo_app(&url).await;
    let (ada, _) = first_owner(&app).await;
    let picked = app.data_dir().join("first.png");
    std::fs::create_dir_all(app.data_dir()).unwrap();
    std::fs::write(&picked, png(3, 2, TEAL)).unwrap();
    let ui = Ui::start(app, "empty-states").await;
    ui.sign_in_as(&ada).await;

    // No posts: say so, and create the first.
    ui.open("/admin/documents/post").await;
    ui.see("No posts yet.").await;
    ui.screenshot("list").await;
    ui.click("Create the first one").await;
    ui.arrive("/admin/documents/post/new").await;
    // A search that finds nothing: say so, and clear it.
    ui.open("/admin/documents/post?q=nothing").await;
    ui.see("No posts match.").await;
    ui.click("Clear the search").await;
    ui.see("No posts yet.").await;
    let search = ui.control("Search").await.prop("value").await.unwrap();
    assert_eq!(search.as_deref(), Some(""));
    assert!(
        !ui.client()
            .current_url()
            .await
            .unwrap()
            .as_str()
            .contains("q=")
    );

    // No files: drop them or choose them, right where the grid would be.
    ui.open("/admin/assets").await;
    ui.see("No files yet.").await;
    ui.see("Drop images here or choose files.").await;
    ui.screenshot("assets").await;
    let input = ui.find(".asset-empty input[type=file]").await;
    input.send_keys(picked.to_str().unwrap()).await.unwrap();
    ui.find(".asset-grid .asset-card").await;
    ui.see("1 asset").await;
    let empty = ui
        .eval(
            "return document.querySelector('.asset-empty').textContent",
            vec![],
        )
        .await;
    assert_eq!(empty, json!(""));

    // No API key: what one is for, and the way to the form.
    ui.open("/admin/settings/api-keys").await;
    ui.see("No keys yet. A key lets").await;
    ui.click("Create a key").await;
    assert_eq!(focused(&ui).await, json!("name"));

    // Alone in the organization: the way to the invitation form.
    ui.open("/admin/settings/members").await;
    ui.see("You are the only member so far.").await;
    ui.click("Invite people").await;
    assert_eq!(focused(&ui).await, json!("email"));

    // Home, with nothing edited yet, points at the New buttons.
    ui.open("/admin").await;
    ui.see("Nothing has been edited yet: start with one of the “New” buttons above.")
        .await;
    ui.stop().await;
}

crate::admin_scenarios!(
    the_palette_runs_actions_and_finds_documents,
    the_admin_follows_the_systems_dark_preference,
    times_read_relative_with_the_moment_in_a_title,
    empty_lists_say_what_to_do,
);
