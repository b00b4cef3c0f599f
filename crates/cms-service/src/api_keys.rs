//! API keys: created once, shown once, stored only as an HMAC under the auth secret.

use cms_core::{CoreCapability, Issues, KeyPermission, KeyScope, Timestamp, new_id};
use cms_store::Json;
use cms_store::api_keys::ApiKeyRecord;
use serde::Serialize;

use crate::Inner;
use crate::actor::Actor;
use crate::audit::{self, AuditAction, AuditTarget};
use crate::auth::AuthService;
use crate::error::{Error, Result};
use crate::secret::{Purpose, random_token};

pub use cms_core::api_key::KEY_PREFIX;
/// Bounds for `expiresInDays`.
const MAX_EXPIRY_DAYS: i64 = 3650;

/// A key creation request as received.
#[derive(Debug, Default)]
pub struct NewApiKey {
    pub name: Option<String>,
    pub permissions: Option<Vec<String>>,
    pub capabilities: Option<Vec<String>>,
    pub expires_in_days: Option<i64>,
}

/// A key as listed: never the secret.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ApiKey {
    pub id: String,
    pub name: String,
    /// The first characters of the key, to tell keys apart.
    pub start: String,
    pub organization_id: String,
    pub permissions: Vec<KeyPermission>,
    /// The allowlist that alone decides, or `null` when the key has only `permissions`.
    pub capabilities: Option<Vec<String>>,
    pub created_by: String,
    pub created_at: Timestamp,
    /// `null` for a key that does not expire.
    pub expires_at: Option<Timestamp>,
}

/// A new key, with its secret: the only time the secret is ever shown.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
pub struct CreatedApiKey {
    #[serde(flatten)]
    pub api_key: ApiKey,
    /// The secret (`cms_...`), shown this once.
    pub key: String,
}

pub struct ApiKeyService<'a> {
    inner: &'a Inner,
}

impl<'a> ApiKeyService<'a> {
    pub(crate) fn new(inner: &'a Inner) -> Self {
        ApiKeyService { inner }
    }

    /// Creates a key bound to the actor's active organization (needs `apiKey.manage`).
    pub async fn create(&self, actor: &Actor, input: NewApiKey) -> Result<CreatedApiKey> {
        actor.require_person()?;
        let organization_id = actor.require(CoreCapability::ApiKeyManage)?.to_string();
        let (name, scope, expires_in_days) = self.validate(actor, input)?;
        let now = self.inner.clock.now();
        let key = format!("{KEY_PREFIX}{}", random_token(32));
        let record = ApiKeyRecord {
            id: new_id(),
            organization_id,
            name,
            key_hash: self.inner.secret.hash_hex(Purpose::ApiKey, &key),
            start: key.chars().take(KEY_PREFIX.len() + 6).collect(),
            permissions: Json(
                scope
                    .permissions()
                    .iter()
                    .map(|p| p.as_str().to_string())
                    .collect(),
            ),
            capabilities: scope.capability_list().map(|caps| Json(caps.to_strings())),
            created_by: actor.user.id.clone(),
            created_at: now.millis(),
            expires_at: expires_in_days.map(|days| now.plus_days(days).millis()),
        };
        let mut tx = self.inner.store.write_instance_wide().await?;
        // A key acts with its creator's role in its organization, never the instance role
        // (CONTRACT.md section 13): an instance administrator who only entered the organization
        // would make a key that could never work.
        if tx
            .member(&record.organization_id, &actor.user.id)
            .await?
            .is_none()
        {
            return Err(Error::NotPermitted(
                "an API key acts with its creator's role in its organization, and you have none in this one: join it first".into(),
            ));
        }
        tx.insert_api_key(&record).await?;
        tx.append_audit(&[audit::entry(
            actor,
            Some(&record.organization_id),
            AuditAction::ApiKeyCreated,
            Some(AuditTarget::new("apiKey", &record.id)),
            format!("{} ({})", record.name, record.permissions.0.join(", ")),
            now.millis(),
        )])
        .await?;
        tx.commit().await?;
        Ok(CreatedApiKey {
            api_key: self.view(record),
            key,
        })
    }

    /// The keys of the actor's active organization, newest first (needs `apiKey.manage`).
    pub async fn list(&self, actor: &Actor) -> Result<Vec<ApiKey>> {
        actor.require_person()?;
        let organization_id = actor.require(CoreCapability::ApiKeyManage)?;
        let mut tx = self.inner.store.read_instance_wide().await?;
        let records = tx.api_keys(organization_id).await?;
        Ok(records.into_iter().map(|r| self.view(r)).collect())
    }

    /// Deletes a key of the actor's active organization; it stops working on the next request.
    pub async fn delete(&self, actor: &Actor, id: &str) -> Result<()> {
        actor.require_person()?;
        let organization_id = actor.require(CoreCapability::ApiKeyManage)?;
        let mut tx = self.inner.store.write_instance_wide().await?;
        if !tx.delete_api_key(organization_id, id).await? {
            return Err(Error::not_found("API key"));
        }
        tx.append_audit(&[audit::entry(
            actor,
            Some(organization_id),
            AuditAction::ApiKeyDeleted,
            Some(AuditTarget::new("apiKey", id)),
            "deleted",
            self.inner.clock.now().millis(),
        )])
        .await?;
        tx.commit().await?;
        Ok(())
    }

    fn validate(&self, actor: &Actor, input: NewApiKey) -> Result<(String, KeyScope, Option<i64>)> {
        let mut issues = Issues::new();
        let name = input
            .name
            .as_deref()
            .map(str::trim)
            .unwrap_or_default()
            .to_string();
        if name.is_empty() {
            issues.add("name", "required", "name is required");
        } else if name.chars().count() > 100 {
            issues.add("name", "maxLength", "name is at most 100 characters");
        } else if name.chars().any(char::is_control) {
            issues.add("name", "invalid", "name may not contain control characters");
        }
        let mut permissions = Vec::new();
        for (i, p) in input.permissions.unwrap_or_default().iter().enumerate() {
            match KeyPermission::parse(p) {
                Some(p) => permissions.push(p),
                None => issues.add(
                    &format!("permissions[{i}]"),
                    "options",
                    "a permission is `read` or `write`",
                ),
            }
        }
        let capabilities = input.capabilities.map(|caps| {
            let mut set = cms_core::CapabilitySet::empty();
            for (i, raw) in caps.iter().enumerate() {
                let path = format!("capabilities[{i}]");
                match self.inner.capabilities.parse(raw) {
                    None => issues.add(
                        &path,
                        "options",
                        format!("`{raw}` is not a declared capability"),
                    ),
                    // A key can never do more than its creator, so asking for more is a mistake.
                    Some(cap) if !actor.grant.capabilities.contains(&cap) => {
                        issues.add(&path, "notHeld", format!("you do not hold `{raw}`"))
                    }
                    Some(cap) => set.insert(cap),
                }
            }
            set
        });
        if let Some(days) = input.expires_in_days
            && !(1..=MAX_EXPIRY_DAYS).contains(&days)
        {
            issues.add(
                "expiresInDays",
                "range",
                format!("expiresInDays is 1 to {MAX_EXPIRY_DAYS}"),
            );
        }
        issues.finish(()).map_err(Error::invalid)?;
        let scope = KeyScope::new(permissions, capabilities)
            .ok_or_else(|| Error::bad_request("a key needs `permissions` or `capabilities`"))?;
        Ok((name, scope, input.expires_in_days))
    }

    fn view(&self, record: ApiKeyRecord) -> ApiKey {
        let scope = AuthService::new(self.inner).key_scope(
            &record.permissions.0,
            record.capabilities.as_ref().map(|c| c.0.as_slice()),
        );
        ApiKey {
            permissions: scope.permissions().to_vec(),
            capabilities: record.capabilities.map(|c| c.0),
            id: record.id,
            name: record.name,
            start: record.start,
            organization_id: record.organization_id,
            created_by: record.created_by,
            created_at: record.created_at.into(),
            expires_at: record.expires_at.map(Into::into),
        }
    }
}
