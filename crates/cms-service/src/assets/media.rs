//! Delivery at `/media/{id}/{filename}`: who may fetch an asset's bytes (SPEC.md
//! Authentication point 10, CONTRACT.md sections 6 and 12). The door speaks HTTP (conditional
//! requests, ranges, headers); the decisions are here.

use std::ops::Range;

use cms_core::CoreCapability;
use cms_store::assets::AssetRecord;

use super::{AssetService, not_found, staged::storage_error};
use crate::actor::Actor;
use crate::error::{Error, Result};
use crate::storage::ByteStream;

/// A request for an asset's bytes.
#[derive(Debug, Clone, Copy)]
pub struct MediaRequest<'r> {
    pub id: &'r str,
    pub filename: &'r str,
    /// `sig` and `exp` of the query string, when present.
    pub sig: Option<&'r str>,
    pub exp: Option<&'r str>,
}

/// How a request was let in: it decides how the response may be cached.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MediaAccess {
    /// Anyone may fetch it: shared caches may keep it.
    Public,
    /// A session or a signature let this request in: only the browser may keep it.
    Private,
}

/// An asset the requester may fetch.
#[derive(Debug, Clone)]
pub struct MediaAsset {
    pub id: String,
    pub filename: String,
    pub mime_type: String,
    pub size: u64,
    pub sha256: String,
    pub access: MediaAccess,
}

impl AssetService<'_> {
    /// Decides whether the requester may fetch the asset. A `sig` or `exp` in the request is
    /// always verified (403 when it fails, also for public assets). Private assets
    /// (`assets.private`) need a valid signature or an actor who may read assets of the
    /// owning organization or of its parent.
    pub async fn media(
        &self,
        actor: Option<&Actor>,
        request: MediaRequest<'_>,
    ) -> Result<MediaAsset> {
        let signed = request.sig.is_some() || request.exp.is_some();
        if signed {
            let now = self.inner.clock.now().millis() / 1000;
            self.inner
                .media_signer
                .verify(request.id, request.filename, request.sig, request.exp, now)
                .map_err(|_| Error::Forbidden)?;
        }
        let private = self.settings().private;
        if private && !signed && actor.is_none() {
            return Err(Error::Unauthorized);
        }
        let record = self
            .inner
            .store
            .read_for_delivery()
            .await?
            .asset_for_delivery(request.id)
            .await?
            .filter(|a| a.filename == request.filename)
            .ok_or_else(not_found)?;
        if private && !signed {
            let actor = actor.ok_or(Error::Unauthorized)?;
            self.check_reader(actor, &record).await?;
        }
        Ok(MediaAsset {
            access: if private || signed {
                MediaAccess::Private
            } else {
                MediaAccess::Public
            },
            id: record.id,
            filename: record.filename,
            mime_type: record.mime_type,
            size: u64::try_from(record.size).unwrap_or(0),
            sha256: record.sha256,
        })
    }

    /// The bytes of an asset [`AssetService::media`] let through, or a range of them
    /// (already checked against the size), streamed from storage.
    pub async fn media_bytes(
        &self,
        asset: &MediaAsset,
        range: Option<Range<u64>>,
    ) -> Result<ByteStream> {
        self.storage()
            .read(&asset.id, range)
            .await
            .map_err(storage_error)
    }

    /// An actor may read a private asset of its organization, or of a child of it; anything
    /// else is 404, as for every read outside the actor's reach.
    async fn check_reader(&self, actor: &Actor, record: &AssetRecord) -> Result<()> {
        let org = actor.require(CoreCapability::AssetRead)?;
        if record.organization_id == org {
            return Ok(());
        }
        let children = self.organization_and_children(org).await?;
        if children.contains(&record.organization_id) {
            Ok(())
        } else {
            Err(not_found())
        }
    }
}
