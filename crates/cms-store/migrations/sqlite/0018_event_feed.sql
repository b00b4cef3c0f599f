-- The feed of new events needs a position per event and a notification of other processes on
-- PostgreSQL only (its 0018 migration). On SQLite an event's position is its `rowid`: one writer
-- at a time assigns them in commit order, and events are never deleted, so they never move;
-- other processes' commits are found by polling. This file keeps the two engines' migration
-- numbers aligned.
SELECT 1;
