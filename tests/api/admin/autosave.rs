//! Never losing work on the edit page (issue 30, point 4): typing is saved two seconds after
//! the last keystroke with no click, guarded by the revision the form was loaded at; a save by
//! someone else in between stops autosave and opens the conflict dialog instead of writing
//! over theirs; what was typed is kept in the browser, so a tab closed (or crashed) before a
//! save offers it back on the next visit; and leaving with unsaved input still warns.

use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::Ui;
use super::documents::{create, demo_app, fetch, saved_id, see_value, update};
use crate::people_support::{first_owner, member};
use crate::support::{Session, TestApp};

/// Waits until the stored draft satisfies `done`, and returns it.
async fn stored_until(
    app: &TestApp,
    who: &Session,
    id: &str,
    done: impl Fn(&Value) -> bool,
) -> Value {
    let mut doc = Value::Null;
    for _ in 0..300 {
        doc = fetch(app, who, id).await.1;
        if done(&doc) {
            return doc;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("the stored document never got there: {doc}");
}

/// The autosave status in the action bar, waiting for it to read `expected`.
async fn status_becomes(ui: &Ui, expected: &str) {
    let mut seen = Value::Null;
    for _ in 0..300 {
        seen = ui
            .eval(
                "return document.querySelector('.autosave-status')?.textContent ?? null",
                vec![],
            )
            .await;
        if seen == json!(expected) {
            return;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("the autosave status is {seen}, not {expected:?}");
}

/// Whether leaving the page now would ask first: the page's `beforeunload` listener cancels
/// the event (a real navigation's prompt cannot be read through WebDriver).
async fn leaving_warns(ui: &Ui) -> bool {
    ui.eval(
        "const e = new Event('beforeunload', { cancelable: true }); window.dispatchEvent(e); return e.defaultPrevented;",
        vec![],
    )
    .await
        == json!(true)
}

/// The browser's kept copies: localStorage keys under `cms.unsaved.`.
async fn kept_copies(ui: &Ui) -> Vec<String> {
    let keys = ui
        .eval(
            "return Object.keys(localStorage).filter((k) => k.startsWith('cms.unsaved.')).sort()",
            vec![],
        )
        .await;
    serde_json::from_value(keys).unwrap()
}

async fn typing_is_saved_two_seconds_after_the_last_key(url: String) {
    let app = demo_app(&url).await;
    let (ada, _) = first_owner(&app).await;
    let doc = create(&app, &ada, "post", json!({"title": "Original"}), false).await;
    let id = doc["id"].as_str().unwrap().to_string();
    let ui = Ui::start(app, "autosave").await;
    ui.sign_in_as(&ada).await;
    ui.autosave_on().await;
    ui.open(&format!("/admin/documents/post/{id}")).await;
    assert!(
        !leaving_warns(&ui).await,
        "nothing typed, nothing to warn about"
    );

    // Three bursts of typing, each well within two seconds of the last: one save for all.
    let excerpt = ui.control("Excerpt").await;
    let typed = Instant::now();
    for part in ["Typed ", "and never ", "clicked"] {
        excerpt.send_keys(part).await.unwrap();
        tokio::time::sleep(Duration::from_millis(300)).await;
    }
    ui.see("Unsaved changes").await;
    // Leaving now would lose the input: the page still warns.
    assert!(leaving_warns(&ui).await);
    let (_, early) = fetch(&ui.app, &ada, &id).await;
    if typed.elapsed() < Duration::from_millis(2500) {
        // Still typing (the last key is less than two seconds old): nothing saved yet.
        assert_eq!(early["_meta"]["revision"], 1, "{early}");
    }
    // Two seconds after the last key, with no click: saved, revision-guarded, once.
    let stored = stored_until(&ui.app, &ada, &id, |d| {
        d["draftData"]["excerpt"] == "Typed and never clicked"
    })
    .await;
    assert_eq!(stored["_meta"]["revision"], 2, "{stored}");
    assert_eq!(stored["draftData"]["title"], "Original");
    status_becomes(&ui, "All changes saved").await;
    ui.see("Revision 2").await;
    let dirty = ui
        .eval(
            "return document.querySelector('.dirty-note').textContent",
            vec![],
        )
        .await;
    assert_eq!(dirty, json!(""));
    // Saved: no copy kept in the browser, and leaving does not warn.
    assert!(kept_copies(&ui).await.is_empty());
    assert!(!leaving_warns(&ui).await);
    ui.screenshot("saved").await;

    // Autosave goes on from the new revision.
    ui.fill("Title", "Second title").await;
    let stored = stored_until(&ui.app, &ada, &id, |d| {
        d["draftData"]["title"] == "Second title"
    })
    .await;
    assert_eq!(stored["_meta"]["revision"], 3, "{stored}");

    // Turned off (remembered in this browser), typing waits for a click; turned on again with
    // the input unsaved, it is saved.
    ui.press(&ui.control("Autosave").await).await;
    assert_eq!(
        ui.eval("return localStorage.getItem('cms.autosave')", vec![])
            .await,
        json!("off")
    );
    ui.fill("Title", "Third title").await;
    tokio::time::sleep(Duration::from_millis(3000)).await;
    let (_, unsaved) = fetch(&ui.app, &ada, &id).await;
    assert_eq!(unsaved["_meta"]["revision"], 3, "{unsaved}");
    ui.see("Unsaved changes").await;
    ui.press(&ui.control("Autosave").await).await;
    let stored = stored_until(&ui.app, &ada, &id, |d| {
        d["draftData"]["title"] == "Third title"
    })
    .await;
    assert_eq!(stored["_meta"]["revision"], 4, "{stored}");
    ui.stop().await;
}

async fn someone_elses_save_stops_autosave_and_asks(url: String) {
    let app = demo_app(&url).await;
    let (ada, _) = first_owner(&app).await;
    let grace = member(&app, &ada, "Grace", "grace@example.com", "editor").await;
    let doc = create(&app, &ada, "post", json!({"title": "Original"}), false).await;
    let id = doc["id"].as_str().unwrap().to_string();
    let ui = Ui::start(app, "autosave-conflict").await;
    ui.sign_in_as(&ada).await;
    ui.autosave_on().await;
    let path = format!("/admin/documents/post/{id}");
    ui.open(&path).await;

    // Grace saves while Ada's page is open at revision 1; then Ada types.
    update(&ui.app, &grace, &id, json!({"title": "Grace's title"})).await;
    ui.control("Excerpt")
        .await
        .send_keys("Ada's excerpt")
        .await
        .unwrap();
    // The autosave meets revision 2: the conflict dialog, nothing written over.
    ui.see("Someone else changed this document").await;
    ui.see("It is now at revision 2; this form was loaded at revision 1.")
        .await;
    status_becomes(&ui, "Autosave paused: someone else changed this document").await;
    ui.screenshot("conflict").await;
    let (_, stored) = fetch(&ui.app, &ada, &id).await;
    assert_eq!(stored["_meta"]["revision"], 2, "{stored}");
    assert_eq!(stored["draftData"]["title"], "Grace's title");
    assert!(stored["draftData"].get("excerpt").is_none(), "{stored}");

    // Cancelled: the input stays, and autosave stays paused however long Ada types on.
    let cancel = ui.find("dialog[open] button[data-value='cancel']").await;
    ui.press(&cancel).await;
    see_value(&ui, "Excerpt", "Ada's excerpt").await;
    // The focus is back in the field, and typing goes on there.
    let back = ui.eval("return document.activeElement.name", vec![]).await;
    assert_eq!(back, json!("excerpt"));
    ui.client()
        .active_element()
        .await
        .unwrap()
        .send_keys(", more")
        .await
        .unwrap();
    tokio::time::sleep(Duration::from_millis(3500)).await;
    let open = ui
        .eval("return !!document.querySelector('dialog[open]')", vec![])
        .await;
    assert_eq!(open, json!(false), "no second dialog by itself");
    let (_, stored) = fetch(&ui.app, &ada, &id).await;
    assert_eq!(stored["_meta"]["revision"], 2, "{stored}");
    see_value(&ui, "Excerpt", "Ada's excerpt, more").await;
    ui.see("Unsaved changes").await;
    // The input is kept in the browser with the revision it was typed on.
    let kept = kept_copies(&ui).await;
    assert_eq!(kept.len(), 1, "{kept:?}");
    assert!(kept[0].ends_with(&format!(".post.{id}.-")), "{kept:?}");

    // Another tab of the same page: the document changed since the copy was typed, and the
    // offer says so; Restore puts the input back, unsaved.
    let first = ui.client().window().await.unwrap();
    let tab = ui.client().new_window(true).await.unwrap();
    ui.client().switch_to_window(tab.handle).await.unwrap();
    ui.open(&path).await;
    see_value(&ui, "Title", "Grace's title").await;
    ui.see("were found in this browser").await;
    ui.see("The document changed since: they were typed on revision 1, it is at revision 2 now.")
        .await;
    ui.screenshot("offer-older").await;
    ui.click("Restore").await;
    see_value(&ui, "Excerpt", "Ada's excerpt, more").await;
    ui.see("Unsaved changes").await;
    let offered = ui
        .eval(
            "return document.querySelector('.recovery-notice').hidden",
            vec![],
        )
        .await;
    assert_eq!(offered, json!(true));
    // Restored is not saved: the API still has Grace's copy.
    let (_, stored) = fetch(&ui.app, &ada, &id).await;
    assert_eq!(stored["_meta"]["revision"], 2, "{stored}");
    // (The second tab stays open: with unsaved input, closing it would ask first.)
    ui.client().switch_to_window(first).await.unwrap();

    // Back in the first tab: an explicit save meets the conflict again; Overwrite writes Ada's
    // form, and autosave resumes from the new revision.
    ui.click("Save draft").await;
    ui.see("Someone else changed this document").await;
    ui.click("Overwrite").await;
    ui.see("Draft saved.").await;
    let stored = stored_until(&ui.app, &ada, &id, |d| d["_meta"]["revision"] == 3).await;
    assert_eq!(stored["draftData"]["excerpt"], "Ada's excerpt, more");
    ui.control("Excerpt")
        .await
        .send_keys(" Again.")
        .await
        .unwrap();
    let stored = stored_until(&ui.app, &ada, &id, |d| d["_meta"]["revision"] == 4).await;
    assert_eq!(stored["draftData"]["excerpt"], "Ada's excerpt, more Again.");
    status_becomes(&ui, "All changes saved").await;
    assert!(kept_copies(&ui).await.is_empty());
    ui.stop().await;
}

async fn a_new_document_is_offered_back_after_the_tab_is_gone(url: String) {
    let app = demo_app(&url).await;
    let (ada, org) = first_owner(&app).await;
    let ui = Ui::start(app, "autosave-recovery").await;
    ui.sign_in_as(&ada).await;
    ui.autosave_on().await;
    ui.open("/admin/documents/post/new").await;
    ui.fill("Title", "Recovered title").await;
    ui.fill("Excerpt", "Kept in this browser").await;
    // A new document is never autosaved: it is created by an explicit Save.
    tokio::time::sleep(Duration::from_millis(3000)).await;
    let listed = ui
        .app
        .get("/api/documents?type=post")
        .cookie(&ada)
        .send()
        .await;
    assert_eq!(listed.body["data"], json!([]), "{}", listed.body);
    assert!(
        ui.client()
            .current_url()
            .await
            .unwrap()
            .path()
            .ends_with("/new")
    );
    // Kept under the organization, the type, `new` and the locale (none for this type).
    assert_eq!(
        kept_copies(&ui).await,
        [format!("cms.unsaved.{org}.post.new.-")]
    );

    // The page is gone without a save (a crash, a closed tab): the same address opened anew
    // offers it. (A second tab: the first, left as it is, would ask before it is left.)
    let tab = ui.client().new_window(true).await.unwrap();
    ui.client().switch_to_window(tab.handle).await.unwrap();
    ui.open("/admin/documents/post/new").await;
    ui.see("Unsaved changes from a moment ago were found in this browser.")
        .await;
    see_value(&ui, "Title", "").await;
    ui.screenshot("offer").await;
    ui.click("Restore").await;
    see_value(&ui, "Title", "Recovered title").await;
    see_value(&ui, "Excerpt", "Kept in this browser").await;
    ui.see("Unsaved changes").await;

    // Saved explicitly: created, and the kept copy goes.
    ui.click("Save draft").await;
    ui.see("Draft saved.").await;
    let id = saved_id(&ui, "post").await;
    let (_, stored) = fetch(&ui.app, &ada, &id).await;
    assert_eq!(stored["draftData"]["excerpt"], "Kept in this browser");
    for _ in 0..100 {
        if kept_copies(&ui).await.is_empty() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(kept_copies(&ui).await.is_empty());

    // Discard: typed again on a new form, offered on the next visit, discarded for good.
    ui.open("/admin/documents/post/new").await;
    ui.fill("Title", "Thrown away").await;
    for _ in 0..100 {
        if !kept_copies(&ui).await.is_empty() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let tab = ui.client().new_window(true).await.unwrap();
    ui.client().switch_to_window(tab.handle).await.unwrap();
    ui.open("/admin/documents/post/new").await;
    ui.see("were found in this browser").await;
    ui.click("Discard").await;
    assert!(kept_copies(&ui).await.is_empty());
    ui.open("/admin/documents/post/new").await;
    ui.find("main[data-ready='true']").await;
    let offered = ui
        .eval(
            "return document.querySelector('.recovery-notice').hidden",
            vec![],
        )
        .await;
    assert_eq!(offered, json!(true));
    ui.stop().await;
}

crate::admin_scenarios!(
    typing_is_saved_two_seconds_after_the_last_key,
    someone_elses_save_stops_autosave_and_asks,
    a_new_document_is_offered_back_after_the_tab_is_gone,
);
