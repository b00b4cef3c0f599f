//! Time-based one-time codes (RFC 6238 as CONTRACT.md section 20 fixes it: SHA-1, 6 digits,
//! 30-second steps, the current or the previous step accepted), their `otpauth://` URL and the
//! enrolment QR code, drawn as SVG. The arithmetic is `totp-rs`'s; what is ours is which steps
//! count and that a match names its step, so the caller can refuse a code used before.

use qrcode::QrCode;
use qrcode::render::svg;
use totp_rs::{Algorithm, TOTP};

use crate::error::{Error, Result};

/// Seconds per step.
const STEP_SECS: u64 = 30;
const DIGITS: usize = 6;
/// 160 bits, RFC 4226's recommendation.
const SECRET_BYTES: usize = 20;
/// The name authenticator apps list the account under.
const ISSUER: &str = "CMS";

/// One person's authenticator.
pub(crate) struct Authenticator(TOTP);

impl Authenticator {
    /// A new random secret.
    pub(crate) fn generate_secret() -> Vec<u8> {
        let mut secret = vec![0u8; SECRET_BYTES];
        getrandom::fill(&mut secret).expect("the operating system's random source is available");
        secret
    }

    /// The authenticator of `secret` for the account `email` (named in the URL apps import).
    pub(crate) fn new(secret: Vec<u8>, email: &str) -> Result<Self> {
        // A colon would end the label early in the URL; an address never needs one.
        let account = email.replace(':', "_");
        TOTP::new(
            Algorithm::SHA1,
            DIGITS,
            0,
            STEP_SECS,
            secret,
            Some(ISSUER.to_string()),
            account,
        )
        .map(Authenticator)
        .map_err(|e| Error::Internal(format!("two-factor secret refused: {e}")))
    }

    pub(crate) fn secret_base32(&self) -> String {
        self.0.get_secret_base32()
    }

    /// The `otpauth://totp/...` URL authenticator apps import.
    pub(crate) fn url(&self) -> String {
        self.0.get_url()
    }

    /// The step `code` was made for, when it is the code of the current step or of the
    /// previous one at `now_secs` (Unix seconds). Anything but six ASCII digits never matches.
    pub(crate) fn matching_step(&self, code: &str, now_secs: u64) -> Option<i64> {
        let code = code.trim();
        if code.len() != DIGITS || !code.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        let current = now_secs / STEP_SECS;
        [current, current.saturating_sub(1)]
            .into_iter()
            .find(|step| {
                let made = self.0.generate(step * STEP_SECS);
                constant_time_eq(made.as_bytes(), code.as_bytes())
            })
            .and_then(|step| i64::try_from(step).ok())
    }
}

/// Compares without stopping at the first difference, so timing tells nothing of a code.
fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// The QR code of `url` as an SVG document, for the enrolment page to show inline.
pub(crate) fn qr_svg(url: &str) -> Result<String> {
    let code = QrCode::new(url.as_bytes())
        .map_err(|e| Error::Internal(format!("the enrolment QR code cannot be drawn: {e}")))?;
    Ok(code
        .render::<svg::Color>()
        .min_dimensions(200, 200)
        .quiet_zone(true)
        .build())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// RFC 6238 appendix B's SHA-1 secret: "12345678901234567890".
    fn rfc_authenticator() -> Authenticator {
        Authenticator::new(b"12345678901234567890".to_vec(), "ada@example.com").unwrap()
    }

    #[test]
    fn codes_match_the_rfc_vectors_and_name_their_step() {
        let a = rfc_authenticator();
        // RFC 6238 appendix B, truncated to six digits: 94287082 at T = 59.
        assert_eq!(a.matching_step("287082", 59), Some(1));
        // 07081804 at T = 1111111109.
        assert_eq!(a.matching_step("081804", 1_111_111_109), Some(37_037_036));
    }

    #[test]
    fn the_previous_step_counts_and_older_ones_do_not() {
        let a = rfc_authenticator();
        assert_eq!(a.matching_step("287082", 59 + 30), Some(1));
        assert_eq!(a.matching_step("287082", 59 + 60), None);
        assert_eq!(a.matching_step("287082", 0), None, "a future code");
    }

    #[test]
    fn malformed_codes_never_match() {
        let a = rfc_authenticator();
        for code in ["", "28708", "2870820", "28708a", "２８７０８２"] {
            assert_eq!(a.matching_step(code, 59), None, "{code:?}");
        }
        assert_eq!(
            a.matching_step(" 287082 ", 59),
            Some(1),
            "spaces around are fine"
        );
    }

    #[test]
    fn the_url_names_the_issuer_account_and_secret() {
        let a = rfc_authenticator();
        let url = a.url();
        assert!(
            url.starts_with("otpauth://totp/CMS:ada%40example.com?"),
            "{url}"
        );
        assert!(
            url.contains(&format!("secret={}", a.secret_base32())),
            "{url}"
        );
        assert!(url.contains("issuer=CMS"), "{url}");
        let svg = qr_svg(&url).unwrap();
        assert!(svg.contains("<svg") && svg.contains("</svg>"), "{svg}");
    }
}
