-- Documents: one row per document with its draft and published copies; versions; references.

CREATE TABLE documents (
    id TEXT PRIMARY KEY,
    organization_id TEXT NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
    type TEXT NOT NULL,
    singleton INTEGER NOT NULL DEFAULT 0,
    draft_data TEXT NOT NULL,
    published_data TEXT,
    published_hash TEXT,
    revision INTEGER NOT NULL,
    created_by TEXT,
    updated_by TEXT,
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL,
    published_at INTEGER
);
-- The default list order (newest first) within one organization and type.
CREATE INDEX documents_by_type ON documents(organization_id, type, created_at DESC, id DESC);
-- A singleton type has exactly one row per organization.
CREATE UNIQUE INDEX documents_singleton ON documents(organization_id, type) WHERE singleton = 1;

CREATE TABLE document_versions (
    id TEXT PRIMARY KEY,
    document_id TEXT NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
    organization_id TEXT NOT NULL,
    version_number INTEGER NOT NULL,
    event_type TEXT NOT NULL,
    data TEXT NOT NULL,
    created_by TEXT,
    created_at INTEGER NOT NULL,
    UNIQUE (document_id, version_number)
);

-- Who references whom, maintained on every write, so back-references, reference counts and
-- "still referenced" are index look-ups rather than scans of document JSON.
CREATE TABLE document_references (
    from_id TEXT NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
    organization_id TEXT NOT NULL,
    copy TEXT NOT NULL,
    path TEXT NOT NULL,
    to_id TEXT NOT NULL,
    target TEXT NOT NULL,
    PRIMARY KEY (from_id, copy, path)
);
CREATE INDEX document_references_to ON document_references(to_id);
