//! An image field's own crop in the document editor (issue 30, point 2): four percent inputs
//! (typed or stepped with the arrow keys) and a rectangle dragged on the picture, three shapes
//! showing what the crop keeps, saved as the field's `crop` fractions beside its hotspot, and
//! removed again by "Reset crop".

use serde_json::{Value, json};

use super::Ui;
use super::assets::{TEAL, png, until};
use crate::assets::uploaded;
use crate::people_support::first_owner;
use crate::support::{Session, TestApp};

/// The cover image of a document's draft, as the API reads it.
async fn cover(app: &TestApp, session: &Session, id: &str) -> Value {
    let res = app
        .get(&format!("/api/documents/{id}"))
        .cookie(session)
        .send()
        .await;
    res.body["data"]["draftData"]["cover"].clone()
}

/// What each of the three shapes shows, in pixels of the 40 by 20 picture: the window of the
/// picture inside its box, read from where the picture is drawn (computed style).
const SHOWN: &str = "const views = [...document.querySelectorAll('.crop-shape-view')];
     if (views.length !== 3) return null;
     return views.map(v => { const i = v.querySelector('img'); const s = getComputedStyle(i);
       const scale = parseFloat(s.width) / 40;
       if (!(scale > 0)) return null;
       const x = -parseFloat(s.left) / scale, y = -parseFloat(s.top) / scale;
       return { shape: v.dataset.shape, left: parseFloat(s.left), top: parseFloat(s.top), width: parseFloat(s.width),
                x0: x, y0: y, x1: x + v.clientWidth / scale, y1: y + v.clientHeight / scale }; });";

/// Types `value` into the crop input labelled `label` (emptied first, as a person would).
async fn crop_input(ui: &Ui, label: &str, value: &str) {
    let input = ui.control(label).await;
    input.send_keys("\u{E009}a").await.unwrap();
    input.send_keys("\u{E003}").await.unwrap();
    input.send_keys(value).await.unwrap();
}

async fn an_image_field_crop_is_set_with_the_keyboard_and_reset(url: String) {
    let app = TestApp::start(&url).await;
    let (ada, _) = first_owner(&app).await;
    let asset = uploaded(&app, &ada, "wide.png", &png(40, 20, TEAL)).await;
    let hotspot = json!({"x": 0.9, "y": 0.5});
    let res = app
        .post(
            "/api/documents",
            json!({"type": "post", "data": {"title": "Harbour",
                   "cover": {"asset": {"_ref": asset["id"]}, "hotspot": hotspot}}}),
        )
        .cookie(&ada)
        .send()
        .await;
    let id = res.body["data"]["id"].as_str().unwrap().to_string();
    let ui = Ui::start(app, "field-crop").await;
    ui.sign_in_as(&ada).await;
    ui.open(&format!("/admin/documents/post/{id}")).await;
    ui.click("Crop for this use").await;
    ui.see("Not cropped: the whole picture is used.").await;
    let before = until(&ui, SHOWN, "the three shapes drawn").await;
    ui.screenshot("uncropped").await;

    // Typed, and one side stepped with the arrow key.
    crop_input(&ui, "Crop top", "10").await;
    crop_input(&ui, "Crop bottom", "20").await;
    crop_input(&ui, "Crop left", "25").await;
    let right = ui.control("Crop right").await;
    for _ in 0..5 {
        right.send_keys("\u{E013}").await.unwrap();
    }
    ui.see("Cropped: top 10%, right 5%, bottom 20%, left 25%.")
        .await;
    let box_at = ui
        .eval(
            "const b = document.querySelector('.crop-box').style; return [b.top, b.right, b.bottom, b.left];",
            vec![],
        )
        .await;
    assert_eq!(box_at, json!(["10%", "5%", "20%", "25%"]));
    // The shapes moved, and each shows only what the crop keeps (x from 10 to 38, y from 2
    // to 16 of the 40 by 20 picture), the focal point at the right as near as it can be.
    let after = until(&ui, SHOWN, "the shapes after the crop").await;
    assert_ne!(before, after, "the shapes follow the crop");
    for shape in after.as_array().unwrap() {
        let at = |k: &str| shape[k].as_f64().unwrap();
        assert!(
            at("x0") >= 10.0 - 0.01 && at("x1") <= 38.0 + 0.01,
            "{shape}"
        );
        assert!(at("y0") >= 2.0 - 0.01 && at("y1") <= 16.0 + 0.01, "{shape}");
        assert!(
            (at("x1") - 38.0).abs() < 0.01,
            "kept at the right edge, near the focal point: {shape}"
        );
    }
    // Before, the square showed the picture's full height, which the crop now cuts.
    let square = |list: &Value| {
        list.as_array()
            .unwrap()
            .iter()
            .find(|s| s["shape"] == "1:1")
            .unwrap()
            .clone()
    };
    assert!(square(&before)["y0"].as_f64().unwrap() < 1.0, "{before}");
    ui.screenshot("cropped").await;
    let axe = super::accessibility::axe_source();
    let violations = super::accessibility::serious_violations(&ui, &axe).await;
    assert!(violations.is_empty(), "the crop panel: {violations:#?}");

    ui.click("Save draft").await;
    ui.see("Draft saved.").await;
    let saved = cover(&ui.app, &ada, &id).await;
    assert_eq!(
        saved["crop"],
        json!({"top": 0.1, "right": 0.05, "bottom": 0.2, "left": 0.25}),
        "{saved}"
    );
    assert_eq!(saved["hotspot"], hotspot, "the hotspot stays: {saved}");

    // A crop that leaves nothing is refused at the input, and not saved. (The panel is drawn
    // again, open, with the saved document.)
    crop_input(&ui, "Crop bottom", "95").await;
    ui.see("Crop top and bottom together must stay under 100%.")
        .await;
    ui.click("Save draft").await;
    ui.see("Crop top and bottom together must stay under 100%.")
        .await;
    assert_eq!(
        cover(&ui.app, &ada, &id).await["crop"],
        saved["crop"],
        "nothing saved"
    );

    // Reset removes the crop from the value.
    ui.click("Reset crop").await;
    ui.see("Not cropped: the whole picture is used.").await;
    let cleared = ui
        .eval(
            "return [...document.querySelectorAll('.crop-inputs input')].map(i => i.value)",
            vec![],
        )
        .await;
    assert_eq!(cleared, json!(["0", "0", "0", "0"]));
    ui.click("Save draft").await;
    until(
        &ui,
        "return document.querySelectorAll('.notice.success').length >= 2",
        "a second save",
    )
    .await;
    let saved = cover(&ui.app, &ada, &id).await;
    assert!(saved.get("crop").is_none(), "{saved}");
    assert_eq!(saved["hotspot"], hotspot, "{saved}");
    ui.stop().await;
}

/// The rectangle's left edge dragged with a pointer to the middle of the picture.
async fn a_crop_edge_is_dragged_on_the_picture(url: String) {
    let app = TestApp::start(&url).await;
    let (ada, _) = first_owner(&app).await;
    let asset = uploaded(&app, &ada, "wide.png", &png(40, 20, TEAL)).await;
    let res = app
        .post(
            "/api/documents",
            json!({"type": "post", "data": {"title": "Harbour", "cover": {"asset": {"_ref": asset["id"]}}}}),
        )
        .cookie(&ada)
        .send()
        .await;
    let id = res.body["data"]["id"].as_str().unwrap().to_string();
    let ui = Ui::start(app, "field-crop-drag").await;
    ui.sign_in_as(&ada).await;
    ui.open(&format!("/admin/documents/post/{id}")).await;
    ui.click("Crop for this use").await;
    until(
        &ui,
        "const i = document.querySelector('.crop-picture'); return i && i.complete && i.naturalWidth > 0;",
        "the picture loaded",
    )
    .await;
    ui.eval(
        "const frame = document.querySelector('.crop-frame');
         const handle = frame.querySelector('[data-handle=w]');
         const f = frame.getBoundingClientRect(), h = handle.getBoundingClientRect();
         const at = (x, y) => ({ bubbles: true, pointerId: 1, button: 0, clientX: x, clientY: y });
         handle.dispatchEvent(new PointerEvent('pointerdown', at(h.left + h.width / 2, h.top + h.height / 2)));
         const x = f.left + frame.clientLeft + frame.clientWidth * 0.5, y = f.top + f.height / 2;
         frame.dispatchEvent(new PointerEvent('pointermove', at(x, y)));
         frame.dispatchEvent(new PointerEvent('pointerup', at(x, y)));",
        vec![],
    )
    .await;
    ui.see("Cropped: top 0%, right 0%, bottom 0%, left 50%.")
        .await;
    let left = ui.control("Crop left").await.prop("value").await.unwrap();
    assert_eq!(left.as_deref(), Some("50"));
    ui.click("Save draft").await;
    ui.see("Draft saved.").await;
    let saved = cover(&ui.app, &ada, &id).await;
    assert_eq!(
        saved["crop"],
        json!({"top": 0, "right": 0, "bottom": 0, "left": 0.5}),
        "{saved}"
    );
    ui.stop().await;
}

crate::admin_scenarios!(
    an_image_field_crop_is_set_with_the_keyboard_and_reset,
    a_crop_edge_is_dragged_on_the_picture,
);
