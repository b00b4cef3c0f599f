//! Rows of the security table for people (issue 21, CONTRACT.md section 13): the role ceiling,
//! invitations taken over by whoever signs up first, and e-mail changes without the password.

use std::sync::Arc;

use axum::http::{Method, StatusCode};
use serde_json::json;

use super::{Fx, person};
use crate::people_support::{invitation_token, sign_up_invited};
use crate::support::{PASSWORD, Session};

const MEMBERS: &str = "/api/organizations/members";
const INVITATIONS: &str = "/api/organizations/invitations";

async fn change_role(fx: &Fx, who: &Session, user: &str, role: &str) -> crate::support::Reply {
    fx.app
        .req(Method::PATCH, MEMBERS)
        .cookie(who)
        .json(json!({"userId": user, "role": role}))
        .send()
        .await
}

fn id_of(s: &Session) -> String {
    s.user["id"].as_str().unwrap().to_string()
}

/// 15: an admin (who holds member.changeRole) raising their own role.
pub(super) async fn admin_cannot_change_own_role(fx: Arc<Fx>) {
    let climber = person(&fx.app, "climber", &fx.parent, "admin").await;
    for role in ["owner", "admin"] {
        change_role(&fx, &climber, &id_of(&climber), role)
            .await
            .assert_access_refusal(StatusCode::FORBIDDEN, "Forbidden");
    }
    let members = fx.app.get(MEMBERS).cookie(&fx.ada).send().await;
    let row = members.body["data"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["email"] == "climber@example.com")
        .cloned()
        .unwrap();
    assert_eq!(row["role"], "admin");
}

/// 15: a member who may change roles and invite, but lacks apiKey.manage, handing out a role
/// that holds it.
pub(super) async fn role_ceiling_caps_assignment_and_invitation(fx: Arc<Fx>) {
    let mut tx = fx.app.app.cms.store().write_instance_wide().await.unwrap();
    for (name, caps) in [
        (
            "ceilingmgr",
            vec![
                "member.changeRole",
                "member.invite",
                "document.read",
                "asset.read",
            ],
        ),
        ("ceilingkeys", vec!["apiKey.manage", "document.read"]),
    ] {
        tx.insert_role(&cms_store::roles::RoleRecord {
            id: format!("role-{name}"),
            organization_id: fx.parent.clone(),
            name: name.into(),
            description: String::new(),
            capabilities: cms_store::Json(caps.into_iter().map(String::from).collect()),
            is_built_in: false,
            created_at: 0,
            updated_at: 0,
        })
        .await
        .unwrap();
    }
    tx.commit().await.unwrap();
    let manager = person(&fx.app, "ceilingmgr", &fx.parent, "ceilingmgr").await;
    let target = person(&fx.app, "ceilingtarget", &fx.parent, "viewer").await;
    for role in ["ceilingkeys", "admin", "owner"] {
        let res = change_role(&fx, &manager, &id_of(&target), role).await;
        assert_eq!(res.status, StatusCode::FORBIDDEN, "{role}: {}", res.body);
        let res = fx
            .app
            .post(
                INVITATIONS,
                json!({"email": format!("ceiling-{role}@example.com"), "role": role}),
            )
            .cookie(&manager)
            .send()
            .await;
        assert_eq!(res.status, StatusCode::FORBIDDEN, "{role}: {}", res.body);
    }
    // The access refusals are `{ error }`; only `owner` names its rule.
    change_role(&fx, &manager, &id_of(&target), "ceilingkeys")
        .await
        .assert_access_refusal(StatusCode::FORBIDDEN, "Forbidden");
}

/// 16: whoever signs up first with an invited address, without the invitation's secret.
pub(super) async fn invited_address_without_secret_joins_nothing(fx: Arc<Fx>) {
    let invited = fx
        .app
        .post(
            INVITATIONS,
            json!({"email": "takeover@example.com", "role": "admin"}),
        )
        .cookie(&fx.admin)
        .send()
        .await;
    assert_eq!(invited.status, StatusCode::CREATED, "{}", invited.body);
    let invitation = &invited.body["data"];
    let squatter = sign_up_invited(&fx.app, "Squatter", "takeover@example.com", "guessed").await;
    assert_eq!(squatter.status, StatusCode::OK, "{}", squatter.body);
    let squatter = Session::from(&squatter);
    let orgs = fx
        .app
        .get("/api/organizations")
        .cookie(&squatter)
        .send()
        .await;
    assert_eq!(orgs.body["data"], json!([]), "joined nothing");
    // Unverified and without the secret, accepting by id is refused too.
    fx.app
        .req(
            Method::POST,
            &format!(
                "{INVITATIONS}/{}/accept",
                invitation["id"].as_str().unwrap()
            ),
        )
        .cookie(&squatter)
        .json(json!({"token": "guessed"}))
        .send()
        .await
        .assert_access_refusal(StatusCode::FORBIDDEN, "Forbidden");
    // The invitation stays pending, and its listing never shows the secret.
    let list = fx.app.get(INVITATIONS).cookie(&fx.admin).send().await;
    let text = list.body.to_string();
    assert!(text.contains("takeover@example.com"), "{text}");
    assert!(!text.contains(&invitation_token(invitation)), "{text}");
    assert!(!text.to_lowercase().contains("token"), "{text}");
}

/// 17: a session (stolen, or left open) moving the account to another mailbox.
pub(super) async fn email_change_needs_password_and_new_mailbox(fx: Arc<Fx>) {
    let victim = person(&fx.app, "emailvictim", &fx.parent, "viewer").await;
    let patch = |body: serde_json::Value| {
        fx.app
            .req(Method::PATCH, "/api/user")
            .cookie(&victim)
            .json(body)
            .send()
    };
    patch(json!({"email": "attacker@example.com"}))
        .await
        .assert_handler_error(StatusCode::BAD_REQUEST, "Bad Request");
    patch(json!({"email": "attacker@example.com", "currentPassword": "a wrong guess"}))
        .await
        .assert_access_refusal(StatusCode::FORBIDDEN, "Forbidden");
    let res = patch(json!({"email": "attacker@example.com", "currentPassword": PASSWORD})).await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);
    assert_eq!(res.body["data"]["email"], "emailvictim@example.com");
    let got = fx
        .app
        .get("/api/auth/get-session")
        .cookie(&victim)
        .send()
        .await;
    assert_eq!(got.body["user"]["email"], "emailvictim@example.com");
}

/// 15 and 16: creating a member with a password (no mail transport) hands out a role like an
/// invitation does, and must never take over an existing account by giving it a password.
pub(super) async fn member_with_password_stays_under_the_ceiling(fx: Arc<Fx>) {
    let body = |email: &str, role: &str| json!({"name": "Made", "email": email, "password": "another password 1", "role": role});
    // The editor holds no member.invite.
    fx.app
        .post(MEMBERS, body("made-by-editor@example.com", "viewer"))
        .cookie(&fx.editor)
        .send()
        .await
        .assert_access_refusal(StatusCode::FORBIDDEN, "Forbidden");
    // Only an owner makes an owner.
    let res = fx
        .app
        .post(MEMBERS, body("made-owner@example.com", "owner"))
        .cookie(&fx.admin)
        .send()
        .await;
    assert_eq!(res.status, StatusCode::FORBIDDEN, "{}", res.body);
    // An existing account (the viewer's) is 409, and its own password still opens it.
    let viewer_email = fx.viewer.user["email"].as_str().unwrap().to_string();
    fx.app
        .post(MEMBERS, body(&viewer_email, "admin"))
        .cookie(&fx.admin)
        .send()
        .await
        .assert_handler_error(StatusCode::CONFLICT, "Conflict");
    let res = fx
        .app
        .post(
            "/api/auth/sign-in/email",
            json!({"email": viewer_email, "password": "another password 1"}),
        )
        .send()
        .await;
    assert_eq!(res.status, StatusCode::UNAUTHORIZED, "{}", res.body);
    let res = fx
        .app
        .post(
            "/api/auth/sign-in/email",
            json!({"email": viewer_email, "password": PASSWORD}),
        )
        .send()
        .await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);
}

/// 29: a key acts for its creator inside one organization: it never changes their password nor
/// sees or ends their sessions; and nobody ends another person's session by its id.
pub(super) async fn password_and_sessions_stay_the_persons(fx: Arc<Fx>) {
    let editors = fx
        .app
        .get("/api/user/sessions")
        .cookie(&fx.editor)
        .send()
        .await;
    assert_eq!(editors.status, StatusCode::OK, "{}", editors.body);
    let editor_session = editors.body["data"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["current"] == true)
        .expect("the editor's session")["id"]
        .as_str()
        .unwrap()
        .to_string();
    let revoke = format!("/api/user/sessions/{editor_session}");
    for key in [&fx.read_key, &fx.caps_key] {
        let change = fx
            .app
            .post(
                "/api/user/change-password",
                json!({"currentPassword": PASSWORD, "newPassword": "taken over by a key"}),
            )
            .key(key)
            .send()
            .await;
        assert_eq!(change.status, StatusCode::FORBIDDEN, "{}", change.body);
        let list = fx.app.get("/api/user/sessions").key(key).send().await;
        assert_eq!(list.status, StatusCode::FORBIDDEN, "{}", list.body);
        let end = fx.app.req(Method::DELETE, &revoke).key(key).send().await;
        assert_eq!(end.status, StatusCode::FORBIDDEN, "{}", end.body);
    }
    for other in [&fx.viewer, &fx.admin, &fx.stranger] {
        let end = fx
            .app
            .req(Method::DELETE, &revoke)
            .cookie(other)
            .send()
            .await;
        assert_eq!(end.status, StatusCode::NOT_FOUND, "{}", end.body);
    }
    let still = fx
        .app
        .get("/api/user/sessions")
        .cookie(&fx.editor)
        .send()
        .await;
    assert_eq!(
        still.status,
        StatusCode::OK,
        "the editor is still signed in"
    );
}
