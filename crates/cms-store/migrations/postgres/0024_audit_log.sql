-- The audit log (CONTRACT.md section 19): who did what, where, when and from which address,
-- written in the unit of the action it records, so an entry exists exactly when its action
-- took effect. No foreign keys: an entry outlives the organization, the person and the target
-- it names (the record of a deletion must survive the deletion); retention removes old rows.
CREATE TABLE audit_log (
    id TEXT PRIMARY KEY,
    -- NULL for what belongs to no organization: instance settings, a failed sign-in.
    organization_id TEXT,
    action TEXT NOT NULL,
    -- `user`, `apiKey` or `system`.
    actor_type TEXT NOT NULL,
    -- The user's id, the API key's id, or NULL for the system.
    actor_id TEXT,
    target_type TEXT,
    target_id TEXT,
    ip_address TEXT,
    summary TEXT NOT NULL,
    created_at BIGINT NOT NULL
);
-- An organization's entries, newest first, a page at a time; the instance-wide list and the
-- retention job read by time.
CREATE INDEX audit_log_by_org ON audit_log(organization_id, created_at DESC, id DESC);
CREATE INDEX audit_log_by_time ON audit_log(created_at, id);

-- The tenant wall of migrations 0005 and 0010: a unit acting for an organization reads its own
-- entries (and its children's) and writes only its own. Sign-ins, instance settings, a super
-- admin's `scope=all` and retention work for the whole instance.
SELECT cms_enable_tenant_wall('audit_log');
CREATE POLICY audit_log_instance ON audit_log FOR ALL
    USING (current_setting('cms.scope', true) = 'instance'
           AND COALESCE(current_setting('cms.organization_id', true), '') = '')
    WITH CHECK (current_setting('cms.scope', true) = 'instance'
                AND COALESCE(current_setting('cms.organization_id', true), '') = '');
