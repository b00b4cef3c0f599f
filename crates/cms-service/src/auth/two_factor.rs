//! Two-factor sign-in (CONTRACT.md section 20): a person enrols an authenticator app, confirms
//! it with a first code and gets ten single-use recovery codes; from then on a right password
//! answers a challenge instead of a session, and the session opens only with a code.
//!
//! Each code works once: the step of the last accepted code is stored and only a later step is
//! accepted, in one conditional update, so two requests racing with the same code cannot both
//! win. A challenge lives five minutes and survives five wrong codes (counted on its row); codes
//! are also counted like sign-ins, per client address and per account, on every instance alike.
//!
//! The authenticator secret is sealed at rest ([`crate::secret_box`]) under
//! CMS_SECRET_ENCRYPTION_KEY, or without one under a key derived from the auth secret, which
//! lives outside the database either way. Recovery codes are stored as unkeyed SHA-256 hashes
//! of 80 random bits: they survive a rotated auth secret, which is when a person needs them.

use cms_core::Timestamp;
use cms_store::Tx;
use serde::Serialize;
use sha2::{Digest, Sha256};

use super::AuthService;
use super::session::{Authenticated, ClientInfo};
use super::tokens::{self, TokenKind};
use super::totp::{self, Authenticator};
use crate::actor::Actor;
use crate::error::{Error, Result};
use crate::organizations::{required, session_of};
use crate::rate_limit::{Limited, RateLimitService};
use crate::secret_box::SecretSlot;

/// Recovery codes made at confirmation.
const RECOVERY_CODES: usize = 10;
/// Wrong codes a challenge survives; the next one ends it.
const CHALLENGE_FAILURES: i64 = 5;

/// A started enrolment: what the authenticator app needs (CONTRACT.md section 20).
#[derive(Debug, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct TwoFactorEnrolment {
    /// The secret in base32, for typing into an app by hand.
    pub secret: String,
    /// The `otpauth://totp/...` URL apps import.
    pub otpauth_url: String,
    /// The same URL as a QR code, an SVG document for the page to show.
    pub qr_code_svg: String,
}

/// Where the caller's two-factor sign-in stands.
#[derive(Debug, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct TwoFactorStatus {
    /// Sign-in asks for a code.
    pub enabled: bool,
    /// An enrolment was started and waits for its first code.
    pub pending: bool,
    /// Recovery codes not used yet (0 while off).
    pub recovery_codes_left: i64,
}

/// The second step of a sign-in as received: the challenge and one of a code or a recovery
/// code.
#[derive(Debug, Default)]
pub struct SecondFactor {
    pub challenge: Option<String>,
    pub code: Option<String>,
    pub recovery_code: Option<String>,
    pub client: ClientInfo,
}

impl AuthService<'_> {
    /// Whether the caller's sign-in asks for a code (a signed-in session only).
    pub async fn two_factor_status(&self, actor: &Actor) -> Result<TwoFactorStatus> {
        session_of(actor)?;
        let mut tx = self.inner.store.read_instance_wide().await?;
        let record = tx.two_factor(&actor.user.id).await?;
        let enabled = record.as_ref().is_some_and(|r| r.enabled_at.is_some());
        Ok(TwoFactorStatus {
            enabled,
            pending: record.is_some() && !enabled,
            recovery_codes_left: if enabled {
                tx.count_recovery_codes(&actor.user.id).await?
            } else {
                0
            },
        })
    }

    /// Starts an enrolment with a new secret (a signed-in session only; 409 while two-factor
    /// is on: turn it off first). Starting again replaces a pending enrolment's secret.
    pub async fn enroll_two_factor(&self, actor: &Actor) -> Result<TwoFactorEnrolment> {
        session_of(actor)?;
        let secret = Authenticator::generate_secret();
        let authenticator = Authenticator::new(secret, &actor.user.email)?;
        let sealed = self.seal(&actor.user.id, &authenticator.secret_base32())?;
        let now = self.inner.clock.now();
        let mut tx = self.inner.store.write_instance_wide().await?;
        if tx
            .two_factor(&actor.user.id)
            .await?
            .is_some_and(|r| r.enabled_at.is_some())
        {
            return Err(Error::Conflict(
                "two-factor sign-in is already on: turn it off first to enrol another app".into(),
            ));
        }
        tx.begin_two_factor(&actor.user.id, &sealed, now.millis())
            .await?;
        tx.commit().await?;
        let url = authenticator.url();
        Ok(TwoFactorEnrolment {
            secret: authenticator.secret_base32(),
            qr_code_svg: totp::qr_svg(&url)?,
            otpauth_url: url,
        })
    }

    /// Turns a pending enrolment on with a first code from the app (400 when it is wrong; 409
    /// without a pending enrolment), answering the ten recovery codes, shown this once.
    pub async fn confirm_two_factor(
        &self,
        actor: &Actor,
        code: Option<&str>,
    ) -> Result<Vec<String>> {
        session_of(actor)?;
        let code = required(code, "code")?;
        RateLimitService::new(self.inner)
            .hit(Limited::TwoFactor, None, Some(&actor.user.email))
            .await?;
        let now = self.inner.clock.now();
        let mut tx = self.inner.store.write_instance_wide().await?;
        let record = tx
            .two_factor(&actor.user.id)
            .await?
            .filter(|r| r.enabled_at.is_none())
            .ok_or_else(|| {
                Error::Conflict(
                    "no enrolment is waiting: start one with /api/user/two-factor/enroll".into(),
                )
            })?;
        let authenticator =
            self.authenticator(&actor.user.id, &actor.user.email, &record.secret)?;
        let Some(step) = authenticator.matching_step(code, now_secs(now)) else {
            return Err(Error::invalid(vec![cms_core::Issue::new(
                "code",
                "mismatch",
                "the code does not match: check the app's clock and enter the current code",
            )]));
        };
        let codes: Vec<String> = (0..RECOVERY_CODES).map(|_| recovery_code()).collect();
        let hashes: Vec<String> = codes.iter().map(|c| recovery_hash(c)).collect();
        if !tx
            .enable_two_factor(&actor.user.id, step, &hashes, now.millis())
            .await?
        {
            return Err(Error::Conflict("two-factor sign-in is already on".into()));
        }
        tx.commit().await?;
        tracing::info!(user = %actor.user.id, "two-factor sign-in turned on");
        Ok(codes)
    }

    /// Turns two-factor sign-in off, with the current password (403 when wrong, counted like
    /// sign-ins). Also ends a pending enrolment. 409 when there is nothing to turn off.
    pub async fn disable_two_factor(
        &self,
        actor: &Actor,
        current_password: Option<&str>,
    ) -> Result<()> {
        session_of(actor)?;
        // A password may be spaces: only an absent or empty one is missing.
        if current_password.is_none_or(str::is_empty) {
            required(None, "currentPassword")?;
        }
        self.check_password(actor, current_password).await?;
        let mut tx = self.inner.store.write_instance_wide().await?;
        if !tx.delete_two_factor(&actor.user.id).await? {
            return Err(Error::Conflict("two-factor sign-in is not on".into()));
        }
        tx.commit().await?;
        tracing::info!(user = %actor.user.id, "two-factor sign-in turned off");
        Ok(())
    }

    /// Whether `user_id` signs in with a second factor: then the challenge to answer, issued in
    /// `tx` (the caller commits).
    pub(super) async fn challenge_if_enrolled(
        &self,
        tx: &mut dyn Tx,
        user_id: &str,
        now: Timestamp,
    ) -> Result<Option<String>> {
        if tx
            .two_factor(user_id)
            .await?
            .is_none_or(|r| r.enabled_at.is_none())
        {
            return Ok(None);
        }
        let kind = TokenKind::TwoFactorChallenge;
        Ok(Some(
            tokens::issue(self.inner, tx, user_id, kind, now).await?,
        ))
    }

    /// The second step of a sign-in: a challenge from it and a code from the app (or a
    /// recovery code) open the session, as a sign-in does. A wrong code is 401 and counts
    /// against the challenge, which survives five of them; codes are rate limited like sign-ins.
    pub async fn complete_two_factor(&self, input: SecondFactor) -> Result<Authenticated> {
        let challenge = input.challenge.as_deref().unwrap_or_default();
        let factor = match (input.code.as_deref(), input.recovery_code.as_deref()) {
            (Some(code), None) if !code.is_empty() => Factor::Code(code),
            (None, Some(code)) if !code.is_empty() => Factor::Recovery(code),
            _ => {
                return Err(Error::bad_request(
                    "send the `challenge` and one of `code`, `recoveryCode`",
                ));
            }
        };
        if challenge.is_empty() {
            required(None, "challenge")?;
        }
        let kind = TokenKind::TwoFactorChallenge;
        let challenge_hash = self.inner.secret.hash_hex(kind.purpose(), challenge);
        let now = self.inner.clock.now();
        let (token, user) = {
            let mut tx = self.inner.store.read_instance_wide().await?;
            let token = tx
                .user_token(&challenge_hash, kind.name())
                .await?
                .filter(|t| t.expires_at > now.millis())
                .ok_or_else(expired_challenge)?;
            let user = tx
                .user_by_id(&token.user_id)
                .await?
                .ok_or_else(expired_challenge)?;
            (token, user)
        };
        RateLimitService::new(self.inner)
            .hit(
                Limited::TwoFactor,
                input.client.ip_address.as_deref(),
                Some(&user.email),
            )
            .await?;

        let mut tx = self.inner.store.write_instance_wide().await?;
        let accepted = match factor {
            Factor::Code(code) => match tx.two_factor(&user.id).await? {
                Some(record) if record.enabled_at.is_some() => {
                    let authenticator =
                        self.authenticator(&user.id, &user.email, &record.secret)?;
                    match authenticator.matching_step(code, now_secs(now)) {
                        Some(step) => tx.claim_two_factor_step(&user.id, step).await?,
                        None => false,
                    }
                }
                _ => false,
            },
            Factor::Recovery(code) => {
                tx.take_recovery_code(&user.id, &recovery_hash(code))
                    .await?
            }
        };
        if !accepted {
            drop(tx);
            let refusal = self.wrong_code(&challenge_hash, &token.user_id).await?;
            let summary = format!("wrong second factor for {}", user.email);
            self.record_failed_sign_in(Some(&user.id), &input.client, summary, now)
                .await?;
            return Err(refusal);
        }
        // Taken in the same unit as the code: of two racing answers, one opens a session.
        if tx
            .take_user_token(&challenge_hash, kind.name())
            .await?
            .is_none()
        {
            return Err(expired_challenge());
        }
        let session = self
            .open_signed_in_session(&mut *tx, &user.id, &input.client, "a second factor", now)
            .await?;
        tx.commit().await?;
        self.authenticated(session, user)
    }

    /// Counts a wrong code against its challenge, ending the challenge at the sixth: the
    /// refusal to answer.
    async fn wrong_code(&self, challenge_hash: &str, user_id: &str) -> Result<Error> {
        let kind = TokenKind::TwoFactorChallenge;
        let mut tx = self.inner.store.write_instance_wide().await?;
        let failures = tx
            .count_user_token_failure(challenge_hash, kind.name())
            .await?;
        let Some(failures) = failures else {
            return Ok(expired_challenge());
        };
        if failures > CHALLENGE_FAILURES {
            tx.take_user_token(challenge_hash, kind.name()).await?;
            tracing::warn!(user = %user_id, "two-factor challenge ended after repeated wrong codes");
        }
        tx.commit().await?;
        Ok(Error::SecondFactorRefused(
            if failures > CHALLENGE_FAILURES {
                "too many wrong codes: sign in again".into()
            } else {
                "the code is wrong or was used already".into()
            },
        ))
    }

    fn seal(&self, user_id: &str, secret_base32: &str) -> Result<String> {
        self.inner
            .auth_box
            .seal(secret_base32, SecretSlot::TwoFactor { user_id })
            .map_err(Error::Internal)
    }

    /// The authenticator behind a stored, sealed secret.
    fn authenticator(&self, user_id: &str, email: &str, sealed: &str) -> Result<Authenticator> {
        let base32 = self
            .inner
            .auth_box
            .open(sealed, SecretSlot::TwoFactor { user_id })
            .map_err(Error::Internal)?;
        let secret = totp_rs::Secret::Encoded(base32)
            .to_bytes()
            .map_err(|e| Error::Internal(format!("stored two-factor secret is malformed: {e}")))?;
        Authenticator::new(secret, email)
    }
}

/// Which second factor an answer gives.
enum Factor<'a> {
    Code(&'a str),
    Recovery(&'a str),
}

fn expired_challenge() -> Error {
    Error::SecondFactorRefused(
        "this sign-in has expired or was already completed: sign in again".into(),
    )
}

fn now_secs(now: Timestamp) -> u64 {
    u64::try_from(now.millis() / 1000).unwrap_or(0)
}

/// A recovery code: 16 characters of the base32 alphabet (80 random bits) in groups of four.
fn recovery_code() -> String {
    const ALPHABET: &[u8; 32] = b"abcdefghijklmnopqrstuvwxyz234567";
    let mut bytes = [0u8; 16];
    getrandom::fill(&mut bytes).expect("the operating system's random source is available");
    let chars: Vec<char> = bytes
        .iter()
        .map(|b| ALPHABET[usize::from(b & 31)] as char)
        .collect();
    chars
        .chunks(4)
        .map(|c| c.iter().collect::<String>())
        .collect::<Vec<_>>()
        .join("-")
}

/// The stored hash of a recovery code, as typed: case, spaces and dashes do not matter.
fn recovery_hash(code: &str) -> String {
    let normalised: String = code
        .chars()
        .filter(|c| c.is_ascii_alphanumeric())
        .map(|c| c.to_ascii_lowercase())
        .collect();
    cms_core::hex::encode(&Sha256::digest(normalised.as_bytes()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recovery_codes_are_grouped_base32_and_hash_as_typed() {
        let code = recovery_code();
        assert_eq!(code.len(), 19, "{code}");
        assert_eq!(code.matches('-').count(), 3, "{code}");
        assert_ne!(code, recovery_code());
        let typed = format!(" {} ", code.to_uppercase().replace('-', " "));
        assert_eq!(recovery_hash(&code), recovery_hash(&typed));
        assert_ne!(recovery_hash(&code), recovery_hash("aaaa-aaaa-aaaa-aaaa"));
    }
}
