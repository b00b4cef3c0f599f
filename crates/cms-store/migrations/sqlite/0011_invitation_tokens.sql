-- Invitations are proven by their mailbox (CONTRACT.md section 13): each new invitation carries
-- a random secret, sent in its e-mail only; the row keeps a keyed hash of it (NULL for
-- invitations made before this migration, which are accepted with a verified address only).
ALTER TABLE invitations ADD COLUMN token_hash TEXT;
CREATE UNIQUE INDEX invitations_token ON invitations(token_hash);

-- An e-mail change waits for its link: the token row names the new address it proves.
ALTER TABLE user_tokens ADD COLUMN email TEXT;
