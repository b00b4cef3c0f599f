-- Plugin settings (SPEC.md "Plugin settings"): one row per organization and plugin. `values`
-- is a JSON object of the plugin's declared fields: plain values as given, and for `secret`
-- fields only their ciphertext (`v1:...`, sealed by the service layer); plaintext secrets
-- never reach this table.
CREATE TABLE plugin_settings (
    organization_id TEXT NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
    plugin_id TEXT NOT NULL,
    "values" JSONB NOT NULL DEFAULT '{}',
    updated_at BIGINT NOT NULL,
    updated_by TEXT,
    PRIMARY KEY (organization_id, plugin_id)
);

-- The app role (`cms_app`, migration 0005) gets its rights on this table through that
-- migration's default privileges. Behind the same row-level-security wall as documents and
-- assets: a unit reads and writes an organization's settings only while acting for it.
SELECT cms_enable_tenant_wall('plugin_settings');
