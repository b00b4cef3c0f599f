-- Webhook endpoints (CONTRACT.md section 16): an organization's receivers of its events, each
-- with its event filter and its signing secret, sealed by the service layer (`v1:...`, the
-- form of secret plugin settings): the plaintext secret never reaches this table.
CREATE TABLE webhook_endpoints (
    id TEXT PRIMARY KEY,
    organization_id TEXT NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
    url TEXT NOT NULL,
    -- A JSON array: `["*"]`, or event type names.
    events TEXT NOT NULL,
    description TEXT NOT NULL DEFAULT '',
    enabled INTEGER NOT NULL,
    secret TEXT NOT NULL,
    created_by TEXT,
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL
);
-- The relay reads the endpoints of a batch's organizations; the list shows them oldest first.
CREATE INDEX webhook_endpoints_by_org ON webhook_endpoints(organization_id, created_at, id);

-- The delivery log: one row per delivery job of an endpoint, written with the job, and the
-- HTTP status the receiver answered on the job's last attempt (NULL before the first answer,
-- or when the last attempt got none). Status, attempts and the last error are the job's own.
-- No foreign key to `jobs`: a row is listed joined with its job.
CREATE TABLE webhook_deliveries (
    job_id TEXT PRIMARY KEY,
    endpoint_id TEXT NOT NULL REFERENCES webhook_endpoints(id) ON DELETE CASCADE,
    organization_id TEXT NOT NULL,
    event_id TEXT NOT NULL,
    event_type TEXT NOT NULL,
    response_status INTEGER,
    created_at INTEGER NOT NULL
);
-- An endpoint's deliveries, newest first, a page at a time.
CREATE INDEX webhook_deliveries_by_endpoint
    ON webhook_deliveries(endpoint_id, created_at DESC, job_id DESC);
