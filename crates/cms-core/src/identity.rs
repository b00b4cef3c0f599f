//! Identity values with their rules: e-mail addresses and passwords.

use std::fmt;

/// A syntactically plausible e-mail address, trimmed and lowercased so that one person is one
/// account whatever the capitalisation they type.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Email(String);

impl Email {
    pub fn parse(raw: &str) -> Option<Email> {
        let s = raw.trim().to_lowercase();
        let (local, domain) = s.split_once('@')?;
        let ok = !local.is_empty()
            && s.len() <= 254
            && domain.contains('.')
            && !domain.starts_with('.')
            && !domain.ends_with('.')
            && !domain.contains('@')
            && !s.chars().any(|c| c.is_whitespace() || c.is_control());
        ok.then_some(Email(s))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for Email {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// A password that satisfies the length rule (8 to 128 characters). The value is never printed.
pub struct Password(String);

impl Password {
    pub const MIN_CHARS: usize = 8;
    pub const MAX_CHARS: usize = 128;

    pub fn parse(raw: &str) -> Option<Password> {
        let n = raw.chars().count();
        (Self::MIN_CHARS..=Self::MAX_CHARS)
            .contains(&n)
            .then(|| Password(raw.to_string()))
    }

    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for Password {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Password(..)")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn emails_are_normalised_and_checked() {
        assert_eq!(
            Email::parse(" Ada@Example.COM ").unwrap().as_str(),
            "ada@example.com"
        );
        for bad in [
            "",
            "ada",
            "ada@",
            "@example.com",
            "ada@example",
            "a da@example.com",
            "a@b@c.d",
        ] {
            assert!(Email::parse(bad).is_none(), "{bad}");
        }
    }

    #[test]
    fn passwords_are_8_to_128_characters() {
        assert!(Password::parse("1234567").is_none());
        assert!(Password::parse("12345678").is_some());
        assert!(Password::parse(&"é".repeat(128)).is_some());
        assert!(Password::parse(&"x".repeat(129)).is_none());
        assert_eq!(
            format!("{:?}", Password::parse("secret-pass").unwrap()),
            "Password(..)"
        );
    }
}
