//! `schemas.*` and `versioning.*`: where the document types come from, and how many versions
//! of a document are kept.

use serde::Deserialize;

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct SchemasConfig {
    /// JSON files, each one schema or an array of schemas; `*` matches within a file name
    /// (`schemas/*.json`). None configured: the demo schemas.
    pub paths: Vec<String>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct VersioningConfig {
    /// Versions kept per document; 0 keeps all.
    pub max_versions: i64,
}

impl Default for VersioningConfig {
    fn default() -> Self {
        VersioningConfig { max_versions: 25 }
    }
}
