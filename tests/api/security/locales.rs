//! Rows of the security table for localization (issue 26, CONTRACT.md section 17): a field the
//! caller may not read stays hidden in every locale, in the keyed `locale=*` shape and in a
//! filter of any locale, and a locale-scoped write cannot change it in any locale; narrowing
//! an organization's locales needs `org.settings` there.

use std::sync::Arc;

use axum::http::{Method, StatusCode};
use serde_json::json;

use super::{DOCS, Fx, QUERY, assert_no_hidden, forbidden, not_found, unauthorized};

pub(super) async fn localized_hidden_field_stays_hidden_in_every_locale(fx: Arc<Fx>) {
    let app = &fx.app;
    let res = app
        .post(
            DOCS,
            json!({"type": "note", "data": {"title": "Motto", "motto": "S-ALPHA"}}),
        )
        .cookie(&fx.admin)
        .send()
        .await;
    assert_eq!(res.status, StatusCode::CREATED, "{}", res.body);
    let id = res.body["data"]["id"].as_str().unwrap().to_string();
    let res = app
        .req(Method::PUT, &format!("{DOCS}/{id}?locale=de"))
        .json(json!({"data": {"title": "Motto", "motto": "S-BETA"}}))
        .cookie(&fx.admin)
        .send()
        .await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);

    for locale in ["en", "de", "*"] {
        for path in [
            format!("{DOCS}/{id}?locale={locale}"),
            format!("{DOCS}?type=note&locale={locale}"),
            format!("{DOCS}/by-ids?ids={id}&locale={locale}"),
        ] {
            let res = app.get(&path).cookie(&fx.editor).send().await;
            assert_eq!(res.status, StatusCode::OK, "{path}: {}", res.body);
            assert_no_hidden(&path, &res.body);
        }
        let res = app
            .post(
                QUERY,
                json!({"type": "note", "locale": locale, "where": {"motto": {"equals": "S-BETA"}}}),
            )
            .cookie(&fx.editor)
            .send()
            .await;
        assert_eq!(res.status, StatusCode::OK, "{}", res.body);
        assert_eq!(
            res.body["pagination"]["total"], 0,
            "where motto in {locale}"
        );
    }
    // The admin's same filter in German finds it: the filter is live, only hidden.
    let res = app
        .post(
            QUERY,
            json!({"type": "note", "locale": "de", "where": {"motto": {"equals": "S-BETA"}}}),
        )
        .cookie(&fx.admin)
        .send()
        .await;
    assert_eq!(res.body["pagination"]["total"], 1, "{}", res.body);

    // Writes in one locale or keyed cannot forge it in any locale.
    for (locale, motto) in [
        ("de", json!("FORGED")),
        ("*", json!({"en": "FORGED", "de": "FORGED"})),
    ] {
        let res = app
            .req(Method::PUT, &format!("{DOCS}/{id}?locale={locale}"))
            .json(json!({"data": {"title": "Motto", "motto": motto}}))
            .cookie(&fx.editor)
            .send()
            .await;
        assert_eq!(res.status, StatusCode::OK, "{}", res.body);
        assert_no_hidden("the editor's write answer", &res.body);
    }
    let res = app
        .get(&format!("{DOCS}/{id}?locale=*"))
        .cookie(&fx.admin)
        .send()
        .await;
    assert_eq!(
        res.body["data"]["draftData"]["motto"],
        json!({"en": "S-ALPHA", "de": "S-BETA"})
    );
}

pub(super) async fn organization_locales_need_org_settings(fx: Arc<Fx>) {
    let app = &fx.app;
    let path = format!("/api/organizations/{}", fx.parent);
    let body = json!({"locales": ["en"]});
    let res = app
        .req(Method::PATCH, &path)
        .json(body.clone())
        .cookie(&fx.editor)
        .send()
        .await;
    forbidden("editor narrows the organization's locales", &res);
    let res = app
        .req(Method::PATCH, &path)
        .json(body.clone())
        .key(&fx.read_key)
        .send()
        .await;
    forbidden("read key narrows the organization's locales", &res);
    let res = app
        .req(Method::PATCH, &path)
        .json(body)
        .cookie(&fx.stranger)
        .send()
        .await;
    not_found("an outsider narrows the parent's locales", &res);
    let res = app.get("/api/locales").send().await;
    unauthorized("GET /api/locales without a credential", &res);
    let res = app.get("/api/locales").cookie(&fx.admin).send().await;
    assert_eq!(
        res.body["data"]["available"],
        json!(["en", "de"]),
        "{}",
        res.body
    );
}
