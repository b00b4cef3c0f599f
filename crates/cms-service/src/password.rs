//! Password hashing with Argon2id. Hashing is deliberately slow, so it runs on the blocking pool
//! and never stalls the async workers.

use argon2::Argon2;
use argon2::password_hash::phc::PasswordHash;
use argon2::password_hash::{PasswordHasher, PasswordVerifier};

use crate::error::{Error, Result};

pub(crate) async fn hash(password: String) -> Result<String> {
    tokio::task::spawn_blocking(move || {
        Argon2::default()
            .hash_password(password.as_bytes())
            .map(|h| h.to_string())
            .map_err(|e| Error::Internal(format!("password hashing failed: {e}")))
    })
    .await
    .map_err(|e| Error::Internal(format!("password hashing task failed: {e}")))?
}

/// `true` when the password matches. With no stored hash (unknown user, or an account without a
/// password) a dummy hash is still verified, so the answer takes as long either way and timing
/// does not reveal which e-mail addresses have accounts.
pub(crate) async fn verify(password: String, stored: Option<String>) -> Result<bool> {
    tokio::task::spawn_blocking(move || {
        let (phc, real) = match stored {
            Some(h) => (h, true),
            None => (dummy_hash().to_string(), false),
        };
        let Ok(parsed) = PasswordHash::new(&phc) else {
            return false;
        };
        Argon2::default()
            .verify_password(password.as_bytes(), &parsed)
            .is_ok()
            && real
    })
    .await
    .map_err(|e| Error::Internal(format!("password verification task failed: {e}")))
}

fn dummy_hash() -> &'static str {
    static DUMMY: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    DUMMY.get_or_init(|| {
        Argon2::default()
            .hash_password(b"not a real password")
            .map(|h| h.to_string())
            .unwrap_or_default()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_hash_verifies_its_password_only() {
        let h = hash("correct horse".into()).await.unwrap();
        assert!(h.starts_with("$argon2id$"));
        assert!(
            verify("correct horse".into(), Some(h.clone()))
                .await
                .unwrap()
        );
        assert!(!verify("wrong horse".into(), Some(h)).await.unwrap());
        assert!(!verify("not a real password".into(), None).await.unwrap());
        assert!(!verify("x".into(), Some("garbage".into())).await.unwrap());
    }
}
