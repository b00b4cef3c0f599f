//! Rows of the security table for full-text search (issue 23, CONTRACT.md section 14): a
//! searchable field the caller may not read never matches, never excludes and never scores,
//! through REST's list and query and through GraphQL, in every locale.

use std::sync::Arc;

use axum::http::StatusCode;
use serde_json::{Value, json};

use super::{DOCS, Fx, GQL, QUERY, assert_no_hidden};

pub(super) async fn search_never_reads_a_hidden_field(fx: Arc<Fx>) {
    let app = &fx.app;
    // Words only this row uses, in the admin-only `secret` and the admin-only localized
    // `motto` (en and de).
    let res = app
        .post(
            DOCS,
            json!({"type": "note", "locale": "*", "data": {"title": "Zephyr", "secret": "quixotic",
                   "motto": {"en": "xylophone", "de": "zitronenfalter"}}}),
        )
        .cookie(&fx.admin)
        .send()
        .await;
    assert_eq!(res.status, StatusCode::CREATED, "{}", res.body);
    let total = |body: &Value| body["pagination"]["total"].as_i64().unwrap();
    for (search, locale) in [
        ("quixotic", "en"),
        ("xylophone", "en"),
        ("zitronenfalter", "de"),
    ] {
        let path = format!("{DOCS}?type=note&search={search}&locale={locale}");
        let res = app.get(&path).cookie(&fx.editor).send().await;
        assert_eq!(res.status, StatusCode::OK, "{path}: {}", res.body);
        assert_eq!(
            total(&res.body),
            0,
            "{path}: the editor's search finds nothing"
        );
        let res = app
            .post(
                QUERY,
                json!({"type": "note", "search": search, "locale": locale}),
            )
            .cookie(&fx.editor)
            .send()
            .await;
        assert_eq!(total(&res.body), 0, "query {search}: {}", res.body);
        // The admin's same search finds it: the search is live, the field only hidden.
        let res = app.get(&path).cookie(&fx.admin).send().await;
        assert_eq!(total(&res.body), 1, "{path} as admin: {}", res.body);
    }
    // Neither does a hidden word exclude, nor add to the score.
    let res = app
        .get(&format!("{DOCS}?type=note&search=zephyr%20-quixotic"))
        .cookie(&fx.editor)
        .send()
        .await;
    assert_eq!(total(&res.body), 1, "{}", res.body);
    assert_no_hidden("the editor's search answer", &res.body);
    let editor_score = res.body["data"][0]["_meta"]["score"].clone();
    let res = app
        .get(&format!("{DOCS}?type=note&search=zephyr"))
        .cookie(&fx.admin)
        .send()
        .await;
    assert_eq!(res.body["data"][0]["_meta"]["score"], editor_score);
    // GraphQL goes through the same service.
    let res = app
        .post(
            GQL,
            json!({"query": "{ allNote(search: \"quixotic\") { title } }"}),
        )
        .cookie(&fx.editor)
        .send()
        .await;
    assert_eq!(res.body["data"]["allNote"], json!([]), "{}", res.body);
}
