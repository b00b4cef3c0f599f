-- The built-in role `public` (CONTRACT.md section 15): anonymous reads of requests that name
-- the organization. Every organization gets it, holding no capability until an owner or admin
-- grants `document.read` or `asset.read`.
--
-- A custom role some organization already named `public` was a role of people, and `public` is
-- never a person's role. It is renamed `public-legacy` (`public-legacy-<its id>` when that name is
-- taken too), and its members and invitations follow it: nobody gains or loses a capability.
-- Its row then becomes the built-in, emptied: nothing turns public by upgrading.

-- The work spans organizations: declared instance-wide for this transaction, so the policies of
-- migration 0010 admit a migrating login that owns the tables (a superuser bypasses them anyway).
SELECT set_config('cms.scope', 'instance', true), set_config('cms.organization_id', '', true);

CREATE TEMP TABLE public_role_renames ON COMMIT DROP AS
SELECT r.id AS old_id,
       r.organization_id,
       CASE WHEN EXISTS (SELECT 1 FROM roles t
                         WHERE t.organization_id = r.organization_id AND t.name = 'public-legacy')
            THEN 'public-legacy-' || r.id
            ELSE 'public-legacy' END AS new_name
FROM roles r
WHERE r.name = 'public';

INSERT INTO roles (id, organization_id, name, description, capabilities, is_built_in, created_at,
                   updated_at)
SELECT 'legacy-' || r.id, r.organization_id, p.new_name, r.description, r.capabilities, FALSE,
       r.created_at, (EXTRACT(EPOCH FROM now()) * 1000)::BIGINT
FROM roles r JOIN public_role_renames p ON p.old_id = r.id;

UPDATE members m
SET role = p.new_name
FROM public_role_renames p
WHERE p.organization_id = m.organization_id AND m.role = 'public';

UPDATE invitations i
SET role = p.new_name
FROM public_role_renames p
WHERE p.organization_id = i.organization_id AND i.role = 'public';

UPDATE roles
SET description = 'Anonymous reads of published content by requests that name the organization',
    capabilities = '[]'::jsonb,
    is_built_in = TRUE,
    updated_at = (EXTRACT(EPOCH FROM now()) * 1000)::BIGINT
WHERE name = 'public';

INSERT INTO roles (id, organization_id, name, description, capabilities, is_built_in, created_at,
                   updated_at)
SELECT gen_random_uuid()::text, o.id, 'public',
       'Anonymous reads of published content by requests that name the organization',
       '[]'::jsonb, TRUE,
       (EXTRACT(EPOCH FROM now()) * 1000)::BIGINT, (EXTRACT(EPOCH FROM now()) * 1000)::BIGINT
FROM organizations o
WHERE NOT EXISTS (SELECT 1 FROM roles r WHERE r.organization_id = o.id AND r.name = 'public');
