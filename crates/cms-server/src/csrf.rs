//! The CSRF check for cookie-authenticated writes (CONTRACT.md section 12): a browser sends
//! `Origin` (or at least `Referer`) on a cross-site POST, PUT, PATCH or DELETE, and another
//! site cannot make it lie, so a write whose origin is not this instance is refused. Requests
//! with an API key or a Bearer token carry their credential explicitly and are exempt. An
//! origin listed in `cors.origins` passes too (CONTRACT.md section 15): the operator trusts
//! its pages with the API, credentials included (`delivery::cors`).

use axum::http::{HeaderMap, Method, Uri, header};

/// `scheme://host[:port]`, lowercased, the scheme's default port dropped.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Origin {
    scheme: String,
    authority: String,
}

impl Origin {
    /// The origin of an absolute http(s) URL; `None` for anything else (`null`, a path).
    pub fn of_url(url: &str) -> Option<Origin> {
        let (scheme, rest) = url.trim().split_once("://")?;
        let scheme = scheme.to_ascii_lowercase();
        if scheme != "http" && scheme != "https" {
            return None;
        }
        let authority = rest.split(['/', '?', '#']).next().unwrap_or_default();
        if authority.is_empty() || authority.contains('@') {
            return None;
        }
        let authority = normalise_authority(&scheme, authority);
        Some(Origin { scheme, authority })
    }
}

fn normalise_authority(scheme: &str, authority: &str) -> String {
    let authority = authority.to_ascii_lowercase();
    let default_port = if scheme == "https" { ":443" } else { ":80" };
    match authority.strip_suffix(default_port) {
        Some(bare) => bare.to_string(),
        None => authority,
    }
}

/// Whether the check applies: a state-changing method.
pub fn applies_to(method: &Method) -> bool {
    matches!(
        *method,
        Method::POST | Method::PUT | Method::PATCH | Method::DELETE
    )
}

/// The origin a request says it comes from: its `Origin`, or without one its `Referer`'s.
pub fn claimed_origin(headers: &HeaderMap) -> Option<Origin> {
    let text = |name| headers.get(name).and_then(|v| v.to_str().ok());
    match text(header::ORIGIN) {
        Some(origin) => Origin::of_url(origin),
        None => text(header::REFERER).and_then(Origin::of_url),
    }
}

/// Whether the request's `Origin` (or, without one, `Referer`) is this instance: `public` when
/// `server.publicUrl` is set, else the request's own `Host`.
pub fn same_origin(headers: &HeaderMap, uri: &Uri, public: Option<&Origin>) -> bool {
    let text = |name| headers.get(name).and_then(|v| v.to_str().ok());
    let Some(claimed) = claimed_origin(headers) else {
        return false;
    };
    match public {
        Some(public) => claimed == *public,
        None => {
            let host = text(header::HOST).or_else(|| uri.authority().map(|a| a.as_str()));
            host.is_some_and(|host| normalise_authority(&claimed.scheme, host) == claimed.authority)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::HeaderValue;

    fn headers(pairs: &[(&'static str, &'static str)]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for (k, v) in pairs {
            h.insert(*k, HeaderValue::from_static(v));
        }
        h
    }

    #[test]
    fn origins_are_normalised() {
        assert_eq!(
            Origin::of_url("HTTPS://CMS.Example:443/admin?x"),
            Origin::of_url("https://cms.example")
        );
        assert_ne!(
            Origin::of_url("http://cms.example"),
            Origin::of_url("https://cms.example")
        );
        for bad in [
            "null",
            "/admin",
            "ftp://cms.example",
            "https://",
            "https://u@cms.example",
        ] {
            assert_eq!(Origin::of_url(bad), None, "{bad}");
        }
    }

    #[test]
    fn the_host_decides_without_a_public_url() {
        let uri = Uri::from_static("/api/documents");
        let ok = headers(&[
            ("host", "cms.example:8080"),
            ("origin", "http://cms.example:8080"),
        ]);
        assert!(same_origin(&ok, &uri, None));
        let default_port = headers(&[
            ("host", "cms.example:443"),
            ("origin", "https://cms.example"),
        ]);
        assert!(same_origin(&default_port, &uri, None));
        let other = headers(&[("host", "cms.example"), ("origin", "https://evil.example")]);
        assert!(!same_origin(&other, &uri, None));
        let referer = headers(&[
            ("host", "cms.example"),
            ("referer", "https://cms.example/admin/x"),
        ]);
        assert!(same_origin(&referer, &uri, None));
        // Origin wins over Referer, even when it is `null`.
        let null = headers(&[
            ("host", "cms.example"),
            ("origin", "null"),
            ("referer", "https://cms.example/admin"),
        ]);
        assert!(!same_origin(&null, &uri, None));
        assert!(!same_origin(
            &headers(&[("host", "cms.example")]),
            &uri,
            None
        ));
    }

    #[test]
    fn the_public_url_decides_when_set() {
        let uri = Uri::from_static("/api/documents");
        let public = Origin::of_url("https://cms.example/").unwrap();
        let behind_proxy = headers(&[("host", "10.0.0.5:3000"), ("origin", "https://cms.example")]);
        assert!(same_origin(&behind_proxy, &uri, Some(&public)));
        let host_only = headers(&[
            ("host", "10.0.0.5:3000"),
            ("origin", "http://10.0.0.5:3000"),
        ]);
        assert!(!same_origin(&host_only, &uri, Some(&public)));
    }
}
