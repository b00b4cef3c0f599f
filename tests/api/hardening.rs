//! Issue 21, Build point 8 through HTTP: the verification link's `callbackURL` stays on the
//! instance, every `/api` answer carries the browser hardening headers (HSTS everywhere when the
//! instance is https), and a published slug stays unique when publishes race.

use axum::http::{Method, StatusCode};
use futures_util::future::join_all;
use serde_json::{Value, json};

use crate::support::{Reply, TestApp, config_for};

const DOCS: &str = "/api/documents";

/// Targets that are not a path of this instance, as a query value (percent-encoded).
const HOSTILE_CALLBACKS: [&str; 9] = [
    "%2F%2Fevil.example",
    "%2F%5Cevil.example",
    "%2F%09%2Fevil.example",
    "%2F%0A%2Fevil.example",
    "%2F%0D%2Fevil.example",
    "%2Fadmin%5C..%5C",
    "https%3A%2F%2Fevil.example%2Fadmin",
    "javascript%3Aalert(1)",
    "admin",
];

/// A hostile `callbackURL` is refused before the token is even looked at, naming the
/// parameter; a path of the instance is where the redirect goes.
async fn verification_callbacks_are_paths_of_this_instance(url: String) {
    let mut config = config_for(&url);
    config.server.public_url = Some("https://cms.example.com".into());
    let app = TestApp::with(config, None).await;
    for hostile in HOSTILE_CALLBACKS
        .iter()
        .copied()
        .chain(["https%3A%2F%2Fcms.example.com%2Fadmin"])
    {
        let res = app
            .get(&format!(
                "/api/auth/verify-email?token=unused&callbackURL={hostile}"
            ))
            .send()
            .await;
        res.assert_handler_error(StatusCode::BAD_REQUEST, "Bad Request");
        assert_eq!(res.body["issues"][0]["path"], "callbackURL", "{hostile}");
        assert!(res.headers.get("location").is_none(), "{hostile}");
    }
    // A path passes the check (and the bad token is then what is refused).
    let res = app
        .get("/api/auth/verify-email?token=unused&callbackURL=%2Fadmin%3Fwelcome%3D1")
        .send()
        .await;
    res.assert_handler_error(StatusCode::BAD_REQUEST, "Bad Request");
    assert!(res.body["issues"].as_array().is_none_or(Vec::is_empty));
    assert!(res.body["message"].as_str().unwrap().contains("link"));
    app.stop().await;
}

fn assert_hardened(what: &str, res: &Reply) {
    assert_eq!(
        res.header("x-content-type-options"),
        Some("nosniff"),
        "{what}"
    );
    assert_eq!(res.header("x-frame-options"), Some("DENY"), "{what}");
}

/// Every kind of answer under /api: success, refusal, 404, 405, a plugin's route, GraphQL.
async fn api_answers_carry_nosniff_and_deny(url: String) {
    let app = TestApp::start(&url).await;
    let ada = app.sign_up("Ada", "ada@example.com").await;
    let answers = [
        (
            "200",
            app.get("/api/auth/get-session").cookie(&ada).send().await,
        ),
        ("401", app.get(DOCS).send().await),
        (
            "400",
            app.post(DOCS, json!({"type": 1})).cookie(&ada).send().await,
        ),
        ("404 route", app.get("/api/no-such-route").send().await),
        (
            "405",
            app.req(Method::DELETE, "/api/auth/sign-in/email")
                .send()
                .await,
        ),
        (
            "plugin route, 404",
            app.post("/api/forms/none/submissions", json!({}))
                .send()
                .await,
        ),
        (
            "plugin route, 401",
            app.get("/api/forms/none/submissions").send().await,
        ),
        (
            "graphql",
            app.post("/api/graphql", json!({"query": "{ __typename }"}))
                .cookie(&ada)
                .send()
                .await,
        ),
    ];
    for (what, res) in &answers {
        assert_hardened(what, res);
        assert!(
            res.header("strict-transport-security").is_none(),
            "{what}: http"
        );
    }
    assert_eq!(answers[3].1.status, StatusCode::NOT_FOUND);
    assert_eq!(answers[4].1.status, StatusCode::METHOD_NOT_ALLOWED);
    assert_eq!(answers[5].1.status, StatusCode::NOT_FOUND);
    // Outside /api the pages set their own policy; the layer leaves them alone.
    let page = app.get("/admin/sign-in").send().await;
    assert_eq!(page.status, StatusCode::OK);
    app.stop().await;
}

/// HSTS on every answer, /api or not, errors included, when `server.publicUrl` is https; never
/// over plain http.
async fn https_instances_send_hsts_everywhere(url: String) {
    const HSTS: &str = "max-age=31536000; includeSubDomains";
    let mut config = config_for(&url);
    config.server.public_url = Some("https://cms.example.com".into());
    let app = TestApp::with(config, None).await;
    for path in [
        "/api/health",
        "/api/no-such-route",
        "/api/documents",
        "/admin/sign-in",
        "/api/forms/none/submissions",
    ] {
        let res = app.get(path).send().await;
        assert_eq!(
            res.header("strict-transport-security"),
            Some(HSTS),
            "{path}"
        );
    }
    app.stop().await;

    let mut config = config_for(&url);
    config.server.public_url = Some("http://cms.example.com".into());
    let app = TestApp::with(config, None).await;
    let res = app.get("/api/health").send().await;
    assert!(res.header("strict-transport-security").is_none());
    assert_hardened("http health", &res);
    app.stop().await;
}

/// Publishes that race for one slug: exactly one wins, the others get the uniqueness refusal
/// (400, issue `slug`/`unique`), whether they publish drafts or create published documents.
async fn racing_publishes_of_one_slug_publish_it_once(url: String) {
    const RACERS: usize = 8;
    let app = TestApp::start(&url).await;
    let ada = app.sign_up("Ada", "ada@example.com").await;
    let draft = |n: usize| json!({"type": "post", "data": {"title": format!("T{n}"), "slug": {"current": "race"}}});

    // Drafts do not reserve the slug: eight of them, then eight publishes at once.
    let mut ids = Vec::new();
    for n in 0..RACERS {
        let res = app.post(DOCS, draft(n)).cookie(&ada).send().await;
        assert_eq!(res.status, StatusCode::CREATED, "{}", res.body);
        ids.push(res.body["data"]["id"].as_str().unwrap().to_string());
    }
    let publishes = ids.iter().map(|id| {
        app.req(Method::POST, &format!("{DOCS}/{id}/publish"))
            .cookie(&ada)
            .send()
    });
    let answers = join_all(publishes).await;
    assert_exactly_one_wins(&answers, StatusCode::OK);

    // Creates that publish at once race the same way, for another slug.
    let creates = (0..RACERS).map(|n| {
        let mut body = draft(n);
        body["data"]["slug"]["current"] = json!("race-created");
        body["publish"] = json!(true);
        app.post(DOCS, body).cookie(&ada).send()
    });
    let answers = join_all(creates).await;
    assert_exactly_one_wins(&answers, StatusCode::CREATED);

    // The store agrees: one published copy per slug.
    for slug in ["race", "race-created"] {
        let res = app
            .post(
                "/api/documents/query",
                json!({"type": "post", "where": {"slug": {"equals": slug}}}),
            )
            .cookie(&ada)
            .send()
            .await;
        assert_eq!(res.status, StatusCode::OK, "{}", res.body);
        let published = res.body["data"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|doc| !doc["publishedAt"].is_null())
            .count();
        assert_eq!(published, 1, "{slug}: {}", res.body);
    }
    app.stop().await;
}

fn assert_exactly_one_wins(answers: &[Reply], won: StatusCode) {
    let winners = answers.iter().filter(|r| r.status == won).count();
    let statuses: Vec<u16> = answers.iter().map(|r| r.status.as_u16()).collect();
    assert_eq!(winners, 1, "{statuses:?}");
    for res in answers.iter().filter(|r| r.status != won) {
        res.assert_handler_error(StatusCode::BAD_REQUEST, "Bad Request");
        let issue = &res.body["issues"][0];
        assert_eq!(
            (&issue["path"], &issue["code"]),
            (&Value::from("slug"), &Value::from("unique")),
            "{}",
            res.body
        );
    }
}

cms_store::both_engines!(
    verification_callbacks_are_paths_of_this_instance,
    api_answers_carry_nosniff_and_deny,
    https_instances_send_hsts_everywhere,
    racing_publishes_of_one_slug_publish_it_once,
);
