//! HTTP conventions: envelopes, request ids, body limits, unknown routes.

use axum::http::{Method, StatusCode};
use serde_json::json;

use crate::support::{TestApp, config_for};

async fn malformed_json_is_400_in_the_handler_envelope(url: String) {
    let app = TestApp::start(&url).await;
    let res = app
        .req(Method::POST, "/api/auth/sign-up/email")
        .raw("application/json", "{\"name\": ")
        .send()
        .await;
    let message = res.assert_handler_error(StatusCode::BAD_REQUEST, "Bad Request");
    assert!(message.contains("JSON"), "{message}");

    // Well-formed JSON of the wrong shape is a 400 too, never a 500.
    let res = app
        .post(
            "/api/auth/sign-up/email",
            json!({"name": 5, "email": [], "password": {}}),
        )
        .send()
        .await;
    res.assert_handler_error(StatusCode::BAD_REQUEST, "Bad Request");
    let res = app
        .post("/api/auth/sign-up/email", json!([1, 2]))
        .send()
        .await;
    res.assert_handler_error(StatusCode::BAD_REQUEST, "Bad Request");

    let res = app
        .req(Method::POST, "/api/auth/sign-in/email")
        .raw("text/plain", "hello")
        .send()
        .await;
    res.assert_handler_error(StatusCode::UNSUPPORTED_MEDIA_TYPE, "Unsupported Media Type");
    app.stop().await;
}

async fn an_oversize_body_is_413(url: String) {
    let mut config = config_for(&url);
    config.server.max_json_bytes = 1024;
    let app = TestApp::with(config, None).await;
    let big =
        json!({"name": "x".repeat(2000), "email": "a@example.com", "password": "long enough"});
    let res = app.post("/api/auth/sign-up/email", big).send().await;
    res.assert_handler_error(StatusCode::PAYLOAD_TOO_LARGE, "Payload Too Large");
    // Nothing was stored: the first sign-up is still open.
    app.sign_up("Ada", "ada@example.com").await;
    app.stop().await;
}

async fn every_response_carries_a_request_id(url: String) {
    let app = TestApp::start(&url).await;
    let res = app.get("/healthz").send().await;
    let generated = res.headers["x-request-id"].to_str().unwrap();
    assert_eq!(generated.len(), 36, "a UUID: {generated}");

    let res = app
        .get("/no/such/route")
        .header("x-request-id", "trace-me-42")
        .send()
        .await;
    assert_eq!(res.headers["x-request-id"], "trace-me-42");
    res.assert_handler_error(StatusCode::NOT_FOUND, "Not Found");

    let res = app
        .get("/api/settings/api-keys")
        .header("x-request-id", "abc")
        .send()
        .await;
    assert_eq!(res.headers["x-request-id"], "abc");
    app.stop().await;
}

async fn a_wrong_method_is_405_in_the_envelope(url: String) {
    let app = TestApp::start(&url).await;
    let res = app.req(Method::DELETE, "/healthz").send().await;
    res.assert_handler_error(StatusCode::METHOD_NOT_ALLOWED, "Method Not Allowed");
    app.stop().await;
}

/// PostgreSQL stores no NUL in text or jsonb: a NUL anywhere in a JSON body or a form field is
/// refused with 400 on every store (schemathesis found these answering 500 on PostgreSQL).
async fn a_nul_character_in_a_body_is_400(url: String) {
    let app = TestApp::start(&url).await;
    let ada = app.sign_up("Ada", "ada@example.com").await;
    let bodies = [
        ("/api/assets/references/counts", json!({"ids": ["a\u{0}b"]})),
        (
            "/api/documents",
            json!({"type": "post", "data": {"title": "x\u{0}"}}),
        ),
        (
            "/api/documents",
            json!({"type": "post", "data": {"x\u{0}": 1}}),
        ),
        (
            "/api/documents/query",
            json!({"type": "post", "where": {"title": {"equals": "\u{0}"}}}),
        ),
    ];
    for (path, body) in bodies {
        let res = app.post(path, body).cookie(&ada).send().await;
        let message = res.assert_handler_error(StatusCode::BAD_REQUEST, "Bad Request");
        assert!(message.contains("NUL"), "{path}: {message}");
        assert_eq!(res.body["issues"][0]["code"], "invalid", "{}", res.body);
    }
    let res = app
        .req(Method::DELETE, "/api/assets/bulk")
        .json(json!({"ids": ["\u{0}"]}))
        .cookie(&ada)
        .send()
        .await;
    res.assert_handler_error(StatusCode::BAD_REQUEST, "Bad Request");
    let res = app
        .req(Method::POST, "/api/assets")
        .cookie(&ada)
        .multipart(&[("title", "a\u{0}b")], Some(("file", "a.txt", b"words")))
        .send()
        .await;
    let message = res.assert_handler_error(StatusCode::BAD_REQUEST, "Bad Request");
    assert!(message.contains("NUL"), "{message}");
    // Nothing was stored on the way.
    let list = app.get("/api/assets").cookie(&ada).send().await;
    assert_eq!(list.body["pagination"]["total"], 0, "{}", list.body);
    app.stop().await;
}

cms_store::both_engines!(
    a_nul_character_in_a_body_is_400,
    malformed_json_is_400_in_the_handler_envelope,
    an_oversize_body_is_413,
    every_response_carries_a_request_id,
    a_wrong_method_is_405_in_the_envelope,
);
