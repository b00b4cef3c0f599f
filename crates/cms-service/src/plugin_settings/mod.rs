//! Plugin settings (SPEC.md "Plugin settings", "Endpoints: Plugin settings"; CONTRACT.md
//! section 9): each declared plugin's values per organization, for people with `org.settings`
//! in a session (API keys are refused, Authentication point 6), and decrypted for the plugin's
//! own code through [`PluginSettingsService::values_for`].
//!
//! A save replaces the plugin's values: a field left out becomes unset, except that a secret
//! sent back as `"********"` keeps the stored one. Secrets are sealed before they reach the
//! store ([`crate::secret_box`]); without CMS_SECRET_ENCRYPTION_KEY a new secret is refused (422) and
//! nothing is stored. Reads show a set secret as `"********"`.

use cms_core::CoreCapability;
use cms_core::plugin_settings::{REDACTED, SettingField, SettingKind, SettingsDeclaration};
use cms_store::Json;
use cms_store::plugin_settings::PluginSettingsRecord;
use serde::Serialize;
use serde_json::{Map, Value};

use crate::Inner;
use crate::actor::Actor;
use crate::audit::{self, AuditAction, AuditTarget};
use crate::error::{Error, Result};
use crate::secret_box::SecretSlot;

/// One plugin's settings as the endpoints show them: the declaration and the active
/// organization's values, every declared field present (`null` when unset), set secrets as
/// `"********"`.
#[derive(Debug, Clone, PartialEq, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct PluginSettingsView {
    pub plugin_id: String,
    pub title: String,
    pub description: String,
    pub fields: Vec<SettingField>,
    /// Field names to values; `null` for an unset field, `"********"` for a set secret.
    #[schema(value_type = Object)]
    pub values: Map<String, Value>,
}

/// Checks the declarations a service starts with: each one valid, each plugin once.
pub(crate) fn check_declarations(declarations: &[SettingsDeclaration]) -> Result<()> {
    for (i, declaration) in declarations.iter().enumerate() {
        declaration.check().map_err(Error::bad_request)?;
        if declarations[..i]
            .iter()
            .any(|d| d.plugin_id == declaration.plugin_id)
        {
            return Err(Error::bad_request(format!(
                "plugin settings for `{}` are declared twice",
                declaration.plugin_id
            )));
        }
    }
    Ok(())
}

pub struct PluginSettingsService<'a> {
    inner: &'a Inner,
}

impl<'a> PluginSettingsService<'a> {
    pub(crate) fn new(inner: &'a Inner) -> Self {
        PluginSettingsService { inner }
    }

    /// The declared plugins' settings in the actor's active organization, in declaration order.
    pub async fn list(&self, actor: &Actor) -> Result<Vec<PluginSettingsView>> {
        let org = settings_org(actor)?;
        let mut tx = self.inner.store.read_for(org).await?;
        let stored = tx.plugin_settings_of(org).await?;
        drop(tx);
        Ok(self
            .inner
            .plugin_settings
            .iter()
            .map(|declaration| {
                let saved = stored
                    .iter()
                    .find(|r| r.plugin_id == declaration.plugin_id)
                    .map(|r| &r.values.0);
                view(declaration, saved)
            })
            .collect())
    }

    /// Replaces one plugin's values in the actor's active organization and returns them as
    /// [`PluginSettingsService::list`] shows them.
    pub async fn save(
        &self,
        actor: &Actor,
        plugin_id: &str,
        values: Value,
    ) -> Result<PluginSettingsView> {
        let org = settings_org(actor)?;
        let declaration = self.declaration(plugin_id)?;
        let issues = declaration.check_values(&values);
        if !issues.is_empty() {
            return Err(Error::invalid(issues));
        }
        let incoming = values.as_object().cloned().unwrap_or_default();
        // Refused before anything is opened, so nothing of the save is stored.
        let secret_box = self.inner.secret_box.as_ref();
        if secret_box.is_none()
            && let Some(field) = declaration
                .fields
                .iter()
                .filter(|f| f.kind == SettingKind::Secret)
                .find(|f| incoming.get(&f.name).is_some_and(is_new_secret))
        {
            return Err(Error::Unprocessable(format!(
                "`{}` is a secret, and secrets are stored only encrypted: configure CMS_SECRET_ENCRYPTION_KEY (plugins.secretEncryptionKey) to save one",
                field.name
            )));
        }
        let mut tx = self.inner.store.write_for(org).await?;
        let previous = tx.plugin_settings(org, plugin_id).await?;
        let previous = previous.as_ref().and_then(|r| r.values.0.as_object());
        let mut stored = Map::new();
        for field in &declaration.fields {
            let value = match incoming.get(&field.name) {
                None | Some(Value::Null) => continue,
                Some(Value::String(s)) if field.kind == SettingKind::Secret && s == REDACTED => {
                    match previous.and_then(|p| p.get(&field.name)) {
                        Some(kept) if !kept.is_null() => kept.clone(),
                        _ => continue,
                    }
                }
                Some(Value::String(plain)) if field.kind == SettingKind::Secret => {
                    let secret_box = secret_box.ok_or_else(|| {
                        Error::Internal("a secret reached the store without a key".into())
                    })?;
                    let slot = SecretSlot::PluginSetting {
                        organization_id: org,
                        plugin_id,
                        field: &field.name,
                    };
                    Value::String(secret_box.seal(plain, slot).map_err(Error::Internal)?)
                }
                Some(value) => value.clone(),
            };
            stored.insert(field.name.clone(), value);
        }
        let record = PluginSettingsRecord {
            organization_id: org.to_string(),
            plugin_id: plugin_id.to_string(),
            values: Json(Value::Object(stored)),
            updated_at: self.inner.clock.now().millis(),
            updated_by: Some(actor.user.id.clone()),
        };
        tx.save_plugin_settings(&record).await?;
        // The field names, never their values: a setting may be a secret.
        let fields: Vec<&str> = incoming.keys().map(String::as_str).collect();
        tx.append_audit(&[audit::entry(
            actor,
            Some(org),
            AuditAction::PluginSettingsUpdated,
            Some(AuditTarget::new("plugin", plugin_id)),
            format!("{plugin_id}: {}", fields.join(", ")),
            record.updated_at,
        )])
        .await?;
        tx.commit().await?;
        Ok(view(declaration, Some(&record.values.0)))
    }

    /// A plugin's values in an organization for the plugin's own code (event consumers, job
    /// handlers): every declared field present (`null` when unset), secrets decrypted. Below
    /// every access rule: never hand the result to a door. A secret that does not decrypt
    /// (no key configured, or another key than it was saved under) is an error, never
    /// garbage.
    pub async fn values_for(&self, organization_id: &str, plugin_id: &str) -> Result<Value> {
        let declaration = self.declaration(plugin_id)?;
        let mut tx = self.inner.store.read_for(organization_id).await?;
        let record = tx.plugin_settings(organization_id, plugin_id).await?;
        drop(tx);
        let saved = record.as_ref().and_then(|r| r.values.0.as_object());
        let mut values = Map::new();
        for field in &declaration.fields {
            let value = match saved.and_then(|s| s.get(&field.name)) {
                None | Some(Value::Null) => Value::Null,
                Some(Value::String(sealed)) if field.kind == SettingKind::Secret => {
                    let Some(secret_box) = self.inner.secret_box.as_ref() else {
                        return Err(Error::Internal(format!(
                            "secret `{}` of plugin `{plugin_id}` cannot be decrypted: CMS_SECRET_ENCRYPTION_KEY is not configured",
                            field.name
                        )));
                    };
                    let slot = SecretSlot::PluginSetting {
                        organization_id,
                        plugin_id,
                        field: &field.name,
                    };
                    Value::String(secret_box.open(sealed, slot).map_err(Error::Internal)?)
                }
                Some(value) => value.clone(),
            };
            values.insert(field.name.clone(), value);
        }
        Ok(Value::Object(values))
    }

    /// Whether `plugin_id` declared settings.
    pub fn is_declared(&self, plugin_id: &str) -> bool {
        self.declaration(plugin_id).is_ok()
    }

    fn declaration(&self, plugin_id: &str) -> Result<&'a SettingsDeclaration> {
        self.inner
            .plugin_settings
            .iter()
            .find(|d| d.plugin_id == plugin_id)
            .ok_or_else(|| Error::NotFound(format!("plugin `{plugin_id}` declares no settings")))
    }
}

/// The active organization of a session holding `org.settings` there. API keys are refused
/// whatever they hold (Authentication point 6), as on the role endpoints.
fn settings_org(actor: &Actor) -> Result<&str> {
    if actor.is_api_key() {
        return Err(Error::Forbidden);
    }
    actor.require(CoreCapability::OrgSettings)
}

/// A secret value that would have to be sealed: a string other than the redaction marker.
fn is_new_secret(value: &Value) -> bool {
    value.as_str().is_some_and(|s| s != REDACTED)
}

/// The declaration with `saved` values, every field present, set secrets redacted.
fn view(declaration: &SettingsDeclaration, saved: Option<&Value>) -> PluginSettingsView {
    let saved = saved.and_then(Value::as_object);
    let values = declaration
        .fields
        .iter()
        .map(|field| {
            let value = match saved.and_then(|s| s.get(&field.name)) {
                None | Some(Value::Null) => Value::Null,
                Some(_) if field.kind == SettingKind::Secret => Value::String(REDACTED.into()),
                Some(value) => value.clone(),
            };
            (field.name.clone(), value)
        })
        .collect();
    PluginSettingsView {
        plugin_id: declaration.plugin_id.clone(),
        title: declaration.title.clone(),
        description: declaration.description.clone(),
        fields: declaration.fields.clone(),
        values,
    }
}
