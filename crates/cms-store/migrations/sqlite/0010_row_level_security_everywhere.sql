-- Row-level security exists on PostgreSQL only (its 0010 migration extends the wall of 0005 to
-- every table holding an organization's rows). SQLite serves one instance, where the service
-- layer is the only wall; this file keeps the two engines' migration numbers aligned.
SELECT 1;
