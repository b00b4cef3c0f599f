-- The feed of new events for live readers (the event stream, CONTRACT.md section 16).
--
-- A position per event, taken at the insert from an identity column: readers follow the feed
-- by position rather than by id, since UUIDv7 ids are taken before the insert and two
-- transactions may commit in either order (see cms-store's event_feed.rs and DECISIONS.md,
-- "The event stream"). An identity column needs no grant on its sequence: whoever may insert
-- into `events` may take a position. Adding it numbers the existing events once (the table is
-- rewritten, under this migration's lock).
ALTER TABLE events ADD COLUMN position BIGINT GENERATED ALWAYS AS IDENTITY;
CREATE UNIQUE INDEX events_by_position ON events(position);

-- Wakes the listeners of every instance at the commit of a transaction that appended events
-- (a notification is delivered at commit, and not at all on rollback; the same notification
-- twice in one transaction is sent once). The channel is named after the table's schema, so
-- two deployments in separate schemas of one database do not wake each other; a digest keeps
-- it within the 63 bytes of a channel name. cms-store's postgres/listen.rs computes the same.
CREATE FUNCTION events_notify() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('cms_events_' || left(md5(TG_TABLE_SCHEMA), 16), '');
    RETURN NULL;
END $$;

CREATE TRIGGER events_notify AFTER INSERT ON events
    FOR EACH STATEMENT EXECUTE FUNCTION events_notify();
