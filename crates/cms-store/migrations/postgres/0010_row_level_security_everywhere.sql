-- Row-level security on every table that holds an organization's rows (the rest of the wall of
-- migration 0005): roles, members, API keys, invitations, events and their outbox, jobs,
-- schedules, and sessions.
--
-- Acting for an organization (`cms.organization_id`, set by `Tx::act_for`, `Store::read_for`,
-- `Store::write_for`) works as for documents: rows of that organization and of its children are
-- readable, only rows of that organization may be inserted, updated or deleted.
--
-- Some legitimate work is not done for one organization: the worker claims due jobs of every
-- organization, the relay reads the whole outbox, credentials are resolved by their hash before
-- any organization is known, sign-up creates an organization with its roles and first member, a
-- user's memberships span organizations, a super admin lists `scope=all`. Such a unit says so:
-- it sets the transaction-local `cms.scope` to 'instance' (`Store::read_instance_wide`,
-- `Store::write_instance_wide`, `Tx::act_instance_wide`), and the policies `<table>_instance`
-- admit it to every row of these tables. The instance scope counts only while the unit names no
-- organization: a unit acting for one is confined to it, whatever else it declared. A unit that
-- declares nothing sees and writes none of these rows (fail closed).
--
-- The declarations are the application's: any login that may use these tables can set them.
-- What the wall guarantees is that a unit of the application acting for an organization never
-- reaches another organization's rows, and that forgetting to declare is an empty result or a
-- refused write, never a leak. It holds for the login that runs the service only when that login
-- neither owns the tables nor bypasses row-level security (README, docs/CONFIGURATION.md).

-- Sessions have no `organization_id`: a session is a user's credential, and its
-- `active_organization_id` only remembers which of the user's organizations the admin shows. It
-- is no organization's data, so no organization-acting unit reads or writes a session: only an
-- instance-wide unit (resolving a credential, signing in or out, switching organizations).
-- The outbox has no organization column either: a row belongs to its event, so it is visible
-- exactly when its event is, and writable with its event's organization.

DO $$
DECLARE
    tenant_tables CONSTANT TEXT[] :=
        ARRAY['roles', 'members', 'api_keys', 'invitations', 'events', 'jobs', 'schedules'];
    instance_wide CONSTANT TEXT :=
        '(current_setting(''cms.scope'', true) = ''instance'' '
        'AND COALESCE(current_setting(''cms.organization_id'', true), '''') = '''')';
    own_event CONSTANT TEXT :=
        'EXISTS (SELECT 1 FROM events e WHERE e.id = outbox.event_id '
        'AND e.organization_id = current_setting(''cms.organization_id'', true))';
    tbl TEXT;
BEGIN
    FOREACH tbl IN ARRAY tenant_tables LOOP
        -- Read own plus children, write own only (migration 0005).
        PERFORM cms_enable_tenant_wall(tbl);
    END LOOP;
    FOREACH tbl IN ARRAY tenant_tables || ARRAY['sessions', 'outbox'] LOOP
        EXECUTE format('ALTER TABLE %I ENABLE ROW LEVEL SECURITY', tbl);
        EXECUTE format('ALTER TABLE %I FORCE ROW LEVEL SECURITY', tbl);
        -- Permissive policies are OR-ed; the name sorts before `_read` and the others, so the
        -- cheap instance test is evaluated first.
        EXECUTE format('CREATE POLICY %I ON %I FOR ALL USING %s WITH CHECK %s',
            tbl || '_instance', tbl, instance_wide, instance_wide);
    END LOOP;
    -- The outbox follows its event: readable when the event is (the events policies apply
    -- inside the subquery), written by the trigger of `events` for an event of the acting
    -- organization, updated or deleted only for such events.
    CREATE POLICY outbox_read ON outbox FOR SELECT
        USING (EXISTS (SELECT 1 FROM events e WHERE e.id = outbox.event_id));
    EXECUTE format('CREATE POLICY outbox_insert ON outbox FOR INSERT WITH CHECK (%s)', own_event);
    EXECUTE format('CREATE POLICY outbox_update ON outbox FOR UPDATE USING (%s) WITH CHECK (%s)',
        own_event, own_event);
    EXECUTE format('CREATE POLICY outbox_delete ON outbox FOR DELETE USING (%s)', own_event);
END $$;

-- The application role `cms_app` (migration 0005) is also the role a separate serving login is
-- granted (a login that neither owns the tables nor bypasses row-level security). Migration 0005
-- creates and equips it only when the migrating login bypasses row-level security; a plain
-- owner that may create roles creates it here, and whenever it exists it gets the rights the
-- service needs, on present and future tables of this schema.
DO $$
BEGIN
    IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'cms_app')
       AND (SELECT rolcreaterole FROM pg_roles WHERE rolname = current_user) THEN
        BEGIN
            CREATE ROLE cms_app NOLOGIN NOSUPERUSER NOBYPASSRLS;
        EXCEPTION WHEN duplicate_object OR unique_violation THEN
            NULL;
        END;
    END IF;
    IF EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'cms_app') THEN
        EXECUTE format('GRANT USAGE ON SCHEMA %I TO cms_app', current_schema());
        EXECUTE format('GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA %I TO cms_app',
                       current_schema());
        EXECUTE format('ALTER DEFAULT PRIVILEGES IN SCHEMA %I GRANT SELECT, INSERT, UPDATE, DELETE ON TABLES TO cms_app',
                       current_schema());
        -- The migration ledger is the owner's alone.
        EXECUTE 'REVOKE INSERT, UPDATE, DELETE ON _sqlx_migrations FROM cms_app';
        -- Runs with its owner's rights (migration 0008), whoever calls it.
        EXECUTE 'GRANT EXECUTE ON FUNCTION cms_locate_document(TEXT) TO cms_app';
    END IF;
END $$;
