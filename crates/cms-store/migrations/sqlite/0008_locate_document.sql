-- Locating a document by its bare id needs a row-level-security-proof function on PostgreSQL
-- only (its 0008 migration). SQLite serves one instance with no second wall, where the lookup
-- is a plain query; this file keeps the two engines' migration numbers aligned.
SELECT 1;
