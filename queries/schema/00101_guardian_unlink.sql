-- neemias_guardian_unlink (issue 22): the request role may delete a guardian-child link; its
-- policy, guardian_children_delete in 00110_rls_policies.sql, admits the roles the spec grants
-- children:write (the scope of the tools that write the table). Number 00100 is the consent
-- texts' migration.

-- +goose Up
GRANT DELETE ON guardian_children TO neemias_app;

-- +goose Down
REVOKE DELETE ON guardian_children FROM neemias_app;
