-- Single sign-on (CONTRACT.md section 20): which account an identity provider's person is.
-- The first sign-in through a provider links its subject to the account with the same verified
-- e-mail address (or to a new one); later sign-ins find the account by the subject, so a
-- changed address at the provider still reaches the same account.
CREATE TABLE user_identities (
    provider TEXT NOT NULL,
    subject TEXT NOT NULL,
    user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    created_at INTEGER NOT NULL,
    PRIMARY KEY (provider, subject)
);
CREATE INDEX user_identities_user ON user_identities(user_id);
