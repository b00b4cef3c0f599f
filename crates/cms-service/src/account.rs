//! The caller's own account (SPEC.md "User account", CONTRACT.md sections 3 and 20): profile,
//! editor preferences, e-mail verification, password reset and change, the caller's sessions,
//! and deleting the account.
//!
//! Profile and preferences need a signed-in session: an API key acts for its creator inside
//! one organization and must not be able to take over the person (a leaked key changing the
//! account's e-mail, then resetting its password). Verification and reset are reached from
//! e-mailed links, without a session: the single-use token is the credential.
//!
//! Changing one's e-mail (CONTRACT.md section 13) needs the current password and waits for the
//! new address to answer: the change is a single-use token naming the new address, sent there,
//! and applied when its link (the verification endpoint) is followed. A stolen session alone
//! can therefore neither move the account to another mailbox nor, through a password reset
//! sent there, take it over.

use cms_core::redirect::same_origin_path;
use cms_core::{Email, Issue, Issues, Password, Timestamp};
use cms_store::users::UserRecord;
use serde_json::{Map, Value};

use crate::Inner;
use crate::actor::{Actor, Credential, User, check_email, check_user_name, email_taken};
use crate::auth::tokens::{self, TokenKind};
use crate::auth::{AuthService, ClientInfo};
use crate::error::{Error, Result};
use crate::events::{MEMBER_REMOVED, UserDeletedPayload, member_event, user_deleted_event};
use crate::mail::{MailKind, MailMessage};
use crate::organizations::{required, required_email, session_of};
use crate::password;
use crate::rate_limit::{Limited, RateLimitService};

/// The largest preferences object kept per user, serialised.
const MAX_PREFERENCES_BYTES: usize = 64 * 1024;

/// A profile update as received: at least one of `name`, `email`.
#[derive(Debug, Default)]
pub struct ProfileUpdate {
    pub name: Option<String>,
    /// A new address: changed only once its link is followed.
    pub email: Option<String>,
    /// Required with a new `email`.
    pub current_password: Option<String>,
}

/// A password change as received (CONTRACT.md section 20).
#[derive(Debug)]
pub struct PasswordChange {
    pub current_password: Option<String>,
    pub new_password: Option<String>,
    /// End every other session of the person (the default).
    pub revoke_other_sessions: bool,
}

/// One of the caller's sessions, as they see it in their list (CONTRACT.md section 20).
#[derive(Debug, Clone, PartialEq, serde::Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct SessionSummary {
    pub id: String,
    pub created_at: Timestamp,
    /// When the session was last renewed or switched organization: its sliding lifetime moves
    /// forward while it is used, so this is within a day of its last use.
    pub last_seen_at: Timestamp,
    pub user_agent: Option<String>,
    pub ip_address: Option<String>,
    /// The session this request came with.
    pub current: bool,
}

/// A followed verification link: where to send the browser next, if anywhere.
#[derive(Debug)]
pub struct EmailVerified {
    pub redirect: Option<String>,
}

pub struct AccountService<'a> {
    inner: &'a Inner,
}

impl<'a> AccountService<'a> {
    pub(crate) fn new(inner: &'a Inner) -> Self {
        AccountService { inner }
    }

    /// Changes the caller's name at once, and asks for an e-mail change: with the right
    /// `currentPassword` (400 without, 403 when wrong) a link goes to the new address and the
    /// address changes when it is followed. The answer shows the account as it is now, its
    /// e-mail unchanged. An address another account uses is 422, as at sign-up.
    pub async fn update_profile(&self, actor: &Actor, input: ProfileUpdate) -> Result<User> {
        session_of(actor)?;
        if input.name.is_none() && input.email.is_none() {
            return Err(Error::bad_request("send at least one of `name`, `email`"));
        }
        let mut issues = Issues::new();
        let name = input
            .name
            .as_deref()
            .and_then(|n| check_user_name(&mut issues, n));
        let email = input
            .email
            .as_deref()
            .and_then(|raw| check_email(&mut issues, raw))
            .filter(|e| e.as_str() != actor.user.email);
        if email.is_some() && input.current_password.as_deref().is_none_or(str::is_empty) {
            issues.add(
                "currentPassword",
                "required",
                "changing the e-mail address needs the current password",
            );
        }
        issues.finish(()).map_err(Error::invalid)?;
        if email.is_some() {
            AuthService::new(self.inner)
                .check_password(actor, input.current_password.as_deref())
                .await?;
        }

        let now = self.inner.clock.now();
        let mut tx = self.inner.store.write_instance_wide().await?;
        let mut user = tx
            .user_by_id(&actor.user.id)
            .await?
            .ok_or(Error::Unauthorized)?;
        if let Some(name) = name {
            user.name = name;
            user.updated_at = now.millis();
            tx.update_user_profile(
                &user.id,
                &user.name,
                &user.email,
                user.email_verified,
                now.millis(),
            )
            .await?;
        }
        let mut change = None;
        if let Some(email) = &email {
            if tx.user_by_email(email.as_str()).await?.is_some() {
                return Err(email_taken());
            }
            change = Some(self.email_change_mail(&mut *tx, &user, email, now).await?);
        }
        tx.commit().await?;
        if let Some(message) = change {
            // A failure is logged; asking again sends a new link.
            let _ = self.inner.send_mail(&message).await;
        }
        User::from_record(user)
    }

    /// Changes the caller's password (a signed-in session only: 403 for an API key): the
    /// current one must be right (403 otherwise, counted like sign-ins), the new one 8 to 128
    /// characters (400). Unless told otherwise every other session ends with it, and reset
    /// links sent before stop working. Answers how many sessions ended.
    pub async fn change_password(&self, actor: &Actor, change: PasswordChange) -> Result<u64> {
        let current = session_of(actor)?;
        let mut issues = Issues::new();
        if change.current_password.as_deref().is_none_or(str::is_empty) {
            issues.add("currentPassword", "required", "currentPassword is required");
        }
        let new_password = parse_new_password(&mut issues, change.new_password.as_deref());
        issues.finish(()).map_err(Error::invalid)?;
        let new_password = new_password.expect("checked above");
        AuthService::new(self.inner)
            .check_password(actor, change.current_password.as_deref())
            .await?;
        let hash = password::hash(new_password.expose().to_string()).await?;
        let now = self.inner.clock.now();
        let mut tx = self.inner.store.write_instance_wide().await?;
        tx.set_password_hash(&actor.user.id, &hash, now.millis())
            .await?;
        tx.delete_user_tokens(&actor.user.id, TokenKind::PasswordReset.name())
            .await?;
        let revoked = if change.revoke_other_sessions {
            tx.delete_other_sessions_of_user(&actor.user.id, &current.id)
                .await?
        } else {
            0
        };
        tx.commit().await?;
        tracing::info!(user = %actor.user.id, sessions_revoked = revoked, "password changed");
        Ok(revoked)
    }

    /// The caller's live sessions, most recently renewed first, the one asking marked
    /// `current` (a signed-in session only).
    pub async fn sessions(&self, actor: &Actor) -> Result<Vec<SessionSummary>> {
        let current = session_of(actor)?;
        let now = self.inner.clock.now();
        // Sessions are instance-wide rows, outside every organization's wall.
        let mut tx = self.inner.store.read_instance_wide().await?;
        let sessions = tx.sessions_of_user(&actor.user.id, now.millis()).await?;
        Ok(sessions
            .into_iter()
            .map(|s| SessionSummary {
                current: s.id == current.id,
                created_at: s.created_at.into(),
                last_seen_at: s.updated_at.into(),
                user_agent: s.user_agent,
                ip_address: s.ip_address,
                id: s.id,
            })
            .collect())
    }

    /// Ends one of the caller's sessions (the current one too: that signs this client out).
    /// Another person's session, or none, is 404.
    pub async fn revoke_session(&self, actor: &Actor, id: &str) -> Result<()> {
        session_of(actor)?;
        let mut tx = self.inner.store.write_instance_wide().await?;
        if !tx.delete_session_of_user(&actor.user.id, id).await? {
            return Err(Error::not_found("session"));
        }
        tx.commit().await?;
        Ok(())
    }

    /// A new e-mail-change token naming `email` (replacing any earlier one: only the newest
    /// link works) and the message that carries it to that address.
    async fn email_change_mail(
        &self,
        tx: &mut dyn cms_store::Tx,
        user: &UserRecord,
        email: &Email,
        now: Timestamp,
    ) -> Result<MailMessage> {
        tx.delete_user_tokens(&user.id, TokenKind::EmailChange.name())
            .await?;
        let token = tokens::issue_for(
            self.inner,
            tx,
            &user.id,
            TokenKind::EmailChange,
            Some(email.as_str()),
            now,
        )
        .await?;
        let link = self.inner.link(&format!(
            "/api/auth/verify-email?token={token}&callbackURL=%2Fadmin"
        ));
        Ok(MailMessage {
            kind: MailKind::EmailVerification,
            to: email.as_str().to_string(),
            subject: "Confirm your new e-mail address".into(),
            text: format!(
                "{name} asked to use this address ({email}) for their account.\n\n\
                 Confirm it: {link}\n\n\
                 The account keeps its current address until the link is followed, within 24 \
                 hours. If you did not ask, ignore this message.\n",
                name = user.name,
                email = email.as_str(),
            ),
            link,
        })
    }

    /// The caller's editor preferences: the stored object, `{}` before the first save.
    pub async fn preferences(&self, actor: &Actor) -> Result<Value> {
        session_of(actor)?;
        let mut tx = self.inner.store.read().await?;
        Ok(tx
            .preferences(&actor.user.id)
            .await?
            .map(|j| j.0)
            .unwrap_or_else(|| Value::Object(Map::new())))
    }

    /// Merges `patch` into the caller's preferences, key by key at the top level; a key sent
    /// as `null` is removed. Answers the whole merged object.
    pub async fn update_preferences(&self, actor: &Actor, patch: Value) -> Result<Value> {
        session_of(actor)?;
        let Value::Object(patch) = patch else {
            return Err(Error::invalid(vec![Issue::new(
                "",
                "type",
                "preferences are a JSON object",
            )]));
        };
        if let Some(issue) = crate::input::find_nul("", &Value::Object(patch.clone())) {
            return Err(Error::invalid(vec![issue]));
        }
        let now = self.inner.clock.now();
        let mut tx = self.inner.store.write().await?;
        let mut stored = match tx.preferences(&actor.user.id).await?.map(|j| j.0) {
            Some(Value::Object(map)) => map,
            _ => Map::new(),
        };
        for (key, value) in patch {
            if value.is_null() {
                stored.remove(&key);
            } else {
                stored.insert(key, value);
            }
        }
        let merged = Value::Object(stored);
        if merged.to_string().len() > MAX_PREFERENCES_BYTES {
            return Err(Error::bad_request(format!(
                "preferences are limited to {} KiB",
                MAX_PREFERENCES_BYTES / 1024
            )));
        }
        let data = cms_store::Json(merged);
        tx.save_preferences(&actor.user.id, &data, now.millis())
            .await?;
        tx.commit().await?;
        Ok(data.0)
    }

    /// Sends a password-reset link when an account has this address, and answers the same
    /// either way (no account enumeration): both paths take the writer, and the e-mail goes
    /// out on a task of its own, so the time taken tells nothing either.
    pub async fn request_password_reset(
        &self,
        email: Option<&str>,
        client: &ClientInfo,
    ) -> Result<()> {
        // Counted before anything else, like sign-in and sign-up (429 with Retry-After).
        RateLimitService::new(self.inner)
            .hit(Limited::PasswordReset, client.ip_address.as_deref(), email)
            .await?;
        let email = required_email(email)?;
        let now = self.inner.clock.now();
        let mut tx = self.inner.store.write_instance_wide().await?;
        tx.delete_expired_user_tokens(now.millis()).await?;
        let Some(user) = tx.user_by_email(email.as_str()).await? else {
            tx.commit().await?;
            return Ok(());
        };
        let token = tokens::issue(
            self.inner,
            &mut *tx,
            &user.id,
            TokenKind::PasswordReset,
            now,
        )
        .await?;
        tx.commit().await?;
        self.inner
            .send_mail_later(self.reset_message(&user.email, &token));
        Ok(())
    }

    fn reset_message(&self, to: &str, token: &str) -> MailMessage {
        let link = self
            .inner
            .link(&format!("/admin/reset-password?token={token}"));
        MailMessage {
            kind: MailKind::PasswordReset,
            to: to.to_string(),
            subject: "Reset your password".into(),
            text: format!(
                "Someone (hopefully you) asked to reset the password of your account.\n\n\
                 Choose a new password: {link}\n\n\
                 The link works once, within one hour. If you did not ask, ignore this message: \
                 your password stays as it is.\n"
            ),
            link,
        }
    }

    /// Completes a reset with the e-mailed token: sets the new password, revokes every
    /// session of the account, and marks the address verified (the link reached it). A bad,
    /// used or expired token is 400.
    pub async fn reset_password(
        &self,
        token: Option<&str>,
        new_password: Option<&str>,
    ) -> Result<()> {
        let mut issues = Issues::new();
        let token = token.filter(|t| !t.is_empty());
        if token.is_none() {
            issues.add("token", "required", "token is required");
        }
        let password = parse_new_password(&mut issues, new_password);
        let (token, password) = match (token, password) {
            (Some(token), Some(password)) if issues.is_empty() => (token, password),
            _ => return Err(Error::invalid(issues.into_vec())),
        };
        let now = self.inner.clock.now();
        // A plainly bad token is refused before the slow hash.
        {
            let mut tx = self.inner.store.read().await?;
            if !tokens::is_live(self.inner, &mut *tx, token, TokenKind::PasswordReset, now).await? {
                return Err(bad_reset_token());
            }
        }
        let hash = password::hash(password.expose().to_string()).await?;
        let mut tx = self.inner.store.write_instance_wide().await?;
        let Some(user_id) =
            tokens::redeem(self.inner, &mut *tx, token, TokenKind::PasswordReset, now).await?
        else {
            return Err(bad_reset_token());
        };
        tx.set_password_hash(&user_id, &hash, now.millis()).await?;
        tx.set_email_verified(&user_id, now.millis()).await?;
        tx.delete_user_tokens(&user_id, TokenKind::PasswordReset.name())
            .await?;
        let revoked = tx.delete_sessions_of_user(&user_id).await?;
        tx.commit().await?;
        tracing::info!(user = %user_id, sessions_revoked = revoked, "password reset");
        Ok(())
    }

    /// Follows a verification link: marks the address verified. With `callbackURL` the door
    /// redirects there, which must be a path on this instance
    /// ([`cms_core::redirect::same_origin_path`]; 400 otherwise, checked before the token is
    /// used): never an open redirect.
    pub async fn verify_email(
        &self,
        token: Option<&str>,
        callback_url: Option<&str>,
    ) -> Result<EmailVerified> {
        let redirect = match callback_url.filter(|c| !c.is_empty()) {
            Some(raw) => Some(
                same_origin_path(raw)
                    .ok_or_else(|| {
                        Error::invalid(vec![Issue::new(
                            "callbackURL",
                            "origin",
                            "callbackURL must be a path on this instance (`/admin`)",
                        )])
                    })?
                    .to_string(),
            ),
            None => None,
        };
        let token = required(token, "token")?;
        let now = self.inner.clock.now();
        let mut tx = self.inner.store.write_instance_wide().await?;
        if let Some(user_id) = tokens::redeem(
            self.inner,
            &mut *tx,
            token,
            TokenKind::EmailVerification,
            now,
        )
        .await?
        {
            tx.set_email_verified(&user_id, now.millis()).await?;
            tx.delete_user_tokens(&user_id, TokenKind::EmailVerification.name())
                .await?;
        } else if let Some(change) =
            tokens::redeem_record(self.inner, &mut *tx, token, TokenKind::EmailChange, now).await?
        {
            apply_email_change(&mut *tx, &change.user_id, change.email.as_deref(), now).await?;
        } else {
            return Err(Error::bad_request(
                "the verification link is invalid, used or expired: sign in to get a new one",
            ));
        }
        tx.commit().await?;
        Ok(EmailVerified { redirect })
    }

    /// Deletes the caller's own account after checking their password (CONTRACT.md section 3):
    /// refused while they are the last owner of an organization; `member.removed` then
    /// `user.deleted` are appended once per organization they belonged to, in the deleting
    /// transaction. Their sessions, memberships and API keys go with them. A session is required: a key cannot delete the
    /// person who made it.
    pub async fn delete_account(&self, actor: &Actor, password: Option<&str>) -> Result<()> {
        if !matches!(actor.credential, Credential::Session(_)) {
            return Err(Error::NotPermitted(
                "deleting an account needs a signed-in session".into(),
            ));
        }
        let Some(password) = password.filter(|p| !p.is_empty()) else {
            return Err(Error::invalid(vec![cms_core::Issue::new(
                "password",
                "required",
                "password is required",
            )]));
        };
        let stored = {
            let mut tx = self.inner.store.read().await?;
            tx.user_by_id(&actor.user.id).await?
        };
        let stored_hash = stored.and_then(|u| u.password_hash);
        if !password::verify(password.to_string(), stored_hash).await? {
            return Err(Error::InvalidCredentials);
        }
        let now = self.inner.clock.now();
        let mut tx = self.inner.store.write_instance_wide().await?;
        let Some(user) = tx.user_by_id(&actor.user.id).await? else {
            return Err(Error::Unauthorized);
        };
        let memberships = tx.memberships_of(&user.id).await?;
        let owner = cms_core::BuiltInRole::Owner.name();
        for m in memberships.iter().filter(|m| m.role == owner) {
            // Under the organization's lock, like member demotion and removal, so two owners
            // leaving at once cannot leave it without one.
            tx.lock_organization(&m.organization_id).await?;
            if tx
                .count_members_with_role(&m.organization_id, owner)
                .await?
                <= 1
            {
                return Err(Error::Conflict(format!(
                    "you are the last owner of organization {}: make someone else owner first",
                    m.organization_id
                )));
            }
        }
        let payload = UserDeletedPayload {
            user_id: user.id.clone(),
            email: user.email.clone(),
            image: user.image.clone(),
        };
        // Per organization: the membership ends (`member.removed`, for consumers that follow
        // members), then the user is gone (`user.deleted`); DECISIONS.md, Events.
        let mut events = Vec::with_capacity(memberships.len() * 2);
        for m in &memberships {
            let org = &m.organization_id;
            events.push(member_event(org, MEMBER_REMOVED, &user.id, &m.role, now));
            events.push(user_deleted_event(org, &payload, now));
        }
        tx.append_events(&events).await?;
        tx.delete_user(&user.id).await?;
        tx.commit().await?;
        Ok(())
    }
}

/// The `newPassword` of a reset or a change: the password, or an issue saying it is missing or
/// not 8 to 128 characters.
fn parse_new_password(issues: &mut Issues, raw: Option<&str>) -> Option<Password> {
    let Some(raw) = raw.filter(|p| !p.is_empty()) else {
        issues.add("newPassword", "required", "newPassword is required");
        return None;
    };
    let parsed = Password::parse(raw);
    if parsed.is_none() {
        issues.add(
            "newPassword",
            "length",
            "newPassword must be 8 to 128 characters",
        );
    }
    parsed
}

/// Moves the account to the address an e-mail-change link proved, verified. Refused (422,
/// nothing changed) when another account took the address meanwhile. The links sent to the
/// old address (verification, password reset) stop working.
async fn apply_email_change(
    tx: &mut dyn cms_store::Tx,
    user_id: &str,
    email: Option<&str>,
    now: Timestamp,
) -> Result<()> {
    let (Some(email), Some(user)) = (email, tx.user_by_id(user_id).await?) else {
        return Err(Error::bad_request(
            "the link is invalid: ask for the change again",
        ));
    };
    if tx
        .user_by_email(email)
        .await?
        .is_some_and(|other| other.id != user.id)
    {
        return Err(email_taken());
    }
    match tx
        .update_user_profile(&user.id, &user.name, email, true, now.millis())
        .await
    {
        Err(cms_store::StoreError::Unique(_)) => return Err(email_taken()),
        other => other?,
    };
    for kind in [
        TokenKind::EmailVerification,
        TokenKind::PasswordReset,
        TokenKind::EmailChange,
    ] {
        tx.delete_user_tokens(&user.id, kind.name()).await?;
    }
    tracing::info!(user = %user.id, "e-mail address changed");
    Ok(())
}

fn bad_reset_token() -> Error {
    Error::bad_request("the reset link is invalid, used or expired: ask for a new one")
}
