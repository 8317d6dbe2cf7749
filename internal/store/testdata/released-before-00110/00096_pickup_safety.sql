-- The volunteer's Sunday (issue 20): a handle per child for the class list, who may take a child
-- home (the guardians, trusted adults, and adults who must not), and who took each child.
--
--   children.handle      six Crockford base32 characters, unique across the database: what a
--                        volunteer taps or a model passes instead of a uuid. Drawn from a
--                        sequence through a bijection of 30 bits, so handles never collide and
--                        do not count the children of a church.
--   pickup_adults        trusted adults (authorized) and restrictions (not authorized, with the
--                        note the releasing volunteer reads) per child; removal keeps the row.
--                        restriction_id is the row's id for a restriction, NULL otherwise: the
--                        column the spec's row filter guardian_sees_no_restrictions tests.
--   checkins.picked_up_* who took the child: a guardian or an entry of pickup_adults, with the
--                        name as it was then; checked_out_by stays the releasing user.

-- +goose Up

-- The child handle of sequence value n: (n * a + c) mod 2^30 with an odd a is a bijection, then
-- six base32 digits without I, L, O, U (Crockford), so a handle is read aloud without doubt.
CREATE FUNCTION app_child_handle(n bigint) RETURNS text
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$
    SELECT string_agg(substr('0123456789ABCDEFGHJKMNPQRSTVWXYZ',
                             ((((n * 625341585 + 98430182) % 1073741824) >> (5 * i)) & 31)::integer + 1, 1),
                      '' ORDER BY i DESC)
    FROM generate_series(0, 5) AS i
$$;

-- How names are compared where SQL must (restrictions at check-out, duplicates on a list):
-- lower case, common accents removed, single spaces. The Go side is capability.FoldName.
CREATE FUNCTION app_fold_name(s text) RETURNS text
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$
    SELECT regexp_replace(btrim(translate(lower(s), 'áàâãäéèêëíìîïóòôõöúùûüçñ.', 'aaaaaeeeeiiiiooooouuuucn ')), '\s+', ' ', 'g')
$$;

CREATE SEQUENCE child_handle_seq;
GRANT USAGE ON SEQUENCE child_handle_seq TO neemias_app;

ALTER TABLE children ADD COLUMN handle text;
WITH numbered AS (SELECT id, row_number() OVER (ORDER BY created_at, id) AS n FROM children)
UPDATE children c SET handle = app_child_handle(numbered.n) FROM numbered WHERE numbered.id = c.id;
SELECT setval('child_handle_seq', (SELECT count(*) FROM children) + 1, false);
ALTER TABLE children
    ALTER COLUMN handle SET DEFAULT app_child_handle(nextval('child_handle_seq')),
    ALTER COLUMN handle SET NOT NULL,
    ADD CONSTRAINT children_handle_key UNIQUE (handle),
    ADD CONSTRAINT children_handle_check CHECK (handle ~ '^[0-9A-HJKMNP-TV-Z]{6}$');

CREATE TABLE pickup_adults (
    id             uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    church_id      uuid NOT NULL,
    child_id       uuid NOT NULL,
    -- A restriction on one of the child's guardians (a custody order) points at the guardian.
    guardian_id    uuid,
    name           text NOT NULL CHECK (length(btrim(name)) BETWEEN 2 AND 120),
    relationship   text NOT NULL CHECK (length(btrim(relationship)) BETWEEN 2 AND 40),
    phone          text CHECK (phone ~ '^\+?[0-9 ()-]{8,20}$'),
    authorized     boolean NOT NULL,
    note           text CHECK (length(note) <= 300),
    restriction_id uuid GENERATED ALWAYS AS (CASE WHEN NOT authorized THEN id END) STORED,
    created_at     timestamptz NOT NULL DEFAULT now(),
    created_by     uuid NOT NULL,
    removed_at     timestamptz,
    removed_by     uuid,
    CONSTRAINT pickup_adults_church_id_key UNIQUE (church_id, id),
    CONSTRAINT pickup_adults_removed_check CHECK ((removed_at IS NULL) = (removed_by IS NULL)),
    CONSTRAINT pickup_adults_restriction_note_check CHECK (authorized OR length(btrim(note)) > 0),
    CONSTRAINT pickup_adults_guardian_check CHECK (guardian_id IS NULL OR NOT authorized),
    FOREIGN KEY (church_id, child_id) REFERENCES children (church_id, id),
    FOREIGN KEY (church_id, guardian_id) REFERENCES guardians (church_id, id),
    FOREIGN KEY (church_id, created_by) REFERENCES users (church_id, id),
    FOREIGN KEY (church_id, removed_by) REFERENCES users (church_id, id)
);
-- One live entry per name on a child's list.
CREATE UNIQUE INDEX pickup_adults_child_name_key ON pickup_adults (child_id, app_fold_name(name)) WHERE removed_at IS NULL;

ALTER TABLE checkins
    ADD COLUMN picked_up_by_guardian uuid,
    ADD COLUMN picked_up_by_adult uuid,
    ADD COLUMN picked_up_by_name text CHECK (length(btrim(picked_up_by_name)) BETWEEN 2 AND 120),
    ADD CONSTRAINT checkins_picked_up_by_check CHECK (picked_up_by_guardian IS NULL OR picked_up_by_adult IS NULL),
    ADD CONSTRAINT checkins_picked_up_by_guardian_fkey FOREIGN KEY (church_id, picked_up_by_guardian) REFERENCES guardians (church_id, id),
    ADD CONSTRAINT checkins_picked_up_by_adult_fkey FOREIGN KEY (church_id, picked_up_by_adult) REFERENCES pickup_adults (church_id, id);
GRANT UPDATE (picked_up_by_guardian, picked_up_by_adult, picked_up_by_name) ON checkins TO neemias_app;

GRANT SELECT, INSERT ON pickup_adults TO neemias_app;
GRANT UPDATE (removed_at, removed_by) ON pickup_adults TO neemias_app;
ALTER TABLE pickup_adults ENABLE ROW LEVEL SECURITY;
ALTER TABLE pickup_adults FORCE ROW LEVEL SECURITY;
CREATE POLICY pickup_adults_owner ON pickup_adults TO CURRENT_USER USING (true) WITH CHECK (true);
-- Read: the lists of the children the caller may see; a guardian not the restrictions.
CREATE POLICY pickup_adults_select ON pickup_adults FOR SELECT TO neemias_app
    USING (rf_church(church_id)
           AND child_id IN (SELECT app_visible_child_ids())
           AND rf_guardian_sees_no_restrictions(restriction_id));
-- Write: the roles the spec grants pickups:write, for children they may see; a restriction
-- only by staff (a custody order is checked by the church, not typed by a guardian).
CREATE POLICY pickup_adults_insert ON pickup_adults FOR INSERT TO neemias_app
    WITH CHECK (rf_church(church_id)
                AND app_role_has_scope('pickups:write')
                AND rf_guardian_own_children(child_id)
                AND created_by = app_user_id() AND removed_at IS NULL
                AND (authorized OR app_is_staff()));
CREATE POLICY pickup_adults_update ON pickup_adults FOR UPDATE TO neemias_app
    USING (rf_church(church_id)
           AND app_role_has_scope('pickups:write')
           AND rf_guardian_own_children(child_id)
           AND (authorized OR app_is_staff()))
    WITH CHECK (rf_church(church_id)
                AND app_role_has_scope('pickups:write')
                AND removed_by = app_user_id()
                AND (authorized OR app_is_staff()));

-- The note of the active restriction of a child that names this adult (by folded name, or as
-- the guardian a restriction points at), whatever the caller's role: check-out must refuse a
-- restricted adult even when a guardian, who cannot read restrictions, releases the child.
-- NULL for an unrestricted adult or a child the caller may not see.
CREATE FUNCTION app_pickup_restriction(child uuid, adult_name text) RETURNS text
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path = public, pg_temp
AS $$
    SELECT r.note
    FROM pickup_adults r
    LEFT JOIN guardians g ON g.id = r.guardian_id AND g.church_id = r.church_id
    WHERE r.church_id = app_church_id()
      AND r.child_id = child
      AND child IN (SELECT app_visible_child_ids())
      AND NOT r.authorized AND r.removed_at IS NULL
      AND (app_fold_name(r.name) = app_fold_name(adult_name) OR app_fold_name(g.name) = app_fold_name(adult_name))
    ORDER BY r.created_at
    LIMIT 1
$$;
REVOKE ALL ON FUNCTION app_pickup_restriction(uuid, text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION app_pickup_restriction(uuid, text) TO neemias_app;

-- The display name of a user of the caller's church (who released a child), for every role:
-- users' own policy shows accounts to staff only.
CREATE FUNCTION app_user_name(id uuid) RETURNS text
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path = public, pg_temp
AS $$
    SELECT u.display_name FROM users u WHERE u.id = app_user_name.id AND u.church_id = app_church_id()
$$;
REVOKE ALL ON FUNCTION app_user_name(uuid) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION app_user_name(uuid) TO neemias_app;

-- +goose Down
DROP FUNCTION IF EXISTS app_user_name(uuid);
DROP FUNCTION IF EXISTS app_pickup_restriction(uuid, text);
ALTER TABLE checkins
    DROP CONSTRAINT IF EXISTS checkins_picked_up_by_adult_fkey,
    DROP CONSTRAINT IF EXISTS checkins_picked_up_by_guardian_fkey,
    DROP CONSTRAINT IF EXISTS checkins_picked_up_by_check,
    DROP COLUMN IF EXISTS picked_up_by_name,
    DROP COLUMN IF EXISTS picked_up_by_adult,
    DROP COLUMN IF EXISTS picked_up_by_guardian;
DROP TABLE IF EXISTS pickup_adults;
ALTER TABLE children DROP COLUMN IF EXISTS handle;
DROP SEQUENCE IF EXISTS child_handle_seq;
DROP FUNCTION IF EXISTS app_fold_name(text);
DROP FUNCTION IF EXISTS app_child_handle(bigint);
