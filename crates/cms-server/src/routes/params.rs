//! Query-string parameters as every route reads them: repeated keys kept, integers and
//! booleans parsed with a 400 that names the parameter.

use cms_service::Error;

use crate::error::{ApiError, ApiResult};
use crate::extract::ApiQuery;

/// Query-string parameters, repeated keys kept.
pub(crate) type Params = ApiQuery<Vec<(String, String)>>;

pub(crate) fn param<'a>(params: &'a [(String, String)], name: &str) -> Option<&'a str> {
    params
        .iter()
        .find(|(k, _)| k == name)
        .map(|(_, v)| v.as_str())
}

pub(crate) fn bad(message: String) -> ApiError {
    ApiError::Service(Error::bad_request(message))
}

pub(crate) fn int_param(params: &[(String, String)], name: &str, default: i64) -> ApiResult<i64> {
    match param(params, name) {
        None | Some("") => Ok(default),
        Some(v) => v
            .parse()
            .map_err(|_| bad(format!("`{name}` must be an integer"))),
    }
}

pub(crate) fn bool_param(params: &[(String, String)], name: &str) -> ApiResult<bool> {
    match param(params, name) {
        None | Some("") | Some("false") | Some("0") => Ok(false),
        Some("true") | Some("1") => Ok(true),
        Some(_) => Err(bad(format!("`{name}` must be true or false"))),
    }
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
