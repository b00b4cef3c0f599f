//! Checks and shapes of input that several services share: text PostgreSQL cannot store, and
//! a partial edit merged into a document's data.

use cms_core::Issue;
use serde_json::{Map, Value};

/// The first string (or key) holding U+0000: PostgreSQL cannot store it in JSONB, so both
/// engines refuse it alike rather than one of them failing with a 500.
pub(crate) fn find_nul(path: &str, value: &Value) -> Option<Issue> {
    let nul = |path: &str| {
        Some(Issue::new(
            path,
            "invalid",
            "text may not contain the NUL character",
        ))
    };
    match value {
        Value::String(s) if s.contains('\0') => nul(path),
        Value::Array(items) => items
            .iter()
            .enumerate()
            .find_map(|(i, v)| find_nul(&format!("{path}[{i}]"), v)),
        Value::Object(map) => map.iter().find_map(|(k, v)| {
            let child = if path.is_empty() {
                k.clone()
            } else {
                format!("{path}.{k}")
            };
            if k.contains('\0') {
                nul(&child)
            } else {
                find_nul(&child, v)
            }
        }),
        _ => None,
    }
}

/// `fields` merged into a document's data, one level deep: each named top-level field takes
/// the given value, and `null` removes the field. The assistant's edits are partial (a model
/// names the fields it changes), unlike PUT, which replaces the draft.
pub fn merge_fields(data: &Value, fields: &Map<String, Value>) -> Value {
    let mut merged = data.as_object().cloned().unwrap_or_default();
    for (name, value) in fields {
        if value.is_null() {
            merged.remove(name);
        } else {
            merged.insert(name.clone(), value.clone());
        }
    }
    Value::Object(merged)
}
