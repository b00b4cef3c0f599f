//! Thumbnails in the admin (issue 30, point 2; CONTRACT.md section 18): the asset grid, the
//! asset picker and an image field's preview draw small derivatives of the transform endpoint,
//! 1x and 2x for the screen to choose, sized before they load and loaded lazily, and the
//! browser never fetches an original for them.

use serde_json::{Value, json};

use super::Ui;
use super::assets::{TEAL, png, until};
use crate::assets::uploaded;
use crate::people_support::first_owner;
use crate::support::TestApp;

/// What each loaded picture in `css` is: the address the browser chose, its `srcset`, the size
/// it was given before loading, and how it loads. Null until all `count` have loaded.
fn pictures(css: &str, count: usize) -> String {
    format!(
        "const imgs = [...document.querySelectorAll({css:?})];
         if (imgs.length !== {count} || !imgs.every(i => i.complete && i.naturalWidth > 0 && i.currentSrc)) return null;
         return imgs.map(i => ({{ current: i.currentSrc, srcset: i.getAttribute('srcset'), width: i.getAttribute('width'),
                                  height: i.getAttribute('height'), loading: i.getAttribute('loading') }}));"
    )
}

/// The addresses of every picture under `/media/` the page fetched so far.
async fn media_fetched(ui: &Ui) -> Vec<String> {
    let names = ui
        .eval(
            "return performance.getEntriesByType('resource').map(e => e.name).filter(n => n.includes('/media/'))",
            vec![],
        )
        .await;
    serde_json::from_value(names).unwrap()
}

/// The page fetched pictures, and none of them was an original.
async fn only_derivatives(ui: &Ui) {
    let fetched = media_fetched(ui).await;
    assert!(!fetched.is_empty());
    for name in &fetched {
        assert!(
            name.contains("?w="),
            "an original was fetched: {name} (all: {fetched:?})"
        );
    }
}

/// `shown` is a derivative of `original` (a path), `w` by `h` at 1x with its 2x beside it, and
/// the browser drew one of the two.
fn is_derivative(
    shown: &Value,
    origin: &str,
    original: &str,
    (w, h): (u32, u32),
    size: (u32, u32),
) {
    let one = format!("{origin}{original}?w={w}&h={h}");
    let two = format!("{original}?w={}&h={}", w * 2, h * 2);
    assert_eq!(
        shown["srcset"],
        json!(format!("{original}?w={w}&h={h} 1x, {two} 2x")),
        "{shown}"
    );
    let current = shown["current"].as_str().unwrap();
    assert!(
        current == one || current == format!("{origin}{two}"),
        "{current} is the 1x or the 2x derivative"
    );
    assert!(current.contains("?w="), "{current}");
    assert_eq!(shown["loading"], "lazy", "{shown}");
    assert_eq!(
        (shown["width"].clone(), shown["height"].clone()),
        (json!(size.0.to_string()), json!(size.1.to_string())),
        "the shape of the picture inside the box: {shown}"
    );
}

async fn thumbnails_are_small_derivatives(url: String) {
    let app = TestApp::start(&url).await;
    let (ada, _) = first_owner(&app).await;
    let wide = uploaded(&app, &ada, "wide.png", &png(40, 20, TEAL)).await;
    let tall = uploaded(&app, &ada, "tall.png", &png(10, 30, [0xe8, 0x8a, 0x2b])).await;
    let wide_url = wide["url"].as_str().unwrap().to_string();
    let tall_url = tall["url"].as_str().unwrap().to_string();
    let res = app
        .post(
            "/api/documents",
            json!({"type": "post", "data": {"title": "Harbour", "cover": {"asset": {"_ref": wide["id"]}}}}),
        )
        .cookie(&ada)
        .send()
        .await;
    let doc = res.body["data"]["id"].as_str().unwrap().to_string();
    let ui = Ui::start(app, "thumbnails").await;
    let origin = ui.served.origin.clone();
    ui.sign_in_as(&ada).await;

    // The library's grid: 200 px boxes.
    ui.open("/admin/assets").await;
    let grid = until(
        &ui,
        &pictures(".asset-grid .asset-thumb img", 2),
        "the grid's thumbnails",
    )
    .await;
    let of = |list: &Value, url: &str| -> Value {
        list.as_array()
            .unwrap()
            .iter()
            .find(|p| p["srcset"].as_str().unwrap_or("").starts_with(url))
            .unwrap_or_else(|| panic!("no picture of {url} in {list}"))
            .clone()
    };
    is_derivative(
        &of(&grid, &wide_url),
        &origin,
        &wide_url,
        (200, 200),
        (200, 100),
    );
    is_derivative(
        &of(&grid, &tall_url),
        &origin,
        &tall_url,
        (200, 200),
        (67, 200),
    );
    only_derivatives(&ui).await;

    // The image field's preview, and the picker it opens: the same, at their sizes.
    ui.open(&format!("/admin/documents/post/{doc}")).await;
    let field = until(&ui, &pictures(".doc-asset-thumb", 1), "the field's preview").await;
    is_derivative(&field[0], &origin, &wide_url, (192, 144), (192, 96));
    ui.click("Choose from library").await;
    let picker = until(
        &ui,
        &pictures("dialog.asset-picker .asset-thumb img", 2),
        "the picker's thumbnails",
    )
    .await;
    is_derivative(
        &of(&picker, &tall_url),
        &origin,
        &tall_url,
        (200, 200),
        (67, 200),
    );
    ui.screenshot("picker").await;

    only_derivatives(&ui).await;
    ui.stop().await;
}

crate::admin_scenarios!(thumbnails_are_small_derivatives);
