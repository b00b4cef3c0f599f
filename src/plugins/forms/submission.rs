//! A submission checked against its published form (CONTRACT.md section 11): each form field's
//! `name` is the issue `path`.

use cms_core::Issue;
use cms_core::identity::Email;
use serde_json::{Map, Value};

/// The longest text a submitted field may hold.
pub const MAX_TEXT_CHARS: usize = 10_000;

/// One field of a form, as its `fields` array declares it.
#[derive(Debug, Clone, PartialEq)]
pub struct FormField {
    pub name: String,
    pub kind: FieldKind,
    pub required: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FieldKind {
    Text,
    Email,
    Number,
    Textarea,
    Checkbox,
}

impl FieldKind {
    pub const NAMES: [&'static str; 5] = ["text", "email", "number", "textarea", "checkbox"];

    fn parse(name: &str) -> Option<FieldKind> {
        Some(match name {
            "text" => FieldKind::Text,
            "email" => FieldKind::Email,
            "number" => FieldKind::Number,
            "textarea" => FieldKind::Textarea,
            "checkbox" => FieldKind::Checkbox,
            _ => return None,
        })
    }
}

/// The fields of a form document's published data. Entries without a name are skipped (the
/// schema makes `name` required, so a published form has none); an unknown `type` is text.
pub fn form_fields(form_data: &Value) -> Vec<FormField> {
    form_data
        .get("fields")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|field| {
            let name = field.get("name")?.as_str()?.trim();
            (!name.is_empty()).then(|| FormField {
                name: name.to_string(),
                kind: field
                    .get("type")
                    .and_then(Value::as_str)
                    .and_then(FieldKind::parse)
                    .unwrap_or(FieldKind::Text),
                required: field.get("required").and_then(Value::as_bool) == Some(true),
            })
        })
        .collect()
}

/// What is wrong with `values` as a submission of a form with `fields`.
pub fn check(fields: &[FormField], values: &Map<String, Value>) -> Vec<Issue> {
    let mut issues = Vec::new();
    for key in values.keys() {
        if !fields.iter().any(|f| &f.name == key) {
            issues.push(Issue::new(key, "unknown", "is not a field of this form"));
        }
    }
    for field in fields {
        let value = values.get(&field.name).filter(|v| !is_blank(v));
        let Some(value) = value else {
            if field.required {
                issues.push(Issue::new(&field.name, "required", "is required"));
            }
            continue;
        };
        if let Some(issue) = check_value(field, value) {
            issues.push(issue);
        }
    }
    issues
}

/// Absent for `required`: null, an empty or blank string, and an unticked box.
fn is_blank(value: &Value) -> bool {
    match value {
        Value::Null | Value::Bool(false) => true,
        Value::String(s) => s.trim().is_empty(),
        _ => false,
    }
}

fn check_value(field: &FormField, value: &Value) -> Option<Issue> {
    let issue = |code: &str, message: &str| Some(Issue::new(&field.name, code, message));
    match (field.kind, value) {
        (FieldKind::Number, Value::Number(_)) | (FieldKind::Checkbox, Value::Bool(_)) => None,
        (FieldKind::Number, _) => issue("type", "must be a number"),
        (FieldKind::Checkbox, _) => issue("type", "must be true or false"),
        (_, Value::String(s)) if s.chars().count() > MAX_TEXT_CHARS => {
            issue("maxLength", "is longer than 10000 characters")
        }
        (FieldKind::Email, Value::String(s)) if Email::parse(s).is_none() => {
            issue("email", "must be an e-mail address")
        }
        (_, Value::String(_)) => None,
        _ => issue("type", "must be text"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn form() -> Vec<FormField> {
        form_fields(&json!({"title": "Contact", "fields": [
            {"name": "name", "label": "Name", "type": "text", "required": true},
            {"name": "email", "label": "E-mail", "type": "email", "required": true},
            {"name": "age", "type": "number"},
            {"name": "message", "type": "textarea"},
            {"name": "terms", "type": "checkbox", "required": true},
            {"label": "no name"},
        ]}))
    }

    fn codes(values: Value) -> Vec<(String, String)> {
        check(&form(), values.as_object().unwrap())
            .into_iter()
            .map(|i| (i.path, i.code))
            .collect()
    }

    #[test]
    fn a_complete_submission_passes() {
        assert_eq!(form().len(), 5);
        assert!(
            codes(json!({"name": "Ada", "email": "ada@example.com", "age": 36,
                         "message": "Hi", "terms": true}))
            .is_empty()
        );
    }

    #[test]
    fn each_field_is_checked_by_name() {
        let got = codes(json!({"name": "  ", "email": "not-an-address", "age": "36",
                               "terms": false, "extra": 1}));
        let expected = [
            ("extra", "unknown"),
            ("name", "required"),
            ("email", "email"),
            ("age", "type"),
            ("terms", "required"),
        ];
        assert_eq!(
            got,
            expected
                .iter()
                .map(|(p, c)| (p.to_string(), c.to_string()))
                .collect::<Vec<_>>()
        );
        let long = "x".repeat(MAX_TEXT_CHARS + 1);
        assert_eq!(
            codes(json!({"name": "Ada", "email": "a@b.co", "terms": true, "message": long})),
            [("message".to_string(), "maxLength".to_string())]
        );
        assert_eq!(
            codes(json!({"name": ["Ada"], "email": "a@b.co", "terms": true})),
            [("name".to_string(), "type".to_string())]
        );
    }
}
