-- Domain events and their outbox, the job queue, and document schedules.

-- The append-only fact log. Ids are UUIDv7, so id order is creation order.
CREATE TABLE events (
    id TEXT PRIMARY KEY,
    organization_id TEXT,
    type TEXT NOT NULL,
    payload TEXT NOT NULL,
    created_at INTEGER NOT NULL
);
CREATE INDEX events_by_org ON events(organization_id, id);

-- The relay's worklist: one row per event, unprocessed until the relay has enqueued its
-- deliveries. Written by the trigger below, so no event can exist without its outbox row.
-- WITHOUT ROWID: the rows are small, and the primary key then is the table, one B-tree less
-- to write on every publish.
CREATE TABLE outbox (
    event_id TEXT PRIMARY KEY REFERENCES events(id),
    created_at INTEGER NOT NULL,
    processed_at INTEGER
) WITHOUT ROWID;
CREATE INDEX outbox_unprocessed ON outbox(created_at, event_id) WHERE processed_at IS NULL;

CREATE TRIGGER events_outbox AFTER INSERT ON events
BEGIN
    INSERT INTO outbox (event_id, created_at) VALUES (NEW.id, NEW.created_at);
END;

CREATE TABLE jobs (
    id TEXT PRIMARY KEY,
    organization_id TEXT,
    type TEXT NOT NULL,
    -- pending, running, completed, failed, dead_letter, cancelled
    status TEXT NOT NULL,
    payload TEXT NOT NULL,
    attempts INTEGER NOT NULL DEFAULT 0,
    max_attempts INTEGER NOT NULL,
    run_at INTEGER NOT NULL,
    -- The lease of a running job; also the claim's token.
    locked_until INTEGER,
    last_error TEXT,
    -- NULLs never collide: only keyed jobs are deduplicated.
    idempotency_key TEXT UNIQUE,
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL,
    completed_at INTEGER
);
CREATE INDEX jobs_due ON jobs(run_at, id) WHERE status = 'pending';
CREATE INDEX jobs_leased ON jobs(locked_until) WHERE status = 'running';
CREATE INDEX jobs_by_org ON jobs(organization_id, created_at, id);

CREATE TABLE schedules (
    id TEXT PRIMARY KEY,
    document_id TEXT NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
    organization_id TEXT NOT NULL,
    -- publish or unpublish
    action TEXT NOT NULL,
    run_at INTEGER NOT NULL,
    -- pending, completed, cancelled, failed
    status TEXT NOT NULL,
    job_id TEXT NOT NULL,
    created_by TEXT,
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL
);
-- One pending schedule per document.
CREATE UNIQUE INDEX schedules_pending ON schedules(document_id) WHERE status = 'pending';
CREATE INDEX schedules_by_job ON schedules(job_id);
