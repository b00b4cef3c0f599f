-- What images add to their asset record (CONTRACT.md section 18): the default focal point of
-- `fit=crop` transforms, set by people, and the placeholder details computed from the pixels at
-- upload. `summarized` says the pixels were looked at (also when they could not be decoded), so
-- the backfill of images stored before this migration visits each once.
ALTER TABLE assets ADD COLUMN hotspot_x REAL;
ALTER TABLE assets ADD COLUMN hotspot_y REAL;
ALTER TABLE assets ADD COLUMN lqip TEXT;
ALTER TABLE assets ADD COLUMN dominant_color TEXT;
ALTER TABLE assets ADD COLUMN has_alpha BOOLEAN;
ALTER TABLE assets ADD COLUMN summarized BOOLEAN NOT NULL DEFAULT 0;
-- The backfill's look-up: the images of an organization not yet summarized.
CREATE INDEX assets_to_summarize ON assets(organization_id, id)
    WHERE asset_type = 'image' AND summarized = FALSE;
