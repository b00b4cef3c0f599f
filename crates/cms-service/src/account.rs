//! The caller's own account (SPEC.md "User account", CONTRACT.md section 3): profile,
//! editor preferences, e-mail verification and password reset.
//!
//! Profile and preferences need a signed-in session: an API key acts for its creator inside
//! one organization and must not be able to take over the person (a leaked key changing the
//! account's e-mail, then resetting its password). Verification and reset are reached from
//! e-mailed links, without a session: the single-use token is the credential.

use cms_core::redirect::same_origin_path;
use cms_core::{Issue, Issues, Password};
use serde_json::{Map, Value};

use crate::Inner;
use crate::actor::Actor;
use crate::auth::tokens::{self, TokenKind};
use crate::auth::{self, ClientInfo, User, password};
use crate::error::{Error, Result};
use crate::mail::{MailKind, MailMessage};
use crate::organizations::{required, session_of};
use crate::rate_limit::{Limited, RateLimitService};

/// The largest preferences object kept per user, serialised.
const MAX_PREFERENCES_BYTES: usize = 64 * 1024;

/// A profile update as received: at least one field.
#[derive(Debug, Default)]
pub struct ProfileUpdate {
    pub name: Option<String>,
    pub email: Option<String>,
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

    /// Changes the caller's name and/or e-mail address. A new address is not verified: the
    /// old address's pending links stop working, and when verification is required a link is
    /// sent to the new address (sessions already open stay open; the next sign-in waits for
    /// the link). An address another account uses is 422, as at sign-up.
    pub async fn update_profile(&self, actor: &Actor, input: ProfileUpdate) -> Result<User> {
        session_of(actor)?;
        if input.name.is_none() && input.email.is_none() {
            return Err(Error::bad_request("send at least one of `name`, `email`"));
        }
        let mut issues = Issues::new();
        let name = input
            .name
            .as_deref()
            .and_then(|n| auth::check_user_name(&mut issues, n));
        let email = input
            .email
            .as_deref()
            .and_then(|raw| auth::check_email(&mut issues, raw));
        issues.finish(()).map_err(Error::invalid)?;

        let now = self.inner.clock.now();
        let mut tx = self.inner.store.write_instance_wide().await?;
        let policy = self.inner.sign_up_policy(&mut *tx).await?;
        let mut user = tx
            .user_by_id(&actor.user.id)
            .await?
            .ok_or(Error::Unauthorized)?;
        let new_email = email.filter(|e| e.as_str() != user.email);
        if let Some(name) = name {
            user.name = name;
        }
        if let Some(email) = &new_email {
            user.email = email.as_str().to_string();
            user.email_verified = false;
        }
        user.updated_at = now.millis();
        match tx
            .update_user_profile(
                &user.id,
                &user.name,
                &user.email,
                user.email_verified,
                now.millis(),
            )
            .await
        {
            Err(cms_store::StoreError::Unique(_)) => return Err(auth::email_taken()),
            other => other?,
        };
        let mut verification = None;
        if new_email.is_some() {
            for kind in [TokenKind::EmailVerification, TokenKind::PasswordReset] {
                tx.delete_user_tokens(&user.id, kind.name()).await?;
            }
            if policy.require_email_verification {
                verification = Some(
                    auth::verification_mail(self.inner, &mut *tx, &user.id, &user.email, now)
                        .await?,
                );
            }
        }
        tx.commit().await?;
        if let Some(message) = verification {
            // A failure is logged; the person gets a new link at their next sign-in.
            let _ = self.inner.send_mail(&message).await;
        }
        User::from_record(user)
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
        if let Some(issue) = crate::documents::find_nul("", &Value::Object(patch.clone())) {
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
        let email = auth::required_email(email)?;
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
        let password = match new_password.filter(|p| !p.is_empty()) {
            None => {
                issues.add("newPassword", "required", "newPassword is required");
                None
            }
            Some(raw) => {
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
        };
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
        let Some(user_id) = tokens::redeem(
            self.inner,
            &mut *tx,
            token,
            TokenKind::EmailVerification,
            now,
        )
        .await?
        else {
            return Err(Error::bad_request(
                "the verification link is invalid, used or expired: sign in to get a new one",
            ));
        };
        tx.set_email_verified(&user_id, now.millis()).await?;
        tx.delete_user_tokens(&user_id, TokenKind::EmailVerification.name())
            .await?;
        tx.commit().await?;
        Ok(EmailVerified { redirect })
    }
}

fn bad_reset_token() -> Error {
    Error::bad_request("the reset link is invalid, used or expired: ask for a new one")
}
