-- Preview links (CONTRACT.md section 15): a token that reads one document's draft as its
-- creator sees it. The row keeps a keyed hash of the token, never the token. Deleting the
-- document, its organization or the creator deletes its tokens.
CREATE TABLE preview_tokens (
    id TEXT PRIMARY KEY,
    organization_id TEXT NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
    document_id TEXT NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
    token_hash TEXT NOT NULL UNIQUE,
    created_by TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    created_at INTEGER NOT NULL,
    expires_at INTEGER NOT NULL
);
CREATE INDEX preview_tokens_document ON preview_tokens(document_id);
