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
mod tests;
