//! Bytes on their way in: streamed into storage chunk by chunk (never held whole in memory),
//! counted against the upload limit, hashed and sniffed as they pass.

use std::sync::Arc;

use bytes::Bytes;
use cms_core::asset::{SNIFF_BYTES, Sniffed, default_title, safe_filename, sniff};
use futures_util::{Stream, StreamExt};
use sha2::{Digest, Sha256};

use crate::error::{Error, Result};
use crate::storage::{BlobStore, StorageError};

/// A file stored under a fresh asset id but not yet recorded. Dropped without
/// [`StagedFile::keep`], its object is removed: a refused or failed upload leaves nothing behind.
pub struct StagedFile {
    pub(crate) id: String,
    pub(crate) filename: String,
    /// The client's name, readable, for the default title.
    pub(crate) title: Option<String>,
    pub(crate) size: i64,
    pub(crate) sha256: String,
    pub(crate) sniffed: Sniffed,
    storage: Option<Arc<dyn BlobStore>>,
}

impl std::fmt::Debug for StagedFile {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StagedFile")
            .field("id", &self.id)
            .field("filename", &self.filename)
            .field("size", &self.size)
            .finish()
    }
}

impl StagedFile {
    /// The object now belongs to a recorded asset.
    pub(crate) fn keep(mut self) {
        self.storage = None;
    }
}

impl Drop for StagedFile {
    fn drop(&mut self) {
        if let Some(storage) = self.storage.take() {
            let id = std::mem::take(&mut self.id);
            // Drop cannot wait; outside a runtime there is nothing to clean up with.
            if let Ok(runtime) = tokio::runtime::Handle::try_current() {
                runtime.spawn(async move {
                    if let Err(e) = storage.delete(&id).await {
                        tracing::warn!(asset = %id, error = %e, "could not remove the object of a refused upload");
                    }
                });
            }
        }
    }
}

/// What passing bytes tell about a file.
struct Digestion {
    size: u64,
    hash: Sha256,
    head: Vec<u8>,
}

impl Digestion {
    fn new() -> Digestion {
        Digestion {
            size: 0,
            hash: Sha256::new(),
            head: Vec::new(),
        }
    }

    fn take(&mut self, chunk: &[u8]) {
        self.size += chunk.len() as u64;
        self.hash.update(chunk);
        if self.head.len() < SNIFF_BYTES {
            let room = SNIFF_BYTES - self.head.len();
            self.head.extend_from_slice(&chunk[..chunk.len().min(room)]);
        }
    }

    /// The stored object, named for its client and described by the bytes that passed.
    fn into_staged(
        self,
        id: String,
        client_filename: &str,
        storage: &Arc<dyn BlobStore>,
    ) -> StagedFile {
        StagedFile {
            id,
            filename: safe_filename(client_filename),
            title: default_title(client_filename),
            size: self.size as i64,
            sha256: cms_core::hex::encode(&self.hash.finalize()),
            sniffed: sniff(&self.head),
            storage: Some(storage.clone()),
        }
    }
}

/// Streams `body` into `storage` under `id`. Past `max_bytes` the object is abandoned and the
/// answer is 413; an empty file is 400.
pub(crate) async fn stage(
    storage: &Arc<dyn BlobStore>,
    id: String,
    client_filename: &str,
    body: impl Stream<Item = Result<Bytes>> + Send,
    max_bytes: u64,
) -> Result<StagedFile> {
    let mut writer = storage.writer(&id).await.map_err(storage_error)?;
    let mut digestion = Digestion::new();
    let mut body = std::pin::pin!(body);
    while let Some(chunk) = body.next().await {
        let chunk = match chunk {
            Ok(chunk) => chunk,
            Err(e) => {
                writer.abort().await;
                return Err(e);
            }
        };
        digestion.take(&chunk);
        if digestion.size > max_bytes {
            writer.abort().await;
            return Err(too_large(max_bytes));
        }
        if let Err(e) = writer.write(chunk).await {
            writer.abort().await;
            return Err(storage_error(e));
        }
    }
    if digestion.size == 0 {
        writer.abort().await;
        return Err(Error::bad_request("the file is empty"));
    }
    writer.finish().await.map_err(storage_error)?;
    Ok(digestion.into_staged(id, client_filename, storage))
}

/// Reads back an object a client uploaded directly, to learn what it is. Past `max_bytes` it is
/// 413 (the caller removes the object).
pub(crate) async fn digest_stored(
    storage: &Arc<dyn BlobStore>,
    id: String,
    client_filename: &str,
    max_bytes: u64,
) -> Result<StagedFile> {
    let size = storage
        .size(&id)
        .await
        .map_err(storage_error)?
        .ok_or_else(|| Error::bad_request("nothing has been uploaded to the upload URL yet"))?;
    if size > max_bytes {
        return Err(too_large(max_bytes));
    }
    if size == 0 {
        return Err(Error::bad_request("the file is empty"));
    }
    let mut stream = storage.read(&id, None).await.map_err(storage_error)?;
    let mut digestion = Digestion::new();
    while let Some(chunk) = stream.next().await {
        digestion.take(&chunk.map_err(storage_error)?);
    }
    Ok(digestion.into_staged(id, client_filename, storage))
}

pub(crate) fn too_large(max_bytes: u64) -> Error {
    Error::PayloadTooLarge(format!(
        "the file is larger than the upload limit of {max_bytes} bytes"
    ))
}

pub(crate) fn storage_error(e: StorageError) -> Error {
    match e {
        StorageError::NotFound => Error::not_found("file"),
        StorageError::Other(detail) => {
            tracing::error!(error = %detail, "asset storage failed");
            Error::Unavailable("the asset storage is unavailable: try again later".into())
        }
    }
}
