//! Headers that tell browsers how to treat what the API answers (CONTRACT.md section 13): no
//! content sniffing and no framing for everything under `/api` (the GraphQL endpoint too,
//! wherever `graphql.path` puts it), and HSTS on every answer when the instance is served over
//! https. One layer, outside everything else, so errors, 404s, 405s, refusals, panics and
//! plugin routes carry them like any answer.

use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderValue, header};
use axum::middleware::Next;
use axum::response::Response;
use std::sync::Arc;

/// One year, subdomains included: the instance's origin is https for good once it says so.
const HSTS: HeaderValue = HeaderValue::from_static("max-age=31536000; includeSubDomains");

/// What the layer adds, decided once from the settings.
#[derive(Debug, Clone)]
pub struct SecurityHeaders {
    /// `server.publicUrl` is https.
    hsts: bool,
    /// `graphql.path`, which may lie outside `/api`.
    graphql_path: Arc<str>,
}

impl SecurityHeaders {
    pub fn new(public_url: Option<&str>, graphql_path: &str) -> Self {
        SecurityHeaders {
            hsts: public_url.is_some_and(is_https),
            graphql_path: graphql_path.into(),
        }
    }

    /// Whether `path` is part of the API: `/api` and below, and the GraphQL endpoint.
    fn is_api(&self, path: &str) -> bool {
        let below = |prefix: &str| {
            path.strip_prefix(prefix)
                .is_some_and(|rest| rest.is_empty() || rest.starts_with('/'))
        };
        below("/api") || path == &*self.graphql_path
    }

    fn apply(&self, path: &str, headers: &mut HeaderMap) {
        if self.is_api(path) {
            headers.insert(
                header::X_CONTENT_TYPE_OPTIONS,
                HeaderValue::from_static("nosniff"),
            );
            headers.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
        }
        if self.hsts {
            headers.insert(header::STRICT_TRANSPORT_SECURITY, HSTS);
        }
    }
}

fn is_https(url: &str) -> bool {
    url.get(..8)
        .is_some_and(|scheme| scheme.eq_ignore_ascii_case("https://"))
}

pub async fn add(State(headers): State<SecurityHeaders>, req: Request, next: Next) -> Response {
    let path = req.uri().path().to_string();
    let mut response = next.run(req).await;
    headers.apply(&path, response.headers_mut());
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    fn applied(layer: &SecurityHeaders, path: &str) -> HeaderMap {
        let mut headers = HeaderMap::new();
        layer.apply(path, &mut headers);
        headers
    }

    #[test]
    fn api_paths_get_nosniff_and_deny_and_https_gets_hsts() {
        let plain = SecurityHeaders::new(Some("http://cms.example"), "/gql");
        for api in ["/api", "/api/", "/api/documents/x", "/gql"] {
            let headers = applied(&plain, api);
            assert_eq!(headers[header::X_CONTENT_TYPE_OPTIONS], "nosniff", "{api}");
            assert_eq!(headers[header::X_FRAME_OPTIONS], "DENY", "{api}");
            assert!(!headers.contains_key(header::STRICT_TRANSPORT_SECURITY));
        }
        for other in ["/apiary", "/media/x", "/admin", "/gql/x", "/"] {
            assert!(applied(&plain, other).is_empty(), "{other}");
        }
        let https = SecurityHeaders::new(Some("HTTPS://cms.example"), "/api/graphql");
        for any in ["/api/x", "/media/x", "/admin"] {
            assert_eq!(
                applied(&https, any)[header::STRICT_TRANSPORT_SECURITY],
                "max-age=31536000; includeSubDomains"
            );
        }
        assert!(
            applied(&SecurityHeaders::new(None, "/api/graphql"), "/admin").is_empty(),
            "no public URL, no HSTS"
        );
    }
}
