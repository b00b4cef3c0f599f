//! Focal points in the admin (CONTRACT.md section 18): an asset's own, chosen on its page, and
//! an image field's, chosen in the document for that use only. Both with a click on the
//! picture or the arrow keys, three crops following live.

use serde_json::{Value, json};

use super::Ui;
use super::assets::{TEAL, png, until};
use crate::assets::uploaded;
use crate::people_support::first_owner;
use crate::support::TestApp;

/// The asset page's focal point (issue 27's hotspot, CONTRACT.md section 18): a click on the
/// picture places it, the arrow keys move it, three crops follow it live, and it is saved and
/// cleared through the API.
async fn the_focal_point_is_chosen_on_the_picture(url: String) {
    let app = TestApp::start(&url).await;
    let (ada, _) = first_owner(&app).await;
    let asset = uploaded(&app, &ada, "wide.png", &png(40, 20, TEAL)).await;
    let id = asset["id"].as_str().unwrap().to_string();
    let ui = Ui::start(app, "assets-focal").await;
    ui.sign_in_as(&ada).await;
    ui.open(&format!("/admin/assets/{id}")).await;
    ui.see("No focal point saved: crops keep the middle.").await;
    until(
        &ui,
        "const i = document.querySelector('.focal-picture'); return i && i.complete && i.naturalWidth > 0;",
        "the picture loaded",
    )
    .await;
    ui.eval(
        "const i = document.querySelector('.focal-picture'); const b = i.getBoundingClientRect();
         i.dispatchEvent(new MouseEvent('click', { bubbles: true, clientX: b.left + i.clientLeft + i.clientWidth * 0.25, clientY: b.top + i.clientTop + i.clientHeight * 0.75 }));",
        vec![],
    )
    .await;
    // The three crops, loaded, and the focal point their URLs ask for (the same for all).
    const CROPS: &str = "const imgs = [...document.querySelectorAll('.focal-crop')];
         if (imgs.length !== 3 || !imgs.every(i => i.complete && i.naturalWidth > 0)) return null;
         const points = imgs.map(i => { const q = new URL(i.src).searchParams;
           return [q.get('fit'), Number(q.get('fp-x')), Number(q.get('fp-y'))]; });
         return points.every(p => JSON.stringify(p) === JSON.stringify(points[0])) && points[0];";
    let near = |v: &Value, want: f64| (v.as_f64().unwrap() - want).abs() < 0.01;
    let placed = until(&ui, CROPS, "three crops around the click").await;
    assert_eq!(placed[0], "crop", "{placed}");
    assert!(near(&placed[1], 0.25) && near(&placed[2], 0.75), "{placed}");
    ui.screenshot("placed").await;
    // The marker has the focus: one step right with the arrow key.
    let marker = ui.find(".focal-marker").await;
    marker.send_keys("\u{E014}").await.unwrap();
    let x = placed[1].as_f64().unwrap();
    let stepped = until(
        &ui,
        &format!("const p = (() => {{ {CROPS} }})(); return p && Math.abs(p[1] - {x} - 0.05) < 0.0002 && p;"),
        "the crops following the key",
    )
    .await;
    assert_eq!(stepped[2], placed[2], "only across");
    let label = marker.attr("aria-label").await.unwrap().unwrap_or_default();
    assert!(label.contains("30% across, 75% down"), "{label}");

    ui.click("Save focal point").await;
    ui.see("Focal point saved.").await;
    ui.see("Saved focal point: 30% across, 75% down.").await;
    let path = format!("/api/assets/{id}");
    let saved = ui.app.get(&path).cookie(&ada).send().await.body["data"]["hotspot"].clone();
    assert_eq!(saved, json!({"x": stepped[1], "y": stepped[2]}));
    ui.click("Clear").await;
    ui.see("No focal point saved: crops keep the middle.").await;
    assert_eq!(
        ui.app.get(&path).cookie(&ada).send().await.body["data"]["hotspot"],
        Value::Null
    );
    ui.stop().await;
}

/// The cover image of a document's draft, as the API reads it.
async fn cover(app: &TestApp, session: &crate::support::Session, id: &str) -> Value {
    let res = app
        .get(&format!("/api/documents/{id}"))
        .cookie(session)
        .send()
        .await;
    res.body["data"]["draftData"]["cover"].clone()
}

/// An image field's own focal point: set in the document for that use, saved in the field's
/// `hotspot` beside what it already held (its crop), and dropped again to follow the asset's.
async fn an_image_field_sets_its_own_focal_point(url: String) {
    let app = TestApp::start(&url).await;
    let (ada, _) = first_owner(&app).await;
    let asset = uploaded(&app, &ada, "wide.png", &png(40, 20, TEAL)).await;
    let asset_id = asset["id"].as_str().unwrap().to_string();
    let crop = json!({"top": 0.1, "left": 0.2});
    let res = app
        .post(
            "/api/documents",
            json!({"type": "post", "data": {"title": "Harbour",
                   "cover": {"asset": {"_ref": asset_id}, "crop": crop}}}),
        )
        .cookie(&ada)
        .send()
        .await;
    let id = res.body["data"]["id"].as_str().unwrap().to_string();
    let ui = Ui::start(app, "field-focal").await;
    ui.sign_in_as(&ada).await;
    ui.open(&format!("/admin/documents/post/{id}")).await;
    ui.click("Focal point for this use").await;
    ui.see("Follows the asset's focal point.").await;
    until(
        &ui,
        "const i = document.querySelector('.doc-asset-focal .focal-picture'); return i && i.complete && i.naturalWidth > 0;",
        "the field's picture loaded",
    )
    .await;
    ui.eval(
        "const i = document.querySelector('.doc-asset-focal .focal-picture'); const b = i.getBoundingClientRect();
         i.dispatchEvent(new MouseEvent('click', { bubbles: true, clientX: b.left + i.clientLeft + i.clientWidth * 0.8, clientY: b.top + i.clientTop + i.clientHeight * 0.2 }));",
        vec![],
    )
    .await;
    ui.see("Set for this use: 80% across, 20% down.").await;
    ui.screenshot("field").await;
    ui.click("Save draft").await;
    ui.see("Draft saved.").await;
    let saved = cover(&ui.app, &ada, &id).await;
    assert_eq!(saved["asset"]["_ref"], asset_id.as_str(), "{saved}");
    assert_eq!(saved["crop"], crop, "the crop stays: {saved}");
    let near = |v: &Value, want: f64| (v.as_f64().unwrap() - want).abs() < 0.01;
    assert!(
        near(&saved["hotspot"]["x"], 0.8) && near(&saved["hotspot"]["y"], 0.2),
        "{saved}"
    );
    ui.click("Use the asset's focal point").await;
    ui.see("Follows the asset's focal point.").await;
    ui.click("Save draft").await;
    until(
        &ui,
        "return document.querySelectorAll('.notice.success').length >= 2",
        "a second save",
    )
    .await;
    let saved = cover(&ui.app, &ada, &id).await;
    assert!(saved.get("hotspot").is_none(), "{saved}");
    assert_eq!(saved["crop"], crop, "{saved}");
    ui.stop().await;
}

crate::admin_scenarios!(
    the_focal_point_is_chosen_on_the_picture,
    an_image_field_sets_its_own_focal_point,
);
