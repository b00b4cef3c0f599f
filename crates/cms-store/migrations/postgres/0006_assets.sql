-- Assets: uploaded files with their metadata (the bytes live in the blob store), and direct
-- uploads awaiting confirmation. Which documents reference an asset is in
-- `document_references` (target = 'asset'), looked up through `document_references_to`.

CREATE TABLE assets (
    id TEXT PRIMARY KEY,
    organization_id TEXT NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
    filename TEXT NOT NULL,
    -- 'image' or 'file'.
    asset_type TEXT NOT NULL,
    mime_type TEXT NOT NULL,
    size BIGINT NOT NULL,
    -- Images only.
    width BIGINT,
    height BIGINT,
    -- Lowercase hex.
    sha256 TEXT NOT NULL,
    title TEXT,
    description TEXT,
    alt TEXT,
    credit_line TEXT,
    -- A video's poster image.
    poster_id TEXT REFERENCES assets(id) ON DELETE SET NULL,
    created_by TEXT,
    updated_by TEXT,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL
);
-- The list order (newest first) within one organization.
CREATE INDEX assets_by_organization ON assets(organization_id, created_at DESC, id DESC);
-- Deleting an asset clears the poster of the videos that show it without a scan.
CREATE INDEX assets_poster ON assets(poster_id) WHERE poster_id IS NOT NULL;

-- Direct uploads (presigned PUT to object storage) awaiting POST /api/assets/confirm.
CREATE TABLE asset_uploads (
    -- Becomes the asset id on confirm.
    id TEXT PRIMARY KEY,
    organization_id TEXT NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
    filename TEXT NOT NULL,
    -- As declared by the client; confirm sniffs the real one.
    mime_type TEXT NOT NULL,
    -- As declared.
    size BIGINT NOT NULL,
    created_by TEXT,
    created_at BIGINT NOT NULL,
    expires_at BIGINT NOT NULL
);

-- Behind the same row-level-security wall as documents (migration 0005): read own plus
-- children, write own only, nothing for a unit that names no organization.
SELECT cms_enable_tenant_wall('assets');
SELECT cms_enable_tenant_wall('asset_uploads');

-- Public delivery (/media/{id}/{filename}) serves an asset by its id alone, with no organization
-- to act for: whether it may is decided by the service layer, and a unit that serves delivery
-- says so explicitly (`Tx::act_for_delivery`, the transaction-local setting `cms.delivery`).
-- Such a unit may read any asset row; this policy admits reads only, never inserts, updates or
-- deletes (those keep their own-organization policies), and opens no other table.
CREATE POLICY assets_delivery ON assets FOR SELECT
    USING (current_setting('cms.delivery', true) = 'on');
