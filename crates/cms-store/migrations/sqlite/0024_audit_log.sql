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
    created_at INTEGER NOT NULL
);
-- An organization's entries, newest first, a page at a time; the instance-wide list and the
-- retention job read by time.
CREATE INDEX audit_log_by_org ON audit_log(organization_id, created_at DESC, id DESC);
CREATE INDEX audit_log_by_time ON audit_log(created_at, id);
