-- Plugin settings (SPEC.md "Plugin settings"): one row per organization and plugin. `values`
-- is a JSON object of the plugin's declared fields: plain values as given, and for `secret`
-- fields only their ciphertext (`v1:...`, sealed by the service layer); plaintext secrets
-- never reach this table.
CREATE TABLE plugin_settings (
    organization_id TEXT NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
    plugin_id TEXT NOT NULL,
    "values" TEXT NOT NULL DEFAULT '{}',
    updated_at INTEGER NOT NULL,
    updated_by TEXT,
    PRIMARY KEY (organization_id, plugin_id)
);
