//! Cache validators (CONTRACT.md section 15): every 200 of the read endpoints (documents: list,
//! by id, by ids, back references; assets: list, by id; schemas) carries a strong `ETag`,
//! `Cache-Control` for whom it is, and `Vary`; an `If-None-Match` that names the current tag
//! answers 304 with those headers and no body.
//!
//! A handler takes [`Conditional`] and answers through it: [`Conditional::respond`] writes the
//! body once and tags it with its digest; a handler that can decide the tag before building the
//! body (a document by id, `cms_service::documents::RevisionTag`) asks
//! [`Conditional::not_modified`] first and tags the body with [`Conditional::respond_tagged`].
//!
//! Tags are of the identity body. A compressed answer carries the tag with its coding
//! (`"<tag>-gzip"`, see `compression`), and `If-None-Match` accepts either form, so a client
//! holding any coding of the current body gets its 304.

use axum::extract::FromRequestParts;
use axum::http::request::Parts;
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use cms_service::{Actor, Audience};
use serde::Serialize;
use sha2::{Digest, Sha256};

use crate::AppState;
use crate::error::handler_error;

/// `delivery.*` of the cache headers.
#[derive(Debug, Clone)]
pub struct CacheSettings {
    /// `max-age` of answers to the `public` role (`delivery.publicMaxAgeSeconds`).
    pub public_max_age_seconds: u64,
    /// `stale-while-revalidate` of answers to the `public` role
    /// (`delivery.staleWhileRevalidateSeconds`).
    pub stale_while_revalidate_seconds: u64,
}

impl Default for CacheSettings {
    fn default() -> Self {
        CacheSettings {
            public_max_age_seconds: 60,
            stale_while_revalidate_seconds: 300,
        }
    }
}

/// The `Cache-Control` of each audience, written once.
#[derive(Clone)]
pub(crate) struct CachePolicy {
    public: HeaderValue,
}

/// A credentialed answer may be stored by the client only, and checked before each reuse.
const PRIVATE: HeaderValue = HeaderValue::from_static("private, no-cache");
/// A preview token's answer (a draft behind a bearer secret) is never stored.
const NO_STORE: HeaderValue = HeaderValue::from_static("private, no-store");
/// What a cached answer depends on besides the URL: the CORS headers written for the origin,
/// the organization a public read names, the content-coding.
const VARY: HeaderValue = HeaderValue::from_static("origin, x-cms-organization, accept-encoding");

impl CachePolicy {
    pub(crate) fn new(settings: &CacheSettings) -> Self {
        let public = format!(
            "public, max-age={}, stale-while-revalidate={}",
            settings.public_max_age_seconds, settings.stale_while_revalidate_seconds
        );
        CachePolicy {
            // Digits, letters, commas and spaces only: always a valid header value.
            public: HeaderValue::from_str(&public).unwrap_or(PRIVATE),
        }
    }

    fn cache_control(&self, audience: Audience) -> HeaderValue {
        match audience {
            Audience::Credentialed => PRIVATE,
            Audience::Public => self.public.clone(),
            Audience::Preview => NO_STORE,
        }
    }
}

/// How many bytes of the body's SHA-256 a tag keeps (128 bits).
const TAG_BYTES: usize = 16;

/// The codings `compression` suffixes a tag with.
pub(crate) const CODINGS: [&str; 3] = ["gzip", "br", "zstd"];

/// The request's `If-None-Match`, and the headers its answer carries.
pub(crate) struct Conditional {
    condition: Condition,
    cache_control: HeaderValue,
}

/// `If-None-Match` as RFC 9110 section 13.1.2 reads it.
#[derive(Debug, PartialEq, Eq)]
enum Condition {
    /// No header (or one that names no well-formed tag): every request gets the body.
    None,
    /// `*`: any current representation matches.
    Any,
    /// The opaque tags listed, weak or strong alike (If-None-Match compares weakly).
    Tags(Vec<String>),
}

impl FromRequestParts<AppState> for Conditional {
    type Rejection = std::convert::Infallible;

    async fn from_request_parts(
        parts: &mut Parts,
        state: &AppState,
    ) -> Result<Self, Self::Rejection> {
        let audience = parts
            .extensions
            .get::<Actor>()
            .map_or(Audience::Credentialed, Actor::audience);
        Ok(Conditional {
            condition: Condition::of(&parts.headers),
            cache_control: state.delivery.caching.cache_control(audience),
        })
    }
}

impl Conditional {
    /// `200` with `body` as JSON, tagged with its digest; `304` when the request names it.
    pub(crate) fn respond<T: Serialize>(self, body: &T) -> Response {
        match serde_json::to_vec(body) {
            Ok(bytes) => {
                let tag = body_tag(&bytes);
                match self.not_modified(&tag) {
                    Some(response) => response,
                    None => self.with_body(&tag, bytes),
                }
            }
            Err(e) => serialization_failed(&e),
        }
    }

    /// `200` with `body` as JSON, tagged `tag`: a tag decided from what the body is built from
    /// (the caller asked [`Self::not_modified`] first, or did not need to).
    pub(crate) fn respond_tagged<T: Serialize>(self, tag: &str, body: &T) -> Response {
        match serde_json::to_vec(body) {
            Ok(bytes) => self.with_body(tag, bytes),
            Err(e) => serialization_failed(&e),
        }
    }

    /// The 304 when the request names `tag` (in any coding's form, or `*`).
    pub(crate) fn not_modified(&self, tag: &str) -> Option<Response> {
        let held = self.condition.matching(tag)?;
        let mut response = StatusCode::NOT_MODIFIED.into_response();
        // The tag of the representation the client holds: the current one, in its coding.
        self.headers(response.headers_mut(), held);
        Some(response)
    }

    /// Whether the request carries an `If-None-Match` worth deciding before the body.
    pub(crate) fn is_conditional(&self) -> bool {
        self.condition != Condition::None
    }

    fn with_body(&self, tag: &str, bytes: Vec<u8>) -> Response {
        let mut response = bytes.into_response();
        let headers = response.headers_mut();
        headers.insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        );
        self.headers(headers, tag);
        response
    }

    fn headers(&self, headers: &mut HeaderMap, tag: &str) {
        if let Ok(etag) = HeaderValue::from_str(&format!("\"{tag}\"")) {
            headers.insert(header::ETAG, etag);
        }
        headers.insert(header::CACHE_CONTROL, self.cache_control.clone());
        headers.insert(header::VARY, VARY);
    }
}

/// `If-None-Match`, as the OpenAPI document describes it on the read endpoints.
#[derive(utoipa::IntoParams)]
#[into_params(names("If-None-Match"), parameter_in = Header)]
#[allow(dead_code)] // Read by `Conditional`; this type only describes it.
pub(crate) struct IfNoneMatch(
    /// Entity tags from earlier answers (`"…"`, `W/"…"`, several separated by commas), or `*`:
    /// when one names the current answer, 304 with no body.
    Option<String>,
);

/// The 304 of a read endpoint, as the OpenAPI document describes it.
#[derive(utoipa::IntoResponses)]
#[allow(dead_code)] // Written by `Conditional`; this type only describes it.
pub(crate) enum NotModified {
    /// Not modified: `If-None-Match` names the current answer. No body.
    #[response(
        status = 304,
        headers(
            ("ETag" = String, description = "The current answer's strong entity tag"),
            ("Cache-Control" = String, description = "As on the 200"),
            ("Vary" = String, description = "`origin, x-cms-organization, accept-encoding`"),
        )
    )]
    NotModified,
}

/// The tag of a body: its SHA-256, shortened, in hex.
fn body_tag(bytes: &[u8]) -> String {
    let digest = Sha256::digest(bytes);
    cms_core::hex::encode(&digest[..TAG_BYTES])
}

fn serialization_failed(e: &serde_json::Error) -> Response {
    tracing::error!(error = %e, "a response body does not serialize");
    handler_error(
        StatusCode::INTERNAL_SERVER_ERROR,
        "an internal error occurred",
        &[],
    )
}

impl Condition {
    fn of(headers: &HeaderMap) -> Condition {
        let mut tags = Vec::new();
        for value in headers.get_all(header::IF_NONE_MATCH) {
            let Ok(text) = value.to_str() else { continue };
            if text.trim() == "*" {
                return Condition::Any;
            }
            tags.extend(entity_tags(text));
        }
        if tags.is_empty() {
            Condition::None
        } else {
            Condition::Tags(tags)
        }
    }

    /// The tag (opaque, as the client holds it) that matches `current`, by the weak comparison
    /// If-None-Match uses; a listed tag may carry a coding suffix. `*` matches `current`.
    fn matching<'s>(&'s self, current: &'s str) -> Option<&'s str> {
        match self {
            Condition::None => None,
            Condition::Any => Some(current),
            Condition::Tags(tags) => tags
                .iter()
                .find(|held| without_coding(held) == current)
                .map(String::as_str),
        }
    }
}

/// `tag` without the coding suffix `compression` adds (`abc-gzip` → `abc`).
fn without_coding(tag: &str) -> &str {
    CODINGS
        .iter()
        .find_map(|coding| {
            tag.strip_suffix(coding)
                .and_then(|rest| rest.strip_suffix('-'))
        })
        .unwrap_or(tag)
}

/// The opaque tags of a list of entity tags (`"a", W/"b"`), weak ones included. Parsing stops
/// at the first malformed element: what came before it still counts.
fn entity_tags(list: &str) -> Vec<String> {
    let mut tags = Vec::new();
    let mut rest = list;
    loop {
        rest = rest.trim_start_matches([' ', '\t', ',']);
        if rest.is_empty() {
            return tags;
        }
        let unweakened = rest.strip_prefix("W/").unwrap_or(rest);
        let Some(quoted) = unweakened.strip_prefix('"') else {
            return tags;
        };
        let Some(end) = quoted.find('"') else {
            return tags;
        };
        tags.push(quoted[..end].to_string());
        rest = &quoted[end + 1..];
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn condition(values: &[&'static str]) -> Condition {
        let mut headers = HeaderMap::new();
        for v in values {
            headers.append(header::IF_NONE_MATCH, HeaderValue::from_static(v));
        }
        Condition::of(&headers)
    }

    #[test]
    fn lists_weak_tags_and_star_are_read() {
        assert_eq!(condition(&[]), Condition::None);
        assert_eq!(condition(&["*"]), Condition::Any);
        assert_eq!(
            condition(&["\"a\", W/\"b\"", "\"c,d\""]),
            Condition::Tags(vec!["a".into(), "b".into(), "c,d".into()])
        );
        // A malformed element ends the list; what came before still counts.
        assert_eq!(
            condition(&["\"a\", b, \"c\""]),
            Condition::Tags(vec!["a".into()])
        );
        assert_eq!(condition(&["abc"]), Condition::None);
    }

    #[test]
    fn matching_is_weak_and_ignores_the_coding() {
        let tags = condition(&["W/\"x\", \"abc-br\""]);
        assert_eq!(tags.matching("abc"), Some("abc-br"));
        assert_eq!(tags.matching("x"), Some("x"));
        assert_eq!(tags.matching("ab"), None);
        assert_eq!(condition(&["*"]).matching("abc"), Some("abc"));
        assert_eq!(condition(&[]).matching("abc"), None);
        assert_eq!(without_coding("abc-zstd"), "abc");
        assert_eq!(without_coding("abcgzip"), "abcgzip");
    }
}
