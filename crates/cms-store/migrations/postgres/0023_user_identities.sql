-- Single sign-on (CONTRACT.md section 20): which account an identity provider's person is.
-- The first sign-in through a provider links its subject to the account with the same verified
-- e-mail address (or to a new one); later sign-ins find the account by the subject, so a
-- changed address at the provider still reaches the same account.
CREATE TABLE user_identities (
    provider TEXT NOT NULL,
    subject TEXT NOT NULL,
    user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    created_at BIGINT NOT NULL,
    PRIMARY KEY (provider, subject)
);
CREATE INDEX user_identities_user ON user_identities(user_id);

-- A person's identities are no organization's data (like sessions, migration 0010).
ALTER TABLE user_identities ENABLE ROW LEVEL SECURITY;
ALTER TABLE user_identities FORCE ROW LEVEL SECURITY;
CREATE POLICY user_identities_instance ON user_identities FOR ALL
    USING (current_setting('cms.scope', true) = 'instance'
           AND COALESCE(current_setting('cms.organization_id', true), '') = '')
    WITH CHECK (current_setting('cms.scope', true) = 'instance'
           AND COALESCE(current_setting('cms.organization_id', true), '') = '');
