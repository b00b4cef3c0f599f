//! Direct uploads (`storage.directUpload`, CONTRACT.md section 6): a presigned URL the client
//! puts the bytes to, then a confirm that records the asset from what was stored; and the
//! sweep of uploads left unconfirmed.

use std::time::Duration;

use cms_core::{CoreCapability, new_id};
use cms_store::assets::UploadRecord;

use super::staged::{digest_stored, storage_error, too_large};
use super::{
    AssetService, AssetView, DirectUpload, UPLOAD_URL_SECONDS, UploadMetadata, UploadTicket,
};
use crate::actor::Actor;
use crate::error::{Error, Result};

impl AssetService<'_> {
    /// Announces a direct upload: a URL the client PUTs the bytes to (presigned by the object
    /// storage), then [`AssetService::confirm`]. 404 when direct upload is off.
    pub async fn upload_url(&self, actor: &Actor, upload: DirectUpload) -> Result<UploadTicket> {
        self.require_direct_upload()?;
        let org = actor.require(CoreCapability::AssetUpload)?.to_string();
        if upload.filename.trim().is_empty() {
            return Err(Error::bad_request("`filename` is required"));
        }
        if upload.size < 1 {
            return Err(Error::bad_request("`size` is the file's size in bytes"));
        }
        if upload.size as u64 > self.settings().max_upload_bytes {
            return Err(too_large(self.settings().max_upload_bytes));
        }
        let id = new_id();
        let url = self
            .storage()
            .presigned_put(&id, Duration::from_secs(UPLOAD_URL_SECONDS as u64))
            .await
            .map_err(storage_error)?
            .ok_or_else(|| Error::NotFound("this storage has no direct upload".into()))?;
        let now = self.inner.clock.now();
        let expires_at = now.plus_millis(UPLOAD_URL_SECONDS * 1000);
        let mut tx = self.inner.store.write_for(&org).await?;
        tx.insert_upload(&UploadRecord {
            id: id.clone(),
            organization_id: org.clone(),
            filename: upload.filename,
            mime_type: upload.mime_type,
            size: upload.size,
            created_by: Some(actor.user.id.clone()),
            created_at: now.millis(),
            expires_at: expires_at.millis(),
        })
        .await?;
        tx.commit().await?;
        self.sweep_expired_uploads(&org).await;
        Ok(UploadTicket {
            upload_url: url,
            asset_id: id,
            expires_at,
        })
    }

    /// Removes a batch of the organization's direct uploads that expired unconfirmed: the
    /// object a client may have put, then the pending row. Runs as new uploads are announced,
    /// so abandoned uploads cannot pile up; failures are logged and retried next time.
    async fn sweep_expired_uploads(&self, org: &str) {
        const BATCH: i64 = 50;
        let now = self.inner.clock.now().millis();
        let expired = match self.inner.store.read_for(org).await {
            Ok(mut tx) => tx.expired_uploads(org, now, BATCH).await,
            Err(e) => Err(e),
        };
        let expired = match expired {
            Ok(expired) => expired,
            Err(e) => {
                tracing::warn!(organization = %org, error = %e, "could not list expired uploads");
                return;
            }
        };
        for upload in expired {
            if let Err(e) = self.storage().delete(&upload.id).await {
                tracing::warn!(upload = %upload.id, error = %e, "could not remove an expired upload");
                continue;
            }
            let removed = async {
                let mut tx = self.inner.store.write_for(org).await?;
                tx.delete_upload(org, &upload.id).await?;
                tx.commit().await
            };
            if let Err(e) = removed.await {
                tracing::warn!(upload = %upload.id, error = %e, "could not forget an expired upload");
            }
        }
    }

    /// Records a direct upload as an asset once its bytes are in storage. The type, size and
    /// hash come from the stored bytes, not from what the client announced.
    pub async fn confirm(&self, actor: &Actor, asset_id: &str) -> Result<AssetView> {
        self.require_direct_upload()?;
        let org = actor.require(CoreCapability::AssetUpload)?.to_string();
        let upload = self
            .inner
            .store
            .read_for(&org)
            .await?
            .upload(&org, asset_id)
            .await?
            .filter(|u| u.expires_at > self.inner.clock.now().millis())
            .ok_or_else(|| Error::not_found("pending upload"))?;
        // Read back outside any transaction: the object may be large and far away.
        let max = self.settings().max_upload_bytes;
        let file =
            match digest_stored(self.storage(), upload.id.clone(), &upload.filename, max).await {
                Ok(file) => file,
                Err(e @ Error::PayloadTooLarge(_)) => {
                    self.forget_upload(&org, &upload.id).await?;
                    return Err(e);
                }
                Err(e) => return Err(e),
            };
        let record = self
            .new_record(actor, &org, &file, UploadMetadata::default())
            .await?;
        let mut tx = self.inner.store.write_for(&org).await?;
        // Claiming the pending row makes a second confirm of the same upload a 404.
        if !tx.delete_upload(&org, &upload.id).await? {
            file.keep();
            return Err(Error::not_found("pending upload"));
        }
        self.commit_upload(tx, actor, record, file).await
    }

    /// 404 unless direct upload (`storage.directUpload`) is on.
    pub fn require_direct_upload(&self) -> Result<()> {
        if self.settings().direct_upload {
            Ok(())
        } else {
            Err(Error::NotFound(
                "direct upload is off (storage.directUpload)".into(),
            ))
        }
    }

    /// Drops a pending upload and its object.
    async fn forget_upload(&self, org: &str, id: &str) -> Result<()> {
        let mut tx = self.inner.store.write_for(org).await?;
        tx.delete_upload(org, id).await?;
        tx.commit().await?;
        self.remove_objects(&[id.to_string()]).await;
        Ok(())
    }
}
