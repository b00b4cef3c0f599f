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
    size INTEGER NOT NULL,
    -- Images only.
    width INTEGER,
    height INTEGER,
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
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL
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
    size INTEGER NOT NULL,
    created_by TEXT,
    created_at INTEGER NOT NULL,
    expires_at INTEGER NOT NULL
);
