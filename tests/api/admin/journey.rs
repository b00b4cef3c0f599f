//! Issue 10's acceptance journey in one browser, in the order an editor meets it: sign up the
//! first user, create a post with a reference and an image, publish it, edit it into a revision
//! conflict from a second session and resolve it, restore an older version, invite a member,
//! create a custom role and an API key, delete a referenced asset and see it refused. Each
//! step is checked on the page and in what the API then holds.

use axum::http::StatusCode;
use cms::service::MailKind;
use fantoccini::Locator;
use serde_json::{Value, json};

use super::Ui;
use crate::support::{PASSWORD, Session, TestApp};

/// A 4x3 PNG, written to a temporary file for the file input.
fn photo() -> std::path::PathBuf {
    let bytes = crate::assets::png(4, 3, 0);
    let path = std::env::temp_dir().join(format!("photo-{}.png", uuid::Uuid::now_v7().simple()));
    std::fs::write(&path, bytes).unwrap();
    path
}

/// Reads `path` through the API as the person the browser signed in as.
async fn api(ui: &Ui, who: &Session, path: &str) -> Value {
    let res = ui.app.get(path).cookie(who).send().await;
    assert_eq!(res.status, StatusCode::OK, "{path}: {}", res.body);
    res.body
}

/// The session the browser holds, for checking through the API as the same person.
async fn browser_session(ui: &Ui) -> Session {
    let cookie = ui
        .client()
        .get_named_cookie("cms_session")
        .await
        .expect("the browser holds a session cookie");
    let cookie = format!("cms_session={}", cookie.value());
    let res = ui
        .app
        .get("/api/auth/get-session")
        .header("cookie", &cookie)
        .send()
        .await;
    Session {
        token: String::new(),
        cookie,
        user: res.body["user"].clone(),
    }
}

async fn value_of(ui: &Ui, label: &str) -> String {
    ui.control(label)
        .await
        .prop("value")
        .await
        .unwrap()
        .unwrap_or_default()
}

async fn the_editors_journey(url: String) {
    let ui = Ui::start(TestApp::start(&url).await, "journey").await;

    // 1. The first user signs up.
    ui.client().goto(&ui.url("/admin")).await.unwrap();
    // A fresh instance: the sign-in page creates the first account instead.
    ui.arrive("/admin/sign-in").await;
    ui.see("Create the first account").await;
    ui.fill("Name", "Ada Lovelace").await;
    ui.fill("E-mail", "ada@example.com").await;
    ui.fill("Password", PASSWORD).await;
    ui.click("Create account").await;
    ui.arrive("/admin").await;
    let ada = browser_session(&ui).await;
    assert_eq!(ada.user["role"], "super_admin");
    ui.screenshot("home").await;

    // 2. An author, and a photo in the library.
    ui.open("/admin/documents/author/new").await;
    ui.fill("Name", "Grace Hopper").await;
    ui.click("Publish").await;
    ui.see("Published.").await;
    ui.open("/admin/assets").await;
    let file = photo();
    ui.find(".asset-dropzone input[type=file]")
        .await
        .send_keys(file.to_str().unwrap())
        .await
        .unwrap();
    ui.see("Uploaded").await;
    let assets = api(&ui, &ada, "/api/assets").await;
    let asset = assets["data"][0]["id"].as_str().unwrap().to_string();

    // 3. A post with a reference and an image from the library, published.
    ui.open("/admin/documents/post/new").await;
    ui.fill("Title", "Hello").await;
    ui.fill("Author", "grace").await;
    ui.click("Grace Hopper").await;
    ui.find(".ref-chosen a").await;
    let chosen = ui.find(".ref-chosen").await.text().await.unwrap();
    let words: Vec<&str> = chosen.split_whitespace().collect();
    assert_eq!(words, ["Grace", "Hopper", "Clear"], "{chosen:?}");
    ui.click("Choose from library").await;
    let choice = ui.find("dialog[open] .asset-choice").await;
    ui.press(&choice).await;
    ui.find(".doc-asset-preview img").await;
    ui.screenshot("post").await;
    ui.click("Publish").await;
    ui.see("Published.").await;
    let post_path = ui.client().current_url().await.unwrap().path().to_string();
    let id = post_path.rsplit('/').next().unwrap().to_string();
    assert_ne!(id, "new");
    let post = api(&ui, &ada, &format!("/api/documents/{id}")).await["data"].clone();
    let author = &api(&ui, &ada, "/api/documents?type=author").await["data"][0];
    assert_eq!(post["publishedData"]["title"], "Hello");
    assert_eq!(
        post["publishedData"]["author"],
        json!({"_ref": author["id"]})
    );
    assert_eq!(
        post["publishedData"]["cover"]["asset"],
        json!({"_ref": asset})
    );
    assert_eq!(post["_meta"]["revision"], 1);

    // 4. A revision conflict from a second session: a second tab saves first.
    let first_tab = ui.client().window().await.unwrap();
    let second_tab = ui.client().new_window(true).await.unwrap().handle;
    ui.client()
        .switch_to_window(second_tab.clone())
        .await
        .unwrap();
    ui.open(&post_path).await;
    ui.fill("Title", "Hello from the second tab").await;
    ui.click("Save draft").await;
    ui.see("Draft saved.").await;
    ui.client()
        .switch_to_window(first_tab.clone())
        .await
        .unwrap();
    ui.fill("Title", "Hello from the first tab").await;
    ui.click("Save draft").await;
    ui.see("Someone else changed this document").await;
    ui.screenshot("conflict").await;
    // Resolved by reloading the other copy, then saving again on top of it.
    ui.click("Reload").await;
    for _ in 0..400 {
        if value_of(&ui, "Title").await == "Hello from the second tab" {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(25)).await;
    }
    assert_eq!(value_of(&ui, "Title").await, "Hello from the second tab");
    ui.fill("Title", "Hello again").await;
    ui.click("Save draft").await;
    ui.see("Draft saved.").await;
    let post = api(&ui, &ada, &format!("/api/documents/{id}")).await["data"].clone();
    assert_eq!(post["draftData"]["title"], "Hello again");
    assert_eq!(post["_meta"]["revision"], 3);
    ui.client().switch_to_window(second_tab).await.unwrap();
    ui.client().close_window().await.unwrap();
    ui.client().switch_to_window(first_tab).await.unwrap();

    // 5. The first version is restored from the history.
    ui.click("History").await;
    ui.click("Version 1 · Draft saved").await;
    ui.see("Version 1 compared with the current draft").await;
    ui.screenshot("history").await;
    ui.click("Restore version 1").await;
    ui.click("Restore").await;
    ui.see("Version 1 restored into the draft.").await;
    let post = api(&ui, &ada, &format!("/api/documents/{id}")).await["data"].clone();
    assert_eq!(post["draftData"]["title"], "Hello");
    assert_eq!(
        post["publishedData"]["title"], "Hello",
        "published data untouched"
    );
    assert_eq!(post["_meta"]["revision"], 4);

    // 6. A member is invited.
    ui.open("/admin/settings/members").await;
    ui.fill("Invite e-mail", "grace@example.com").await;
    ui.control("Invite as")
        .await
        .select_by_value("editor")
        .await
        .unwrap();
    ui.click("Send invitation").await;
    ui.see("An invitation is on its way to grace@example.com")
        .await;
    let invitations = api(&ui, &ada, "/api/organizations/invitations").await;
    assert_eq!(invitations["data"][0]["email"], "grace@example.com");
    assert_eq!(invitations["data"][0]["role"], "editor");
    // The e-mail carries the accept link with the invitation's secret, on this instance.
    let mail = ui
        .app
        .mail
        .last(MailKind::Invitation, "grace@example.com")
        .await;
    assert!(
        mail.link.contains("/admin/accept-invitation?token="),
        "{}",
        mail.link
    );

    // 7. A custom role with the capability picker.
    ui.open("/admin/settings/roles").await;
    ui.click("New role").await;
    ui.fill("Role name", "reviewer").await;
    let read = ui.control("Read documents").await;
    ui.press(&read).await;
    let publish = ui.control("Publish documents").await;
    ui.press(&publish).await;
    ui.click("Create role").await;
    ui.see("The role reviewer is created.").await;
    let roles = api(&ui, &ada, "/api/roles").await;
    let reviewer = roles["data"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["name"] == "reviewer")
        .expect("the role exists")
        .clone();
    let mut capabilities: Vec<String> =
        serde_json::from_value(reviewer["capabilities"].clone()).unwrap();
    capabilities.sort();
    assert_eq!(capabilities, ["document.publish", "document.read"]);

    // 8. An API key, whose secret is shown once and works.
    ui.open("/admin/settings/api-keys").await;
    ui.fill("Key name", "Website").await;
    let read = ui.control("Read documents").await;
    ui.press(&read).await;
    ui.click("Create key").await;
    let secret = ui
        .find("dialog[open] input.secret-value")
        .await
        .prop("value")
        .await
        .unwrap()
        .unwrap();
    ui.screenshot("api-key").await;
    let res = ui
        .app
        .get(&format!("/api/documents/{id}"))
        .key(&secret)
        .send()
        .await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);
    ui.click("I have copied it").await;
    let page = ui.client().source().await.unwrap();
    assert!(!page.contains(&secret), "the secret is gone from the page");

    // 9. The post's image cannot be deleted while the post uses it.
    ui.open(&format!("/admin/assets/{asset}")).await;
    ui.click("Delete asset").await;
    ui.find("dialog[open]").await;
    ui.click("Delete").await;
    let refusal = ui.find(".asset-refusal").await;
    refusal
        .find(Locator::Css(&format!("a[href='{post_path}']")))
        .await
        .expect("the refusal links the post that uses the asset");
    ui.screenshot("asset-refused").await;
    api(&ui, &ada, &format!("/api/assets/{asset}")).await;

    let _ = std::fs::remove_file(file);
    ui.stop().await;
}

crate::admin_scenarios!(the_editors_journey);
