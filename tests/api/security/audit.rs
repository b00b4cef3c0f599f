//! Rows of the security table for the audit log (issue 28, CONTRACT.md section 19): only
//! `org.settings` in the organization reads its log, only a signed-in instance super admin the
//! whole instance's, and no organization's reader sees another's entries.

use std::sync::Arc;

use axum::http::StatusCode;
use serde_json::json;

use super::{DOCS, Fx, forbidden, unauthorized};

const AUDIT: &str = "/api/audit";

/// 30: who reads which audit entries.
pub(super) async fn audit_log_needs_org_settings_and_stays_in_its_organization(fx: Arc<Fx>) {
    let app = &fx.app;
    // Something audited in the parent and in the outsider.
    for (who, title) in [
        (&fx.admin, "parent audit"),
        (&fx.stranger, "outsider audit"),
    ] {
        let res = app
            .post(
                DOCS,
                json!({"type": "note", "data": {"title": title}, "publish": true}),
            )
            .cookie(who)
            .send()
            .await;
        assert_eq!(res.status, StatusCode::CREATED, "{}", res.body);
    }
    for who in [&fx.viewer, &fx.editor, &fx.auditor] {
        forbidden(
            "a member without org.settings",
            &app.get(AUDIT).cookie(who).send().await,
        );
    }
    for key in [&fx.read_key, &fx.caps_key] {
        forbidden(
            "a key without org.settings",
            &app.get(AUDIT).key(key).send().await,
        );
    }
    unauthorized("nobody", &app.get(AUDIT).send().await);
    let all = format!("{AUDIT}?scope=all");
    forbidden(
        "an organization admin, whole instance",
        &app.get(&all).cookie(&fx.admin).send().await,
    );
    forbidden(
        "a key, whole instance",
        &app.get(&all).key(&fx.read_key).send().await,
    );

    // Each admin reads exactly their own organization's entries.
    for (who, org) in [
        (&fx.admin, &fx.parent),
        (&fx.stranger, &fx.outsider),
        (&fx.child_admin, &fx.child),
    ] {
        let res = app
            .get(&format!("{AUDIT}?pageSize=100"))
            .cookie(who)
            .send()
            .await;
        assert_eq!(res.status, StatusCode::OK, "{}", res.body);
        let entries = res.body["data"].as_array().unwrap();
        assert!(
            entries.iter().all(|e| e["organizationId"] == org.as_str()),
            "only {org}'s entries: {entries:#?}"
        );
    }
    let res = app.get(&all).cookie(&fx.ada).send().await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);
}
