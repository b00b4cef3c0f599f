//! The security row for presence on the document editor (issue 30): who has a document open is
//! the document's organization's to know. Another organization's member, its key and the
//! child's admin can neither list nor announce presence on a parent's document, nor learn who
//! has it open.

use std::sync::Arc;

use axum::http::{Method, StatusCode};

use super::{DOCS, Fx, not_found};

/// The parent's editor has alpha open; the outsider's admin, its key and the child's admin
/// try PUT, GET and DELETE on alpha's presence.
pub(super) async fn presence_stays_in_the_documents_organization(fx: Arc<Fx>) {
    let app = &fx.app;
    let path = format!("{DOCS}/{}/presence", fx.alpha);
    let res = app.req(Method::PUT, &path).cookie(&fx.editor).send().await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);
    for method in [Method::PUT, Method::GET, Method::DELETE] {
        for (who, res) in [
            (
                "stranger",
                app.req(method.clone(), &path)
                    .cookie(&fx.stranger)
                    .send()
                    .await,
            ),
            (
                "child admin",
                app.req(method.clone(), &path)
                    .cookie(&fx.child_admin)
                    .send()
                    .await,
            ),
        ] {
            not_found(&format!("{who} {method}"), &res);
            assert!(
                !res.body.to_string().contains("editor@"),
                "{who} {method}: {}",
                res.body
            );
        }
        // A key is refused before any document is looked at.
        let res = app
            .req(method.clone(), &path)
            .key(&fx.stranger_key)
            .send()
            .await;
        assert_eq!(res.status, StatusCode::FORBIDDEN, "{method}: {}", res.body);
    }
    // The parent's admin sees the editor only: nobody from outside was announced, and the
    // editor is still there (no outside DELETE removed them).
    let res = app.get(&path).cookie(&fx.admin).send().await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);
    let emails: Vec<&str> = res.body["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["email"].as_str().unwrap())
        .collect();
    assert_eq!(emails, ["editor@example.com"], "{}", res.body);
    let res = app
        .req(Method::DELETE, &path)
        .cookie(&fx.editor)
        .send()
        .await;
    assert_eq!(res.status, StatusCode::NO_CONTENT, "{}", res.body);
}
