//! Secrets at rest (secret plugin settings, webhook endpoints' signing secrets):
//! XChaCha20-Poly1305 under a key derived from the configured CMS_SECRET_ENCRYPTION_KEY with
//! HKDF-SHA-256 (CONTRACT.md section 12). Below both of its users.
//!
//! Each value gets a random 24-byte nonce (safe at this nonce size, DEPENDENCIES.md). The
//! associated data binds the value to its place (an organization's plugin setting field, an
//! endpoint of an organization), so a ciphertext copied to another row or field does not open.
//! Stored form: `v1:` + base64 of nonce || ciphertext.

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use chacha20poly1305::aead::{Aead, KeyInit, Payload};
use chacha20poly1305::{Key, XChaCha20Poly1305, XNonce};
use hkdf::Hkdf;
use sha2::Sha256;

/// The prefix of the stored form; a later format gets another.
const PREFIX: &str = "v1:";
const NONCE_LEN: usize = 24;
/// HKDF's salt and info: fixed, naming this use, so the same configured string used for
/// something else would give another key.
const HKDF_SALT: &[u8] = b"cms.secret-settings";
const HKDF_INFO: &[u8] = b"cms plugin secret settings v1 xchacha20poly1305";

/// Where a secret belongs: what the associated data binds.
#[derive(Debug, Clone, Copy)]
pub enum SecretSlot<'a> {
    /// A `secret` field of a plugin's settings in an organization.
    PluginSetting {
        organization_id: &'a str,
        plugin_id: &'a str,
        field: &'a str,
    },
    /// The signing secret of a webhook endpoint of an organization.
    WebhookEndpoint {
        organization_id: &'a str,
        endpoint_id: &'a str,
    },
    /// The authenticator secret of a person's two-factor sign-in.
    TwoFactor { user_id: &'a str },
    /// A single sign-on in progress, kept by the browser between the start and the return.
    SignInFlow,
}

impl SecretSlot<'_> {
    /// A domain per kind of slot, then each part length-prefixed, so no two slots share
    /// associated data.
    fn associated_data(&self) -> Vec<u8> {
        let (domain, parts): (&[u8], Vec<&str>) = match *self {
            SecretSlot::PluginSetting {
                organization_id,
                plugin_id,
                field,
            } => (
                b"cms.plugin-settings.v1",
                vec![organization_id, plugin_id, field],
            ),
            SecretSlot::WebhookEndpoint {
                organization_id,
                endpoint_id,
            } => (
                b"cms.webhook-endpoint.v1",
                vec![organization_id, endpoint_id],
            ),
            SecretSlot::TwoFactor { user_id } => (b"cms.two-factor.v1", vec![user_id]),
            SecretSlot::SignInFlow => (b"cms.sign-in-flow.v1", vec![]),
        };
        let mut aad = domain.to_vec();
        for part in parts {
            aad.extend_from_slice(&(part.len() as u64).to_be_bytes());
            aad.extend_from_slice(part.as_bytes());
        }
        aad
    }

    /// The secret in words, for errors (never its value).
    fn describe(&self) -> String {
        match *self {
            SecretSlot::PluginSetting {
                plugin_id, field, ..
            } => format!("secret `{field}` of plugin `{plugin_id}`"),
            SecretSlot::WebhookEndpoint { endpoint_id, .. } => {
                format!("signing secret of webhook endpoint `{endpoint_id}`")
            }
            SecretSlot::TwoFactor { .. } => "two-factor secret".to_string(),
            SecretSlot::SignInFlow => "single sign-on flow".to_string(),
        }
    }
}

/// Seals and opens secret values. Holds the derived key only.
pub struct SecretBox {
    cipher: XChaCha20Poly1305,
}

impl SecretBox {
    /// The box for a configured key string (any string; configuration requires 32 or more
    /// characters).
    pub fn new(configured: &str) -> Self {
        let mut key = [0u8; 32];
        Hkdf::<Sha256>::new(Some(HKDF_SALT), configured.as_bytes())
            .expand(HKDF_INFO, &mut key)
            .expect("32 bytes is a valid HKDF-SHA-256 output length");
        let cipher = XChaCha20Poly1305::new(&Key::from(key));
        key.fill(0);
        SecretBox { cipher }
    }

    /// The stored form of `plaintext` in `slot`.
    pub fn seal(&self, plaintext: &str, slot: SecretSlot<'_>) -> Result<String, String> {
        let mut nonce = [0u8; NONCE_LEN];
        getrandom::fill(&mut nonce).map_err(|e| format!("no randomness for a nonce: {e}"))?;
        let aad = slot.associated_data();
        let sealed = self
            .cipher
            .encrypt(
                &XNonce::from(nonce),
                Payload {
                    msg: plaintext.as_bytes(),
                    aad: &aad,
                },
            )
            .map_err(|_| "the secret could not be encrypted".to_string())?;
        let mut bytes = Vec::with_capacity(NONCE_LEN + sealed.len());
        bytes.extend_from_slice(&nonce);
        bytes.extend_from_slice(&sealed);
        Ok(format!("{PREFIX}{}", STANDARD.encode(bytes)))
    }

    /// The plaintext of a stored value of `slot`. Fails (never returns garbage) when the value
    /// is not in the stored form, was sealed under another key, or belongs to another slot.
    pub fn open(&self, stored: &str, slot: SecretSlot<'_>) -> Result<String, String> {
        let what = || slot.describe();
        let bytes = stored
            .strip_prefix(PREFIX)
            .and_then(|b64| STANDARD.decode(b64).ok())
            .filter(|b| b.len() > NONCE_LEN)
            .ok_or_else(|| format!("the stored {} is not an encrypted value", what()))?;
        let (nonce, sealed) = bytes.split_at(NONCE_LEN);
        let nonce =
            XNonce::try_from(nonce).map_err(|_| format!("the stored {} is malformed", what()))?;
        let aad = slot.associated_data();
        let plain = self
            .cipher
            .decrypt(&nonce, Payload { msg: sealed, aad: &aad })
            .map_err(|_| {
                format!(
                    "the stored {} cannot be decrypted: CMS_SECRET_ENCRYPTION_KEY differs from the key it was saved under",
                    what()
                )
            })?;
        String::from_utf8(plain).map_err(|_| format!("the stored {} is not text", what()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const KEY: &str = "an encryption key of at least thirty-two characters";

    fn slot<'a>(org: &'a str, plugin: &'a str, field: &'a str) -> SecretSlot<'a> {
        SecretSlot::PluginSetting {
            organization_id: org,
            plugin_id: plugin,
            field,
        }
    }

    #[test]
    fn an_endpoint_secret_opens_for_its_endpoint_only() {
        let b = SecretBox::new(KEY);
        let endpoint = |org, id| SecretSlot::WebhookEndpoint {
            organization_id: org,
            endpoint_id: id,
        };
        let stored = b.seal("whsec_abc", endpoint("org-1", "w-1")).unwrap();
        assert_eq!(
            b.open(&stored, endpoint("org-1", "w-1")).unwrap(),
            "whsec_abc"
        );
        for other in [
            endpoint("org-2", "w-1"),
            endpoint("org-1", "w-2"),
            // The same strings in a plugin setting's slot are another place.
            slot("org-1", "w-1", ""),
        ] {
            let err = b.open(&stored, other).unwrap_err();
            assert!(err.contains("cannot be decrypted"), "{err}");
        }
        let err = b.open("garbage", endpoint("org-1", "w-1")).unwrap_err();
        assert!(err.contains("webhook endpoint `w-1`"), "{err}");
    }

    #[test]
    fn a_sealed_value_opens_in_its_slot() {
        let sealed_box = SecretBox::new(KEY);
        let here = slot("org-1", "webhooks", "secret");
        let stored = sealed_box.seal("hunter2 is my password", here).unwrap();
        assert!(stored.starts_with("v1:"), "{stored}");
        assert_eq!(
            sealed_box.open(&stored, here).unwrap(),
            "hunter2 is my password"
        );
        // A fresh nonce each time: the same secret never seals the same.
        assert_ne!(
            sealed_box.seal("hunter2 is my password", here).unwrap(),
            stored
        );
        // The empty string is a value too.
        let empty = sealed_box.seal("", here).unwrap();
        assert_eq!(sealed_box.open(&empty, here).unwrap(), "");
        // Another box from the same configured string opens it (a restart).
        assert_eq!(
            SecretBox::new(KEY).open(&stored, here).unwrap(),
            "hunter2 is my password"
        );
    }

    #[test]
    fn the_stored_form_holds_no_plaintext() {
        let plaintext = "plaintext-marker-0123456789";
        let stored = SecretBox::new(KEY)
            .seal(plaintext, slot("o", "p", "f"))
            .unwrap();
        assert!(!stored.contains(plaintext));
        assert!(!stored.contains("plaintext"));
        let raw = STANDARD
            .decode(stored.strip_prefix("v1:").unwrap())
            .unwrap();
        assert!(
            !raw.windows(plaintext.len())
                .any(|w| w == plaintext.as_bytes())
        );
        // Nonce, then the ciphertext and its 16-byte tag.
        assert_eq!(raw.len(), NONCE_LEN + plaintext.len() + 16);
    }

    #[test]
    fn another_slot_does_not_open_it() {
        let b = SecretBox::new(KEY);
        let stored = b
            .seal("s3cret", slot("org-1", "webhooks", "secret"))
            .unwrap();
        for other in [
            slot("org-2", "webhooks", "secret"),
            slot("org-1", "mailer", "secret"),
            slot("org-1", "webhooks", "token"),
            // Length prefixes keep shifted boundaries apart.
            slot("org-1w", "ebhooks", "secret"),
        ] {
            let err = b.open(&stored, other).unwrap_err();
            assert!(err.contains("cannot be decrypted"), "{err}");
        }
    }

    #[test]
    fn another_key_does_not_open_it() {
        let here = slot("org-1", "webhooks", "secret");
        let stored = SecretBox::new(KEY).seal("s3cret", here).unwrap();
        let err = SecretBox::new("another key of at least thirty-two characters!")
            .open(&stored, here)
            .unwrap_err();
        assert!(err.contains("CMS_SECRET_ENCRYPTION_KEY"), "{err}");
    }

    #[test]
    fn tampered_or_foreign_values_do_not_open() {
        let b = SecretBox::new(KEY);
        let here = slot("o", "p", "f");
        let stored = b.seal("s3cret", here).unwrap();
        let mut raw = STANDARD.decode(&stored[3..]).unwrap();
        let last = raw.len() - 1;
        raw[last] ^= 1;
        let tampered = format!("v1:{}", STANDARD.encode(&raw));
        assert!(b.open(&tampered, here).is_err());
        for foreign in ["s3cret", "v1:", "v1:!!!", "v2:AAAA", "v1:AAAA"] {
            let err = b.open(foreign, here).unwrap_err();
            assert!(err.contains("not an encrypted value"), "{foreign}: {err}");
        }
    }
}
