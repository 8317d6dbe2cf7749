// Package logic is the hand-written business logic behind every capability of the spec: one
// file per capability, scaffolded once by capgen (the `// capgen:capability <id>` marker names
// it) and owned by people from then on. [Service] implements the generated capapi.Handler.
//
// By the time a method runs, the pipeline (internal/pipeline) has checked the scope and the
// capability's generated catalog entry (gen/capapi) has validated and decoded the input; after
// it returns, the entry's invoker removes the output fields the caller's scopes do not cover. This package
// depends on nothing that calls it. What is left here is the business logic:
//
//   - the caller comes from principal.From; every data access runs in store.InTx with the
//     caller's church, user and role, so PostgreSQL row-level security applies, and the
//     generated queries get the same values for their explicit row filters;
//   - a record the caller may not see is errs.ErrNotFound, exactly like a missing id;
//   - bad input is an *errs.Invalid naming the field, before anything is written;
//   - every access to child-level data and every change is written to the audit log
//     (internal/audit) in the same transaction, and refusals in one of their own.
//
// Error messages and log lines never carry personal data: inputs are logged through their
// generated, redacting LogValue, and reasons never quote values.
package logic
