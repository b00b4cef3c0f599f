-- Two-factor sign-in (CONTRACT.md section 20). One authenticator per person: its secret sealed
-- by the service (never in clear), `enabled_at` NULL while enrolment waits for a first code,
-- and the last time step a code was accepted for, so each code works once.
CREATE TABLE two_factor (
    user_id TEXT PRIMARY KEY REFERENCES users(id) ON DELETE CASCADE,
    secret TEXT NOT NULL,
    enabled_at INTEGER,
    last_step INTEGER NOT NULL DEFAULT 0,
    created_at INTEGER NOT NULL
);

-- Single-use recovery codes: only their hashes; taking one deletes it.
CREATE TABLE two_factor_recovery_codes (
    user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    code_hash TEXT NOT NULL,
    PRIMARY KEY (user_id, code_hash)
);

-- The wrong answers a single-use token has had: a two-factor challenge survives five.
ALTER TABLE user_tokens ADD COLUMN failures INTEGER NOT NULL DEFAULT 0;

-- An organization may require two-factor sign-in of its members.
ALTER TABLE organizations ADD COLUMN require_two_factor INTEGER NOT NULL DEFAULT 0;
