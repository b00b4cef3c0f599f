//! What an image's pixels say about it, kept on its record (CONTRACT.md section 18): a tiny
//! placeholder (`lqip`), the dominant colour and whether it has transparency. Computed at
//! upload, before the upload's unit of work opens (decoding takes a while); images stored
//! before (or whose bytes could not be read then) are done by [`summarize_images`].

use cms_core::asset::AssetType;
use cms_store::assets::{ImageDetails, ImageSummary};

use super::transform::{image_limits, read_whole};
use crate::Inner;
use crate::error::Result;

/// Images looked up per batch of the backfill.
const BATCH: i64 = 50;

/// What the pixels of a newly stored image say.
pub(crate) struct Looked {
    pub(crate) details: ImageDetails,
    /// Width and height as the image is shown (EXIF orientation applied: a photo taken upright
    /// is stored sideways with orientation 6), when it decoded; the header's otherwise.
    pub(crate) shown: Option<(u32, u32)>,
}

/// The image details of a newly stored file: summarized when its pixels were looked at (or
/// there are none to look at); left for the backfill when its bytes could not be read.
pub(crate) async fn image_details(
    inner: &Inner,
    id: &str,
    asset_type: AssetType,
    mime_type: &str,
    dimensions: Option<(u32, u32)>,
) -> Looked {
    if asset_type != AssetType::Image {
        return Looked {
            details: with_summary(None),
            shown: dimensions,
        };
    }
    match summarize_stored(inner, id, mime_type, dimensions).await {
        Ok(Some((summary, shown))) => Looked {
            details: with_summary(Some(summary)),
            shown: Some(shown),
        },
        Ok(None) => Looked {
            details: with_summary(None),
            shown: dimensions,
        },
        Err(e) => {
            tracing::warn!(asset = %id, error = %e, "image details left for later: the bytes could not be read");
            Looked {
                details: ImageDetails::default(),
                shown: dimensions,
            }
        }
    }
}

fn with_summary(summary: Option<ImageSummary>) -> ImageDetails {
    match summary {
        Some(s) => ImageDetails {
            lqip: Some(s.lqip),
            dominant_color: Some(s.dominant_color),
            has_alpha: Some(s.has_alpha),
            summarized: true,
            ..ImageDetails::default()
        },
        None => ImageDetails {
            summarized: true,
            ..ImageDetails::default()
        },
    }
}

/// The summary of a stored image and its shown size: `None` when its pixels cannot be had (a
/// format not decoded here such as SVG or AVIF, too many pixels, corrupt bytes); an error only
/// when the storage failed, which may pass.
async fn summarize_stored(
    inner: &Inner,
    id: &str,
    mime_type: &str,
    dimensions: Option<(u32, u32)>,
) -> Result<Option<(ImageSummary, (u32, u32))>> {
    if !cms_image::Format::from_mime(mime_type).is_some_and(|f| f.can_decode()) {
        return Ok(None);
    }
    let limits = image_limits();
    if dimensions.is_some_and(|(w, h)| u64::from(w) * u64::from(h) > limits.max_pixels) {
        return Ok(None);
    }
    let Ok(slot) = inner.transforms.enter_queued().await else {
        return Ok(None);
    };
    // Read within the slot: only as many images are in memory as are decoded.
    let bytes = read_whole(&inner.storage, id).await?;
    let summary = tokio::task::spawn_blocking(move || {
        // Held until the decode ends, even if the upload that asked is dropped meanwhile.
        let _slot = slot;
        let info = cms_image::probe(&bytes)?;
        cms_image::summarize(&bytes, &limits).map(|s| (s, (info.width, info.height)))
    })
    .await;
    Ok(match summary {
        Ok(Ok((s, shown))) => Some((
            ImageSummary {
                lqip: s.lqip,
                dominant_color: s.dominant_color,
                has_alpha: s.has_alpha,
            },
            shown,
        )),
        Ok(Err(e)) => {
            tracing::info!(asset = %id, error = %e, "no image details: the pixels cannot be decoded");
            None
        }
        Err(e) => {
            tracing::warn!(asset = %id, error = %e, "no image details: the decode stopped");
            None
        }
    })
}

/// Summarizes every image of every organization not summarized yet, one small unit of work
/// per image; answers how many. An image whose bytes cannot be read now stays for the next
/// run.
pub(crate) async fn summarize_images(inner: &Inner) -> Result<usize> {
    let organizations: Vec<String> = {
        let mut tx = inner.store.read_instance_wide().await?;
        tx.all_organization_ids().await?
    };
    let mut done = 0;
    for org in organizations {
        let mut after: Option<String> = None;
        loop {
            let batch = {
                let mut tx = inner.store.read_for(&org).await?;
                tx.images_to_summarize(&org, after.as_deref(), BATCH)
                    .await?
            };
            let Some(last) = batch.last() else { break };
            after = Some(last.id.clone());
            for record in batch {
                let dimensions = record.dimensions();
                let summary = match summarize_stored(
                    inner,
                    &record.id,
                    &record.mime_type,
                    dimensions,
                )
                .await
                {
                    // The record keeps the size it has: the backfill only adds what was missing.
                    Ok(summary) => summary.map(|(summary, _)| summary),
                    Err(e) => {
                        tracing::warn!(asset = %record.id, error = %e, "image details not computed: the bytes could not be read");
                        continue;
                    }
                };
                let mut tx = inner.store.write_for(&org).await?;
                tx.set_image_summary(&org, &record.id, summary.as_ref())
                    .await?;
                tx.commit().await?;
                done += 1;
            }
        }
    }
    Ok(done)
}
