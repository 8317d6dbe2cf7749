-- neemias_guardian_unlink (issue 22): staff with children:write may delete a guardian-child
-- link, as 00091 lets them insert one (the scope of the tools that write the table, from the
-- spec's matrix). Number 00100 is the consent texts' migration.

-- +goose Up
GRANT DELETE ON guardian_children TO neemias_app;
CREATE POLICY guardian_children_delete ON guardian_children FOR DELETE TO neemias_app
    USING (rf_church(church_id) AND app_role_has_scope('children:write'));

-- +goose Down
DROP POLICY guardian_children_delete ON guardian_children;
REVOKE DELETE ON guardian_children FROM neemias_app;
