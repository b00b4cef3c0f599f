//! Delivery at `/media/{id}/{filename}`: who may fetch an asset's bytes (SPEC.md
//! Authentication point 10, CONTRACT.md sections 6 and 12). The door speaks HTTP (conditional
//! requests, ranges, headers); the decisions are here.

use std::ops::Range;

use cms_core::CoreCapability;
use cms_core::asset::transform::{FocalPoint, TransformRequest};
use cms_store::assets::AssetRecord;

use super::{AssetService, TransformPlan, not_found, staged::storage_error};
use crate::actor::Actor;
use crate::error::{Error, Result};
use crate::storage::ByteStream;

/// A request for an asset's bytes.
#[derive(Debug, Clone, Copy)]
pub struct MediaRequest<'r> {
    pub id: &'r str,
    pub filename: &'r str,
    /// The query string's name-value pairs, decoded: `sig` and `exp` of a signed link, and
    /// transform parameters (CONTRACT.md section 18), which a signature covers too.
    pub query: &'r [(String, String)],
    /// The client's `Accept` header: `auto=format` picks from it.
    pub accept: Option<&'r str>,
}

impl MediaRequest<'_> {
    fn value(&self, name: &str) -> Option<&str> {
        self.query
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }
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
    /// Width and height in pixels, for images.
    pub dimensions: Option<(u32, u32)>,
    /// The default focal point of `fit=crop`.
    pub hotspot: Option<FocalPoint>,
    /// The derivative asked for, when the query string has transform parameters: serve it
    /// ([`AssetService::derivative`]) instead of the original.
    pub transform: Option<TransformPlan>,
}

impl AssetService<'_> {
    /// Decides whether the requester may fetch the asset. A `sig` or `exp` in the request is
    /// always verified (403 when it fails, also for public assets). Private assets
    /// (`assets.private`) need a valid signature or an actor who may read assets of the
    /// owning organization or of its parent. With `assets.transformSigning`, so do transform
    /// parameters: only a signature or such an actor may have the server render sizes.
    pub async fn media(
        &self,
        actor: Option<&Actor>,
        request: MediaRequest<'_>,
    ) -> Result<MediaAsset> {
        let transform = TransformRequest::parse(request.query)
            .map_err(|e| Error::bad_request(e.to_string()))?;
        let (sig, exp) = (request.value("sig"), request.value("exp"));
        let signed = sig.is_some() || exp.is_some();
        if signed {
            let now = self.inner.clock.now().millis() / 1000;
            let parameters = transform.as_ref().map_or("", |t| t.signed_part());
            self.inner
                .media_signer
                .verify_transform(request.id, request.filename, parameters, sig, exp, now)
                .map_err(|_| Error::Forbidden)?;
        }
        let private = self.settings().private;
        let unsigned_transform =
            transform.is_some() && self.settings().transform_signing && !signed;
        if unsigned_transform && actor.is_none() {
            return Err(Error::Forbidden);
        }
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
        if unsigned_transform {
            let actor = actor.ok_or(Error::Forbidden)?;
            // Someone who may read the asset in the back office (the admin's thumbnails), not
            // the public: a refusal here is 403, as for a missing signature.
            self.check_reader(actor, &record)
                .await
                .map_err(|e| match e {
                    Error::NotFound(_) | Error::Unauthorized => Error::Forbidden,
                    other => other,
                })?;
        } else if private && !signed {
            let actor = actor.ok_or(Error::Unauthorized)?;
            self.check_reader(actor, &record).await?;
        }
        let dimensions = record.dimensions();
        let mut asset = MediaAsset {
            // A signature on a transform of a public asset guards the server's work, not the
            // picture: shared caches (a CDN) may keep it like the original.
            access: if private || unsigned_transform || (signed && transform.is_none()) {
                MediaAccess::Private
            } else {
                MediaAccess::Public
            },
            id: record.id,
            filename: record.filename,
            mime_type: record.mime_type,
            size: u64::try_from(record.size).unwrap_or(0),
            dimensions,
            hotspot: record
                .image
                .hotspot_x
                .zip(record.image.hotspot_y)
                .and_then(|(x, y)| FocalPoint::new(x, y)),
            sha256: record.sha256,
            transform: None,
        };
        if let Some(transform) = &transform {
            asset.transform = Some(self.plan_transform(&asset, transform, request.accept)?);
        }
        Ok(asset)
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
