//! Rows of the security table for the `public` role (issue 24, CONTRACT.md section 15): an
//! anonymous request naming an organization reads that organization's published content as
//! its `public` role and nothing else: no write door, no draft, no hidden field, no child or
//! other organization, no person's powers; the role holds reads only and is nobody's.

use std::sync::Arc;

use axum::http::{Method, StatusCode};
use serde_json::json;

use super::{DOCS, Fx, GQL, QUERY, assert_no_hidden, forbidden, ids, not_found, unauthorized};
use crate::assets::ASSETS;

const HEADER: &str = "x-cms-organization";

impl Fx {
    /// The slug of an organization, as its owner (the instance super admin) reads it.
    async fn slug_of(&self, org: &str) -> String {
        let res = self
            .get(&self.ada, &format!("/api/organizations/{org}"))
            .await;
        assert_eq!(res.status, StatusCode::OK, "{}", res.body);
        res.body["data"]["slug"].as_str().unwrap().to_string()
    }

    /// Grants the parent's `public` role both reads (idempotent), and answers its slug.
    async fn public_parent(&self) -> String {
        let res = self
            .app
            .req(Method::PATCH, "/api/roles/public")
            .json(json!({"capabilities": ["document.read", "asset.read"]}))
            .cookie(&self.admin)
            .send()
            .await;
        assert_eq!(res.status, StatusCode::OK, "{}", res.body);
        self.slug_of(&self.parent).await
    }
}

pub(super) async fn public_reader_never_writes(fx: Arc<Fx>) {
    let slug = fx.public_parent().await;
    let app = &fx.app;
    let alpha = format!("{DOCS}/{}", fx.alpha);
    let mut attempts = crate::public_role::write_attempts(app, &slug, "note", &alpha).await;
    attempts.extend(vec![
        (
            "plugin route (document.read)",
            app.get(&format!("/api/probe/notes/{}", fx.alpha))
                .header(HEADER, &slug)
                .send()
                .await,
        ),
        (
            "plugin route (members)",
            app.get("/api/probe/whoami").header(HEADER, &slug).send().await,
        ),
        (
            "graphql mutation",
            app.post(
                GQL,
                json!({"query": format!("mutation {{ deleteNote(id: \"{}\") {{ id }} }}", fx.alpha)}),
            )
            .header(HEADER, &slug)
            .send()
            .await,
        ),
    ]);
    for (what, res) in &attempts {
        unauthorized(what, res);
    }
    let stored = fx.stored(&fx.alpha).await;
    assert_eq!(stored["draftData"]["title"], "Alpha", "nothing written");
}

pub(super) async fn public_reader_sees_published_copies_only(fx: Arc<Fx>) {
    let slug = fx.public_parent().await;
    let app = &fx.app;
    // The published copy, without the admin-only field, and no draft at all.
    for path in [
        format!("{DOCS}/{}", fx.alpha),
        format!("{DOCS}/{}?depth=2", fx.beta),
        format!("{DOCS}?type=note&sort=secret"),
        format!("{DOCS}/by-ids?ids={},{},{}", fx.alpha, fx.beta, fx.cross),
        format!("{DOCS}/{}/back-references", fx.alpha),
    ] {
        let res = app.get(&path).header(HEADER, &slug).send().await;
        assert_eq!(res.status, StatusCode::OK, "{path}: {}", res.body);
        assert_no_hidden(&path, &res.body);
        assert!(
            !res.body.to_string().contains("draftData"),
            "{path}: {}",
            res.body
        );
        assert!(
            !res.body.to_string().contains("Cross"),
            "{path}: a draft-only note"
        );
    }
    // A filter on the hidden field is value-blind.
    let mut totals = Vec::new();
    for secret in ["S-ALPHA", "WRONG"] {
        let res = app
            .post(
                QUERY,
                json!({"type": "note", "where": {"secret": {"equals": secret}}}),
            )
            .header(HEADER, &slug)
            .send()
            .await;
        assert_eq!(res.status, StatusCode::OK, "{}", res.body);
        totals.push(res.body["pagination"]["total"].clone());
    }
    assert_eq!(totals[0], totals[1], "{totals:?}");
    // Drafts: asked for, 403; draft-only, 404; versions, 401.
    let res = app
        .get(&format!("{DOCS}/{}?perspective=draft", fx.alpha))
        .header(HEADER, &slug)
        .send()
        .await;
    forbidden("perspective=draft", &res);
    let res = app
        .post(QUERY, json!({"type": "note", "perspective": "draft"}))
        .header(HEADER, &slug)
        .send()
        .await;
    forbidden("query perspective=draft", &res);
    let res = app
        .get(&format!("{DOCS}/{}", fx.cross))
        .header(HEADER, &slug)
        .send()
        .await;
    not_found("draft-only", &res);
    let res = app
        .get(&format!("{DOCS}/{}/versions", fx.alpha))
        .header(HEADER, &slug)
        .send()
        .await;
    unauthorized("versions", &res);
    let res = app
        .post(GQL, json!({"query": "{ allNote { title secret } }"}))
        .header(HEADER, &slug)
        .send()
        .await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);
    assert!(!res.body.to_string().contains("S-ALPHA"), "{}", res.body);
    assert!(!res.body.to_string().contains("Cross"), "{}", res.body);
}

pub(super) async fn public_reader_stays_in_its_organization(fx: Arc<Fx>) {
    let slug = fx.public_parent().await;
    let app = &fx.app;
    // The child's note and the outsider's, by any read and with includeChildOrganizations.
    for path in [
        format!("{DOCS}/{}?includeChildOrganizations=true", fx.child_note),
        format!("{DOCS}/{}", fx.stranger_note),
        format!("{ASSETS}/{}", fx.stranger_asset),
    ] {
        let res = app.get(&path).header(HEADER, &slug).send().await;
        not_found(&path, &res);
    }
    let res = app
        .get(&format!(
            "{DOCS}/by-ids?ids={},{}&includeChildOrganizations=true",
            fx.child_note, fx.stranger_note
        ))
        .header(HEADER, &slug)
        .send()
        .await;
    assert_eq!(ids(&res.body), Vec::<String>::new(), "{}", res.body);
    let res = app
        .get(&format!("{ASSETS}?includeChildOrganizations=true"))
        .header(HEADER, &slug)
        .send()
        .await;
    assert_eq!(res.status, StatusCode::OK);
    let assets = res.body["data"].as_array().unwrap();
    assert!(ids(&res.body).contains(&fx.asset));
    assert!(
        assets
            .iter()
            .all(|a| a["organizationId"] == fx.parent.as_str()),
        "only the parent's assets"
    );
    // A person's standing: none.
    for path in [
        "/api/organizations",
        "/api/organizations/members",
        "/api/roles",
        "/api/events",
        "/api/jobs",
    ] {
        let res = app.get(path).header(HEADER, &slug).send().await;
        unauthorized(path, &res);
    }
    let res = app
        .get("/api/auth/get-session")
        .header(HEADER, &slug)
        .send()
        .await;
    assert_eq!(res.body, serde_json::Value::Null);
}

pub(super) async fn unknown_or_ungranted_organization_stays_anonymous(fx: Arc<Fx>) {
    fx.public_parent().await;
    let app = &fx.app;
    // The outsider granted nothing; no organization has the slug; neither tells which.
    let outsider = fx.slug_of(&fx.outsider).await;
    for slug in [outsider.as_str(), "no-such-organization", ""] {
        let res = app
            .get(&format!("{DOCS}/{}", fx.stranger_note))
            .header(HEADER, slug)
            .send()
            .await;
        unauthorized(slug, &res);
    }
    // A credential that proves nothing is not turned into the public role.
    let parent = fx.slug_of(&fx.parent).await;
    let res = app
        .get(&format!("{DOCS}/{}", fx.alpha))
        .header(HEADER, &parent)
        .key("cms_not-a-key")
        .send()
        .await;
    unauthorized("bad key", &res);
    let res = app
        .get(&format!("{DOCS}/{}", fx.alpha))
        .header(HEADER, &parent)
        .header("cookie", "cms_session=forged")
        .send()
        .await;
    unauthorized("forged cookie", &res);
}

pub(super) async fn public_role_holds_reads_only_and_is_nobodys(fx: Arc<Fx>) {
    let app = &fx.app;
    for capability in [
        "document.create",
        "asset.upload",
        "member.invite",
        "role.manage",
    ] {
        let res = app
            .req(Method::PATCH, "/api/roles/public")
            .json(json!({"capabilities": ["document.read", capability]}))
            .cookie(&fx.admin)
            .send()
            .await;
        assert_eq!(
            res.status,
            StatusCode::BAD_REQUEST,
            "{capability}: {}",
            res.body
        );
        assert!(res.body["message"].as_str().unwrap().contains(capability));
    }
    let res = app
        .req(Method::PATCH, "/api/roles/public")
        .json(json!({"capabilities": ["document.read"]}))
        .cookie(&fx.editor)
        .send()
        .await;
    forbidden("editor grants", &res);
    let res = app
        .req(Method::PATCH, "/api/organizations/members")
        .json(json!({"userId": fx.viewer_id(), "role": "public"}))
        .cookie(&fx.ada)
        .send()
        .await;
    assert_eq!(res.status, StatusCode::BAD_REQUEST, "{}", res.body);
    let res = app
        .post(
            "/api/organizations/invitations",
            json!({"email": "anon@example.com", "role": "public"}),
        )
        .cookie(&fx.ada)
        .send()
        .await;
    assert_eq!(res.status, StatusCode::BAD_REQUEST, "{}", res.body);
    let res = app
        .req(Method::DELETE, "/api/roles/public")
        .cookie(&fx.ada)
        .send()
        .await;
    assert_eq!(res.status, StatusCode::FORBIDDEN, "{}", res.body);
}

impl Fx {
    fn viewer_id(&self) -> String {
        self.viewer.user["id"].as_str().unwrap().to_string()
    }
}

/// `status=changed` (issue 32, point 6) tells which documents have a draft that differs from
/// the published copy: the draft's to tell, so a reader of the published copy is refused.
pub(super) async fn changed_status_needs_the_draft_perspective(fx: Arc<Fx>) {
    let slug = fx.public_parent().await;
    let app = &fx.app;
    let path = format!("{DOCS}?type=note&status=changed");
    let res = app.get(&path).header(HEADER, &slug).send().await;
    res.assert_handler_error(StatusCode::BAD_REQUEST, "Bad Request");
    assert!(!res.body.to_string().contains("draftData"), "{}", res.body);
    let res = fx
        .get(&fx.viewer, &format!("{path}&perspective=published"))
        .await;
    res.assert_handler_error(StatusCode::BAD_REQUEST, "Bad Request");
    // A person who reads drafts gets the list, still without the admin-only field.
    let res = fx.get(&fx.editor, &path).await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);
    assert_no_hidden("status=changed", &res.body);
}
