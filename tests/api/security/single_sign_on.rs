//! Rows of the security table for single sign-on (issue 29, CONTRACT.md section 20): a
//! provider's word about an e-mail address links accounts only when it says the address is
//! verified, and an account it makes holds exactly the provider's role.

use std::sync::Arc;

use axum::http::StatusCode;

use super::{Fx, person};
use crate::oidc::{refusal, session_cookie, sign_in_as};
use crate::support::Session;

/// 29: taking over an account through an unverified address; what a new account may do.
pub(super) async fn single_sign_on_never_takes_over_or_raises(fx: Arc<Fx>) {
    let app = &fx.app;
    // An administrator whose address the provider will not vouch for.
    person(app, "unverified-victim", &fx.parent, "admin").await;
    let res = sign_in_as(app, &fx.oidc, "unverified-victim@example.com").await;
    assert_eq!(refusal(&res), "unverified");

    // A new account of an allowed domain holds the provider's role there, nothing more.
    let res = sign_in_as(app, &fx.oidc, "newcomer@example.com").await;
    let newcomer = Session {
        token: String::new(),
        cookie: session_cookie(&res),
        user: serde_json::Value::Null,
    };
    let access = app.get("/api/user/access").cookie(&newcomer).send().await;
    assert_eq!(access.status, StatusCode::OK, "{}", access.body);
    assert_eq!(access.body["data"]["role"], "viewer", "{}", access.body);
    assert_eq!(access.body["data"]["organizationId"], fx.parent.as_str());
    let write = app
        .post(
            "/api/documents",
            serde_json::json!({"type": "note", "data": {"title": "from a new account"}}),
        )
        .cookie(&newcomer)
        .send()
        .await;
    assert_eq!(write.status, StatusCode::FORBIDDEN, "{}", write.body);
    assert_eq!(
        write.body,
        serde_json::json!({"error": "Forbidden"}),
        "an access refusal"
    );

    let res = sign_in_as(app, &fx.oidc, "outsider@elsewhere.test").await;
    assert_eq!(refusal(&res), "domain");
}
