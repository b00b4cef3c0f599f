//! Assets as every door shows them (CONTRACT.md section 6).

use cms_core::Timestamp;
use cms_store::assets::AssetRecord;
use serde::Serialize;

use crate::paging::Pagination;

#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct AssetView {
    pub id: String,
    pub organization_id: String,
    pub filename: String,
    /// `/media/{id}/{filename}`, relative to the instance.
    pub url: String,
    pub asset_type: String,
    pub mime_type: String,
    pub size: i64,
    pub width: Option<i64>,
    pub height: Option<i64>,
    pub sha256: String,
    pub title: Option<String>,
    pub description: Option<String>,
    pub alt: Option<String>,
    pub credit_line: Option<String>,
    /// Documents (draft or published copy) of the reader's organization and its children that
    /// reference the asset.
    pub reference_count: i64,
    pub poster_id: Option<String>,
    /// The default focal point of `fit=crop` transforms (CONTRACT.md section 18).
    pub hotspot: Option<Hotspot>,
    /// Images: a blurred placeholder, a data-URI WebP at most 20 px wide; null for other
    /// files, and for an image not yet (or never) decoded.
    pub lqip: Option<String>,
    /// Images: the average colour, `#rrggbb`.
    pub dominant_color: Option<String>,
    /// Images: whether some pixel is not fully opaque.
    pub has_alpha: Option<bool>,
    pub created_by: Option<String>,
    pub updated_by: Option<String>,
    pub created_at: Timestamp,
    pub updated_at: Timestamp,
    /// Only in the answer to an upload whose bytes the organization already had: `true`, and
    /// the asset is that existing one (docs/DECISIONS.md, "Uploads are de-duplicated").
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    #[schema(required = false)]
    pub duplicate: bool,
}

/// A point of an image, as fractions of its width and height from the top left (0 to 1).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, serde::Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct Hotspot {
    pub x: f64,
    pub y: f64,
}

impl AssetView {
    pub(crate) fn new(r: AssetRecord, reference_count: i64) -> AssetView {
        AssetView {
            url: media_path(&r.id, &r.filename),
            id: r.id,
            organization_id: r.organization_id,
            filename: r.filename,
            asset_type: r.asset_type,
            mime_type: r.mime_type,
            size: r.size,
            width: r.width,
            height: r.height,
            sha256: r.sha256,
            title: r.title,
            description: r.description,
            alt: r.alt,
            credit_line: r.credit_line,
            reference_count,
            poster_id: r.poster_id,
            hotspot: match (r.image.hotspot_x, r.image.hotspot_y) {
                (Some(x), Some(y)) => Some(Hotspot { x, y }),
                _ => None,
            },
            lqip: r.image.lqip,
            dominant_color: r.image.dominant_color,
            has_alpha: r.image.has_alpha,
            created_by: r.created_by,
            updated_by: r.updated_by,
            created_at: r.created_at.into(),
            updated_at: r.updated_at.into(),
            duplicate: false,
        }
    }
}

/// Where an asset is delivered. The file name is already safe in a path (`safe_filename`).
pub(crate) fn media_path(id: &str, filename: &str) -> String {
    format!("/media/{id}/{filename}")
}

/// A page of assets. `page` is `offset / limit + 1`.
#[derive(Debug, Clone)]
pub struct AssetPage {
    pub data: Vec<AssetView>,
    pub pagination: Pagination,
}

impl AssetPage {
    pub(crate) fn new(data: Vec<AssetView>, total: i64, limit: i64, offset: i64) -> AssetPage {
        let total_pages = if total == 0 {
            0
        } else {
            (total + limit - 1) / limit
        };
        AssetPage {
            data,
            pagination: Pagination {
                total,
                page: (offset / limit).saturating_add(1),
                page_size: limit,
                total_pages,
                // An offset near i64::MAX is a valid, empty page, not an overflow.
                has_next_page: offset.saturating_add(limit) < total,
                has_prev_page: offset > 0,
            },
        }
    }
}

/// A document that references an asset (`data.references` elements).
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ReferenceView {
    pub document_id: String,
    #[serde(rename = "type")]
    pub doc_type: String,
    /// `published` when the document has a published copy, else `draft`.
    #[schema(value_type = String, pattern = "^(draft|published)$")]
    pub status: &'static str,
}

/// A signed delivery link.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct SignedUrl {
    pub url: String,
    pub expires_at: Timestamp,
}

/// Where a client puts the bytes of a direct upload.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct UploadTicket {
    pub upload_url: String,
    pub asset_id: String,
    pub expires_at: Timestamp,
}
