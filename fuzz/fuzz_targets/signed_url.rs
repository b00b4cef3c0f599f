//! Signed media links: `MediaSigner::verify` on arbitrary query values, and `sign` round trips.
//! The input is text, one value a line: secret, id, filename, exp, sig, now (missing lines are
//! absent query parameters; `now` defaults to 0).
//! Invariants: no panic; without a secret nothing verifies; `verify` accepts only a link whose
//! `exp` is after `now` and whose `sig` is the one `sign` computes (hex, either case); a freshly
//! signed link verifies before `exp` and is expired at `exp`; changing any one byte of the
//! signature makes it fail unless the byte only changed the case of a hex letter.
#![no_main]

use cms_core::asset::{MediaSigner, SignatureError};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let mut lines = text.split('\n');
    let secret = lines.next().unwrap_or_default();
    let id = lines.next().unwrap_or_default();
    let filename = lines.next().unwrap_or_default();
    let exp = lines.next();
    let sig = lines.next();
    let now: i64 = lines.next().and_then(|n| n.parse().ok()).unwrap_or(0);

    let unsigned = MediaSigner::new(None);
    assert!(unsigned.verify(id, filename, sig, exp, now).is_err());
    assert_eq!(unsigned.sign(id, filename, now), None);

    let signer = MediaSigner::new(Some(secret));
    let verdict = signer.verify(id, filename, sig, exp, now);
    if verdict.is_ok() {
        let expires: i64 = exp
            .and_then(|e| e.parse().ok())
            .expect("a verified exp parses");
        assert!(expires > now, "an expired link verified");
        let expected = signer
            .sign(id, filename, expires)
            .expect("a configured signer");
        assert!(
            sig.is_some_and(|s| s.eq_ignore_ascii_case(&expected)),
            "{sig:?} verified but the signature is {expected}"
        );
    }
    if secret.is_empty() {
        assert!(verdict.is_err());
        return;
    }

    // Round trip at the input's expiry (or `now + 60` when it does not parse).
    let expires: i64 = exp
        .and_then(|e| e.parse().ok())
        .unwrap_or_else(|| now.saturating_add(60));
    let good = signer
        .sign(id, filename, expires)
        .expect("a configured signer");
    let exp_text = expires.to_string();
    assert_eq!(
        signer.verify(id, filename, Some(&good), Some(&exp_text), expires),
        Err(SignatureError::Expired)
    );
    let Some(before) = expires.checked_sub(1) else {
        return;
    };
    assert_eq!(
        signer.verify(id, filename, Some(&good), Some(&exp_text), before),
        Ok(())
    );
    // Every single-byte change of the signature, with replacement bytes taken from the input.
    let replacements: Vec<u8> = data
        .iter()
        .copied()
        .chain([b'0', b'f', b'A', b'g'])
        .collect();
    for (i, original) in good.bytes().enumerate() {
        let replacement = replacements[i % replacements.len()];
        if replacement == original {
            continue;
        }
        let mut changed = good.clone().into_bytes();
        changed[i] = replacement;
        let Ok(changed) = String::from_utf8(changed) else {
            continue;
        };
        let verdict = signer.verify(id, filename, Some(&changed), Some(&exp_text), before);
        if replacement.eq_ignore_ascii_case(&original) {
            assert_eq!(
                verdict,
                Ok(()),
                "{changed} differs from {good} only in case"
            );
        } else {
            assert!(verdict.is_err(), "{changed} verified in place of {good}");
        }
    }
});
