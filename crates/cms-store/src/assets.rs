//! Assets: uploaded files and their metadata (the bytes live in the service's blob store), the
//! documents that reference them (read from `document_references`), and direct uploads awaiting
//! confirmation.

use async_trait::async_trait;

use crate::Result;
use crate::filter_sql::Bind;

#[derive(Debug, Clone, PartialEq, sqlx::FromRow)]
pub struct AssetRecord {
    pub id: String,
    pub organization_id: String,
    pub filename: String,
    /// `image` or `file`.
    pub asset_type: String,
    pub mime_type: String,
    pub size: i64,
    /// Images only.
    pub width: Option<i64>,
    /// Images only.
    pub height: Option<i64>,
    /// Lowercase hex.
    pub sha256: String,
    pub title: Option<String>,
    pub description: Option<String>,
    pub alt: Option<String>,
    pub credit_line: Option<String>,
    /// A video's poster image (another asset); cleared when that asset is deleted.
    pub poster_id: Option<String>,
    pub created_by: Option<String>,
    pub updated_by: Option<String>,
    pub created_at: i64,
    pub updated_at: i64,
    #[sqlx(flatten)]
    pub image: ImageDetails,
}

impl AssetRecord {
    /// Width and height in pixels, when the record has both and they fit a `u32`.
    pub fn dimensions(&self) -> Option<(u32, u32)> {
        let side = |v: Option<i64>| v.and_then(|v| u32::try_from(v).ok());
        side(self.width).zip(side(self.height))
    }
}

/// What an image adds to its asset record (CONTRACT.md section 18). Empty for other files.
#[derive(Debug, Clone, Default, PartialEq, sqlx::FromRow)]
pub struct ImageDetails {
    /// The default focal point of `fit=crop` transforms, fractions 0 to 1; both or neither.
    pub hotspot_x: Option<f64>,
    pub hotspot_y: Option<f64>,
    /// A data-URI WebP at most 20 px wide.
    pub lqip: Option<String>,
    /// `#rrggbb`.
    pub dominant_color: Option<String>,
    pub has_alpha: Option<bool>,
    /// The pixels were looked at (the three details above are set when they could be decoded).
    pub summarized: bool,
}

/// The details computed from an image's pixels.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ImageSummary {
    pub lqip: String,
    pub dominant_color: String,
    pub has_alpha: bool,
}

/// What a list of assets asks for. Newest first (created_at DESC, id DESC).
#[derive(Debug, Clone, Copy)]
pub struct AssetListSpec<'a> {
    pub organizations: &'a [String],
    /// "image" or "file": exact match on asset_type.
    pub asset_type: Option<&'a str>,
    /// Exact MIME type (`image/png`), or a whole top-level type written `image/*`.
    pub mime_type: Option<&'a str>,
    /// Case-insensitive substring of title or description (LIKE wildcards `%` `_` `\` in it are matched literally: escape them).
    pub search: Option<&'a str>,
    pub limit: i64,
    pub offset: i64,
}

/// A metadata change: `None` leaves a field as it is, `Some(None)` clears it.
#[derive(Debug, Clone, Default)]
pub struct AssetMetadata {
    pub title: Option<Option<String>>,
    pub description: Option<Option<String>>,
    pub alt: Option<Option<String>>,
    pub credit_line: Option<Option<String>>,
    /// The default focal point, `(x, y)`.
    pub hotspot: Option<Option<(f64, f64)>>,
}

impl AssetMetadata {
    /// The fields to set, as (column, new value). Column names are literals of this module.
    pub(crate) fn changes(&self) -> Vec<(&'static str, Option<&str>)> {
        [
            ("title", &self.title),
            ("description", &self.description),
            ("alt", &self.alt),
            ("credit_line", &self.credit_line),
        ]
        .into_iter()
        .filter_map(|(column, change)| change.as_ref().map(|value| (column, value.as_deref())))
        .collect()
    }
}

/// A document that references an asset.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AssetReference {
    pub document_id: String,
    pub doc_type: String,
    /// Whether the document has a published copy.
    pub published: bool,
    /// The document's organization.
    pub organization_id: String,
}

#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct UploadRecord {
    /// Becomes the asset's id on confirmation.
    pub id: String,
    pub organization_id: String,
    pub filename: String,
    /// As the client declared it.
    pub mime_type: String,
    /// As the client declared it.
    pub size: i64,
    pub created_by: Option<String>,
    pub created_at: i64,
    pub expires_at: i64,
}

#[async_trait]
pub trait Assets {
    async fn insert_asset(&mut self, asset: &AssetRecord) -> Result<()>;
    /// The asset, when it belongs to one of `organizations`.
    async fn asset(&mut self, organizations: &[String], id: &str) -> Result<Option<AssetRecord>>;
    /// The assets of `organizations` among `ids`, in no particular order; unknown ids are left
    /// out.
    async fn assets_by_ids(
        &mut self,
        organizations: &[String],
        ids: &[String],
    ) -> Result<Vec<AssetRecord>>;
    /// The oldest asset of `organization` whose bytes hash to `sha256` (lowercase hex), for
    /// de-duplicating uploads (index `assets_by_sha256`).
    async fn asset_by_sha256(
        &mut self,
        organization: &str,
        sha256: &str,
    ) -> Result<Option<AssetRecord>>;
    /// The asset by id alone, for /media delivery (the unit must be a delivery unit on PostgreSQL: `Store::read_for_delivery`).
    async fn asset_for_delivery(&mut self, id: &str) -> Result<Option<AssetRecord>>;
    /// One page and the total number matching.
    async fn list_assets(&mut self, spec: &AssetListSpec<'_>) -> Result<(Vec<AssetRecord>, i64)>;
    /// Applies `metadata` to an asset of `organization` and sets updated_by/updated_at; the updated row, None when no such asset there.
    async fn update_asset_metadata(
        &mut self,
        organization: &str,
        id: &str,
        metadata: &AssetMetadata,
        by: Option<&str>,
        now: i64,
    ) -> Result<Option<AssetRecord>>;
    /// Sets a video's poster; false when no such asset in `organization`. A `poster_id` that
    /// names no asset at all fails with [`crate::StoreError::ForeignKey`].
    async fn set_asset_poster(
        &mut self,
        organization: &str,
        id: &str,
        poster_id: &str,
        by: Option<&str>,
        now: i64,
    ) -> Result<bool>;
    /// Records what an image's pixels gave (`None`: they could not be decoded) and marks the
    /// asset summarized; false when no such asset in `organization`. Not a change of the
    /// record by anyone: `updated_at` stays.
    async fn set_image_summary(
        &mut self,
        organization: &str,
        id: &str,
        summary: Option<&ImageSummary>,
    ) -> Result<bool>;
    /// Up to `limit` images of `organization` not yet summarized, by id, after `after`
    /// (index `assets_to_summarize`).
    async fn images_to_summarize(
        &mut self,
        organization: &str,
        after: Option<&str>,
        limit: i64,
    ) -> Result<Vec<AssetRecord>>;
    /// Deletes those of `ids` that belong to `organization`; returns the ids deleted.
    async fn delete_assets(&mut self, organization: &str, ids: &[String]) -> Result<Vec<String>>;
    /// Per asset id: the number of DISTINCT documents of `organizations` whose draft or published copy references it (rows of document_references with target = 'asset' and to_id = the id, counted by distinct from_id, document_references.organization_id IN organizations). Ids with no reference are absent from the map.
    async fn asset_reference_counts(
        &mut self,
        organizations: &[String],
        ids: &[String],
    ) -> Result<std::collections::HashMap<String, i64>>;
    /// The documents of `organizations` referencing the asset (draft or published copy), each once, oldest document first (documents.created_at, id).
    async fn asset_references(
        &mut self,
        organizations: &[String],
        id: &str,
    ) -> Result<Vec<AssetReference>>;
    async fn insert_upload(&mut self, upload: &UploadRecord) -> Result<()>;
    /// A pending upload of `organization`.
    async fn upload(&mut self, organization: &str, id: &str) -> Result<Option<UploadRecord>>;
    /// true when it existed.
    async fn delete_upload(&mut self, organization: &str, id: &str) -> Result<bool>;
    /// Up to `limit` pending uploads of `organization` that expired before `now`, oldest first.
    async fn expired_uploads(
        &mut self,
        organization: &str,
        now: i64,
        limit: i64,
    ) -> Result<Vec<UploadRecord>>;
}

/// Ids per statement when a list of ids becomes an `IN (...)`: far below both engines' limits
/// on parameters.
pub(crate) const IDS_PER_STATEMENT: usize = 500;

/// The `WHERE` of an asset list (without the word) and its binds, placeholders from `$1`. Only
/// placeholders are written into the text; every value is bound.
pub(crate) fn list_condition(spec: &AssetListSpec<'_>) -> (String, Vec<Bind>) {
    let n = spec.organizations.len();
    let mut sql = format!(
        "organization_id IN ({})",
        crate::documents::placeholders(1, n)
    );
    let mut binds: Vec<Bind> = spec
        .organizations
        .iter()
        .map(|o| Bind::Text(o.clone()))
        .collect();
    if let Some(asset_type) = spec.asset_type {
        binds.push(Bind::Text(asset_type.to_string()));
        sql.push_str(&format!(" AND asset_type = ${}", binds.len()));
    }
    if let Some(mime_type) = spec.mime_type {
        match mime_type.strip_suffix('*').filter(|p| p.ends_with('/')) {
            // `image/*`: the prefix `image/`, compared exactly (no LIKE: SQLite's is
            // case-insensitive, PostgreSQL's is not).
            Some(prefix) => {
                binds.push(Bind::Text(prefix.to_string()));
                let p = binds.len();
                sql.push_str(&format!(" AND substr(mime_type, 1, length(${p})) = ${p}"));
            }
            None => {
                binds.push(Bind::Text(mime_type.to_string()));
                sql.push_str(&format!(" AND mime_type = ${}", binds.len()));
            }
        }
    }
    if let Some(search) = spec.search {
        binds.push(Bind::Text(format!("%{}%", escape_like(search))));
        let p = binds.len();
        sql.push_str(&format!(
            " AND (lower(title) LIKE lower(${p}) ESCAPE '\\' \
             OR lower(description) LIKE lower(${p}) ESCAPE '\\')"
        ));
    }
    (sql, binds)
}

/// `text` with the LIKE wildcards and the escape character escaped (`ESCAPE '\'`).
pub(crate) fn escape_like(text: &str) -> String {
    let mut escaped = String::with_capacity(text.len());
    for c in text.chars() {
        if matches!(c, '\\' | '%' | '_') {
            escaped.push('\\');
        }
        escaped.push(c);
    }
    escaped
}

macro_rules! impl_assets {
    ($tx:ty) => {
        #[async_trait::async_trait]
        impl $crate::assets::Assets for $tx {
            async fn insert_asset(&mut self, a: &$crate::assets::AssetRecord) -> $crate::Result<()> {
                sqlx::query(
                    "INSERT INTO assets (id, organization_id, filename, asset_type, mime_type, size, width, \
                     height, sha256, title, description, alt, credit_line, poster_id, created_by, updated_by, \
                     created_at, updated_at, hotspot_x, hotspot_y, lqip, dominant_color, has_alpha, summarized) \
                     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, \
                     $19, $20, $21, $22, $23, $24)",
                )
                .bind(&a.id)
                .bind(&a.organization_id)
                .bind(&a.filename)
                .bind(&a.asset_type)
                .bind(&a.mime_type)
                .bind(a.size)
                .bind(a.width)
                .bind(a.height)
                .bind(&a.sha256)
                .bind(&a.title)
                .bind(&a.description)
                .bind(&a.alt)
                .bind(&a.credit_line)
                .bind(&a.poster_id)
                .bind(&a.created_by)
                .bind(&a.updated_by)
                .bind(a.created_at)
                .bind(a.updated_at)
                .bind(a.image.hotspot_x)
                .bind(a.image.hotspot_y)
                .bind(&a.image.lqip)
                .bind(&a.image.dominant_color)
                .bind(a.image.has_alpha)
                .bind(a.image.summarized)
                .execute(self.conn().await?)
                .await?;
                Ok(())
            }

            async fn asset(
                &mut self,
                organizations: &[String],
                id: &str,
            ) -> $crate::Result<Option<$crate::assets::AssetRecord>> {
                if organizations.is_empty() {
                    return Ok(None);
                }
                let sql = format!(
                    "SELECT * FROM assets WHERE id = $1 AND organization_id IN ({})",
                    $crate::documents::placeholders(2, organizations.len())
                );
                let mut query = sqlx::query_as(sqlx::AssertSqlSafe(sql)).bind(id);
                for org in organizations {
                    query = query.bind(org);
                }
                Ok(query.fetch_optional(self.conn().await?).await?)
            }

            async fn assets_by_ids(
                &mut self,
                organizations: &[String],
                ids: &[String],
            ) -> $crate::Result<Vec<$crate::assets::AssetRecord>> {
                if organizations.is_empty() || ids.is_empty() {
                    return Ok(Vec::new());
                }
                let sql = format!(
                    "SELECT * FROM assets WHERE id IN ({}) AND organization_id IN ({})",
                    $crate::documents::placeholders(1, ids.len()),
                    $crate::documents::placeholders(ids.len() + 1, organizations.len())
                );
                let mut query = sqlx::query_as(sqlx::AssertSqlSafe(sql));
                for id in ids.iter().chain(organizations) {
                    query = query.bind(id);
                }
                Ok(query.fetch_all(self.conn().await?).await?)
            }

            async fn asset_by_sha256(
                &mut self,
                organization: &str,
                sha256: &str,
            ) -> $crate::Result<Option<$crate::assets::AssetRecord>> {
                Ok(sqlx::query_as(
                    "SELECT * FROM assets WHERE organization_id = $1 AND sha256 = $2 \
                     ORDER BY created_at, id LIMIT 1",
                )
                .bind(organization)
                .bind(sha256)
                .fetch_optional(self.conn().await?)
                .await?)
            }

            async fn asset_for_delivery(
                &mut self,
                id: &str,
            ) -> $crate::Result<Option<$crate::assets::AssetRecord>> {
                Ok(sqlx::query_as("SELECT * FROM assets WHERE id = $1")
                    .bind(id)
                    .fetch_optional(self.conn().await?)
                    .await?)
            }

            async fn list_assets(
                &mut self,
                spec: &$crate::assets::AssetListSpec<'_>,
            ) -> $crate::Result<(Vec<$crate::assets::AssetRecord>, i64)> {
                if spec.organizations.is_empty() {
                    return Ok((Vec::new(), 0));
                }
                let (condition, mut binds) = $crate::assets::list_condition(spec);
                let count_sql = format!("SELECT COUNT(*) FROM assets WHERE {condition}");
                let total: i64 =
                    sqlx::query_scalar_with(sqlx::AssertSqlSafe(count_sql), <$tx>::arguments(binds.clone())?)
                        .fetch_one(self.conn().await?)
                        .await?;
                if total == 0 {
                    return Ok((Vec::new(), 0));
                }
                let page_sql = format!(
                    "SELECT * FROM assets WHERE {condition} ORDER BY created_at DESC, id DESC \
                     LIMIT ${} OFFSET ${}",
                    binds.len() + 1,
                    binds.len() + 2
                );
                binds.push($crate::filter_sql::Bind::Int(spec.limit));
                binds.push($crate::filter_sql::Bind::Int(spec.offset));
                let rows = sqlx::query_as_with(sqlx::AssertSqlSafe(page_sql), <$tx>::arguments(binds)?)
                    .fetch_all(self.conn().await?)
                    .await?;
                Ok((rows, total))
            }

            async fn update_asset_metadata(
                &mut self,
                organization: &str,
                id: &str,
                metadata: &$crate::assets::AssetMetadata,
                by: Option<&str>,
                now: i64,
            ) -> $crate::Result<Option<$crate::assets::AssetRecord>> {
                let changes = metadata.changes();
                let mut update = sqlx::QueryBuilder::new("UPDATE assets SET updated_by = ");
                update.push_bind(by).push(", updated_at = ").push_bind(now);
                for (column, value) in changes {
                    // `column` is one of four literals, never input.
                    update.push(", ").push(column).push(" = ").push_bind(value);
                }
                if let Some(hotspot) = metadata.hotspot {
                    update
                        .push(", hotspot_x = ")
                        .push_bind(hotspot.map(|h| h.0))
                        .push(", hotspot_y = ")
                        .push_bind(hotspot.map(|h| h.1));
                }
                update
                    .push(" WHERE organization_id = ")
                    .push_bind(organization)
                    .push(" AND id = ")
                    .push_bind(id)
                    .push(" RETURNING *");
                Ok(update
                    .build_query_as()
                    .fetch_optional(self.conn().await?)
                    .await?)
            }

            async fn set_asset_poster(
                &mut self,
                organization: &str,
                id: &str,
                poster_id: &str,
                by: Option<&str>,
                now: i64,
            ) -> $crate::Result<bool> {
                let done = sqlx::query(
                    "UPDATE assets SET poster_id = $3, updated_by = $4, updated_at = $5 \
                     WHERE organization_id = $1 AND id = $2",
                )
                .bind(organization)
                .bind(id)
                .bind(poster_id)
                .bind(by)
                .bind(now)
                .execute(self.conn().await?)
                .await?;
                Ok(done.rows_affected() > 0)
            }

            async fn set_image_summary(
                &mut self,
                organization: &str,
                id: &str,
                summary: Option<&$crate::assets::ImageSummary>,
            ) -> $crate::Result<bool> {
                let done = sqlx::query(
                    "UPDATE assets SET lqip = $3, dominant_color = $4, has_alpha = $5, summarized = $6 \
                     WHERE organization_id = $1 AND id = $2",
                )
                .bind(organization)
                .bind(id)
                .bind(summary.map(|s| s.lqip.as_str()))
                .bind(summary.map(|s| s.dominant_color.as_str()))
                .bind(summary.map(|s| s.has_alpha))
                .bind(true)
                .execute(self.conn().await?)
                .await?;
                Ok(done.rows_affected() > 0)
            }

            async fn images_to_summarize(
                &mut self,
                organization: &str,
                after: Option<&str>,
                limit: i64,
            ) -> $crate::Result<Vec<$crate::assets::AssetRecord>> {
                // The same condition as the partial index `assets_to_summarize`.
                Ok(sqlx::query_as(
                    "SELECT * FROM assets WHERE organization_id = $1 AND asset_type = 'image' \
                     AND summarized = FALSE AND id > $2 ORDER BY organization_id, id LIMIT $3",
                )
                .bind(organization)
                .bind(after.unwrap_or(""))
                .bind(limit)
                .fetch_all(self.conn().await?)
                .await?)
            }

            async fn delete_assets(
                &mut self,
                organization: &str,
                ids: &[String],
            ) -> $crate::Result<Vec<String>> {
                let mut deleted = Vec::new();
                for chunk in ids.chunks($crate::assets::IDS_PER_STATEMENT) {
                    let sql = format!(
                        "DELETE FROM assets WHERE organization_id = $1 AND id IN ({}) RETURNING id",
                        $crate::documents::placeholders(2, chunk.len())
                    );
                    let mut query = sqlx::query_scalar(sqlx::AssertSqlSafe(sql)).bind(organization);
                    for id in chunk {
                        query = query.bind(id);
                    }
                    let ids: Vec<String> = query.fetch_all(self.conn().await?).await?;
                    deleted.extend(ids);
                }
                Ok(deleted)
            }

            async fn asset_reference_counts(
                &mut self,
                organizations: &[String],
                ids: &[String],
            ) -> $crate::Result<std::collections::HashMap<String, i64>> {
                let mut counts = std::collections::HashMap::new();
                if organizations.is_empty() {
                    return Ok(counts);
                }
                let n = organizations.len();
                for chunk in ids.chunks($crate::assets::IDS_PER_STATEMENT) {
                    let sql = format!(
                        "SELECT to_id, COUNT(DISTINCT from_id) FROM document_references \
                         WHERE target = 'asset' AND organization_id IN ({}) AND to_id IN ({}) \
                         GROUP BY to_id",
                        $crate::documents::placeholders(1, n),
                        $crate::documents::placeholders(1 + n, chunk.len())
                    );
                    let mut query = sqlx::query_as(sqlx::AssertSqlSafe(sql));
                    for value in organizations.iter().chain(chunk) {
                        query = query.bind(value);
                    }
                    let rows: Vec<(String, i64)> = query.fetch_all(self.conn().await?).await?;
                    counts.extend(rows);
                }
                Ok(counts)
            }

            async fn asset_references(
                &mut self,
                organizations: &[String],
                id: &str,
            ) -> $crate::Result<Vec<$crate::assets::AssetReference>> {
                if organizations.is_empty() {
                    return Ok(Vec::new());
                }
                let sql = format!(
                    "SELECT id, type, published_data IS NOT NULL, organization_id FROM documents \
                     WHERE organization_id IN ({}) AND id IN \
                     (SELECT from_id FROM document_references WHERE to_id = $1 AND target = 'asset') \
                     ORDER BY created_at, id",
                    $crate::documents::placeholders(2, organizations.len())
                );
                let mut query = sqlx::query_as(sqlx::AssertSqlSafe(sql)).bind(id);
                for org in organizations {
                    query = query.bind(org);
                }
                let rows: Vec<(String, String, bool, String)> =
                    query.fetch_all(self.conn().await?).await?;
                Ok(rows
                    .into_iter()
                    .map(|(document_id, doc_type, published, organization_id)| {
                        $crate::assets::AssetReference {
                            document_id,
                            doc_type,
                            published,
                            organization_id,
                        }
                    })
                    .collect())
            }

            async fn insert_upload(&mut self, u: &$crate::assets::UploadRecord) -> $crate::Result<()> {
                sqlx::query(
                    "INSERT INTO asset_uploads (id, organization_id, filename, mime_type, size, created_by, \
                     created_at, expires_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)",
                )
                .bind(&u.id)
                .bind(&u.organization_id)
                .bind(&u.filename)
                .bind(&u.mime_type)
                .bind(u.size)
                .bind(&u.created_by)
                .bind(u.created_at)
                .bind(u.expires_at)
                .execute(self.conn().await?)
                .await?;
                Ok(())
            }

            async fn upload(
                &mut self,
                organization: &str,
                id: &str,
            ) -> $crate::Result<Option<$crate::assets::UploadRecord>> {
                Ok(sqlx::query_as("SELECT * FROM asset_uploads WHERE organization_id = $1 AND id = $2")
                    .bind(organization)
                    .bind(id)
                    .fetch_optional(self.conn().await?)
                    .await?)
            }

            async fn delete_upload(&mut self, organization: &str, id: &str) -> $crate::Result<bool> {
                let done = sqlx::query("DELETE FROM asset_uploads WHERE organization_id = $1 AND id = $2")
                    .bind(organization)
                    .bind(id)
                    .execute(self.conn().await?)
                    .await?;
                Ok(done.rows_affected() > 0)
            }

            async fn expired_uploads(
                &mut self,
                organization: &str,
                now: i64,
                limit: i64,
            ) -> $crate::Result<Vec<$crate::assets::UploadRecord>> {
                Ok(sqlx::query_as(
                    "SELECT * FROM asset_uploads WHERE organization_id = $1 AND expires_at <= $2 \
                     ORDER BY expires_at, id LIMIT $3",
                )
                .bind(organization)
                .bind(now)
                .bind(limit)
                .fetch_all(self.conn().await?)
                .await?)
            }
        }
    };
}
pub(crate) use impl_assets;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn like_wildcards_are_escaped() {
        assert_eq!(escape_like(r"50%_a\b"), r"50\%\_a\\b");
        assert_eq!(escape_like("plain"), "plain");
    }

    #[test]
    fn list_conditions_bind_every_value() {
        let orgs = vec!["o1".to_string(), "o2".to_string()];
        let spec = AssetListSpec {
            organizations: &orgs,
            asset_type: Some("image"),
            mime_type: Some("image/*"),
            search: Some("50%"),
            limit: 20,
            offset: 0,
        };
        let (sql, binds) = list_condition(&spec);
        assert_eq!(
            sql,
            "organization_id IN ($1, $2) AND asset_type = $3 \
             AND substr(mime_type, 1, length($4)) = $4 \
             AND (lower(title) LIKE lower($5) ESCAPE '\\' OR lower(description) LIKE lower($5) ESCAPE '\\')"
        );
        assert_eq!(binds.len(), 5);
        let exact = AssetListSpec {
            mime_type: Some("image/png"),
            asset_type: None,
            search: None,
            ..spec
        };
        assert_eq!(
            list_condition(&exact).0,
            "organization_id IN ($1, $2) AND mime_type = $3"
        );
    }
}
