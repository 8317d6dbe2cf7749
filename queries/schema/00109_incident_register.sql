-- The register of security incidents (issue 24; LGPD art. 48, Resolução CD/ANPD nº 15/2024):
-- every incident, notified or not, kept at least five years. `neemias-mcp incident record`
-- writes one, deriving which churches, records and kinds of data were reached from the audit
-- log where it can; `incident notify` records when the ANPD and the data subjects were told.
--
-- The register holds facts about an incident, never the personal data it reached: counts per
-- church, not names (the data subjects to tell are read from the live tables when the operator
-- asks, written to a file of mode 0600). Like the signing keys it is the owner's: requests'
-- role cannot read or write it.
--
-- An entry is evidence: what was recorded (what happened, when it was known, what the audit
-- showed) cannot change; only the follow-up (measures taken, notification dates, the reason
-- for not notifying, the data protection officer) may be completed later. Nothing is deleted
-- before five years.

-- +goose Up
CREATE TABLE incidents (
    id                   uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    recorded_at          timestamptz NOT NULL DEFAULT now(),
    recorded_by          text NOT NULL CHECK (length(btrim(recorded_by)) BETWEEN 1 AND 200),
    -- detected_at starts the three business days of the notification.
    detected_at          timestamptz NOT NULL,
    occurred_from        timestamptz,
    occurred_until       timestamptz,
    summary              text NOT NULL CHECK (length(btrim(summary)) BETWEEN 10 AND 4000),
    -- The suspected actor the audit log was searched for, when there is one.
    actor_user_id        uuid,
    actor_client_id      text CHECK (length(actor_client_id) <= 200),
    -- How the reach was established: audit (entries of the actor in the period), whole_church
    -- (every record of the churches named: a lost backup, a leaked dump) or declared (the
    -- operator's own counts).
    scope_basis          text NOT NULL CHECK (scope_basis IN ('audit', 'whole_church', 'declared')),
    data_kinds           text[] NOT NULL CHECK (cardinality(data_kinds) > 0),
    -- Relevant risk (Res. 15/2024 art. 5): children's or sensitive data reached.
    relevant_risk        boolean NOT NULL,
    measures             text CHECK (length(measures) <= 4000),
    dpo                  text CHECK (length(dpo) <= 300),
    anpd_notified_at     timestamptz,
    subjects_notified_at timestamptz,
    not_notified_reason  text CHECK (length(not_notified_reason) <= 4000),
    CHECK (occurred_from IS NULL OR occurred_until IS NULL OR occurred_from <= occurred_until),
    CHECK (occurred_from IS NULL OR occurred_from <= detected_at),
    CHECK (actor_user_id IS NULL OR actor_client_id IS NULL OR scope_basis = 'audit')
);
CREATE INDEX incidents_recorded_at_idx ON incidents (recorded_at);

-- One row per church an incident reached, with what it reached there.
CREATE TABLE incident_churches (
    incident_id     uuid NOT NULL REFERENCES incidents (id),
    church_id       uuid NOT NULL REFERENCES churches (id),
    children        integer NOT NULL CHECK (children >= 0),
    guardians       integer NOT NULL CHECK (guardians >= 0),
    audit_entries   integer NOT NULL CHECK (audit_entries >= 0),
    -- Everyone whose data the church processes (art. 6 XII of the resolution's form).
    children_total  integer NOT NULL CHECK (children_total >= 0),
    guardians_total integer NOT NULL CHECK (guardians_total >= 0),
    PRIMARY KEY (incident_id, church_id)
);

-- +goose StatementBegin
CREATE FUNCTION incidents_keep() RETURNS trigger
    LANGUAGE plpgsql
AS $$
BEGIN
    IF TG_OP = 'DELETE' THEN
        IF TG_TABLE_NAME = 'incidents' AND OLD.recorded_at > now() - interval '5 years' THEN
            RAISE EXCEPTION 'incident register: an entry is kept five years (recorded %)', OLD.recorded_at
                USING ERRCODE = 'insufficient_privilege';
        ELSIF TG_TABLE_NAME = 'incident_churches' AND EXISTS (
                SELECT 1 FROM incidents i WHERE i.id = OLD.incident_id AND i.recorded_at > now() - interval '5 years') THEN
            RAISE EXCEPTION 'incident register: an entry is kept five years'
                USING ERRCODE = 'insufficient_privilege';
        END IF;
        RETURN OLD;
    END IF;
    IF TG_TABLE_NAME = 'incident_churches'
       OR NEW.id IS DISTINCT FROM OLD.id OR NEW.recorded_at IS DISTINCT FROM OLD.recorded_at
       OR NEW.recorded_by IS DISTINCT FROM OLD.recorded_by OR NEW.detected_at IS DISTINCT FROM OLD.detected_at
       OR NEW.occurred_from IS DISTINCT FROM OLD.occurred_from OR NEW.occurred_until IS DISTINCT FROM OLD.occurred_until
       OR NEW.summary IS DISTINCT FROM OLD.summary OR NEW.actor_user_id IS DISTINCT FROM OLD.actor_user_id
       OR NEW.actor_client_id IS DISTINCT FROM OLD.actor_client_id OR NEW.scope_basis IS DISTINCT FROM OLD.scope_basis
       OR NEW.data_kinds IS DISTINCT FROM OLD.data_kinds OR NEW.relevant_risk IS DISTINCT FROM OLD.relevant_risk THEN
        RAISE EXCEPTION 'incident register: what was recorded cannot change, only its follow-up'
            USING ERRCODE = 'insufficient_privilege';
    END IF;
    RETURN NEW;
END
$$;
-- +goose StatementEnd

CREATE TRIGGER incidents_keep BEFORE UPDATE OR DELETE ON incidents
    FOR EACH ROW EXECUTE FUNCTION incidents_keep();
CREATE TRIGGER incident_churches_keep BEFORE UPDATE OR DELETE ON incident_churches
    FOR EACH ROW EXECUTE FUNCTION incidents_keep();

REVOKE ALL ON incidents, incident_churches FROM neemias_app;
ALTER TABLE incidents ENABLE ROW LEVEL SECURITY;
ALTER TABLE incidents FORCE ROW LEVEL SECURITY;
CREATE POLICY incidents_not_for_requests ON incidents
    USING (current_user <> 'neemias_app') WITH CHECK (current_user <> 'neemias_app');
ALTER TABLE incident_churches ENABLE ROW LEVEL SECURITY;
ALTER TABLE incident_churches FORCE ROW LEVEL SECURITY;
CREATE POLICY incident_churches_not_for_requests ON incident_churches
    USING (current_user <> 'neemias_app') WITH CHECK (current_user <> 'neemias_app');

-- +goose Down
DROP TABLE incident_churches;
DROP TABLE incidents;
DROP FUNCTION incidents_keep();
