//! The CSRF check (CONTRACT.md section 12): a cookie-authenticated POST, PUT, PATCH or DELETE
//! must carry an `Origin` (or `Referer`) of this instance; keys and Bearer tokens are exempt.

use axum::http::{Method, StatusCode};
use serde_json::json;

use crate::support::{PASSWORD, TestApp, config_for};

const KEYS: &str = "/api/settings/api-keys";

fn key_body(name: &str) -> serde_json::Value {
    json!({"name": name, "permissions": ["write"]})
}

async fn cookie_writes_need_an_origin_of_this_instance(url: String) {
    let app = TestApp::start(&url).await;
    let session = app.sign_up("Ada", "ada@example.com").await;

    for (origin, referer) in [
        (None, None),
        (Some("http://evil.example"), None),
        (Some("http://cms.test:8080"), None),
        (Some("null"), Some("http://cms.test/admin")), // Origin wins over Referer
        (None, Some("http://evil.example/cms.test")),
    ] {
        let mut call = app
            .post(KEYS, key_body("k"))
            .cookie_without_origin(&session);
        if let Some(origin) = origin {
            call = call.header("origin", origin);
        }
        if let Some(referer) = referer {
            call = call.header("referer", referer);
        }
        call.send()
            .await
            .assert_access_refusal(StatusCode::FORBIDDEN, "Forbidden");
    }
    let mut tx = app.app.cms.store().read_instance_wide().await.unwrap();
    let org = tx
        .memberships_of(session.user["id"].as_str().unwrap())
        .await
        .unwrap()[0]
        .organization_id
        .clone();
    assert!(
        tx.api_keys(&org).await.unwrap().is_empty(),
        "nothing was written"
    );
    drop(tx);

    // The instance's own origin, or without it a Referer on the instance, passes.
    let res = app.post(KEYS, key_body("a")).cookie(&session).send().await;
    assert_eq!(res.status, StatusCode::CREATED, "{}", res.body);
    let id = res.body["data"]["id"].as_str().unwrap().to_string();
    let res = app
        .post(KEYS, key_body("b"))
        .cookie_without_origin(&session)
        .header("referer", "http://cms.test/admin/settings")
        .send()
        .await;
    assert_eq!(res.status, StatusCode::CREATED, "{}", res.body);

    // Reads are not checked; DELETE is.
    let res = app.get(KEYS).cookie_without_origin(&session).send().await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);
    app.req(Method::DELETE, &format!("{KEYS}/{id}"))
        .cookie_without_origin(&session)
        .send()
        .await
        .assert_access_refusal(StatusCode::FORBIDDEN, "Forbidden");
    // Signing out with the cookie is a cookie-authenticated write too.
    app.post("/api/auth/sign-out", json!({}))
        .cookie_without_origin(&session)
        .send()
        .await
        .assert_access_refusal(StatusCode::FORBIDDEN, "Forbidden");
    app.stop().await;
}

async fn keys_and_bearer_tokens_are_exempt(url: String) {
    let app = TestApp::start(&url).await;
    let session = app.sign_up("Ada", "ada@example.com").await;
    let res = app
        .post(KEYS, key_body("bearer"))
        .bearer(&session.token)
        .header("origin", "http://evil.example")
        .send()
        .await;
    assert_eq!(res.status, StatusCode::CREATED, "{}", res.body);
    let key = res.body["data"]["key"].as_str().unwrap().to_string();
    // A key wins over a cookie sent beside it, so the request is not cookie-authenticated.
    let res = app
        .post(
            "/api/documents",
            json!({"type": "post", "data": {"title": "Hello"}}),
        )
        .key(&key)
        .cookie_without_origin(&session)
        .send()
        .await;
    assert_eq!(res.status, StatusCode::CREATED, "{}", res.body);
    // Sign-in carries no session: a stale cookie beside it does not make it cookie-authenticated.
    let res = app
        .post(
            "/api/auth/sign-in/email",
            json!({"email": "ada@example.com", "password": PASSWORD}),
        )
        .header("cookie", "cms_session=stale.value")
        .send()
        .await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);
    app.stop().await;
}

async fn with_a_public_url_only_that_origin_passes(url: String) {
    let mut config = config_for(&url);
    config.server.public_url = Some("https://cms.example".into());
    let app = TestApp::with(config, None).await;
    let session = app.sign_up("Ada", "ada@example.com").await;
    // The request's own Host no longer counts: behind a proxy it names the backend.
    app.post(KEYS, key_body("host"))
        .cookie_without_origin(&session)
        .header("origin", "http://cms.test")
        .send()
        .await
        .assert_access_refusal(StatusCode::FORBIDDEN, "Forbidden");
    let res = app
        .post(KEYS, key_body("public"))
        .cookie_without_origin(&session)
        .header("origin", "https://CMS.example:443")
        .send()
        .await;
    assert_eq!(res.status, StatusCode::CREATED, "{}", res.body);
    app.stop().await;
}

cms_store::both_engines!(
    cookie_writes_need_an_origin_of_this_instance,
    keys_and_bearer_tokens_are_exempt,
    with_a_public_url_only_that_origin_passes,
);
