-- Presence on the document editor (issue 30): who has a document open right now. A browser
-- with the edit page open touches its row every few seconds; a row not touched for a while
-- means the page is gone. Stored rather than kept in memory so that every `cms serve` on this
-- database sees the same people. Deleting the document, its organization or the person
-- deletes their rows.
CREATE TABLE document_presence (
    organization_id TEXT NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
    document_id TEXT NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
    user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    seen_at INTEGER NOT NULL,
    PRIMARY KEY (document_id, user_id)
);
-- The opportunistic sweep of stale rows reads an organization's rows by age.
CREATE INDEX document_presence_by_age ON document_presence(organization_id, seen_at);
CREATE INDEX document_presence_user ON document_presence(user_id);
