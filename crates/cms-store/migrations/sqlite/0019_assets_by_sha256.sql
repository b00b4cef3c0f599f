-- An upload whose bytes an asset of the organization already has returns that asset rather
-- than a second copy (docs/DECISIONS.md, "Uploads are de-duplicated"): the look-up by hash
-- within an organization. Not unique: organizations may hold duplicates uploaded before, and
-- a poster image is its own asset whatever its bytes.
CREATE INDEX assets_by_sha256 ON assets(organization_id, sha256);
