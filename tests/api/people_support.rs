//! Helpers for the people tests: a mailer that records what the service sends, and short
//! ways to build organizations with members.

use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use axum::http::StatusCode;
use cms::service::{MailError, MailKind, MailMessage, Mailer};
use serde_json::{Value, json};

use crate::support::{PASSWORD, Session, TestApp};

/// Keeps every message instead of sending it; can be told to fail.
#[derive(Default)]
pub struct RecordingMailer {
    sent: Mutex<Vec<MailMessage>>,
    failing: AtomicBool,
}

#[async_trait::async_trait]
impl Mailer for RecordingMailer {
    async fn send(&self, message: &MailMessage) -> Result<(), MailError> {
        if self.failing.load(Ordering::SeqCst) {
            return Err(MailError("the test mail server is down".into()));
        }
        self.sent.lock().unwrap().push(message.clone());
        Ok(())
    }
}

impl RecordingMailer {
    /// Every message sent so far, oldest first.
    pub fn sent(&self) -> Vec<MailMessage> {
        self.sent.lock().unwrap().clone()
    }

    /// The messages of one kind sent to `to`.
    pub fn to(&self, kind: MailKind, to: &str) -> Vec<MailMessage> {
        self.sent()
            .into_iter()
            .filter(|m| m.kind == kind && m.to == to)
            .collect()
    }

    /// The newest message of `kind` to `to`, waiting up to five seconds for one sent in the
    /// background.
    pub async fn last(&self, kind: MailKind, to: &str) -> MailMessage {
        self.nth(kind, to, 0).await;
        self.to(kind, to).pop().unwrap()
    }

    /// The `n`th (from 0) message of `kind` to `to`, waiting up to five seconds for it.
    pub async fn nth(&self, kind: MailKind, to: &str, n: usize) -> MailMessage {
        for _ in 0..500 {
            if let Some(m) = self.to(kind, to).get(n) {
                return m.clone();
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        panic!("no {kind} e-mail #{n} to {to}; sent: {:?}", self.sent());
    }

    pub fn fail(&self, failing: bool) {
        self.failing.store(failing, Ordering::SeqCst);
    }
}

/// The value of the `token` query parameter of a link.
pub fn token_of(link: &str) -> String {
    link.split_once("token=")
        .expect("a token in the link")
        .1
        .split('&')
        .next()
        .unwrap()
        .to_string()
}

/// The session's active organization, or `None`.
pub async fn active_org(app: &TestApp, session: &Session) -> Option<String> {
    let got = app
        .get("/api/auth/get-session")
        .cookie(session)
        .send()
        .await;
    got.body["session"]["activeOrganizationId"]
        .as_str()
        .map(String::from)
}

pub fn user_id(session: &Session) -> String {
    session.user["id"].as_str().unwrap().to_string()
}

/// The first user: instance super_admin, owner of "Default". Returns the session and the
/// organization.
pub async fn first_owner(app: &TestApp) -> (Session, String) {
    let ada = app.sign_up("Ada", "ada@example.com").await;
    let org = active_org(app, &ada).await.expect("Default is active");
    (ada, org)
}

/// Invites `email` as `role` to the inviter's active organization and returns the
/// invitation's body (`data`, with the `acceptUrl` that carries its secret).
pub async fn invite(app: &TestApp, inviter: &Session, email: &str, role: &str) -> Value {
    let res = app
        .post(
            "/api/organizations/invitations",
            json!({"email": email, "role": role}),
        )
        .cookie(inviter)
        .send()
        .await;
    assert_eq!(res.status, StatusCode::CREATED, "invite: {}", res.body);
    res.body["data"].clone()
}

/// The secret of an invitation, read from the `acceptUrl` of its 201 answer.
pub fn invitation_token(invitation: &Value) -> String {
    token_of(invitation["acceptUrl"].as_str().expect("an acceptUrl"))
}

/// Signs up with `invitationToken` (and no check of the answer).
pub async fn sign_up_invited(
    app: &TestApp,
    name: &str,
    email: &str,
    token: &str,
) -> crate::support::Reply {
    app.post(
        "/api/auth/sign-up/email",
        json!({"name": name, "email": email, "password": PASSWORD, "invitationToken": token}),
    )
    .send()
    .await
}

/// A new person who joins the inviter's active organization as `role` by signing up with
/// the invited address and the invitation's secret. Returns their session (the organization
/// is active in it).
pub async fn member(
    app: &TestApp,
    inviter: &Session,
    name: &str,
    email: &str,
    role: &str,
) -> Session {
    let invitation = invite(app, inviter, email, role).await;
    let res = sign_up_invited(app, name, email, &invitation_token(&invitation)).await;
    assert_eq!(res.status, StatusCode::OK, "sign-up: {}", res.body);
    Session::from(&res)
}

/// Signs in again (a second, independent session).
pub async fn sign_in(app: &TestApp, email: &str) -> Session {
    let res = app
        .post(
            "/api/auth/sign-in/email",
            json!({"email": email, "password": PASSWORD}),
        )
        .send()
        .await;
    assert_eq!(res.status, StatusCode::OK, "sign-in: {}", res.body);
    Session::from(&res)
}

/// Moves the test clock `days` forward in steps short enough that the given sessions, used
/// after each step, slide along instead of expiring.
pub async fn pass_days(app: &TestApp, days: i64, keep: &[&Session]) {
    let mut left = days;
    while left > 0 {
        let step = left.min(2);
        app.clock.advance_days(step);
        left -= step;
        for session in keep {
            let got = app
                .get("/api/auth/get-session")
                .cookie(session)
                .send()
                .await;
            assert!(got.body["session"].is_object(), "the session slides along");
        }
    }
}

/// The test clock's now, in Unix milliseconds.
pub fn now_millis(app: &TestApp) -> i64 {
    use cms::Clock;
    app.clock.now().millis()
}

/// Creates a `post` document with `call`'s credentials and returns the status.
pub async fn create_post(call: crate::support::Call<'_>) -> StatusCode {
    call.json(json!({"type": "post", "data": {"title": "Hello"}}))
        .send()
        .await
        .status
}
