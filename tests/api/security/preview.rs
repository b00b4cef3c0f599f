//! Rows of the security table for preview links (issue 24, CONTRACT.md section 15): a token
//! reads its one document's draft as its maker sees it, through the door and in the service
//! alike, and nothing else; only who may update that document makes one.

use std::sync::Arc;

use axum::http::{Method, StatusCode};
use cms::service::documents::DraftUpdate;
use cms::service::documents::{ListRequest, ReadOptions};
use cms::service::{Actor, Credentials, ErrorKind};
use serde_json::{Value, json};

use super::{DOCS, Fx, GQL, assert_no_hidden, forbidden, not_found, unauthorized};
use crate::support::Session;

async fn token(fx: &Fx, who: &Session, id: &str) -> String {
    let res = fx
        .app
        .req(Method::POST, &format!("{DOCS}/{id}/preview"))
        .cookie(who)
        .send()
        .await;
    assert_eq!(res.status, StatusCode::CREATED, "{}", res.body);
    res.body["data"]["token"].as_str().unwrap().to_string()
}

/// The editor's link to beta: beta's draft (alpha resolved) without a hidden value; 401 for
/// every other read, write, list, GraphQL and plugin route.
pub(super) async fn preview_token_reads_one_draft_as_its_maker(fx: Arc<Fx>) {
    let app = &fx.app;
    let token = token(&fx, &fx.editor, &fx.beta).await;
    let res = app
        .get(&format!("{DOCS}/{}?depth=1", fx.beta))
        .header("x-cms-preview", &token)
        .send()
        .await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);
    assert_eq!(res.body["data"]["draftData"]["title"], "Beta");
    assert_eq!(res.body["data"]["draftData"]["ref"]["title"], "Alpha");
    assert_no_hidden("the editor's preview of beta", &res.body);
    for path in [
        format!("{DOCS}/{}", fx.alpha),
        format!("{DOCS}/{}", fx.stranger_note),
        format!("{DOCS}/{}?includeChildOrganizations=true", fx.child_note),
        format!("{DOCS}?type=note"),
        format!("{DOCS}/by-ids?ids={}", fx.beta),
        format!("/api/probe/notes/{}", fx.beta),
        "/api/organizations".to_string(),
        "/api/user/access".to_string(),
    ] {
        let res = app.get(&path).header("x-cms-preview", &token).send().await;
        unauthorized(&path, &res);
    }
    let res = app
        .post(GQL, json!({"query": "{ allNote { id } }"}))
        .header("x-cms-preview", &token)
        .send()
        .await;
    unauthorized("GraphQL", &res);
    let res = app
        .req(Method::PUT, &format!("{DOCS}/{}", fx.beta))
        .json(json!({"data": {"title": "Owned"}}))
        .header("x-cms-preview", &token)
        .send()
        .await;
    unauthorized("PUT", &res);
}

/// The token's actor, in the service itself: every operation but that one read is 401.
pub(super) async fn preview_actor_is_refused_by_the_service(fx: Arc<Fx>) {
    let cms = &fx.app.app.cms;
    let token = token(&fx, &fx.admin, &fx.beta).await;
    let actor: Actor = cms
        .auth()
        .authenticate(&Credentials {
            preview: Some(token),
            ..Default::default()
        })
        .await
        .unwrap()
        .expect("the token proves a preview")
        .actor;
    let docs = cms.documents();
    let read = ReadOptions::default();
    let doc = docs.get(&actor, &fx.beta, read.clone()).await.unwrap();
    assert_eq!(doc.id, fx.beta);
    let kinds = [
        docs.get(&actor, &fx.alpha, read.clone()).await.err(),
        docs.by_ids(&actor, std::slice::from_ref(&fx.beta), read.clone())
            .await
            .err(),
        docs.list(
            &actor,
            ListRequest {
                doc_type: "note".into(),
                where_: Value::Null,
                sort: vec![],
                published: None,
                page: None,
                page_size: None,
                read,
                search: None,
            },
        )
        .await
        .err(),
        docs.update(
            &actor,
            &fx.beta,
            DraftUpdate {
                data: json!({"title": "Owned"}),
                publish: false,
                expected_revision: None,
                locale: None,
            },
        )
        .await
        .err(),
        docs.delete(&actor, &fx.beta).await.err(),
        docs.create_preview(&actor, &fx.beta).await.err(),
        cms.organizations().list(&actor).await.err(),
        cms.organizations().get(&actor, &fx.parent).await.err(),
        cms.members().list(&actor).await.err(),
        cms.api_keys().list(&actor).await.err(),
        cms.account().preferences(&actor).await.err(),
    ];
    for (i, error) in kinds.into_iter().enumerate() {
        assert_eq!(
            error.map(|e| e.kind()),
            Some(ErrorKind::Unauthenticated),
            "operation {i}"
        );
    }
}

/// Making a link: a viewer and a read key 403, another organization's document 404.
pub(super) async fn preview_link_needs_update_on_that_document(fx: Arc<Fx>) {
    let app = &fx.app;
    let path = format!("{DOCS}/{}/preview", fx.beta);
    let res = app.req(Method::POST, &path).cookie(&fx.viewer).send().await;
    forbidden("viewer", &res);
    let res = app.req(Method::POST, &path).key(&fx.read_key).send().await;
    forbidden("read key", &res);
    let res = app
        .req(Method::DELETE, &path)
        .key(&fx.read_key)
        .send()
        .await;
    forbidden("read key revokes", &res);
    for (who, res) in [
        (
            "stranger",
            app.req(Method::POST, &path)
                .cookie(&fx.stranger)
                .send()
                .await,
        ),
        (
            "stranger key",
            app.req(Method::POST, &path)
                .key(&fx.stranger_key)
                .send()
                .await,
        ),
        (
            "child admin",
            app.req(Method::POST, &path)
                .cookie(&fx.child_admin)
                .send()
                .await,
        ),
        (
            "stranger revokes",
            app.req(Method::DELETE, &path)
                .cookie(&fx.stranger)
                .send()
                .await,
        ),
    ] {
        not_found(who, &res);
    }
}
