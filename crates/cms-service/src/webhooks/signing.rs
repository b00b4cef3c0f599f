//! Signing secrets and signatures: Standard Webhooks for endpoints (CONTRACT.md section 16),
//! and the settings form's `x-cms-signature` (section 11).

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use hmac::{Hmac, KeyInit, Mac};
use sha2::Sha256;

/// What every endpoint secret starts with (Standard Webhooks).
pub const SECRET_PREFIX: &str = "whsec_";
/// Random bytes in a secret.
const SECRET_BYTES: usize = 32;

/// A new signing secret: `whsec_` and the base64 of 32 random bytes.
pub(crate) fn new_secret() -> String {
    let mut bytes = [0u8; SECRET_BYTES];
    getrandom::fill(&mut bytes).expect("the operating system's random source is available");
    format!("{SECRET_PREFIX}{}", STANDARD.encode(bytes))
}

/// The key a secret stands for: the base64 after `whsec_`. `None` for a value that is not a
/// secret of that form (a stored value this code did not make).
fn secret_key(secret: &str) -> Option<Vec<u8>> {
    let encoded = secret.strip_prefix(SECRET_PREFIX)?;
    STANDARD.decode(encoded).ok().filter(|key| !key.is_empty())
}

/// `webhook-signature`: `v1,` and the base64 HMAC-SHA-256 of `{id}.{timestamp}.{body}` under
/// the secret's key.
pub(crate) fn standard_signature(
    secret: &str,
    id: &str,
    timestamp: i64,
    body: &[u8],
) -> Result<String, String> {
    let key = secret_key(secret)
        .ok_or_else(|| format!("a signing secret is `{SECRET_PREFIX}` and base64"))?;
    let mut mac =
        <Hmac<Sha256> as KeyInit>::new_from_slice(&key).expect("HMAC takes a key of any length");
    mac.update(id.as_bytes());
    mac.update(b".");
    mac.update(timestamp.to_string().as_bytes());
    mac.update(b".");
    mac.update(body);
    Ok(format!(
        "v1,{}",
        STANDARD.encode(mac.finalize().into_bytes())
    ))
}

/// `x-cms-signature` of the settings form: `sha256=` and the lowercase hex HMAC-SHA-256 of the
/// body under the secret as saved.
pub(crate) fn settings_signature(secret: &str, body: &[u8]) -> String {
    let mut mac = <Hmac<Sha256> as KeyInit>::new_from_slice(secret.as_bytes())
        .expect("HMAC takes a key of any length");
    mac.update(body);
    format!(
        "sha256={}",
        cms_core::hex::encode(&mac.finalize().into_bytes())
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_new_secret_is_whsec_and_32_random_bytes() {
        let secret = new_secret();
        assert!(secret.starts_with("whsec_"), "{secret}");
        assert_eq!(secret_key(&secret).map(|k| k.len()), Some(32));
        assert_ne!(new_secret(), secret);
    }

    /// The example of the Standard Webhooks specification (its reference libraries' test).
    #[test]
    fn the_signature_is_the_specifications() {
        let signature = standard_signature(
            "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
            "msg_p5jXN8AQM9LWM0D4loKWxJek",
            1614265330,
            br#"{"test": 2432232314}"#,
        )
        .unwrap();
        assert_eq!(signature, "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=");
        assert!(standard_signature("MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", "m", 1, b"").is_err());
        assert!(standard_signature("whsec_", "m", 1, b"").is_err());
    }

    #[test]
    fn the_settings_signature_is_the_hex_hmac_of_the_body() {
        // RFC 4231 test case 2.
        assert_eq!(
            settings_signature("Jefe", b"what do ya want for nothing?"),
            "sha256=5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"
        );
    }
}
