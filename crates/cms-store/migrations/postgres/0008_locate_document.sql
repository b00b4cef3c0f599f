-- Locating a document by its bare id, across organizations (the service's
-- `DocumentService::locate`, for public plugin routes that receive only an id). Row-level
-- security hides every document from a unit that acts for no organization, so the lookup is a
-- function that runs with its owner's rights (SECURITY DEFINER, owned by the migrating login)
-- and reveals only the owning organization and the type of one id: never the data.
--
-- A fixed search_path (this schema, then pg_temp last) keeps the definer's rights from running
-- objects a caller could put earlier on its path.
--
-- A superuser or BYPASSRLS owner reads the row directly. A plain owner is bound by FORCE ROW
-- LEVEL SECURITY like everyone else (migration 0005): for it, a policy admits exactly the row
-- whose id the transaction-local setting `cms.locate` names, and only the function sets it,
-- for the length of its one query.
DO $$
DECLARE
    bypasses CONSTANT BOOLEAN :=
        (SELECT rolsuper OR rolbypassrls FROM pg_roles WHERE rolname = current_user);
BEGIN
    EXECUTE format($fn$
        CREATE FUNCTION cms_locate_document(doc_id TEXT)
            RETURNS TABLE (located_organization_id TEXT, located_type TEXT)
            LANGUAGE plpgsql
            SECURITY DEFINER
            SET search_path = %I, pg_temp
            AS $body$
            BEGIN
                PERFORM set_config('cms.locate', doc_id, true);
                RETURN QUERY SELECT d.organization_id, d.type FROM documents d WHERE d.id = doc_id;
                PERFORM set_config('cms.locate', '', true);
            END
            $body$
    $fn$, current_schema());
    EXECUTE 'REVOKE EXECUTE ON FUNCTION cms_locate_document(TEXT) FROM PUBLIC';
    IF bypasses THEN
        -- The application runs as `cms_app` (migration 0005).
        EXECUTE 'GRANT EXECUTE ON FUNCTION cms_locate_document(TEXT) TO cms_app';
    ELSE
        EXECUTE format(
            'CREATE POLICY documents_locate ON documents FOR SELECT TO %I '
            'USING (id = current_setting(''cms.locate'', true))',
            current_user);
    END IF;
END $$;
