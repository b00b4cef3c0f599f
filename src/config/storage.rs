//! `storage.*` and `assets.*`: where asset files are kept (local disk or S3), and how uploads
//! and `/media` delivery behave.

use std::path::PathBuf;

use serde::Deserialize;

use super::{Config, ConfigError};

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct StorageConfig {
    /// `local` (default) or `s3`.
    pub kind: String,
    /// Local asset directory; `{dataDir}/media` when unset.
    pub path: Option<PathBuf>,
    /// S3: the bucket (required with `kind = "s3"`).
    pub bucket: Option<String>,
    /// S3: an S3-compatible server (`http://127.0.0.1:9000`); unset for AWS.
    pub endpoint: Option<String>,
    /// S3: the region (`us-east-1` by default).
    pub region: String,
    /// S3: credentials; unset, the usual `AWS_*` environment variables or the instance role.
    pub access_key_id: Option<String>,
    pub secret_access_key: Option<String>,
    /// S3: bucket in the path rather than the host name (MinIO and most compatible servers).
    pub force_path_style: bool,
    /// Clients may upload straight to storage (upload-url/confirm); needs `kind = "s3"`.
    pub direct_upload: bool,
}

impl Default for StorageConfig {
    fn default() -> Self {
        StorageConfig {
            kind: "local".into(),
            path: None,
            bucket: None,
            endpoint: None,
            region: "us-east-1".into(),
            access_key_id: None,
            secret_access_key: None,
            force_path_style: false,
            direct_upload: false,
        }
    }
}

/// Uploads and delivery (CONTRACT.md section 6).
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct AssetsConfig {
    /// Larger uploads are refused with 413.
    pub max_upload_bytes: u64,
    /// /media needs a session or a signed link.
    pub private: bool,
    /// Signs /media links (CMS_ASSET_SIGNING_SECRET); unset, no signature verifies.
    pub signing_secret: Option<String>,
    /// `/media` transform parameters need a signed link (CONTRACT.md section 18), so nobody
    /// outside can have the server render arbitrary sizes.
    pub transform_signing: bool,
}

impl Default for AssetsConfig {
    fn default() -> Self {
        AssetsConfig {
            max_upload_bytes: 50 * 1024 * 1024,
            private: false,
            signing_secret: None,
            transform_signing: false,
        }
    }
}

impl Config {
    pub(super) fn check_storage(&self) -> Result<(), ConfigError> {
        let storage = &self.storage;
        match storage.kind.as_str() {
            "local" => {
                if storage.direct_upload {
                    return Err(ConfigError(
                        "storage.directUpload = true needs storage.kind = \"s3\": local disk has no presigned uploads".into(),
                    ));
                }
                Ok(())
            }
            "s3" => {
                if storage
                    .bucket
                    .as_deref()
                    .is_none_or(|b| b.trim().is_empty())
                {
                    return Err(ConfigError(
                        "storage.kind = \"s3\" needs storage.bucket".into(),
                    ));
                }
                if let Some(endpoint) = storage.endpoint.as_deref().filter(|e| !e.is_empty())
                    && !(endpoint.starts_with("http://") || endpoint.starts_with("https://"))
                {
                    return Err(ConfigError(format!(
                        "storage.endpoint `{endpoint}` must start with http:// or https://"
                    )));
                }
                if storage.region.trim().is_empty() {
                    return Err(ConfigError("storage.region must not be empty".into()));
                }
                let given = |v: &Option<String>| v.as_deref().is_some_and(|v| !v.is_empty());
                if given(&storage.access_key_id) != given(&storage.secret_access_key) {
                    return Err(ConfigError(
                        "storage.accessKeyId and storage.secretAccessKey go together: set both or neither".into(),
                    ));
                }
                Ok(())
            }
            other => Err(ConfigError(format!(
                "storage.kind = \"{other}\" is not known: use \"local\" or \"s3\""
            ))),
        }
    }

    /// Where the S3 bucket is, from `storage.*` (meaningful with `storage.kind = "s3"`).
    pub fn s3_settings(&self) -> cms_service::S3Settings {
        let storage = &self.storage;
        let set = |v: &Option<String>| v.clone().filter(|v| !v.is_empty());
        cms_service::S3Settings {
            bucket: storage.bucket.clone().unwrap_or_default(),
            endpoint: set(&storage.endpoint),
            region: storage.region.clone(),
            access_key_id: set(&storage.access_key_id),
            secret_access_key: set(&storage.secret_access_key),
            force_path_style: storage.force_path_style,
        }
    }

    pub fn storage_path(&self) -> PathBuf {
        self.storage
            .path
            .clone()
            .unwrap_or_else(|| self.data_dir.join("media"))
    }
}
