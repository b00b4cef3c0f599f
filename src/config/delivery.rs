//! `cors.*` and `delivery.*`: serving published content to websites and apps on other origins
//! (CONTRACT.md section 15).

use serde::Deserialize;

use super::{Config, ConfigError};

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct CorsConfig {
    /// Origins (`https://www.example.com`, scheme, host and port only) whose pages may call the
    /// API from a browser, or `["*"]` for any origin without credentials. Default: none.
    pub origins: Vec<String>,
    /// How long a browser may keep a preflight's answer.
    pub max_age_seconds: u64,
}

impl Default for CorsConfig {
    fn default() -> Self {
        CorsConfig {
            origins: Vec::new(),
            max_age_seconds: 600,
        }
    }
}

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct DeliveryConfig {
    /// Anonymous reads (the `public` role) one client address may make per minute.
    pub public_reads_per_minute: u32,
    /// `max-age` of `Cache-Control` on answers to the `public` role.
    pub public_max_age_seconds: u64,
    /// `stale-while-revalidate` of `Cache-Control` on answers to the `public` role.
    pub stale_while_revalidate_seconds: u64,
    /// How long a preview link's token lasts.
    pub preview_minutes: u32,
}

impl Default for DeliveryConfig {
    fn default() -> Self {
        DeliveryConfig {
            public_reads_per_minute: 600,
            public_max_age_seconds: 60,
            stale_while_revalidate_seconds: 300,
            preview_minutes: 60,
        }
    }
}

/// The longest a preview token may last: a week. A preview link is a bearer secret for a
/// draft, so it should not outlive the review it was made for.
const MAX_PREVIEW_MINUTES: u32 = 7 * 24 * 60;

impl Config {
    /// The CORS origins, checked: `*` alone, or origins of the form `scheme://host[:port]`
    /// with no path, query or trailing slash, as browsers send them in `Origin`.
    pub fn cors_origins(&self) -> Result<Vec<String>, ConfigError> {
        let origins = &self.cors.origins;
        if origins.iter().any(|o| o == "*") {
            return if origins.len() == 1 {
                Ok(origins.clone())
            } else {
                Err(ConfigError(
                    "cors.origins: \"*\" stands alone, not beside listed origins".into(),
                ))
            };
        }
        origins
            .iter()
            .map(|origin| {
                check_origin(origin).map_err(|why| {
                    ConfigError(format!("cors.origins: `{origin}` is not an origin: {why}"))
                })
            })
            .collect()
    }

    pub(super) fn check_delivery(&self) -> Result<(), ConfigError> {
        self.cors_origins()?;
        let d = &self.delivery;
        if d.public_reads_per_minute == 0 {
            return Err(ConfigError(
                "delivery.publicReadsPerMinute must be positive".into(),
            ));
        }
        if !(1..=MAX_PREVIEW_MINUTES).contains(&d.preview_minutes) {
            return Err(ConfigError(format!(
                "delivery.previewMinutes must be 1 to {MAX_PREVIEW_MINUTES}"
            )));
        }
        Ok(())
    }
}

/// An origin as a browser writes it in `Origin`: `http` or `https`, a host in lower case, an
/// optional port, and nothing after (not even a slash).
fn check_origin(origin: &str) -> Result<String, &'static str> {
    let uri: axum::http::Uri = origin.parse().map_err(|_| "it does not parse as a URL")?;
    if !matches!(uri.scheme_str(), Some("http" | "https")) {
        return Err("it must start with http:// or https://");
    }
    let authority = uri.authority().ok_or("it names no host")?;
    if authority.as_str().contains('@') {
        return Err("it may not hold a user name");
    }
    if uri.path_and_query().is_some_and(|p| p.as_str() != "/") || origin.ends_with('/') {
        return Err(
            "it may hold only a scheme, a host and a port (no path, query or trailing slash)",
        );
    }
    if authority.host().chars().any(|c| c.is_ascii_uppercase()) {
        return Err("browsers send origins in lower case");
    }
    // `Uri` takes any digits after the colon, and then names no port: a port is at most 65535.
    if authority.port().is_none() && authority.as_str() != authority.host() {
        return Err("its port is not a number from 0 to 65535");
    }
    Ok(origin.to_string())
}
