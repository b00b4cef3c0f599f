//! The settings pages and plugin admin tools: members and invitations, custom roles with the
//! capability picker, API keys (the secret shown once), plugin settings with a kept secret,
//! the job queue and the event log, the organization and the account, and a plugin's tool
//! mounted on its page. Each step is checked on the page and then against the API.

use std::sync::Arc;

use axum::http::{Method, StatusCode, header};
use cms::core::RequiredCapabilities;
use cms::core::plugin_settings::{SettingField, SettingKind, SettingsDeclaration};
use cms::plugin::{Plugin, PluginParts};
use cms::server::PluginRoute;
use cms::server::plugins::{Component, Placement};
use cms::service::MailKind;
use cms::service::Registry;
use cms::service::jobs::{HandlerContext, HandlerError, JobHandler, JobView};
use serde_json::{Value, json};

use super::Ui;
use crate::people_support::{first_owner, invite, member, user_id};
use crate::support::{Session, TestApp, config_for};

/// Presses the confirming button of the open `confirm()` dialog.
async fn confirm_dialog(ui: &Ui) {
    ui.find("dialog[open] .dialog-actions button[data-value='true']")
        .await
        .click()
        .await
        .unwrap();
}

/// Clicks the element `css` matches (for buttons whose text repeats on every row).
async fn press(ui: &Ui, css: &str) {
    let el = ui.find(css).await;
    ui.press(&el).await;
}

async fn select(ui: &Ui, label: &str, value: &str) {
    ui.control(label)
        .await
        .select_by_value(value)
        .await
        .unwrap();
}

async fn get_data(app: &TestApp, session: &Session, path: &str) -> Value {
    let res = app.get(path).cookie(session).send().await;
    assert_eq!(res.status, StatusCode::OK, "{path}: {}", res.body);
    res.body["data"].clone()
}

/// The role of `email` among the members of the session's organization, if a member.
async fn role_of(app: &TestApp, session: &Session, email: &str) -> Option<String> {
    get_data(app, session, "/api/organizations/members")
        .await
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["email"] == email)
        .map(|m| m["role"].as_str().unwrap().to_string())
}

async fn pending_invitations(app: &TestApp, session: &Session) -> Vec<(String, String)> {
    get_data(app, session, "/api/organizations/invitations")
        .await
        .as_array()
        .unwrap()
        .iter()
        .filter(|i| i["status"] == "pending")
        .map(|i| {
            (
                i["email"].as_str().unwrap().to_string(),
                i["role"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

async fn members_and_invitations_are_managed_from_the_page(url: String) {
    let app = TestApp::start(&url).await;
    let (ada, _) = first_owner(&app).await;
    member(&app, &ada, "Grace Hopper", "grace@example.com", "editor").await;
    invite(&app, &ada, "old@example.com", "viewer").await;
    let ui = Ui::start(app, "settings-members").await;
    ui.sign_in_as(&ada).await;
    ui.open("/admin/settings/members").await;
    ui.see("grace@example.com").await;
    ui.see("old@example.com").await;
    ui.screenshot("members").await;

    // Invite through the form: the e-mail goes out and the invitation is pending.
    ui.fill("Invite e-mail", "new@example.com").await;
    select(&ui, "Invite as", "viewer").await;
    ui.click("Send invitation").await;
    ui.see("An invitation is on its way to new@example.com")
        .await;
    ui.find("tr[data-email='new@example.com']").await;
    let mail = ui
        .app
        .mail
        .last(MailKind::Invitation, "new@example.com")
        .await;
    assert!(
        mail.link.contains("/admin/accept-invitation?token="),
        "{mail:?}"
    );
    let pending = pending_invitations(&ui.app, &ada).await;
    assert!(
        pending.contains(&("new@example.com".into(), "viewer".into())),
        "{pending:?}"
    );

    // Cancel another one.
    press(&ui, "tr[data-email='old@example.com'] button").await;
    confirm_dialog(&ui).await;
    ui.see("The invitation of old@example.com is cancelled.")
        .await;
    let pending = pending_invitations(&ui.app, &ada).await;
    assert!(
        pending.iter().all(|(e, _)| e != "old@example.com"),
        "{pending:?}"
    );
    assert_eq!(pending.len(), 1, "{pending:?}");

    // Change Grace's role.
    select(&ui, "Role of Grace Hopper", "admin").await;
    press(&ui, "tr[data-email='grace@example.com'] button.change-role").await;
    ui.see("Grace Hopper is now admin.").await;
    assert_eq!(
        role_of(&ui.app, &ada, "grace@example.com").await.as_deref(),
        Some("admin")
    );

    // The last owner cannot be demoted: the API's reason is shown, nothing changes.
    select(&ui, "Role of Ada", "editor").await;
    press(&ui, "tr[data-email='ada@example.com'] button.change-role").await;
    ui.see("last owner cannot be demoted").await;
    ui.screenshot("last-owner").await;
    assert_eq!(
        role_of(&ui.app, &ada, "ada@example.com").await.as_deref(),
        Some("owner")
    );

    // Remove Grace.
    press(&ui, "tr[data-email='grace@example.com'] button.danger-text").await;
    ui.find("dialog[open]").await;
    ui.screenshot("remove-confirm").await;
    confirm_dialog(&ui).await;
    ui.see("Grace Hopper is removed.").await;
    assert_eq!(role_of(&ui.app, &ada, "grace@example.com").await, None);
    let rows = ui
        .eval(
            "return document.querySelectorAll(\"tr[data-email='grace@example.com']\").length",
            vec![],
        )
        .await;
    assert_eq!(rows, json!(0));
    ui.screenshot("after").await;
    ui.stop().await;
}

/// The capabilities of role `name`, sorted; `None` when there is no such role.
async fn role_capabilities(app: &TestApp, session: &Session, name: &str) -> Option<Vec<String>> {
    let roles = get_data(app, session, "/api/roles").await;
    roles
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["name"] == name)
        .map(|r| {
            let mut caps: Vec<String> = r["capabilities"]
                .as_array()
                .unwrap()
                .iter()
                .map(|c| c.as_str().unwrap().to_string())
                .collect();
            caps.sort();
            caps
        })
}

async fn a_custom_role_is_created_edited_and_deleted(url: String) {
    let app = TestApp::start(&url).await;
    let (ada, _) = first_owner(&app).await;
    let ui = Ui::start(app, "settings-roles").await;
    ui.sign_in_as(&ada).await;
    ui.open("/admin/settings/roles").await;
    ui.see("built-in").await;

    ui.click("New role").await;
    ui.fill("Role name", "reviewer").await;
    ui.fill("Description", "Reads and publishes").await;
    ui.control("Read documents").await.click().await.unwrap();
    ui.control("Publish documents").await.click().await.unwrap();
    ui.screenshot("picker").await;
    ui.click("Create role").await;
    ui.see("The role reviewer is created.").await;
    ui.find("li[data-role='reviewer']").await;
    assert_eq!(
        role_capabilities(&ui.app, &ada, "reviewer").await,
        Some(vec!["document.publish".into(), "document.read".into()])
    );
    ui.screenshot("created").await;

    // Edit: publish out, upload in (which brings asset.read with it).
    press(&ui, "li[data-role='reviewer'] .actions button:first-child").await;
    ui.see("Edit reviewer").await;
    ui.control("Publish documents").await.click().await.unwrap();
    ui.control("Upload assets").await.click().await.unwrap();
    ui.click("Save role").await;
    ui.see("The role reviewer is saved.").await;
    assert_eq!(
        role_capabilities(&ui.app, &ada, "reviewer").await,
        Some(vec![
            "asset.read".into(),
            "asset.upload".into(),
            "document.read".into()
        ])
    );

    // A role still held by an invitation cannot go: the API's reason is shown.
    invite(&ui.app, &ada, "rita@example.com", "reviewer").await;
    press(&ui, "li[data-role='reviewer'] button.danger").await;
    confirm_dialog(&ui).await;
    ui.find(".roles-status .banner.error").await;
    ui.screenshot("in-use").await;
    assert!(role_capabilities(&ui.app, &ada, "reviewer").await.is_some());
    let invitation =
        get_data(&ui.app, &ada, "/api/organizations/invitations").await[0]["id"].clone();
    let res = ui
        .app
        .req(Method::DELETE, "/api/organizations/invitations")
        .json(json!({ "id": invitation }))
        .cookie(&ada)
        .send()
        .await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);

    press(&ui, "li[data-role='reviewer'] button.danger").await;
    confirm_dialog(&ui).await;
    ui.see("The role reviewer is deleted.").await;
    assert_eq!(role_capabilities(&ui.app, &ada, "reviewer").await, None);
    ui.stop().await;
}

async fn the_public_role_opens_anonymous_reads(url: String) {
    let app = TestApp::start(&url).await;
    let (ada, _) = first_owner(&app).await;
    let res = app
        .post(
            "/api/documents",
            json!({"type": "post", "data": {"title": "Hello world"}, "publish": true}),
        )
        .cookie(&ada)
        .send()
        .await;
    assert_eq!(res.status, StatusCode::CREATED, "{}", res.body);
    let post = res.body["data"]["id"].as_str().unwrap().to_string();
    let org = app.active_organization(&ada).await;
    let slug = get_data(&app, &ada, &format!("/api/organizations/{org}")).await["slug"]
        .as_str()
        .unwrap()
        .to_string();
    let path = format!("/api/documents/{post}");
    let res = app
        .get(&path)
        .header("x-cms-organization", &slug)
        .send()
        .await;
    assert_eq!(res.status, StatusCode::UNAUTHORIZED);

    let ui = Ui::start(app, "settings-public-role").await;
    ui.sign_in_as(&ada).await;
    ui.open("/admin/settings/roles").await;
    ui.find("li[data-role='public']").await;
    ui.see("Anyone on the internet, without signing in").await;
    let deletable = ui
        .eval(
            "return document.querySelectorAll(\"li[data-role='public'] button.danger\").length",
            vec![],
        )
        .await;
    assert_eq!(deletable, json!(0), "public cannot be deleted");

    press(&ui, "li[data-role='public'] .actions button:first-child").await;
    ui.see("Edit public").await;
    // Only the two reads are offered.
    let offered = ui
        .eval(
            "return [...document.querySelectorAll('.role-editor input[type=checkbox]')].map((b) => b.value).sort()",
            vec![],
        )
        .await;
    assert_eq!(offered, json!(["asset.read", "document.read"]));
    ui.control("Read documents").await.click().await.unwrap();
    ui.screenshot("public-role").await;
    ui.click("Save role").await;
    ui.see("The role public is saved.").await;
    assert_eq!(
        role_capabilities(&ui.app, &ada, "public").await,
        Some(vec!["document.read".into()])
    );

    // A website without credentials now reads the published post.
    let res = ui
        .app
        .get(&path)
        .header("x-cms-organization", &slug)
        .send()
        .await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);
    assert_eq!(res.body["data"]["publishedData"]["title"], "Hello world");
    assert!(res.body["data"].get("draftData").is_none());

    // Nobody is invited as `public`: the members page does not offer it.
    ui.open("/admin/settings/members").await;
    let roles_offered = ui
        .eval(
            "return [...document.querySelectorAll('select option')].map((o) => o.value)",
            vec![],
        )
        .await;
    assert!(
        !roles_offered
            .as_array()
            .unwrap()
            .iter()
            .any(|v| v == "public"),
        "{roles_offered}"
    );
    assert!(
        roles_offered
            .as_array()
            .unwrap()
            .iter()
            .any(|v| v == "viewer"),
        "the page offers roles: {roles_offered}"
    );
    ui.stop().await;
}

async fn an_api_key_secret_is_shown_once_and_works_until_deleted(url: String) {
    let app = TestApp::start(&url).await;
    let (ada, _) = first_owner(&app).await;
    let ui = Ui::start(app, "settings-keys").await;
    ui.sign_in_as(&ada).await;
    ui.open("/admin/settings/api-keys").await;
    ui.see("No keys yet.").await;

    ui.fill("Key name", "Website build").await;
    ui.control("Read documents").await.click().await.unwrap();
    ui.fill("Expires after (days)", "30").await;
    ui.click("Create key").await;
    let secret_box = ui.find("dialog[open] input.secret-value").await;
    ui.see("you will not see it again").await;
    let secret = secret_box.prop("value").await.unwrap().unwrap();
    assert!(secret.starts_with("cms_"), "{secret}");
    ui.screenshot("secret").await;

    // The secret works, with exactly the capability chosen.
    let res = ui
        .app
        .get("/api/documents?type=post")
        .key(&secret)
        .send()
        .await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);
    let res = ui
        .app
        .post(
            "/api/documents",
            json!({"type": "post", "data": {"title": "No"}}),
        )
        .key(&secret)
        .send()
        .await;
    assert_eq!(res.status, StatusCode::FORBIDDEN, "{}", res.body);

    // Closed, it is gone from the page; the list shows the key without it.
    ui.click("I have copied it").await;
    ui.find("tr[data-key]").await;
    ui.see("Website build").await;
    let shown = ui
        .eval(
            "return document.documentElement.outerHTML.includes(arguments[0]) || [...document.querySelectorAll('input')].some((i) => i.value === arguments[0])",
            vec![json!(secret)],
        )
        .await;
    assert_eq!(shown, json!(false), "the secret is not shown again");
    let keys = get_data(&ui.app, &ada, "/api/settings/api-keys").await;
    assert_eq!(keys.as_array().unwrap().len(), 1);
    assert_eq!(keys[0]["capabilities"], json!(["document.read"]));
    assert!(keys[0]["expiresAt"].is_string(), "{keys}");
    ui.screenshot("listed").await;

    press(&ui, "tr[data-key] button.danger-text").await;
    confirm_dialog(&ui).await;
    ui.see("The key Website build is deleted.").await;
    let res = ui
        .app
        .get("/api/documents?type=post")
        .key(&secret)
        .send()
        .await;
    assert_eq!(res.status, StatusCode::UNAUTHORIZED, "{}", res.body);
    ui.stop().await;
}

const ENCRYPTION_KEY: &str = "a secret encryption key of at least thirty-two characters";

fn acme_settings() -> SettingsDeclaration {
    let field = |name: &str, kind, title: &str| SettingField {
        name: name.into(),
        kind,
        title: title.into(),
    };
    SettingsDeclaration {
        plugin_id: "acme".into(),
        title: "Acme sync".into(),
        description: "Where reports go".into(),
        fields: vec![
            field("region", SettingKind::String, "Region"),
            field("notes", SettingKind::Text, "Notes"),
            field("limit", SettingKind::Number, "Daily limit"),
            field("enabled", SettingKind::Boolean, "Enabled"),
            field("token", SettingKind::Secret, "Access token"),
        ],
    }
}

async fn plugin_settings_keep_a_secret_saved_without_it(url: String) {
    let mut config = config_for(&url);
    config.plugins.secret_encryption_key = Some(ENCRYPTION_KEY.into());
    let app = TestApp::custom(config, |b| b.plugin_settings(acme_settings())).await;
    let (ada, org) = first_owner(&app).await;
    let ui = Ui::start(app, "settings-plugins").await;
    ui.sign_in_as(&ada).await;
    ui.open("/admin/settings/plugins").await;
    ui.see("Acme sync").await;
    ui.see("Installed plugins").await;

    ui.fill("Region", "eu-west").await;
    ui.fill("Daily limit", "25").await;
    ui.control("Enabled").await.click().await.unwrap();
    ui.fill("Access token", "tok-7c1e9a0b4d").await;
    ui.screenshot("filled").await;
    press(&ui, "form[data-plugin='acme'] button[type=submit]").await;
    ui.see("Acme sync settings are saved.").await;
    let stored = || ui.app.app.cms.plugin_settings();
    assert_eq!(
        stored().values_for(&org, "acme").await.unwrap(),
        json!({"region": "eu-west", "notes": null, "limit": 25, "enabled": true, "token": "tok-7c1e9a0b4d"})
    );

    // Reloaded, the secret is redacted: never in the page, a placeholder says it is set.
    ui.open("/admin/settings/plugins").await;
    let token = ui.control("Access token").await;
    assert_eq!(token.prop("value").await.unwrap().as_deref(), Some(""));
    assert_eq!(
        token.attr("placeholder").await.unwrap().as_deref(),
        Some("********")
    );
    ui.see("A value is stored").await;
    assert_eq!(
        ui.control("Region")
            .await
            .prop("value")
            .await
            .unwrap()
            .as_deref(),
        Some("eu-west")
    );
    let leaked = ui
        .eval(
            "return document.documentElement.outerHTML.includes('tok-7c1e9a0b4d')",
            vec![],
        )
        .await;
    assert_eq!(leaked, json!(false));
    ui.screenshot("redacted").await;

    // Saving again without touching the secret keeps it.
    ui.fill("Region", "us-east").await;
    press(&ui, "form[data-plugin='acme'] button[type=submit]").await;
    ui.see("Acme sync settings are saved.").await;
    let values = stored().values_for(&org, "acme").await.unwrap();
    assert_eq!(values["region"], "us-east");
    assert_eq!(values["token"], "tok-7c1e9a0b4d");
    let view = get_data(&ui.app, &ada, "/api/plugin-settings").await;
    let acme = view
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["pluginId"] == "acme")
        .unwrap();
    assert_eq!(acme["values"]["token"], "********");
    ui.stop().await;
}

/// A job handler that always fails.
struct Failing;

#[async_trait::async_trait]
impl JobHandler for Failing {
    async fn run(&self, _: &HandlerContext, _: &JobView) -> Result<(), HandlerError> {
        Err("the partner API is down".into())
    }
}

async fn job_status(app: &TestApp, session: &Session, id: &str) -> (String, i64) {
    let jobs = get_data(app, session, "/api/jobs?pageSize=100").await;
    let job = jobs
        .as_array()
        .unwrap()
        .iter()
        .find(|j| j["id"] == id)
        .unwrap_or_else(|| panic!("no job {id} in {jobs}"))
        .clone();
    (
        job["status"].as_str().unwrap().to_string(),
        job["attempts"].as_i64().unwrap(),
    )
}

async fn jobs_are_retried_and_cancelled_and_events_listed(url: String) {
    let registry = Registry::default()
        .job_handler("test.fail", Arc::new(Failing))
        .unwrap()
        .job_handler("test.later", Arc::new(Failing))
        .unwrap();
    let app = TestApp::with_registry(config_for(&url), registry).await;
    let (ada, org) = first_owner(&app).await;
    let worker = app.app.cms.worker();
    let dead = worker
        .enqueue(Some(&org), "test.fail", json!({"n": 1}), Some(1), None)
        .await
        .unwrap()
        .unwrap();
    worker.tick().await.unwrap();
    let pending = worker
        .enqueue(Some(&org), "test.later", json!({}), None, None)
        .await
        .unwrap()
        .unwrap();
    let created = app
        .post(
            "/api/documents",
            json!({"type": "post", "data": {"title": "Hello events"}, "publish": true}),
        )
        .cookie(&ada)
        .send()
        .await;
    assert_eq!(created.status, StatusCode::CREATED, "{}", created.body);
    let document_id = created.body["data"]["id"].as_str().unwrap().to_string();
    assert_eq!(job_status(&app, &ada, &dead.id).await.0, "dead_letter");

    let ui = Ui::start(app, "settings-jobs").await;
    ui.sign_in_as(&ada).await;
    ui.open("/admin/settings/jobs").await;
    ui.see("the partner API is down").await;
    ui.see("dead letter").await;
    ui.screenshot("jobs").await;

    // The pending job is cancelled.
    press(&ui, &format!("tr[data-job='{}'] button", pending.id)).await;
    ui.see("The test.later job is cancelled.").await;
    ui.find(&format!(
        "tr[data-job='{}'][data-status='cancelled']",
        pending.id
    ))
    .await;
    assert_eq!(job_status(&ui.app, &ada, &pending.id).await.0, "cancelled");

    // The dead-lettered one is queued again, its attempts reset.
    press(&ui, &format!("tr[data-job='{}'] button", dead.id)).await;
    ui.see("The test.fail job is queued again.").await;
    ui.find(&format!(
        "tr[data-job='{}'][data-status='pending']",
        dead.id
    ))
    .await;
    assert_eq!(
        job_status(&ui.app, &ada, &dead.id).await,
        ("pending".into(), 0)
    );

    // The status filter narrows the list.
    select(&ui, "Status", "cancelled").await;
    ui.find(&format!(
        "tr[data-job='{}'][data-status='cancelled']",
        pending.id
    ))
    .await;
    // The cancelled row was on the page before the filter too: wait for the list drawn again
    // (the other rows gone), not for that row.
    let mut rows = Value::Null;
    for _ in 0..200 {
        rows = ui
            .eval(
                "return document.querySelectorAll('tr[data-job]').length",
                vec![],
            )
            .await;
        if rows == json!(1) {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    assert_eq!(rows, json!(1));
    ui.screenshot("filtered").await;

    // The event of the document published through the API, with its payload as text.
    ui.open("/admin/settings/events").await;
    ui.see("document.published").await;
    ui.click("Payload").await;
    ui.see(&document_id).await;
    let payload = ui.find("pre.payload").await.text().await.unwrap();
    let parsed: Value = serde_json::from_str(&payload).unwrap();
    assert_eq!(parsed["documentId"], document_id.as_str());
    ui.screenshot("events").await;
    ui.stop().await;
}

async fn the_organization_is_renamed_and_the_account_too(url: String) {
    let app = TestApp::start(&url).await;
    let (ada, org) = first_owner(&app).await;
    let ui = Ui::start(app, "settings-organization").await;
    ui.sign_in_as(&ada).await;
    ui.open("/admin/settings/organization").await;
    ui.fill("Organization name", "Acme Publishing").await;
    ui.click("Save organization").await;
    ui.see("The organization is saved.").await;
    let got = get_data(&ui.app, &ada, &format!("/api/organizations/{org}")).await;
    assert_eq!(got["name"], "Acme Publishing");
    let active = ui
        .eval("const s = document.getElementById('org-switcher'); return s.options[s.selectedIndex].text", vec![])
        .await;
    assert_eq!(active, json!("Acme Publishing"));

    // A child organization; the active one stays.
    ui.fill("New organization name", "Acme Kids").await;
    ui.control("Make it a child of Acme Publishing")
        .await
        .click()
        .await
        .unwrap();
    ui.click("Create organization").await;
    ui.see("Acme Kids is created.").await;
    ui.see("acme-kids").await;
    let orgs = get_data(&ui.app, &ada, "/api/organizations").await;
    let kids = orgs
        .as_array()
        .unwrap()
        .iter()
        .find(|o| o["slug"] == "acme-kids")
        .expect("created");
    assert_eq!(kids["parentId"], org.as_str());
    ui.screenshot("organization").await;

    // Deleting asks for the slug typed out; a parent with children is refused with the reason.
    ui.fill("Type default to confirm", "default").await;
    ui.click("Delete organization").await;
    ui.see("child organizations").await;
    ui.screenshot("delete-refused").await;
    get_data(&ui.app, &ada, &format!("/api/organizations/{org}")).await;

    ui.open("/admin/settings/account").await;
    ui.fill("Name", "Ada King").await;
    ui.click("Save profile").await;
    ui.see("Your profile is saved.").await;
    let session = ui
        .app
        .get("/api/auth/get-session")
        .cookie(&ada)
        .send()
        .await;
    assert_eq!(session.body["user"]["name"], "Ada King");
    // The instance's first person sees the sign-up policy.
    ui.see("Sign-up on this instance").await;
    ui.control("Invitation only").await.click().await.unwrap();
    ui.click("Save sign-up policy").await;
    ui.see("The sign-up policy is saved.").await;
    let policy = get_data(&ui.app, &ada, "/api/instance-settings").await;
    assert_eq!(policy["inviteOnly"], false, "{policy}");
    ui.screenshot("account").await;

    // The last owner of an organization cannot delete their account: the reason is shown.
    ui.fill("Your password", crate::support::PASSWORD).await;
    ui.click("Delete my account").await;
    confirm_dialog(&ui).await;
    ui.see("you are the last owner of organization").await;
    ui.screenshot("delete-account-refused").await;
    let session = ui
        .app
        .get("/api/auth/get-session")
        .cookie(&ada)
        .send()
        .await;
    assert_eq!(session.body["user"]["email"], "ada@example.com");
    ui.stop().await;
}

/// A section the caller's role may not use says so.
async fn a_viewer_is_told_what_they_may_not_use(url: String) {
    let app = TestApp::start(&url).await;
    let (ada, _) = first_owner(&app).await;
    let vic = member(&app, &ada, "Vic", "vic@example.com", "viewer").await;
    let ui = Ui::start(app, "settings-viewer").await;
    ui.sign_in_as(&vic).await;
    ui.open("/admin/settings/api-keys").await;
    ui.see("You may not use this section").await;
    ui.open("/admin/settings/members").await;
    ui.see("ada@example.com").await;
    let offered = ui
        .eval(
            "return document.querySelectorAll('button.change-role, .invite-form').length",
            vec![],
        )
        .await;
    assert_eq!(offered, json!(0), "a viewer is offered no member changes");
    ui.screenshot("members").await;
    assert!(!user_id(&vic).is_empty());
    ui.stop().await;
}

/// A plugin whose admin tools are a small custom element served from its own route.
struct Hello;

const HELLO_MODULE: &str = r#"
customElements.define("hello-tool", class extends HTMLElement {
  connectedCallback() {
    const p = document.createElement("p");
    p.className = "hello";
    const c = this.context;
    p.textContent = `Hello ${c.user.name} in ${c.organization.name} as ${c.role} with ${c.capabilities.length} capabilities`;
    this.append(p);
  }
});
customElements.define("hello-notes", class extends HTMLElement {
  connectedCallback() { this.textContent = `Notes of ${this.context.user.email}`; }
});
"#;

impl Plugin for Hello {
    fn id(&self) -> &str {
        "hello"
    }

    fn register(&self, parts: &mut PluginParts) {
        parts.route(PluginRoute::new(
            "tool-module",
            Method::GET,
            "/hello/tool.js",
            RequiredCapabilities::Public,
            || async { ([(header::CONTENT_TYPE, "text/javascript")], HELLO_MODULE) },
        ));
        parts.admin_tool(
            "hello",
            "Hello board",
            Component::new("hello-tool", "/api/hello/tool.js"),
            Placement::Tab,
            Some("tools"),
        );
        parts.admin_tool(
            "notes",
            "Quick notes",
            Component::new("hello-notes", "/api/hello/tool.js"),
            Placement::Sidebar,
            None,
        );
    }
}

async fn a_plugin_tool_is_mounted_on_its_page(url: String) {
    let app = TestApp::custom(config_for(&url), |b| b.plugin(Hello)).await;
    let (ada, _) = first_owner(&app).await;
    let ui = Ui::start(app, "settings-tool").await;
    ui.sign_in_as(&ada).await;
    ui.open("/admin").await;
    ui.click("Hello board").await;
    ui.arrive("/admin/tools/hello").await;
    ui.find("hello-tool p.hello").await;
    ui.see("Hello Ada in Default as owner with").await;
    ui.screenshot("tool").await;

    // The sidebar tool opens in its panel.
    ui.click("Quick notes").await;
    ui.see("Notes of ada@example.com").await;
    ui.eval(
        "document.querySelector('.sidebar-tool').scrollIntoView({block: 'center'})",
        vec![],
    )
    .await;
    ui.screenshot("sidebar-tool").await;

    ui.open("/admin/tools/nope").await;
    ui.see("No such tool").await;
    ui.screenshot("unknown").await;
    ui.stop().await;
}

crate::admin_scenarios!(
    members_and_invitations_are_managed_from_the_page,
    a_custom_role_is_created_edited_and_deleted,
    the_public_role_opens_anonymous_reads,
    an_api_key_secret_is_shown_once_and_works_until_deleted,
    plugin_settings_keep_a_secret_saved_without_it,
    jobs_are_retried_and_cancelled_and_events_listed,
    the_organization_is_renamed_and_the_account_too,
    a_viewer_is_told_what_they_may_not_use,
    a_plugin_tool_is_mounted_on_its_page,
);
