-- A child without consent is not listed (issue 22, neemias_consent_revoke). consent_records
-- keep every consent and its revocation (revoked_at, never a delete); children.consent_revoked_at
-- says, in one column beside archived_at, that the child has consent records and none is in
-- force any more: set when the last one is revoked, cleared when a new one is recorded (an
-- enrollment or the roster import), kept by a trigger on consent_records so that no writer can
-- forget it. A child who never had a consent record (data older than consent records) is not
-- hidden by it. The listing queries test it beside archived_at IS NULL: the roster counts (the
-- view below), the class list, child search and check-in (queries/custom/).

-- +goose Up

ALTER TABLE children ADD COLUMN consent_revoked_at timestamptz;

-- When child's consent ended: NULL while a consent record of theirs is in force or when they
-- have none, else the latest revocation.
CREATE FUNCTION app_child_consent_revoked_at(child uuid) RETURNS timestamptz
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path = public, pg_temp
AS $$
    SELECT CASE WHEN bool_or(r.revoked_at IS NULL) THEN NULL ELSE max(r.revoked_at) END
    FROM consent_records r
    WHERE r.child_id = child
$$;
REVOKE ALL ON FUNCTION app_child_consent_revoked_at(uuid) FROM PUBLIC;

-- +goose StatementBegin
CREATE FUNCTION consent_records_keep_child() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path = public, pg_temp
AS $$
BEGIN
    UPDATE children c SET consent_revoked_at = app_child_consent_revoked_at(c.id)
    WHERE c.id IN (NEW.child_id, CASE WHEN TG_OP = 'UPDATE' THEN OLD.child_id END)
      AND c.consent_revoked_at IS DISTINCT FROM app_child_consent_revoked_at(c.id);
    RETURN NULL;
END
$$;
-- +goose StatementEnd
REVOKE ALL ON FUNCTION consent_records_keep_child() FROM PUBLIC;

CREATE TRIGGER consent_records_keep_child
    AFTER INSERT OR UPDATE OF revoked_at, child_id ON consent_records
    FOR EACH ROW EXECUTE FUNCTION consent_records_keep_child();

UPDATE children c SET consent_revoked_at = app_child_consent_revoked_at(c.id)
WHERE EXISTS (SELECT 1 FROM consent_records r WHERE r.child_id = c.id AND r.revoked_at IS NOT NULL)
  AND app_child_consent_revoked_at(c.id) IS NOT NULL;

-- The roster counts: enrolled, not archived, with consent.
CREATE OR REPLACE VIEW v_roster_counts WITH (security_invoker = true) AS
SELECT c.church_id,
       cl.id AS class_id,
       cl.name AS class_name,
       cl.min_age,
       cl.max_age,
       date_part('year', age((now() AT TIME ZONE ch.time_zone)::date, c.birth_date))::integer AS age_years,
       count(*) AS children
FROM children c
JOIN churches ch ON ch.id = c.church_id
JOIN classes cl ON cl.id = c.class_id AND cl.church_id = c.church_id
WHERE c.archived_at IS NULL AND c.consent_revoked_at IS NULL
GROUP BY c.church_id, cl.id, cl.name, cl.min_age, cl.max_age,
         date_part('year', age((now() AT TIME ZONE ch.time_zone)::date, c.birth_date))::integer;

-- +goose Down
CREATE OR REPLACE VIEW v_roster_counts WITH (security_invoker = true) AS
SELECT c.church_id,
       cl.id AS class_id,
       cl.name AS class_name,
       cl.min_age,
       cl.max_age,
       date_part('year', age((now() AT TIME ZONE ch.time_zone)::date, c.birth_date))::integer AS age_years,
       count(*) AS children
FROM children c
JOIN churches ch ON ch.id = c.church_id
JOIN classes cl ON cl.id = c.class_id AND cl.church_id = c.church_id
WHERE c.archived_at IS NULL
GROUP BY c.church_id, cl.id, cl.name, cl.min_age, cl.max_age,
         date_part('year', age((now() AT TIME ZONE ch.time_zone)::date, c.birth_date))::integer;
DROP TRIGGER IF EXISTS consent_records_keep_child ON consent_records;
DROP FUNCTION IF EXISTS consent_records_keep_child();
DROP FUNCTION IF EXISTS app_child_consent_revoked_at(uuid);
ALTER TABLE children DROP COLUMN IF EXISTS consent_revoked_at;
