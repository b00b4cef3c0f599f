//! `database.*`: the database the store opens, and the login migrations run as.

use serde::Deserialize;

use super::Config;

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct DatabaseConfig {
    /// `sqlite://PATH` or `postgres://...`; `sqlite://{dataDir}/cms.db` when unset.
    pub url: Option<String>,
    /// PostgreSQL: the login that owns the tables, for migrations and index creation, when
    /// `url`'s login is a separate one that must not (docs/CONFIGURATION.md). Unset: `url`.
    pub migration_url: Option<String>,
}

impl Config {
    pub fn database_url(&self) -> String {
        self.database
            .url
            .clone()
            .unwrap_or_else(|| format!("sqlite://{}", self.data_dir.join("cms.db").display()))
    }

    /// The login migrations and index creation run as, when it is not `database.url`'s.
    pub fn database_migration_url(&self) -> Option<String> {
        self.database
            .migration_url
            .clone()
            .filter(|url| !url.is_empty())
    }
}
