//! Portable Text survives the admin: a post seeded through the API with marks, a link whose
//! markDef carries a key the admin does not know, a nested bulleted list, a custom `callout`
//! block the admin does not render and unknown keys on a block and a span is edited the way a
//! person edits it (click, select a word with the keyboard, type; then append a sentence).
//! After each save the stored draft must equal the seed with only that text changed: the whole
//! JSON is compared, so any dropped mark, markDef, key or block fails.

use axum::http::StatusCode;
use cms::core::schema::demo_schemas;
use fantoccini::key::Key;
use serde_json::{Value, json};

use super::Ui;
use crate::people_support::first_owner;
use crate::support::{Session, TestApp, config_for};

/// A key as WebDriver's send-keys takes it; a modifier stays down until `Key::Null`.
fn key(k: Key) -> char {
    char::from(k)
}

fn seeded_body() -> Value {
    json!([
        {
            "_type": "block", "_key": "intro", "style": "h2", "markDefs": [],
            "children": [{ "_type": "span", "_key": "intro-s", "text": "Why Rust", "marks": [] }]
        },
        {
            "_type": "block", "_key": "para", "style": "normal",
            "x-origin": { "tool": "importer", "line": 12 },
            "children": [
                { "_type": "span", "_key": "para-a", "text": "Rust is ", "marks": [] },
                { "_type": "span", "_key": "para-b", "text": "really fast", "marks": ["strong"] },
                { "_type": "span", "_key": "para-c", "text": " and ", "marks": [], "x-comment": "keep me" },
                { "_type": "span", "_key": "para-d", "text": "memory safe", "marks": ["em", "lnk"] },
                { "_type": "span", "_key": "para-e", "text": ".", "marks": [] }
            ],
            "markDefs": [
                { "_type": "link", "_key": "lnk", "href": "https://www.rust-lang.org/", "x-rel": "sponsored" }
            ]
        },
        {
            "_type": "callout", "_key": "careful", "tone": "warning",
            "title": "Careful", "items": ["borrowing", { "kind": "lifetimes", "depth": 2 }]
        },
        {
            "_type": "block", "_key": "li-1", "style": "normal", "listItem": "bullet", "level": 1,
            "markDefs": [],
            "children": [{ "_type": "span", "_key": "li-1-s", "text": "Ownership", "marks": ["code"] }]
        },
        {
            "_type": "block", "_key": "li-2", "listItem": "bullet", "level": 2,
            "children": [{ "_type": "span", "_key": "li-2-s", "text": "Borrowing", "marks": [] }]
        }
    ])
}

async fn draft_of(app: &TestApp, who: &Session, id: &str) -> Value {
    let res = app
        .get(&format!("/api/documents/{id}"))
        .cookie(who)
        .send()
        .await;
    assert_eq!(res.status, StatusCode::OK, "read: {}", res.body);
    res.body["data"]["draftData"].clone()
}

/// Types `keys` into `label`'s control, which the caller clicked: the keys themselves move the
/// caret and select, as a person's would.
async fn keys(ui: &Ui, label: &str, keys: &str) {
    ui.control(label).await.send_keys(keys).await.unwrap();
}

async fn value_of(ui: &Ui, label: &str) -> String {
    let control = ui.control(label).await;
    control.prop("value").await.unwrap().unwrap_or_default()
}

async fn a_word_edited_in_a_formatted_paragraph_changes_only_that_word(url: String) {
    let app = TestApp::custom(config_for(&url), |b| b.schemas(demo_schemas())).await;
    let (ada, _) = first_owner(&app).await;
    let seeded = json!({ "title": "Rust, briefly", "body": seeded_body() });
    let res = app
        .post(
            "/api/documents",
            json!({ "type": "post", "data": seeded, "publish": false }),
        )
        .cookie(&ada)
        .send()
        .await;
    assert_eq!(res.status, StatusCode::CREATED, "seed: {}", res.body);
    let id = res.body["data"]["id"].as_str().unwrap().to_string();
    assert_eq!(
        draft_of(&app, &ada, &id).await,
        seeded,
        "the API stores the seed as sent"
    );

    let ui = Ui::start(app, "rich-text").await;
    ui.sign_in_as(&ada).await;
    ui.open(&format!("/admin/documents/post/{id}")).await;
    ui.see("Revision 1").await;
    ui.screenshot("opened").await;

    // "Rust is really fast and memory safe.": select "fast" (15..19) and type "quick".
    let paragraph = "Body block 2";
    assert_eq!(
        value_of(&ui, paragraph).await,
        "Rust is really fast and memory safe."
    );
    ui.press(&ui.control(paragraph).await).await;
    let right = key(Key::Right).to_string();
    let select_fast_and_type = format!(
        "{}{}{}{}{}{}{}quick",
        key(Key::Control),
        key(Key::Home),
        key(Key::Null),
        right.repeat(15),
        key(Key::Shift),
        right.repeat(4),
        key(Key::Null),
    );
    keys(&ui, paragraph, &select_fast_and_type).await;
    assert_eq!(
        value_of(&ui, paragraph).await,
        "Rust is really quick and memory safe."
    );
    ui.see("Unsaved changes").await;
    ui.click("Save draft").await;
    ui.see("Revision 2").await;
    ui.screenshot("word-changed").await;

    let mut expected = seeded.clone();
    expected["body"][1]["children"][1]["text"] = json!("really quick");
    assert_eq!(
        draft_of(&ui.app, &ada, &id).await,
        expected,
        "only the edited word changed"
    );

    // A sentence appended at the end of the paragraph joins its last span.
    ui.press(&ui.control(paragraph).await).await;
    keys(
        &ui,
        paragraph,
        &format!(
            "{}{}{} It compiles.",
            key(Key::Control),
            key(Key::End),
            key(Key::Null)
        ),
    )
    .await;
    ui.click("Save draft").await;
    ui.see("Revision 3").await;
    ui.screenshot("sentence-appended").await;
    expected["body"][1]["children"][4]["text"] = json!(". It compiles.");
    assert_eq!(
        draft_of(&ui.app, &ada, &id).await,
        expected,
        "only the appended sentence changed"
    );

    // What the plain text hides is shown read-only: the bold span, the link, the callout.
    let bold = ui
        .find(".block-formatted strong")
        .await
        .text()
        .await
        .unwrap();
    assert_eq!(bold, "really quick");
    let link = ui.find(".block-formatted a").await;
    assert_eq!(
        link.attr("href").await.unwrap().as_deref(),
        Some("https://www.rust-lang.org/")
    );
    assert_eq!(link.text().await.unwrap(), "memory safe");
    ui.see("Body block 3: callout block, not editable here (kept as stored)")
        .await;
    ui.see("bullet list item, level 2").await;
    ui.eval(
        "document.querySelector('.block-formatted:not([hidden])').scrollIntoView({ block: 'center' })",
        vec![],
    )
    .await;
    ui.screenshot("formatting-shown").await;
    ui.stop().await;
}

/// The span mapping on the edits the keyboard test does not make: a selection across spans, a
/// whole span deleted, typing at the very start, an inline object inside a deletion, the
/// whole text deleted, and a repeated letter typed where the cursor (not the first match) is.
async fn text_edits_map_back_to_spans_changing_nothing_else(url: String) {
    let app = TestApp::custom(config_for(&url), |b| b.schemas(demo_schemas())).await;
    let (ada, _) = first_owner(&app).await;
    let ui = Ui::start(app, "rich-text-edits").await;
    ui.sign_in_as(&ada).await;
    ui.open("/admin/documents/post/new").await;
    let results = ui
        .eval(
            "const pt = await import(document.body.dataset.assets + '/js/portable-text.js');
             const edit = (children, after, caret) =>
               pt.applyTextEdit(children, pt.textEdit(pt.plainText(children), after, caret));
             const kids = [
               { _type: 'span', _key: 'a', text: 'Rust is ', marks: [] },
               { _type: 'span', _key: 'b', text: 'really fast', marks: ['strong'] },
               { _type: 'mention', _key: 'm', who: 'ferris' },
               { _type: 'span', _key: 'c', text: ' and ', marks: [], x: 1 },
               { _type: 'span', _key: 'd', text: 'safe', marks: ['lnk'] },
             ];
             const across = edit(kids, 'Rust is really x safe', 16);
             const whole = edit(kids, 'Rust is really fastsafe', 19);
             const start = edit(kids, 'So Rust is really fast and safe', 3);
             const all = edit(kids, '', 0);
             const twin = edit([{ _type: 'span', _key: 'x', text: 'a', marks: [] },
                                { _type: 'span', _key: 'y', text: 'a', marks: ['em'] }], 'aaa', 3);
             return { across, whole, start, all, twin,
                      untouchedKept: across[0] === kids[0] && whole[3] === kids[4] };",
            vec![],
        )
        .await;
    let a = json!({ "_type": "span", "_key": "a", "text": "Rust is ", "marks": [] });
    let mention = json!({ "_type": "mention", "_key": "m", "who": "ferris" });
    let d = json!({ "_type": "span", "_key": "d", "text": "safe", "marks": ["lnk"] });
    assert_eq!(
        results["across"],
        json!([
            a,
            { "_type": "span", "_key": "b", "text": "really x", "marks": ["strong"] },
            mention,
            { "_type": "span", "_key": "c", "text": " ", "marks": [], "x": 1 },
            d
        ]),
        "a selection across spans: the first takes the typing, the inline object stays"
    );
    assert_eq!(
        results["whole"],
        json!([
            a,
            { "_type": "span", "_key": "b", "text": "really fast", "marks": ["strong"] },
            mention,
            d
        ]),
        "a span wholly deleted is gone, nothing else changes"
    );
    assert_eq!(
        results["start"][0],
        json!({ "_type": "span", "_key": "a", "text": "So Rust is ", "marks": [] })
    );
    assert_eq!(
        results["all"],
        json!([{ "_type": "span", "_key": "a", "text": "", "marks": [] }, mention]),
        "all text deleted: one empty span to type in, the inline object kept"
    );
    assert_eq!(
        results["twin"],
        json!([
            { "_type": "span", "_key": "x", "text": "a", "marks": [] },
            { "_type": "span", "_key": "y", "text": "aa", "marks": ["em"] }
        ]),
        "typed at the end, the letter joins the span at the cursor"
    );
    assert_eq!(results["untouchedKept"], json!(true));
    ui.stop().await;
}

crate::admin_scenarios!(
    a_word_edited_in_a_formatted_paragraph_changes_only_that_word,
    text_edits_map_back_to_spans_changing_nothing_else,
);
