-- Preview links (CONTRACT.md section 15): a token that reads one document's draft as its
-- creator sees it. The row keeps a keyed hash of the token, never the token. Deleting the
-- document, its organization or the creator deletes its tokens (referential actions bypass
-- row-level security).
CREATE TABLE preview_tokens (
    id TEXT PRIMARY KEY,
    organization_id TEXT NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
    document_id TEXT NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
    token_hash TEXT NOT NULL UNIQUE,
    created_by TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    created_at BIGINT NOT NULL,
    expires_at BIGINT NOT NULL
);
CREATE INDEX preview_tokens_document ON preview_tokens(document_id);

-- The tenant wall of migrations 0005 and 0010: read own plus children, write own only; and,
-- like an API key, a token is resolved by its hash before any organization is known, so an
-- instance-wide unit (and only one naming no organization) reaches every row.
SELECT cms_enable_tenant_wall('preview_tokens');
CREATE POLICY preview_tokens_instance ON preview_tokens FOR ALL
    USING (current_setting('cms.scope', true) = 'instance'
           AND COALESCE(current_setting('cms.organization_id', true), '') = '')
    WITH CHECK (current_setting('cms.scope', true) = 'instance'
                AND COALESCE(current_setting('cms.organization_id', true), '') = '');
