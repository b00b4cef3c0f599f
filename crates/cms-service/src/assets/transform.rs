//! Image transforms at `/media/{id}/{filename}?w=...` (CONTRACT.md section 18): which asset
//! may be transformed, where its derivative is kept, and how many transforms run at once.
//!
//! A derivative is rendered once and kept in the asset storage under
//! `derivatives/{asset id}/{digest of the normalized parameters}.{ext}`; every later request
//! for the same pixels reads it back. Deleting the asset deletes the folder. The pixels
//! themselves are `cms_image`'s business, run on the blocking pool behind the
//! [`TransformGate`].

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use bytes::Bytes;
use cms_core::asset::transform::{Fit, FocalPoint, OutputFormat, Resolved, TransformRequest};
use futures_util::TryStreamExt;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use super::staged::storage_error;
use super::{AssetService, AssetView, MediaAsset};
use crate::error::{Error, Result};
use crate::metrics::{TransformResult, record_transform};
use crate::storage::{BlobStore, ByteStream};

/// Requests that may wait for a transform slot, per slot; past them a request is answered 503.
const WAITING_PER_SLOT: usize = 16;
/// What a refused request is told to wait: about the time the queue ahead of it takes.
const RETRY_AFTER_SECONDS: u64 = 2;

/// The folder of an asset's derivatives in the asset storage.
pub(crate) fn derivatives_prefix(asset_id: &str) -> String {
    format!("derivatives/{asset_id}")
}

/// The limits every decode runs under: a larger picture is refused from its header, before
/// any pixel is allocated.
pub(crate) fn image_limits() -> cms_image::Limits {
    cms_image::Limits::default()
}

/// At most as many image decodes at once as there are cores (transforms, and the placeholders
/// computed at upload): each holds a whole decoded picture in memory and a core busy. Requests
/// beyond that wait, up to a bound; past it they are refused with a retry hint rather than
/// piling up memory.
pub(crate) struct TransformGate {
    slots: Arc<Semaphore>,
    waiting: AtomicUsize,
    max_waiting: usize,
}

impl TransformGate {
    pub(crate) fn new(slots: usize) -> TransformGate {
        let slots = slots.max(1);
        TransformGate {
            slots: Arc::new(Semaphore::new(slots)),
            waiting: AtomicUsize::new(0),
            max_waiting: slots * WAITING_PER_SLOT,
        }
    }

    /// One per core of this machine.
    pub(crate) fn for_this_machine() -> TransformGate {
        TransformGate::new(std::thread::available_parallelism().map_or(2, |n| n.get()))
    }

    /// A slot for a request: now, after a bounded wait, or [`Error::TransformsBusy`].
    pub(crate) async fn enter(&self) -> Result<OwnedSemaphorePermit> {
        if let Ok(permit) = self.slots.clone().try_acquire_owned() {
            return Ok(permit);
        }
        if self.waiting.fetch_add(1, Ordering::AcqRel) >= self.max_waiting {
            self.waiting.fetch_sub(1, Ordering::AcqRel);
            return Err(Error::TransformsBusy {
                retry_after_secs: RETRY_AFTER_SECONDS,
            });
        }
        let permit = self.slots.clone().acquire_owned().await;
        self.waiting.fetch_sub(1, Ordering::AcqRel);
        permit.map_err(|_| Error::Internal("the transform gate closed".into()))
    }

    /// A slot for work nobody waits on at the door (an upload's placeholder, the backfill):
    /// it queues as long as it takes.
    pub(crate) async fn enter_queued(&self) -> Result<OwnedSemaphorePermit> {
        self.slots
            .clone()
            .acquire_owned()
            .await
            .map_err(|_| Error::Internal("the transform gate closed".into()))
    }
}

/// A transform of one asset, decided: what it renders, where it is kept, how it is tagged.
#[derive(Debug, Clone)]
pub struct TransformPlan {
    resolved: Resolved,
    /// The derivative's storage key.
    key: String,
    /// The derivative's entity tag, quoted: the original's digest and the parameters'.
    pub etag: String,
    /// The derivative's content type.
    pub mime_type: &'static str,
    /// The format came from the client's `Accept`: shared caches must keep one per `Accept`.
    pub varies_by_accept: bool,
    /// The pixels follow the asset's hotspot (a crop without `fp-x`/`fp-y`), which may change
    /// under the same URL: caches must revalidate (the tag names the focal point).
    pub follows_hotspot: bool,
}

/// A derivative's bytes.
pub enum Derivative {
    /// Read from the storage, where an earlier request left it.
    Stored { stream: ByteStream, size: u64 },
    /// Rendered for this request (and stored for the next).
    Rendered(Bytes),
}

/// What an image field's `url(...)` asks for (GraphQL), before the field's own hotspot and
/// crop are applied.
#[derive(Debug, Clone, Default)]
pub struct ImageUrl {
    pub width: Option<i64>,
    pub height: Option<i64>,
    pub fit: Option<String>,
    pub format: Option<String>,
    pub quality: Option<i64>,
    /// The field's `hotspot` as stored in the document: `{ x, y }`, fractions of the image.
    pub hotspot: Option<serde_json::Value>,
    /// The field's `crop` as stored: `{ top, bottom, left, right }`, fractions cut off each
    /// side.
    pub crop: Option<serde_json::Value>,
}

impl AssetService<'_> {
    /// The `/media` path of a transform of `asset` (relative to the instance, like the
    /// asset's `url`): the field's crop becomes `rect`, its hotspot the focal point of
    /// `fit=crop`; signed when `assets.transformSigning` is on, valid for at least seven days
    /// and the same all day long, so caches keep one copy. 400 for a bad argument; the plain
    /// `url` when nothing is asked.
    pub fn image_url(&self, asset: &AssetView, ask: &ImageUrl) -> Result<String> {
        let mut pairs: Vec<(String, String)> = Vec::new();
        let mut put = |name: &str, value: Option<String>| {
            if let Some(value) = value {
                pairs.push((name.to_string(), value));
            }
        };
        put("w", ask.width.map(|v| v.to_string()));
        put("h", ask.height.map(|v| v.to_string()));
        put("fit", ask.fit.clone());
        put("fm", ask.format.clone());
        put("q", ask.quality.map(|v| v.to_string()));
        let dimensions = asset.width.zip(asset.height);
        put(
            "rect",
            ask.crop
                .as_ref()
                .zip(dimensions)
                .and_then(|(c, d)| crop_rect(c, d)),
        );
        if ask.fit.as_deref() == Some("crop")
            && let Some((x, y)) = ask.hotspot.as_ref().and_then(point)
        {
            put("fp-x", Some(format!("{x:.4}")));
            put("fp-y", Some(format!("{y:.4}")));
        }
        let Some(request) =
            TransformRequest::parse(&pairs).map_err(|e| Error::bad_request(e.to_string()))?
        else {
            return Ok(asset.url.clone());
        };
        let mut url = format!("{}?{}", asset.url, request.signed_part());
        if self.settings().transform_signing {
            const DAY: i64 = 24 * 3600;
            let today = self.inner.clock.now().millis() / 1000 / DAY;
            let expires = (today + 8) * DAY;
            let sig = self
                .inner
                .media_signer
                .sign_transform(&asset.id, &asset.filename, request.signed_part(), expires)
                .ok_or_else(|| {
                    Error::Internal("transform signing is on without a secret".into())
                })?;
            url.push_str(&format!("&sig={sig}&exp={expires}"));
        }
        Ok(url)
    }

    /// Decides the transform `request` asks of `asset` (which [`AssetService::media`] let
    /// through): 400 when the asset is no raster image this server decodes, or has more
    /// pixels than a transform takes.
    pub(super) fn plan_transform(
        &self,
        asset: &MediaAsset,
        request: &TransformRequest,
        accept: Option<&str>,
    ) -> Result<TransformPlan> {
        let decodable = cms_image::Format::from_mime(&asset.mime_type).filter(|f| f.can_decode());
        if decodable.is_none() {
            return Err(Error::bad_request(format!(
                "transform parameters apply to JPEG, PNG, WebP and GIF images; this asset is {}",
                asset.mime_type
            )));
        }
        if let Some((width, height)) = asset.dimensions {
            too_many_pixels(width, height)?;
        }
        let resolved = request.resolve(&asset.mime_type, asset.hotspot, accept);
        let name = resolved.key();
        let crops =
            resolved.fit == Fit::Crop && resolved.width.is_some() && resolved.height.is_some();
        Ok(TransformPlan {
            follows_hotspot: crops && request.focal.is_none(),
            etag: format!("\"{}-{}\"", prefix(&asset.sha256, 16), prefix(&name, 16)),
            key: format!("{}/{name}", derivatives_prefix(&asset.id)),
            mime_type: resolved.format.mime(),
            varies_by_accept: resolved.varies_by_accept,
            resolved,
        })
    }

    /// The derivative `plan` names: from storage when an earlier request rendered it, else
    /// rendered now (waiting for a slot of the [`TransformGate`]) and stored.
    pub async fn derivative(&self, asset: &MediaAsset, plan: &TransformPlan) -> Result<Derivative> {
        let format = plan.resolved.format.as_str();
        let count = |result, took| record_transform(self.inner, format, result, took);
        if let Some(stored) = stored(self.storage(), &plan.key).await? {
            count(TransformResult::Stored, None);
            return Ok(stored);
        }
        let slot = match self.inner.transforms.enter().await {
            Ok(slot) => slot,
            Err(e) => {
                if matches!(e, Error::TransformsBusy { .. }) {
                    count(TransformResult::Busy, None);
                }
                return Err(e);
            }
        };
        // Requests for the same derivative queue behind each other: the first renders it, the
        // ones after find it stored.
        if let Some(stored) = stored(self.storage(), &plan.key).await? {
            count(TransformResult::Stored, None);
            return Ok(stored);
        }
        let original = read_whole(self.storage(), &asset.id).await?;
        let spec = spec_of(&plan.resolved);
        let (output, took) = tokio::task::spawn_blocking(move || {
            // The slot goes with the work: a client that hangs up drops this future, not the
            // decode on the blocking pool, which keeps its slot until it ends.
            let _slot = slot;
            // Timed here, on the blocking pool: the rendering itself, not the wait for a slot.
            let started = std::time::Instant::now();
            let output = cms_image::transform(&original, &spec, &image_limits());
            (output, started.elapsed())
        })
        .await
        .map_err(|e| Error::Internal(format!("the image transform stopped: {e}")))?;
        let output = match output {
            Ok(output) => {
                count(TransformResult::Rendered, Some(took));
                output
            }
            Err(e) => {
                count(TransformResult::Failed, Some(took));
                return Err(image_error(e));
            }
        };
        let bytes = Bytes::from(output.bytes);
        match store(self.storage(), &plan.key, bytes.clone()).await {
            // Served all the same; the next request renders it again.
            Err(e) => {
                tracing::warn!(asset = %asset.id, key = %plan.key, error = %e, "could not keep a derivative")
            }
            Ok(()) => self.unless_deleted_meanwhile(asset).await,
        }
        Ok(Derivative::Rendered(bytes))
    }

    /// An asset deleted while its derivative was rendered had its derivatives removed before
    /// this one was stored: removed now, so nothing stays behind unreachable. (Its record is
    /// gone before its objects are removed, so one of the two removals sees the derivative.)
    async fn unless_deleted_meanwhile(&self, asset: &MediaAsset) {
        let exists = async {
            self.inner
                .store
                .read_for_delivery()
                .await?
                .asset_for_delivery(&asset.id)
                .await
        };
        if let Ok(None) = exists.await
            && let Err(e) = self
                .storage()
                .delete_prefix(&derivatives_prefix(&asset.id))
                .await
        {
            tracing::warn!(asset = %asset.id, error = %e, "could not remove the derivative of a deleted asset");
        }
    }
}

/// A stored point `{ x, y }` with both fractions from 0 to 1.
fn point(value: &serde_json::Value) -> Option<(f64, f64)> {
    let x = value.get("x")?.as_f64()?;
    let y = value.get("y")?.as_f64()?;
    FocalPoint::new(x, y).map(|p| (p.x, p.y))
}

/// A stored crop `{ top, bottom, left, right }` (fractions cut off each side; a missing side
/// is 0) as `rect` over an image of `(width, height)`; none when it cuts nothing or
/// everything.
fn crop_rect(crop: &serde_json::Value, (width, height): (i64, i64)) -> Option<String> {
    let side = |name: &str| match crop.get(name) {
        None => Some(0.0),
        Some(v) => v.as_f64().filter(|f| (0.0..1.0).contains(f)),
    };
    let (top, bottom, left, right) = (side("top")?, side("bottom")?, side("left")?, side("right")?);
    if top + bottom >= 1.0 || left + right >= 1.0 || top + bottom + left + right == 0.0 {
        return None;
    }
    let (w, h) = (width as f64, height as f64);
    let x = (left * w).round() as i64;
    let y = (top * h).round() as i64;
    let cut_w = ((1.0 - left - right) * w).round() as i64;
    let cut_h = ((1.0 - top - bottom) * h).round() as i64;
    (cut_w >= 1 && cut_h >= 1).then(|| format!("{x},{y},{cut_w},{cut_h}"))
}

fn prefix(s: &str, len: usize) -> &str {
    s.get(..len).unwrap_or(s)
}

/// 400 for a picture with more pixels than a decode takes (read from its header at upload).
pub(crate) fn too_many_pixels(width: u32, height: u32) -> Result<()> {
    let max = image_limits().max_pixels;
    if u64::from(width) * u64::from(height) > max {
        return Err(Error::bad_request(format!(
            "the image is {width}×{height} pixels; transforms take at most {} megapixels",
            max / 1_000_000
        )));
    }
    Ok(())
}

/// A decode or encode failure, for the client: the picture's fault is a 4xx, ours a 500.
pub(crate) fn image_error(e: cms_image::Error) -> Error {
    match e {
        cms_image::Error::TooManyPixels { width, height, .. } => {
            too_many_pixels(width, height).err().unwrap_or_else(|| {
                Error::bad_request(format!("the image is {width}×{height} pixels: too many"))
            })
        }
        cms_image::Error::RectOutside => {
            Error::bad_request("`rect` lies outside the image".to_string())
        }
        cms_image::Error::Unsupported => {
            Error::bad_request("this image format cannot be transformed".to_string())
        }
        cms_image::Error::Corrupt(detail) => {
            Error::Unprocessable(format!("the image cannot be decoded: {detail}"))
        }
        cms_image::Error::Encode(detail) => {
            Error::Internal(format!("encoding a derivative: {detail}"))
        }
    }
}

/// What `cms_image` is asked to render.
fn spec_of(resolved: &Resolved) -> cms_image::Spec {
    cms_image::Spec {
        width: resolved.width,
        height: resolved.height,
        fit: match resolved.fit {
            Fit::Clip => cms_image::Fit::Clip,
            Fit::Crop => cms_image::Fit::Crop,
            Fit::Max => cms_image::Fit::Max,
        },
        rect: resolved.rect.map(|r| cms_image::Rect {
            x: r.x,
            y: r.y,
            width: r.width,
            height: r.height,
        }),
        focal: resolved.focal.map(|f| (f.x, f.y)),
        format: match resolved.format {
            OutputFormat::Jpg => cms_image::Format::Jpeg,
            OutputFormat::Png => cms_image::Format::Png,
            OutputFormat::Webp => cms_image::Format::Webp,
            OutputFormat::Avif => cms_image::Format::Avif,
        },
        quality: resolved.quality,
    }
}

/// The stored derivative under `key`, if there is one: one request (on local disk one trip to
/// the blocking pool), as for an original.
async fn stored(storage: &Arc<dyn BlobStore>, key: &str) -> Result<Option<Derivative>> {
    Ok(storage
        .open(key)
        .await
        .map_err(storage_error)?
        .map(|(size, stream)| Derivative::Stored { stream, size }))
}

/// An object's bytes in memory: a decoder needs them whole. Uploads are bounded
/// (`assets.maxUploadBytes`), and only as many originals are read at once as the gate lets
/// transforms run.
pub(crate) async fn read_whole(storage: &Arc<dyn BlobStore>, key: &str) -> Result<Vec<u8>> {
    let stream = storage.read(key, None).await.map_err(storage_error)?;
    stream
        .try_fold(Vec::new(), |mut all, chunk| async move {
            all.extend_from_slice(&chunk);
            Ok(all)
        })
        .await
        .map_err(storage_error)
}

async fn store(
    storage: &Arc<dyn BlobStore>,
    key: &str,
    bytes: Bytes,
) -> Result<(), crate::storage::StorageError> {
    let mut writer = storage.writer(key).await?;
    writer.write(bytes).await?;
    writer.finish().await
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_stored_crop_becomes_a_rect_of_the_image() {
        let size = (400, 200);
        assert_eq!(
            crop_rect(&json!({"left": 0.5}), size).as_deref(),
            Some("200,0,200,200")
        );
        assert_eq!(
            crop_rect(
                &json!({"top": 0.1, "bottom": 0.1, "left": 0.25, "right": 0.25}),
                size
            )
            .as_deref(),
            Some("100,20,200,160")
        );
        // Nothing cut, everything cut, or not fractions: no rect.
        for none in [
            json!({}),
            json!({"top": 0, "left": 0}),
            json!({"left": 0.6, "right": 0.4}),
            json!({"top": 1.0}),
            json!({"left": -0.1}),
            json!({"left": "half"}),
        ] {
            assert_eq!(crop_rect(&none, size), None, "{none}");
        }
    }

    #[test]
    fn a_stored_hotspot_is_two_fractions() {
        assert_eq!(point(&json!({"x": 0.25, "y": 1})), Some((0.25, 1.0)));
        // Sanity's hotspot carries its own width and height: only x and y matter.
        assert_eq!(
            point(&json!({"x": 0.5, "y": 0.5, "width": 0.3, "height": 0.3})),
            Some((0.5, 0.5))
        );
        for none in [
            json!({"x": 1.5, "y": 0.5}),
            json!({"x": 0.5}),
            json!([0.5, 0.5]),
        ] {
            assert_eq!(point(&none), None, "{none}");
        }
    }

    #[tokio::test]
    async fn the_gate_lets_as_many_run_as_it_has_slots_then_a_bounded_queue_wait() {
        let gate = Arc::new(TransformGate::new(1));
        let first = gate.enter().await.expect("a free slot");
        // Fill the queue: every waiter is parked on the one slot.
        let mut waiters = Vec::new();
        for _ in 0..WAITING_PER_SLOT {
            let gate = gate.clone();
            waiters.push(tokio::spawn(async move { gate.enter().await.map(drop) }));
        }
        while gate.waiting.load(Ordering::Acquire) < WAITING_PER_SLOT {
            tokio::task::yield_now().await;
        }
        match gate.enter().await {
            Err(Error::TransformsBusy { retry_after_secs }) => assert!(retry_after_secs > 0),
            other => panic!("expected busy, got {:?}", other.map(drop)),
        }
        // Work nobody waits on at the door still queues.
        let queued = {
            let gate = gate.clone();
            tokio::spawn(async move { gate.enter_queued().await.map(drop) })
        };
        drop(first);
        for waiter in waiters {
            waiter.await.unwrap().expect("a waiter gets its turn");
        }
        queued.await.unwrap().expect("queued work gets its turn");
        assert_eq!(gate.waiting.load(Ordering::Acquire), 0);
        drop(gate.enter().await.expect("free again"));
    }
}
