//! Assets: uploaded files with metadata, reference tracking and delivery (SPEC.md "Asset",
//! "Endpoints: Assets", Authentication point 10; CONTRACT.md sections 6 and 12).
//!
//! The bytes live in the [`BlobStore`](crate::storage::BlobStore) under the asset id; the
//! record lives in the database. An upload stores the bytes first and records the asset
//! after, so a failed or refused upload leaves no record, and its object is removed
//! ([`StagedFile`]). A delete removes the record first and the object after, so a record never
//! points at nothing.
//!
//! Tenancy as for documents: reads see the actor's organization (plus its children when
//! asked), writes only the actor's own; an asset anywhere else is 404. Reference counts come
//! from the documents' reference side table and count the documents of the reader's
//! organization and its children, the same set whose references block a delete.
//!
//! Every change of an asset record appends its built-in event (CONTRACT.md section 16) in the
//! unit of work of the change: `asset.created` (upload, direct-upload confirm, a poster's own
//! asset), `asset.updated` (metadata, poster), `asset.deleted` (one per asset deleted, also in
//! bulk). Payload: `{ assetId }`.

mod direct_upload;
mod media;
mod staged;
mod summary;
mod transform;
mod view;

use std::collections::HashMap;
use std::sync::Arc;

use bytes::Bytes;
use cms_core::{CoreCapability, Timestamp, new_id};
use cms_store::Tx;
use cms_store::assets::{AssetListSpec, AssetMetadata, AssetRecord};
use futures_util::Stream;

pub use media::{MediaAccess, MediaAsset, MediaRequest};
pub use staged::StagedFile;
pub(crate) use summary::summarize_images;
pub(crate) use transform::TransformGate;
pub use transform::{Derivative, ImageUrl, TransformPlan};
pub use view::{AssetPage, AssetView, Hotspot, ReferenceView, SignedUrl, UploadTicket};

use crate::Inner;
use crate::actor::Actor;
use crate::error::{Error, Result};
use crate::events::{ASSET_CREATED, ASSET_DELETED, ASSET_UPDATED, asset_event};
use staged::stage;

/// The largest page of a list, as of every list.
pub const MAX_LIMIT: i64 = crate::paging::MAX_PAGE_SIZE;
/// The most ids a bulk delete or a reference count may name.
pub const MAX_IDS: usize = 1000;
/// The longest signed link, in seconds (seven days, as S3's presigned URLs).
pub const MAX_SIGNED_SECONDS: i64 = 7 * 24 * 3600;
/// How long a direct-upload URL stays valid.
pub const UPLOAD_URL_SECONDS: i64 = 15 * 60;
/// The longest title, description, alt text or credit line, in characters.
const MAX_TEXT: usize = 10_000;

/// How assets are stored and delivered (`assets.*`, `storage.directUpload`).
#[derive(Debug, Clone)]
pub struct AssetSettings {
    /// Larger uploads are refused with 413 (`assets.maxUploadBytes`, default 50 MiB).
    pub max_upload_bytes: u64,
    /// /media needs a session or a valid signature (`assets.private`).
    pub private: bool,
    /// Signs /media links (CMS_ASSET_SIGNING_SECRET); without it no signature verifies.
    pub signing_secret: Option<String>,
    /// Transform parameters on /media need a signature (`assets.transformSigning`).
    pub transform_signing: bool,
    /// upload-url and confirm are enabled (`storage.directUpload`).
    pub direct_upload: bool,
}

impl Default for AssetSettings {
    fn default() -> Self {
        AssetSettings {
            max_upload_bytes: 50 * 1024 * 1024,
            private: false,
            signing_secret: None,
            transform_signing: false,
            direct_upload: false,
        }
    }
}

/// Metadata sent with an upload (multipart fields).
#[derive(Debug, Clone, Default)]
pub struct UploadMetadata {
    pub title: Option<String>,
    pub description: Option<String>,
    pub alt: Option<String>,
    pub credit_line: Option<String>,
    /// Must be the actor's active organization when given (writes go there only).
    pub organization_id: Option<String>,
}

/// A metadata change: `None` leaves a field, `Some(None)` clears it.
#[derive(Debug, Clone, Default)]
pub struct MetadataChange {
    pub title: Option<Option<String>>,
    pub description: Option<Option<String>>,
    pub alt: Option<Option<String>>,
    pub credit_line: Option<Option<String>>,
    /// The default focal point of `fit=crop` transforms; `Some(None)` removes it.
    pub hotspot: Option<Option<Hotspot>>,
}

/// A list request (GET /api/assets).
#[derive(Debug, Clone, Default)]
pub struct AssetQuery {
    /// `image` or `file`.
    pub asset_type: Option<String>,
    /// Exact (`image/png`) or a whole top-level type (`image/*`).
    pub mime_type: Option<String>,
    /// Case-insensitive substring of title or description.
    pub search: Option<String>,
    /// 1 to [`MAX_LIMIT`]; [`DEFAULT_PAGE_SIZE`](crate::paging::DEFAULT_PAGE_SIZE) when `None`.
    pub limit: Option<i64>,
    /// 0 or more; 0 when `None`.
    pub offset: Option<i64>,
    pub include_children: bool,
}

/// A direct upload announced before its bytes (POST /api/assets/upload-url).
#[derive(Debug, Clone)]
pub struct DirectUpload {
    pub filename: String,
    pub mime_type: String,
    pub size: i64,
}

/// What a bulk delete did.
#[derive(Debug, Clone, Copy, serde::Serialize, utoipa::ToSchema)]
pub struct BulkDeleted {
    pub deleted: usize,
    /// Ids that named no asset of the actor's organization.
    pub failed: usize,
}

/// What [`AssetService::record`] did with an upload.
enum Recorded {
    New(AssetRecord),
    Existing(AssetRecord),
}

pub struct AssetService<'a> {
    inner: &'a Inner,
}

impl<'a> AssetService<'a> {
    pub(crate) fn new(inner: &'a Inner) -> Self {
        AssetService { inner }
    }

    fn settings(&self) -> &AssetSettings {
        &self.inner.settings.assets
    }

    fn storage(&self) -> &Arc<dyn crate::storage::BlobStore> {
        &self.inner.storage
    }

    /// Streams an uploaded file into storage under a new asset id. The asset exists once
    /// [`AssetService::create`] records it; until then (and if it never does) the stored bytes
    /// are removed when the returned value is dropped.
    pub async fn stage(
        &self,
        actor: &Actor,
        client_filename: &str,
        body: impl Stream<Item = Result<Bytes>> + Send,
    ) -> Result<StagedFile> {
        actor.require(CoreCapability::AssetUpload)?;
        stage(
            self.storage(),
            new_id(),
            client_filename,
            body,
            self.settings().max_upload_bytes,
        )
        .await
    }

    /// Records a staged file as an asset of the actor's organization; or, when the
    /// organization already has an asset with the same bytes, answers that one (marked
    /// `duplicate`) and drops the staged copy.
    pub async fn create(
        &self,
        actor: &Actor,
        file: StagedFile,
        metadata: UploadMetadata,
    ) -> Result<AssetView> {
        let org = self.writable_organization(actor, metadata.organization_id.as_deref())?;
        let record = self.new_record(actor, &org, &file, metadata).await?;
        let tx = self.inner.store.write_for(&org).await?;
        self.commit_upload(tx, actor, record, file).await
    }

    /// Ends an upload's unit of work: records the file ([`Self::record`]), commits, and keeps
    /// the staged bytes only for a new asset (a duplicate's are dropped with `file`: the
    /// existing asset has them).
    async fn commit_upload(
        &self,
        mut tx: Box<dyn Tx>,
        actor: &Actor,
        record: AssetRecord,
        file: StagedFile,
    ) -> Result<AssetView> {
        let recorded = self.record(&mut *tx, record).await?;
        let view = self.uploaded(&mut *tx, actor, recorded).await?;
        tx.commit().await?;
        if !view.duplicate {
            file.keep();
        }
        Ok(view)
    }

    /// Every upload door (multipart upload, direct-upload confirm, a poster, the assistant's
    /// `upload_asset`) records its file here, in the caller's unit of work: an asset of the
    /// organization with the same SHA-256 is returned as it is (no second record, no event),
    /// otherwise `record` is inserted with its `asset.created` event. Answering an existing
    /// asset shows nothing the uploader may not read: `asset.upload` implies `asset.read`
    /// (SPEC.md capability rule 2), and the look-up is in the uploader's organization only.
    async fn record(&self, tx: &mut dyn Tx, record: AssetRecord) -> Result<Recorded> {
        if let Some(existing) = tx
            .asset_by_sha256(&record.organization_id, &record.sha256)
            .await?
        {
            return Ok(Recorded::Existing(existing));
        }
        tx.insert_asset(&record).await?;
        tx.append_event(&self.asset_event(&record.organization_id, ASSET_CREATED, &record.id))
            .await?;
        Ok(Recorded::New(record))
    }

    /// The answer to an upload: a new asset (no references yet), or the existing one with its
    /// reference count and the `duplicate` mark.
    async fn uploaded(
        &self,
        tx: &mut dyn Tx,
        actor: &Actor,
        recorded: Recorded,
    ) -> Result<AssetView> {
        Ok(match recorded {
            Recorded::New(record) => AssetView::new(record, 0),
            Recorded::Existing(record) => {
                let mut view = self.views(tx, actor, vec![record]).await?.remove(0);
                view.duplicate = true;
                view
            }
        })
    }

    /// A page of the assets of the actor's organization (and its children when asked), newest
    /// first.
    pub async fn list(&self, actor: &Actor, query: AssetQuery) -> Result<AssetPage> {
        let orgs = self
            .delivered_organizations(actor, query.include_children)
            .await?;
        let (limit, offset) = crate::paging::window_or_default(query.limit, query.offset);
        if !(1..=MAX_LIMIT).contains(&limit) {
            return Err(Error::bad_request(format!("`limit` is 1 to {MAX_LIMIT}")));
        }
        if offset < 0 {
            return Err(Error::bad_request("`offset` is 0 or more"));
        }
        let asset_type = match query.asset_type.as_deref() {
            None | Some("") => None,
            Some(t @ ("image" | "file")) => Some(t),
            Some(_) => return Err(Error::bad_request("`assetType` is `image` or `file`")),
        };
        let mut tx = self.inner.store.read_for(&orgs[0]).await?;
        let (records, total) = tx
            .list_assets(&AssetListSpec {
                organizations: &orgs,
                asset_type,
                // `*/*` is every type: no filter.
                mime_type: query
                    .mime_type
                    .as_deref()
                    .filter(|m| !m.is_empty() && *m != "*/*"),
                search: query.search.as_deref().filter(|s| !s.is_empty()),
                limit,
                offset,
            })
            .await?;
        let views = self.views(&mut *tx, actor, records).await?;
        Ok(AssetPage::new(views, total, limit, offset))
    }

    /// One asset of the actor's organization (or of a child, when asked).
    pub async fn get(&self, actor: &Actor, id: &str, include_children: bool) -> Result<AssetView> {
        let orgs = self
            .delivered_organizations(actor, include_children)
            .await?;
        let mut tx = self.inner.store.read_for(&orgs[0]).await?;
        let record = tx.asset(&orgs, id).await?.ok_or_else(not_found)?;
        let mut views = self.views(&mut *tx, actor, vec![record]).await?;
        Ok(views.remove(0))
    }

    /// Assets by id, in request order; unknown ids and other organizations' assets are left
    /// out. At most [`MAX_BY_IDS`](crate::paging::MAX_BY_IDS) per call, like documents.
    pub async fn by_ids(
        &self,
        actor: &Actor,
        ids: &[String],
        include_children: bool,
    ) -> Result<Vec<AssetView>> {
        let orgs = self
            .delivered_organizations(actor, include_children)
            .await?;
        if ids.len() > crate::paging::MAX_BY_IDS {
            return Err(Error::bad_request(format!(
                "at most {} ids per request",
                crate::paging::MAX_BY_IDS
            )));
        }
        let mut tx = self.inner.store.read_for(&orgs[0]).await?;
        let records = tx.assets_by_ids(&orgs, ids).await?;
        let mut views = self.views(&mut *tx, actor, records).await?;
        views.sort_by_key(|v| ids.iter().position(|id| *id == v.id));
        Ok(views)
    }

    /// Changes title, description, alt text, credit line or hotspot.
    pub async fn update(
        &self,
        actor: &Actor,
        id: &str,
        change: MetadataChange,
    ) -> Result<AssetView> {
        let org = actor.require(CoreCapability::AssetUpload)?.to_string();
        let metadata = AssetMetadata {
            title: checked_change("title", change.title)?,
            description: checked_change("description", change.description)?,
            alt: checked_change("alt", change.alt)?,
            credit_line: checked_change("creditLine", change.credit_line)?,
            hotspot: checked_hotspot(change.hotspot)?,
        };
        let now = self.inner.clock.now().millis();
        let by = Some(actor.user.id.as_str());
        let mut tx = self.inner.store.write_for(&org).await?;
        let record = tx
            .update_asset_metadata(&org, id, &metadata, by, now)
            .await?
            .ok_or_else(not_found)?;
        tx.append_event(&self.asset_event(&org, ASSET_UPDATED, id))
            .await?;
        let mut views = self.views(&mut *tx, actor, vec![record]).await?;
        tx.commit().await?;
        Ok(views.remove(0))
    }

    /// Deletes an asset no document references (409 otherwise), then its stored bytes.
    pub async fn delete(&self, actor: &Actor, id: &str) -> Result<()> {
        let org = actor.require(CoreCapability::AssetDelete)?.to_string();
        let scope = self.organization_and_children(&org).await?;
        let mut tx = self.inner.store.write_for(&org).await?;
        tx.asset(std::slice::from_ref(&org), id)
            .await?
            .ok_or_else(not_found)?;
        let counts = tx.asset_reference_counts(&scope, &[id.to_string()]).await?;
        if let Some(count) = counts.get(id).filter(|c| **c > 0) {
            return Err(Error::Conflict(format!(
                "the asset is referenced by {count} document{}: remove the references first",
                if *count == 1 { "" } else { "s" }
            )));
        }
        let deleted = tx.delete_assets(&org, &[id.to_string()]).await?;
        tx.append_events(&self.asset_events(&org, ASSET_DELETED, &deleted))
            .await?;
        tx.commit().await?;
        self.remove_objects(&[id.to_string()]).await;
        Ok(())
    }

    /// Deletes every named asset, or none: one referenced asset refuses the whole request
    /// (409 with the referenced ids). Ids naming no asset of the organization count as failed.
    pub async fn delete_many(&self, actor: &Actor, ids: Vec<String>) -> Result<BulkDeleted> {
        let org = actor.require(CoreCapability::AssetDelete)?.to_string();
        let ids = checked_ids(ids)?;
        let scope = self.organization_and_children(&org).await?;
        let mut tx = self.inner.store.write_for(&org).await?;
        // Only ids something references need a look-up: those naming an asset of this
        // organization refuse the whole request.
        let counts = tx.asset_reference_counts(&scope, &ids).await?;
        let mut referenced = Vec::new();
        for id in ids
            .iter()
            .filter(|id| counts.get(*id).is_some_and(|c| *c > 0))
        {
            if tx.asset(std::slice::from_ref(&org), id).await?.is_some() {
                referenced.push(id.clone());
            }
        }
        if !referenced.is_empty() {
            return Err(Error::AssetsReferenced { ids: referenced });
        }
        let deleted = tx.delete_assets(&org, &ids).await?;
        tx.append_events(&self.asset_events(&org, ASSET_DELETED, &deleted))
            .await?;
        tx.commit().await?;
        self.remove_objects(&deleted).await;
        Ok(BulkDeleted {
            deleted: deleted.len(),
            failed: ids.len() - deleted.len(),
        })
    }

    /// Per requested id, the number of documents of the actor's organization and its children
    /// that reference it (0 for an id nothing references, or that names no asset).
    pub async fn reference_counts(
        &self,
        actor: &Actor,
        ids: Vec<String>,
    ) -> Result<HashMap<String, i64>> {
        let org = actor.require(CoreCapability::AssetRead)?.to_string();
        let ids = checked_ids(ids)?;
        let scope = self.organization_and_children(&org).await?;
        let mut tx = self.inner.store.read_for(&org).await?;
        let counts = tx.asset_reference_counts(&scope, &ids).await?;
        Ok(ids
            .into_iter()
            .map(|id| {
                let count = counts.get(&id).copied().unwrap_or(0);
                (id, count)
            })
            .collect())
    }

    /// The documents that reference an asset, oldest first.
    pub async fn references(
        &self,
        actor: &Actor,
        id: &str,
        include_children: bool,
    ) -> Result<Vec<ReferenceView>> {
        let orgs = self.readable_organizations(actor, include_children).await?;
        let mut tx = self.inner.store.read_for(&orgs[0]).await?;
        let asset = tx.asset(&orgs, id).await?.ok_or_else(not_found)?;
        let scope = self
            .organization_and_children(&asset.organization_id)
            .await?;
        let references = tx.asset_references(&scope, id).await?;
        Ok(references
            .into_iter()
            .map(|r| ReferenceView {
                document_id: r.document_id,
                doc_type: r.doc_type,
                status: if r.published { "published" } else { "draft" },
            })
            .collect())
    }

    /// A link to the asset that works without a session until it expires (404 when no
    /// signing secret is configured: no link could ever verify).
    pub async fn signed_url(
        &self,
        actor: &Actor,
        id: &str,
        expires_in: Option<i64>,
        include_children: bool,
    ) -> Result<SignedUrl> {
        let seconds = expires_in.unwrap_or(3600);
        if !(1..=MAX_SIGNED_SECONDS).contains(&seconds) {
            return Err(Error::bad_request(format!(
                "`expiresIn` is 1 to {MAX_SIGNED_SECONDS} seconds"
            )));
        }
        let orgs = self.readable_organizations(actor, include_children).await?;
        if !self.inner.media_signer.is_configured() {
            return Err(Error::NotFound(
                "signed URLs are off: no asset signing secret is configured".into(),
            ));
        }
        let mut tx = self.inner.store.read_for(&orgs[0]).await?;
        let asset = tx.asset(&orgs, id).await?.ok_or_else(not_found)?;
        let expires = self.inner.clock.now().millis() / 1000 + seconds;
        let sig = self
            .inner
            .media_signer
            .sign(&asset.id, &asset.filename, expires)
            .ok_or_else(|| Error::Internal("the signer lost its secret".into()))?;
        Ok(SignedUrl {
            url: self.inner.link(&format!(
                "{}?sig={sig}&exp={expires}",
                view::media_path(&asset.id, &asset.filename)
            )),
            expires_at: Timestamp::from(expires * 1000),
        })
    }

    /// Attaches an uploaded image as the poster of a video asset; the poster is an image asset
    /// of its own. Answers the video.
    pub async fn attach_poster(
        &self,
        actor: &Actor,
        video_id: &str,
        file: StagedFile,
    ) -> Result<AssetView> {
        let org = actor.require(CoreCapability::AssetUpload)?.to_string();
        {
            let mut tx = self.inner.store.read_for(&org).await?;
            let video = tx
                .asset(std::slice::from_ref(&org), video_id)
                .await?
                .ok_or_else(not_found)?;
            if !video.mime_type.starts_with("video/") {
                return Err(Error::bad_request("a poster belongs to a video asset"));
            }
        }
        if !cms_core::asset::is_raster(&file.sniffed.mime_type) {
            return Err(Error::bad_request(
                "the poster must be an image (PNG, JPEG, GIF, WebP, AVIF)",
            ));
        }
        let poster = self
            .new_record(actor, &org, &file, UploadMetadata::default())
            .await?;
        let now = self.inner.clock.now().millis();
        let mut tx = self.inner.store.write_for(&org).await?;
        // An image the organization already has becomes the poster as it is.
        let recorded = self.record(&mut *tx, poster).await?;
        let new = matches!(recorded, Recorded::New(_));
        let poster_id = match &recorded {
            Recorded::New(r) | Recorded::Existing(r) => r.id.clone(),
        };
        if !tx
            .set_asset_poster(&org, video_id, &poster_id, Some(&actor.user.id), now)
            .await?
        {
            return Err(not_found());
        }
        tx.append_event(&self.asset_event(&org, ASSET_UPDATED, video_id))
            .await?;
        let video = tx
            .asset(std::slice::from_ref(&org), video_id)
            .await?
            .ok_or_else(not_found)?;
        let mut views = self.views(&mut *tx, actor, vec![video]).await?;
        tx.commit().await?;
        if new {
            file.keep();
        }
        Ok(views.remove(0))
    }

    /// An asset event of `org` about `asset_id`, to append in the unit of work of the change.
    fn asset_event(
        &self,
        org: &str,
        event_type: &str,
        asset_id: &str,
    ) -> cms_store::events::EventRecord {
        asset_event(org, event_type, asset_id, self.inner.clock.now())
    }

    /// One asset event per id, in order (one change, one event: a bulk delete emits one per
    /// asset it deleted).
    fn asset_events(
        &self,
        org: &str,
        event_type: &str,
        asset_ids: &[String],
    ) -> Vec<cms_store::events::EventRecord> {
        asset_ids
            .iter()
            .map(|id| self.asset_event(org, event_type, id))
            .collect()
    }

    /// The organization an upload goes to: the actor's own. Naming another is refused like
    /// any write outside it.
    fn writable_organization(&self, actor: &Actor, named: Option<&str>) -> Result<String> {
        let org = actor.require(CoreCapability::AssetUpload)?;
        match named {
            Some(named) if !named.is_empty() && named != org => Err(Error::Forbidden),
            _ => Ok(org.to_string()),
        }
    }

    /// The record of a stored file, its image details computed from the stored bytes (before
    /// any unit of work opens: decoding takes a while).
    async fn new_record(
        &self,
        actor: &Actor,
        org: &str,
        file: &StagedFile,
        metadata: UploadMetadata,
    ) -> Result<AssetRecord> {
        let looked = summary::image_details(
            self.inner,
            &file.id,
            file.sniffed.asset_type,
            &file.sniffed.mime_type,
            file.sniffed.dimensions,
        )
        .await;
        let now = self.inner.clock.now().millis();
        let (width, height) = match looked.shown {
            Some((w, h)) => (Some(i64::from(w)), Some(i64::from(h))),
            None => (None, None),
        };
        Ok(AssetRecord {
            id: file.id.clone(),
            organization_id: org.to_string(),
            filename: file.filename.clone(),
            asset_type: file.sniffed.asset_type.as_str().to_string(),
            mime_type: file.sniffed.mime_type.clone(),
            size: file.size,
            width,
            height,
            sha256: file.sha256.clone(),
            title: checked_text("title", metadata.title.or_else(|| file.title.clone()))?,
            description: checked_text("description", metadata.description)?,
            alt: checked_text("alt", metadata.alt)?,
            credit_line: checked_text("creditLine", metadata.credit_line)?,
            poster_id: None,
            created_by: Some(actor.user.id.clone()),
            updated_by: Some(actor.user.id.clone()),
            created_at: now,
            updated_at: now,
            image: looked.details,
        })
    }

    /// Views with their reference counts, counted over the reader's organization and its
    /// children (an asset's own organization, or a child of it).
    async fn views(
        &self,
        tx: &mut dyn Tx,
        actor: &Actor,
        records: Vec<AssetRecord>,
    ) -> Result<Vec<AssetView>> {
        if records.is_empty() {
            return Ok(Vec::new());
        }
        let own = actor.organization_id.clone().unwrap_or_default();
        let mut scope = vec![own.clone()];
        // An anonymous reader's answers tell nothing of child organizations.
        if !actor.is_public() {
            scope.extend(tx.child_organization_ids(&own).await?);
        }
        let ids: Vec<String> = records.iter().map(|r| r.id.clone()).collect();
        let counts = tx.asset_reference_counts(&scope, &ids).await?;
        Ok(records
            .into_iter()
            .map(|r| {
                let count = counts.get(&r.id).copied().unwrap_or(0);
                AssetView::new(r, count)
            })
            .collect())
    }

    async fn readable_organizations(
        &self,
        actor: &Actor,
        include_children: bool,
    ) -> Result<Vec<String>> {
        self.inner
            .readable_organizations(actor, CoreCapability::AssetRead, include_children)
            .await
    }

    /// The organizations the asset reads that serve published content cover (list, get, by
    /// ids): also for an anonymous `public` reader holding `asset.read`, in its own
    /// organization only.
    async fn delivered_organizations(
        &self,
        actor: &Actor,
        include_children: bool,
    ) -> Result<Vec<String>> {
        self.inner
            .deliverable_organizations(actor, CoreCapability::AssetRead, include_children)
            .await
    }

    async fn organization_and_children(&self, org: &str) -> Result<Vec<String>> {
        self.inner.organization_and_children(org).await
    }

    async fn remove_objects(&self, ids: &[String]) {
        remove_objects(self.inner, ids).await;
    }
}

/// Removes stored objects of deleted assets, their derivatives with them. The records are
/// gone already, so a failure only leaves an unreachable object behind: logged, not returned.
pub(crate) async fn remove_objects(inner: &Inner, ids: &[String]) {
    for id in ids {
        if let Err(e) = inner.storage.delete(id).await {
            tracing::warn!(asset = %id, error = %e, "could not remove the object of a deleted asset");
        }
        if let Err(e) = inner
            .storage
            .delete_prefix(&transform::derivatives_prefix(id))
            .await
        {
            tracing::warn!(asset = %id, error = %e, "could not remove the derivatives of a deleted asset");
        }
    }
}

/// Every asset id of an organization (the unit must act for it).
pub(crate) async fn asset_ids(tx: &mut dyn Tx, organization: &str) -> Result<Vec<String>> {
    const PAGE: i64 = 1000;
    let organizations = [organization.to_string()];
    let mut ids = Vec::new();
    loop {
        let (page, _) = tx
            .list_assets(&AssetListSpec {
                organizations: &organizations,
                asset_type: None,
                mime_type: None,
                search: None,
                limit: PAGE,
                offset: ids.len() as i64,
            })
            .await?;
        let done = (page.len() as i64) < PAGE;
        ids.extend(page.into_iter().map(|a| a.id));
        if done {
            return Ok(ids);
        }
    }
}

fn not_found() -> Error {
    Error::not_found("asset")
}

fn checked_text(field: &str, value: Option<String>) -> Result<Option<String>> {
    match value {
        Some(v) if v.chars().count() > MAX_TEXT => Err(Error::bad_request(format!(
            "`{field}` is longer than {MAX_TEXT} characters"
        ))),
        Some(v) if v.is_empty() => Ok(None),
        other => Ok(other),
    }
}

fn checked_change(field: &str, value: Option<Option<String>>) -> Result<Option<Option<String>>> {
    match value {
        None => Ok(None),
        Some(v) => Ok(Some(checked_text(field, v)?)),
    }
}

/// A hotspot is two fractions from 0 to 1.
fn checked_hotspot(value: Option<Option<Hotspot>>) -> Result<Option<Option<(f64, f64)>>> {
    match value {
        None => Ok(None),
        Some(None) => Ok(Some(None)),
        Some(Some(h)) => match cms_core::asset::transform::FocalPoint::new(h.x, h.y) {
            Some(p) => Ok(Some(Some((p.x, p.y)))),
            None => Err(Error::bad_request(
                "`hotspot` is { x, y } with both fractions from 0 to 1, or null",
            )),
        },
    }
}

fn checked_ids(ids: Vec<String>) -> Result<Vec<String>> {
    if ids.is_empty() {
        return Err(Error::bad_request("`ids` names no asset"));
    }
    if ids.len() > MAX_IDS {
        return Err(Error::bad_request(format!(
            "`ids` names more than {MAX_IDS} assets"
        )));
    }
    let mut seen = std::collections::HashSet::new();
    Ok(ids
        .into_iter()
        .filter(|id| seen.insert(id.clone()))
        .collect())
}
