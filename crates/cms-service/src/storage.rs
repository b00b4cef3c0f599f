//! Asset storage: where uploaded bytes live. Local disk by default.

use std::path::PathBuf;

use async_trait::async_trait;

/// A place that holds asset bytes.
#[async_trait]
pub trait BlobStore: Send + Sync + 'static {
    /// A short name for logs and health reports (`local`, `s3`).
    fn kind(&self) -> &'static str;

    /// Proves the storage can be reached and used; the error says why not.
    async fn health(&self) -> Result<(), String>;
}

/// Assets as files under a directory.
pub struct LocalStorage {
    root: PathBuf,
}

impl LocalStorage {
    /// Uses `root`, creating it when missing.
    pub fn open(root: impl Into<PathBuf>) -> std::io::Result<LocalStorage> {
        let root = root.into();
        std::fs::create_dir_all(&root)?;
        Ok(LocalStorage { root })
    }
}

#[async_trait]
impl BlobStore for LocalStorage {
    fn kind(&self) -> &'static str {
        "local"
    }

    async fn health(&self) -> Result<(), String> {
        // Writing a probe, not just reading metadata: a full or read-only disk must show here.
        // Each check has its own file, so concurrent checks never remove each other's probe.
        let probe = self
            .root
            .join(format!(".health-probe-{}", cms_core::new_id()));
        tokio::fs::write(&probe, b"ok")
            .await
            .map_err(|e| format!("cannot write to storage: {e}"))?;
        tokio::fs::remove_file(&probe)
            .await
            .map_err(|e| format!("cannot clean up storage: {e}"))
    }
}
