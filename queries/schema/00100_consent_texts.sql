-- Consent texts (issue 22): the versions of the consent term a church registered, so that a
-- roster's "Sim"/"Yes" consent cell can be recorded as agreement to a named text
-- (`neemias-mcp import roster --consent-version V`), never to an unknown one. Registered by the
-- operator (`neemias-mcp consent-text add`); a text is evidence and is never changed or
-- deleted by the application. Same row-level security as the other church tables (00004):
-- the owner's maintenance context sees everything; the request role reads its own church's
-- texts (their titles and versions are not personal data) and writes none (its policy is in
-- 00110_rls_policies.sql).

-- +goose Up
CREATE TABLE consent_texts (
    id            uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    church_id     uuid NOT NULL REFERENCES churches (id),
    version       text NOT NULL CHECK (version ~ '^[[:alnum:]][[:alnum:]._/:-]{0,39}$'),
    title         text NOT NULL CHECK (length(btrim(title)) BETWEEN 1 AND 200),
    registered_at timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT consent_texts_church_version_key UNIQUE (church_id, version),
    CONSTRAINT consent_texts_church_id_key UNIQUE (church_id, id)
);

GRANT SELECT ON consent_texts TO neemias_app;
ALTER TABLE consent_texts ENABLE ROW LEVEL SECURITY;
ALTER TABLE consent_texts FORCE ROW LEVEL SECURITY;
CREATE POLICY consent_texts_owner ON consent_texts TO CURRENT_USER USING (true) WITH CHECK (true);

-- +goose Down
DROP POLICY IF EXISTS consent_texts_owner ON consent_texts;
REVOKE ALL ON consent_texts FROM neemias_app;
DROP TABLE IF EXISTS consent_texts;
