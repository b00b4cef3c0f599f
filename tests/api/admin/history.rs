//! The history panel (issue 32, point 4): changed words marked inline, references shown by
//! their documents' titles, any two versions compared, and restoring behind a confirmation
//! that says what happens to unsaved input.

use serde_json::{Value, json};

use super::Ui;
use super::documents::{create, demo_app, fetch, see_value, update};
use crate::people_support::first_owner;

fn paragraph(text: &str) -> Value {
    json!([{"_type": "block", "_key": "b1", "style": "normal", "markDefs": [],
        "children": [{"_type": "span", "_key": "s1", "text": text, "marks": []}]}])
}

/// The comparison's rows: field -> [badge, removed texts joined by |, added texts likewise].
async fn diff_rows(ui: &Ui) -> Value {
    ui.eval(
        "const all = (r, css) => [...r.querySelectorAll(css)].map(e => e.textContent).join('|');
         return Object.fromEntries([...document.querySelectorAll('table.diff tbody tr')].map(r => [r.dataset.field, [r.querySelector('.badge').textContent, all(r, 'td del'), all(r, 'td ins')]]))",
        vec![],
    )
    .await
}

/// Chooses `value` in the select labelled `label`, as a person would (a change event).
async fn choose(ui: &Ui, label: &str, value: &str) {
    let select = ui.control(label).await;
    ui.eval(
        "arguments[0].value = arguments[1]; arguments[0].dispatchEvent(new Event('change'));",
        vec![serde_json::to_value(&select).unwrap(), json!(value)],
    )
    .await;
}

/// The open dialog's text, waiting for one to open.
async fn dialog_text(ui: &Ui) -> String {
    ui.find("dialog[open]").await.text().await.unwrap()
}

async fn history_marks_words_compares_and_restores(url: String) {
    let app = demo_app(&url).await;
    let (ada, _) = first_owner(&app).await;
    let lovelace = create(&app, &ada, "author", json!({"name": "Ada Lovelace"}), true).await;
    let hopper = create(&app, &ada, "author", json!({"name": "Grace Hopper"}), true).await;
    let doc = create(
        &app,
        &ada,
        "post",
        json!({"title": "The quick brown fox", "body": paragraph("Hello world"),
            "author": {"_ref": lovelace["id"]}, "views": 1}),
        false,
    )
    .await;
    let id = doc["id"].as_str().unwrap().to_string();
    // Version 2 changes one word; version 3 (the current draft) more, and the author.
    update(
        &app,
        &ada,
        &id,
        json!({"title": "The quick red fox", "body": paragraph("Hello world"),
            "author": {"_ref": lovelace["id"]}, "views": 2}),
    )
    .await;
    update(
        &app,
        &ada,
        &id,
        json!({"title": "The slow red fox", "body": paragraph("Hello brave world"),
            "author": {"_ref": hopper["id"]}, "views": 3}),
    )
    .await;

    let ui = Ui::start(app, "history").await;
    ui.client().set_window_size(1400, 900).await.unwrap();
    ui.sign_in_as(&ada).await;
    ui.open(&format!("/admin/documents/post/{id}")).await;
    ui.click("History").await;
    // One numbering, explained: versions count every save, the header's revision draft writes.
    ui.see("3 versions").await;
    ui.see("The revision in the header counts changes to the draft only")
        .await;

    // A version against the current draft (the default): words marked, the author by name,
    // a number whole.
    ui.click("Version 1 · Draft saved").await;
    ui.see("Version 1 compared with the current draft").await;
    let rows = diff_rows(&ui).await;
    assert_eq!(
        rows["title"],
        json!(["Changed", "quick brown", "slow red"]),
        "{rows}"
    );
    assert_eq!(rows["body"], json!(["Changed", "", "brave "]), "{rows}");
    assert_eq!(
        rows["author"],
        json!(["Changed", "Ada Lovelace", "Grace Hopper"]),
        "{rows}"
    );
    assert_eq!(rows["views"], json!(["Changed", "1", "3"]), "{rows}");
    // The unchanged words stay as plain text around the marks.
    let title_text = ui
        .eval(
            "return document.querySelector('table.diff tr[data-field=title] td').textContent",
            vec![],
        )
        .await;
    assert_eq!(title_text, json!("The quick brownslow red fox"));
    ui.screenshot("version-vs-draft").await;

    // Two chosen versions: only what changed between them.
    choose(&ui, "With", "2").await;
    ui.see("Version 1 compared with version 2").await;
    let rows = diff_rows(&ui).await;
    assert_eq!(
        rows,
        json!({"title": ["Changed", "brown", "red"], "views": ["Changed", "1", "2"]})
    );
    ui.screenshot("two-versions").await;
    // On a narrow phone the comparison reflows: nothing in the page scrolls sideways.
    ui.client().set_window_size(320, 800).await.unwrap();
    let wide = ui.sideways_overflow().await;
    assert_eq!(wide[0], json!(0), "the page overflows at 320 px: {wide}");
    ui.screenshot("narrow").await;
    ui.client().set_window_size(1400, 900).await.unwrap();

    // Restore with unsaved input: the dialog says it will be lost; cancelling keeps it all.
    ui.fill("Title", "Typed but not saved").await;
    ui.click("Restore version 1").await;
    let text = dialog_text(&ui).await;
    assert!(text.contains("Restore version 1?"), "{text}");
    assert!(
        text.contains("The draft becomes what version 1 holds"),
        "{text}"
    );
    assert!(
        text.contains("Your unsaved changes in this form will be lost."),
        "{text}"
    );
    ui.screenshot("restore-dialog").await;
    let cancel = ui.find("dialog[open] button[data-value='false']").await;
    ui.press(&cancel).await;
    see_value(&ui, "Title", "Typed but not saved").await;
    let (_, stored) = fetch(&ui.app, &ada, &id).await;
    assert_eq!(stored["draftData"]["title"], "The slow red fox");
    assert_eq!(stored["_meta"]["revision"], 3);

    // Confirmed: the draft is version 1 again, the form shows it.
    ui.click("Restore version 1").await;
    ui.find("dialog[open]").await;
    ui.click("Restore").await;
    ui.see("Version 1 restored into the draft.").await;
    see_value(&ui, "Title", "The quick brown fox").await;
    let (_, stored) = fetch(&ui.app, &ada, &id).await;
    assert_eq!(stored["draftData"]["title"], "The quick brown fox");
    assert_eq!(stored["draftData"]["author"]["_ref"], lovelace["id"]);

    // With nothing typed, the dialog has no warning about unsaved input.
    ui.see("4 versions").await;
    ui.click("Version 2 · Draft saved").await;
    ui.see("Version 2 compared with the current draft").await;
    ui.click("Restore version 2").await;
    let text = dialog_text(&ui).await;
    assert!(
        text.contains("The draft becomes what version 2 holds"),
        "{text}"
    );
    assert!(!text.contains("unsaved"), "{text}");
    let cancel = ui.find("dialog[open] button[data-value='false']").await;
    ui.press(&cancel).await;
    ui.stop().await;
}

crate::admin_scenarios!(history_marks_words_compares_and_restores);
