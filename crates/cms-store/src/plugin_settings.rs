//! Plugin settings: one JSON object of values per organization and plugin. Secret values arrive
//! here already sealed by the service layer; this module stores what it is given.
//!
//! The table is behind the row-level-security wall on PostgreSQL: use a unit that acts for the
//! organization (`Store::read_for` / `write_for`).

use async_trait::async_trait;
use sqlx::types::Json;

use crate::Result;

#[derive(Debug, Clone, PartialEq, sqlx::FromRow)]
pub struct PluginSettingsRecord {
    pub organization_id: String,
    pub plugin_id: String,
    /// The saved values: an object of field names to values (secrets as ciphertext strings).
    pub values: Json<serde_json::Value>,
    pub updated_at: i64,
    /// The user who saved them last.
    pub updated_by: Option<String>,
}

#[async_trait]
pub trait PluginSettings {
    /// Every plugin's saved settings in the organization, by plugin id.
    async fn plugin_settings_of(
        &mut self,
        organization_id: &str,
    ) -> Result<Vec<PluginSettingsRecord>>;
    /// One plugin's saved settings; `None` before the first save.
    async fn plugin_settings(
        &mut self,
        organization_id: &str,
        plugin_id: &str,
    ) -> Result<Option<PluginSettingsRecord>>;
    /// Inserts or replaces one plugin's settings in the organization.
    async fn save_plugin_settings(&mut self, record: &PluginSettingsRecord) -> Result<()>;
    /// One plugin's saved settings in each of these organizations that has some, in one query
    /// (the relay's batch; an instance-wide unit on PostgreSQL).
    async fn plugin_settings_in(
        &mut self,
        organization_ids: &[String],
        plugin_id: &str,
    ) -> Result<Vec<PluginSettingsRecord>>;
}

macro_rules! impl_plugin_settings {
    ($tx:ty) => {
        #[async_trait::async_trait]
        impl $crate::plugin_settings::PluginSettings for $tx {
            async fn plugin_settings_of(
                &mut self,
                organization_id: &str,
            ) -> $crate::Result<Vec<$crate::plugin_settings::PluginSettingsRecord>> {
                Ok(sqlx::query_as(
                    "SELECT organization_id, plugin_id, \"values\", updated_at, updated_by \
                     FROM plugin_settings WHERE organization_id = $1 ORDER BY plugin_id",
                )
                .bind(organization_id)
                .fetch_all(self.conn().await?)
                .await?)
            }

            async fn plugin_settings(
                &mut self,
                organization_id: &str,
                plugin_id: &str,
            ) -> $crate::Result<Option<$crate::plugin_settings::PluginSettingsRecord>> {
                Ok(sqlx::query_as(
                    "SELECT organization_id, plugin_id, \"values\", updated_at, updated_by \
                     FROM plugin_settings WHERE organization_id = $1 AND plugin_id = $2",
                )
                .bind(organization_id)
                .bind(plugin_id)
                .fetch_optional(self.conn().await?)
                .await?)
            }

            async fn save_plugin_settings(
                &mut self,
                r: &$crate::plugin_settings::PluginSettingsRecord,
            ) -> $crate::Result<()> {
                sqlx::query(
                    "INSERT INTO plugin_settings (organization_id, plugin_id, \"values\", updated_at, updated_by) \
                     VALUES ($1, $2, $3, $4, $5) \
                     ON CONFLICT (organization_id, plugin_id) DO UPDATE SET \"values\" = excluded.\"values\", \
                     updated_at = excluded.updated_at, updated_by = excluded.updated_by",
                )
                .bind(&r.organization_id)
                .bind(&r.plugin_id)
                .bind(&r.values)
                .bind(r.updated_at)
                .bind(&r.updated_by)
                .execute(self.conn().await?)
                .await?;
                Ok(())
            }

            async fn plugin_settings_in(
                &mut self,
                organization_ids: &[String],
                plugin_id: &str,
            ) -> $crate::Result<Vec<$crate::plugin_settings::PluginSettingsRecord>> {
                let mut found = Vec::new();
                for chunk in organization_ids.chunks(500) {
                    let mut sql = sqlx::QueryBuilder::new(
                        "SELECT organization_id, plugin_id, \"values\", updated_at, updated_by \
                         FROM plugin_settings WHERE plugin_id = ",
                    );
                    sql.push_bind(plugin_id.to_string()).push(" AND organization_id IN (");
                    let mut list = sql.separated(", ");
                    for id in chunk {
                        list.push_bind(id.clone());
                    }
                    sql.push(")");
                    let rows: Vec<$crate::plugin_settings::PluginSettingsRecord> =
                        sql.build_query_as().fetch_all(self.conn().await?).await?;
                    found.extend(rows);
                }
                Ok(found)
            }
        }
    };
}
pub(crate) use impl_plugin_settings;
