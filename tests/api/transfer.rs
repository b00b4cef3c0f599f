//! `cms export` / `cms import` (issue 28 point 1, CONTRACT.md section 19): an instance seeded
//! through the API (organizations, roles, members, a key, documents with versions and
//! references, a pending schedule, an image and a file, plugin settings with a secret, a webhook
//! endpoint) is exported, imported into an empty database of the other engine on the other
//! storage back end, and every read of the seeded data answers the same there: SQLite on local
//! disk to PostgreSQL on S3, and back. Without credentials people reset their password and keys
//! stay behind; an export of one organization carries that one (and its children) alone; a
//! database that holds anything is refused, and so is an archive cut short.

use std::collections::BTreeSet;
use std::future::Future;
use std::path::PathBuf;

use axum::body::Bytes;
use axum::http::{Method, StatusCode};
use cms::core::plugin_settings::{SettingField, SettingKind, SettingsDeclaration};
use cms::service::{Clock, MailKind};
use cms_store::Dialect;
use cms_store::testing::TestDatabase;
use serde_json::{Value, json};

use crate::assets::{ASSETS, upload, uploaded};
use crate::assets_s3::{bucket_keys, s3_config};
use crate::people_support::{first_owner, member, sign_in, token_of};
use crate::s3::S3Server;
use crate::support::{AUTH_SECRET, Call, PASSWORD, Session, TestApp, config_for};

const ORGS: &str = "/api/organizations";
const MEMBERS: &str = "/api/organizations/members";
const ROLES: &str = "/api/roles";
const KEYS: &str = "/api/settings/api-keys";
const SETTINGS: &str = "/api/plugin-settings";
const WEBHOOKS: &str = "/api/webhooks";
const DOCS: &str = "/api/documents";
const SIGN_IN: &str = "/api/auth/sign-in/email";
/// The document types the seed writes (the demo schemas).
const TYPES: [&str; 3] = ["author", "post", "page"];
/// The key of secret plugin settings and webhook secrets, the same on both sides.
const ENCRYPTION_KEY: &str = "a secret encryption key of at least thirty-two characters";
/// The secret plugin setting, which must still decrypt on the target.
const TOKEN: &str = "newsletter-token-5b0e2c71";
const KEYED: &str = "GET /api/documents?type=post with the API key";
const HOUR: i64 = 3_600_000;

/// Runs `test` with a fresh database of each dialect (source, target), removed afterwards, also
/// when the test panics.
async fn with_databases<F, Fut>(source: Dialect, target: Dialect, test: F)
where
    F: FnOnce(String, String) -> Fut,
    Fut: Future<Output = ()> + Send + 'static,
{
    let (from, to) = (
        TestDatabase::new(source).await,
        TestDatabase::new(target).await,
    );
    let outcome = tokio::spawn(test(from.url.clone(), to.url.clone())).await;
    from.remove().await;
    to.remove().await;
    if let Err(e) = outcome {
        std::panic::resume_unwind(e.into_panic());
    }
}

/// A plugin's settings with a secret field: declared here, as the first-party webhooks form,
/// once filled in, would deliver events.
fn newsletter() -> SettingsDeclaration {
    let field = |name: &str, kind| SettingField {
        name: name.into(),
        kind,
        title: name.into(),
    };
    SettingsDeclaration {
        plugin_id: "newsletter".into(),
        title: "Newsletter".into(),
        description: "Sends new posts to subscribers".into(),
        fields: vec![
            field("listId", SettingKind::String),
            field("apiToken", SettingKind::Secret),
        ],
    }
}

/// Either side's configuration: local disk, or the bucket of `s3`; the same `auth.secret`
/// (key hashes and sessions) and encryption key (secrets) on both.
fn config(url: &str, s3: Option<&S3Server>) -> cms::Config {
    let mut config = match s3 {
        Some(s3) => s3_config(url, s3, 10 * 1024 * 1024),
        None => config_for(url),
    };
    config.auth.secret = Some(AUTH_SECRET.into());
    config.plugins.secret_encryption_key = Some(ENCRYPTION_KEY.into());
    config
}

async fn start(config: cms::Config) -> TestApp {
    TestApp::custom(config, |b| b.plugin_settings(newsletter())).await
}

/// A real PNG (so its placeholder and colour are computed at upload), partly transparent.
fn picture() -> Vec<u8> {
    use image::{DynamicImage, ImageFormat, Rgba, RgbaImage};
    let pixels = RgbaImage::from_fn(24, 16, |x, _| match x {
        0..12 => Rgba([200, 30, 30, 255]),
        _ => Rgba([30, 30, 200, 128]),
    });
    let mut out = std::io::Cursor::new(Vec::new());
    DynamicImage::ImageRgba8(pixels)
        .write_to(&mut out, ImageFormat::Png)
        .unwrap();
    out.into_inner()
}

/// Sends `call` and returns the `data` of its answer, which must have `status`.
async fn expect(call: Call<'_>, status: StatusCode) -> Value {
    let res = call.send().await;
    assert_eq!(res.status, status, "{}", res.body);
    res.body["data"].clone()
}

async fn read(app: &TestApp, s: &Session, path: &str) -> Value {
    expect(app.get(path).cookie(s), StatusCode::OK).await
}

async fn created(app: &TestApp, s: &Session, path: &str, body: Value) -> Value {
    expect(app.post(path, body).cookie(s), StatusCode::CREATED).await
}

fn id(v: &Value) -> String {
    v["id"].as_str().expect("an id").to_string()
}

/// The ids of a list answer's `data`.
fn ids(body: &Value) -> Vec<String> {
    body["data"]
        .as_array()
        .expect("a list")
        .iter()
        .map(id)
        .collect()
}

async fn create(app: &TestApp, s: &Session, doc_type: &str, data: Value, publish: bool) -> String {
    let body = json!({"type": doc_type, "data": data, "publish": publish});
    id(&created(app, s, DOCS, body).await)
}

async fn save(app: &TestApp, s: &Session, doc: &str, data: Value) {
    let call = app
        .req(Method::PUT, &format!("{DOCS}/{doc}"))
        .json(json!({ "data": data }));
    expect(call.cookie(s), StatusCode::OK).await;
}

/// The status of a sign-in with `password`.
async fn sign_in_with(app: &TestApp, email: &str, password: &str) -> StatusCode {
    let body = json!({"email": email, "password": password});
    app.post(SIGN_IN, body).send().await.status
}

async fn switch(app: &TestApp, s: &Session, org: &str) -> Value {
    let call = app.post(&format!("{ORGS}/switch"), json!({ "organizationId": org }));
    expect(call.cookie(s), StatusCode::OK).await
}

/// What the seed made that the tests name again.
struct Seeded {
    ada: Session,
    key: String,
    /// Ada's first organization ("Default"), where most of it lives.
    org: String,
    /// The post with versions, references and a pending scheduled publish.
    post: String,
    assets: Vec<String>,
}

/// Seeds an instance through the API.
async fn seed(app: &TestApp) -> Seeded {
    let (ada, org) = first_owner(app).await;
    let child = json!({"name": "Newsroom", "slug": "newsroom", "parentId": org,
                       "metadata": {"desk": "news"}});
    let child = id(&created(app, &ada, ORGS, child).await);
    let role = json!({"name": "reviewer", "description": "Reviews drafts",
                      "capabilities": ["document.update"]});
    created(app, &ada, ROLES, role).await;
    member(app, &ada, "Bob", "bob@example.com", "reviewer").await;
    let key = json!({"name": "Website", "permissions": ["read"]});
    let key = app.create_key(&ada, key).await;

    let fields = [("alt", "Red and blue"), ("creditLine", "Ada")];
    let res = upload(app, &ada, "cover.png", &picture(), &fields).await;
    assert_eq!(res.status, StatusCode::CREATED, "{}", res.body);
    let image = id(&res.body["data"]);
    let notes = b"Notes for the editors, kept as a plain file.\n";
    let file = id(&uploaded(app, &ada, "notes.txt", notes).await);

    let author = json!({"name": "Grace", "bio": "Writes", "avatar": {"asset": {"_ref": image}}});
    let author = create(app, &ada, "author", author, true).await;
    let post_data = |title: &str| {
        json!({"title": title, "excerpt": "Moving house", "author": {"_ref": author},
               "cover": {"asset": {"_ref": image}, "alt": "A cover"}, "tags": ["ops", "move"],
               "views": 12})
    };
    let post = create(app, &ada, "post", post_data("Draft one"), false).await;
    save(app, &ada, &post, post_data("Draft two")).await;
    save(app, &ada, &post, post_data("Draft three")).await;
    let publish = app.req(Method::POST, &format!("{DOCS}/{post}/publish"));
    expect(publish.cookie(&ada), StatusCode::OK).await;
    save(app, &ada, &post, post_data("Draft four")).await;
    create(app, &ada, "page", json!({"title": "About us"}), false).await;
    let run_at = app.clock.now().plus_millis(HOUR).to_rfc3339();
    let schedule = json!({"action": "publish", "runAt": run_at});
    created(app, &ada, &format!("{DOCS}/{post}/schedule"), schedule).await;
    let values = json!({"values": {"listId": "L-42", "apiToken": TOKEN}});
    let put = app
        .req(Method::PUT, &format!("{SETTINGS}/newsletter"))
        .json(values);
    expect(put.cookie(&ada), StatusCode::OK).await;

    switch(app, &ada, &child).await;
    create(app, &ada, "post", json!({"title": "Desk note"}), true).await;
    switch(app, &ada, &org).await;
    // Last, and disabled: no delivery is ever due to it.
    let hook = json!({"url": "http://127.0.0.1:9/hook", "events": ["document.published"],
                      "description": "Rebuilds the site", "enabled": false});
    created(app, &ada, WEBHOOKS, hook).await;
    Seeded {
        ada,
        key,
        org,
        post,
        assets: vec![image, file],
    }
}

/// What the API answers about the seeded data: every read with its status and body, in order.
#[derive(Default)]
struct Walk {
    reads: Vec<(String, StatusCode, Value)>,
    /// Each asset's original as /media serves it.
    media: Vec<(String, Bytes)>,
    /// The instance's audit log, newest first.
    audit: Vec<Value>,
    documents: u64,
    versions: u64,
    file_bytes: u64,
}

impl Walk {
    fn note(&mut self, what: &str, status: StatusCode, body: Value) {
        self.reads.push((what.to_string(), status, body));
    }

    /// GETs `path` (200; a published copy may be missing) and returns its body.
    async fn read(&mut self, app: &TestApp, s: &Session, path: &str) -> Value {
        let res = app.get(path).cookie(s).send().await;
        let maybe_missing = path.contains("perspective=published&depth");
        assert!(
            res.status == StatusCode::OK || (maybe_missing && res.status == StatusCode::NOT_FOUND),
            "{path}: {} {}",
            res.status,
            res.body
        );
        self.note(path, res.status, res.body.clone());
        res.body
    }

    fn status_of(&self, what: &str) -> StatusCode {
        self.reads.iter().find(|r| r.0 == what).expect(what).1
    }
}

/// Reads every endpoint of the seeded data, organization by organization.
async fn walk(app: &TestApp, s: &Session, key: &str) -> Walk {
    let mut w = Walk::default();
    let session = app.get("/api/auth/get-session").cookie(s).send().await;
    let user = session.body["user"].clone();
    w.note("the signed-in user", session.status, user);
    let keyed = app.get(&format!("{DOCS}?type=post")).bearer(key);
    let keyed = keyed.send().await;
    w.note(KEYED, keyed.status, keyed.body);
    let orgs = w.read(app, s, ORGS).await;
    for org in ids(&orgs) {
        let switched = switch(app, s, &org).await;
        w.note(&format!("switch to {org}"), StatusCode::OK, switched);
        let this = format!("{ORGS}/{org}");
        for path in [this.as_str(), MEMBERS, ROLES, KEYS, SETTINGS, WEBHOOKS] {
            w.read(app, s, path).await;
        }
        let assets = w.read(app, s, &format!("{ASSETS}?limit=100")).await;
        for asset in assets["data"].as_array().unwrap() {
            w.read(app, s, &format!("{ASSETS}/{}", id(asset))).await;
            w.read(app, s, &format!("{ASSETS}/{}/references", id(asset)))
                .await;
            let url = asset["url"].as_str().unwrap();
            let media = app.get(url).send().await;
            assert_eq!(media.status, StatusCode::OK, "{url}");
            w.file_bytes += media.bytes.len() as u64;
            w.media.push((url.to_string(), media.bytes));
        }
        for doc_type in TYPES {
            let list = format!("{DOCS}?type={doc_type}&pageSize=100&perspective=");
            let drafts = w.read(app, s, &format!("{list}draft")).await;
            w.read(app, s, &format!("{list}published")).await;
            for doc in ids(&drafts) {
                w.documents += 1;
                let doc = format!("{DOCS}/{doc}");
                for path in [
                    format!("{doc}?perspective=draft&depth=1"),
                    format!("{doc}?perspective=published&depth=1"),
                    format!("{doc}/schedule"),
                    format!("{doc}/back-references"),
                ] {
                    w.read(app, s, &path).await;
                }
                let versions = w.read(app, s, &format!("{doc}/versions?limit=100")).await;
                w.versions += versions["total"].as_u64().unwrap();
                for version in versions["data"].as_array().unwrap() {
                    let number = &version["versionNumber"];
                    w.read(app, s, &format!("{doc}/versions/{number}")).await;
                }
            }
        }
    }
    let audit = w.read(app, s, "/api/audit?scope=all&pageSize=100").await;
    w.reads.pop(); // compared on its own: the target adds its own sign-ins
    w.audit = audit["data"].as_array().unwrap().clone();
    w
}

/// The reads `keep` names answer the same, and the files are the same bytes.
fn assert_same(before: &Walk, after: &Walk, keep: impl Fn(&str) -> bool) {
    let kept = |w: &Walk| -> Vec<(String, StatusCode, Value)> {
        w.reads
            .iter()
            .filter(|r| keep(r.0.as_str()))
            .cloned()
            .collect()
    };
    let (b, a) = (kept(before), kept(after));
    let what = |reads: &[(String, StatusCode, Value)]| -> Vec<String> {
        reads.iter().map(|r| r.0.clone()).collect()
    };
    assert_eq!(what(&b), what(&a), "the same reads");
    for (b, a) in b.iter().zip(&a) {
        assert_eq!(b, a, "{} answers the same", b.0);
    }
    assert_eq!(before.media.len(), after.media.len());
    for ((url, b), (_, a)) in before.media.iter().zip(&after.media) {
        assert!(b == a, "{url} serves the same bytes");
    }
}

/// The target's audit log is the source's, plus the sign-ins made on the target since.
fn assert_audit_carried(before: &[Value], after: &[Value]) {
    assert!(!before.is_empty(), "the seed left audit entries");
    let known: BTreeSet<String> = before.iter().map(id).collect();
    let (carried, new): (Vec<&Value>, Vec<&Value>) =
        after.iter().partition(|e| known.contains(&id(e)));
    assert_eq!(
        carried,
        before.iter().collect::<Vec<_>>(),
        "the audit log is carried"
    );
    for entry in new {
        assert_eq!(entry["action"], "auth.signIn", "{entry}");
    }
}

/// The summary counts what was seeded.
fn assert_counts(summary: &cms::TransferSummary, seeded: &Walk) {
    let rows = |table: &str| summary.rows.get(table).copied().unwrap_or(0);
    for (table, expected) in [
        ("users", 2),
        ("organizations", 2),
        ("api_keys", 1),
        ("documents", seeded.documents),
        ("document_versions", seeded.versions),
        ("schedules", 1),
        ("assets", 2),
        ("plugin_settings", 1),
    ] {
        assert_eq!(rows(table), expected, "{table}: {:?}", summary.rows);
    }
    assert_eq!((summary.files, summary.file_bytes), (2, seeded.file_bytes));
}

/// The posts of `org` a full-text search finds, by id: the engines rank differently, they find
/// the same.
async fn found(app: &TestApp, s: &Session, org: &str) -> Vec<String> {
    switch(app, s, org).await;
    let res = app
        .get(&format!("{DOCS}?type=post&search=draft"))
        .cookie(s)
        .send()
        .await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);
    let mut found = ids(&res.body);
    found.sort();
    found
}

/// The carried schedule runs on the target at its time: it kept its job.
async fn assert_schedule_runs(app: &TestApp, s: &Session, seeded: &Seeded) {
    switch(app, s, &seeded.org).await;
    app.clock.advance_millis(2 * HOUR);
    let pending = format!("{DOCS}/{}/schedule", seeded.post);
    for _ in 0..10 {
        app.app.cms.worker().tick().await.unwrap();
        if read(app, s, &pending).await.is_null() {
            break;
        }
    }
    assert_eq!(
        read(app, s, &pending).await,
        Value::Null,
        "the schedule ran"
    );
    let doc = read(app, s, &format!("{DOCS}/{}", seeded.post)).await;
    assert_eq!(doc["publishedData"]["title"], "Draft four", "{doc}");
}

/// Everything, password hashes and keys included.
fn with_credentials() -> cms::ExportOptions {
    cms::ExportOptions {
        with_credentials: true,
        ..Default::default()
    }
}

/// Exports `options` of `config` to an archive in a new directory (removed when dropped).
async fn export(
    config: &cms::Config,
    options: cms::ExportOptions,
) -> (tempfile::TempDir, PathBuf, cms::TransferSummary) {
    let dir = tempfile::tempdir().unwrap();
    let archive = dir.path().join("instance.tar.zst");
    let summary = cms::export(config, &options, &archive)
        .await
        .expect("export");
    (dir, archive, summary)
}

async fn round_trip(source_url: String, target_url: String, s3_on_target: bool) {
    let s3 = S3Server::start().await;
    let source_config = config(&source_url, (!s3_on_target).then_some(&s3));
    let target_config = config(&target_url, s3_on_target.then_some(&s3));
    let source = start(source_config.clone()).await;
    let seeded = seed(&source).await;
    let before = walk(&source, &seeded.ada, &seeded.key).await;
    assert_eq!((before.documents, before.media.len()), (4, 2));
    assert_eq!(before.status_of(KEYED), StatusCode::OK);
    let searched = found(&source, &seeded.ada, &seeded.org).await;
    assert_eq!(searched.len(), 1);

    let (_dir, archive, exported) = export(&source_config, with_credentials()).await;
    assert_counts(&exported, &before);
    let imported = cms::import(&target_config, &archive).await.expect("import");
    assert_eq!(imported, exported, "the import loads what the export wrote");
    if s3_on_target {
        let keys: BTreeSet<String> = bucket_keys(&s3).await.into_iter().collect();
        let assets: BTreeSet<String> = seeded.assets.iter().cloned().collect();
        assert_eq!(keys, assets, "the files are in the target's bucket");
    }

    let target = start(target_config).await;
    let ada = sign_in(&target, "ada@example.com").await;
    let after = walk(&target, &ada, &seeded.key).await;
    assert_same(&before, &after, |_| true);
    assert_audit_carried(&before.audit, &after.audit);
    // The target rebuilds its search index after its start, in the background.
    let mut found_there = Vec::new();
    for _ in 0..100 {
        found_there = found(&target, &ada, &seeded.org).await;
        if found_there == searched {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    assert_eq!(found_there, searched, "the target's search finds the same");
    let settings = target.app.cms.plugin_settings();
    let values = settings.values_for(&seeded.org, "newsletter").await;
    let values = values.unwrap();
    assert_eq!(
        values,
        json!({"listId": "L-42", "apiToken": TOKEN}),
        "the secret decrypts"
    );
    sign_in(&target, "bob@example.com").await;
    assert_schedule_runs(&target, &ada, &seeded).await;
    source.stop().await;
    target.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_with_local_disk_to_postgres_with_s3() {
    with_databases(Dialect::Sqlite, Dialect::Postgres, |from, to| {
        round_trip(from, to, true)
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_with_s3_to_sqlite_with_local_disk() {
    with_databases(Dialect::Postgres, Dialect::Sqlite, |from, to| {
        round_trip(from, to, false)
    })
    .await;
}

/// Exports `options` of `config` and imports the archive into `into`.
async fn transfer(
    config: &cms::Config,
    options: cms::ExportOptions,
    into: &cms::Config,
) -> cms::TransferSummary {
    let (_dir, archive, _) = export(config, options).await;
    cms::import(into, &archive).await.expect("import")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_credentials_people_reset_and_keys_stay_behind() {
    with_databases(Dialect::Sqlite, Dialect::Postgres, |from, to| async move {
        const NEW_PASSWORD: &str = "a new passphrase for the new home";
        let (source_config, target_config) = (config(&from, None), config(&to, None));
        let source = start(source_config.clone()).await;
        let seeded = seed(&source).await;
        let before = walk(&source, &seeded.ada, &seeded.key).await;
        let imported = transfer(&source_config, Default::default(), &target_config).await;
        assert_eq!(imported.rows.get("api_keys").copied().unwrap_or(0), 0);
        assert_eq!(imported.rows.get("documents"), Some(&before.documents));

        let target = start(target_config).await;
        let refused = sign_in_with(&target, "ada@example.com", PASSWORD).await;
        assert_eq!(
            refused,
            StatusCode::UNAUTHORIZED,
            "no password hash came along"
        );
        let reset = json!({"email": "ada@example.com"});
        let request = target.post("/api/user/request-password-reset", reset);
        expect(request, StatusCode::OK).await;
        let mail = target.mail.last(MailKind::PasswordReset, "ada@example.com");
        let mail = mail.await;
        let reset = json!({"token": token_of(&mail.link), "newPassword": NEW_PASSWORD});
        expect(
            target.post("/api/user/reset-password", reset),
            StatusCode::OK,
        )
        .await;
        let new = json!({"email": "ada@example.com", "password": NEW_PASSWORD});
        let res = target.post(SIGN_IN, new).send().await;
        assert_eq!(res.status, StatusCode::OK, "{}", res.body);
        let ada = Session::from(&res);

        let after = walk(&target, &ada, &seeded.key).await;
        assert_same(&before, &after, |what| what.starts_with(DOCS));
        let keys: Vec<&Value> = after
            .reads
            .iter()
            .filter(|r| r.0 == KEYS)
            .map(|r| &r.2)
            .collect();
        assert_eq!(keys.len(), 2, "one list per organization");
        assert!(
            keys.iter().all(|list| list["data"] == json!([])),
            "no key came along"
        );
        target
            .get(ORGS)
            .bearer(&seeded.key)
            .send()
            .await
            .assert_access_refusal(StatusCode::UNAUTHORIZED, "Unauthorized");
        source.stop().await;
        target.stop().await;
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_organization_only() {
    with_databases(Dialect::Postgres, Dialect::Sqlite, |from, to| async move {
        let (source_config, target_config) = (config(&from, None), config(&to, None));
        let source = start(source_config.clone()).await;
        let (ada, default) = first_owner(&source).await;
        member(&source, &ada, "Carol", "carol@example.com", "editor").await;
        let desk = json!({"name": "Desk", "slug": "desk", "parentId": default});
        let desk = id(&created(&source, &ada, ORGS, desk).await);
        let beta = json!({"name": "Beta", "slug": "beta"});
        let beta = id(&created(&source, &ada, ORGS, beta).await);
        let post = |title: &str| json!({ "title": title });
        let kept = create(&source, &ada, "post", post("Kept"), true).await;
        switch(&source, &ada, &desk).await;
        let desk_post = create(&source, &ada, "post", post("From the desk"), true).await;
        switch(&source, &ada, &beta).await;
        member(&source, &ada, "Bob", "bob@example.com", "editor").await;
        let gone = create(&source, &ada, "post", post("Left behind"), true).await;
        let (kept, desk_post) = (format!("{DOCS}/{kept}"), format!("{DOCS}/{desk_post}"));
        switch(&source, &ada, &default).await;
        let kept_there = read(&source, &ada, &kept).await;
        switch(&source, &ada, &desk).await;
        let desk_there = read(&source, &ada, &desk_post).await;

        let options = cms::ExportOptions {
            organizations: vec!["default".into()],
            with_credentials: true,
        };
        let imported = transfer(&source_config, options, &target_config).await;
        for (table, expected) in [("organizations", 2), ("documents", 2), ("users", 2)] {
            let rows = imported.rows.get(table).copied().unwrap_or(0);
            assert_eq!(rows, expected, "{table}: {:?}", imported.rows);
        }

        let target = start(target_config).await;
        let ada = sign_in(&target, "ada@example.com").await;
        let orgs = read(&target, &ada, ORGS).await;
        let mut slugs: Vec<&str> = orgs
            .as_array()
            .unwrap()
            .iter()
            .map(|o| o["slug"].as_str().unwrap())
            .collect();
        slugs.sort();
        assert_eq!(slugs, ["default", "desk"]);
        switch(&target, &ada, &default).await;
        assert_eq!(read(&target, &ada, &kept).await, kept_there);
        switch(&target, &ada, &desk).await;
        assert_eq!(read(&target, &ada, &desk_post).await, desk_there);
        for path in [format!("{ORGS}/{beta}"), format!("{DOCS}/{gone}")] {
            let res = target.get(&path).cookie(&ada).send().await;
            assert_eq!(res.status, StatusCode::NOT_FOUND, "{path}: {}", res.body);
        }

        // Bob was only in Beta: he did not come along; Carol did.
        let mut tx = target.app.cms.store().read_instance_wide().await.unwrap();
        assert!(tx.organization_by_id(&beta).await.unwrap().is_none());
        assert!(tx.user_by_email("bob@example.com").await.unwrap().is_none());
        let carol = tx.user_by_email("carol@example.com").await.unwrap();
        assert!(carol.is_some());
        drop(tx);
        let bob = sign_in_with(&target, "bob@example.com", PASSWORD).await;
        assert_eq!(bob, StatusCode::UNAUTHORIZED);
        sign_in(&target, "carol@example.com").await;

        // The instance has its people: a first sign-up there is no one's way to super admin.
        let eve = json!({"name": "Eve", "email": "eve@example.com", "password": PASSWORD});
        // The claim is closed, so sign-up follows the instance's policy (invitations only by
        // default) instead of making Eve the first administrator.
        let res = target.post("/api/auth/sign-up/email", eve).send().await;
        assert_eq!(res.status, StatusCode::FORBIDDEN, "{}", res.body);
        assert_eq!(res.body["message"], "sign-up is by invitation only");
        source.stop().await;
        target.stop().await;
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_database_with_data_is_refused() {
    with_databases(Dialect::Sqlite, Dialect::Postgres, |from, to| async move {
        let (source_config, target_config) = (config(&from, None), config(&to, None));
        let source = start(source_config.clone()).await;
        let (ada, _) = first_owner(&source).await;
        create(&source, &ada, "post", json!({"title": "Elsewhere"}), true).await;
        let (_dir, archive, _) = export(&source_config, with_credentials()).await;

        let target = start(target_config.clone()).await;
        let zed = target.sign_up("Zed", "zed@example.com").await;
        create(&target, &zed, "post", json!({"title": "Here"}), true).await;
        let before = walk(&target, &zed, "cms_not_a_key").await;
        if let Ok(summary) = cms::import(&target_config, &archive).await {
            panic!("imported into a database with data: {:?}", summary.rows);
        }
        let after = walk(&target, &zed, "cms_not_a_key").await;
        assert_same(&before, &after, |_| true);
        assert_eq!(before.audit, after.audit, "nothing was written");
        let mut tx = target.app.cms.store().read_instance_wide().await.unwrap();
        assert_eq!(tx.count_users().await.unwrap(), 1);
        drop(tx);
        let ada = sign_in_with(&target, "ada@example.com", PASSWORD).await;
        assert_eq!(ada, StatusCode::UNAUTHORIZED);
        source.stop().await;
        target.stop().await;
    })
    .await;
}

/// Rewrites the archive at `from` to `to` without the entries `drop` names.
fn without_entries(from: &std::path::Path, to: &std::path::Path, drop: impl Fn(&str) -> bool) {
    let input = zstd::Decoder::new(std::fs::File::open(from).unwrap()).unwrap();
    let mut entries = tar::Archive::new(input);
    let output = zstd::Encoder::new(std::fs::File::create(to).unwrap(), 3).unwrap();
    let mut copy = tar::Builder::new(output);
    for entry in entries.entries().unwrap() {
        let mut entry = entry.unwrap();
        let path = entry.path().unwrap().to_string_lossy().into_owned();
        if !drop(&path) {
            let mut header = entry.header().clone();
            copy.append_data(&mut header, &path, &mut entry).unwrap();
        }
    }
    copy.into_inner().unwrap().finish().unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cut_or_damaged_archive_is_refused() {
    with_databases(Dialect::Sqlite, Dialect::Sqlite, |from, to| async move {
        let (source_config, target_config) = (config(&from, None), config(&to, None));
        let source = start(source_config.clone()).await;
        let (ada, _) = first_owner(&source).await;
        create(&source, &ada, "post", json!({"title": "Whole"}), true).await;
        let (dir, archive, _) = export(&source_config, with_credentials()).await;

        // Cut between two entries: still a well-formed tar stream, short of its audit log
        // (rows nothing after them depends on, so only the count can tell).
        let cut = dir.path().join("cut.tar.zst");
        without_entries(&archive, &cut, |path| path.starts_with("rows/audit_log/"));
        let refused = cms::import(&target_config, &cut).await.unwrap_err();
        assert!(
            refused.to_string().contains("ends early or was altered"),
            "{refused}"
        );

        // Cut in the middle of its bytes: the decompression says so.
        let bytes = std::fs::read(&archive).unwrap();
        let half = dir.path().join("half.tar.zst");
        std::fs::write(&half, &bytes[..bytes.len() / 2]).unwrap();
        let fresh = TestDatabase::new(Dialect::Sqlite).await;
        let refused = cms::import(&config(&fresh.url, None), &half)
            .await
            .unwrap_err();
        assert!(refused.to_string().contains("damaged"), "{refused}");
        fresh.remove().await;
        source.stop().await;
    })
    .await;
}
