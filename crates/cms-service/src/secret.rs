//! The auth secret: it signs session cookies and keys the hashes of session tokens and API keys,
//! so rotating it invalidates every session and key at once.
//!
//! A module of its own, below everything that derives a keyed hash from it: authentication,
//! API keys, invitations, the e-mailed tokens and the rate limits' counter keys.

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use hmac::{Hmac, KeyInit, Mac};
use sha2::Sha256;

type HmacSha256 = Hmac<Sha256>;

/// What an HMAC is for. Each purpose is a separate domain, so a value made for one can never be
/// replayed as another (a cookie signature is not a key hash).
#[derive(Clone, Copy)]
pub(crate) enum Purpose {
    SessionToken,
    CookieSignature,
    ApiKey,
    /// The first-admin claim code (SPEC.md Authentication point 12).
    ClaimCode,
    /// The client identifiers rate limits are keyed on (an e-mail, an address).
    RateLimit,
    /// The single-use tokens sent by e-mail, one domain per use, so a verification link can
    /// never reset a password.
    EmailVerification,
    PasswordReset,
    /// The link to a new address that completes an e-mail change.
    EmailChange,
    /// The secret of an invitation's accept link.
    InvitationToken,
    /// A preview link's token (CONTRACT.md section 15).
    PreviewToken,
    /// The token between a password that was right and the second factor (CONTRACT.md
    /// section 20).
    TwoFactorChallenge,
    /// The key material of the box authentication seals with when no
    /// CMS_SECRET_ENCRYPTION_KEY is configured (`auth::auth_box`).
    AuthSeal,
}

impl Purpose {
    fn label(self) -> &'static [u8] {
        match self {
            Purpose::SessionToken => b"cms/session-token\0",
            Purpose::CookieSignature => b"cms/cookie-signature\0",
            Purpose::ApiKey => b"cms/api-key\0",
            Purpose::ClaimCode => b"cms/claim-code\0",
            Purpose::RateLimit => b"cms/rate-limit\0",
            Purpose::EmailVerification => b"cms/email-verification\0",
            Purpose::PasswordReset => b"cms/password-reset\0",
            Purpose::EmailChange => b"cms/email-change\0",
            Purpose::InvitationToken => b"cms/invitation-token\0",
            Purpose::PreviewToken => b"cms/preview-token\0",
            Purpose::TwoFactorChallenge => b"cms/two-factor-challenge\0",
            Purpose::AuthSeal => b"cms/two-factor-seal\0",
        }
    }
}

#[derive(Clone)]
pub struct AuthSecret(Vec<u8>);

impl AuthSecret {
    pub fn new(secret: impl AsRef<[u8]>) -> Self {
        AuthSecret(secret.as_ref().to_vec())
    }

    /// A new random secret, as text: 48 random bytes, base64url.
    pub fn generate() -> String {
        random_token(48)
    }

    fn mac(&self, purpose: Purpose, value: &str) -> HmacSha256 {
        let mut mac = HmacSha256::new_from_slice(&self.0).expect("HMAC takes keys of any length");
        mac.update(purpose.label());
        mac.update(value.as_bytes());
        mac
    }

    /// Lowercase hex of the HMAC, for lookups by hash (the input is never stored).
    pub(crate) fn hash_hex(&self, purpose: Purpose, value: &str) -> String {
        cms_core::hex::encode(&self.mac(purpose, value).finalize().into_bytes())
    }

    /// Whether `stored_hex` is [`AuthSecret::hash_hex`] of `value`, compared in constant time.
    pub(crate) fn matches_hash_hex(&self, purpose: Purpose, value: &str, stored_hex: &str) -> bool {
        cms_core::hex::decode(stored_hex)
            .is_some_and(|stored| self.mac(purpose, value).verify_slice(&stored).is_ok())
    }

    /// `value.signature`, with a base64url signature.
    pub(crate) fn sign(&self, purpose: Purpose, value: &str) -> String {
        let sig = URL_SAFE_NO_PAD.encode(self.mac(purpose, value).finalize().into_bytes());
        format!("{value}.{sig}")
    }

    /// The value of a `value.signature` string whose signature is right, compared in constant
    /// time; `None` otherwise.
    pub(crate) fn verify<'a>(&self, purpose: Purpose, signed: &'a str) -> Option<&'a str> {
        let (value, sig) = signed.rsplit_once('.')?;
        let sig = URL_SAFE_NO_PAD.decode(sig).ok()?;
        self.mac(purpose, value)
            .verify_slice(&sig)
            .ok()
            .map(|_| value)
    }
}

impl std::fmt::Debug for AuthSecret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("AuthSecret(..)")
    }
}

/// Compares without stopping at the first difference, so timing tells nothing of the secret
/// (the worker secret, the metrics token).
pub(crate) fn same_secret(given: &str, secret: &str) -> bool {
    given.len() == secret.len()
        && given
            .bytes()
            .zip(secret.bytes())
            .fold(0u8, |acc, (a, b)| acc | (a ^ b))
            == 0
}

/// `bytes` random bytes from the operating system, base64url without padding.
pub fn random_token(bytes: usize) -> String {
    let mut buf = vec![0u8; bytes];
    getrandom::fill(&mut buf).expect("the operating system's random source is available");
    URL_SAFE_NO_PAD.encode(buf)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn signatures_verify_only_with_the_same_secret_and_purpose() {
        let a = AuthSecret::new("a".repeat(32));
        let b = AuthSecret::new("b".repeat(32));
        let signed = a.sign(Purpose::CookieSignature, "tok");
        assert_eq!(a.verify(Purpose::CookieSignature, &signed), Some("tok"));
        assert_eq!(b.verify(Purpose::CookieSignature, &signed), None);
        assert_eq!(a.verify(Purpose::SessionToken, &signed), None);
        assert_eq!(a.verify(Purpose::CookieSignature, "tok.AAAA"), None);
        assert_eq!(a.verify(Purpose::CookieSignature, "no-signature"), None);
    }

    #[test]
    fn stored_hashes_match_only_their_value() {
        let a = AuthSecret::new("a".repeat(32));
        let stored = a.hash_hex(Purpose::ClaimCode, "code");
        assert!(a.matches_hash_hex(Purpose::ClaimCode, "code", &stored));
        assert!(!a.matches_hash_hex(Purpose::ClaimCode, "cod", &stored));
        assert!(!a.matches_hash_hex(Purpose::RateLimit, "code", &stored));
        assert!(!a.matches_hash_hex(Purpose::ClaimCode, "code", "zz"));
        assert!(!a.matches_hash_hex(Purpose::ClaimCode, "code", &stored[1..]));
        assert!(!a.matches_hash_hex(Purpose::ClaimCode, "code", "é"));
    }

    #[test]
    fn hashes_depend_on_secret_and_purpose() {
        let a = AuthSecret::new("a".repeat(32));
        let h = a.hash_hex(Purpose::ApiKey, "k");
        assert_eq!(h.len(), 64);
        assert_eq!(h, a.hash_hex(Purpose::ApiKey, "k"));
        assert_ne!(h, a.hash_hex(Purpose::SessionToken, "k"));
        assert_ne!(
            h,
            AuthSecret::new("b".repeat(32)).hash_hex(Purpose::ApiKey, "k")
        );
    }
}
