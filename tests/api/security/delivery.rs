//! Rows of the security table for delivery to frontends (issue 24, CONTRACT.md section 15):
//! the CSRF check lets a cookie write in from a listed CORS origin only, and an entity tag
//! never confirms what the caller may not read.

use std::sync::Arc;

use axum::http::StatusCode;
use serde_json::{Value, json};

use super::{DOCS, Fx, LISTED_ORIGIN, assert_no_hidden_values, forbidden};

pub(super) async fn cookie_writes_pass_from_listed_origins_only(fx: Arc<Fx>) {
    let before = fx.total(&fx.admin, Value::Null).await;
    // Origins that resemble the listed one, and the listed one as a Referer's prefix.
    for origin in [
        "https://evil.example",
        "http://site.example",
        "https://site.example.evil.example",
        "https://site.example:8443",
    ] {
        let res = fx
            .app
            .post(DOCS, json!({"type": "note", "data": {"title": "CORS"}}))
            .cookie_without_origin(&fx.editor)
            .header("origin", origin)
            .send()
            .await;
        forbidden(origin, &res);
        assert_eq!(res.header("access-control-allow-origin"), None, "{origin}");
    }
    assert_eq!(fx.total(&fx.admin, Value::Null).await, before);
    // The listed origin passes the check (the type does not exist: 400, nothing written).
    let res = fx
        .app
        .post(DOCS, json!({"type": "nosuch", "data": {}}))
        .cookie_without_origin(&fx.editor)
        .header("origin", LISTED_ORIGIN)
        .send()
        .await;
    assert_eq!(res.status, StatusCode::BAD_REQUEST, "{}", res.body);
    assert_eq!(
        res.header("access-control-allow-origin"),
        Some(LISTED_ORIGIN)
    );
}

pub(super) async fn entity_tags_confirm_no_hidden_field(fx: Arc<Fx>) {
    // The admin's tags describe bodies with the admin-only field: sent by the editor, they
    // never answer 304, and the editor's own body stays stripped.
    for path in [
        format!("{DOCS}/{}", fx.alpha),
        format!("{DOCS}/{}?depth=1", fx.beta),
        format!("{DOCS}?type=note"),
        format!("{DOCS}/by-ids?ids={},{}", fx.alpha, fx.beta),
    ] {
        let admin = fx.get(&fx.admin, &path).await;
        assert_eq!(admin.status, StatusCode::OK, "{path}: {}", admin.body);
        let tag = admin.header("etag").expect("an ETag").to_string();
        let res = fx
            .app
            .get(&path)
            .cookie(&fx.editor)
            .header("if-none-match", &tag)
            .send()
            .await;
        assert_eq!(
            res.status,
            StatusCode::OK,
            "{path}: the admin's tag is not the editor's"
        );
        assert_ne!(res.header("etag"), Some(tag.as_str()), "{path}");
        assert_no_hidden_values(&path, &res.body);
    }
}
