-- Alerts at the door (issue 21): a child's allergies and medical notes, health data (LGPD art.
-- 11) that the spec shows only under health:read (the volunteers of the child's class, at the
-- class list and at check-in; ADMIN and CADASTRO) and redacts in every log line. Enrollment and
-- the roster import write them.

-- +goose Up
ALTER TABLE children
    ADD COLUMN allergies text CHECK (length(btrim(allergies)) BETWEEN 1 AND 300),
    ADD COLUMN medical_notes text CHECK (length(btrim(medical_notes)) BETWEEN 1 AND 500);
GRANT UPDATE (allergies, medical_notes) ON children TO neemias_app;

-- +goose Down
REVOKE UPDATE (allergies, medical_notes) ON children FROM neemias_app;
ALTER TABLE children DROP COLUMN IF EXISTS medical_notes, DROP COLUMN IF EXISTS allergies;
