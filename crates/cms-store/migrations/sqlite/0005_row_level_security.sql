-- Row-level security exists on PostgreSQL only (its 0005 migration). SQLite serves one
-- instance, where the service layer is the only wall; this file keeps the two engines'
-- migration numbers aligned.
SELECT 1;
