-- An organization may narrow the instance's locales (CONTRACT.md section 17): NULL keeps every
-- configured locale, else a JSON array of tags (the default always among them).
ALTER TABLE organizations ADD COLUMN locales JSONB;
