//! Documents through the admin: a post made with every kind of field and published, a publish
//! refused for a missing field, a revision conflict resolved both ways, a version restored
//! from the history, the list's search, filter, sort and pages kept in the URL, a singleton,
//! field rules and capabilities, a plugin's field editor and document action, and unpublish,
//! schedule and delete. Each checks what the page shows and what the API then stores.

use axum::http::{Method, StatusCode, header};
use cms::core::RequiredCapabilities;
use cms::core::schema::{demo_schemas, parse_schemas};
use cms::plugin::{Plugin, PluginParts};
use cms::server::PluginRoute;
use cms::server::plugins::Component;
use serde_json::{Value, json};

use super::Ui;
use crate::people_support::{first_owner, member};
use crate::support::{Session, TestApp, config_for};

pub(super) async fn demo_app(url: &str) -> TestApp {
    TestApp::custom(config_for(url), |b| b.schemas(demo_schemas())).await
}

pub(super) async fn create(
    app: &TestApp,
    who: &Session,
    doc_type: &str,
    data: Value,
    publish: bool,
) -> Value {
    let res = app
        .post(
            "/api/documents",
            json!({"type": doc_type, "data": data, "publish": publish}),
        )
        .cookie(who)
        .send()
        .await;
    assert_eq!(res.status, StatusCode::CREATED, "create: {}", res.body);
    res.body["data"].clone()
}

pub(super) async fn update(app: &TestApp, who: &Session, id: &str, data: Value) -> Value {
    let res = app
        .req(Method::PUT, &format!("/api/documents/{id}"))
        .json(json!({ "data": data }))
        .cookie(who)
        .send()
        .await;
    assert_eq!(res.status, StatusCode::OK, "update: {}", res.body);
    res.body["data"].clone()
}

pub(super) async fn fetch(app: &TestApp, who: &Session, id: &str) -> (StatusCode, Value) {
    let res = app
        .get(&format!("/api/documents/{id}"))
        .cookie(who)
        .send()
        .await;
    (res.status, res.body["data"].clone())
}

/// The id of the document the page shows, once it has been created (the URL loses `/new`).
pub(super) async fn saved_id(ui: &Ui, doc_type: &str) -> String {
    let prefix = format!("/admin/documents/{doc_type}/");
    for _ in 0..400 {
        let url = ui.client().current_url().await.unwrap();
        if let Some(id) = url.path().strip_prefix(&prefix)
            && id != "new"
            && !id.is_empty()
        {
            return id.to_string();
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    panic!("the document was never created: {}", ui.main_text().await);
}

async fn value_of(ui: &Ui, label: &str) -> String {
    ui.control(label)
        .await
        .prop("value")
        .await
        .unwrap()
        .unwrap_or_default()
}

/// Waits until the control labelled `label` holds `expected`.
pub(super) async fn see_value(ui: &Ui, label: &str, expected: &str) {
    for _ in 0..400 {
        if value_of(ui, label).await == expected {
            return;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    panic!(
        "{label} never held {expected:?}; it holds {:?}",
        value_of(ui, label).await
    );
}

/// A valid 1x1 PNG (one grey pixel).
pub(super) const TINY_PNG: &[u8] = &[
    137, 80, 78, 71, 13, 10, 26, 10, 0, 0, 0, 13, 73, 72, 68, 82, 0, 0, 0, 1, 0, 0, 0, 1, 8, 4, 0,
    0, 0, 181, 28, 12, 2, 0, 0, 0, 11, 73, 68, 65, 84, 120, 218, 99, 100, 96, 0, 0, 0, 6, 0, 2, 48,
    129, 208, 47, 0, 0, 0, 0, 73, 69, 78, 68, 174, 66, 96, 130,
];

/// The tiny PNG, written to a temporary file for the file input.
fn tiny_png() -> std::path::PathBuf {
    let bytes = TINY_PNG;
    let path =
        std::env::temp_dir().join(format!("cms-admin-{}.png", uuid::Uuid::now_v7().simple()));
    std::fs::write(&path, bytes).unwrap();
    path
}

async fn a_post_is_made_with_every_kind_of_field_and_published(url: String) {
    let app = demo_app(&url).await;
    let (ada, _) = first_owner(&app).await;
    let ui = Ui::start(app, "doc-create").await;
    ui.sign_in_as(&ada).await;

    // The author first, through the form.
    ui.open("/admin/documents/author/new").await;
    ui.fill("Name", "Grace Hopper").await;
    ui.screenshot("author").await;
    ui.click("Publish").await;
    ui.see("Published.").await;
    let author = saved_id(&ui, "author").await;

    ui.open("/admin/documents/post/new").await;
    ui.fill("Title", "Hello, World!").await;
    ui.click("Generate").await;
    see_value(&ui, "Slug", "hello-world").await;
    ui.fill("Author", "grace").await;
    ui.click("Grace Hopper").await;
    ui.find(".ref-chosen a").await;
    let png = tiny_png();
    ui.control("Upload Cover image")
        .await
        .send_keys(png.to_str().unwrap())
        .await
        .unwrap();
    ui.see("Uploaded").await;
    ui.find(".doc-asset-preview img").await;
    ui.fill("Alt text for Cover image", "A tiny square").await;
    // Tags are chips: a comma or Enter adds one.
    ui.fill("Tags", "rust,cms\u{E007}").await;
    // The body is written as text: "## " starts a heading, Enter a new paragraph.
    let body = ui.find(".rt-surface[aria-label='Body']").await;
    ui.press(&body).await;
    body.send_keys("## Intro\u{E007}Hello there").await.unwrap();
    ui.see("Unsaved changes").await;
    ui.screenshot("filled").await;
    ui.click("Publish").await;
    ui.see("Published.").await;
    ui.screenshot("published").await;
    let id = saved_id(&ui, "post").await;

    let (status, doc) = fetch(&ui.app, &ada, &id).await;
    assert_eq!(status, StatusCode::OK);
    let published = &doc["publishedData"];
    assert_eq!(published["title"], "Hello, World!");
    assert_eq!(published["slug"], json!({"current": "hello-world"}));
    assert_eq!(published["author"], json!({"_ref": author}));
    assert_eq!(published["tags"], json!(["rust", "cms"]));
    let cover = published["cover"].as_object().unwrap();
    assert_eq!(cover.len(), 2, "{published}");
    assert_eq!(cover["alt"], "A tiny square");
    assert!(cover["asset"]["_ref"].is_string(), "{published}");
    let body = published["body"].as_array().unwrap();
    assert_eq!(body.len(), 2);
    assert_eq!(body[0]["_type"], "block");
    assert_eq!(body[0]["style"], "h2");
    assert_eq!(body[1]["style"], "normal");
    assert_eq!(body[1]["children"][0]["text"], "Hello there");
    assert_eq!(body[1]["children"][0]["_type"], "span");
    assert_eq!(body[1]["children"][0]["marks"], json!([]));
    assert_eq!(body[1]["markDefs"], json!([]));
    assert!(body[0]["_key"].is_string() && body[1]["children"][0]["_key"].is_string());
    let keys: Vec<&String> = published.as_object().unwrap().keys().collect();
    assert_eq!(
        keys.len(),
        6,
        "only the fields filled in are stored: {published}"
    );
    assert_eq!(doc["draftData"], doc["publishedData"]);
    // The page shows the stored copy: published, the chosen author by name.
    ui.see("Revision 1").await;
    ui.find(".badge.published").await;
    let _ = std::fs::remove_file(png);
    ui.stop().await;
}

async fn publishing_without_a_required_field_shows_the_issue_there(url: String) {
    let app = demo_app(&url).await;
    let (ada, _) = first_owner(&app).await;
    let ui = Ui::start(app, "doc-required").await;
    ui.sign_in_as(&ada).await;
    ui.open("/admin/documents/post/new").await;
    // Required is said to screen readers by the control, not only by the asterisk.
    let required = ui
        .control("Title")
        .await
        .attr("aria-required")
        .await
        .unwrap();
    assert_eq!(required.as_deref(), Some("true"));
    let optional = ui
        .control("Excerpt")
        .await
        .attr("aria-required")
        .await
        .unwrap();
    assert_eq!(optional, None);
    ui.fill("Excerpt", "A post without a title").await;
    // A draft may be incomplete: it is saved, with a warning at the field.
    ui.click("Save draft").await;
    ui.see("must be fixed before publishing").await;
    let id = saved_id(&ui, "post").await;
    ui.find("[data-field='title'].warned").await;
    ui.screenshot("draft-warning").await;
    ui.click("Publish").await;
    let title = ui.find("[data-field='title'].invalid").await;
    // The message at the field names it as the form does (its title), not by its path.
    let said = ui.find("[data-field='title'].invalid .field-error").await;
    assert_eq!(said.text().await.unwrap(), "Title is required");
    assert!(title.text().await.unwrap().contains("Title is required"));
    let focused = ui
        .eval(
            "return document.activeElement && document.activeElement.name",
            vec![],
        )
        .await;
    assert_eq!(focused, json!("title"));
    ui.screenshot("publish-refused").await;
    let (_, doc) = fetch(&ui.app, &ada, &id).await;
    assert!(doc.get("publishedData").is_none(), "{doc}");
    assert_eq!(doc["draftData"]["excerpt"], "A post without a title");
    ui.stop().await;
}

fn article_schemas() -> Vec<cms::core::schema::Schema> {
    parse_schemas(&json!([
        { "type": "document", "name": "article", "title": "Article",
          "fields": [
            { "name": "title", "type": "string", "title": "Title", "required": true },
            { "name": "seo", "type": "object", "title": "SEO", "fields": [
                { "name": "description", "type": "text", "title": "Description", "maxLength": 10 }
            ] },
            { "name": "tags", "type": "array", "title": "Tags", "of": [{ "type": "string", "maxLength": 5 }] },
            { "name": "category", "type": "string", "title": "Category", "options": ["news", "blog"] },
            { "name": "featured", "type": "boolean", "title": "Featured" },
            { "name": "rating", "type": "number", "title": "Rating", "min": 1, "max": 5 },
            { "name": "extra", "type": "json", "title": "Extra" }
          ] }
    ]))
    .unwrap()
}

/// Issues inside objects and arrays land at their fields; invalid JSON is refused in place.
async fn nested_issues_and_json_are_shown_at_their_fields(url: String) {
    let app = TestApp::custom(config_for(&url), |b| b.schemas(article_schemas())).await;
    let (ada, _) = first_owner(&app).await;
    let ui = Ui::start(app, "doc-nested").await;
    ui.sign_in_as(&ada).await;
    ui.open("/admin/documents/article/new").await;
    ui.fill("Title", "Nested").await;
    ui.fill("Description", "far too long for it").await;
    ui.fill("Tags", "ok,toolong,").await;
    ui.control("Category")
        .await
        .select_by_value("news")
        .await
        .unwrap();
    ui.control("Featured").await.click().await.unwrap();
    ui.fill("Rating", "3").await;
    ui.fill("Extra", "{bad").await;
    ui.click("Save draft").await;
    ui.see("Not valid JSON").await;
    ui.find("[data-field='extra'].invalid").await;
    // Nothing was sent.
    assert!(
        ui.client()
            .current_url()
            .await
            .unwrap()
            .path()
            .ends_with("/new")
    );
    ui.fill("Extra", "{\"a\": 1}").await;
    ui.click("Save draft").await;
    ui.see("must be fixed before publishing").await;
    let id = saved_id(&ui, "article").await;
    ui.find("[data-field='description'].warned").await;
    ui.find("[data-field='tags'].warned").await;
    ui.click("Publish").await;
    ui.find("[data-field='description'].invalid").await;
    ui.find("[data-field='tags'].invalid").await;
    let focused = ui
        .eval(
            "return document.activeElement && document.activeElement.name",
            vec![],
        )
        .await;
    assert_eq!(focused, json!("description"));
    ui.screenshot("nested-issues").await;
    let (_, doc) = fetch(&ui.app, &ada, &id).await;
    assert!(doc.get("publishedData").is_none(), "{doc}");
    assert_eq!(
        doc["draftData"],
        json!({"title": "Nested", "seo": {"description": "far too long for it"},
               "tags": ["ok", "toolong"], "category": "news", "featured": true,
               "rating": 3, "extra": {"a": 1}})
    );
    ui.stop().await;
}

async fn a_revision_conflict_is_reloaded_or_overwritten(url: String) {
    let app = demo_app(&url).await;
    let (ada, _) = first_owner(&app).await;
    let doc = create(&app, &ada, "post", json!({"title": "Original"}), false).await;
    let id = doc["id"].as_str().unwrap().to_string();
    let ui = Ui::start(app, "doc-conflict").await;
    ui.sign_in_as(&ada).await;
    let path = format!("/admin/documents/post/{id}");
    ui.open(&path).await;
    // Someone else saves while the page is open.
    update(&ui.app, &ada, &id, json!({"title": "Theirs"})).await;
    ui.fill("Title", "Mine").await;
    ui.click("Save draft").await;
    ui.see("Someone else changed this document").await;
    ui.screenshot("conflict").await;
    ui.click("Reload").await;
    see_value(&ui, "Title", "Theirs").await;
    ui.see("Revision 2").await;

    update(&ui.app, &ada, &id, json!({"title": "Theirs again"})).await;
    ui.fill("Title", "Mine").await;
    ui.click("Save draft").await;
    ui.see("Someone else changed this document").await;
    ui.click("Overwrite").await;
    ui.see("Draft saved.").await;
    ui.see("Revision 4").await;
    let (_, stored) = fetch(&ui.app, &ada, &id).await;
    assert_eq!(stored["draftData"]["title"], "Mine");
    assert_eq!(stored["_meta"]["revision"], 4);
    ui.screenshot("overwritten").await;

    // The assistant panel edits the same form through the shared open document.
    let shared = ui
        .eval(
            "const m = await import(document.body.dataset.assets + '/js/workspace.js'); const d = m.openedDocument(); d.patch({ excerpt: 'From the assistant' }); const unsaved = document.querySelector('.dirty-note').textContent; const before = d.revision(); const saved = await d.saveDraft({ expectedRevision: before }); return [d.collection, d.id, unsaved, before, saved._meta.revision, d.data().title, d.data().excerpt];",
            vec![],
        )
        .await;
    assert_eq!(
        shared,
        json!([
            "post",
            id,
            "Unsaved changes",
            4,
            5,
            "Mine",
            "From the assistant"
        ])
    );
    see_value(&ui, "Excerpt", "From the assistant").await;
    let (_, stored) = fetch(&ui.app, &ada, &id).await;
    assert_eq!(stored["draftData"]["excerpt"], "From the assistant");
    ui.stop().await;
}

async fn an_older_version_is_compared_and_restored(url: String) {
    let app = demo_app(&url).await;
    let (ada, _) = first_owner(&app).await;
    let doc = create(
        &app,
        &ada,
        "post",
        json!({"title": "First", "tags": ["a"]}),
        false,
    )
    .await;
    let id = doc["id"].as_str().unwrap().to_string();
    update(
        &app,
        &ada,
        &id,
        json!({"title": "Second", "excerpt": "New"}),
    )
    .await;
    let ui = Ui::start(app, "doc-history").await;
    ui.sign_in_as(&ada).await;
    ui.open(&format!("/admin/documents/post/{id}")).await;
    ui.click("History").await;
    ui.click("Version 1 · Draft saved").await;
    ui.see("Version 1 compared with the current draft").await;
    let rows = ui
        .eval(
            "const all = (r, css) => [...r.querySelectorAll(css)].map(e => e.textContent).join('|');
             return [...document.querySelectorAll('table.diff tbody tr')].map(r => [r.dataset.field, r.querySelector('.badge').textContent, all(r, 'del'), all(r, 'ins')])",
            vec![],
        )
        .await;
    assert_eq!(
        rows,
        json!([
            ["title", "Changed", "First", "Second"],
            ["excerpt", "Added", "", "New"],
            ["tags", "Removed", "[\n \"a\"\n]", ""]
        ])
    );
    ui.screenshot("diff").await;
    ui.click("Restore version 1").await;
    ui.click("Restore").await;
    ui.see("Version 1 restored into the draft.").await;
    see_value(&ui, "Title", "First").await;
    ui.see("Revision 3").await;
    let (_, stored) = fetch(&ui.app, &ada, &id).await;
    assert_eq!(
        stored["draftData"],
        json!({"title": "First", "tags": ["a"]})
    );
    ui.screenshot("restored").await;
    ui.stop().await;
}

pub(super) async fn row_titles(ui: &Ui) -> Vec<String> {
    let titles = ui
        .eval(
            "return [...document.querySelectorAll('.document-list tbody tr td.title-cell')].map(td => td.textContent)",
            vec![],
        )
        .await;
    serde_json::from_value(titles).unwrap()
}

/// Waits for the list to say `summary` (its count line) and returns the rows' titles.
async fn list_shows(ui: &Ui, summary: &str) -> Vec<String> {
    ui.see(summary).await;
    ui.ready().await;
    row_titles(ui).await
}

async fn the_list_searches_filters_sorts_and_pages_in_the_url(url: String) {
    let app = demo_app(&url).await;
    let (ada, _) = first_owner(&app).await;
    for i in 1..=30 {
        let word = if i % 5 == 0 { "Alpha" } else { "Beta" };
        // Every third is published; the 6th then gets unpublished changes.
        let mut data = json!({"title": format!("{word} post {i:02}")});
        if i == 7 {
            // A word only its body holds: the demo post's body is searchable.
            data["body"] = json!([{"_type": "block", "_key": "b1", "markDefs": [],
                "children": [{"_type": "span", "_key": "s1", "text": "A zebra crossing."}]}]);
        }
        let doc = create(&app, &ada, "post", data, i % 3 == 0).await;
        if i == 6 {
            update(
                &app,
                &ada,
                doc["id"].as_str().unwrap(),
                json!({"title": "Beta post 06 edited"}),
            )
            .await;
        }
    }
    let ui = Ui::start(app, "doc-list").await;
    ui.sign_in_as(&ada).await;
    ui.open("/admin/documents/post?sort=title").await;
    let titles = list_shows(&ui, "30 documents").await;
    assert_eq!(titles.len(), 20);
    assert_eq!(titles[0], "Alpha post 05");
    ui.see("Page 1 of 2").await;
    ui.see("Published, with unpublished changes").await;
    ui.screenshot("page-1").await;
    ui.click("Next").await;
    ui.see("Page 2 of 2").await;
    let titles = row_titles(&ui).await;
    assert_eq!(titles.len(), 10);
    assert_eq!(titles[9], "Beta post 29");
    let at = ui.client().current_url().await.unwrap();
    assert_eq!(at.query(), Some("sort=title&page=2"));
    // A reload shows the same page.
    ui.client().refresh().await.unwrap();
    ui.ready().await;
    ui.see("Page 2 of 2").await;
    assert_eq!(row_titles(&ui).await[9], "Beta post 29");

    // Search (full-text: the demo post has searchable fields), then narrow to published, then
    // sort.
    ui.fill("Search", "alpha").await;
    let titles = list_shows(&ui, "6 documents matching “alpha”").await;
    assert_eq!(titles[0], "Alpha post 05");
    ui.control("Status")
        .await
        .select_by_value("published")
        .await
        .unwrap();
    let titles = list_shows(&ui, "2 documents matching").await;
    assert_eq!(titles, ["Alpha post 15", "Alpha post 30"]);
    ui.control("Sort")
        .await
        .select_by_value("-title")
        .await
        .unwrap();
    for _ in 0..200 {
        if row_titles(&ui).await == ["Alpha post 30", "Alpha post 15"] {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    assert_eq!(row_titles(&ui).await, ["Alpha post 30", "Alpha post 15"]);
    ui.screenshot("searched").await;
    let at = ui.client().current_url().await.unwrap();
    assert_eq!(at.query(), Some("q=alpha&status=published&sort=-title"));
    ui.client().refresh().await.unwrap();
    ui.ready().await;
    assert_eq!(row_titles(&ui).await, ["Alpha post 30", "Alpha post 15"]);
    assert_eq!(value_of(&ui, "Search").await, "alpha");
    assert_eq!(value_of(&ui, "Status").await, "published");
    // Drafts only, no search: the list endpoint's status filter.
    ui.open("/admin/documents/post?status=draft").await;
    ui.see("20 documents").await;
    // Back returns to the searched list.
    ui.client().back().await.unwrap();
    ui.ready().await;
    ui.see("2 documents matching").await;
    // The demo post has searchable fields: the box searches them all (full-text `search`), so
    // a word only a body holds finds its post.
    ui.open("/admin/documents/post").await;
    ui.fill("Search", "zebra").await;
    let titles = list_shows(&ui, "1 document matching “zebra”").await;
    assert_eq!(titles, ["Beta post 07"]);
    ui.stop().await;
}

async fn a_singleton_opens_on_its_document(url: String) {
    let app = demo_app(&url).await;
    let (ada, _) = first_owner(&app).await;
    let ui = Ui::start(app, "doc-singleton").await;
    ui.sign_in_as(&ada).await;
    ui.client()
        .goto(&ui.url("/admin/documents/siteSettings"))
        .await
        .unwrap();
    let id = saved_id(&ui, "siteSettings").await;
    ui.ready().await;
    ui.fill("Site name", "My site").await;
    // Ctrl+S saves the draft.
    ui.control("Site name")
        .await
        .send_keys("\u{E009}s")
        .await
        .unwrap();
    ui.see("Draft saved.").await;
    // No delete for the one document.
    assert_eq!(
        ui.eval("return [...document.querySelectorAll('.document-actions button')].map(b => b.textContent)", vec![]).await,
        json!(["Save draft", "Publish"])
    );
    ui.screenshot("singleton").await;
    let (_, doc) = fetch(&ui.app, &ada, &id).await;
    assert_eq!(doc["draftData"]["siteName"], "My site");
    ui.stop().await;
}

fn ruled_schemas() -> Vec<cms::core::schema::Schema> {
    parse_schemas(&json!([
        { "type": "document", "name": "deal", "title": "Deal",
          "fields": [
            { "name": "title", "type": "string", "title": "Title" },
            { "name": "secret", "type": "string", "title": "Secret",
              "access": { "read": ["owner"], "update": ["owner"] } },
            { "name": "price", "type": "number", "title": "Price", "access": { "update": ["owner"] } }
          ] }
    ]))
    .unwrap()
}

async fn field_rules_and_capabilities_shape_the_form(url: String) {
    let app = TestApp::custom(config_for(&url), |b| b.schemas(ruled_schemas())).await;
    let (ada, _) = first_owner(&app).await;
    let bob = member(&app, &ada, "Bob", "bob@example.com", "editor").await;
    let carol = member(&app, &ada, "Carol", "carol@example.com", "viewer").await;
    let doc = create(
        &app,
        &ada,
        "deal",
        json!({"title": "Big deal", "secret": "42", "price": 100}),
        false,
    )
    .await;
    let id = doc["id"].as_str().unwrap().to_string();
    let ui = Ui::start(app, "doc-access").await;
    let path = format!("/admin/documents/deal/{id}");

    // The editor: no secret field at all, the price read-only, the title editable.
    ui.sign_in_as(&bob).await;
    ui.open(&path).await;
    ui.see("Price").await;
    assert!(!ui.main_text().await.contains("Secret"));
    assert_eq!(
        ui.eval(
            "return document.querySelectorAll('[name=secret]').length",
            vec![]
        )
        .await,
        json!(0)
    );
    let price = ui.control("Price").await;
    assert_eq!(
        price.prop("readOnly").await.unwrap().as_deref(),
        Some("true")
    );
    ui.fill("Title", "Bigger deal").await;
    ui.screenshot("editor").await;
    ui.click("Save draft").await;
    ui.see("Draft saved.").await;
    let (_, stored) = fetch(&ui.app, &ada, &id).await;
    assert_eq!(
        stored["draftData"],
        json!({"title": "Bigger deal", "secret": "42", "price": 100})
    );

    // The viewer: everything read-only, no save or publish.
    ui.sign_in_as(&carol).await;
    ui.open(&path).await;
    ui.see("Bigger deal").await;
    let title = ui.control("Title").await;
    assert_eq!(
        title.prop("readOnly").await.unwrap().as_deref(),
        Some("true")
    );
    assert_eq!(
        ui.eval(
            "return document.querySelectorAll('.document-actions button').length",
            vec![]
        )
        .await,
        json!(0)
    );
    ui.screenshot("viewer").await;
    ui.open("/admin/documents/deal").await;
    ui.see("1 document").await;
    assert_eq!(
        ui.eval(
            "return [...document.querySelectorAll('main a')].some(a => a.textContent === 'New')",
            vec![]
        )
        .await,
        json!(false)
    );
    ui.stop().await;
}

/// A plugin with a field editor for `rating` fields and a document action, both custom
/// elements served by its own public routes.
struct Acme;

const RATING_JS: &str = r#"
class AcmeRating extends HTMLElement {
  set value(v) { this._value = v; this.draw(); }
  get value() { return this._value; }
  connectedCallback() { this.draw(); }
  draw() {
    this.replaceChildren();
    const shown = document.createElement("span");
    shown.className = "stars";
    shown.textContent = `Stars: ${this._value?.stars ?? 0}`;
    const more = document.createElement("button");
    more.type = "button";
    more.textContent = "One more star";
    more.addEventListener("click", () => {
      const next = { stars: (this._value?.stars ?? 0) + 1 };
      this.value = next;
      this.dispatchEvent(new CustomEvent("change", { detail: next, bubbles: true }));
    });
    this.append(shown, more);
  }
}
customElements.define("acme-rating", AcmeRating);
"#;

const SHARE_JS: &str = r#"
class AcmeShare extends HTMLElement {
  connectedCallback() {
    const p = document.createElement("p");
    p.textContent = `Sharing ${this.document.draftData.title} (${this.document.id})`;
    this.append(p);
  }
}
customElements.define("acme-share", AcmeShare);
"#;

impl Plugin for Acme {
    fn id(&self) -> &str {
        "acme"
    }

    fn register(&self, parts: &mut PluginParts) {
        parts.schema_json(json!({"type": "object", "name": "rating",
            "fields": [{"name": "stars", "type": "number"}]}));
        parts.schema_json(
            json!({"type": "document", "name": "review", "title": "Review",
            "fields": [{"name": "title", "type": "string", "title": "Title"},
                       {"name": "rating", "type": "rating", "title": "Rating"}]}),
        );
        let js = |body: &'static str| {
            move || async move { ([(header::CONTENT_TYPE, "text/javascript")], body) }
        };
        parts.route(PluginRoute::new(
            "rating-js",
            Method::GET,
            "/acme/rating.js",
            RequiredCapabilities::Public,
            js(RATING_JS),
        ));
        parts.route(PluginRoute::new(
            "share-js",
            Method::GET,
            "/acme/share.js",
            RequiredCapabilities::Public,
            js(SHARE_JS),
        ));
        parts.field_component(
            "rating",
            Component::new("acme-rating", "/api/acme/rating.js"),
        );
        parts.document_action(
            "share",
            "Share",
            Component::new("acme-share", "/api/acme/share.js"),
            Some(vec!["review".into()]),
        );
    }
}

async fn a_plugin_field_editor_and_document_action_are_used(url: String) {
    let app = TestApp::custom(config_for(&url), |b| b.plugin(Acme)).await;
    let (ada, _) = first_owner(&app).await;
    let doc = create(
        &app,
        &ada,
        "review",
        json!({"title": "Good", "rating": {"stars": 2}}),
        false,
    )
    .await;
    let id = doc["id"].as_str().unwrap().to_string();
    let ui = Ui::start(app, "doc-plugin").await;
    ui.sign_in_as(&ada).await;
    ui.open(&format!("/admin/documents/review/{id}")).await;
    ui.see("Stars: 2").await;
    ui.click("One more star").await;
    ui.see("Stars: 3").await;
    ui.see("Unsaved changes").await;
    ui.click("Save draft").await;
    ui.see("Draft saved.").await;
    let (_, stored) = fetch(&ui.app, &ada, &id).await;
    assert_eq!(stored["draftData"]["rating"], json!({"stars": 3}));
    ui.screenshot("field").await;
    ui.click("Share").await;
    ui.see(&format!("Sharing Good ({id})")).await;
    ui.screenshot("action").await;
    ui.click("Close").await;
    ui.stop().await;
}

async fn unpublish_schedule_and_delete(url: String) {
    let app = demo_app(&url).await;
    let (ada, _) = first_owner(&app).await;
    let doc = create(&app, &ada, "post", json!({"title": "Live"}), true).await;
    let id = doc["id"].as_str().unwrap().to_string();
    let ui = Ui::start(app, "doc-lifecycle").await;
    ui.sign_in_as(&ada).await;
    ui.open(&format!("/admin/documents/post/{id}")).await;
    ui.find(".document-meta .badge.published").await;
    ui.click("Unpublish").await;
    ui.see("Unpublished").await;
    ui.find(".document-meta .badge.draft").await;
    let (_, stored) = fetch(&ui.app, &ada, &id).await;
    assert!(stored.get("publishedData").is_none(), "{stored}");

    // A publish tomorrow: it shows as pending, and can be cancelled.
    ui.click("Schedule publish or unpublish").await;
    ui.control("Scheduled action")
        .await
        .select_by_value("publish")
        .await
        .unwrap();
    let run_at = ui.control("Run at").await;
    ui.eval(
        "const d = new Date(Date.now() + 86400000); const p = n => String(n).padStart(2, '0'); arguments[0].value = `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())}T${p(d.getHours())}:${p(d.getMinutes())}`;",
        vec![serde_json::to_value(&run_at).unwrap()],
    )
    .await;
    ui.click("Schedule").await;
    ui.see("Scheduled to publish on").await;
    ui.screenshot("scheduled").await;
    let res = ui
        .app
        .get(&format!("/api/documents/{id}/schedule"))
        .cookie(&ada)
        .send()
        .await;
    assert_eq!(res.body["data"]["action"], "publish", "{}", res.body);
    // The pending schedule is still there after a reload.
    ui.client().refresh().await.unwrap();
    ui.ready().await;
    ui.see("Scheduled to publish on").await;
    ui.click("Cancel schedule").await;
    ui.see("Schedule cancelled.").await;
    let res = ui
        .app
        .get(&format!("/api/documents/{id}/schedule"))
        .cookie(&ada)
        .send()
        .await;
    assert!(res.body["data"].is_null(), "{}", res.body);

    ui.click("Delete").await;
    ui.see("Delete this document?").await;
    ui.screenshot("confirm-delete").await;
    ui.click("Delete").await;
    ui.arrive("/admin/documents/post").await;
    ui.see("No posts yet.").await;
    let (status, _) = fetch(&ui.app, &ada, &id).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    ui.stop().await;
}

crate::admin_scenarios!(
    a_post_is_made_with_every_kind_of_field_and_published,
    publishing_without_a_required_field_shows_the_issue_there,
    nested_issues_and_json_are_shown_at_their_fields,
    a_revision_conflict_is_reloaded_or_overwritten,
    an_older_version_is_compared_and_restored,
    the_list_searches_filters_sorts_and_pages_in_the_url,
    a_singleton_opens_on_its_document,
    field_rules_and_capabilities_shape_the_form,
    a_plugin_field_editor_and_document_action_are_used,
    unpublish_schedule_and_delete,
);
