-- Searching through the index under row-level security needs a function on PostgreSQL only (its
-- 0014 migration). SQLite has no second wall and its FTS5 index is used directly; this file keeps
-- the two engines' migration numbers aligned.
SELECT 1;
