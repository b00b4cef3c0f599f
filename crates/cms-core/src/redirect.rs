//! Where a link may send a browser next: the admin's `redirect` after sign-in and the
//! `callbackURL` of an e-mail verification link. Only a path of this instance qualifies, so no
//! link can send a person who trusts this instance somewhere else (an open redirect). The admin's
//! browser modules apply the same rule (`cms-admin/assets/js/redirect.js`).

/// Where a refused or missing target falls back to.
pub const FALLBACK: &str = "/admin";

/// `raw` when it is a path on this instance: a single leading `/` (not `//` or `/\`, which
/// browsers read as another host), hence no scheme, and no control character, whitespace or
/// backslash anywhere. Browsers drop tabs and newlines from a URL before reading it
/// (`/\t/evil.example` is `//evil.example`) and read `\` as `/`, so any of them could turn a
/// path into another origin.
pub fn same_origin_path(raw: &str) -> Option<&str> {
    let mut chars = raw.chars();
    let single_leading_slash = chars.next() == Some('/') && !matches!(chars.next(), Some('/'));
    let clean = !raw
        .chars()
        .any(|c| c.is_control() || c.is_whitespace() || c == '\\');
    (single_leading_slash && clean).then_some(raw)
}

/// [`same_origin_path`], or [`FALLBACK`] for a missing or refused target.
pub fn same_origin_path_or_fallback(raw: Option<&str>) -> &str {
    raw.and_then(same_origin_path).unwrap_or(FALLBACK)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_paths_of_this_instance_are_followed() {
        for ok in [
            "/",
            "/admin",
            "/admin/documents/post?page=2#top",
            "/admin?redirect=%2F%2Fevil.example",
            "/admin/a%09b",
        ] {
            assert_eq!(same_origin_path(ok), Some(ok), "{ok:?}");
        }
        for hostile in [
            "",
            "admin",
            "//evil.example",
            "//evil.example/admin",
            "/\\evil.example",
            "\\\\evil.example",
            "/admin\\..\\..\\",
            "https://evil.example/admin",
            "http:/evil.example",
            "javascript:alert(1)",
            "data:text/html,hi",
            "/\t/evil.example",
            "/\n/evil.example",
            "/\r/evil.example",
            "/admin\t",
            "/admin\r\nSet-Cookie: x=1",
            "\t/admin",
            " /admin",
            "/ad min",
            "/admin\u{0}",
            "/admin\u{7f}",
            "/admin\u{2028}",
            "/admin\u{a0}",
        ] {
            assert_eq!(same_origin_path(hostile), None, "{hostile:?}");
            assert_eq!(same_origin_path_or_fallback(Some(hostile)), FALLBACK);
        }
        assert_eq!(same_origin_path_or_fallback(None), FALLBACK);
        assert_eq!(same_origin_path_or_fallback(Some("/admin/x")), "/admin/x");
    }
}
