//! Class 20 of the security table (issue 21, Build point 8): an open redirect through a link
//! of the instance, answers a browser could sniff or frame, and a flood of public form
//! submissions.

use std::sync::Arc;

use axum::http::StatusCode;
use serde_json::json;

use super::{Fx, handler_error};
use crate::support::Reply;

/// `callbackURL` of the verification link and the admin's way back to sign-in: only paths of
/// the instance, whatever a browser would read into the spelling.
pub(super) async fn redirect_targets_stay_on_the_instance(fx: Arc<Fx>) {
    for hostile in [
        "%2F%09%2Fevil.example",
        "%2F%0D%0A%2Fevil.example",
        "%2F%2Fevil.example",
        "%2F%5Cevil.example",
        "https%3A%2F%2Fevil.example",
    ] {
        let res = fx
            .app
            .get(&format!(
                "/api/auth/verify-email?token=x&callbackURL={hostile}"
            ))
            .send()
            .await;
        handler_error(hostile, &res, StatusCode::BAD_REQUEST, "Bad Request");
        assert_eq!(res.body["issues"][0]["path"], "callbackURL", "{hostile}");
        assert!(res.headers.get("location").is_none(), "{hostile}");
    }
    // The admin sends the signed-out to sign-in with the page asked for: a path.
    let res = fx.app.get("/admin/documents/note").send().await;
    let location = res.header("location").unwrap_or_default();
    assert!(
        location.starts_with("/admin/sign-in?redirect=/admin/documents/note"),
        "{location}"
    );
}

fn hardened(what: &str, res: &Reply) {
    assert_eq!(
        res.header("x-content-type-options"),
        Some("nosniff"),
        "{what}"
    );
    assert_eq!(res.header("x-frame-options"), Some("DENY"), "{what}");
}

/// Refusals, errors, a plugin's route and GraphQL are as hardened as any success.
pub(super) async fn api_answers_are_neither_sniffed_nor_framed(fx: Arc<Fx>) {
    let probe = format!("/api/probe/notes/{}", fx.alpha);
    hardened(
        "plugin route, no credential",
        &fx.app.get(&probe).send().await,
    );
    hardened(
        "plugin route, foreign key",
        &fx.app.get(&probe).key(&fx.stranger_key).send().await,
    );
    hardened("404", &fx.app.get("/api/nothing/here").send().await);
    hardened(
        "403",
        &fx.app
            .post("/api/documents", json!({"type": "note", "data": {}}))
            .key(&fx.read_key)
            .send()
            .await,
    );
    hardened(
        "graphql",
        &fx.app
            .post("/api/graphql", json!({"query": "{ __typename }"}))
            .key(&fx.read_key)
            .send()
            .await,
    );
    hardened(
        "public form route",
        &fx.app
            .post("/api/forms/none/submissions", json!({}))
            .send()
            .await,
    );
}

/// The 31st submission of a minute from one address is 429 with `Retry-After`, whatever the
/// earlier ones were (unknown forms here, so the flood stores nothing); another address is
/// not held back.
pub(super) async fn form_flood_from_one_address_is_429(fx: Arc<Fx>) {
    let submit = |peer: &'static str| {
        fx.app
            .post("/api/forms/no-such-form/submissions", json!({}))
            .peer(peer)
            .send()
    };
    for n in 0..30 {
        let res = submit("192.0.2.201").await;
        handler_error(
            &format!("submission {n}"),
            &res,
            StatusCode::NOT_FOUND,
            "Not Found",
        );
    }
    let res = submit("192.0.2.201").await;
    handler_error(
        "31st submission",
        &res,
        StatusCode::TOO_MANY_REQUESTS,
        "Too Many Requests",
    );
    let wait: u64 = res
        .header("retry-after")
        .and_then(|s| s.parse().ok())
        .expect("Retry-After in seconds");
    assert!((1..=60).contains(&wait), "{wait}");
    let res = submit("192.0.2.202").await;
    handler_error("another address", &res, StatusCode::NOT_FOUND, "Not Found");
}
