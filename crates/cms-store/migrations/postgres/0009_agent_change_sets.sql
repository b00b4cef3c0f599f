-- Assistant change sets (SPEC.md "Agent change set", CONTRACT.md section 8): one row per
-- assistant turn that changed something. `operations` is the turn's operations in order, each
-- `{ tool, collection, documentId, success, versionBefore, versionAfter }`, written by the
-- service layer after each tool resolves; `undone_at` is set once, by the undo.
CREATE TABLE agent_change_sets (
    id TEXT PRIMARY KEY,
    organization_id TEXT NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
    user_id TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    operations JSONB NOT NULL DEFAULT '[]',
    undone_at BIGINT
);
CREATE INDEX agent_change_sets_by_organization ON agent_change_sets (organization_id, created_at DESC, id DESC);

-- The app role gets its rights through migration 0005's default privileges; the table is
-- behind the same row-level-security wall as documents.
SELECT cms_enable_tenant_wall('agent_change_sets');
