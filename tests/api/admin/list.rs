//! The document list (issue 32, point 6): chosen columns (a reference by its title, an image
//! as a thumbnail), sortable headers, a page size, bulk publish and delete with a summary,
//! the "has unpublished changes" filter, and the first column named after the title field.

use axum::http::{Method, StatusCode};
use serde_json::{Value, json};

use super::Ui;
use super::documents::{TINY_PNG, create, demo_app, row_titles, update};
use crate::people_support::first_owner;

/// Waits until the list's rows are `expected` (it redraws after each request).
async fn rows_become(ui: &Ui, expected: &[&str]) {
    for _ in 0..400 {
        if row_titles(ui).await == expected {
            return;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    assert_eq!(row_titles(ui).await, expected);
}

/// The header cells' texts and `aria-sort`, after the selection column.
async fn headers(ui: &Ui) -> Value {
    ui.eval(
        "return [...document.querySelectorAll('.document-list thead th')].map(th => [th.textContent.replace(/[▲▼]/g, '').trim(), th.getAttribute('aria-sort')])",
        vec![],
    )
    .await
}

/// Ticks the checkbox `css` (a click, as a person does).
async fn tick(ui: &Ui, css: &str) {
    let el = ui.find(css).await;
    ui.press(&el).await;
}

/// The row of `title`'s checkbox.
fn row_box(ui_title: &str) -> String {
    format!(".document-list tbody tr input[aria-label='Select {ui_title}']")
}

async fn the_list_chooses_columns_sorts_pages_and_acts_in_bulk(url: String) {
    let app = demo_app(&url).await;
    let (ada, _) = first_owner(&app).await;
    let lovelace = create(&app, &ada, "author", json!({"name": "Ada Lovelace"}), true).await;
    let hopper = create(&app, &ada, "author", json!({"name": "Grace Hopper"}), true).await;
    let res = app
        .req(Method::POST, "/api/assets")
        .multipart(&[], Some(("file", "cover.png", TINY_PNG)))
        .cookie(&ada)
        .send()
        .await;
    assert_eq!(res.status, StatusCode::CREATED, "{}", res.body);
    let asset = res.body["data"].clone();
    create(
        &app,
        &ada,
        "post",
        json!({"title": "Post A", "author": {"_ref": lovelace["id"]}, "views": 10,
            "cover": {"asset": {"_ref": asset["id"]}, "alt": "A grey dot"}}),
        true,
    )
    .await;
    create(
        &app,
        &ada,
        "post",
        json!({"title": "Post B", "author": {"_ref": hopper["id"]}, "views": 30}),
        false,
    )
    .await;
    // A draft whose author does not exist: publishing it is refused.
    create(
        &app,
        &ada,
        "post",
        json!({"title": "Post D", "author": {"_ref": "no-such-author"}, "views": 5}),
        false,
    )
    .await;
    let c = create(
        &app,
        &ada,
        "post",
        json!({"title": "Post C", "views": 20}),
        true,
    )
    .await;
    update(
        &app,
        &ada,
        c["id"].as_str().unwrap(),
        json!({"title": "Post C", "views": 20, "tags": ["new"]}),
    )
    .await;
    for i in 1..=52 {
        create(
            &app,
            &ada,
            "post",
            json!({"title": format!("Filler {i:02}")}),
            false,
        )
        .await;
    }

    let ui = Ui::start(app, "list").await;
    ui.client().set_window_size(1400, 900).await.unwrap();
    ui.sign_in_as(&ada).await;

    // The authors' list is headed by their title field's title.
    ui.open("/admin/documents/author").await;
    ui.see("2 documents").await;
    assert_eq!(headers(&ui).await[0][0], "Name");

    // 20 a page by default; 50 when chosen, kept in the URL.
    ui.open("/admin/documents/post?sort=title").await;
    ui.see("56 documents").await;
    assert_eq!(row_titles(&ui).await.len(), 20);
    assert_eq!(headers(&ui).await[0], json!(["Title", "ascending"]));
    ui.control("Per page")
        .await
        .select_by_value("50")
        .await
        .unwrap();
    ui.see("Page 1 of 2").await;
    for _ in 0..200 {
        if row_titles(&ui).await.len() == 50 {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    assert_eq!(row_titles(&ui).await.len(), 50);
    let at = ui.client().current_url().await.unwrap();
    assert_eq!(at.query(), Some("sort=title&size=50"));

    // Narrowed to the three posts, then columns chosen: the author by name, the cover as a
    // thumbnail, the views.
    ui.fill("Search", "post").await;
    ui.see("4 documents matching").await;
    ui.click("Columns").await;
    for label in ["Author", "Cover image", "Views"] {
        let xpath = format!(
            "//details[contains(@class,'column-chooser')]//label[normalize-space(.)='{label}']/input"
        );
        let el = ui
            .client()
            .find(fantoccini::Locator::XPath(&xpath))
            .await
            .unwrap();
        ui.press(&el).await;
    }
    // The list redraws with the columns (and the thumbnail's asset read) once the request ends.
    let mut cells = Value::Null;
    for _ in 0..400 {
        cells = ui
        .eval(
            "const row = [...document.querySelectorAll('.document-list tbody tr')].find(r => r.querySelector('.title-cell').textContent === 'Post A');
             if (!row) return null;
             const img = row.querySelector('td[data-column=cover] img');
             return { author: row.querySelector('td[data-column=author]')?.textContent, views: row.querySelector('td[data-column=views]')?.textContent,
                      img: img && { src: img.getAttribute('src'), alt: img.alt, width: img.getAttribute('width'), loading: img.getAttribute('loading'), loaded: img.complete && img.naturalWidth > 0 } };",
            vec![],
        )
        .await;
        if cells["views"] == "10" && cells["img"]["loaded"] == true {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    assert_eq!(cells["author"], "Ada Lovelace", "{cells}");
    assert_eq!(cells["views"], "10", "{cells}");
    assert_eq!(
        cells["img"]["src"],
        format!("{}?w=96&h=96&fit=crop", asset["url"].as_str().unwrap()),
        "a small derivative, not the original: {cells}"
    );
    assert_eq!(cells["img"]["alt"], "A grey dot", "{cells}");
    assert_eq!(cells["img"]["width"], "48", "{cells}");
    assert_eq!(cells["img"]["loading"], "lazy", "{cells}");
    let at = ui.client().current_url().await.unwrap();
    let query = at.query().unwrap().to_string();
    assert!(query.contains("cols="), "{query}");
    for key in ["author", "cover", "views", "_status"] {
        assert!(query.contains(key), "{key} in {query}");
    }
    ui.screenshot("columns").await;
    // On a narrow phone the list reflows: nothing in the page scrolls sideways.
    ui.client().set_window_size(320, 800).await.unwrap();
    let wide = ui.sideways_overflow().await;
    assert_eq!(wide[0], json!(0), "the page overflows at 320 px: {wide}");
    ui.screenshot("narrow").await;
    ui.client().set_window_size(1400, 900).await.unwrap();

    // Sorted by a header: ascending, then descending.
    let views = "//th/button[normalize-space(text()[1])='Views']";
    let el = ui
        .client()
        .find(fantoccini::Locator::XPath(views))
        .await
        .unwrap();
    ui.press(&el).await;
    rows_become(&ui, &["Post D", "Post A", "Post C", "Post B"]).await;
    let th = headers(&ui).await;
    let views_header = th
        .as_array()
        .unwrap()
        .iter()
        .find(|h| h[0] == "Views")
        .unwrap()
        .clone();
    assert_eq!(views_header[1], "ascending", "{th}");
    let el = ui
        .client()
        .find(fantoccini::Locator::XPath(views))
        .await
        .unwrap();
    ui.press(&el).await;
    rows_become(&ui, &["Post B", "Post C", "Post A", "Post D"]).await;
    assert!(
        headers(&ui)
            .await
            .as_array()
            .unwrap()
            .contains(&json!(["Views", "descending"]))
    );

    // Has unpublished changes: never published (B, D) and published then edited (C).
    ui.control("Status")
        .await
        .select_by_value("changed")
        .await
        .unwrap();
    rows_become(&ui, &["Post B", "Post C", "Post D"]).await;

    // Three published at once: two are, one is refused, and the summary says which and why.
    tick(&ui, &row_box("Post B")).await;
    tick(&ui, &row_box("Post C")).await;
    tick(&ui, &row_box("Post D")).await;
    ui.see("3 selected").await;
    ui.screenshot("selected").await;
    ui.click("Publish selected").await;
    ui.see("2 published, 1 failed: Post D: ").await;
    let notice = ui.find(".notice.error").await.text().await.unwrap();
    assert!(notice.contains("Author"), "{notice}");
    rows_become(&ui, &["Post D"]).await;

    // Deleting asks first: cancelled, nothing goes; confirmed, the four posts go.
    ui.control("Status")
        .await
        .select_by_value("")
        .await
        .unwrap();
    rows_become(&ui, &["Post B", "Post C", "Post A", "Post D"]).await;
    tick(&ui, ".document-list thead input[type=checkbox]").await;
    ui.see("4 selected").await;
    ui.click("Delete selected").await;
    let text = ui.find("dialog[open]").await.text().await.unwrap();
    assert!(text.contains("Delete 4 documents?"), "{text}");
    assert!(text.contains("Post A"), "{text}");
    let cancel = ui.find("dialog[open] button[data-value='false']").await;
    ui.press(&cancel).await;
    assert_eq!(row_titles(&ui).await.len(), 4);
    ui.click("Delete selected").await;
    ui.find("dialog[open]").await;
    ui.click("Delete").await;
    ui.see("4 deleted").await;
    ui.see("No posts match.").await;
    let res = ui
        .app
        .get("/api/documents?type=post")
        .cookie(&ada)
        .send()
        .await;
    assert_eq!(res.body["pagination"]["total"], 52, "{}", res.body);
    ui.screenshot("deleted").await;
    ui.stop().await;
}

crate::admin_scenarios!(the_list_chooses_columns_sorts_pages_and_acts_in_bulk);
