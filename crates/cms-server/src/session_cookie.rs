//! The `cms_session` cookie: reading it from requests and writing it on responses.

use axum::http::{HeaderMap, HeaderValue, header};

pub const NAME: &str = "cms_session";

/// The value of `cms_session` in the request's `Cookie` headers.
pub fn read(headers: &HeaderMap) -> Option<String> {
    read_named(headers, NAME)
}

/// The value of the cookie `name` in the request's `Cookie` headers.
pub fn read_named(headers: &HeaderMap, name: &str) -> Option<String> {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|pair| pair.trim().split_once('='))
        .find(|(found, _)| *found == name)
        .map(|(_, value)| value.trim_matches('"').to_string())
        .filter(|v| !v.is_empty())
}

/// `Set-Cookie` for a session: HttpOnly, SameSite=Lax, Secure over https.
pub fn set(value: &str, max_age_secs: i64, secure: bool) -> HeaderValue {
    let secure = if secure { "; Secure" } else { "" };
    // The value is base64url plus one dot: nothing in it needs quoting.
    HeaderValue::from_str(&format!(
        "{NAME}={value}; Path=/; HttpOnly; SameSite=Lax; Max-Age={max_age_secs}{secure}"
    ))
    .expect("a session cookie is a valid header value")
}

/// `Set-Cookie` that removes the session cookie.
pub fn clear(secure: bool) -> HeaderValue {
    set("", 0, secure)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_the_session_among_other_cookies() {
        let mut h = HeaderMap::new();
        h.append(
            header::COOKIE,
            HeaderValue::from_static("a=1; cms_session=tok.sig; b=2"),
        );
        assert_eq!(read(&h).as_deref(), Some("tok.sig"));
        let mut h = HeaderMap::new();
        h.append(header::COOKIE, HeaderValue::from_static("cms_session="));
        assert_eq!(read(&h), None);
    }

    #[test]
    fn the_cookie_is_http_only_and_lax() {
        let v = set("tok.sig", 604800, true);
        assert_eq!(
            v.to_str().unwrap(),
            "cms_session=tok.sig; Path=/; HttpOnly; SameSite=Lax; Max-Age=604800; Secure"
        );
    }
}
