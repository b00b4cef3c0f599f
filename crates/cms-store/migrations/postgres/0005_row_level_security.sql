-- Row-level security: the database as a second wall around tenancy (SPEC.md Authentication
-- point 3). Every unit of work names the organization it acts for in the transaction-local
-- setting `cms.organization_id`; documents, their versions and their references of that
-- organization and of its children are visible, and only rows of that organization may be
-- inserted, updated or deleted. A unit that names none sees nothing and writes nothing.

-- Superusers and BYPASSRLS roles ignore every policy, even with FORCE. When the migrating login
-- is one of them, the service runs its queries as `cms_app` (no such power; see
-- cms-store/src/postgres.rs), which gets the rights it needs on this schema's tables, present
-- and future. A plain login owns the tables and is bound by FORCE below.
DO $$
BEGIN
    IF (SELECT rolsuper OR rolbypassrls FROM pg_roles WHERE rolname = current_user) THEN
        BEGIN
            CREATE ROLE cms_app NOLOGIN NOSUPERUSER NOBYPASSRLS;
        EXCEPTION WHEN duplicate_object OR unique_violation THEN
            -- Another schema or a concurrent migration created it.
            NULL;
        END;
        EXECUTE format('GRANT USAGE ON SCHEMA %I TO cms_app', current_schema());
        EXECUTE format('GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA %I TO cms_app',
                       current_schema());
        EXECUTE format('ALTER DEFAULT PRIVILEGES IN SCHEMA %I GRANT SELECT, INSERT, UPDATE, DELETE ON TABLES TO cms_app',
                       current_schema());
        IF NOT (SELECT rolsuper FROM pg_roles WHERE rolname = current_user) THEN
            EXECUTE format('GRANT cms_app TO %I', current_user);
        END IF;
    END IF;
END $$;

-- The organization lookups are written into the policies rather than called through helper
-- functions: a SQL function that cannot be inlined is planned again at every statement.
-- `current_setting(..., true)` is NULL or '' when the unit named no organization, which
-- matches no row. Readable: the acting organization and its children (one level: a child has
-- none), as an array the planner computes once per statement (an InitPlan), through the
-- primary key and `organizations_parent`.
--
-- Note for query plans: with a policy in force, PostgreSQL uses a user condition as an index
-- condition only when its functions are leakproof, which the JSON operators are not; a `where`
-- on a JSON field is therefore filtered within the (organization, type) index range rather
-- than bounded by the field's expression index.
CREATE INDEX organizations_parent ON organizations(parent_id);

-- Puts a table with an `organization_id` column behind the wall. Later migrations call it for
-- their tenant tables (assets), so every table gets exactly the same policies.
CREATE FUNCTION cms_enable_tenant_wall(tbl TEXT) RETURNS VOID
    LANGUAGE plpgsql
    AS $$
    DECLARE
        acting CONSTANT TEXT := 'current_setting(''cms.organization_id'', true)';
    BEGIN
        EXECUTE format('ALTER TABLE %I ENABLE ROW LEVEL SECURITY', tbl);
        EXECUTE format('ALTER TABLE %I FORCE ROW LEVEL SECURITY', tbl);
        EXECUTE format(
            'CREATE POLICY %I ON %I FOR SELECT USING (organization_id = ANY (ARRAY('
            'SELECT o.id FROM organizations o WHERE o.id = %s OR o.parent_id = %s)))',
            tbl || '_read', tbl, acting, acting);
        EXECUTE format('CREATE POLICY %I ON %I FOR INSERT WITH CHECK (organization_id = %s)',
            tbl || '_insert', tbl, acting);
        EXECUTE format(
            'CREATE POLICY %I ON %I FOR UPDATE USING (organization_id = %s) '
            'WITH CHECK (organization_id = %s)',
            tbl || '_update', tbl, acting, acting);
        EXECUTE format('CREATE POLICY %I ON %I FOR DELETE USING (organization_id = %s)',
            tbl || '_delete', tbl, acting);
    END
    $$;
REVOKE EXECUTE ON FUNCTION cms_enable_tenant_wall(TEXT) FROM PUBLIC;

SELECT cms_enable_tenant_wall('documents');
SELECT cms_enable_tenant_wall('document_versions');
SELECT cms_enable_tenant_wall('document_references');
