-- Searching the search rows through their GIN index under row-level security.
--
-- With a policy in force, PostgreSQL uses a condition as an index condition only when its
-- operator is leakproof (migration 0005's note on query plans), and `@@` is not: a search
-- written against `document_search` directly reads every row the policy admits (through
-- `document_search_by_organization`) and tests each. This function runs the match with its
-- owner's rights instead (SECURITY DEFINER, owned by the migrating login), where the planner
-- may answer `@@` from `document_search_tokens`, and applies the tenant rule itself, written
-- exactly as the read policy `document_search_read` (migration 0005, `cms_enable_tenant_wall`):
-- rows of the organization the unit acts for (the transaction-local `cms.organization_id`) and
-- of its children. A unit that names no organization (NULL or '') matches no organization, so
-- it gets nothing, as from the policy. The setting is the caller's: a SECURITY DEFINER function
-- changes the role, not the transaction's settings.
--
-- It reveals no more than the caller could read itself: the ids of matching documents among the
-- rows the read policy already admits to the caller, each with the sum of the weights (a column
-- of those rows) of its distinct matching fields. The caller joins the ids to `documents`, under
-- that table's policies and its own list condition. Every input is a parameter; the body is
-- fixed SQL. A fixed search_path (this schema, then pg_temp last) keeps the definer's rights from
-- running objects a caller could put earlier on its path. EXECUTE is the application role's
-- only (and the owner's).
--
-- A superuser or BYPASSRLS owner reads the rows directly: the index is used. A plain owner is
-- bound by FORCE ROW LEVEL SECURITY inside the function too, so its searches keep scanning the
-- organization's rows; the answer is the same (the policy and the function's rule admit the same
-- rows). No policy is added for it: any policy that let the function's query through would still
-- stand between `@@` and the index.
--
-- LANGUAGE sql with positional parameters: $1 the tsquery, $2 the copy (`draft`|`published`),
-- $3 the locale asked (rows of that locale and of fields that are not localized match), $4 the
-- readable searchable paths. (A SECURITY DEFINER function is never inlined: it is planned per
-- call, generically, where `@@` on a GIN-indexed column is the cheap way in.)
DO $$
BEGIN
    EXECUTE format($fn$
        CREATE FUNCTION cms_search_matches(TSQUERY, TEXT, TEXT, TEXT[])
            RETURNS TABLE (matched_document_id TEXT, matched_weight BIGINT)
            LANGUAGE sql
            STABLE
            SECURITY DEFINER
            SET search_path = %I, pg_temp
            AS $body$
            SELECT f.document_id, SUM(f.weight)::BIGINT
            FROM (SELECT DISTINCT s.document_id, s.path, s.weight
                  FROM document_search s
                  WHERE s.tokens @@ $1
                    AND s.copy = $2
                    AND s.locale IN ($3, '')
                    AND s.path = ANY ($4)
                    AND s.organization_id = ANY (ARRAY(
                        SELECT o.id FROM organizations o
                        WHERE o.id = current_setting('cms.organization_id', true)
                           OR o.parent_id = current_setting('cms.organization_id', true)))) f
            GROUP BY f.document_id
            $body$
    $fn$, current_schema());
    EXECUTE 'REVOKE EXECUTE ON FUNCTION cms_search_matches(TSQUERY, TEXT, TEXT, TEXT[]) FROM PUBLIC';
    -- The application runs as `cms_app` (migrations 0005 and 0010), a plain owner as itself.
    IF EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'cms_app') THEN
        EXECUTE 'GRANT EXECUTE ON FUNCTION cms_search_matches(TSQUERY, TEXT, TEXT, TEXT[]) TO cms_app';
    END IF;
END $$;
