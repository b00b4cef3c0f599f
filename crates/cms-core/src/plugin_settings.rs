//! Plugin settings (SPEC.md "Plugin settings", CONTRACT.md section 9): what a plugin declares,
//! and the checks of a declaration and of the values saved for it. Pure: storing, encrypting
//! and redacting are the service layer's.

use serde::Serialize;
use serde_json::Value;

use crate::Issue;

/// What a set secret reads as, and what a client sends back to keep it.
pub const REDACTED: &str = "********";

/// One plugin's settings form.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct SettingsDeclaration {
    /// The plugin's id, as in `PUT /api/plugin-settings/{plugin}`.
    pub plugin_id: String,
    pub title: String,
    pub description: String,
    pub fields: Vec<SettingField>,
}

/// One setting.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, utoipa::ToSchema)]
pub struct SettingField {
    /// The key of the value in `values`: an identifier (letters, digits, `_`; not starting
    /// with a digit).
    pub name: String,
    #[serde(rename = "type")]
    pub kind: SettingKind,
    pub title: String,
}

/// The kind of a setting's value. `secret` values are strings encrypted at rest and read back
/// redacted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum SettingKind {
    String,
    Text,
    Number,
    Boolean,
    Secret,
}

impl SettingKind {
    pub fn as_str(self) -> &'static str {
        match self {
            SettingKind::String => "string",
            SettingKind::Text => "text",
            SettingKind::Number => "number",
            SettingKind::Boolean => "boolean",
            SettingKind::Secret => "secret",
        }
    }

    /// Whether `value` (not null) is of this kind.
    fn admits(self, value: &Value) -> bool {
        match self {
            SettingKind::String | SettingKind::Text | SettingKind::Secret => value.is_string(),
            SettingKind::Number => value.is_number(),
            SettingKind::Boolean => value.is_boolean(),
        }
    }
}

impl SettingsDeclaration {
    /// The declared field called `name`.
    pub fn field(&self, name: &str) -> Option<&SettingField> {
        self.fields.iter().find(|f| f.name == name)
    }

    /// Checks the declaration itself: a plugin id that can stand in a URL path segment
    /// (letters, digits, `.`, `_`, `-`), field names that are identifiers, each once. The
    /// error names the plugin and the field at fault.
    pub fn check(&self) -> Result<(), String> {
        let id = &self.plugin_id;
        if id.is_empty() {
            return Err("a plugin settings declaration has an empty pluginId".into());
        }
        if !id
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'))
        {
            return Err(format!(
                "plugin settings `{id}`: pluginId may hold only letters, digits, `.`, `_` and `-`"
            ));
        }
        for (i, field) in self.fields.iter().enumerate() {
            if !is_identifier(&field.name) {
                return Err(format!(
                    "plugin settings `{id}`: field name `{}` is not an identifier (letters, digits and `_`, not starting with a digit)",
                    field.name
                ));
            }
            if self.fields[..i].iter().any(|f| f.name == field.name) {
                return Err(format!(
                    "plugin settings `{id}`: field `{}` is declared twice",
                    field.name
                ));
            }
        }
        Ok(())
    }

    /// Checks the `values` of a save against the declaration: an object whose keys are declared
    /// fields, each value of its field's kind or `null` (unset). Every problem is reported, with
    /// the field's name as its path.
    pub fn check_values(&self, values: &Value) -> Vec<Issue> {
        let Some(object) = values.as_object() else {
            return vec![Issue::new(
                "values",
                "type",
                "values must be an object of setting names to values",
            )];
        };
        let mut issues = Vec::new();
        for (name, value) in object {
            match self.field(name) {
                None => issues.push(Issue::new(
                    name.as_str(),
                    "unknown",
                    format!("`{name}` is not a setting of plugin `{}`", self.plugin_id),
                )),
                Some(field) if !value.is_null() && !field.kind.admits(value) => {
                    issues.push(Issue::new(
                        name.as_str(),
                        "type",
                        format!("expected a {} or null", field.kind.as_str()),
                    ));
                }
                Some(_) => {}
            }
        }
        issues
    }
}

fn is_identifier(name: &str) -> bool {
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn field(name: &str, kind: SettingKind) -> SettingField {
        SettingField {
            name: name.into(),
            kind,
            title: name.into(),
        }
    }

    fn webhooks() -> SettingsDeclaration {
        SettingsDeclaration {
            plugin_id: "webhooks".into(),
            title: "Webhooks".into(),
            description: "Posts events to a URL".into(),
            fields: vec![
                field("url", SettingKind::String),
                field("notes", SettingKind::Text),
                field("timeout", SettingKind::Number),
                field("enabled", SettingKind::Boolean),
                field("secret", SettingKind::Secret),
            ],
        }
    }

    #[test]
    fn a_declaration_serializes_as_the_contract_says() {
        let json = serde_json::to_value(webhooks()).unwrap();
        assert_eq!(json["pluginId"], "webhooks");
        assert_eq!(json["description"], "Posts events to a URL");
        assert_eq!(
            json["fields"][4],
            json!({"name": "secret", "type": "secret", "title": "secret"})
        );
        let kinds: Vec<&str> = json["fields"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| f["type"].as_str().unwrap())
            .collect();
        assert_eq!(kinds, ["string", "text", "number", "boolean", "secret"]);
    }

    #[test]
    fn declarations_are_checked() {
        assert_eq!(webhooks().check(), Ok(()));
        let with = |f: &dyn Fn(&mut SettingsDeclaration)| {
            let mut d = webhooks();
            f(&mut d);
            d.check().unwrap_err()
        };
        assert!(with(&|d| d.plugin_id.clear()).contains("empty pluginId"));
        assert!(with(&|d| d.plugin_id = "web hooks".into()).contains("pluginId"));
        assert!(with(&|d| d.plugin_id = "a/b".into()).contains("pluginId"));
        for bad in ["", "1url", "my-url", "a.b", "ü"] {
            let err = with(&|d| d.fields[0].name = bad.into());
            assert!(err.contains("not an identifier"), "{bad}: {err}");
            assert!(err.contains("webhooks"), "{err}");
        }
        let err = with(&|d| d.fields[1].name = "url".into());
        assert!(err.contains("`url` is declared twice"), "{err}");
        // No fields at all is a valid (if dull) declaration; `_x` and `A1` are identifiers.
        assert_eq!(with_fields(&["_x", "A1"]).check(), Ok(()));
    }

    fn with_fields(names: &[&str]) -> SettingsDeclaration {
        SettingsDeclaration {
            fields: names
                .iter()
                .map(|n| field(n, SettingKind::String))
                .collect(),
            ..webhooks()
        }
    }

    #[test]
    fn values_of_the_right_kind_or_null_pass() {
        let d = webhooks();
        let ok = json!({
            "url": "https://example.com/hook",
            "notes": "line one\nline two",
            "timeout": 2.5,
            "enabled": true,
            "secret": "s3cret",
        });
        assert!(d.check_values(&ok).is_empty());
        let unset = json!({"url": null, "timeout": null, "enabled": null, "secret": null});
        assert!(d.check_values(&unset).is_empty());
        assert!(d.check_values(&json!({})).is_empty());
        assert!(d.check_values(&json!({"secret": REDACTED})).is_empty());
    }

    #[test]
    fn wrong_kinds_and_unknown_keys_are_issues_at_their_field() {
        let d = webhooks();
        let issues = d.check_values(&json!({
            "url": 5,
            "notes": ["a"],
            "timeout": "10",
            "enabled": "yes",
            "secret": 123,
            "colour": "red",
        }));
        let found: Vec<(&str, &str)> = issues
            .iter()
            .map(|i| (i.path.as_str(), i.code.as_str()))
            .collect();
        for expected in [
            ("url", "type"),
            ("notes", "type"),
            ("timeout", "type"),
            ("enabled", "type"),
            ("secret", "type"),
            ("colour", "unknown"),
        ] {
            assert!(found.contains(&expected), "{expected:?} in {found:?}");
        }
        assert_eq!(issues.len(), 6);
        let timeout = issues.iter().find(|i| i.path == "timeout").unwrap();
        assert_eq!(timeout.message, "expected a number or null");
    }

    #[test]
    fn values_that_are_not_an_object_are_one_issue() {
        for bad in [json!([]), json!("x"), json!(null), json!(3)] {
            let issues = webhooks().check_values(&bad);
            assert_eq!(issues.len(), 1, "{bad}");
            assert_eq!(
                (issues[0].path.as_str(), issues[0].code.as_str()),
                ("values", "type")
            );
        }
    }
}
