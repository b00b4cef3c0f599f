//! The single-use tokens sent by e-mail: random, stored only as a keyed hash, consumed by
//! deleting their row, and expiring.

use cms_core::Timestamp;
use cms_store::Tx;
use cms_store::user_tokens::UserTokenRecord;

use crate::Inner;
use crate::error::Result;
use crate::mail::{MailKind, MailMessage};
use crate::secret::{Purpose, random_token};

const HOUR_MS: i64 = 3_600_000;

/// What a token proves, and for how long.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum TokenKind {
    /// The recipient controls the address: 24 hours, long enough for "I'll click it tomorrow".
    EmailVerification,
    /// The recipient may choose a new password: 1 hour, since whoever holds it takes over the
    /// account.
    PasswordReset,
    /// The recipient controls the new address of an e-mail change: 24 hours, like a
    /// verification.
    EmailChange,
    /// The holder gave the right password and may now give the second factor: 5 minutes
    /// (CONTRACT.md section 20). Never e-mailed: the sign-in answer carries it.
    TwoFactorChallenge,
}

impl TokenKind {
    /// The `purpose` column.
    pub(crate) fn name(self) -> &'static str {
        match self {
            TokenKind::EmailVerification => "emailVerification",
            TokenKind::PasswordReset => "passwordReset",
            TokenKind::EmailChange => "emailChange",
            TokenKind::TwoFactorChallenge => "twoFactorChallenge",
        }
    }

    fn lifetime_ms(self) -> i64 {
        match self {
            TokenKind::EmailVerification | TokenKind::EmailChange => 24 * HOUR_MS,
            TokenKind::PasswordReset => HOUR_MS,
            TokenKind::TwoFactorChallenge => 5 * 60_000,
        }
    }

    pub(crate) fn purpose(self) -> Purpose {
        match self {
            TokenKind::EmailVerification => Purpose::EmailVerification,
            TokenKind::PasswordReset => Purpose::PasswordReset,
            TokenKind::EmailChange => Purpose::EmailChange,
            TokenKind::TwoFactorChallenge => Purpose::TwoFactorChallenge,
        }
    }
}

/// A new token for `user_id`, stored (as its hash) in `tx`. Expired tokens of everyone are
/// swept on the way, so the table never grows with forgotten links.
pub(crate) async fn issue(
    inner: &Inner,
    tx: &mut dyn Tx,
    user_id: &str,
    kind: TokenKind,
    now: Timestamp,
) -> Result<String> {
    issue_for(inner, tx, user_id, kind, None, now).await
}

/// [`issue`], naming the address the token proves (an e-mail change's new address).
pub(crate) async fn issue_for(
    inner: &Inner,
    tx: &mut dyn Tx,
    user_id: &str,
    kind: TokenKind,
    email: Option<&str>,
    now: Timestamp,
) -> Result<String> {
    tx.delete_expired_user_tokens(now.millis()).await?;
    let token = random_token(32);
    tx.insert_user_token(&UserTokenRecord {
        token_hash: inner.secret.hash_hex(kind.purpose(), &token),
        user_id: user_id.to_string(),
        purpose: kind.name().to_string(),
        email: email.map(str::to_string),
        expires_at: now.plus_millis(kind.lifetime_ms()).millis(),
        created_at: now.millis(),
    })
    .await?;
    Ok(token)
}

/// Consumes a token: the user it was issued to, or `None` when it is unknown, used already or
/// expired. An expired token is consumed too.
pub(crate) async fn redeem(
    inner: &Inner,
    tx: &mut dyn Tx,
    token: &str,
    kind: TokenKind,
    now: Timestamp,
) -> Result<Option<String>> {
    Ok(redeem_record(inner, tx, token, kind, now)
        .await?
        .map(|t| t.user_id))
}

/// [`redeem`], answering the whole row (for the address an e-mail change proves).
pub(crate) async fn redeem_record(
    inner: &Inner,
    tx: &mut dyn Tx,
    token: &str,
    kind: TokenKind,
    now: Timestamp,
) -> Result<Option<UserTokenRecord>> {
    let hash = inner.secret.hash_hex(kind.purpose(), token);
    let taken = tx.take_user_token(&hash, kind.name()).await?;
    Ok(taken.filter(|t| t.expires_at > now.millis()))
}

/// Whether a token would redeem now, without consuming it: lets slow work (hashing a new
/// password) be skipped for tokens that are plainly bad.
pub(crate) async fn is_live(
    inner: &Inner,
    tx: &mut dyn Tx,
    token: &str,
    kind: TokenKind,
    now: Timestamp,
) -> Result<bool> {
    let hash = inner.secret.hash_hex(kind.purpose(), token);
    Ok(tx
        .user_token(&hash, kind.name())
        .await?
        .is_some_and(|t| t.expires_at > now.millis()))
}

/// Issues a verification token for `user_id` in `tx` and writes the e-mail that carries its
/// link, to be sent once `tx` has committed.
pub(crate) async fn verification_mail(
    inner: &Inner,
    tx: &mut dyn Tx,
    user_id: &str,
    to: &str,
    now: Timestamp,
) -> Result<MailMessage> {
    let token = issue(inner, tx, user_id, TokenKind::EmailVerification, now).await?;
    Ok(verification_message(inner, to, &token))
}

/// The e-mail that carries a verification link. The link opens the verify endpoint itself,
/// which then sends the browser on to the admin.
fn verification_message(inner: &Inner, to: &str, token: &str) -> MailMessage {
    let link = inner.link(&format!(
        "/api/auth/verify-email?token={token}&callbackURL=%2Fadmin"
    ));
    MailMessage {
        kind: MailKind::EmailVerification,
        to: to.to_string(),
        subject: "Verify your e-mail address".into(),
        text: format!(
            "Confirm that this address is yours: {link}\n\n\
             The link works once, within 24 hours. If you did not sign up, ignore this message.\n"
        ),
        link,
    }
}
