//! Sessions: sign-in, sign-out, and opening a session (its token for `Authorization: Bearer`
//! and the signed value for the cookie). A session's lifetime slides as it is used, when its
//! credentials are resolved (`credentials.rs`).

use cms_core::{Email, Issues, Timestamp, new_id};
use cms_store::Tx;
use cms_store::sessions::SessionRecord;
use cms_store::users::UserRecord;

use super::{AuthService, verification_mail};
use crate::actor::{Actor, Credential, SessionView, User};
use crate::audit::{self, AuditAction, AuditTarget};
use crate::error::{Error, Result};
use crate::password;
use crate::rate_limit::{Limited, RateLimitService};
use crate::secret::{Purpose, random_token};

/// A sign-in request as received.
#[derive(Debug, Default)]
pub struct SignIn {
    pub email: Option<String>,
    pub password: Option<String>,
    pub client: ClientInfo,
}

/// What the door knows about the client, recorded on the session.
#[derive(Debug, Default, Clone)]
pub struct ClientInfo {
    pub ip_address: Option<String>,
    pub user_agent: Option<String>,
}

/// How a sign-in whose first factor is proven ends: a session, or a challenge to answer with a
/// second factor first.
#[derive(Debug)]
pub enum SignInOutcome {
    SignedIn(Box<Authenticated>),
    TwoFactorRequired { challenge: String },
}

/// A new session: the token for `Authorization: Bearer`, the signed value for the cookie.
#[derive(Debug)]
pub struct Authenticated {
    pub token: String,
    pub cookie_value: String,
    pub user: User,
    pub session: SessionView,
}

impl AuthService<'_> {
    /// Sign-in with e-mail and password. The session's active organization is the user's
    /// oldest membership. With two-factor sign-in on, the right password opens no session yet:
    /// it answers a challenge for [`AuthService::complete_two_factor`].
    pub async fn sign_in(&self, input: SignIn) -> Result<SignInOutcome> {
        RateLimitService::new(self.inner)
            .hit(
                Limited::SignIn,
                input.client.ip_address.as_deref(),
                input.email.as_deref(),
            )
            .await?;
        let mut issues = Issues::new();
        let email = input.email.as_deref().unwrap_or_default();
        let password = input.password.clone().unwrap_or_default();
        if email.trim().is_empty() {
            issues.add("email", "required", "email is required");
        }
        if password.is_empty() {
            issues.add("password", "required", "password is required");
        }
        issues.finish(()).map_err(Error::invalid)?;

        let user = match Email::parse(email) {
            Some(e) => {
                self.inner
                    .store
                    .read()
                    .await?
                    .user_by_email(e.as_str())
                    .await?
            }
            None => None,
        };
        let stored_hash = user.as_ref().and_then(|u| u.password_hash.clone());
        let now = self.inner.clock.now();
        // Verified whether or not the account exists (against a stand-in hash when it does
        // not), so the time taken tells nothing about which addresses have one.
        let verified = password::verify(password, stored_hash).await?;
        let user = match user {
            Some(user) if verified => user,
            user => {
                let who = user.as_ref().map(|u| u.id.as_str());
                let summary = format!("wrong password for {}", email.trim());
                self.record_failed_sign_in(who, &input.client, summary, now)
                    .await?;
                return Err(Error::InvalidCredentials);
            }
        };
        // Only after the password proved who is asking, so this reveals nothing to others.
        let policy = {
            let mut tx = self.inner.store.read().await?;
            self.inner.sign_up_policy(&mut *tx).await?
        };
        if policy.require_email_verification && !user.email_verified {
            self.resend_verification(&user, now).await?;
            return Err(Error::NotPermitted(
                "verify your e-mail address first: a new link is on its way".into(),
            ));
        }
        self.finish_sign_in(user, &input.client, "a password", now)
            .await
    }

    /// The end of a sign-in whose first factor is proven (a password, an identity provider):
    /// a challenge when the person has two-factor sign-in on, a session otherwise, in one unit.
    /// `how` says which first factor, for the audit log ("a password").
    pub(super) async fn finish_sign_in(
        &self,
        user: UserRecord,
        client: &ClientInfo,
        how: &str,
        now: Timestamp,
    ) -> Result<SignInOutcome> {
        let mut tx = self.inner.store.write_instance_wide().await?;
        if let Some(challenge) = self.challenge_if_enrolled(&mut *tx, &user.id, now).await? {
            tx.commit().await?;
            return Ok(SignInOutcome::TwoFactorRequired { challenge });
        }
        let session = self
            .open_signed_in_session(&mut *tx, &user.id, client, how, now)
            .await?;
        tx.commit().await?;
        self.authenticated(session, user)
            .map(|auth| SignInOutcome::SignedIn(Box::new(auth)))
    }

    /// The session a sign-in opens: its active organization is the user's oldest membership.
    /// The sign-in is audited there, in that organization, in the session's unit.
    pub(super) async fn open_signed_in_session(
        &self,
        tx: &mut dyn Tx,
        user_id: &str,
        client: &ClientInfo,
        how: &str,
        now: Timestamp,
    ) -> Result<(SessionRecord, String)> {
        let active_org = sign_in_organization(tx, user_id).await?;
        tx.append_audit(&[audit::person_entry(
            Some(user_id),
            active_org.as_deref(),
            AuditAction::SignIn,
            client.ip_address.as_deref(),
            format!("signed in with {how}"),
            now.millis(),
        )])
        .await?;
        self.open_session(tx, user_id, active_org, client, now)
            .await
    }

    /// Audits a refused sign-in (`auth.signInFailed`): in the organization the person would
    /// have signed in to, or in none when no account has the address.
    pub(super) async fn record_failed_sign_in(
        &self,
        user_id: Option<&str>,
        client: &ClientInfo,
        summary: String,
        now: Timestamp,
    ) -> Result<()> {
        let mut tx = self.inner.store.write_instance_wide().await?;
        let organization = match user_id {
            Some(id) => sign_in_organization(&mut *tx, id).await?,
            None => None,
        };
        tx.append_audit(&[audit::person_entry(
            user_id,
            organization.as_deref(),
            AuditAction::SignInFailed,
            client.ip_address.as_deref(),
            summary,
            now.millis(),
        )])
        .await?;
        tx.commit().await?;
        Ok(())
    }

    /// 403 unless `password` is the caller's current one. Counted like sign-ins (per address),
    /// so a stolen session cannot guess it at leisure.
    pub(crate) async fn check_password(&self, actor: &Actor, password: Option<&str>) -> Result<()> {
        RateLimitService::new(self.inner)
            .hit(Limited::SignIn, None, Some(&actor.user.email))
            .await?;
        let stored = {
            let mut tx = self.inner.store.read().await?;
            tx.user_by_id(&actor.user.id).await?
        };
        let hash = stored.and_then(|u| u.password_hash);
        if password::verify(password.unwrap_or_default().to_string(), hash).await? {
            Ok(())
        } else {
            Err(Error::Forbidden)
        }
    }

    /// A fresh verification link for an unverified user who tried to sign in.
    async fn resend_verification(&self, user: &UserRecord, now: Timestamp) -> Result<()> {
        let mut tx = self.inner.store.write_instance_wide().await?;
        let mail = verification_mail(self.inner, &mut *tx, &user.id, &user.email, now).await?;
        tx.commit().await?;
        let _ = self.inner.send_mail(&mail).await;
        Ok(())
    }

    /// Revokes the session behind a session actor at once. A key actor has no session: nothing
    /// to revoke.
    pub async fn sign_out(&self, actor: &Actor) -> Result<()> {
        if let Credential::Session(session) = &actor.credential {
            let now = self.inner.clock.now().millis();
            let mut tx = self.inner.store.write_instance_wide().await?;
            if tx.delete_session(&session.id).await? {
                tx.append_audit(&[audit::entry(
                    actor,
                    actor.organization_id.as_deref(),
                    AuditAction::SignOut,
                    Some(AuditTarget::new("user", &actor.user.id)),
                    "signed out",
                    now,
                )])
                .await?;
            }
            tx.commit().await?;
        }
        Ok(())
    }

    pub(super) async fn open_session(
        &self,
        tx: &mut dyn Tx,
        user_id: &str,
        active_organization_id: Option<String>,
        client: &ClientInfo,
        now: Timestamp,
    ) -> Result<(SessionRecord, String)> {
        let token = random_token(32);
        let record = SessionRecord {
            id: new_id(),
            token_hash: self.inner.secret.hash_hex(Purpose::SessionToken, &token),
            user_id: user_id.to_string(),
            active_organization_id,
            expires_at: now
                .plus_days(self.inner.settings.session_lifetime_days)
                .millis(),
            ip_address: client.ip_address.clone(),
            user_agent: client
                .user_agent
                .as_ref()
                .map(|ua| ua.chars().take(512).collect()),
            created_at: now.millis(),
            updated_at: now.millis(),
        };
        tx.insert_session(&record).await?;
        Ok((record, token))
    }

    pub(super) fn authenticated(
        &self,
        (session, token): (SessionRecord, String),
        user: UserRecord,
    ) -> Result<Authenticated> {
        Ok(Authenticated {
            cookie_value: self.inner.secret.sign(Purpose::CookieSignature, &token),
            token,
            session: SessionView::from(&session),
            user: User::from_record(user)?,
        })
    }
}

/// The organization a sign-in opens the session in: the person's oldest membership.
async fn sign_in_organization(tx: &mut dyn Tx, user_id: &str) -> Result<Option<String>> {
    Ok(tx
        .memberships_of(user_id)
        .await?
        .into_iter()
        .next()
        .map(|m| m.organization_id))
}
