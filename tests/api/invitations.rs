//! Invitations: create (with its e-mail), list, cancel, accept, and sign-up with an invitation
//! (CONTRACT.md sections 3, 4; SPEC.md Authentication point 11).

use axum::http::{Method, StatusCode};
use cms::service::MailKind;
use serde_json::{Value, json};

use crate::people_support::{
    active_org, first_owner, invitation_token, invite, member, now_millis, pass_days, sign_in,
    sign_up_invited, token_of, user_id,
};
use crate::support::{PASSWORD, Session, TestApp, config_for};

const INVITATIONS: &str = "/api/organizations/invitations";

async fn post_invitation(
    app: &TestApp,
    who: &Session,
    email: &str,
    role: &str,
) -> crate::support::Reply {
    app.post(INVITATIONS, json!({"email": email, "role": role}))
        .cookie(who)
        .send()
        .await
}

async fn sign_up(app: &TestApp, name: &str, email: &str) -> crate::support::Reply {
    app.post(
        "/api/auth/sign-up/email",
        json!({"name": name, "email": email, "password": PASSWORD}),
    )
    .send()
    .await
}

fn listed(res: &crate::support::Reply) -> Vec<(String, String)> {
    res.body["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| {
            (
                i["email"].as_str().unwrap().to_string(),
                i["status"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

async fn inviting_sends_an_email_and_lists_the_invitation(url: String) {
    let app = TestApp::start(&url).await;
    let (ada, _) = first_owner(&app).await;
    let before = now_millis(&app);
    let res = post_invitation(&app, &ada, "Bob@Example.com", "editor").await;
    assert_eq!(res.status, StatusCode::CREATED, "{}", res.body);
    let data = &res.body["data"];
    let mut keys: Vec<_> = data
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    keys.sort();
    assert_eq!(
        keys,
        vec!["acceptUrl", "email", "expiresAt", "id", "role", "status"]
    );
    assert_eq!(
        (&data["email"], &data["role"], &data["status"]),
        (
            &json!("bob@example.com"),
            &json!("editor"),
            &json!("pending")
        )
    );
    let expires = chrono::DateTime::parse_from_rfc3339(data["expiresAt"].as_str().unwrap())
        .unwrap()
        .timestamp_millis();
    let seven_days = 7 * 86_400_000;
    assert!(
        (before + seven_days..before + seven_days + 60_000).contains(&expires),
        "expires in 7 days: {expires} vs {before}"
    );
    // The answer and the e-mail carry the accept link with the secret: 256 random bits,
    // base64url, under the origin the inviter used (no publicUrl here).
    let accept_url = data["acceptUrl"].as_str().unwrap();
    let token = token_of(accept_url);
    assert_eq!(
        accept_url,
        format!("http://cms.test/admin/accept-invitation?token={token}")
    );
    assert_eq!(token.len(), 43, "{token}");
    assert!(
        token
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
    );
    let mail = app.mail.last(MailKind::Invitation, "bob@example.com").await;
    assert_eq!(mail.link, accept_url);
    assert!(mail.text.contains(&mail.link), "{}", mail.text);
    assert!(
        mail.text.contains("Default") && mail.text.contains("Ada"),
        "{}",
        mail.text
    );

    // The list shows the invitation, never its secret nor its hash.
    let list = app.get(INVITATIONS).cookie(&ada).send().await;
    assert_eq!(list.status, StatusCode::OK, "{}", list.body);
    let mut listed_as = data.clone();
    listed_as.as_object_mut().unwrap().remove("acceptUrl");
    assert_eq!(list.body["data"], json!([listed_as]));
    let text = list.body.to_string();
    assert!(
        !text.contains(&token) && !text.to_lowercase().contains("token"),
        "{text}"
    );
    let mut tx = app.app.cms.store().read_instance_wide().await.unwrap();
    let stored = tx
        .invitation(data["id"].as_str().unwrap())
        .await
        .unwrap()
        .unwrap();
    drop(tx);
    let hash = stored.token_hash.expect("a stored hash");
    assert_ne!(hash, token, "the secret itself is never stored");
    assert!(!text.contains(&hash), "{text}");

    // A live invitation is not sent twice; an address that is a member already is refused.
    post_invitation(&app, &ada, "bob@example.com", "viewer")
        .await
        .assert_handler_error(StatusCode::CONFLICT, "Conflict");
    post_invitation(&app, &ada, "ada@example.com", "viewer")
        .await
        .assert_handler_error(StatusCode::CONFLICT, "Conflict");

    // After seven days it reads as expired, and the address may be invited again.
    pass_days(&app, 7, &[&ada]).await;
    let list = app.get(INVITATIONS).cookie(&ada).send().await;
    assert_eq!(
        listed(&list),
        vec![("bob@example.com".into(), "expired".into())]
    );
    let again = post_invitation(&app, &ada, "bob@example.com", "viewer").await;
    assert_eq!(again.status, StatusCode::CREATED, "{}", again.body);
    let list = app.get(INVITATIONS).cookie(&ada).send().await;
    assert_eq!(
        listed(&list),
        vec![("bob@example.com".into(), "pending".into())]
    );
    assert_eq!(
        app.mail.to(MailKind::Invitation, "bob@example.com").len(),
        2
    );

    // Input, capability.
    for body in [
        json!({"email": "not-an-email", "role": "viewer"}),
        json!({"email": "c@example.com", "role": "no-such-role"}),
        json!({"email": "c@example.com"}),
        json!({"role": "viewer"}),
    ] {
        let res = app
            .post(INVITATIONS, body.clone())
            .cookie(&ada)
            .send()
            .await;
        res.assert_handler_error(StatusCode::BAD_REQUEST, "Bad Request");
        assert!(res.body["issues"].is_array(), "{body}");
    }
    let viewer = member(&app, &ada, "Vic", "vic@example.com", "viewer").await;
    post_invitation(&app, &viewer, "c@example.com", "viewer")
        .await
        .assert_access_refusal(StatusCode::FORBIDDEN, "Forbidden");
    app.get(INVITATIONS)
        .cookie(&viewer)
        .send()
        .await
        .assert_access_refusal(StatusCode::FORBIDDEN, "Forbidden");
    app.get(INVITATIONS)
        .send()
        .await
        .assert_access_refusal(StatusCode::UNAUTHORIZED, "Unauthorized");
    app.stop().await;
}

async fn links_use_the_public_url(url: String) {
    let mut config = config_for(&url);
    config.server.public_url = Some("https://cms.example.com/".into());
    let app = TestApp::with(config, None).await;
    let (ada, _) = first_owner(&app).await;
    let data = invite(&app, &ada, "bob@example.com", "viewer").await;
    let mail = app.mail.last(MailKind::Invitation, "bob@example.com").await;
    assert_eq!(
        mail.link,
        format!(
            "https://cms.example.com/admin/accept-invitation?token={}",
            invitation_token(&data)
        )
    );
    assert_eq!(data["acceptUrl"], json!(mail.link));
    app.stop().await;
}

async fn only_an_owner_invites_an_owner(url: String) {
    let app = TestApp::start(&url).await;
    let (ada, _) = first_owner(&app).await;
    let carol = member(&app, &ada, "Carol", "carol@example.com", "admin").await;
    let message = post_invitation(&app, &carol, "dan@example.com", "owner")
        .await
        .assert_handler_error(StatusCode::FORBIDDEN, "Forbidden");
    assert!(message.contains("owner"), "{message}");
    assert!(
        app.mail
            .to(MailKind::Invitation, "dan@example.com")
            .is_empty()
    );
    // The admin may invite to any other role; the owner may invite an owner.
    assert_eq!(
        post_invitation(&app, &carol, "dan@example.com", "admin")
            .await
            .status,
        StatusCode::CREATED
    );
    let res = post_invitation(&app, &ada, "eve@example.com", "owner").await;
    assert_eq!(res.status, StatusCode::CREATED);
    let token = invitation_token(&res.body["data"]);
    let eve = Session::from(&sign_up_invited(&app, "Eve", "eve@example.com", &token).await);
    let members = app
        .get("/api/organizations/members")
        .cookie(&eve)
        .send()
        .await;
    let eve_row = members.body["data"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["email"] == "eve@example.com")
        .cloned()
        .unwrap();
    assert_eq!(eve_row["role"], "owner");
    app.stop().await;
}

async fn cancelling_an_invitation(url: String) {
    let app = TestApp::start(&url).await;
    let (ada, _) = first_owner(&app).await;
    let data = invite(&app, &ada, "bob@example.com", "viewer").await;
    let id = data["id"].as_str().unwrap();
    let cancel = |id: &str| {
        app.req(Method::DELETE, INVITATIONS)
            .cookie(&ada)
            .json(json!({"id": id}))
    };
    let res = cancel(id).send().await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);
    assert_eq!(
        (&res.body["data"]["id"], &res.body["data"]["status"]),
        (&json!(id), &json!("cancelled"))
    );
    let list = app.get(INVITATIONS).cookie(&ada).send().await;
    assert_eq!(list.body["data"], json!([]));
    cancel(id)
        .send()
        .await
        .assert_handler_error(StatusCode::CONFLICT, "Conflict");
    cancel("no-such-invitation")
        .send()
        .await
        .assert_handler_error(StatusCode::NOT_FOUND, "Not Found");
    app.req(Method::DELETE, INVITATIONS)
        .cookie(&ada)
        .json(json!({}))
        .send()
        .await
        .assert_handler_error(StatusCode::BAD_REQUEST, "Bad Request");
    // A cancelled invitation opens no door: sign-up stays closed for the address.
    sign_up(&app, "Bob", "bob@example.com")
        .await
        .assert_handler_error(StatusCode::FORBIDDEN, "Forbidden");

    // An invitation of another organization is not found from here.
    let bobs_org = {
        let res = app
            .post(
                "/api/organizations",
                json!({"name": "Acme", "slug": "acme"}),
            )
            .cookie(&ada)
            .send()
            .await;
        res.body["data"]["id"].as_str().unwrap().to_string()
    };
    let carol = member(&app, &ada, "Carol", "carol@example.com", "admin").await;
    app.post(
        "/api/organizations/switch",
        json!({"organizationId": bobs_org}),
    )
    .cookie(&ada)
    .send()
    .await;
    let other = invite(&app, &ada, "dan@example.com", "viewer").await;
    app.req(Method::DELETE, INVITATIONS)
        .cookie(&carol)
        .json(json!({"id": other["id"]}))
        .send()
        .await
        .assert_handler_error(StatusCode::NOT_FOUND, "Not Found");
    app.stop().await;
}

async fn accepting_an_invitation(url: String) {
    let app = TestApp::start(&url).await;
    let (ada, default) = first_owner(&app).await;
    let bob = member(&app, &ada, "Bob", "bob@example.com", "viewer").await;
    let carol = member(&app, &ada, "Carol", "carol@example.com", "viewer").await;
    // Ada invites Bob, a member of Default already, to Acme.
    let acme = app
        .post(
            "/api/organizations",
            json!({"name": "Acme", "slug": "acme"}),
        )
        .cookie(&ada)
        .send()
        .await
        .body["data"]["id"]
        .as_str()
        .unwrap()
        .to_string();
    app.post("/api/organizations/switch", json!({"organizationId": acme}))
        .cookie(&ada)
        .send()
        .await;
    let inv = invite(&app, &ada, "bob@example.com", "editor").await;
    let accept = |id: &str| format!("{INVITATIONS}/{id}/accept");
    let id = inv["id"].as_str().unwrap();

    // Only the person it was sent to may accept it.
    app.req(Method::POST, &accept(id))
        .cookie(&carol)
        .send()
        .await
        .assert_handler_error(StatusCode::FORBIDDEN, "Forbidden");
    let key = app
        .create_key(&ada, json!({"name": "k", "permissions": ["read"]}))
        .await;
    app.req(Method::POST, &accept(id))
        .key(&key)
        .send()
        .await
        .assert_access_refusal(StatusCode::FORBIDDEN, "Forbidden");
    app.req(Method::POST, &accept("no-such-invitation"))
        .cookie(&bob)
        .send()
        .await
        .assert_handler_error(StatusCode::NOT_FOUND, "Not Found");

    let res = app.req(Method::POST, &accept(id)).cookie(&bob).send().await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);
    assert_eq!(
        (&res.body["data"]["id"], &res.body["data"]["role"]),
        (&json!(acme), &json!("editor"))
    );
    // Bob is a member with the invited role, and Acme is his active organization now.
    assert_eq!(active_org(&app, &bob).await, Some(acme.clone()));
    let mut tx = app.app.cms.store().read_instance_wide().await.unwrap();
    assert_eq!(
        tx.member(&acme, &user_id(&bob))
            .await
            .unwrap()
            .unwrap()
            .role,
        "editor"
    );
    assert_eq!(
        tx.member(&default, &user_id(&bob))
            .await
            .unwrap()
            .unwrap()
            .role,
        "viewer"
    );
    drop(tx);
    // Accepted invitations leave the list, and cannot be accepted twice.
    assert_eq!(
        app.get(INVITATIONS).cookie(&ada).send().await.body["data"],
        json!([])
    );
    app.req(Method::POST, &accept(id))
        .cookie(&bob)
        .send()
        .await
        .assert_handler_error(StatusCode::CONFLICT, "Conflict");

    // Expired and cancelled invitations are refused.
    let inv = invite(&app, &ada, "carol@example.com", "viewer").await;
    pass_days(&app, 8, &[&ada]).await;
    let message = app
        .req(Method::POST, &accept(inv["id"].as_str().unwrap()))
        .cookie(&sign_in(&app, "carol@example.com").await)
        .send()
        .await
        .assert_handler_error(StatusCode::CONFLICT, "Conflict");
    assert!(message.contains("expired"), "{message}");
    let inv = invite(&app, &ada, "carol@example.com", "viewer").await;
    app.req(Method::DELETE, INVITATIONS)
        .cookie(&ada)
        .json(json!({"id": inv["id"]}))
        .send()
        .await;
    let carol = sign_in(&app, "carol@example.com").await;
    let message = app
        .req(Method::POST, &accept(inv["id"].as_str().unwrap()))
        .cookie(&carol)
        .send()
        .await
        .assert_handler_error(StatusCode::CONFLICT, "Conflict");
    assert!(message.contains("cancelled"), "{message}");
    assert_eq!(active_org(&app, &carol).await, Some(default));
    app.stop().await;
}

async fn invite_only_sign_up_needs_an_open_invitation(url: String) {
    let app = TestApp::start(&url).await;
    let (ada, org) = first_owner(&app).await;
    // Without an invitation: refused, nothing stored.
    let message = sign_up(&app, "Bob", "bob@example.com")
        .await
        .assert_handler_error(StatusCode::FORBIDDEN, "Forbidden");
    assert!(message.contains("invitation"), "{message}");

    // With one but without its secret (whoever signs up first with the address): the account
    // is created and joins nothing; the invitation stays pending for its real recipient.
    let invitation = invite(&app, &ada, "bob@example.com", "editor").await;
    let res = sign_up(&app, "Mallory", "BOB@example.com").await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);
    assert_eq!(res.body["user"]["emailVerified"], false);
    let mallory = Session::from(&res);
    assert_eq!(active_org(&app, &mallory).await, None);
    assert_eq!(
        app.get("/api/organizations")
            .cookie(&mallory)
            .send()
            .await
            .body["data"],
        json!([])
    );
    assert_eq!(
        listed(&app.get(INVITATIONS).cookie(&ada).send().await),
        vec![("bob@example.com".into(), "pending".into())]
    );
    // Accepting needs the secret or a verified address.
    let accept = format!(
        "{INVITATIONS}/{}/accept",
        invitation["id"].as_str().unwrap()
    );
    for body in [
        None,
        Some(json!({})),
        Some(json!({"token": "not-the-secret"})),
    ] {
        let req = app.req(Method::POST, &accept).cookie(&mallory);
        let req = match body {
            Some(body) => req.json(body),
            None => req,
        };
        req.send()
            .await
            .assert_access_refusal(StatusCode::FORBIDDEN, "Forbidden");
    }
    assert_eq!(active_org(&app, &mallory).await, None);
    // The secret proves the mailbox: the holder joins, verified.
    let res = app
        .req(Method::POST, &accept)
        .cookie(&mallory)
        .json(json!({"token": invitation_token(&invitation)}))
        .send()
        .await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);
    assert_eq!(active_org(&app, &mallory).await, Some(org.clone()));
    let got = app
        .get("/api/auth/get-session")
        .cookie(&mallory)
        .send()
        .await;
    assert_eq!(got.body["user"]["emailVerified"], true);

    // A wrong secret (another invitation's, or none at all) joins nothing either.
    let carols = invite(&app, &ada, "carol@example.com", "viewer").await;
    let dans = invite(&app, &ada, "dan@example.com", "editor").await;
    for wrong in [invitation_token(&carols), "x".repeat(43)] {
        let res = sign_up_invited(&app, "Dan", "dan@example.com", &wrong).await;
        assert_eq!(res.status, StatusCode::OK, "{}", res.body);
        let dan = Session::from(&res);
        assert_eq!(active_org(&app, &dan).await, None);
        let mut tx = app.app.cms.store().write_instance_wide().await.unwrap();
        tx.delete_user(&user_id(&dan)).await.unwrap();
        tx.commit().await.unwrap();
    }
    // The right secret: Dan joins with the invited role, verified, and it is active.
    let res = sign_up_invited(&app, "Dan", "Dan@Example.com", &invitation_token(&dans)).await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);
    assert_eq!(
        res.body["user"]["role"], "editor",
        "instance role of later sign-ups"
    );
    assert_eq!(res.body["user"]["emailVerified"], true);
    let dan = Session::from(&res);
    assert_eq!(active_org(&app, &dan).await, Some(org.clone()));
    let mut tx = app.app.cms.store().read_instance_wide().await.unwrap();
    assert_eq!(
        tx.member(&org, &user_id(&dan)).await.unwrap().unwrap().role,
        "editor"
    );
    drop(tx);
    // The invitations used are gone from the list; Carol's is still pending.
    assert_eq!(
        listed(&app.get(INVITATIONS).cookie(&ada).send().await),
        vec![("carol@example.com".into(), "pending".into())]
    );
    app.req(Method::DELETE, INVITATIONS)
        .cookie(&ada)
        .json(json!({"id": carols["id"]}))
        .send()
        .await;

    // An expired invitation does not open sign-up.
    invite(&app, &ada, "carol@example.com", "viewer").await;
    pass_days(&app, 8, &[&ada]).await;
    sign_up(&app, "Carol", "carol@example.com")
        .await
        .assert_handler_error(StatusCode::FORBIDDEN, "Forbidden");

    // Check order (CONTRACT.md section 12): bad input 400 before policy 403, policy before
    // the taken address 422.
    sign_up(&app, "", "dan@example.com")
        .await
        .assert_handler_error(StatusCode::BAD_REQUEST, "Bad Request");
    sign_up(&app, "Ada", "ada@example.com")
        .await
        .assert_handler_error(StatusCode::FORBIDDEN, "Forbidden");
    // Bob holds an invitation to a second organization: policy passes, his address is taken.
    let acme = app
        .post(
            "/api/organizations",
            json!({"name": "Acme", "slug": "acme"}),
        )
        .cookie(&ada)
        .send()
        .await
        .body["data"]["id"]
        .clone();
    app.post("/api/organizations/switch", json!({"organizationId": acme}))
        .cookie(&ada)
        .send()
        .await;
    invite(&app, &ada, "bob@example.com", "viewer").await;
    sign_up(&app, "Bob", "bob@example.com")
        .await
        .assert_handler_error(StatusCode::UNPROCESSABLE_ENTITY, "Unprocessable Entity");
    app.stop().await;
}

async fn open_sign_up_also_honours_invitations(url: String) {
    let mut config = config_for(&url);
    config.auth.invite_only = false;
    let app = TestApp::with(config, None).await;
    let (ada, org) = first_owner(&app).await;
    // Invited to two organizations: Bob joins both; the newest invitation's is active.
    let acme = app
        .post(
            "/api/organizations",
            json!({"name": "Acme", "slug": "acme"}),
        )
        .cookie(&ada)
        .send()
        .await
        .body["data"]["id"]
        .as_str()
        .unwrap()
        .to_string();
    invite(&app, &ada, "bob@example.com", "viewer").await;
    app.post("/api/organizations/switch", json!({"organizationId": acme}))
        .cookie(&ada)
        .send()
        .await;
    let acmes = invite(&app, &ada, "bob@example.com", "admin").await;
    // A sign-up joins the one invitation whose secret it carries; having proven the
    // address, Bob accepts the other without a secret.
    let res = sign_up_invited(&app, "Bob", "bob@example.com", &invitation_token(&acmes)).await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);
    let bob = Session::from(&res);
    assert_eq!(active_org(&app, &bob).await, Some(acme.clone()));
    let pending = app.get("/api/organizations").cookie(&bob).send().await;
    assert_eq!(pending.body["data"].as_array().unwrap().len(), 1);
    let mut tx = app.app.cms.store().read_instance_wide().await.unwrap();
    let defaults = tx
        .pending_invitation(&org, "bob@example.com")
        .await
        .unwrap()
        .unwrap();
    drop(tx);
    let res = app
        .req(
            Method::POST,
            &format!("{INVITATIONS}/{}/accept", defaults.id),
        )
        .cookie(&bob)
        .send()
        .await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);
    let orgs = app.get("/api/organizations").cookie(&bob).send().await;
    let roles: Vec<(Value, Value)> = orgs.body["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| (o["id"].clone(), o["role"].clone()))
        .collect();
    assert_eq!(roles.len(), 2, "{}", orgs.body);
    assert!(roles.contains(&(json!(org), json!("viewer"))));
    assert!(roles.contains(&(json!(acme), json!("admin"))));
    app.stop().await;
}

async fn an_invitation_that_cannot_be_mailed_is_withdrawn(url: String) {
    let app = TestApp::start(&url).await;
    let (ada, _) = first_owner(&app).await;
    app.mail.fail(true);
    let message = post_invitation(&app, &ada, "bob@example.com", "viewer")
        .await
        .assert_handler_error(StatusCode::SERVICE_UNAVAILABLE, "Service Unavailable");
    assert!(message.contains("e-mail"), "{message}");
    assert_eq!(
        app.get(INVITATIONS).cookie(&ada).send().await.body["data"],
        json!([])
    );
    sign_up(&app, "Bob", "bob@example.com")
        .await
        .assert_handler_error(StatusCode::FORBIDDEN, "Forbidden");
    // Once mail works again, the address can be invited.
    app.mail.fail(false);
    assert_eq!(
        post_invitation(&app, &ada, "bob@example.com", "viewer")
            .await
            .status,
        StatusCode::CREATED
    );
    app.stop().await;
}

/// The accept page's lookup: the secret opens the invitation's summary, anything else is 404.
async fn an_accept_link_can_be_looked_up_by_its_secret(url: String) {
    let app = TestApp::start(&url).await;
    let (ada, org) = first_owner(&app).await;
    let data = invite(&app, &ada, "bob@example.com", "editor").await;
    let token = invitation_token(&data);
    let preview = |token: &str| {
        app.get(&format!("{INVITATIONS}/preview?token={token}"))
            .send()
    };
    let res = preview(&token).await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.body);
    assert_eq!(
        res.body["data"],
        json!({
            "id": data["id"],
            "organizationId": org,
            "organizationName": "Default",
            "email": "bob@example.com",
            "role": "editor",
            "inviterName": "Ada",
            "expiresAt": data["expiresAt"],
        })
    );
    preview("not-the-secret")
        .await
        .assert_handler_error(StatusCode::NOT_FOUND, "Not Found");
    app.get(&format!("{INVITATIONS}/preview"))
        .send()
        .await
        .assert_handler_error(StatusCode::BAD_REQUEST, "Bad Request");
    // Used, the secret opens nothing any more.
    sign_up_invited(&app, "Bob", "bob@example.com", &token).await;
    preview(&token)
        .await
        .assert_handler_error(StatusCode::NOT_FOUND, "Not Found");
    app.stop().await;
}

cms_store::both_engines!(
    an_accept_link_can_be_looked_up_by_its_secret,
    inviting_sends_an_email_and_lists_the_invitation,
    links_use_the_public_url,
    only_an_owner_invites_an_owner,
    cancelling_an_invitation,
    accepting_an_invitation,
    invite_only_sign_up_needs_an_open_invitation,
    open_sign_up_also_honours_invitations,
    an_invitation_that_cannot_be_mailed_is_withdrawn,
);
