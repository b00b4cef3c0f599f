-- The built-in role `public` (CONTRACT.md section 15): anonymous reads of requests that name
-- the organization. Every organization gets it, holding no capability until an owner or admin
-- grants `document.read` or `asset.read`.
--
-- A custom role some organization already named `public` was a role of people, and `public` is
-- never a person's role. It is renamed `public-legacy` (`public-legacy-<its id>` when that name is
-- taken too), and its members and invitations follow it: nobody gains or loses a capability.
-- Its row then becomes the built-in, emptied: nothing turns public by upgrading.

CREATE TEMP TABLE public_role_renames AS
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
SELECT 'legacy-' || r.id, r.organization_id, p.new_name, r.description, r.capabilities, 0,
       r.created_at, CAST(strftime('%s', 'now') AS INTEGER) * 1000
FROM roles r JOIN public_role_renames p ON p.old_id = r.id;

UPDATE members
SET role = (SELECT p.new_name FROM public_role_renames p
            WHERE p.organization_id = members.organization_id)
WHERE role = 'public';

UPDATE invitations
SET role = (SELECT p.new_name FROM public_role_renames p
            WHERE p.organization_id = invitations.organization_id)
WHERE role = 'public'
  AND EXISTS (SELECT 1 FROM public_role_renames p
              WHERE p.organization_id = invitations.organization_id);

UPDATE roles
SET description = 'Anonymous reads of published content by requests that name the organization',
    capabilities = '[]',
    is_built_in = 1,
    updated_at = CAST(strftime('%s', 'now') AS INTEGER) * 1000
WHERE name = 'public';

INSERT INTO roles (id, organization_id, name, description, capabilities, is_built_in, created_at,
                   updated_at)
SELECT lower(hex(randomblob(16))), o.id, 'public',
       'Anonymous reads of published content by requests that name the organization', '[]', 1,
       CAST(strftime('%s', 'now') AS INTEGER) * 1000, CAST(strftime('%s', 'now') AS INTEGER) * 1000
FROM organizations o
WHERE NOT EXISTS (SELECT 1 FROM roles r WHERE r.organization_id = o.id AND r.name = 'public');

DROP TABLE public_role_renames;
