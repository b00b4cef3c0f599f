//! Helpers for the typed query strings routes read with `ApiQuery`: booleans and strings where
//! empty means absent, and the 400 a handler answers for input it refuses.

use cms_service::Error;
use cms_service::jobs::Scope;

use crate::error::{ApiError, ApiResult};

pub(crate) fn bad(message: String) -> ApiError {
    ApiError::Service(Error::bad_request(message))
}

/// A boolean query parameter: `true`/`false` or `1`/`0`; empty means absent. For
/// `#[serde(default, deserialize_with = "flag")]` on an `Option<bool>` field.
pub(crate) fn flag<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<bool>, D::Error> {
    let raw: Option<String> = serde::Deserialize::deserialize(d)?;
    match raw.as_deref() {
        None | Some("") => Ok(None),
        Some("true") | Some("1") => Ok(Some(true)),
        Some("false") | Some("0") => Ok(Some(false)),
        Some(_) => Err(serde::de::Error::custom("must be true or false")),
    }
}

/// A string query parameter where empty means absent.
pub(crate) fn text<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<String>, D::Error> {
    let raw: Option<String> = serde::Deserialize::deserialize(d)?;
    Ok(raw.filter(|s| !s.is_empty()))
}

/// `page` and `pageSize` as the client sent them, `None` when absent or empty (the service
/// applies its defaults).
pub(crate) fn page(
    page: Option<&str>,
    page_size: Option<&str>,
) -> ApiResult<(Option<i64>, Option<i64>)> {
    Ok((integer("page", page)?, integer("pageSize", page_size)?))
}

fn integer(name: &str, raw: Option<&str>) -> ApiResult<Option<i64>> {
    match raw {
        None | Some("") => Ok(None),
        Some(v) => v.parse().map(Some).map_err(|_| {
            ApiError::Service(Error::bad_request(format!("`{name}` must be an integer")))
        }),
    }
}

/// Whose records a read covers (`scope`): `all` or absent.
pub(crate) fn scope(raw: Option<&str>) -> ApiResult<Scope> {
    match raw {
        None | Some("") => Ok(Scope::Organization),
        Some("all") => Ok(Scope::All),
        Some(_) => Err(ApiError::Service(Error::bad_request(
            "`scope` is `all` or absent",
        ))),
    }
}
