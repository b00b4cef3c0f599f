//! The rich-text editor of `block` fields (issue 30, point 1; issue 32, point 1): Portable Text
//! written with the keyboard the way a word processor is used, pasted from Google Docs and Word
//! and cleaned, images from the library, undo and redo, the toolbar reached and used without a
//! mouse; and stored Portable Text kept through an edit: a post seeded through the API with
//! marks, a link whose markDef carries a key the admin does not know, a nested list, a custom
//! `callout` block and unknown keys is edited, and the whole stored JSON is compared, so any
//! dropped mark, markDef, key or block fails.

use axum::http::StatusCode;
use cms::core::schema::demo_schemas;
use fantoccini::key::Key;
use serde_json::{Value, json};

use super::Ui;
use super::assets::{TEAL, png, until};
use crate::assets::uploaded;
use crate::people_support::first_owner;
use crate::support::{Session, TestApp, config_for};

/// A key as WebDriver's send-keys takes it; a modifier stays down until `Key::Null`.
fn key(k: Key) -> String {
    char::from(k).to_string()
}

/// `keys` pressed with Control held.
fn ctrl(keys: &str) -> String {
    format!("{}{keys}{}", key(Key::Control), key(Key::Null))
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

/// Portable Text without its random keys: each mark naming a markDef is replaced by what the
/// definition says (`link:<href>` or `doc:<id>`), so two bodies compare by meaning.
fn without_keys(body: &Value) -> Value {
    let blocks = body.as_array().expect("a body is an array of blocks");
    Value::Array(
        blocks
            .iter()
            .map(|block| {
                let defs = block["markDefs"].as_array().cloned().unwrap_or_default();
                let name = |mark: &Value| {
                    let def = defs.iter().find(|d| d["_key"] == *mark);
                    match def {
                        Some(d) if d["_type"] == "link" => {
                            json!(format!("link:{}", d["href"].as_str().unwrap()))
                        }
                        Some(d) => json!(format!(
                            "doc:{}",
                            d["reference"]["_ref"].as_str().unwrap_or("?")
                        )),
                        None => mark.clone(),
                    }
                };
                let mut out = block.clone();
                let map = out.as_object_mut().unwrap();
                map.remove("_key");
                map.remove("markDefs");
                if let Some(children) = map.get_mut("children").and_then(Value::as_array_mut) {
                    for child in children {
                        let child = child.as_object_mut().unwrap();
                        child.remove("_key");
                        if let Some(marks) = child.get("marks").and_then(Value::as_array) {
                            let named: Vec<Value> = marks.iter().map(name).collect();
                            child.insert("marks".into(), Value::Array(named));
                        }
                    }
                }
                out
            })
            .collect(),
    )
}

fn para(style: &str, spans: &[(&str, &[&str])]) -> Value {
    let children: Vec<Value> = spans
        .iter()
        .map(|(text, marks)| json!({ "_type": "span", "text": text, "marks": marks }))
        .collect();
    json!({ "_type": "block", "style": style, "children": children })
}

fn item(kind: &str, level: u8, text: &str) -> Value {
    json!({
        "_type": "block", "style": "normal", "listItem": kind, "level": level,
        "children": [{ "_type": "span", "text": text, "marks": [] }]
    })
}

/// The editor of the field labelled `label`.
async fn surface(ui: &Ui, label: &str) -> fantoccini::elements::Element {
    ui.find(&format!(".rt-surface[aria-label='{label}']")).await
}

/// Selects `start..end` of the text of the block with `key` (the caret when equal), as a
/// person does with the mouse; the keys typed next go there.
async fn select(ui: &Ui, block_key: &str, start: usize, end: usize) {
    ui.eval(
        "const [key, start, end] = arguments;
         const block = document.querySelector(`.rt-surface [data-key='${key}']`);
         const walker = document.createTreeWalker(block, NodeFilter.SHOW_TEXT);
         const at = (offset) => {
           let left = offset, node;
           while ((node = walker.nextNode())) {
             if (left <= node.data.length) return [node, left];
             left -= node.data.length;
           }
           return [block, block.childNodes.length];
         };
         const [a, ao] = at(start);
         walker.currentNode = block;
         const [f, fo] = at(end);
         block.closest('.rt-surface').focus();
         document.getSelection().setBaseAndExtent(a, ao, f, fo);",
        vec![json!(block_key), json!(start), json!(end)],
    )
    .await;
}

/// Types into the editor that has the focus (WebDriver's keys go to the active element).
async fn type_keys(ui: &Ui, keys: &str) {
    ui.client()
        .active_element()
        .await
        .unwrap()
        .send_keys(keys)
        .await
        .unwrap();
}

async fn save(ui: &Ui, revision: u32) {
    ui.click("Save draft").await;
    ui.see(&format!("Revision {revision}")).await;
}

/// The id of the document the edit page now shows (after a first save).
async fn saved_id(ui: &Ui) -> String {
    let url = ui.client().current_url().await.unwrap();
    url.path().rsplit('/').next().unwrap().to_string()
}

async fn typing_gives_headings_marks_lists_and_links(url: String) {
    let app = TestApp::custom(config_for(&url), |b| b.schemas(demo_schemas())).await;
    let (ada, _) = first_owner(&app).await;
    let res = app
        .post(
            "/api/documents",
            json!({ "type": "author", "data": { "name": "Grace Hopper" } }),
        )
        .cookie(&ada)
        .send()
        .await;
    assert_eq!(res.status, StatusCode::CREATED, "{}", res.body);
    let grace = res.body["data"]["id"].as_str().unwrap().to_string();
    let ui = Ui::start(app, "rich-text-typing").await;
    ui.sign_in_as(&ada).await;
    ui.open("/admin/documents/post/new").await;
    ui.fill("Title", "Typed").await;
    let body = surface(&ui, "Body").await;
    ui.press(&body).await;
    let enter = key(Key::Enter);
    let tab = key(Key::Tab);
    let shift_tab = format!("{}{}{}", key(Key::Shift), key(Key::Tab), key(Key::Null));
    // Markdown-like starts make a heading, list items and a quote; Ctrl+B and Ctrl+I toggle
    // bold and italic for what is typed next; Tab nests a list item, Shift+Tab takes it out,
    // Enter on an empty item ends the list.
    let script = [
        "## Why Rust".to_string(),
        enter.clone(),
        "Rust is ".into(),
        ctrl("b"),
        "fast".into(),
        ctrl("b"),
        " and ".into(),
        ctrl("i"),
        "safe".into(),
        ctrl("i"),
        ".".into(),
        enter.clone(),
        "- Ownership".into(),
        enter.clone(),
        tab,
        "Borrowing".into(),
        enter.clone(),
        shift_tab,
        "Lifetimes".into(),
        enter.clone(),
        enter.clone(),
        "1. First".into(),
        enter.clone(),
        "Second".into(),
        enter.clone(),
        enter.clone(),
        "> Quoted".into(),
    ]
    .concat();
    type_keys(&ui, &script).await;
    ui.screenshot("typed").await;

    // "Rust" selected and linked through the link dialog (Ctrl+K with a selection).
    let key_of_second: String = serde_json::from_value(
        ui.eval(
            "return document.querySelectorAll('.rt-surface > *')[1].dataset.key",
            vec![],
        )
        .await,
    )
    .unwrap();
    select(&ui, &key_of_second, 0, 4).await;
    type_keys(&ui, &ctrl("k")).await;
    ui.see("Add link").await;
    ui.fill("Address", "https://www.rust-lang.org/").await;
    ui.click("Apply").await;
    until(
        &ui,
        "return document.querySelector('.rt-surface a[href=\"https://www.rust-lang.org/\"]')?.textContent === 'Rust'",
        "the link in the text",
    )
    .await;
    // "safe" linked to a document, chosen by title in the same dialog.
    select(&ui, &key_of_second, 17, 21).await;
    ui.click("Link").await;
    ui.see("Add link").await;
    ui.fill("Or a document", "grace").await;
    ui.click("Grace Hopper (Author)").await;
    ui.click("Apply").await;
    until(
        &ui,
        "return document.querySelector('.rt-surface .rt-internalLink')?.textContent === 'safe'",
        "the document link in the text",
    )
    .await;
    ui.screenshot("linked").await;
    save(&ui, 1).await;
    let id = saved_id(&ui).await;

    let expected = json!([
        para("h2", &[("Why Rust", &[])]),
        para(
            "normal",
            &[
                ("Rust", &["link:https://www.rust-lang.org/"]),
                (" is ", &[]),
                ("fast", &["strong"]),
                (" and ", &[]),
                ("safe", &["em", &format!("doc:{grace}")]),
                (".", &[]),
            ]
        ),
        item("bullet", 1, "Ownership"),
        item("bullet", 2, "Borrowing"),
        item("bullet", 1, "Lifetimes"),
        item("number", 1, "First"),
        item("number", 1, "Second"),
        para("blockquote", &[("Quoted", &[])]),
    ]);
    let stored = draft_of(&ui.app, &ada, &id).await;
    assert_eq!(without_keys(&stored["body"]), expected, "{stored:#}");
    // Every block and span has a key, unique in its block list.
    let keys: Vec<&str> = stored["body"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b["_key"].as_str().unwrap())
        .collect();
    let mut unique = keys.clone();
    unique.sort();
    unique.dedup();
    assert_eq!(unique.len(), keys.len(), "block keys are unique: {keys:?}");

    // Undo takes back the last typing, redo brings it back; nothing else moves.
    let last_key: String = serde_json::from_value(
        ui.eval(
            "const all = document.querySelectorAll('.rt-surface > *'); return all[all.length - 1].dataset.key",
            vec![],
        )
        .await,
    )
    .unwrap();
    select(&ui, &last_key, 6, 6).await;
    type_keys(&ui, " text").await;
    until(
        &ui,
        "return document.querySelector('.rt-surface blockquote').textContent === 'Quoted text'",
        "the typed text",
    )
    .await;
    type_keys(&ui, &ctrl("z")).await;
    until(
        &ui,
        "return document.querySelector('.rt-surface blockquote').textContent === 'Quoted'",
        "the undone text",
    )
    .await;
    type_keys(
        &ui,
        &format!(
            "{}{}z{}",
            key(Key::Control),
            key(Key::Shift),
            key(Key::Null)
        ),
    )
    .await;
    until(
        &ui,
        "return document.querySelector('.rt-surface blockquote').textContent === 'Quoted text'",
        "the redone text",
    )
    .await;
    // A style chosen in the toolbar applies to the caret's block.
    ui.eval(
        "const s = document.querySelector('.rt-style'); s.value = 'h3'; s.dispatchEvent(new Event('change'))",
        vec![],
    )
    .await;
    save(&ui, 2).await;
    let stored = draft_of(&ui.app, &ada, &id).await;
    assert_eq!(
        without_keys(&stored["body"])[7],
        para("h3", &[("Quoted text", &[])])
    );
    ui.stop().await;
}

/// What Google Docs and Word put on the clipboard, pasted: styles, fonts, Word's list markup,
/// a script and an image are gone; headings, bold, italic, code, links and list depth stay.
async fn pasted_html_is_cleaned_to_the_schema(url: String) {
    let app = TestApp::custom(config_for(&url), |b| b.schemas(demo_schemas())).await;
    let (ada, _) = first_owner(&app).await;
    let ui = Ui::start(app, "rich-text-paste").await;
    ui.sign_in_as(&ada).await;
    ui.open("/admin/documents/post/new").await;
    ui.fill("Title", "Pasted").await;
    let body = surface(&ui, "Body").await;
    ui.press(&body).await;
    let google_docs = r#"<meta charset="utf-8"><b style="font-weight:normal;" id="docs-internal-guid-5"><h2 dir="ltr" style="line-height:1.38"><span style="font-size:16pt;font-family:Arial;color:#000000;font-weight:400">Heading from Docs</span></h2><p dir="ltr"><span style="font-weight:400">Plain and </span><span style="font-weight:700">bold</span><span style="font-weight:400"> and </span><span style="font-style:italic;font-weight:400">italic</span><span style="font-weight:400"> with a </span><a href="https://example.com/x" style="text-decoration:none"><span style="color:#1155cc;text-decoration:underline">link</span></a></p><ul><li dir="ltr" aria-level="1"><p dir="ltr"><span>One</span></p></li><li dir="ltr" aria-level="2"><p dir="ltr"><span>Two</span></p></li></ul><p><img src="https://example.com/tracker.png"><span style="font-family:'Courier New'">let x = 1;</span></p></b>"#;
    let word = r#"<html xmlns:o="urn:schemas-microsoft-com:office:office"><head><style>p.MsoNormal{margin:0}</style></head><body><p class=MsoNormal><b>Word bold</b> text<o:p></o:p></p><p class=MsoListParagraphCxSpFirst style='text-indent:-18.0pt;mso-list:l0 level1 lfo1'><![if !supportLists]><span style='font-family:Symbol;mso-list:Ignore'>·<span style='font:7.0pt "Times New Roman"'>&nbsp;&nbsp; </span></span><![endif]>Item one<o:p></o:p></p><p class=MsoListParagraphCxSpLast style='mso-list:l0 level2 lfo1'><span style='mso-list:Ignore'>1.<span>&nbsp;</span></span>Item two</p><script>window.pwned = true</script><p onclick="window.pwned = true" style="color:red"><font face="Arial">Styled <a href="javascript:window.pwned=true">not a link</a></font></p></body></html>"#;
    for html in [google_docs, word] {
        ui.eval(
            "const data = new DataTransfer();
             data.setData('text/html', arguments[0]);
             data.setData('text/plain', 'plain fallback');
             const surface = document.querySelector('.rt-surface');
             surface.dispatchEvent(new ClipboardEvent('paste', { clipboardData: data, bubbles: true, cancelable: true }));",
            vec![json!(html)],
        )
        .await;
    }
    until(
        &ui,
        "return document.querySelector('.rt-surface').textContent.includes('not a link')",
        "both pastes",
    )
    .await;
    ui.screenshot("pasted").await;
    assert_eq!(
        ui.eval("return window.pwned === undefined", vec![]).await,
        json!(true),
        "nothing pasted ran"
    );
    save(&ui, 1).await;
    let id = saved_id(&ui).await;
    let stored = draft_of(&ui.app, &ada, &id).await;
    let expected = json!([
        para("h2", &[("Heading from Docs", &[])]),
        para(
            "normal",
            &[
                ("Plain and ", &[]),
                ("bold", &["strong"]),
                (" and ", &[]),
                ("italic", &["em"]),
                (" with a ", &[]),
                ("link", &["link:https://example.com/x"]),
            ]
        ),
        item("bullet", 1, "One"),
        item("bullet", 2, "Two"),
        // The second paste's first paragraph joins the line the first paste ended on.
        para(
            "normal",
            &[
                ("let x = 1;", &["code"]),
                ("Word bold", &["strong"]),
                (" text", &[])
            ]
        ),
        item("bullet", 1, "Item one"),
        item("number", 2, "Item two"),
        para("normal", &[("Styled not a link", &[])]),
    ]);
    assert_eq!(without_keys(&stored["body"]), expected, "{stored:#}");
    ui.stop().await;
}

/// The toolbar without a mouse: Alt+F10 reaches it, arrow keys move along it, Enter on "Insert
/// image" opens the library, and the chosen image lands in the text as an image block.
async fn the_toolbar_and_images_work_from_the_keyboard(url: String) {
    let app = TestApp::custom(config_for(&url), |b| b.schemas(demo_schemas())).await;
    let (ada, _) = first_owner(&app).await;
    let asset = uploaded(&app, &ada, "harbour.png", &png(40, 20, TEAL)).await;
    let asset_id = asset["id"].as_str().unwrap().to_string();
    let ui = Ui::start(app, "rich-text-keyboard").await;
    ui.sign_in_as(&ada).await;
    ui.open("/admin/documents/post/new").await;
    ui.fill("Title", "With a picture").await;
    let body = surface(&ui, "Body").await;
    ui.press(&body).await;
    type_keys(&ui, "Before the picture").await;
    type_keys(
        &ui,
        &format!("{}{}{}", key(Key::Alt), key(Key::F10), key(Key::Null)),
    )
    .await;
    let focused = || async {
        ui.eval(
            "return document.activeElement.getAttribute('aria-label')",
            vec![],
        )
        .await
    };
    assert_eq!(focused().await, json!("Text style of Body"));
    let mut steps = 0;
    while focused().await != json!("Insert image") {
        type_keys(&ui, &key(Key::Right)).await;
        steps += 1;
        assert!(steps < 20, "the toolbar never reached Insert image");
    }
    type_keys(&ui, &key(Key::Enter)).await;
    ui.find("dialog.asset-picker[open] .asset-picker-grid button")
        .await;
    ui.screenshot("picker").await;
    ui.press(
        &ui.find(&format!(
            "dialog.asset-picker[open] .asset-choice[data-id='{asset_id}']"
        ))
        .await,
    )
    .await;
    until(
        &ui,
        "return !!document.querySelector('.rt-surface .rt-object img')",
        "the image in the text",
    )
    .await;
    type_keys(&ui, "After").await;
    ui.screenshot("image-inserted").await;
    save(&ui, 1).await;
    let id = saved_id(&ui).await;
    let stored = draft_of(&ui.app, &ada, &id).await;
    let blocks = stored["body"].as_array().unwrap();
    assert_eq!(blocks.len(), 3, "{stored:#}");
    assert_eq!(
        without_keys(&json!([blocks[0].clone(), blocks[2].clone()])),
        json!([
            para("normal", &[("Before the picture", &[])]),
            para("normal", &[("After", &[])])
        ])
    );
    assert_eq!(blocks[1]["_type"], "image");
    assert_eq!(blocks[1]["asset"]["_ref"], json!(asset_id));
    // The image is a reference the API tracks, like any image field's.
    let res = ui
        .app
        .get(&format!("/api/assets/{asset_id}"))
        .cookie(&ada)
        .send()
        .await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);
    ui.stop().await;
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
    assert_eq!(draft_of(&app, &ada, &id).await, seeded);

    let ui = Ui::start(app, "rich-text").await;
    ui.sign_in_as(&ada).await;
    ui.open(&format!("/admin/documents/post/{id}")).await;
    ui.see("Revision 1").await;
    // Shown as it reads: the bold, the link, the list, the callout kept as it is.
    assert_eq!(
        ui.find(".rt-surface [data-key='para'] strong")
            .await
            .text()
            .await
            .unwrap(),
        "really fast"
    );
    let link = ui.find(".rt-surface [data-key='para'] a").await;
    assert_eq!(
        link.attr("href").await.unwrap().as_deref(),
        Some("https://www.rust-lang.org/")
    );
    ui.see("callout block, not editable here (kept as stored)")
        .await;
    assert_eq!(
        ui.find(".rt-surface [data-key='li-2']")
            .await
            .attr("data-level")
            .await
            .unwrap()
            .as_deref(),
        Some("2")
    );
    ui.screenshot("opened").await;

    // "Rust is really fast and memory safe.": "fast" (15..19) selected and "quick" typed.
    select(&ui, "para", 15, 19).await;
    type_keys(&ui, "quick").await;
    ui.see("Unsaved changes").await;
    save(&ui, 2).await;
    let mut expected = seeded.clone();
    expected["body"][1]["children"][1]["text"] = json!("really quick");
    assert_eq!(
        draft_of(&ui.app, &ada, &id).await,
        expected,
        "only the edited word changed"
    );

    // A sentence appended at the end of the paragraph joins its last span.
    select(&ui, "para", 37, 37).await;
    type_keys(&ui, " It compiles.").await;
    save(&ui, 3).await;
    expected["body"][1]["children"][4]["text"] = json!(". It compiles.");
    assert_eq!(
        draft_of(&ui.app, &ada, &id).await,
        expected,
        "only the appended sentence changed"
    );

    // A word deleted with Backspace inside the unknown-keyed span keeps that span's keys.
    select(&ui, "para", 20, 24).await;
    type_keys(&ui, &key(Key::Backspace)).await;
    save(&ui, 4).await;
    expected["body"][1]["children"][2]["text"] = json!(" ");
    assert_eq!(
        draft_of(&ui.app, &ada, &id).await,
        expected,
        "only the deleted word changed"
    );
    ui.screenshot("edited").await;
    ui.stop().await;
}

/// The model under the edits the keyboard scenarios do not make, in the page's own modules:
/// Enter inside a span with unknown keys, Backspace joining two blocks with clashing markDef
/// keys, bold toggled on and off across spans, and an emptied block keeping its first span.
async fn model_edits_keep_what_they_do_not_touch(url: String) {
    let app = TestApp::custom(config_for(&url), |b| b.schemas(demo_schemas())).await;
    let (ada, _) = first_owner(&app).await;
    let ui = Ui::start(app, "rich-text-model").await;
    ui.sign_in_as(&ada).await;
    ui.open("/admin/documents/post/new").await;
    let results = ui
        .eval(
            "const M = await import(document.body.dataset.assets + '/js/rich-text-model.js');
             const a = { _type: 'block', _key: 'a', style: 'normal', x: 1,
               markDefs: [{ _type: 'link', _key: 'l', href: 'https://a.example/' }],
               children: [
                 { _type: 'span', _key: 'a1', text: 'Hello ', marks: [] },
                 { _type: 'span', _key: 'a2', text: 'wide world', marks: ['l'], note: 'kept' },
               ] };
             const b = { _type: 'block', _key: 'b', style: 'normal',
               markDefs: [{ _type: 'link', _key: 'l', href: 'https://b.example/' }],
               children: [{ _type: 'span', _key: 'b1', text: 'there', marks: ['l'] }] };
             const [left, right] = M.splitBlock(a, 10);
             const merged = M.deleteRange([a, b], M.endOf([a, b], 0), { b: 1, o: 0 }).blocks;
             const on = M.setMark([a], { b: 0, o: 3 }, { b: 0, o: 9 }, 'strong', true);
             const off = M.setMark(on, { b: 0, o: 3 }, { b: 0, o: 9 }, 'strong', false);
             const emptied = M.deleteRange([a], { b: 0, o: 0 }, { b: 0, o: 16 }).blocks;
             const D = await import(document.body.dataset.assets + '/js/rich-text-dom.js');
             const broken = { _type: 'block', _key: 'n', style: 'normal', markDefs: [],
               children: [{ _type: 'span', _key: 'n1', text: 'line\\n', marks: [] }] };
             const drawn = D.drawBlock(broken, () => null);
             return { left, right, merged, on: on[0].children, off: off[0].children, emptied,
                      untouched: merged[0].children[0] === a.children[0],
                      breaks: drawn.querySelectorAll('br').length,
                      fillers: drawn.querySelectorAll('br[data-filler]').length,
                      readBack: D.readBlock(drawn, broken) === broken };",
            vec![],
        )
        .await;
    assert_eq!(results["left"]["_key"], "a");
    assert_eq!(results["left"]["x"], 1, "the block keeps its unknown key");
    assert_eq!(
        results["left"]["children"][1],
        json!({ "_type": "span", "_key": "a2", "text": "wide", "marks": ["l"], "note": "kept" })
    );
    assert_eq!(results["right"]["children"][0]["text"], " world");
    assert_eq!(results["right"]["children"][0]["note"], "kept");
    assert_eq!(
        results["right"]["markDefs"][0]["href"], "https://a.example/",
        "the link goes with the text"
    );
    let merged = &results["merged"][0];
    assert_eq!(merged["markDefs"].as_array().unwrap().len(), 2);
    let b_mark = merged["children"][2]["marks"][0].as_str().unwrap();
    assert_ne!(b_mark, "l", "the clashing markDef key is renamed");
    let b_def = merged["markDefs"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["_key"] == b_mark)
        .unwrap();
    assert_eq!(
        b_def["href"], "https://b.example/",
        "each link keeps its address"
    );
    assert_eq!(results["untouched"], json!(true));
    assert_eq!(
        results["on"].as_array().unwrap().len(),
        4,
        "bold splits the two spans: {:#}",
        results["on"]
    );
    assert_eq!(
        results["off"],
        json!([
            { "_type": "span", "_key": "a1", "text": "Hello ", "marks": [] },
            { "_type": "span", "_key": "a2", "text": "wide world", "marks": ["l"], "note": "kept" }
        ]),
        "bold toggled back off leaves the spans as they were"
    );
    assert_eq!(
        results["emptied"][0]["children"],
        json!([{ "_type": "span", "_key": "a1", "text": "", "marks": [] }]),
        "an emptied block keeps its first span to type into"
    );
    // A final line break is drawn with the empty line after it, which reads back as nothing.
    assert_eq!(results["breaks"], 2);
    assert_eq!(results["fillers"], 1);
    assert_eq!(results["readBack"], json!(true));
    ui.stop().await;
}

/// An issue inside the text (a link to a document that is gone) is shown on the field, named
/// by its item, and a refused publish puts the caret in the text.
async fn an_issue_in_the_text_is_shown_on_the_field(url: String) {
    let app = TestApp::custom(config_for(&url), |b| b.schemas(demo_schemas())).await;
    let (ada, _) = first_owner(&app).await;
    let body = json!([{
        "_type": "block", "_key": "b1", "style": "normal",
        "markDefs": [{ "_type": "internalLink", "_key": "d1", "reference": { "_type": "reference", "_ref": "gone" } }],
        "children": [{ "_type": "span", "_key": "s1", "text": "see this", "marks": ["d1"] }]
    }]);
    let res = app
        .post(
            "/api/documents",
            json!({ "type": "post", "data": { "title": "Broken link", "body": body } }),
        )
        .cookie(&ada)
        .send()
        .await;
    assert_eq!(res.status, StatusCode::CREATED, "{}", res.body);
    let id = res.body["data"]["id"].as_str().unwrap().to_string();
    let ui = Ui::start(app, "rich-text-issue").await;
    ui.sign_in_as(&ada).await;
    ui.open(&format!("/admin/documents/post/{id}")).await;
    ui.click("Publish").await;
    let message = "a document link in item 1 of Body: the referenced document does not exist";
    until(
        &ui,
        &format!(
            "return document.querySelector('.block-field > .field-error')?.textContent.includes({message:?})"
        ),
        "the issue on the body field",
    )
    .await;
    assert_eq!(
        ui.eval(
            "return document.activeElement.classList.contains('rt-surface')",
            vec![]
        )
        .await,
        json!(true),
        "the refused publish puts the caret in the text"
    );
    ui.screenshot("issue").await;
    ui.stop().await;
}

/// The luminance (0 dark to 1 light) of the computed background of the element `css` matches.
async fn luminance(ui: &Ui, css: &str) -> f64 {
    let value = ui
        .eval(
            "const [r, g, b] = getComputedStyle(document.querySelector(arguments[0])).backgroundColor.match(/\\d+/g).map(Number);
             return (0.2126 * r + 0.7152 * g + 0.0722 * b) / 255;",
            vec![json!(css)],
        )
        .await;
    value.as_f64().unwrap()
}

/// The editor as the README shows it (`docs/screenshots/editor-{light,dark}.png` are copies of
/// these screenshots): a post with a heading, marks, a link, a list and a quote, in the light
/// and in the dark, the text itself following the system's preference.
async fn the_editor_in_the_light_and_in_the_dark(url: String) {
    let app = TestApp::custom(config_for(&url), |b| b.schemas(demo_schemas())).await;
    let (ada, _) = first_owner(&app).await;
    let body = json!([
        { "_type": "block", "_key": "h", "style": "h2", "markDefs": [],
          "children": [{ "_type": "span", "_key": "h1", "text": "Why we moved to Rust", "marks": [] }] },
        { "_type": "block", "_key": "p", "style": "normal",
          "markDefs": [{ "_type": "link", "_key": "l", "href": "https://www.rust-lang.org/" }],
          "children": [
            { "_type": "span", "_key": "p1", "text": "Our CMS answers in ", "marks": [] },
            { "_type": "span", "_key": "p2", "text": "microseconds", "marks": ["strong"] },
            { "_type": "span", "_key": "p3", "text": ", uses a tenth of the memory and is written in ", "marks": [] },
            { "_type": "span", "_key": "p4", "text": "Rust", "marks": ["l"] },
            { "_type": "span", "_key": "p5", "text": ".", "marks": [] }
          ] },
        { "_type": "block", "_key": "l1", "style": "normal", "listItem": "bullet", "level": 1, "markDefs": [],
          "children": [{ "_type": "span", "_key": "l1s", "text": "No garbage collector pauses", "marks": [] }] },
        { "_type": "block", "_key": "l2", "style": "normal", "listItem": "bullet", "level": 1, "markDefs": [],
          "children": [{ "_type": "span", "_key": "l2s", "text": "One binary, ", "marks": [] },
                       { "_type": "span", "_key": "l2e", "text": "no runtime", "marks": ["em"] }] },
        { "_type": "block", "_key": "q", "style": "blockquote", "markDefs": [],
          "children": [{ "_type": "span", "_key": "qs", "text": "Fast enough that editors stop noticing it.", "marks": [] }] }
    ]);
    let res = app
        .post(
            "/api/documents",
            json!({ "type": "post", "data": { "title": "Why we moved to Rust", "excerpt": "Speed, memory and safety.", "body": body } }),
        )
        .cookie(&ada)
        .send()
        .await;
    assert_eq!(res.status, StatusCode::CREATED, "{}", res.body);
    let id = res.body["data"]["id"].as_str().unwrap().to_string();
    let mut ui = Ui::start(app, "rich-text-look").await;
    ui.sign_in_as(&ada).await;
    ui.autosave_on().await;
    let path = format!("/admin/documents/post/{id}");
    ui.open(&path).await;
    select(&ui, "p", 19, 31).await;
    let light = luminance(&ui, ".rt-surface").await;
    assert!(light > 0.8, "the text's background in the light is {light}");
    ui.screenshot("editor-light").await;

    let previous = ui.swap_browser(crate::browser::Browser::start_dark().await);
    previous.stop().await;
    ui.client().set_window_size(1280, 900).await.unwrap();
    ui.sign_in_as(&ada).await;
    ui.autosave_on().await;
    ui.open(&path).await;
    select(&ui, "p", 19, 31).await;
    let dark = luminance(&ui, ".rt-surface").await;
    assert!(dark < 0.2, "the text's background in the dark is {dark}");
    ui.screenshot("editor-dark").await;
    ui.stop().await;
}

/// A cut across two blocks joins them and puts the text on the clipboard as HTML with its
/// marks; pasted back elsewhere, the bold and the link come with it.
async fn cut_and_paste_move_text_with_its_marks(url: String) {
    let app = TestApp::custom(config_for(&url), |b| b.schemas(demo_schemas())).await;
    let (ada, _) = first_owner(&app).await;
    let body = json!([
        { "_type": "block", "_key": "one", "style": "normal",
          "markDefs": [{ "_type": "link", "_key": "l", "href": "https://example.com/" }],
          "children": [
            { "_type": "span", "_key": "o1", "text": "Keep ", "marks": [] },
            { "_type": "span", "_key": "o2", "text": "bold", "marks": ["strong"] },
            { "_type": "span", "_key": "o3", "text": " and ", "marks": [] },
            { "_type": "span", "_key": "o4", "text": "linked", "marks": ["l"] }
          ] },
        { "_type": "block", "_key": "two", "style": "normal", "markDefs": [],
          "children": [{ "_type": "span", "_key": "t1", "text": "End of it.", "marks": [] }] }
    ]);
    let res = app
        .post(
            "/api/documents",
            json!({ "type": "post", "data": { "title": "Cut", "body": body } }),
        )
        .cookie(&ada)
        .send()
        .await;
    assert_eq!(res.status, StatusCode::CREATED, "{}", res.body);
    let id = res.body["data"]["id"].as_str().unwrap().to_string();
    let ui = Ui::start(app, "rich-text-cut").await;
    ui.sign_in_as(&ada).await;
    ui.open(&format!("/admin/documents/post/{id}")).await;
    // "bold and linked" and "End " cut: the two blocks join as "Keep of it.".
    select(&ui, "one", 5, 5).await;
    ui.eval(
        "const block = (k) => document.querySelector(`.rt-surface [data-key='${k}']`);
         const text = (el) => document.createTreeWalker(el, NodeFilter.SHOW_TEXT);
         const start = text(block('one')); let node = start.nextNode(); node = start.nextNode();
         const end = text(block('two')).nextNode();
         document.getSelection().setBaseAndExtent(node, 0, end, 4);",
        vec![],
    )
    .await;
    let clipboard = ui
        .eval(
            "const data = new DataTransfer();
             document.querySelector('.rt-surface').dispatchEvent(new ClipboardEvent('cut', { clipboardData: data, bubbles: true, cancelable: true }));
             window.cutHtml = data.getData('text/html');
             return [data.getData('text/plain'), document.querySelector('.rt-surface').textContent];",
            vec![],
        )
        .await;
    assert_eq!(clipboard[0], "bold and linked\n\nEnd ", "{clipboard}");
    assert_eq!(clipboard[1], "Keep of it.", "{clipboard}");
    // Pasted at the end of the text.
    select(&ui, "one", 11, 11).await;
    ui.eval(
        "const data = new DataTransfer();
         data.setData('text/html', window.cutHtml);
         document.querySelector('.rt-surface').dispatchEvent(new ClipboardEvent('paste', { clipboardData: data, bubbles: true, cancelable: true }));",
        vec![],
    )
    .await;
    save(&ui, 2).await;
    let stored = draft_of(&ui.app, &ada, &id).await;
    assert_eq!(
        without_keys(&stored["body"]),
        json!([
            // The two stored spans that met keep their keys: joined in meaning, not in storage.
            para(
                "normal",
                &[
                    ("Keep ", &[]),
                    ("of it.", &[]),
                    ("bold", &["strong"]),
                    (" and ", &[]),
                    ("linked", &["link:https://example.com/"])
                ]
            ),
            // A paste drops the spaces at a block's ends, as it drops a web page's.
            para("normal", &[("End", &[])]),
        ]),
        "{stored:#}"
    );
    ui.stop().await;
}

crate::admin_scenarios!(
    cut_and_paste_move_text_with_its_marks,
    the_editor_in_the_light_and_in_the_dark,
    an_issue_in_the_text_is_shown_on_the_field,
    typing_gives_headings_marks_lists_and_links,
    pasted_html_is_cleaned_to_the_schema,
    the_toolbar_and_images_work_from_the_keyboard,
    a_word_edited_in_a_formatted_paragraph_changes_only_that_word,
    model_edits_keep_what_they_do_not_touch,
);
