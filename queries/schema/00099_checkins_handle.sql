-- v_checkins gains the child's handle (checkins_by_date lists children by handle and label,
-- not by id). CREATE OR REPLACE VIEW may only add columns at the end.

-- +goose Up
CREATE OR REPLACE VIEW v_checkins WITH (security_invoker = true) AS
SELECT ck.church_id,
       ck.id AS checkin_id,
       ck.child_id,
       c.name AS child_name,
       ck.class_id,
       cl.name AS class_name,
       ck.service_date,
       ck.checked_in_at,
       ck.checked_out_at,
       c.handle AS child_handle
FROM checkins ck
JOIN children c ON c.id = ck.child_id AND c.church_id = ck.church_id
JOIN classes cl ON cl.id = ck.class_id AND cl.church_id = ck.church_id;

-- +goose Down
DROP VIEW v_checkins;
CREATE VIEW v_checkins WITH (security_invoker = true) AS
SELECT ck.church_id,
       ck.id AS checkin_id,
       ck.child_id,
       c.name AS child_name,
       ck.class_id,
       cl.name AS class_name,
       ck.service_date,
       ck.checked_in_at,
       ck.checked_out_at
FROM checkins ck
JOIN children c ON c.id = ck.child_id AND c.church_id = ck.church_id
JOIN classes cl ON cl.id = ck.class_id AND cl.church_id = ck.church_id;
GRANT SELECT ON v_checkins TO neemias_app;
