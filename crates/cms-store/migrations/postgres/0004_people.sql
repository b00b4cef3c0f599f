-- People: invitations, single-use e-mail tokens, editor preferences, rate-limit counters.

-- An invitation names a role by name but has no foreign key to it: only a pending invitation
-- keeps a role from being deleted, which the service checks; an accepted or cancelled one must
-- not. `status` is pending, accepted, cancelled or expired (a pending row past `expires_at` reads
-- as expired).
CREATE TABLE invitations (
    id TEXT PRIMARY KEY,
    organization_id TEXT NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
    email TEXT NOT NULL,
    role TEXT NOT NULL,
    status TEXT NOT NULL,
    invited_by TEXT REFERENCES users(id) ON DELETE SET NULL,
    expires_at BIGINT NOT NULL,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL
);
-- At most one pending invitation per address and organization.
CREATE UNIQUE INDEX invitations_pending ON invitations(organization_id, email) WHERE status = 'pending';
CREATE INDEX invitations_email ON invitations(email);

-- E-mail verification and password-reset tokens: only the keyed hash is stored; a token is
-- consumed by deleting its row, so it works once.
CREATE TABLE user_tokens (
    token_hash TEXT PRIMARY KEY,
    user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    purpose TEXT NOT NULL,
    expires_at BIGINT NOT NULL,
    created_at BIGINT NOT NULL
);
CREATE INDEX user_tokens_user ON user_tokens(user_id, purpose);

-- The editor preferences of a user: any JSON object.
CREATE TABLE user_preferences (
    user_id TEXT PRIMARY KEY REFERENCES users(id) ON DELETE CASCADE,
    data JSONB NOT NULL DEFAULT '{}',
    updated_at BIGINT NOT NULL
);

-- Fixed-window counters for rate limits, in the database so that every instance on one
-- PostgreSQL shares them. `key` names the limit and a keyed hash of the client identifier.
CREATE TABLE rate_limits (
    key TEXT PRIMARY KEY,
    window_start BIGINT NOT NULL,
    hits BIGINT NOT NULL
);
