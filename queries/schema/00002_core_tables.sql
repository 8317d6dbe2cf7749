-- The tenant tables of the children's ministry: churches, their users, classes, children,
-- guardians, consent records, service days and check-ins.
--
-- Every tenant row carries church_id, and every reference between tenant rows is a composite
-- foreign key (church_id, x_id) -> x(church_id, id), so a row can never point into another
-- church. Row-level security (00004, 00110) and the views (00005) build on these tables.

-- +goose Up

-- time_zone (IANA) defines the church's calendar: "today" for check-ins, ages for classes.
-- An unknown zone fails the check with an error.
CREATE TABLE churches (
    id         uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    name       text NOT NULL CHECK (length(btrim(name)) BETWEEN 1 AND 200),
    slug       text NOT NULL UNIQUE CHECK (slug ~ '^[a-z0-9][a-z0-9-]{0,62}$'),
    time_zone  text NOT NULL DEFAULT 'America/Sao_Paulo' CHECK ((now() AT TIME ZONE time_zone) IS NOT NULL),
    created_at timestamptz NOT NULL DEFAULT now()
);

-- Local accounts. Email is stored lower-case and is unique per church; password_hash is an
-- argon2id PHC string (internal/store/password.go), NULL for accounts that log in upstream.
CREATE TABLE users (
    id            uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    church_id     uuid NOT NULL REFERENCES churches (id),
    email         text NOT NULL CHECK (email = lower(btrim(email)) AND email LIKE '_%@_%'),
    display_name  text NOT NULL CHECK (length(btrim(display_name)) BETWEEN 1 AND 200),
    role          text NOT NULL CHECK (role IN ('ADMIN', 'CADASTRO', 'VOLUNTARIO', 'RESPONSAVEL')),
    password_hash text,
    created_at    timestamptz NOT NULL DEFAULT now(),
    disabled_at   timestamptz,
    CONSTRAINT users_church_email_key UNIQUE (church_id, email),
    CONSTRAINT users_church_id_key UNIQUE (church_id, id)
);
-- Login looks accounts up by email before the church is known.
CREATE INDEX users_email_idx ON users (email);

-- Classes by age range, in completed years, both ends inclusive.
CREATE TABLE classes (
    id          uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    church_id   uuid NOT NULL REFERENCES churches (id),
    name        text NOT NULL CHECK (length(btrim(name)) BETWEEN 1 AND 120),
    min_age     integer NOT NULL CHECK (min_age BETWEEN 0 AND 18),
    max_age     integer NOT NULL CHECK (max_age BETWEEN 0 AND 18),
    created_at  timestamptz NOT NULL DEFAULT now(),
    archived_at timestamptz,
    CONSTRAINT classes_age_range_check CHECK (min_age <= max_age),
    CONSTRAINT classes_church_name_key UNIQUE (church_id, name),
    CONSTRAINT classes_church_id_key UNIQUE (church_id, id)
);

-- Which classes a volunteer serves; a volunteer sees only these classes' children and check-ins.
CREATE TABLE volunteer_assignments (
    user_id    uuid NOT NULL,
    class_id   uuid NOT NULL,
    church_id  uuid NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (user_id, class_id),
    FOREIGN KEY (church_id, user_id) REFERENCES users (church_id, id) ON DELETE CASCADE,
    FOREIGN KEY (church_id, class_id) REFERENCES classes (church_id, id) ON DELETE CASCADE
);
CREATE INDEX volunteer_assignments_class_idx ON volunteer_assignments (class_id);

-- Children. class_id is the class the child is placed in (NULL when no class fits);
-- archived_at marks a child no longer enrolled.
CREATE TABLE children (
    id          uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    church_id   uuid NOT NULL REFERENCES churches (id),
    name        text NOT NULL CHECK (length(btrim(name)) BETWEEN 2 AND 120),
    birth_date  date NOT NULL CHECK (birth_date >= DATE '1990-01-01'),
    class_id    uuid,
    created_at  timestamptz NOT NULL DEFAULT now(),
    created_by  uuid,
    archived_at timestamptz,
    CONSTRAINT children_church_id_key UNIQUE (church_id, id),
    FOREIGN KEY (church_id, class_id) REFERENCES classes (church_id, id),
    FOREIGN KEY (church_id, created_by) REFERENCES users (church_id, id)
);
CREATE INDEX children_church_class_idx ON children (church_id, class_id);
CREATE INDEX children_class_idx ON children (class_id);

-- Guardians (responsáveis). user_id links the guardian to a login account, when they have one.
CREATE TABLE guardians (
    id         uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    church_id  uuid NOT NULL REFERENCES churches (id),
    user_id    uuid,
    name       text NOT NULL CHECK (length(btrim(name)) BETWEEN 2 AND 120),
    phone      text NOT NULL CHECK (phone ~ '^\+?[0-9 ()-]{8,20}$'),
    created_at timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT guardians_church_id_key UNIQUE (church_id, id),
    CONSTRAINT guardians_user_key UNIQUE (user_id),
    FOREIGN KEY (church_id, user_id) REFERENCES users (church_id, id)
);

CREATE TABLE guardian_children (
    guardian_id  uuid NOT NULL,
    child_id     uuid NOT NULL,
    church_id    uuid NOT NULL,
    relationship text NOT NULL CHECK (relationship IN ('mother', 'father', 'grandparent', 'legal_guardian', 'other')),
    created_at   timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (guardian_id, child_id),
    FOREIGN KEY (church_id, guardian_id) REFERENCES guardians (church_id, id),
    FOREIGN KEY (church_id, child_id) REFERENCES children (church_id, id)
);
CREATE INDEX guardian_children_child_idx ON guardian_children (child_id);

-- LGPD consent records (art. 7 and art. 14): who consented for which child, when, to which
-- version of the consent text, on which legal basis, recorded by which user. Kept as evidence
-- even when the guardian link changes; revocation is a new fact (revoked_at), never a delete.
CREATE TABLE consent_records (
    id           uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    church_id    uuid NOT NULL REFERENCES churches (id),
    guardian_id  uuid NOT NULL,
    child_id     uuid NOT NULL,
    granted_at   timestamptz NOT NULL DEFAULT now(),
    text_version text NOT NULL CHECK (length(text_version) BETWEEN 1 AND 40),
    legal_basis  text NOT NULL CHECK (legal_basis IN ('consent', 'legal_obligation', 'legitimate_interest')),
    granted_by   uuid,
    revoked_at   timestamptz,
    CONSTRAINT consent_records_revoked_check CHECK (revoked_at IS NULL OR revoked_at >= granted_at),
    FOREIGN KEY (church_id, guardian_id) REFERENCES guardians (church_id, id),
    FOREIGN KEY (church_id, child_id) REFERENCES children (church_id, id),
    FOREIGN KEY (church_id, granted_by) REFERENCES users (church_id, id)
);
CREATE INDEX consent_records_child_idx ON consent_records (child_id);
CREATE INDEX consent_records_guardian_idx ON consent_records (guardian_id);

-- Service days (cultos / event days): at most one per church and date.
CREATE TABLE service_days (
    id           uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    church_id    uuid NOT NULL REFERENCES churches (id),
    service_date date NOT NULL,
    created_at   timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT service_days_church_date_key UNIQUE (church_id, service_date)
);

-- Check-ins. One per child and service day (checkins_child_date_key, the idempotency key of
-- neemias_checkin_register). The pick-up code is never stored: only SHA-256(salt || code)
-- with a per-check-in random salt; failed_pickup_attempts counts wrong codes and locked_at
-- is set when they reach the limit (internal/store.MaxPickupAttempts).
CREATE TABLE checkins (
    id                     uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    church_id              uuid NOT NULL,
    child_id               uuid NOT NULL,
    class_id               uuid NOT NULL,
    service_date           date NOT NULL,
    checked_in_at          timestamptz NOT NULL DEFAULT now(),
    checked_in_by          uuid NOT NULL,
    pickup_code_salt       bytea NOT NULL CHECK (length(pickup_code_salt) BETWEEN 16 AND 64),
    pickup_code_hash       bytea NOT NULL CHECK (length(pickup_code_hash) = 32),
    failed_pickup_attempts integer NOT NULL DEFAULT 0 CHECK (failed_pickup_attempts >= 0),
    locked_at              timestamptz,
    checked_out_at         timestamptz,
    checked_out_by         uuid,
    CONSTRAINT checkins_child_date_key UNIQUE (child_id, service_date),
    CONSTRAINT checkins_checkout_check CHECK ((checked_out_at IS NULL) = (checked_out_by IS NULL)),
    CONSTRAINT checkins_checkout_after_checkin_check CHECK (checked_out_at IS NULL OR checked_out_at >= checked_in_at),
    FOREIGN KEY (church_id, child_id) REFERENCES children (church_id, id),
    FOREIGN KEY (church_id, class_id) REFERENCES classes (church_id, id),
    FOREIGN KEY (church_id, service_date) REFERENCES service_days (church_id, service_date),
    FOREIGN KEY (church_id, checked_in_by) REFERENCES users (church_id, id),
    FOREIGN KEY (church_id, checked_out_by) REFERENCES users (church_id, id)
);
CREATE INDEX checkins_church_date_idx ON checkins (church_id, service_date);
CREATE INDEX checkins_church_class_date_idx ON checkins (church_id, class_id, service_date);
CREATE INDEX checkins_class_date_idx ON checkins (class_id, service_date);

-- +goose Down
DROP TABLE IF EXISTS checkins;
DROP TABLE IF EXISTS service_days;
DROP TABLE IF EXISTS consent_records;
DROP TABLE IF EXISTS guardian_children;
DROP TABLE IF EXISTS guardians;
DROP TABLE IF EXISTS children;
DROP TABLE IF EXISTS volunteer_assignments;
DROP TABLE IF EXISTS classes;
DROP TABLE IF EXISTS users;
DROP TABLE IF EXISTS churches;
