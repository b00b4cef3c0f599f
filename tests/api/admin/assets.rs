//! The asset library in the admin: uploads through the file input and by dropping files on the
//! page, search and the type filter, one asset's metadata, delete (refused while a document
//! uses the asset), the picker the document editor opens, and what a viewer is not offered.

use std::time::Duration;

use axum::http::StatusCode;
use fantoccini::Locator;
use fantoccini::key::Key;
use serde_json::{Value, json};

use super::Ui;
use crate::assets::uploaded;
use crate::people_support::{first_owner, member};
use crate::support::{Session, TestApp};

/// The names the library's grid shows, sorted.
const GRID_NAMES: &str = "return Array.from(document.querySelectorAll('.asset-grid .asset-card-name'), e => e.textContent).sort()";

/// Waits until `script` returns something other than null or false, and returns it.
pub(super) async fn until(ui: &Ui, script: &str, what: &str) -> Value {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
    loop {
        let value = ui.eval(script, vec![]).await;
        if !value.is_null() && value != json!(false) {
            return value;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "{what} never happened; the page shows: {}",
            ui.main_text().await
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Waits until the grid shows exactly `names` (in any order).
async fn grid_shows(ui: &Ui, names: &[&str]) {
    let mut want: Vec<&str> = names.to_vec();
    want.sort();
    let want = json!(want);
    let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
    loop {
        let shown = ui.eval(GRID_NAMES, vec![]).await;
        if shown == want {
            return;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "the grid shows {shown}, not {want}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Every asset of the session's organization, as the API lists them.
async fn stored_assets(app: &TestApp, session: &Session) -> Vec<Value> {
    let res = app
        .get("/api/assets?limit=100")
        .cookie(session)
        .send()
        .await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);
    res.body["data"].as_array().unwrap().clone()
}

async fn titled(app: &TestApp, session: &Session, name: &str, bytes: &[u8], title: &str) -> String {
    let res = crate::assets::upload(app, session, name, bytes, &[("title", title)]).await;
    assert_eq!(res.status, StatusCode::CREATED, "{}", res.body);
    res.body["data"]["id"].as_str().unwrap().to_string()
}

/// A real PNG of `width` x `height` pixels of one colour (stored, uncompressed deflate), so
/// the browser draws it and the screenshots show thumbnails.
pub(super) fn png(width: u32, height: u32, rgb: [u8; 3]) -> Vec<u8> {
    fn crc32(bytes: &[u8]) -> u32 {
        let mut crc = 0xffff_ffffu32;
        for &b in bytes {
            crc ^= u32::from(b);
            for _ in 0..8 {
                crc = if crc & 1 == 1 {
                    (crc >> 1) ^ 0xedb8_8320
                } else {
                    crc >> 1
                };
            }
        }
        !crc
    }
    fn chunk(out: &mut Vec<u8>, kind: &[u8], data: &[u8]) {
        out.extend_from_slice(&(data.len() as u32).to_be_bytes());
        let mut body = kind.to_vec();
        body.extend_from_slice(data);
        out.extend_from_slice(&body);
        out.extend_from_slice(&crc32(&body).to_be_bytes());
    }
    // Each row: filter byte 0 (none), then the pixels.
    let row: Vec<u8> = std::iter::once(0)
        .chain(rgb.iter().copied().cycle().take(3 * width as usize))
        .collect();
    let raw = row.repeat(height as usize);
    let mut zlib = vec![0x78, 0x01];
    let blocks: Vec<&[u8]> = raw.chunks(65535).collect();
    for (i, block) in blocks.iter().enumerate() {
        zlib.push(u8::from(i + 1 == blocks.len()));
        let len = block.len() as u16;
        zlib.extend_from_slice(&len.to_le_bytes());
        zlib.extend_from_slice(&(!len).to_le_bytes());
        zlib.extend_from_slice(block);
    }
    let (mut a, mut b) = (1u32, 0u32);
    for &byte in &raw {
        a = (a + u32::from(byte)) % 65521;
        b = (b + a) % 65521;
    }
    zlib.extend_from_slice(&((b << 16) | a).to_be_bytes());
    let mut header = Vec::new();
    header.extend_from_slice(&width.to_be_bytes());
    header.extend_from_slice(&height.to_be_bytes());
    header.extend_from_slice(&[8, 2, 0, 0, 0]);
    let mut out = vec![0x89, b'P', b'N', b'G', 0x0d, 0x0a, 0x1a, 0x0a];
    chunk(&mut out, b"IHDR", &header);
    chunk(&mut out, b"IDAT", &zlib);
    chunk(&mut out, b"IEND", &[]);
    out
}

pub(super) const TEAL: [u8; 3] = [0x1f, 0x8a, 0x8a];
const ORANGE: [u8; 3] = [0xe8, 0x8a, 0x2b];
const PLUM: [u8; 3] = [0x7a, 0x3b, 0x8f];

fn pdf() -> Vec<u8> {
    b"%PDF-1.4\n1 0 obj << /Type /Catalog >> endobj\ntrailer << /Root 1 0 R >>\n%%EOF\n".to_vec()
}

async fn uploads_arrive_by_file_input_and_by_drop(url: String) {
    let app = TestApp::start(&url).await;
    let (ada, _) = first_owner(&app).await;
    let picked = app.data_dir().join("picked.png");
    std::fs::create_dir_all(app.data_dir()).unwrap();
    std::fs::write(&picked, png(3, 2, TEAL)).unwrap();
    let ui = Ui::start(app, "assets-upload").await;
    ui.sign_in_as(&ada).await;
    ui.open("/admin/assets").await;
    ui.see("No files yet.").await;
    ui.screenshot("empty").await;

    // The file input, as a person choosing a file sends it.
    let input = ui.find(".asset-dropzone input[type=file]").await;
    input.send_keys(picked.to_str().unwrap()).await.unwrap();
    grid_shows(&ui, &["picked.png"]).await;
    ui.see("Uploaded").await;
    ui.screenshot("uploaded").await;

    // Two files dragged onto the page: the zone lights up while they hover, then both upload.
    let lit = ui
        .eval(
            "const [bytes, other] = arguments;
             const dt = new DataTransfer();
             dt.items.add(new File([new Uint8Array(bytes)], 'dropped.png', { type: 'image/png' }));
             dt.items.add(new File([new Uint8Array(other)], 'second.png', { type: 'image/png' }));
             window.assetDrop = dt;
             const zone = document.querySelector('.asset-dropzone');
             for (const type of ['dragenter', 'dragover']) {
               zone.dispatchEvent(new DragEvent(type, { dataTransfer: dt, bubbles: true, cancelable: true }));
             }
             return zone.classList.contains('is-dragging');",
            vec![json!(png(5, 4, ORANGE)), json!(png(5, 4, PLUM))],
        )
        .await;
    assert_eq!(
        lit,
        json!(true),
        "the drop zone is highlighted while dragging"
    );
    ui.screenshot("dragging").await;
    let lit = ui
        .eval(
            "const zone = document.querySelector('.asset-dropzone');
             zone.dispatchEvent(new DragEvent('drop', { dataTransfer: window.assetDrop, bubbles: true, cancelable: true }));
             return zone.classList.contains('is-dragging');",
            vec![],
        )
        .await;
    assert_eq!(lit, json!(false), "the highlight ends with the drop");
    grid_shows(&ui, &["dropped.png", "picked.png", "second.png"]).await;
    until(
        &ui,
        "return document.querySelectorAll('.asset-upload[data-state=done]').length === 2",
        "two upload lines saying done",
    )
    .await;
    ui.screenshot("dropped").await;

    // The API has all three, sniffed as PNG images with their dimensions.
    let stored = stored_assets(&ui.app, &ada).await;
    let mut names: Vec<&str> = stored
        .iter()
        .map(|a| a["filename"].as_str().unwrap())
        .collect();
    names.sort();
    assert_eq!(names, ["dropped.png", "picked.png", "second.png"]);
    let dropped = stored
        .iter()
        .find(|a| a["filename"] == "dropped.png")
        .unwrap();
    assert_eq!(dropped["mimeType"], "image/png");
    assert_eq!(
        (dropped["width"].clone(), dropped["height"].clone()),
        (json!(5), json!(4))
    );
    // The grid draws small derivatives, not the originals (CONTRACT.md section 18), over the
    // image's dominant colour.
    let thumbs = until(
        &ui,
        "const imgs = [...document.querySelectorAll('.asset-grid .asset-thumb img')];
         if (imgs.length !== 3 || !imgs.every(i => i.complete && i.naturalWidth > 0)) return null;
         return imgs.map(i => ({ src: i.getAttribute('src'), fill: i.parentElement.style.backgroundColor }));",
        "three thumbnails loaded",
    )
    .await;
    for thumb in thumbs.as_array().unwrap() {
        let src = thumb["src"].as_str().unwrap();
        assert!(
            src.starts_with("/media/") && src.ends_with(".png?w=400&h=400"),
            "{thumb}"
        );
        assert!(
            thumb["fill"].as_str().unwrap().starts_with("rgb("),
            "{thumb}"
        );
    }

    // The first file again: its line says the library had it, and nothing is added.
    let input = ui.find(".asset-dropzone input[type=file]").await;
    input.send_keys(picked.to_str().unwrap()).await.unwrap();
    let said = until(
        &ui,
        "const line = document.querySelector('.asset-upload[data-state=duplicate]');
         return line && line.textContent;",
        "an upload line saying the file was already there",
    )
    .await;
    let said = said.as_str().unwrap();
    assert!(
        said.contains("This file was already in the library: the existing asset is used."),
        "{said}"
    );
    ui.see("This file was already in the library").await;
    ui.screenshot("duplicate").await;
    grid_shows(&ui, &["dropped.png", "picked.png", "second.png"]).await;
    assert_eq!(stored_assets(&ui.app, &ada).await.len(), 3);
    ui.stop().await;
}

async fn a_refused_upload_says_why_on_its_own_line(url: String) {
    let mut config = crate::support::config_for(&url);
    config.assets.max_upload_bytes = 2048;
    let app = TestApp::with(config, None).await;
    let (ada, _) = first_owner(&app).await;
    let ui = Ui::start(app, "assets-upload-refused").await;
    ui.sign_in_as(&ada).await;
    ui.open("/admin/assets").await;
    // One file too large, one small: the large one fails alone, with the reason.
    ui.eval(
        "const [big, small] = arguments;
         const dt = new DataTransfer();
         dt.items.add(new File([new Uint8Array(big)], 'huge.png', { type: 'image/png' }));
         dt.items.add(new File([new Uint8Array(small)], 'small.png', { type: 'image/png' }));
         document.querySelector('.asset-dropzone')
           .dispatchEvent(new DragEvent('drop', { dataTransfer: dt, bubbles: true, cancelable: true }));",
        vec![json!(png(50, 50, PLUM)), json!(png(2, 2, TEAL))],
    )
    .await;
    grid_shows(&ui, &["small.png"]).await;
    let failed = until(
        &ui,
        "const line = document.querySelector('.asset-upload[data-state=failed]');
         return line && line.textContent;",
        "a failed upload line",
    )
    .await;
    let failed = failed.as_str().unwrap();
    assert!(
        failed.contains("huge.png") && failed.contains("Too large"),
        "{failed}"
    );
    ui.screenshot("too-large").await;
    assert_eq!(stored_assets(&ui.app, &ada).await.len(), 1);
    ui.stop().await;
}

async fn search_and_type_filter_narrow_the_grid(url: String) {
    let app = TestApp::start(&url).await;
    let (ada, _) = first_owner(&app).await;
    titled(
        &app,
        &ada,
        "harbour.png",
        &png(4, 4, ORANGE),
        "Harbour at dawn",
    )
    .await;
    let lake = crate::assets::upload(
        &app,
        &ada,
        "lake.png",
        &png(4, 4, PLUM),
        &[("title", "Mountain lake"), ("description", "Blue water")],
    )
    .await;
    assert_eq!(lake.status, StatusCode::CREATED, "{}", lake.body);
    titled(&app, &ada, "report.pdf", &pdf(), "Annual report").await;
    let ui = Ui::start(app, "assets-search").await;
    ui.sign_in_as(&ada).await;
    ui.open("/admin/assets").await;
    grid_shows(&ui, &["Annual report", "Harbour at dawn", "Mountain lake"]).await;
    ui.screenshot("all").await;

    // The title matches, case aside; so does the description.
    ui.fill("Search", "HARBOUR").await;
    grid_shows(&ui, &["Harbour at dawn"]).await;
    ui.screenshot("searched").await;
    ui.fill("Search", "water").await;
    grid_shows(&ui, &["Mountain lake"]).await;
    ui.control("Search").await.clear().await.unwrap();
    // `clear` fires no input event: a keystroke does.
    ui.control("Search")
        .await
        .send_keys(&format!("a{}", char::from(Key::Backspace)))
        .await
        .unwrap();
    grid_shows(&ui, &["Annual report", "Harbour at dawn", "Mountain lake"]).await;

    ui.control("Type")
        .await
        .select_by_value("file")
        .await
        .unwrap();
    grid_shows(&ui, &["Annual report"]).await;
    ui.screenshot("files-only").await;
    ui.control("Type")
        .await
        .select_by_value("image")
        .await
        .unwrap();
    grid_shows(&ui, &["Harbour at dawn", "Mountain lake"]).await;
    // The filter lives in the address: a reload keeps it.
    let at = ui.client().current_url().await.unwrap();
    assert_eq!(at.query(), Some("type=image"));
    ui.open("/admin/assets?type=image").await;
    grid_shows(&ui, &["Harbour at dawn", "Mountain lake"]).await;
    ui.stop().await;
}

async fn the_grid_pages_through_many_assets(url: String) {
    let app = TestApp::start(&url).await;
    let (ada, _) = first_owner(&app).await;
    for n in 1..=26 {
        titled(
            &app,
            &ada,
            &format!("a{n}.png"),
            // One colour each: the same bytes twice would be one asset.
            &png(2, 2, [n as u8, 0x8a, 0x8a]),
            &format!("Asset {n:02}"),
        )
        .await;
    }
    let ui = Ui::start(app, "assets-paging").await;
    ui.sign_in_as(&ada).await;
    ui.open("/admin/assets").await;
    ui.see("Page 1 of 2").await;
    let count = "return document.querySelectorAll('.asset-grid .asset-card').length";
    assert_eq!(ui.eval(count, vec![]).await, json!(24));
    ui.click("Next").await;
    // Newest first: the two oldest are on page two.
    grid_shows(&ui, &["Asset 01", "Asset 02"]).await;
    ui.see("Page 2 of 2").await;
    let at = ui.client().current_url().await.unwrap();
    assert_eq!(at.query(), Some("page=2"));
    ui.screenshot("page-two").await;
    ui.click("Previous").await;
    ui.see("Page 1 of 2").await;
    assert_eq!(ui.eval(count, vec![]).await, json!(24));
    ui.stop().await;
}

async fn metadata_is_edited_on_the_asset_page(url: String) {
    let app = TestApp::start(&url).await;
    let (ada, _) = first_owner(&app).await;
    let asset = uploaded(&app, &ada, "photo.png", &png(4, 3, TEAL)).await;
    let id = asset["id"].as_str().unwrap().to_string();
    let ui = Ui::start(app, "assets-metadata").await;
    ui.sign_in_as(&ada).await;
    ui.open("/admin/assets").await;
    ui.click("photo.png").await;
    ui.arrive(&format!("/admin/assets/{id}")).await;
    // The read-only facts.
    ui.see("image/png").await;
    ui.see("4 × 3 px").await;
    ui.see(asset["sha256"].as_str().unwrap()).await;
    ui.screenshot("asset").await;

    ui.fill("Title", "Harbour at dawn").await;
    ui.fill("Description", "Boats leaving at first light").await;
    ui.fill("Alt text", "Fishing boats in a grey harbour").await;
    ui.fill("Credit line", "Photo: Ada").await;
    ui.click("Save").await;
    ui.see("Metadata saved.").await;
    let heading = ui.find("main h1").await.text().await.unwrap();
    assert_eq!(heading, "Harbour at dawn");
    ui.screenshot("saved").await;

    let stored = ui
        .app
        .get(&format!("/api/assets/{id}"))
        .cookie(&ada)
        .send()
        .await;
    assert_eq!(stored.status, StatusCode::OK, "{}", stored.body);
    let data = &stored.body["data"];
    assert_eq!(data["title"], "Harbour at dawn");
    assert_eq!(data["description"], "Boats leaving at first light");
    assert_eq!(data["alt"], "Fishing boats in a grey harbour");
    assert_eq!(data["creditLine"], "Photo: Ada");
    // Emptying a field clears it.
    ui.fill("Credit line", "").await;
    ui.click("Save").await;
    until(
        &ui,
        "return document.querySelectorAll('.notice.success').length >= 2",
        "a second save",
    )
    .await;
    let stored = ui
        .app
        .get(&format!("/api/assets/{id}"))
        .cookie(&ada)
        .send()
        .await;
    assert!(
        stored.body["data"]["creditLine"].is_null() || stored.body["data"]["creditLine"] == "",
        "{}",
        stored.body
    );
    ui.stop().await;
}

async fn a_used_asset_is_not_deleted_an_unused_one_is(url: String) {
    let app = TestApp::start(&url).await;
    let (ada, _) = first_owner(&app).await;
    let used = uploaded(&app, &ada, "used.png", &png(2, 2, ORANGE)).await;
    let spare = uploaded(&app, &ada, "spare.png", &png(2, 2, PLUM)).await;
    let (used_id, spare_id) = (
        used["id"].as_str().unwrap().to_string(),
        spare["id"].as_str().unwrap().to_string(),
    );
    let post = app
        .post(
            "/api/documents",
            json!({"type": "post", "data": {"title": "Hello harbour",
                   "cover": {"asset": {"_ref": used_id}}}}),
        )
        .cookie(&ada)
        .send()
        .await;
    assert_eq!(post.status, StatusCode::CREATED, "{}", post.body);
    let post_id = post.body["data"]["id"].as_str().unwrap().to_string();
    let post_href = format!("/admin/documents/post/{post_id}");

    let ui = Ui::start(app, "assets-delete").await;
    ui.sign_in_as(&ada).await;
    ui.open("/admin/assets").await;
    ui.see("Used in 1").await;
    ui.open(&format!("/admin/assets/{used_id}")).await;
    // The page lists the post, linked to its editor.
    ui.find(&format!(".asset-references a[href='{post_href}']"))
        .await;
    ui.see("Hello harbour").await;
    ui.click("Delete asset").await;
    ui.find("dialog[open]").await;
    ui.screenshot("confirm").await;
    ui.click("Delete").await;
    // Refused: the reason, and the post to change first, with a link.
    let refusal = ui.find(".asset-refusal").await;
    let text = refusal.text().await.unwrap();
    assert!(
        text.contains("Not deleted") && text.contains("Hello harbour"),
        "{text}"
    );
    ui.find(&format!(".asset-refusal a[href='{post_href}']"))
        .await;
    ui.screenshot("refused").await;
    let still = ui
        .app
        .get(&format!("/api/assets/{used_id}"))
        .cookie(&ada)
        .send()
        .await;
    assert_eq!(still.status, StatusCode::OK, "{}", still.body);

    // Cancelling the question keeps the asset; confirming deletes it and goes back.
    ui.open(&format!("/admin/assets/{spare_id}")).await;
    ui.see("No document uses this asset.").await;
    ui.click("Delete asset").await;
    ui.find("dialog[open]").await;
    ui.click("Cancel").await;
    let kept = ui
        .app
        .get(&format!("/api/assets/{spare_id}"))
        .cookie(&ada)
        .send()
        .await;
    assert_eq!(kept.status, StatusCode::OK);
    ui.click("Delete asset").await;
    ui.find("dialog[open]").await;
    ui.click("Delete").await;
    ui.arrive("/admin/assets").await;
    grid_shows(&ui, &["used.png"]).await;
    let gone = ui
        .app
        .get(&format!("/api/assets/{spare_id}"))
        .cookie(&ada)
        .send()
        .await;
    assert_eq!(gone.status, StatusCode::NOT_FOUND);
    ui.stop().await;
}

async fn bulk_delete_is_refused_whole_while_one_is_used(url: String) {
    let app = TestApp::start(&url).await;
    let (ada, _) = first_owner(&app).await;
    let used = uploaded(&app, &ada, "used.png", &png(2, 2, TEAL)).await;
    uploaded(&app, &ada, "spare.png", &png(2, 2, ORANGE)).await;
    let post = app
        .post(
            "/api/documents",
            json!({"type": "post", "data": {"title": "Hello",
                   "cover": {"asset": {"_ref": used["id"]}}}}),
        )
        .cookie(&ada)
        .send()
        .await;
    assert_eq!(post.status, StatusCode::CREATED, "{}", post.body);
    let ui = Ui::start(app, "assets-bulk").await;
    ui.sign_in_as(&ada).await;
    ui.open("/admin/assets").await;
    ui.find("[aria-label='Select used.png']")
        .await
        .click()
        .await
        .unwrap();
    ui.find("[aria-label='Select spare.png']")
        .await
        .click()
        .await
        .unwrap();
    ui.see("2 selected").await;
    ui.click("Delete selected").await;
    ui.click("Delete").await;
    // Nothing deleted; the used one is named and marked.
    ui.see("Nothing was deleted").await;
    ui.find(".asset-card.is-referenced").await;
    ui.screenshot("refused").await;
    assert_eq!(stored_assets(&ui.app, &ada).await.len(), 2);
    // Without it, the other goes.
    ui.find("[aria-label='Select used.png']")
        .await
        .click()
        .await
        .unwrap();
    ui.see("1 selected").await;
    ui.click("Delete selected").await;
    ui.click("Delete").await;
    grid_shows(&ui, &["used.png"]).await;
    let left = stored_assets(&ui.app, &ada).await;
    assert_eq!(left.len(), 1);
    assert_eq!(left[0]["filename"], "used.png");
    ui.stop().await;
}

/// Opens the picker on the current page; its answer lands in `window.picked` (`"pending"`
/// until then).
async fn open_picker(ui: &Ui, options: Value) {
    ui.eval(
        "window.picked = 'pending';
         import(document.body.dataset.assets + '/js/asset-picker.js')
           .then((m) => m.pickAsset(arguments[0]))
           .then((asset) => { window.picked = asset; });",
        vec![options],
    )
    .await;
    ui.find("dialog.asset-picker[open] .asset-picker-grid button")
        .await;
}

async fn picked(ui: &Ui) -> Value {
    until(
        ui,
        "return window.picked === 'pending' ? null : { value: window.picked }",
        "the picker's answer",
    )
    .await["value"]
        .clone()
}

async fn the_picker_resolves_to_the_chosen_asset(url: String) {
    let app = TestApp::start(&url).await;
    let (ada, _) = first_owner(&app).await;
    let harbour = titled(&app, &ada, "harbour.png", &png(4, 4, PLUM), "Harbour").await;
    titled(&app, &ada, "lake.png", &png(4, 4, TEAL), "Lake").await;
    titled(&app, &ada, "report.pdf", &pdf(), "Report").await;
    let ui = Ui::start(app, "assets-picker").await;
    ui.sign_in_as(&ada).await;
    ui.open("/admin").await;

    // For an image field: images only, searchable, chosen with the keyboard.
    open_picker(
        &ui,
        json!({"accept": ["image/*"], "title": "Choose a cover"}),
    )
    .await;
    ui.see("Choose a cover").await;
    let names = until(
        &ui,
        "const names = Array.from(document.querySelectorAll('.asset-picker-grid .asset-choice-name'), e => e.textContent).sort();
         return names.length === 2 ? names : null;",
        "two images in the picker",
    )
    .await;
    assert_eq!(names, json!(["Harbour", "Lake"]));
    ui.screenshot("picker").await;
    // An upload from inside the picker joins the list, with focus on it.
    let fresh = ui.app.data_dir().join("fresh.png");
    std::fs::write(&fresh, png(6, 4, ORANGE)).unwrap();
    ui.find("dialog.asset-picker input[type=file]")
        .await
        .send_keys(fresh.to_str().unwrap())
        .await
        .unwrap();
    let focused = until(
        &ui,
        "const names = document.querySelectorAll('.asset-picker-grid .asset-choice-name');
         return names.length === 3 ? document.activeElement.dataset.id : null;",
        "the uploaded image in the picker",
    )
    .await;
    let stored = stored_assets(&ui.app, &ada).await;
    let fresh = stored
        .iter()
        .find(|a| a["filename"] == "fresh.png")
        .unwrap();
    assert_eq!(focused, fresh["id"]);
    ui.screenshot("picker-uploaded").await;
    ui.fill("Search assets", "harb").await;
    until(
        &ui,
        "return document.querySelectorAll('.asset-picker-grid .asset-choice').length === 1",
        "the search to narrow the picker",
    )
    .await;
    let choice = ui.find(".asset-picker-grid .asset-choice").await;
    choice
        .send_keys(&char::from(Key::Enter).to_string())
        .await
        .unwrap();
    let chosen = picked(&ui).await;
    assert_eq!(chosen["id"], json!(harbour), "{chosen}");
    assert_eq!(chosen["mimeType"], "image/png");
    assert_eq!(
        ui.eval(
            "return document.querySelectorAll('dialog.asset-picker').length",
            vec![]
        )
        .await,
        json!(0),
        "the dialog is gone"
    );

    // Any type, by a click; then Escape cancels with null.
    open_picker(&ui, json!({})).await;
    until(
        &ui,
        "return document.querySelectorAll('.asset-picker-grid .asset-choice').length === 4",
        "all four assets in the picker",
    )
    .await;
    ui.client()
        .find(Locator::XPath(
            "//button[contains(@class, 'asset-choice')][.//span[normalize-space(.)='Report']]",
        ))
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
    let chosen = picked(&ui).await;
    assert_eq!(chosen["title"], "Report");
    open_picker(&ui, json!({"accept": "image/*"})).await;
    ui.find("dialog.asset-picker[open] input[type=search]")
        .await
        .send_keys(&char::from(Key::Escape).to_string())
        .await
        .unwrap();
    assert_eq!(picked(&ui).await, Value::Null);
    ui.stop().await;
}

async fn a_viewer_is_offered_neither_upload_nor_delete(url: String) {
    let app = TestApp::start(&url).await;
    let (ada, _) = first_owner(&app).await;
    let id = titled(&app, &ada, "harbour.png", &png(4, 4, ORANGE), "Harbour").await;
    let grace = member(&app, &ada, "Grace", "grace@example.com", "viewer").await;
    let ui = Ui::start(app, "assets-viewer").await;
    ui.sign_in_as(&grace).await;
    ui.open("/admin/assets").await;
    grid_shows(&ui, &["Harbour"]).await;
    let offered = ui
        .eval(
            "return ['.asset-dropzone', 'input[type=file]', '.asset-select', '.asset-selection']
               .filter((css) => document.querySelector(css))",
            vec![],
        )
        .await;
    assert_eq!(offered, json!([]));
    ui.screenshot("library").await;
    ui.open(&format!("/admin/assets/{id}")).await;
    ui.see("Harbour").await;
    let offered = ui
        .eval(
            "return {
               buttons: Array.from(document.querySelectorAll('main button'), b => b.textContent),
               editable: Array.from(document.querySelectorAll('main input, main textarea')).filter(c => !c.readOnly).length,
             }",
            vec![],
        )
        .await;
    assert_eq!(offered, json!({"buttons": [], "editable": 0}));
    ui.screenshot("asset").await;
    // The picker offers no upload either.
    open_picker(&ui, json!({})).await;
    // It asked what the viewer may do before deciding.
    ui.find("dialog.asset-picker[data-abilities]").await;
    let uploads = ui
        .eval(
            "return document.querySelectorAll('dialog.asset-picker input[type=file]').length",
            vec![],
        )
        .await;
    assert_eq!(uploads, json!(0));
    ui.stop().await;
}

crate::admin_scenarios!(
    uploads_arrive_by_file_input_and_by_drop,
    a_refused_upload_says_why_on_its_own_line,
    search_and_type_filter_narrow_the_grid,
    the_grid_pages_through_many_assets,
    metadata_is_edited_on_the_asset_page,
    a_used_asset_is_not_deleted_an_unused_one_is,
    bulk_delete_is_refused_whole_while_one_is_used,
    the_picker_resolves_to_the_chosen_asset,
    a_viewer_is_offered_neither_upload_nor_delete,
);
